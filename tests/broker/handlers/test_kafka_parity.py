"""Answers Apache Kafka gives that kafkalog did not, found by the differential checks
(``tests/compat/test_differential.py``): a ListOffsets lookup that finds no offset carries no leader epoch,
a refused CreateTopics topic lists its configs as an empty array, not null, and a Produce refused for a
sequence gap carries the partition's log start offset (a too-large one, or a transactional one with a fenced
producer epoch, does not)."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..requests import batch, create, produce, produce_body, unique
from ..txn_wire import add_partitions, init_txn_producer, txn_batch
from ..wire import Wire

K = ApiKey


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


def list_offsets(w, name, ts, version=7):
    R = API_BY_KEY[K.LIST_OFFSETS].Request
    body = R(
        replica_id=-1,
        isolation_level=0,
        topics=[
            R.ListOffsetsTopic(
                name=name, partitions=[R.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=ts)]
            )
        ],
    )
    return w.call(K.LIST_OFFSETS, version, body).topics[0].partitions[0]


def test_list_offsets_after_every_timestamp_answers_no_leader_epoch(wire):
    name = unique()
    create(wire, name)
    produce(wire, name, batch([b"a", b"b"], ts=1000))
    past = list_offsets(wire, name, 5000)
    assert (past.error_code, past.offset, past.timestamp, past.leader_epoch) == (0, -1, -1, -1)
    found = list_offsets(wire, name, 1001)
    assert (found.offset, found.timestamp, found.leader_epoch) == (1, 1001, 0)
    assert list_offsets(wire, name, -3).leader_epoch == 0
    assert list_offsets(wire, name, -1).leader_epoch == 0


def test_list_offsets_max_timestamp_of_an_empty_log_answers_no_leader_epoch(wire):
    name = unique()
    create(wire, name)
    empty = list_offsets(wire, name, -3)
    assert (empty.offset, empty.timestamp, empty.leader_epoch) == (-1, -1, -1)
    assert (list_offsets(wire, name, -2).offset, list_offsets(wire, name, -2).leader_epoch) == (0, 0)


def test_create_topics_refusal_lists_configs_as_an_empty_array(wire):
    refused = create(wire, unique(), 0)
    assert refused.error_code == ErrorCode.INVALID_PARTITIONS
    assert refused.configs == []
    assert create(wire, unique(), configs={"cleanup.policy": "bogus"}).configs == []


def init_producer_id(w):
    R = API_BY_KEY[K.INIT_PRODUCER_ID].Request
    return w.call(K.INIT_PRODUCER_ID, 4, R(transactional_id=None, transaction_timeout_ms=60000))


def test_produce_sequence_gap_answers_the_log_start_offset(wire):
    name = unique()
    create(wire, name)
    ids = init_producer_id(wire)
    pid, epoch = ids.producer_id, ids.producer_epoch
    assert produce(wire, name, batch([b"a", b"b"], ts=1000, pid=pid, epoch=epoch, seq=0)).error_code == 0
    gap = produce(wire, name, batch([b"c"], ts=1002, pid=pid, epoch=epoch, seq=9))
    assert (gap.error_code, gap.base_offset, gap.log_start_offset) == (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, 0)


def test_produce_too_large_answers_no_log_start_offset(wire):
    name = unique()
    create(wire, name, configs={"max.message.bytes": "1024"})
    big = produce(wire, name, batch([b"x" * 4000]))
    assert (big.error_code, big.log_start_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)


def test_transactional_produce_with_a_fenced_epoch_answers_no_log_start_offset(wire):
    name, tid = unique(), unique()
    create(wire, name)
    pid, epoch = init_txn_producer(wire, tid)
    pid, epoch = init_txn_producer(wire, tid)  # epoch 1: epoch 0 is the fenced one
    assert add_partitions(wire, tid, pid, epoch, {name: [0]}) == {(name, 0): ErrorCode.NONE}

    def send(epoch: int):
        body = produce_body(name, 0, txn_batch(pid, [b"v"], epoch=epoch), acks=-1)
        body.transactional_id = tid
        return wire.call(K.PRODUCE, 9, body).responses[0].partition_responses[0]

    assert send(epoch).error_code == 0
    fenced = send(epoch - 1)  # refused by the coordinator's verification (KIP-890), as Kafka does
    assert (fenced.error_code, fenced.log_start_offset) == (ErrorCode.INVALID_PRODUCER_EPOCH, -1)
