"""Topic ids in the streaming offsets without Spark or a cluster: the offset JSON's id entries (Spark's shape
kept, old checkpoints loading), and ``StreamPlanner`` over a scripted cluster whose topic is deleted and
re-created (``IdCluster``): data loss naming the topic with failOnDataLoss even when the new offsets passed the
old ones, the new topic read from its earliest offsets without it, rate limits and minOffsetsPerTrigger."""

from __future__ import annotations

import base64
import json
import uuid

import pytest

from spark_kafkalog.client import TopicPartition
from spark_kafkalog.datasource.offsets import parse_partition_offsets, parse_specific_offsets
from spark_kafkalog.datasource.planning import DataLossError, OffsetRange
from spark_kafkalog.datasource.stream_options import parse_stream_options
from spark_kafkalog.datasource.stream_planning import (
    StreamOffsetError,
    StreamPlanner,
    from_offset_json,
    offset_topic_ids,
    to_offset_json,
)
from spark_kafkalog.datasource.topic_ids import kafka_topic_id, parse_id_key, recreated_topics

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
OLD, NEW, BID = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg", "AAAAAAAAAAAAAAAAAAAAAw"


# -- the offset JSON ---------------------------------------------------------------------------------------


def test_kafka_topic_id_is_kafkas_base64_text_of_the_uuid():
    assert kafka_topic_id(uuid.UUID(int=1)) == OLD
    assert kafka_topic_id(str(uuid.UUID(int=2))) == NEW
    assert kafka_topic_id(NEW) == NEW  # already Kafka's form
    printed = "DNNw-hXqQCOW61shM7zZ2Q"  # a TopicId as kafka-topics --describe printed it
    assert kafka_topic_id(uuid.UUID(bytes=base64.urlsafe_b64decode(printed + "=="))) == printed


def test_offset_json_keeps_sparks_entries_and_adds_one_empty_entry_per_topic_id():
    value = to_offset_json({B0: 3, A1: 7, A0: 5}, {"a": OLD, "b": BID, "gone": NEW})
    text = json.dumps(value, separators=(",", ":"))
    assert text == (
        '{"a":{"0":5,"1":7},"b":{"0":3},"@topicId:a:AAAAAAAAAAAAAAAAAAAAAQ":{},"@topicId:b:AAAAAAAAAAAAAAAAAAAAAw":{}}'
    )
    assert from_offset_json(value) == {A0: 5, A1: 7, B0: 3}
    assert offset_topic_ids(value) == {"a": OLD, "b": BID}
    # Spark's shape: every key a "topic", the id entries with no partition (parsed by kafkalog's own
    # startingOffsets parsers as by Spark's JsonUtils.partitionOffsets; see the compat test for Spark's)
    assert parse_partition_offsets(text) == {A0: 5, A1: 7, B0: 3}
    assert parse_specific_offsets(text).offsets == {A0: 5, A1: 7, B0: 3}


def test_a_checkpoint_without_topic_ids_still_loads():
    old = json.loads('{"a":{"0":5,"1":7}}')
    assert (from_offset_json(old), offset_topic_ids(old)) == ({A0: 5, A1: 7}, {})
    assert to_offset_json({A0: 5, A1: 7}) == old  # no ids known: Spark's JSON exactly


@pytest.mark.parametrize(
    "key, value",
    [("@topicId:a", {}), ("@topicId::x", {}), ("@topicId:a:x", {"0": 1}), ("@topicId:a:x", 5)],
    ids=["no-id", "no-topic", "partitions", "not-an-object"],
)
def test_a_malformed_id_entry_is_refused(key, value):
    with pytest.raises(StreamOffsetError, match="bad topic id entry"):
        from_offset_json({"a": {"0": 1}, key: value})


def test_id_keys_parse_and_recreated_topics_are_those_whose_id_changed_on_both_sides():
    assert parse_id_key("@topicId:my.topic_x-1:DDTQ-hXqQSW7WtiyHM7zZQ") == ("my.topic_x-1", "DDTQ-hXqQSW7WtiyHM7zZQ")
    assert parse_id_key("a") is None
    assert recreated_topics({"a": OLD, "b": BID, "c": OLD}, {"a": NEW, "b": BID, "d": NEW}) == {"a": (OLD, NEW)}


# -- StreamPlanner over a topic deleted and re-created ----------------------------------------------------


