"""Idempotent producers: duplicates answered with original offsets, sequence and epoch checks, rebuild."""

from __future__ import annotations

import struct

import pytest

from broker.log import LogAppendError, LogConfig
from broker.log.producer_state import BatchMetadata, ProducerStateManager
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.crc import crc32c

from .helpers import read_all, value_batch

PID = 4242


def produce(plog, n, seq, epoch=0, pid=PID):
    return plog.append_as_leader(
        value_batch(n, producer_id=pid, producer_epoch=epoch, base_sequence=seq), leader_epoch=0
    )


def test_a_retried_batch_returns_its_original_offsets_and_appends_nothing(open_log):
    plog = open_log()
    first = produce(plog, 3, seq=0)
    produce(plog, 2, seq=3)
    retry = produce(plog, 3, seq=0)
    assert retry.duplicate and (retry.first_offset, retry.last_offset) == (first.first_offset, first.last_offset)
    assert plog.log_end_offset == 5
    assert len(read_all(plog)) == 5


def test_only_the_last_five_batches_are_remembered(open_log):
    plog = open_log()
    for i in range(7):
        produce(plog, 1, seq=i)
    assert [b.first_seq for b in plog.producer_state(PID).batches] == [2, 3, 4, 5, 6]
    assert produce(plog, 1, seq=2).duplicate
    with pytest.raises(LogAppendError) as info:
        produce(plog, 1, seq=1)  # too old to be recognised: out of order
    assert info.value.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_sequence_gap_is_out_of_order(open_log):
    plog = open_log()
    produce(plog, 2, seq=0)
    with pytest.raises(LogAppendError) as info:
        produce(plog, 1, seq=3)
    assert info.value.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert plog.log_end_offset == 2


def test_an_older_epoch_is_fenced(open_log):
    plog = open_log()
    produce(plog, 1, seq=0, epoch=3)
    with pytest.raises(LogAppendError) as info:
        produce(plog, 1, seq=1, epoch=2)
    assert info.value.error_code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_a_new_epoch_must_start_at_sequence_zero(open_log):
    plog = open_log()
    produce(plog, 1, seq=0, epoch=0)
    with pytest.raises(LogAppendError) as info:
        produce(plog, 1, seq=5, epoch=1)
    assert info.value.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    produce(plog, 1, seq=0, epoch=1)
    assert plog.producer_state(PID).epoch == 1


def test_an_unknown_producer_may_start_anywhere_and_sequences_wrap(open_log):
    plog = open_log()
    produce(plog, 2, seq=0x7FFFFFFE)  # last sequence 2^31-1
    produce(plog, 1, seq=0)
    assert plog.producer_state(PID).last_seq == 0


def test_a_failed_request_leaves_the_producer_state_untouched(open_log):
    plog = open_log()
    produce(plog, 1, seq=0)
    request = value_batch(1, producer_id=PID, producer_epoch=0, base_sequence=1) + value_batch(
        1, producer_id=PID, producer_epoch=0, base_sequence=9
    )
    with pytest.raises(LogAppendError):
        plog.append_as_leader(request, leader_epoch=0)
    assert plog.producer_state(PID).last_seq == 0
    produce(plog, 1, seq=1)


def test_a_request_mixing_duplicates_and_new_batches_is_rejected(open_log):
    plog = open_log()
    produce(plog, 1, seq=0)
    request = value_batch(1, producer_id=PID, producer_epoch=0, base_sequence=0) + value_batch(
        1, producer_id=PID, producer_epoch=0, base_sequence=1
    )
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(request, leader_epoch=0)
    assert info.value.error_code == ErrorCode.DUPLICATE_SEQUENCE_NUMBER


@pytest.mark.parametrize("how", ["clean", "unclean-with-snapshot", "unclean-without-snapshot"])
def test_producer_state_is_rebuilt_on_reopen(open_log, tmp_path, how):
    config = LogConfig(segment_bytes=len(value_batch(2, producer_id=PID, producer_epoch=0, base_sequence=0)) * 2)
    plog = open_log(config)
    offsets = [produce(plog, 2, seq=2 * i) for i in range(5)]
    produce(plog, 1, seq=0, pid=7)
    expected = plog.producer_state(PID)
    plog.close(flush=how == "clean")
    if how == "unclean-without-snapshot":
        for path in tmp_path.glob("t-0/*.snapshot"):
            path.unlink()
    elif how == "unclean-with-snapshot":
        # a crash: the snapshot written at close is lost, older ones (taken at rolls) remain
        newest = max(tmp_path.glob("t-0/*.snapshot"))
        newest.unlink()
    plog = open_log(config, recover=how != "clean")
    assert plog.producer_state(PID) == expected
    duplicate = produce(plog, 2, seq=6)
    assert duplicate.duplicate and duplicate.first_offset == offsets[3].first_offset
    assert produce(plog, 1, seq=10).first_offset == 11


def test_truncation_rolls_producer_state_back(open_log):
    plog = open_log()
    produce(plog, 2, seq=0)
    produce(plog, 2, seq=2)
    plog.truncate_to(2)
    assert plog.producer_state(PID).last_seq == 1
    assert produce(plog, 2, seq=2).first_offset == 2  # accepted again, not a duplicate


def _kafka_snapshot(entries: list[tuple]) -> bytes:
    """A snapshot in Apache Kafka's version 1 layout (ProducerStateManager: version i16, CRC-32C u32 of the
    rest, i32 count, 46-byte entries), built from the documented field list."""
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c(body)) + body


def test_a_kafka_producer_snapshot_is_loaded(tmp_path):
    # Kafka's own snapshots in a log dir migrated from Apache Kafka (tests/compat/test_migration.py): one
    # entry per producer with its last batch only, an ongoing transaction, a producer with no batch left
    entries = [
        # producer id, epoch, last sequence, last offset, offset delta, timestamp, coordinator epoch, txn first
        (1000, 0, 49, 80, 9, 1_700_000_000_123, -1, -1),
        (1001, 3, 14, 47, 4, 1_700_000_000_456, 2, 43),
        (1002, 1, -1, -1, 0, 1_700_000_000_789, 5, -1),
        (1003, 0, 2, 12, 5, 1_700_000_000_999, -1, -1),  # the sequence wrapped: first 2^31 - 3
    ]
    (tmp_path / "00000000000000000081.snapshot").write_bytes(_kafka_snapshot(entries))
    state = ProducerStateManager(tmp_path)
    assert state.load_snapshot(81) == 81
    a, b, c, d = (state.get(pid) for pid in (1000, 1001, 1002, 1003))
    assert (a.epoch, a.last_timestamp, a.batches) == (0, 1_700_000_000_123, [BatchMetadata(40, 49, 71, 80)])
    assert (a.coordinator_epoch, a.current_txn_first_offset) == (-1, -1)
    assert (b.epoch, b.batches, b.coordinator_epoch, b.current_txn_first_offset) == (
        3,
        [BatchMetadata(10, 14, 43, 47)],
        2,
        43,
    )
    assert state.first_unstable_offset == 43 and state.ongoing_transactions == {1001: 43}
    assert (c.epoch, c.batches, c.coordinator_epoch) == (1, [], 5)
    assert d.batches == [BatchMetadata(2**31 - 3, 2, 7, 12)]
    assert a.find_duplicate(0, 40, 49) is not None  # a retry of the last batch is still recognised
