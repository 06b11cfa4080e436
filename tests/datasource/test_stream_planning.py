"""Streaming planning without Spark or a cluster: Spark's rateLimit proration as a table, the byte limit,
minOffsetsPerTrigger/maxTriggerDelay, the data-loss rules, the offset JSON, and ``StreamPlanner`` over a
scripted cluster (``FakeCluster``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from spark_kafkalog.client import KafkaClientError, TopicPartition
from spark_kafkalog.datasource.options import KafkaOptionError
from spark_kafkalog.datasource.planning import DataLossError, OffsetRange, UnknownTopicError
from spark_kafkalog.datasource.stream_options import parse_duration_ms, parse_stream_options, parse_stream_sink_options
from spark_kafkalog.datasource.stream_planning import (
    INT64_MAX,
    AvailableNowError,
    KafkaStreamSource,
    StreamOffsetError,
    StreamPlanner,
    byte_limit,
    bytes_per_offset,
    from_offset_json,
    plan_stream_ranges,
    rate_limit,
    should_delay,
    to_offset_json,
)
from spark_kafkalog.protocol import ErrorCode

A0, A1, A2, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("a", 2), TopicPartition("b", 0)


# -- rate_limit: Spark's KafkaMicroBatchStream.rateLimit --------------------------------------------------

RATE_LIMIT_TABLE = [
    # limit, begin, end, expected (values worked out with Spark's formula by hand)
    pytest.param(30, {A0: 0, A1: 0}, {A0: 62, A1: 38}, {A0: 18, A1: 11}, id="prorated-floor"),
    pytest.param(10, {A0: 0, A1: 0}, {A0: 1000, A1: 1}, {A0: 9, A1: 1}, id="small-partition-not-starved"),
    pytest.param(1, {A0: 0, A1: 0, A2: 0}, {A0: 5, A1: 5, A2: 5}, {A0: 1, A1: 1, A2: 1}, id="ceil-below-one"),
    pytest.param(3, {A0: 0, A1: 0}, {A0: 50, A1: 50}, {A0: 1, A1: 1}, id="one-and-a-half-floors"),
    pytest.param(1000, {A0: 0, A1: 0}, {A0: 10, A1: 20}, {A0: 10, A1: 20}, id="never-past-end"),
    pytest.param(10, {A0: 7, A1: 7}, {A0: 7, A1: 7}, {A0: 7, A1: 7}, id="no-backlog"),
    pytest.param(10, {A0: 100, A1: 0}, {A0: 40, A1: 100}, {A0: 40, A1: 10}, id="negative-size-keeps-end"),
    pytest.param(10, {A0: 0}, {A0: 100, B0: 100}, {A0: 10, B0: 100}, id="unknown-begin-keeps-end"),
    pytest.param(100, {A0: 40, A1: 1000}, {A0: 140, A1: 1300}, {A0: 65, A1: 1075}, id="offset-from-begin"),
    pytest.param(2**62, {A0: INT64_MAX - 10}, {A0: INT64_MAX}, {A0: INT64_MAX}, id="overflow-safe"),
]


@pytest.mark.parametrize(("limit", "begin", "end", "expected"), RATE_LIMIT_TABLE)
def test_rate_limit_prorates_max_offsets_per_trigger_as_spark(limit, begin, end, expected):
    assert rate_limit(limit, begin, end) == expected


def test_rate_limit_total_exceeds_the_limit_by_at_most_one_offset_per_partition():
    begin = {TopicPartition("t", p): 0 for p in range(7)}
    end = {TopicPartition("t", p): 10 ** (p % 4) for p in range(7)}
    limited = rate_limit(50, begin, end)
    taken = sum(limited[tp] - begin[tp] for tp in begin)
    assert 50 - 7 <= taken <= 50 + 7
    assert all(limited[tp] > begin[tp] for tp in begin)  # every partition with a backlog moves


# -- byte_limit -------------------------------------------------------------------------------------------


def test_byte_limit_shares_the_budget_by_bytes_and_converts_back_to_offsets():
    # a0: 100 offsets of 1000 B (100 kB), a1: 100 offsets of 100 B (10 kB); budget 11 kB
    limited = byte_limit(11_000, {A0: 0, A1: 0}, {A0: 100, A1: 100}, {A0: 1000.0, A1: 100.0})
    assert limited == {A0: 10, A1: 10}


def test_byte_limit_takes_everything_within_budget_and_at_least_one_offset_per_partition():
    assert byte_limit(10**9, {A0: 0}, {A0: 100}, {A0: 1000.0}) == {A0: 100}
    assert byte_limit(10, {A0: 0, A1: 5}, {A0: 100, A1: 6}, {A0: 1000.0, A1: 1000.0}) == {A0: 1, A1: 6}


def test_bytes_per_offset_averages_stored_batch_sizes_over_the_offsets_they_cover():
    assert bytes_per_offset([(0, 9, 1000), (10, 19, 3000)]) == 200.0
    assert bytes_per_offset([]) is None


# -- minOffsetsPerTrigger / maxTriggerDelay -----------------------------------------------------------------


def test_should_delay_until_enough_offsets_or_the_delay_has_passed():
    begin, end = {A0: 0, A1: 0}, {A0: 3, A1: 4}
    assert should_delay(10, begin, end, now_ms=1_000, last_trigger_ms=500, max_delay_ms=60_000)
    assert not should_delay(7, begin, end, now_ms=1_000, last_trigger_ms=500, max_delay_ms=60_000)
    assert not should_delay(10, begin, end, now_ms=61_000, last_trigger_ms=1_000, max_delay_ms=60_000)
    assert not should_delay(10, begin, end, now_ms=1_000, last_trigger_ms=0, max_delay_ms=1_000)  # first trigger


# -- data loss: Spark's getOffsetRangesFromResolvedOffsets ---------------------------------------------------


def test_plan_stream_ranges_starts_new_partitions_at_their_earliest_offset():
    ranges = plan_stream_ranges({A0: 5}, {A0: 9, A1: 4}, {A1: 0}, fail_on_data_loss=True)
    assert ranges == [OffsetRange("a", 0, 5, 9), OffsetRange("a", 1, 0, 4)]


@pytest.mark.parametrize(
    ("start", "end", "earliest", "message"),
    [
        ({A0: 5}, {A0: 9, A1: 4}, {A1: 2}, "Added partition a-1 starts from 2 instead of 0"),
        ({A0: 5}, {A0: 9, A1: 4}, {}, "Cannot find earliest offsets of ['a-1']"),
        ({A0: 5, B0: 3}, {A0: 9}, {}, "['b-0'] are gone"),
        ({A0: 50}, {A0: 9}, {}, "Partition a-0's offset was changed from 50 to 9"),
    ],
    ids=["added-partition-not-from-0", "new-partition-deleted", "partition-gone", "offset-went-back"],
)
def test_plan_stream_ranges_reports_data_loss_as_spark(start, end, earliest, message):
    with pytest.raises(DataLossError) as excinfo:
        plan_stream_ranges(start, end, earliest, fail_on_data_loss=True)
    assert message in str(excinfo.value)
    assert '"failOnDataLoss" to "false"' in str(excinfo.value)


def test_plan_stream_ranges_without_fail_on_data_loss_drops_what_was_lost(caplog):
    ranges = plan_stream_ranges({A0: 50, B0: 3}, {A0: 9, A1: 4}, {A1: 2}, fail_on_data_loss=False)
    assert ranges == [OffsetRange("a", 1, 2, 4)]  # a-0 went back: dropped, the next batch starts at 9
    assert "offset was changed from 50 to 9" in caplog.text
    assert "are gone" in caplog.text


def test_plan_stream_ranges_names_the_custom_group_id_when_partitions_are_gone():
    with pytest.raises(DataLossError, match="kafka.group.id"):
        plan_stream_ranges({B0: 3}, {}, {}, fail_on_data_loss=True, custom_group=True)


# -- offsets JSON -------------------------------------------------------------------------------------------


def test_offset_json_is_sparks_shape_sorted_by_topic_then_partition_number():
    offsets = {TopicPartition("b", 0): 1, TopicPartition("a", 10): 7, TopicPartition("a", 2): 3}
    as_json = to_offset_json(offsets)
    assert json.dumps(as_json, separators=(",", ":")) == '{"a":{"2":3,"10":7},"b":{"0":1}}'
    assert from_offset_json(json.loads(json.dumps(as_json))) == offsets


@pytest.mark.parametrize("bad", [[1], {"a": [0]}, {"a": {"x": 1}}, {"a": {"0": "1"}}, {"a": {"-1": 3}}])
def test_from_offset_json_rejects_other_shapes(bad):
    with pytest.raises(StreamOffsetError):
        from_offset_json(bad)


# -- options ------------------------------------------------------------------------------------------------

BASE = {"kafka.bootstrap.servers": "h:9092", "subscribe": "a"}


def test_stream_options_default_to_latest_and_take_the_trigger_limits():
    opts = parse_stream_options(
        {**BASE, "maxOffsetsPerTrigger": "100", "MINOFFSETSPERTRIGGER": "10", "maxTriggerDelay": "2s"}
    )
    assert type(opts.source.starting).__name__ == "LatestLimit"
    assert (opts.max_offsets_per_trigger, opts.min_offsets_per_trigger, opts.max_trigger_delay_ms) == (100, 10, 2000)
    assert opts.commit_group is None


def test_stream_options_accept_latest_offsets_in_json_and_group_options():
    opts = parse_stream_options({**BASE, "startingOffsets": '{"a":{"0":-1}}', "kafka.group.id": "g1"})
    assert opts.commit_group == "g1"
    opts = parse_stream_options({**BASE, "commitOffsetsToGroup": "g2", "kafka.group.id": "g1"})
    assert opts.commit_group == "g2"
    assert parse_stream_options({**BASE, "maxBytesPerTrigger": "1048576"}).max_bytes_per_trigger == 1048576


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"endingOffsets": "latest"}, "ending offset not valid in streaming queries"),
        ({"endingOffsetsByTimestamp": '{"a":{"0":1000}}'}, "ending timestamp not valid in streaming queries"),
        ({"exactlyOnce": "true"}, "'exactlyonce' does not apply to streaming reads"),
        ({"maxOffsetsPerTrigger": "5", "minOffsetsPerTrigger": "6"}, "must be <= 'maxOffsetsPerTrigger'"),
        ({"maxTriggerDelay": "soon"}, "expected a duration"),
        ({"maxBytesPerTrigger": "0"}, "must be a positive integer"),
        ({"commitOffsetsToGroup": ""}, "'commitOffsetsToGroup' is empty"),
        ({"maxBytesPerTriger": "5"}, "did you mean 'maxBytesPerTrigger'"),
        ({"startingOffsets": "{bad"}, "startingOffsets"),
    ],
)
def test_stream_options_errors_name_the_option(extra, message):
    with pytest.raises(KafkaOptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_stream_options({**BASE, **extra})


def test_durations_use_sparks_units():
    assert [parse_duration_ms(t) for t in ("15m", "30s", "250", "2h", "1d", "1min")] == [
        900_000,
        30_000,
        250,
        7_200_000,
        86_400_000,
        60_000,
    ]


def test_end_timestamp_is_ignored_in_a_stream_with_a_warning_as_spark_ignores_it(caplog):
    with caplog.at_level("WARNING"):
        opts = parse_stream_options({**BASE, "endingTimestamp": "1000"})
    assert "'endingTimestamp' is ignored in streaming queries" in caplog.text
    assert opts == parse_stream_options(BASE)


def test_stream_sink_accepts_the_options_spark_adds():
    opts = parse_stream_sink_options(
        {**{"kafka.bootstrap.servers": "h:9092", "topic": "t"}, "checkpointLocation": "/tmp/x", "queryName": "q"}
    )
    assert opts.topic == "t"
    spark_async = {
        "asyncProgressTrackingEnabled": "true",
        "asyncProgressTrackingCheckpointIntervalMs": "1000",
        "_asyncProgressTrackingOverrideSinkSupportCheck": "true",
    }
    sink = {"kafka.bootstrap.servers": "h:9092", "topic": "t", "checkpointLocation": "/tmp/x"}
    assert parse_stream_sink_options({**sink, **spark_async}).topic == "t"
    with pytest.raises(KafkaOptionError, match="exactlyOnce cannot be used with asyncProgressTrackingEnabled"):
        parse_stream_sink_options({**sink, **spark_async, "exactlyOnce": "true"})
    assert parse_stream_sink_options({**sink, "asyncProgressTrackingEnabled": "false", "exactlyOnce": "true"})


# -- StreamPlanner over a scripted cluster -------------------------------------------------------------------


class FakeCluster:
    """Topics with partitions' (log start, high watermark); ``fetch_batches`` yields 10-offset batches of
    ``batch_bytes`` bytes."""

    def __init__(self, logs: dict[TopicPartition, tuple[int, int]], batch_bytes: int = 1000) -> None:
        self.logs = dict(logs)
        self.batch_bytes = batch_bytes
        self.calls: list[str] = []

    def topics(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for tp in self.logs:
            out[tp.topic] = max(out.get(tp.topic, 0), tp.partition + 1)
        return out

    def list_offsets(self, specs):
        self.calls.append("list_offsets")
        return {tp: self.logs[tp][0] if spec == -2 else self.logs[tp][1] for tp, spec in specs.items()}

    def list_offsets_with_timestamps(self, specs):
        return {tp: (self.logs[tp][0], 0) for tp in specs}

    def fetch_batches(self, tp, start, end=None, *, max_bytes=None):
        class Batch:
            def __init__(self, base, size):
                self.base_offset, self.last_offset = base, base + 9
                self.batch = type("View", (), {"data": b"x" * size})()

        base = start - start % 10
        while base < (end or self.logs[tp][1]):
            yield Batch(base, self.batch_bytes)
            base += 10


def planner(logs, clock=None, **options) -> tuple[StreamPlanner, FakeCluster]:
    cluster = FakeCluster(logs)
    merged = {**BASE, **{k: str(v) for k, v in options.items()}}
    opts = parse_stream_options({k: v for k, v in merged.items() if options.get(k, "") is not None})
    return StreamPlanner(opts, cluster, clock_ms=clock, sleep=lambda s: None), cluster


def test_initial_offsets_are_resolved_once():
    p, cluster = planner({A0: (0, 10)})
    assert p.initial_offsets() == {A0: 10}
    cluster.logs[A0] = (0, 20)
    assert p.initial_offsets() == {A0: 10}  # "latest" does not move before the first batch


def test_latest_offset_starts_new_partitions_at_earliest_and_rate_limits_them():
    p, cluster = planner({A0: (0, 100)}, startingOffsets="earliest", maxOffsetsPerTrigger=20)
    start = p.initial_offsets()
    assert start == {A0: 0}
    cluster.logs[A1] = (0, 100)  # partition added
    end = p.latest_offset(start, all_available=False)
    assert end == {A0: 10, A1: 10}
    assert p.latest == {A0: 100, A1: 100}
    assert p.plan(start, end) == [OffsetRange("a", 0, 0, 10), OffsetRange("a", 1, 0, 10)]
    assert p.latest_offset(end, all_available=True) == {A0: 100, A1: 100}  # ReadAllAvailable ignores limits


def test_min_offsets_per_trigger_skips_batches_until_enough_or_max_trigger_delay():
    now = [100_000]
    p, cluster = planner({A0: (0, 0)}, clock=lambda: now[0], minOffsetsPerTrigger=50, maxTriggerDelay="10s")
    start = {A0: 0}
    cluster.logs[A0] = (0, 5)
    assert p.latest_offset(start, all_available=False) == {A0: 5}  # first trigger always fires
    now[0] += 1_000
    cluster.logs[A0] = (0, 30)
    assert p.latest_offset({A0: 5}, all_available=False) == {A0: 5}  # 25 < 50: skipped
    cluster.logs[A0] = (0, 60)
    assert p.latest_offset({A0: 5}, all_available=False) == {A0: 60}  # 55 >= 50: fires
    now[0] += 2_000
    cluster.logs[A0] = (0, 70)
    assert p.latest_offset({A0: 60}, all_available=False) == {A0: 60}
    now[0] += 10_000
    assert p.latest_offset({A0: 60}, all_available=False) == {A0: 70}  # the delay has passed


def test_available_now_keeps_limits_ignores_min_offsets_and_never_passes_the_snapshot():
    p, cluster = planner({A0: (0, 25)}, startingOffsets="earliest", maxOffsetsPerTrigger=10, minOffsetsPerTrigger=10)
    p.prepare_available_now()
    cluster.logs[A0] = (0, 25)  # the snapshot is taken by the first latest_offset (SPARK-53560), not before
    ends, start = [], p.initial_offsets()
    while True:
        end = p.latest_offset(start, all_available=False)
        cluster.logs[A0] = (0, 1000)  # arrives after the snapshot
        if end == start:
            break
        assert p.plan(start, end)  # the end is within the snapshot and the cluster
        ends.append(end[A0])
        start = end
    assert ends == [10, 20, 25]
    assert p.available_now_target == {A0: 25}


def test_available_now_takes_its_target_at_the_first_new_batch_so_a_rerun_batch_is_not_checked():
    # SPARK-53560: batch 0 (end 7) was planned, failed, and a partition was added before the restart. The
    # re-run of batch 0 comes from the offset log (no latest_offset): it must plan, not fail the mismatch.
    p, cluster = planner({A0: (0, 7), A1: (0, 0)}, startingOffsets="earliest")
    p.prepare_available_now()
    assert p.available_now_target is None
    assert p.plan({A0: 0}, {A0: 7}) == [OffsetRange("a", 0, 0, 7)]
    assert p.latest_offset({A0: 7}, all_available=False) == {A0: 7, A1: 0}  # the next new batch takes it
    assert p.available_now_target == {A0: 7, A1: 0}


@pytest.mark.parametrize(
    ("target", "end", "now", "message"),
    [
        (
            {A0: 10, A1: 10},
            {A0: 10},
            {A0: (0, 10), A1: (0, 10)},
            "should provide the same topic partitions in pre-fetched offset to end offset for each microbatch. "
            "The error could be transient - restart your query, and report if you still see the same issue.\n"
            "topic-partitions for pre-fetched offset: Set(a-0, a-1), topic-partitions for end offset: Set(a-0).",
        ),
        (
            {A0: 10},
            {A0: 11},
            {A0: (0, 20)},
            "end offset should have lower or equal offset per each topic partition than pre-fetched offset. The "
            "error could be transient - restart your query, and report if you still see the same issue.\n"
            "pre-fetched offset: Map(a-0 -> 10), end offset: Map(a-0 -> 11).",
        ),
        (
            {A0: 5, A1: 5},
            {A0: 5, A1: 5},
            {A0: (0, 5)},
            "Some of partitions in Kafka topic(s) have been lost during running query with Trigger.AvailableNow. "
            "The error could be transient - restart your query, and report if you still see the same issue.\n"
            "topic-partitions for latest offset: Set(a-0), topic-partitions for end offset: Set(a-0, a-1)",
        ),
        (
            {A0: 15},
            {A0: 15},
            {A0: (0, 10)},
            "Some of partitions in Kafka topic(s) report available offset which is less than end offset during "
            "running query with Trigger.AvailableNow. The error could be transient - restart your query, and "
            "report if you still see the same issue.\nlatest offset: Map(a-0 -> 10), end offset: Map(a-0 -> 15)",
        ),
    ],
    ids=["mismatched", "past-target", "lost-partitions", "lost-offsets"],
)
def test_available_now_checks_each_planned_end_with_sparks_messages(target, end, now, message):
    p, cluster = planner(
        dict.fromkeys(target, (0, 0)) | {tp: (0, o) for tp, o in target.items()}, failOnDataLoss="false"
    )
    p.prepare_available_now()
    p.latest_offset(dict.fromkeys(target, 0), all_available=True)
    assert p.available_now_target == target
    cluster.logs = dict(now)
    with pytest.raises(AvailableNowError) as info:
        p.plan(dict.fromkeys(end, 0), end)
    assert message in str(info.value)


def test_a_stream_with_every_partition_gone_plans_no_batch_and_reports_no_latest_offset():
    p, cluster = planner({A0: (0, 5)}, subscribePattern="^a$", subscribe=None)
    assert p.latest_offset({}, all_available=False) == {A0: 5}
    cluster.logs = {}
    assert p.latest_offset({A0: 5}, all_available=False) == {A0: 5}  # no batch: "{}" never reaches the log
    assert p.latest is None


def test_a_subscribed_topic_that_does_not_exist_is_looked_for_again_then_fails_the_query():
    slept = []
    p, cluster = planner(
        {A0: (0, 5)}, subscribe="a,b", **{"fetchOffset.numRetries": 3, "fetchOffset.retryIntervalMs": 250}
    )
    p._sleep = slept.append
    with pytest.raises(
        UnknownTopicError,
        match=r"Topic\(s\) 'b' given in option 'subscribe' do not exist.*looked for 3 times, 250 ms apart",
    ):
        p.initial_offsets()
    assert slept == [0.25, 0.25]


def test_a_subscribed_topic_created_while_looked_for_is_read():
    p, cluster = planner({A0: (0, 5)}, subscribe="a,b", startingOffsets="earliest")
    p._sleep = lambda seconds: cluster.logs.update({B0: (0, 3)})
    assert p.initial_offsets() == {A0: 0, B0: 0}


def test_a_pattern_that_matches_nothing_waits_without_an_error():
    p, cluster = planner({A0: (0, 5)}, subscribePattern="^zzz", subscribe=None)
    assert p.initial_offsets() == {}
    assert p.latest_offset({}, all_available=False) == {}


def test_max_bytes_per_trigger_uses_sampled_batch_sizes():
    p, cluster = planner({A0: (0, 1000), A1: (0, 1000)}, startingOffsets="earliest", maxBytesPerTrigger=4000)
    cluster.batch_bytes = 1000  # 100 bytes per offset
    end = p.latest_offset({A0: 0, A1: 0}, all_available=False)
    assert end == {A0: 20, A1: 20}


def test_stale_latest_offsets_are_asked_again():
    p, cluster = planner({A0: (0, 5)}, **{"fetchOffset.numRetries": 2})
    answers = iter([5, 40])
    cluster.list_offsets = lambda specs: {tp: next(answers) for tp in specs}
    assert p.fetch_latest({A0: 30}) == {A0: 40}


# -- KafkaStreamSource: Metadata only for the named topics ------------------------------------------------


class MetadataClient:
    """A client whose Metadata answers come from ``cluster`` ({topic: (partitions, error code)}); records
    which topics each refresh asked for (None: every topic)."""

    def __init__(self, cluster: dict[str, tuple[int, int]]) -> None:
        self.cluster = cluster
        self.asked: list[tuple[str, ...] | None] = []
        self.metadata = self

    def refresh_metadata(self, topics=None) -> None:
        self.asked.append(None if topics is None else tuple(topics))

    def topics(self):  # KafkaClient.topics() (every topic) and MetadataCache.topics() (what was answered)
        if self.asked and self.asked[-1] is not None:
            answered = {n: self.cluster.get(n, (0, 3)) for n in self.asked[-1]}  # 3: UNKNOWN_TOPIC_OR_PARTITION
            return {
                n: SimpleNamespace(partitions=range(p), error_code=e, is_internal=n.startswith("__"))
                for n, (p, e) in answered.items()
            }
        self.asked.append(None)
        return {n: p for n, (p, e) in self.cluster.items() if not e}


@pytest.mark.parametrize(
    ("options", "asked", "expected"),
    [
        ({"subscribe": "a,gone,creating"}, ("a", "creating", "gone"), {"a": 2}),
        ({"assign": '{"a":[0],"b":[1]}'}, ("a", "b"), {"a": 2, "b": 3}),
        ({"subscribePattern": "a|b"}, None, {"a": 2, "b": 3, "other": 1, "creating": 1}),
    ],
    ids=["subscribe", "assign", "pattern"],
)
def test_stream_source_asks_metadata_only_for_the_named_topics(options, asked, expected):
    cluster = {"a": (2, 0), "b": (3, 0), "other": (1, 0), "creating": (1, 0) if asked is None else (0, 5)}
    client = MetadataClient(cluster)
    strategy = parse_stream_options({"kafka.bootstrap.servers": "h:9092", **options}).source.strategy
    assert KafkaStreamSource(client, strategy).topics() == expected
    assert client.asked == [asked]


def test_a_topic_deleted_between_listing_and_list_offsets_is_left_out():
    class DeletingClient(MetadataClient):
        def list_offsets(self, specs, **kwargs):
            for tp in specs:
                if tp.topic not in self.cluster:
                    raise KafkaClientError(
                        f"Metadata failed for {tp.topic}: UNKNOWN_TOPIC_OR_PARTITION",
                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        topic=tp.topic,
                    )
            return dict.fromkeys(specs, 7)

    client = DeletingClient({"a": (1, 0)})
    strategy = parse_stream_options({"kafka.bootstrap.servers": "h:9092", "subscribePattern": "a|b"}).source.strategy
    source = KafkaStreamSource(client, strategy)
    assert source.list_offsets({A0: -1, B0: -1}) == {A0: 7}  # b was deleted after the listing
    client.cluster["b"] = (1, 0)
    client.list_offsets = lambda specs, **kw: (_ for _ in ()).throw(
        KafkaClientError("not leader", error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic="b")
    )
    with pytest.raises(KafkaClientError, match="not leader"):  # b still exists: the error is the caller's
        source.list_offsets({A0: -1, B0: -1})


def test_a_partition_of_the_start_missing_from_the_end_is_gone_only_when_it_no_longer_exists():
    # a re-run first batch: its start was resolved again after a partition was added
    p, cluster = planner({A0: (0, 7), A1: (0, 0)})
    assert p.plan({A0: 0, A1: 0}, {A0: 7}) == [OffsetRange("a", 0, 0, 7)]
    del cluster.logs[A1]
    with pytest.raises(DataLossError, match=r"\['a-1'\] are gone"):
        p.plan({A0: 0, A1: 0}, {A0: 7})
