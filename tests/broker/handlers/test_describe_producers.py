"""DescribeProducers on an in-process broker, over the wire: transactional batches of fixed producer ids,
one transaction committed, one left open; what `kafka-transactions describe-producers` reads."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.protocol import ApiKey as K

from ..requests import create, produce, unique
from ..txn_wire import txn_batch, write_markers
from ..wire import Wire

A, B = 8_000_001, 8_000_002


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


def describe(w, topics: dict[str, list[int]]):
    R = API_BY_KEY[K.DESCRIBE_PRODUCERS].Request
    body = R(topics=[R.TopicRequest(name=t, partition_indexes=ps) for t, ps in topics.items()])
    resp = w.call(K.DESCRIBE_PRODUCERS, 0, body)
    return {(t.name, p.partition_index): p for t in resp.topics for p in t.partitions}


def test_describe_producers_lists_each_producer_with_its_last_sequence_and_open_transaction(wire):
    topic = unique("producers")
    assert create(wire, topic).error_code == ErrorCode.NONE
    assert produce(wire, topic, txn_batch(A, [b"a0", b"a1"], epoch=2), acks=-1).base_offset == 0
    assert produce(wire, topic, txn_batch(B, [b"b0"]), acks=-1).base_offset == 2
    assert produce(wire, topic, txn_batch(A, [b"a2", b"a3", b"a4"], seq=2, epoch=2), acks=-1).base_offset == 3
    assert write_markers(wire, (A, 2, True, 7, {topic: [0]})) == {(A, topic, 0): 0}  # COMMIT at 6

    (part,) = describe(wire, {topic: [0]}).values()
    assert part.error_code == ErrorCode.NONE and part.error_message is None
    got = [
        (p.producer_id, p.producer_epoch, p.last_sequence, p.coordinator_epoch, p.current_txn_start_offset)
        for p in part.active_producers
    ]
    assert got == [(A, 2, 4, 7, -1), (B, 0, 0, -1, 2)]
    assert all(p.last_timestamp > 0 for p in part.active_producers)


def test_describe_producers_errors_per_partition(wire):
    topic = unique("producers")
    assert create(wire, topic).error_code == ErrorCode.NONE
    missing = unique("missing")
    parts = describe(wire, {topic: [0, 5], missing: [0]})
    assert {k: p.error_code for k, p in parts.items()} == {
        (topic, 0): ErrorCode.NONE,
        (topic, 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        (missing, 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert parts[(topic, 0)].active_producers == []
