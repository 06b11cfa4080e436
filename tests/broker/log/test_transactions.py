"""Transactions in the log: producer state transitions, last stable offset, the ``.txnindex`` (format,
truncation, recovery, retention), markers from followers, snapshot versions, and compaction of aborts."""

from __future__ import annotations

import struct

import pytest

from broker.log import LogAppendError, LogConfig, PartitionLog
from broker.log.cleaner import clean_log
from broker.log.producer_state import (
    CompletedTxn,
    EndTxnMarker,
    ProducerStateEntry,
    ProducerStateManager,
    read_end_txn_marker,
)
from broker.log.transaction_index import AbortedTxn, TransactionIndex
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import RecordBatchBuilder, build_control_batch, parse_batch_header
from spark_kafkalog.records.crc import crc32c

from .helpers import T0, read_all, value_batch

A, B, C = 1000, 2000, 3000


def txn_batch(pid: int, n: int = 2, *, seq: int = 0, epoch: int = 0, keys=None, tag: str = "t") -> bytearray:
    builder = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True)
    for i in range(n):
        builder.append(T0 + i, keys[i] if keys else None, f"{tag}-{pid}-{seq + i}".encode())
    return bytearray(builder.build())


def marker(plog: PartitionLog, pid: int, commit: bool, *, epoch: int = 0, coordinator_epoch: int = 0):
    return plog.append_control_marker(pid, epoch, commit, coordinator_epoch, 0)


def settle(plog: PartitionLog) -> None:
    plog.high_watermark = plog.log_end_offset


# -- producer state transitions (pure) ---------------------------------------------------------------
def _header(pid, base, *, transactional=True, control=False, epoch=0, seq=0):
    if control:
        data = build_control_batch("commit", producer_id=pid, producer_epoch=epoch, coordinator_epoch=0, timestamp_ms=1)
    else:
        b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional)
        b.append(1, None, b"x")
        data = b.build()
    return parse_batch_header(bytes(data))._replace(base_offset=base)


@pytest.mark.parametrize(
    ("steps", "ongoing", "completed"),
    [
        # (pid, base offset, kind) ; kind: "txn" data, "idem" non-transactional, "commit"/"abort" markers
        ([(A, 0, "txn")], {A: 0}, []),
        ([(A, 0, "txn"), (A, 1, "txn")], {A: 0}, []),
        ([(A, 0, "txn"), (A, 1, "commit")], {}, [CompletedTxn(A, 0, 1, False)]),
        ([(A, 0, "txn"), (A, 1, "abort")], {}, [CompletedTxn(A, 0, 1, True)]),
        ([(A, 0, "txn"), (B, 1, "txn"), (A, 2, "commit")], {B: 1}, [CompletedTxn(A, 0, 2, False)]),
        ([(A, 0, "txn"), (A, 1, "abort"), (A, 2, "txn")], {A: 2}, [CompletedTxn(A, 0, 1, True)]),
        ([(A, 5, "abort")], {}, [CompletedTxn(A, 5, 5, True)]),  # a marker with nothing ongoing
        ([(A, 0, "idem")], {}, []),
    ],
)
def test_producer_state_transitions(tmp_path, steps, ongoing, completed):
    manager = ProducerStateManager(tmp_path)
    done = []
    for pid, base, kind in steps:
        control = kind in ("commit", "abort")
        header = _header(pid, base, transactional=kind != "idem", control=control, seq=base)
        result = manager.update(header, EndTxnMarker(kind == "commit", 0) if control else None)
        if result is not None:
            done.append(result)
    assert manager.ongoing_transactions == ongoing
    assert manager.first_unstable_offset == (min(ongoing.values()) if ongoing else None)
    assert done == completed


def test_the_control_record_is_read_as_an_end_txn_marker():
    data = build_control_batch("abort", producer_id=A, producer_epoch=3, coordinator_epoch=7, timestamp_ms=1)
    assert read_end_txn_marker(data) == EndTxnMarker(False, 7)
    data = build_control_batch("commit", producer_id=A, producer_epoch=3, coordinator_epoch=9, timestamp_ms=1)
    assert read_end_txn_marker(data) == EndTxnMarker(True, 9)
    with pytest.raises(ValueError):
        read_end_txn_marker(bytes(txn_batch(A)))


