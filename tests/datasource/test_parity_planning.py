"""Spark-parity fixes in batch planning, found by porting Spark's connector tests (pure, no cluster).

``Logs`` (from ``test_planning``) answers planning's three cluster calls from in-memory partitions.
"""

from __future__ import annotations

import pytest

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.options import KafkaOptionError, parse_source_options
from spark_kafkalog.datasource.planning import OffsetRange, UnknownTopicError, plan_batch
from tests.datasource.test_planning import Logs, bound_plan

TP = TopicPartition


def opts(**extra):
    base = {"kafka.bootstrap.servers": "h:1", "subscribe": "t"}
    base.update({k.replace("__", "."): v for k, v in extra.items()})
    return parse_source_options({k: v for k, v in base.items() if v is not None})


# -- topic-level sentinels in startingOffsets / endingOffsets (SPARK-58774) ----------------------------


def test_topic_level_sentinels_cover_every_partition_of_their_topic():
    logs = Logs({"a": [(2, [0] * 10), (0, [0] * 4)], "b": [(0, [0] * 30)]})
    o = opts(
        subscribe="a,b",
        startingOffsets='{"a":"Earliest","b":{"0":7}}',
        endingOffsets='{"a":{"0":6,"1":-1},"b":"LATEST"}',
    )
    assert bound_plan(o, logs) == [OffsetRange("a", 0, 2, 6), OffsetRange("a", 1, 0, 4), OffsetRange("b", 0, 7, 30)]


def test_topic_level_offsets_for_a_topic_not_read_are_refused():
    logs = Logs({"a": [(0, [0] * 10)], "b": [(0, [0] * 3)]})
    with pytest.raises(KafkaOptionError, match=r"names topic\(s\) \['b'\] that are not read"):
        plan_batch(opts(subscribe="a", startingOffsets='{"a":"earliest","b":"earliest"}'), logs)
    with pytest.raises(KafkaOptionError, match=r"names topic\(s\) \['b'\] that 'assign' does not"):
        opts(subscribe=None, assign='{"a":[0]}', startingOffsets='{"a":"earliest","b":"earliest"}')


def test_topic_level_entries_count_as_naming_all_assigned_partitions_of_the_topic():
    logs = Logs({"a": [(0, [0] * 10), (0, [0] * 5)]})
    o = opts(subscribe=None, assign='{"a":[0,1]}', startingOffsets='{"a":"earliest"}', endingOffsets='{"a":"latest"}')
    assert bound_plan(o, logs) == [OffsetRange("a", 0, 0, 10), OffsetRange("a", 1, 0, 5)]


def test_topic_level_latest_start_and_earliest_end_are_refused_in_batch_as_spark_refuses_the_sentinels():
    with pytest.raises(KafkaOptionError, match="startingOffsets for topic a can't be latest"):
        opts(startingOffsets='{"a":"latest"}')
    with pytest.raises(KafkaOptionError, match="endingOffsets for topic a can't be earliest"):
        opts(endingOffsets='{"a":"EARLIEST"}')


# -- topics that do not exist ----------------------------------------------------------------------------


def test_subscribing_to_a_topic_that_does_not_exist_fails_naming_it_and_the_close_match():
    logs = Logs({"orders": [(0, [0] * 3)], "payments": [(0, [])]})
    with pytest.raises(UnknownTopicError, match=r"'ordres' \(did you mean 'orders'\?\) given in option 'subscribe'"):
        plan_batch(opts(subscribe="payments,ordres"), logs)
    assert logs.calls == []  # nothing planned


def test_assigning_a_topic_that_does_not_exist_fails_even_without_fail_on_data_loss():
    logs = Logs({"orders": [(0, [0] * 3)]})
    with pytest.raises(UnknownTopicError, match=r"'nope' given in option 'assign'"):
        plan_batch(opts(subscribe=None, assign='{"nope":[0],"orders":[0]}', failOnDataLoss="false"), logs)


def test_a_pattern_matching_no_topic_reads_nothing_as_in_spark():
    logs = Logs({"orders": [(0, [0] * 3)]})
    assert plan_batch(opts(subscribe=None, subscribePattern="^payments"), logs) == []


# -- earliest/latest bound when each task reads (Spark's late binding) ----------------------------------


def test_earliest_and_latest_stay_sentinels_in_the_plan_even_for_partitions_empty_now():
    logs = Logs({"t": [(2, [0] * 10), (0, [])]})
    assert plan_batch(opts(), logs) == [OffsetRange("t", 0, -2, -1), OffsetRange("t", 1, -2, -1)]
    assert logs.calls == []  # no offset was looked up at planning


def test_split_pieces_keep_the_start_sentinel_first_and_the_end_sentinel_last():
    logs = Logs({"t": [(0, [0] * 100), (0, [])]})
    pieces = plan_batch(opts(maxRecordsPerPartition="40"), logs)
    assert pieces == [
        OffsetRange("t", 0, -2, 33),
        OffsetRange("t", 0, 33, 66),
        OffsetRange("t", 0, 66, -1),
        OffsetRange("t", 1, -2, -1),  # empty now: still read when the task runs
    ]
