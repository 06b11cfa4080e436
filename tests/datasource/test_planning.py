"""Offset-range planning: partitions, limit resolution, Spark's range splitting and pushdown narrowing.

Planning talks to the cluster through ``OffsetSource`` (three calls); ``Logs`` below answers them from an
in-memory description of partitions (log start offset and the timestamp of every record), with Kafka's
ListOffsets semantics. The same planning runs against the embedded broker in the Spark tests.
"""

from __future__ import annotations

import pickle

import pytest

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.options import KafkaOptionError, parse_source_options
from spark_kafkalog.datasource.planning import (
    DataLossError,
    OffsetRange,
    PlanningError,
    ScanBounds,
    check_range,
    plan_batch,
    plan_ranges,
    resolve_partitions,
    split_ranges,
)

TP = TopicPartition


class Logs:
    """``OffsetSource`` over in-memory partitions: ``{topic: [(log_start, [timestamp per offset]), ...]}``."""

    def __init__(self, topics):
        self.partitions = {TP(t, p): spec for t, parts in topics.items() for p, spec in enumerate(parts)}
        self.calls = []

    def topics(self):
        counts = {}
        for tp in self.partitions:
            counts[tp.topic] = counts.get(tp.topic, 0) + 1
        return counts

    def list_offsets(self, specs):
        self.calls.append(("list_offsets", dict(specs)))
        out = {}
        for tp, spec in specs.items():
            log_start, timestamps = self.partitions[tp]
            out[tp] = log_start if spec == -2 else len(timestamps)
        return out

    def list_offsets_with_timestamps(self, specs):
        self.calls.append(("by_timestamp", dict(specs)))
        out = {}
        for tp, spec in specs.items():
            log_start, timestamps = self.partitions[tp]
            match = next((o for o in range(log_start, len(timestamps)) if timestamps[o] >= spec), None)
            out[tp] = (-1, -1) if match is None else (match, timestamps[match])
        return out


def opts(**extra):
    base = {"kafka.bootstrap.servers": "h:1", "subscribe": "t"}
    base.update({k.replace("__", "."): v for k, v in extra.items()})
    return parse_source_options(base)


def R(tp, start, end, topic="t"):
    return OffsetRange(topic, tp, start, end)


def bound_plan(options, logs):
    """``plan_batch`` with the ranges as the read tasks bind them: sentinels resolved, empty ranges read nothing."""
    out = []
    for r in plan_batch(options, logs):
        tp = r.topic_partition
        start = logs.list_offsets({tp: -2})[tp] if r.start == -2 else r.start
        end = logs.list_offsets({tp: -1})[tp] if r.end == -1 else r.end
        check_range(tp, start, end)
        if start < end:
            out.append(OffsetRange(r.topic, r.partition, start, end))
    return out


# -- splitting: Spark's KafkaOffsetRangeCalculator ---------------------------------------------------


def test_without_min_partitions_each_kafka_partition_is_one_spark_partition_and_empty_ones_are_dropped():
    ranges = [R(0, 1, 5), R(1, 3, 3), R(2, 0, 100)]
    assert split_ranges(ranges) == [R(0, 1, 5), R(2, 0, 100)]
    assert split_ranges(ranges, min_partitions=2) == [R(0, 1, 5), R(2, 0, 100)]


def test_one_partition_is_cut_into_min_partitions_pieces():
    assert split_ranges([R(0, 1, 5)], min_partitions=4) == [R(0, 1, 2), R(0, 2, 3), R(0, 3, 4), R(0, 4, 5)]


def test_remainders_go_to_the_later_pieces():
    assert split_ranges([R(0, 1, 11)], min_partitions=3) == [R(0, 1, 4), R(0, 4, 7), R(0, 7, 11)]


def test_small_partitions_stay_whole_and_large_ones_share_the_remaining_parts():
    # total 10, minPartitions 4: t-1 (size 1) rounds to 1 part and stays whole; t-0 gets the other 3.
    assert split_ranges([R(0, 1, 10), R(1, 1, 2)], min_partitions=4) == [
        R(0, 1, 4),
        R(0, 4, 7),
        R(0, 7, 10),
        R(1, 1, 2),
    ]


