"""The share coordinator's pure state (``ShareCoordinatorShard``) and batch folding (``combine_state_batches``):
merges, snapshots every N updates, epoch fencing, and that replaying the written records rebuilds the state."""

from __future__ import annotations

import uuid

import pytest

from broker.share.batch_combiner import combine_state_batches
from broker.share.coordinator_shard import READ_UNINITIALIZED, WRITE_UNINITIALIZED, ShareCoordinatorShard
from broker.share.record_codec import decode_record, encode_record
from broker.share.records import ShareRecordType, ShareSnapshotValue, ShareUpdateValue
from broker.share.state_batches import StateBatch
from spark_kafkalog.protocol import ErrorCode

B = StateBatch
T = uuid.UUID("00000000-0000-4000-8000-000000000001")
K = ("g", T, 0)
AVAILABLE, ACKED, ARCHIVED = 0, 2, 4


@pytest.mark.parametrize(
    ("current", "new", "start", "expected"),
    [
        ([], [B(0, 9, 0, 1)], 0, [B(0, 9, 0, 1)]),
        # a new batch replaces the offsets it covers, the rest of an overlapped batch stays
        ([B(0, 9, 0, 1)], [B(3, 5, 2, 1)], 0, [B(0, 2, 0, 1), B(3, 5, 2, 1), B(6, 9, 0, 1)]),
        # offsets below the start offset are dropped, a batch across it is cut
        ([B(0, 9, 0, 1)], [B(10, 12, 0, 2)], 5, [B(5, 9, 0, 1), B(10, 12, 0, 2)]),
        ([B(0, 9, 2, 1)], [], 10, []),
        # adjacent batches in the same state and count are merged
        ([B(0, 4, 2, 1)], [B(5, 9, 2, 1)], 0, [B(0, 9, 2, 1)]),
        ([B(0, 4, 2, 1)], [B(5, 9, 2, 2)], 0, [B(0, 4, 2, 1), B(5, 9, 2, 2)]),
        # a later new batch wins over an earlier one
        ([], [B(0, 9, 0, 1), B(2, 3, 4, 5)], 0, [B(0, 1, 0, 1), B(2, 3, 4, 5), B(4, 9, 0, 1)]),
        # a new batch covering several current ones
        (
            [B(0, 1, 0, 1), B(2, 3, 2, 1), B(4, 5, 0, 2)],
            [B(1, 4, 4, 3)],
            0,
            [B(0, 0, 0, 1), B(1, 4, 4, 3), B(5, 5, 0, 2)],
        ),
        # start offset -1: nothing dropped
        ([B(0, 1, 0, 1)], [], -1, [B(0, 1, 0, 1)]),
    ],
)
def test_combine_state_batches(current, new, start, expected):
    assert combine_state_batches(current, new, start) == tuple(expected)


def shard(updates_per_snapshot: int = 3, known: bool = True) -> ShareCoordinatorShard:
    return ShareCoordinatorShard(updates_per_snapshot, lambda topic_id, partition: known)


def apply(s: ShareCoordinatorShard, outcome) -> ErrorCode:
    """Replay an operation's records as the coordinator does once they are acknowledged (through the bytes)."""
    code, _, records = outcome
    for r in records:
        key, value = encode_record(r)
        s.replay(decode_record(key, value))
    return code


def test_initialize_then_writes_fold_into_the_state():
    s = shard()
    assert apply(s, s.initialize(K, 0, -1, 1000)) == ErrorCode.NONE
    st = s.states[K]
    assert (st.snapshot_epoch, st.state_epoch, st.leader_epoch, st.start_offset, st.state_batches) == (0, 0, -1, -1, ())
    assert apply(s, s.write(K, 0, 1, 0, [B(0, 9, AVAILABLE, 1)], 2000)) == ErrorCode.NONE
    assert apply(s, s.write(K, 0, 1, 0, [B(0, 4, ACKED, 1)], 2001)) == ErrorCode.NONE
    assert apply(s, s.write(K, 0, 1, 3, [B(5, 5, ARCHIVED, 1)], 2002)) == ErrorCode.NONE
    st = s.states[K]
    assert st.start_offset == 3 and st.leader_epoch == 1
    assert st.state_batches == (B(3, 4, ACKED, 1), B(5, 5, ARCHIVED, 1), B(6, 9, AVAILABLE, 1))
    assert st.persisted().state_batches == st.state_batches