# -- leader appends ------------------------------------------------------------------------------------
def test_lso_follows_the_oldest_open_transaction_with_interleaved_producers(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(2), leader_epoch=0)  # 0-1 plain
    plog.append_as_leader(txn_batch(A, 2, seq=0), leader_epoch=0)  # 2-3
    plog.append_as_leader(txn_batch(B, 2, seq=0), leader_epoch=0)  # 4-5
    plog.append_as_leader(txn_batch(A, 1, seq=2), leader_epoch=0)  # 6
    settle(plog)
    assert (plog.first_unstable_offset, plog.last_stable_offset, plog.high_watermark) == (2, 2, 7)
    marker(plog, A, True)  # 7
    settle(plog)
    assert plog.last_stable_offset == 4
    marker(plog, B, False)  # 8
    assert plog.first_unstable_offset is None
    assert plog.last_stable_offset == 8  # the high watermark has not passed the marker yet
    settle(plog)
    assert plog.last_stable_offset == 9
    plog.append_as_leader(txn_batch(C, 1), leader_epoch=0)  # 9
    settle(plog)
    assert plog.last_stable_offset == 9
    assert plog.collect_aborted_transactions(0, 10) == [(B, 4)]
    assert plog.aborted_transactions(0, 10) == [AbortedTxn(B, 4, 8, 9)]


def test_markers_are_fenced_by_producer_epoch_and_coordinator_epoch(open_log):
    plog = open_log()
    plog.append_as_leader(txn_batch(A, 1, epoch=2), leader_epoch=0)
    with pytest.raises(LogAppendError) as info:
        marker(plog, A, True, epoch=1)
    assert info.value.error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    marker(plog, A, True, epoch=2, coordinator_epoch=5)
    assert plog.producer_state(A).coordinator_epoch == 5
    plog.append_as_leader(txn_batch(A, 1, seq=1, epoch=2), leader_epoch=0)
    with pytest.raises(LogAppendError) as info:
        marker(plog, A, False, epoch=2, coordinator_epoch=4)
    assert info.value.error_code == ErrorCode.TRANSACTION_COORDINATOR_FENCED
    assert plog.first_unstable_offset == 2
    marker(plog, A, False, epoch=3, coordinator_epoch=5)  # a bumped epoch (coordinator abort) is accepted
    assert plog.producer_state(A).epoch == 3 and plog.first_unstable_offset is None


def test_clients_cannot_append_control_batches_and_transactional_batches_need_a_producer(open_log):
    plog = open_log()
    control = build_control_batch("commit", producer_id=A, producer_epoch=0, coordinator_epoch=0, timestamp_ms=T0)
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(bytearray(control), leader_epoch=0)
    assert info.value.error_code == ErrorCode.INVALID_RECORD
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(txn_batch(-1, 1, seq=-1, epoch=-1), leader_epoch=0)
    assert info.value.error_code == ErrorCode.INVALID_RECORD
    assert plog.log_end_offset == 0


def test_a_non_transactional_batch_inside_an_open_transaction_is_invalid_txn_state(open_log):
    plog = open_log()
    plog.append_as_leader(txn_batch(A, 1), leader_epoch=0)
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(value_batch(1, producer_id=A, producer_epoch=0, base_sequence=1), leader_epoch=0)
    assert info.value.error_code == ErrorCode.INVALID_TXN_STATE


# -- the .txnindex file ------------------------------------------------------------------------------
def test_txnindex_bytes_are_kafkas_34_byte_entries_and_only_aborts_create_it(open_log):
    plog = open_log()
    plog.append_as_leader(txn_batch(A, 2), leader_epoch=0)  # 0-1
    marker(plog, A, True)  # 2
    path = plog.dir / f"{0:020d}.txnindex"
    assert not path.exists()
    plog.append_as_leader(txn_batch(B, 3), leader_epoch=0)  # 3-5
    plog.append_as_leader(txn_batch(C, 1), leader_epoch=0)  # 6
    marker(plog, B, False, coordinator_epoch=4)  # 7
    expected = struct.pack(">hqqqq", 0, B, 3, 7, 6)
    assert path.read_bytes() == expected
    marker(plog, C, False)  # 8
    assert path.read_bytes() == expected + struct.pack(">hqqqq", 0, C, 6, 8, 9)
    assert TransactionIndex(path).entries == (AbortedTxn(B, 3, 7, 6), AbortedTxn(C, 6, 8, 9))