def test_split_math_uses_half_up_rounding_like_scala_not_pythons_half_to_even():
    # 25/40*4 = 2.5 -> 3 parts with Scala's math.round; Python's round(2.5) would give 2.
    pieces = split_ranges([R(0, 0, 25), R(1, 0, 15)], min_partitions=4)
    assert [p for p in pieces if p.partition == 0] == [R(0, 0, 8), R(0, 8, 16), R(0, 16, 25)]
    assert [p for p in pieces if p.partition == 1] == [R(1, 0, 7), R(1, 7, 15)]


def test_spark_36576_whole_ranges_are_excluded_from_the_proportional_math():
    # total 24, minPartitions 3: t-0 (4/24*3 = 0.5 -> 1) stays whole; t-1 splits into 3 - 1 = 2 parts.
    assert split_ranges([R(0, 1, 5), R(1, 1, 21)], min_partitions=3) == [R(0, 1, 5), R(1, 1, 11), R(1, 11, 21)]


def test_no_offset_is_lost_or_duplicated_by_splitting():
    ranges = [R(p, 3 * p, 3 * p + size) for p, size in enumerate([0, 1, 7, 100, 33, 2, 999])]
    for min_partitions in (1, 2, 5, 7, 13, 50, 1000):
        for max_records in (None, 1, 10, 64):
            pieces = split_ranges(ranges, min_partitions, max_records)
            for r in ranges:
                mine = sorted(p for p in pieces if p.partition == r.partition)
                covered = [o for p in mine for o in range(p.start, p.end)]
                assert covered == list(range(r.start, r.end))
            if max_records is not None and min_partitions <= len(pieces):
                assert all(p.size <= max_records for p in pieces)


def test_max_records_per_partition_cuts_equal_pieces_of_at_most_n_offsets():
    assert split_ranges([R(0, 0, 10), R(1, 0, 4)], max_records_per_partition=4) == [
        R(0, 0, 3),
        R(0, 3, 6),
        R(0, 6, 10),
        R(1, 0, 4),
    ]


def test_min_partitions_applies_after_max_records_per_partition():
    pieces = split_ranges([R(0, 0, 10)], min_partitions=4, max_records_per_partition=5)
    assert len(pieces) == 4 and [p.size for p in pieces] == [2, 3, 2, 3]


def test_offset_ranges_are_picklable_for_input_partitions():
    r = R(3, 10, 20, topic="orders")
    assert pickle.loads(pickle.dumps(r)) == r
    assert (r.size, r.topic_partition, str(r)) == (10, TP("orders", 3), "orders-3[10, 20)")


# -- partitions and limits ----------------------------------------------------------------------------


def test_subscribe_reads_existing_topics_and_ignores_missing_ones():
    logs = Logs({"t": [(0, [1])] * 3, "u": [(0, [])]})
    assert resolve_partitions(opts(subscribe="t,missing").strategy, logs.topics()) == [
        TP("t", 0),
        TP("t", 1),
        TP("t", 2),
    ]


def test_pattern_searches_topic_names_and_skips_internal_topics():
    logs = Logs({"orders-eu": [(0, [])], "eu-orders": [(0, [])], "payments": [(0, [])], "__orders": [(0, [])]})
    o = parse_source_options({"kafka.bootstrap.servers": "h:1", "subscribePattern": "orders"})
    assert resolve_partitions(o.strategy, logs.topics()) == [TP("eu-orders", 0), TP("orders-eu", 0)]


def test_assigned_partition_that_does_not_exist_is_data_loss():
    logs = Logs({"t": [(0, [])] * 2})
    o = parse_source_options({"kafka.bootstrap.servers": "h:1", "assign": '{"t":[0,5]}'})
    with pytest.raises(
        DataLossError, match=r"Assigned partition t-5 does not exist \(topic 't' has 2 partitions\).*failOnDataLoss"
    ):
        resolve_partitions(o.strategy, logs.topics())
    assert resolve_partitions(o.strategy, logs.topics(), fail_on_data_loss=False) == [TP("t", 0)]


def test_earliest_to_latest_covers_each_partitions_log():
    logs = Logs({"t": [(2, [0] * 10), (0, [0] * 4), (0, [])]})
    assert bound_plan(opts(), logs) == [R(0, 2, 10), R(1, 0, 4)]


def test_specific_offsets_with_sentinels_are_resolved():
    logs = Logs({"t": [(2, [0] * 10), (0, [0] * 4)]})
    o = opts(startingOffsets='{"t":{"0":-2,"1":1}}', endingOffsets='{"t":{"0":5,"1":-1}}')
    assert bound_plan(o, logs) == [R(0, 2, 5), R(1, 1, 4)]