class IdCluster:
    """Topics with partitions' (log start, high watermark) and ids, as ``KafkaStreamSource`` answers them."""

    def __init__(self, logs: dict[TopicPartition, tuple[int, int]], ids: dict[str, str]) -> None:
        self.logs, self.ids = dict(logs), dict(ids)

    def recreate(self, topic: str, new_id: str, logs: dict[TopicPartition, tuple[int, int]]) -> None:
        self.logs = {tp: v for tp, v in self.logs.items() if tp.topic != topic} | logs
        self.ids[topic] = new_id

    def topics(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for tp in self.logs:
            out[tp.topic] = max(out.get(tp.topic, 0), tp.partition + 1)
        return out

    def topic_ids(self) -> dict[str, str]:
        return {t: i for t, i in self.ids.items() if t in self.topics()}

    def list_offsets(self, specs):
        return {
            tp: self.logs[tp][0] if spec == -2 else self.logs[tp][1] for tp, spec in specs.items() if tp in self.logs
        }

    def list_offsets_with_timestamps(self, specs):
        return {tp: (self.logs[tp][0], 0) for tp in specs}

    def fetch_batches(self, tp, start, end=None, *, max_bytes=None):
        return iter(())


def planner(cluster: IdCluster, subscription=("subscribe", "a,b"), **options) -> StreamPlanner:
    opts = parse_stream_options(
        {
            "kafka.bootstrap.servers": "h:9092",
            subscription[0]: subscription[1],
            **{k: str(v) for k, v in options.items()},
        }
    )
    return StreamPlanner(opts, cluster, sleep=lambda s: None)


def read_then_recreate(new_logs, **options) -> tuple[StreamPlanner, dict, dict]:
    """A query that read a (id OLD) up to 50 and b (BID) up to 3; then a is re-created (id NEW)."""
    cluster = IdCluster({A0: (0, 50), B0: (0, 3)}, {"a": OLD, "b": BID})
    p = planner(cluster, startingOffsets="latest", **options)
    start = p.initial_offsets()
    start_ids = p.initial_topic_ids
    assert (start, start_ids) == ({A0: 50, B0: 3}, {"a": OLD, "b": BID})
    cluster.recreate("a", NEW, new_logs)
    return p, start, start_ids


@pytest.mark.parametrize(
    "new_logs",
    [{A0: (0, 80)}, {A0: (0, 50)}, {A0: (0, 10)}, {A0: (0, 80), A1: (0, 4)}],
    ids=["grown-past-the-old-offsets", "same-offsets", "fewer-offsets", "more-partitions"],
)
def test_a_recreated_topic_fails_the_batch_naming_it_with_fail_on_data_loss(new_logs):
    p, start, start_ids = read_then_recreate(new_logs)
    end = p.latest_offset(start, False, start_ids)
    assert p.end_topic_ids == {"a": NEW, "b": BID}
    with pytest.raises(DataLossError) as excinfo:
        p.plan(start, end, start_ids, p.end_topic_ids)
    message = str(excinfo.value)
    assert f"Topic 'a' was deleted and re-created: its topic id changed from {OLD} to {NEW}" in message
    assert '"failOnDataLoss" to "false"' in message


@pytest.mark.parametrize(
    "new_logs, ranges",
    [
        ({A0: (0, 80)}, [OffsetRange("a", 0, 0, 80)]),
        ({A0: (0, 10)}, [OffsetRange("a", 0, 0, 10)]),
        ({A0: (0, 80), A1: (0, 4)}, [OffsetRange("a", 0, 0, 80), OffsetRange("a", 1, 0, 4)]),
    ],
    ids=["grown-past-the-old-offsets", "fewer-offsets", "more-partitions"],
)
def test_without_fail_on_data_loss_the_recreated_topic_is_read_from_its_earliest_offsets(new_logs, ranges, caplog):
    p, start, start_ids = read_then_recreate(new_logs, failOnDataLoss="false")
    end = p.latest_offset(start, False, start_ids)
    planned = p.plan(start, end, start_ids, p.end_topic_ids)
    assert [r for r in planned if r.topic == "a"] == ranges
    assert [r for r in planned if r.topic == "b"] == []  # b: nothing new (an empty range is dropped)
    assert "Topic 'a' was deleted and re-created" in caplog.text


def test_without_recorded_ids_a_grown_recreated_topic_goes_unnoticed_as_in_sparks_connector():
    p, start, _ = read_then_recreate({A0: (0, 80)})
    end = p.latest_offset(start, False, {})
    assert p.plan(start, end, {}, p.end_topic_ids) == [OffsetRange("a", 0, 50, 80)]


def test_the_rate_limit_counts_a_recreated_topic_from_its_earliest_offsets():
    p, start, start_ids = read_then_recreate({A0: (0, 80)}, failOnDataLoss="false", maxOffsetsPerTrigger=10)
    end = p.latest_offset(start, False, start_ids)
    assert end == {A0: 10, B0: 3}
    assert p.plan(start, end, start_ids, p.end_topic_ids) == [OffsetRange("a", 0, 0, 10)]


def test_min_offsets_per_trigger_never_holds_back_a_recreated_topic_and_a_delay_keeps_the_start_ids():
    cluster = IdCluster({A0: (0, 50), B0: (0, 3)}, {"a": OLD, "b": BID})
    p = planner(cluster, startingOffsets="latest", minOffsetsPerTrigger=1000, maxTriggerDelay="1h")
    start, start_ids = p.initial_offsets(), p.initial_topic_ids
    assert p.latest_offset(start, False, start_ids) == start  # the first trigger fires
    cluster.logs[A0] = (0, 60)
    assert p.latest_offset(start, False, start_ids) == start  # 10 < 1000: held back
    assert to_offset_json(start, p.end_topic_ids) == to_offset_json(start, start_ids)  # the same JSON: no batch
    cluster.recreate("a", NEW, {A0: (0, 20)})
    assert p.latest_offset(start, False, start_ids) == {A0: 20, B0: 3}  # re-created: not held back
    assert p.end_topic_ids == {"a": NEW, "b": BID}


def test_end_ids_follow_the_partitions_listed_and_a_deleted_topic_drops_its_id():
    cluster = IdCluster({A0: (0, 5), B0: (0, 3)}, {"a": OLD, "b": BID})
    p = planner(cluster, ("subscribePattern", "[ab]"), startingOffsets="earliest", failOnDataLoss="false")
    start, start_ids = p.initial_offsets(), p.initial_topic_ids
    cluster.logs.pop(B0)  # b deleted
    end = p.latest_offset(start, False, start_ids)
    assert (end, p.end_topic_ids) == ({A0: 5}, {"a": OLD})
    assert p.plan(start, end, start_ids, p.end_topic_ids) == [OffsetRange("a", 0, 0, 5)]