def test_every_nth_write_is_a_snapshot_of_the_whole_state():
    s = shard(updates_per_snapshot=2)
    apply(s, s.initialize(K, 0, 0, 1000))
    kinds = []
    for i in range(5):
        outcome = s.write(K, 0, 0, 0, [B(i, i, ACKED, 1)], 2000 + i)
        kinds.append(outcome[2][0].key.record_type)
        apply(s, outcome)
    U, S = ShareRecordType.SHARE_UPDATE, ShareRecordType.SHARE_SNAPSHOT
    assert kinds == [U, U, S, U, U]
    st = s.states[K]
    assert st.snapshot_epoch == 1 and st.updates_since_snapshot == 2
    assert st.state_batches == (B(0, 4, ACKED, 1),)
    # the snapshot carries the whole state, so replaying from it alone gives the same state
    snapshot = s.write(K, 0, 0, 0, [B(5, 5, ACKED, 1)], 3000)[2][0]
    assert isinstance(snapshot.value, ShareSnapshotValue)
    fresh = shard(updates_per_snapshot=2)
    fresh.replay(snapshot)
    assert fresh.states[K].state_batches == (B(0, 5, ACKED, 1),)
    assert fresh.states[K].create_timestamp == 1000


def test_replaying_snapshot_and_updates_in_log_order_rebuilds_the_state():
    s = shard(updates_per_snapshot=2)
    log = []

    def run(outcome):
        code, _, records = outcome
        log.extend(encode_record(r) for r in records)
        return apply(s, outcome)

    run(s.initialize(K, 0, 0, 1))
    run(s.read(K, 3))
    for i in range(7):
        run(s.write(K, 0, 3, i // 2, [B(i, i + 1, AVAILABLE, i)], 10 + i))
    run(s.initialize(("h", T, 1), 0, 5, 1))
    reloaded = shard(updates_per_snapshot=2)
    for key, value in log:
        reloaded.replay(decode_record(key, value))
    assert reloaded.states == s.states


@pytest.mark.parametrize(
    ("state_epoch", "leader_epoch", "expected"),
    [
        (1, 5, ErrorCode.NONE),
        (2, 6, ErrorCode.NONE),  # newer epochs are fine
        (0, 5, ErrorCode.FENCED_STATE_EPOCH),
        (1, 4, ErrorCode.FENCED_LEADER_EPOCH),
        (0, 4, ErrorCode.FENCED_LEADER_EPOCH),  # the leader epoch is checked first, as Kafka
        (-1, -1, ErrorCode.NONE),  # -1: not checked
    ],
)
def test_writes_from_older_epochs_are_fenced(state_epoch, leader_epoch, expected):
    s = shard()
    apply(s, s.initialize(K, 1, 0, 1))
    apply(s, s.read(K, 5))
    before = s.states[K]
    code, _, records = s.write(K, state_epoch, leader_epoch, 0, [B(0, 0, ACKED, 1)], 2)
    assert code == expected
    assert bool(records) == (expected == ErrorCode.NONE)
    assert s.states[K] == before


def test_a_read_with_a_newer_leader_epoch_records_it_and_fences_the_old_leader():
    s = shard()
    apply(s, s.initialize(K, 0, 0, 1))
    code, _, records = s.read(K, 2)
    assert code == ErrorCode.NONE and len(records) == 1
    assert records[0].value == ShareUpdateValue(snapshot_epoch=0, leader_epoch=2, start_offset=-1)
    apply(s, (code, None, records))
    assert s.read(K, 2) == (ErrorCode.NONE, None, [])  # the same epoch writes nothing
    assert s.read(K, 1)[0] == ErrorCode.FENCED_LEADER_EPOCH
    assert s.write(K, 0, 1, 0, [], 2)[0] == ErrorCode.FENCED_LEADER_EPOCH


def test_initialize_refuses_an_older_state_epoch_and_resets_the_state():
    s = shard()
    apply(s, s.initialize(K, 2, 0, 1))
    apply(s, s.write(K, 2, 0, 0, [B(0, 9, ACKED, 1)], 2))
    assert s.initialize(K, 1, 0, 3)[0] == ErrorCode.FENCED_STATE_EPOCH
    assert apply(s, s.initialize(K, 3, 100, 4)) == ErrorCode.NONE
    st = s.states[K]
    assert (st.state_epoch, st.start_offset, st.state_batches, st.snapshot_epoch) == (3, 100, (), 1)
    assert s.write(K, 2, 0, 0, [], 5)[0] == ErrorCode.FENCED_STATE_EPOCH


def test_uninitialized_keys_answer_as_kafka():
    s = shard()
    assert s.write(K, 0, 0, 0, [], 1) == (ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED, [])
    assert s.read(K, 0) == (ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED, [])
    code, _, summary = s.read_summary(K, 0)
    assert code == ErrorCode.NONE and summary is not None
    assert (summary.state_epoch, summary.start_offset) == (0, -1)
    assert s.delete(K) == (ErrorCode.NONE, None, [])


def test_delete_writes_tombstones_and_forgets_the_state():
    s = shard()
    apply(s, s.initialize(K, 0, 0, 1))
    apply(s, s.write(K, 0, 0, 0, [B(0, 0, ACKED, 1)], 2))
    code, _, records = s.delete(K)
    assert code == ErrorCode.NONE
    assert [(r.key.record_type, r.value) for r in records] == [
        (ShareRecordType.SHARE_UPDATE, None),
        (ShareRecordType.SHARE_SNAPSHOT, None),
    ]
    apply(s, (code, None, records))
    assert K not in s.states
    # an update left in the log after the tombstones (never written by us) does not resurrect the state
    s.replay(records[0].__class__(records[0].key, ShareUpdateValue(0, 0, 0)))
    assert K not in s.states


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (lambda s: s.initialize(("g", T, -1), 0, 0, 1), ErrorCode.INVALID_REQUEST),
        (lambda s: s.write(("g", T, -1), 0, 0, 0, [], 1), ErrorCode.INVALID_REQUEST),
        (lambda s: s.read(("g", T, -1), 0), ErrorCode.INVALID_REQUEST),
        (lambda s: s.delete(("g", T, -1)), ErrorCode.INVALID_REQUEST),
        (lambda s: s.write(K, 0, 0, 0, [B(5, 4, 0, 1)], 1), ErrorCode.INVALID_REQUEST),
    ],
)
def test_bad_requests_are_invalid_request(op, expected):
    s = shard()
    apply(s, s.initialize(K, 0, 0, 1))
    assert op(s)[0] == expected


def test_a_topic_partition_the_metadata_does_not_know_is_unknown():
    s = shard(known=False)
    assert s.initialize(K, 0, 0, 1)[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_the_redundant_offset_is_the_oldest_last_snapshot_of_a_key_with_state():
    s = shard(updates_per_snapshot=1)
    k2 = ("h", T, 1)
    assert s.redundant_offset(7) == 7  # nothing stored: everything before the log end can go
    for offset, outcome in enumerate(
        [s.initialize(K, 0, 0, 1), s.initialize(k2, 0, 0, 1)]  # snapshots at 0 and 1
    ):
        for r in outcome[2]:
            s.replay(r, offset)
    assert s.redundant_offset(2) == 0
    for offset in (2, 3):  # an update, then a snapshot
        for r in s.write(K, 0, 0, 0, [], offset)[2]:
            s.replay(r, offset)
    assert s.redundant_offset(4) == 1  # K's last snapshot is at 3, k2's at 1
    for r in s.delete(k2)[2]:
        s.replay(r, 4)
    assert s.redundant_offset(6) == 3