def test_truncation_removes_txnindex_entries_of_removed_markers(open_log):
    plog = open_log()
    plog.append_as_leader(txn_batch(A, 1), leader_epoch=0)  # 0
    marker(plog, A, False)  # 1
    plog.append_as_leader(txn_batch(B, 1), leader_epoch=0)  # 2
    marker(plog, B, False)  # 3
    plog.truncate_to(3)
    assert plog.aborted_transactions(0, 10) == [AbortedTxn(A, 0, 1, 2)]
    assert plog.first_unstable_offset == 2  # B's transaction is open again
    assert len((plog.dir / f"{0:020d}.txnindex").read_bytes()) == 34
    plog.truncate_to(1)
    assert not (plog.dir / f"{0:020d}.txnindex").exists()
    assert plog.first_unstable_offset == 0


def _mixed_log(plog):
    """Segments of ~2 batches: aborts and commits across rolls, B left open."""
    plog.append_as_leader(txn_batch(A, 2), leader_epoch=0)  # 0-1
    plog.append_as_leader(txn_batch(B, 2), leader_epoch=0)  # 2-3
    plog.roll()
    marker(plog, A, False)  # 4
    plog.append_as_leader(txn_batch(C, 2), leader_epoch=0)  # 5-6
    plog.roll()
    marker(plog, C, True)  # 7
    plog.append_as_leader(txn_batch(A, 2, seq=2), leader_epoch=0)  # 8-9
    marker(plog, A, False)  # 10
    plog.append_as_leader(txn_batch(C, 1, seq=2), leader_epoch=0)  # 11


def _snapshot(plog):
    return {p.name: p.read_bytes() for p in sorted(plog.dir.glob("*.txnindex"))}


def test_recovery_after_a_crash_rebuilds_txnindex_and_open_transactions(open_log, tmp_path):
    plog = open_log()
    _mixed_log(plog)
    before_index = _snapshot(plog)
    before = (plog.first_unstable_offset, plog.aborted_transactions(0, 100))
    assert before == (2, [AbortedTxn(A, 0, 4, 2), AbortedTxn(A, 8, 10, 2)])
    plog.flush()
    plog.close(flush=False)
    for snap in plog.dir.glob("*.snapshot"):
        snap.unlink()
    # a crash: the last batch cut in half and the newest .txnindex lost
    last = sorted(plog.dir.glob("*.log"))[-1]
    size = last.stat().st_size
    with open(last, "r+b") as f:
        f.truncate(size - 10)
    (plog.dir / f"{7:020d}.txnindex").unlink()
    recovered = open_log(recover=True, recovery_point=0)
    assert _snapshot(recovered) == before_index
    assert recovered.log_end_offset == 11
    assert recovered.first_unstable_offset == 2
    assert recovered.aborted_transactions(0, 100) == before[1]


def test_recovery_from_the_recovery_point_does_not_duplicate_entries(open_log):
    plog = open_log()
    _mixed_log(plog)
    before_index = _snapshot(plog)
    plog.close()  # snapshots at the rolls and at the end
    (plog.dir / f"{11 + 1:020d}.snapshot").unlink()
    recovered = open_log(recover=True, recovery_point=7)
    assert _snapshot(recovered) == before_index
    assert recovered.first_unstable_offset == 2
    recovered.close()
    again = open_log(recover=True, recovery_point=0)
    assert _snapshot(again) == before_index


def test_retention_deletes_a_segments_txnindex_with_it(open_log, clock):
    plog = open_log(LogConfig(file_delete_delay_ms=0))
    _mixed_log(plog)
    settle(plog)
    assert (plog.dir / f"{4:020d}.txnindex").exists()
    plog.delete_records_before(7)
    plog.delete_old_segments()
    plog.purge_deleted_segments(force=True)
    assert not (plog.dir / f"{4:020d}.txnindex").exists()
    assert not list(plog.dir.glob("*.deleted"))
    assert plog.aborted_transactions(7, 100) == [AbortedTxn(A, 8, 10, 2)]


def test_a_reopened_log_keeps_open_transactions_and_entries(open_log):
    plog = open_log()
    _mixed_log(plog)
    plog.close()
    again = open_log()
    assert again.first_unstable_offset == 2
    assert again.producer_state(C).current_txn_first_offset == 11
    assert len(again.aborted_transactions(0, 100)) == 2


