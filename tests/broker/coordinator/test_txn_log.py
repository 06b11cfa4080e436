"""The ``__transaction_state`` record formats byte for byte, the partition of a transactional id, and the
transaction state machine's legal transitions."""

from __future__ import annotations

import pytest

from broker.coordinator.offsets_topic import java_string_hash
from broker.coordinator.transaction_log import (
    TxnLogValue,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
    transaction_partition_for,
)
from broker.coordinator.txn_metadata import IllegalTransition, TxnMetadata, TxnState, can_transition


def test_key_is_version_0_and_the_id_as_a_string():
    assert encode_txn_key("my-txn") == bytes.fromhex("00000006") + b"my-txn"
    assert decode_txn_key(encode_txn_key("my-txn")) == "my-txn"


def test_value_v0_layout():
    v = TxnLogValue(1, 2, 60000, 1, {"t": [1, 0]}, 5, 4)
    expected = (
        bytes.fromhex("0000")  # version 0
        + (1).to_bytes(8, "big")  # producer id
        + (2).to_bytes(2, "big")  # epoch
        + (60000).to_bytes(4, "big")  # timeout
        + bytes([1])  # Ongoing
        + (1).to_bytes(4, "big")  # one topic
        + (1).to_bytes(2, "big")
        + b"t"
        + (2).to_bytes(4, "big")
        + (0).to_bytes(4, "big")
        + (1).to_bytes(4, "big")
        + (5).to_bytes(8, "big")  # last update
        + (4).to_bytes(8, "big")  # start
    )
    assert encode_txn_value(v) == expected
    back = decode_txn_value(expected)
    assert back == TxnLogValue(1, 2, 60000, 1, {"t": [0, 1]}, 5, 4)


def test_a_null_partition_list_decodes_to_no_partitions():
    data = bytes.fromhex("0000") + (7).to_bytes(8, "big") + (0).to_bytes(2, "big") + (1000).to_bytes(4, "big")
    data += bytes([4]) + (0xFFFFFFFF).to_bytes(4, "big") + (1).to_bytes(8, "big") + (-1).to_bytes(8, "big", signed=True)
    assert decode_txn_value(data).partitions == {}


@pytest.mark.parametrize(
    "tid, java_hash",
    [("my-txn", -1061187895), ("", 0), ("a", 97), ("polygenelubricants", -2147483648)],
)
def test_partition_is_javas_abs_hashcode_modulo(tid, java_hash):
    assert java_string_hash(tid) == java_hash
    expected = 0 if java_hash == -(2**31) else abs(java_hash) % 50
    assert transaction_partition_for(tid, 50) == expected


S = TxnState
LEGAL = {
    (S.EMPTY, S.EMPTY), (S.COMPLETE_COMMIT, S.EMPTY), (S.COMPLETE_ABORT, S.EMPTY),
    (S.EMPTY, S.ONGOING), (S.ONGOING, S.ONGOING), (S.COMPLETE_COMMIT, S.ONGOING), (S.COMPLETE_ABORT, S.ONGOING),
    (S.ONGOING, S.PREPARE_COMMIT), (S.ONGOING, S.PREPARE_ABORT), (S.PREPARE_EPOCH_FENCE, S.PREPARE_ABORT),
    (S.EMPTY, S.PREPARE_ABORT), (S.COMPLETE_COMMIT, S.PREPARE_ABORT), (S.COMPLETE_ABORT, S.PREPARE_ABORT),
    (S.PREPARE_COMMIT, S.COMPLETE_COMMIT), (S.PREPARE_ABORT, S.COMPLETE_ABORT),
    (S.EMPTY, S.DEAD), (S.COMPLETE_COMMIT, S.DEAD), (S.COMPLETE_ABORT, S.DEAD),
    (S.ONGOING, S.PREPARE_EPOCH_FENCE),
}  # fmt: skip


@pytest.mark.parametrize("current", list(S))
@pytest.mark.parametrize("target", list(S))
def test_transition_table(current, target):
    assert can_transition(current, target) == ((current, target) in LEGAL)


def test_prepare_then_complete_takes_the_pending_values_and_remembers_the_last_epoch():
    m = TxnMetadata("t", 10, 3, 1000, S.ONGOING, {("a", 0)}, 5, 5)
    m.prepare(S.PREPARE_ABORT, 9, producer_epoch=4, fenced=True)
    assert m.state is S.ONGOING and m.pending is not None
    m.complete()
    assert (m.state, m.producer_epoch, m.last_producer_epoch, m.last_update_ms) == (S.PREPARE_ABORT, 4, 3, 9)
    with pytest.raises(IllegalTransition):
        m.prepare(S.PREPARE_COMMIT, 10)


def test_state_names_are_kafkas():
    assert [s.display for s in S] == [
        "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
        "PrepareEpochFence",
    ]  # fmt: skip


def test_value_v1_is_flexible_with_the_transactions_v2_tagged_fields():
    v = TxnLogValue(1, 2, 60000, 4, {}, 5, 4, previous_producer_id=7, next_producer_id=-1, client_transaction_version=2)
    data = encode_txn_value(v, 1)
    assert data[:2] == b"\x00\x01"
    expected_tail = (
        (5).to_bytes(8, "big")  # last update
        + (4).to_bytes(8, "big")  # start
        + bytes([2])  # two tagged fields (next_producer_id is at its default, -1: omitted)
        + bytes([0, 8]) + (7).to_bytes(8, "big")  # tag 0: previous producer id
        + bytes([2, 2]) + (2).to_bytes(2, "big")  # tag 2: client transaction version
    )  # fmt: skip
    assert data.endswith(expected_tail)
    assert decode_txn_value(data) == v
    assert decode_txn_value(encode_txn_value(v, 0)) == TxnLogValue(1, 2, 60000, 4, {}, 5, 4)  # v0 drops them


@pytest.mark.parametrize(
    "changes, previous, following",
    [({}, 10, -1), ({"producer_id": 11, "producer_epoch": 0}, 10, -1), ({"next_producer_id": 12}, 10, 12)],
)
def test_a_transition_records_the_previous_id_and_resets_the_next_one(changes, previous, following):
    m = TxnMetadata("t", 10, 3, 1000, S.ONGOING, {("a", 0)}, 5, 5, next_producer_id=99)
    m.prepare(S.PREPARE_COMMIT, 9, **changes)
    m.complete()
    assert (m.previous_producer_id, m.next_producer_id) == (previous, following)