def test_specific_offsets_must_name_every_subscribed_partition():
    logs = Logs({"t": [(0, [0] * 10), (0, [0] * 4)]})
    with pytest.raises(
        KafkaOptionError, match=r"you must specify all TopicPartitions.*Specified: \['t-0'\] Assigned: \['t-0', 't-1'\]"
    ):
        plan_batch(opts(startingOffsets='{"t":{"0":1}}'), logs)


def test_start_past_the_end_is_reported_like_spark():
    logs = Logs({"t": [(0, [0] * 10)]})
    with pytest.raises(
        PlanningError, match="Beginning offset 20 is after the ending offset 10 for topic t partition 0"
    ):
        bound_plan(opts(startingOffsets='{"t":{"0":20}}'), logs)
    with pytest.raises(PlanningError, match="different topic partitions"):
        plan_ranges({TP("t", 0): 0}, {TP("t", 1): 0})


def test_timestamps_resolve_to_the_first_offset_at_or_after_them():
    logs = Logs({"t": [(0, [10, 20, 30, 40, 50]), (0, [5, 15, 25])]})
    o = opts(startingOffsetsByTimestamp='{"t":{"0":25,"1":15}}', endingTimestamp="45")
    assert plan_batch(o, logs) == [R(0, 2, 4), R(1, 1, 3)]  # t-1: nothing at 45 -> latest (3)


def test_starting_timestamp_without_match_fails_or_starts_at_latest_by_strategy():
    logs = Logs({"t": [(0, [10, 20]), (0, [10, 90])]})
    with pytest.raises(PlanningError, match="No offset matched from request of topic-partition t-0 and timestamp 50"):
        bound_plan(opts(startingTimestamp="50"), logs)
    o = opts(startingTimestamp="50", startingOffsetsByTimestampStrategy="latest")
    assert bound_plan(o, logs) == [R(1, 1, 2)]  # t-0 starts at latest (2): empty, dropped


def test_min_partitions_and_max_records_split_resolved_sizes():
    logs = Logs({"t": [(0, [0] * 100), (0, [0] * 10)]})
    assert len(bound_plan(opts(minPartitions="11"), logs)) == 11
    # Unlike Spark (which sees the unresolved sentinel size 1), earliest..latest is split by real sizes.
    assert [r.size for r in bound_plan(opts(maxRecordsPerPartition="40"), logs)] == [33, 33, 34, 10]


# -- pushdown bounds ----------------------------------------------------------------------------------


def test_topic_and_partition_bounds_prune_before_any_offset_lookup():
    logs = Logs({"t": [(0, [0] * 5)] * 4})
    bounds = ScanBounds(partitions=frozenset({1, 3}))
    assert plan_batch(opts(), logs, bounds) == [R(1, 0, 5), R(3, 0, 5)]
    assert all(set(specs) <= {TP("t", 1), TP("t", 3)} for _, specs in logs.calls)


def test_offset_bounds_clip_ranges():
    logs = Logs({"t": [(0, [0] * 100), (0, [0] * 30)]})
    bounds = ScanBounds(offset_min=20, offset_end=50)
    assert plan_batch(opts(), logs, bounds) == [R(0, 20, 50), R(1, 20, 30)]


def test_a_lower_timestamp_bound_starts_each_range_at_the_first_record_that_late():
    logs = Logs({"t": [(0, [10, 20, 30, 40]), (0, [1, 2])]})
    assert plan_batch(opts(), logs, ScanBounds(timestamp_min=25)) == [R(0, 2, 4)]


def test_empty_bounds_plan_nothing_without_asking_the_cluster():
    logs = Logs({"t": [(0, [0] * 5)]})
    assert plan_batch(opts(), logs, ScanBounds(offset_min=5, offset_end=5)) == []
    assert plan_batch(opts(), logs, ScanBounds(topics=frozenset())) == []
    assert logs.calls == []


def test_pruned_partitions_still_require_a_complete_offsets_json():
    logs = Logs({"t": [(0, [0] * 5)] * 2})
    o = opts(startingOffsets='{"t":{"0":1,"1":2}}')
    assert plan_batch(o, logs, ScanBounds(partitions=frozenset({1}))) == [R(1, 2, 5)]
    with pytest.raises(KafkaOptionError, match="you must specify all TopicPartitions"):
        plan_batch(opts(startingOffsets='{"t":{"1":2}}'), logs, ScanBounds(partitions=frozenset({1})))
