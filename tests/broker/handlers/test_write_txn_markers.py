"""WriteTxnMarkers, read_committed Fetch and ListOffsets on an in-process broker, over the wire: transactional
batches of fixed producer ids, then COMMIT for one producer, ABORT for another, one left open."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import build_control_batch

from ..requests import create, fetch, produce, unique
from ..txn_wire import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    committed_view,
    data_values,
    list_latest,
    txn_batch,
    write_markers,
)
from ..wire import Wire

A, B, C = 7_000_001, 7_000_002, 7_000_003


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


def _produce_ok(w, topic, records):
    r = produce(w, topic, records, acks=-1)
    assert r.error_code == ErrorCode.NONE, r
    return r.base_offset


@pytest.mark.parametrize("markers_version", [0, 1])
def test_read_committed_stops_at_the_open_transaction_and_lists_the_aborted_producer(wire, markers_version):
    topic = unique("txn")
    assert create(wire, topic).error_code == ErrorCode.NONE
    assert _produce_ok(wire, topic, txn_batch(A, [b"a0", b"a1"])) == 0
    assert _produce_ok(wire, topic, txn_batch(B, [b"b0"])) == 2
    assert _produce_ok(wire, topic, txn_batch(C, [b"c0"])) == 3
    assert _produce_ok(wire, topic, txn_batch(A, [b"a2"], seq=2)) == 4
    errors = write_markers(wire, (A, 0, True, 1, {topic: [0]}), (B, 0, False, 1, {topic: [0]}), version=markers_version)
    assert errors == {(A, topic, 0): 0, (B, topic, 0): 0}  # markers at 5 (COMMIT A) and 6 (ABORT B)

    committed = fetch(wire, topic, 0, isolation=READ_COMMITTED)
    assert (committed.high_watermark, committed.last_stable_offset) == (7, 3)
    assert data_values(committed.records) == [b"a0", b"a1", b"b0"]  # nothing at or after C's first offset
    assert [(t.producer_id, t.first_offset) for t in committed.aborted_transactions] == [(B, 2)]
    assert committed_view(committed.records, committed.aborted_transactions) == [b"a0", b"a1"]

    uncommitted = fetch(wire, topic, 0, isolation=READ_UNCOMMITTED)
    assert uncommitted.last_stable_offset == 3
    assert data_values(uncommitted.records) == [b"a0", b"a1", b"b0", b"c0", b"a2"]
    assert list_latest(wire, topic, READ_COMMITTED) == 3
    assert list_latest(wire, topic, READ_UNCOMMITTED) == 7

    # C commits: everything is stable; C's record and A's later one become visible, B's stays aborted
    assert write_markers(wire, (C, 0, True, 1, {topic: [0]}), version=markers_version) == {(C, topic, 0): 0}
    committed = fetch(wire, topic, 0, isolation=READ_COMMITTED)
    assert (committed.high_watermark, committed.last_stable_offset) == (8, 8)
    assert committed_view(committed.records, committed.aborted_transactions) == [b"a0", b"a1", b"c0", b"a2"]
    assert list_latest(wire, topic, READ_COMMITTED) == 8
    later = fetch(wire, topic, 4, isolation=READ_COMMITTED)
    assert [(t.producer_id, t.first_offset) for t in later.aborted_transactions] == [(B, 2)]


def test_marker_errors_per_partition(wire):
    topic = unique("txn")
    assert create(wire, topic, partitions=2).error_code == ErrorCode.NONE
    _produce_ok(wire, topic, txn_batch(A, [b"x"], epoch=3))
    missing = unique("missing")
    errors = write_markers(
        wire,
        (A, 2, True, 5, {topic: [0]}),  # older producer epoch
        (B, 0, True, 5, {topic: [7], missing: [0]}),
    )
    assert errors == {
        (A, topic, 0): ErrorCode.INVALID_PRODUCER_EPOCH,
        (B, topic, 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        (B, missing, 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert write_markers(wire, (A, 3, False, 5, {topic: [0, 1]})) == {(A, topic, 0): 0, (A, topic, 1): 0}
    # an older coordinator epoch is fenced once the producer saw a marker of a newer one
    assert write_markers(wire, (A, 3, True, 4, {topic: [0]})) == {
        (A, topic, 0): ErrorCode.TRANSACTION_COORDINATOR_FENCED
    }


def test_clients_cannot_produce_markers_and_transactional_batches_need_a_producer_id(wire):
    topic = unique("txn")
    assert create(wire, topic).error_code == ErrorCode.NONE
    marker = build_control_batch("commit", producer_id=A, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1)
    assert produce(wire, topic, marker).error_code == ErrorCode.INVALID_RECORD
    assert produce(wire, topic, txn_batch(-1, [b"x"], seq=-1, epoch=-1)).error_code == ErrorCode.INVALID_RECORD
    assert fetch(wire, topic, 0).high_watermark == 0
