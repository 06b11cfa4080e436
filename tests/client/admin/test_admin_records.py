"""DeleteRecordsRounds: the bookkeeping of DeleteRecords rounds both admins drive, as pure code (no brokers)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spark_kafkalog.client.admin.admin_records import DeleteRecordsRounds
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.metadata import MetadataCache
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def _answer(*partitions: tuple[TopicPartition, int, int]) -> SimpleNamespace:
    """A DeleteRecords response of (tp, error code, low watermark) entries."""
    topics: dict[str, list[SimpleNamespace]] = {}
    for tp, code, low in partitions:
        entry = SimpleNamespace(partition_index=tp.partition, error_code=code, low_watermark=low)
        topics.setdefault(tp.topic, []).append(entry)
    return SimpleNamespace(topics=[SimpleNamespace(name=t, partitions=ps) for t, ps in topics.items()])


def test_rounds_group_by_leader_and_resend_retriable_failures() -> None:
    rounds = DeleteRecordsRounds({("a", 0): 5, ("a", 1): 7, ("b", 0): -1})
    assert rounds.by_leader({A0: 1, A1: 2, B0: 1}) == {1: {A0: 5, B0: -1}, 2: {A1: 7}}
    rounds.failed({A1: 7}, KafkaClientError("connection lost", retriable=True))
    metadata = MetadataCache(60_000)
    rounds.answered(_answer((A0, 0, 5), (B0, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)), {A0: 5, B0: -1}, "b1", metadata)
    assert rounds.next_round() is True
    assert rounds.remaining == {A1: 7, B0: -1}
    assert rounds.result == {A0: 5}
    assert rounds.errors == {}
    rounds.answered(_answer((A1, 0, 7), (B0, 0, 9)), {A1: 7, B0: -1}, "b1", metadata)
    assert rounds.next_round() is False
    assert rounds.result == {A0: 5, A1: 7, B0: 9}


def test_rounds_raise_a_request_failing_for_good_and_keep_partition_errors() -> None:
    rounds = DeleteRecordsRounds({A0: 5, A1: 1})
    fatal = KafkaClientError("no such api", retriable=False)
    with pytest.raises(KafkaClientError) as raised:
        rounds.failed({A0: 5}, fatal)
    assert raised.value is fatal
    rounds.answered(_answer((A1, ErrorCode.OFFSET_OUT_OF_RANGE, -1)), {A1: 1}, "b1", MetadataCache(60_000))
    assert rounds.next_round() is False
    assert rounds.errors[A1].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_give_up_fails_what_remains_as_timed_out() -> None:
    rounds = DeleteRecordsRounds({A0: 5})
    rounds.failed({A0: 5}, KafkaClientError("connection lost", retriable=True))
    assert rounds.next_round() is True
    rounds.give_up()
    assert rounds.remaining == {}
    assert rounds.errors[A0].retriable
    assert "did not succeed in time" in str(rounds.errors[A0])