# -- followers -----------------------------------------------------------------------------------------
def test_a_follower_replays_markers_into_state_and_an_identical_txnindex(open_log):
    leader = open_log(name="t-0")
    _mixed_log(leader)
    follower = open_log(name="f-0")
    for segment in leader.segments:
        data = segment.batch_at(segment.base_offset)
        raw = (leader.dir / f"{segment.base_offset:020d}.log").read_bytes()
        assert data is not None
        follower.append_as_follower(raw)
        follower.roll()
    assert _snapshot(follower) == _snapshot(leader)
    assert follower.first_unstable_offset == leader.first_unstable_offset == 2
    for name in _snapshot(leader):
        assert (follower.dir / name).read_bytes() == (leader.dir / name).read_bytes()


# -- snapshots -------------------------------------------------------------------------------------------
def test_snapshot_version_2_keeps_the_open_transaction_and_coordinator_epoch(tmp_path):
    manager = ProducerStateManager(tmp_path)
    manager.update(_header(A, 5, seq=0))
    manager.update(_header(B, 6, control=True), EndTxnMarker(True, 3))
    manager.write_snapshot(7)
    raw = (tmp_path / f"{7:020d}.snapshot").read_bytes()
    assert struct.unpack_from(">h", raw)[0] == 2
    loaded = ProducerStateManager(tmp_path)
    assert loaded.load_snapshot(7) == 7
    assert loaded.get(A).current_txn_first_offset == 5
    assert loaded.get(B).coordinator_epoch == 3
    assert loaded.first_unstable_offset == 5


def test_a_version_1_snapshot_still_loads_without_transactions(tmp_path):
    body = struct.pack(">i", 1) + struct.pack(">qhqb", A, 4, T0, 1) + struct.pack(">iiqq", 0, 2, 10, 12)
    (tmp_path / f"{13:020d}.snapshot").write_bytes(struct.pack(">hI", 1, crc32c(body)) + body)
    manager = ProducerStateManager(tmp_path)
    assert manager.load_snapshot(13) == 13
    entry = manager.get(A)
    assert entry == ProducerStateEntry(A, 4, T0, entry.batches, -1, -1)
    assert (entry.batches[0].first_offset, entry.current_txn_first_offset) == (10, -1)
    assert manager.first_unstable_offset is None


# -- compaction --------------------------------------------------------------------------------------------
def test_the_cleaner_drops_aborted_records_keeps_markers_and_stops_at_the_first_unstable_offset(open_log, clock):
    plog = open_log(LogConfig(cleanup_policy="compact", min_cleanable_dirty_ratio=0.0))
    plog.append_as_leader(txn_batch(A, 2, keys=[b"k1", b"k2"], tag="aborted"), leader_epoch=0)  # 0-1
    plog.append_as_leader(txn_batch(B, 1, keys=[b"k3"], tag="committed"), leader_epoch=0)  # 2
    marker(plog, A, False)  # 3
    marker(plog, B, True)  # 4
    plog.roll()
    plog.append_as_leader(_keyed(b"k1", b"plain"), leader_epoch=0)  # 5
    plog.append_as_leader(txn_batch(C, 1, keys=[b"k3"], tag="open"), leader_epoch=0)  # 6 (open)
    plog.roll()
    plog.append_as_leader(_keyed(b"k4", b"later"), leader_epoch=0)  # 7
    plog.roll()
    settle(plog)
    assert plog.last_stable_offset == 6
    stats = clean_log(plog, clock.milliseconds(), force=True)
    assert stats is not None and stats.end_offset == 5  # the segment holding offset 6 is not cleaned
    records = [(r.offset, r.key, r.value) for r in read_all(plog)]
    assert (0, b"k1", b"aborted-1000-0") not in records and all(r[0] not in (0, 1) for r in records)
    assert (2, b"k3", b"committed-2000-0") in records
    offsets = [r[0] for r in records]
    assert 6 in offsets and 5 in offsets
    # markers stay (control batches are not records, but their batches are still served)
    assert plog.aborted_transactions(0, 100) == [AbortedTxn(A, 0, 3, 2)]
    assert [(v.base_offset, v.header().producer_id) for v in control_batches(plog)] == [(3, A), (4, B)]


def _keyed(key: bytes, value: bytes) -> bytearray:
    b = RecordBatchBuilder()
    b.append(T0, key, value)
    return bytearray(b.build())


def control_batches(plog):
    from spark_kafkalog.records import iter_batches

    out = []
    offset = plog.log_start_offset
    while True:
        data = plog.read(offset, 1 << 20)
        if data.records is None:
            return [v for v in out if v.is_control]
        views = list(iter_batches(data.records.read_bytes()))
        data.records.release()
        out.extend(views)
        offset = views[-1].last_offset + 1
