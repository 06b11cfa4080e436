"""Deletes: retention by time and size (injected clock), DeleteRecords, delayed file deletion, truncation."""

from __future__ import annotations

import pytest

from broker.log import LogConfig, OffsetOutOfRangeError
from spark_kafkalog.protocol import ErrorCode

from .helpers import batch, read_all, value_batch

DAY = 86_400_000


def _filled(open_log, clock, config, segments=4, per_segment=3, step_ms=DAY):
    """A log with ``segments`` full segments (plus an empty active one), record times ``step_ms`` apart."""
    size = len(batch([b"x"], keys=[b"k000"]))
    plog = open_log(config.update(segment_bytes=size * per_segment))
    for i in range(segments * per_segment):
        plog.append_as_leader(batch([b"x"], keys=[b"k%03d" % i], timestamps=[clock.milliseconds()]), leader_epoch=0)
        if i % per_segment == per_segment - 1:
            clock.advance(step_ms)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    return plog


def test_retention_by_time_deletes_segments_whose_newest_record_is_too_old(open_log, clock):
    plog = _filled(open_log, clock, LogConfig(retention_ms=2 * DAY))
    assert [s.base_offset for s in plog.segments] == [0, 3, 6, 9, 12]
    assert plog.delete_old_segments() == 2  # records at -4 and -3 days; -2 days is not older than 2 days
    assert [s.base_offset for s in plog.segments] == [6, 9, 12]
    assert plog.log_start_offset == 6
    assert plog.read(0, 100).error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert [r.offset for r in read_all(plog)] == list(range(6, 12))
    clock.advance(10 * DAY)
    assert plog.delete_old_segments() == 2
    assert [s.base_offset for s in plog.segments] == [12]  # never the active segment


def test_retention_by_time_uses_the_largest_timestamp_not_the_first(open_log, clock):
    plog = open_log(LogConfig(retention_ms=DAY))
    now = clock.milliseconds()
    plog.append_as_leader(batch([b"a", b"b"], timestamps=[now - 10 * DAY, now]), leader_epoch=0)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    assert plog.delete_old_segments() == 0
    clock.advance(DAY + 1)
    assert plog.delete_old_segments() == 1


def test_retention_by_size_keeps_the_newest_segments_within_the_limit(open_log, clock):
    size = len(batch([b"x"], keys=[b"k000"]))
    plog = _filled(open_log, clock, LogConfig(retention_bytes=6 * size), step_ms=0)
    assert plog.size_in_bytes == 12 * size
    assert plog.delete_old_segments() == 2
    assert plog.size_in_bytes == 6 * size and plog.log_start_offset == 6
    assert plog.delete_old_segments() == 0
    plog.update_config(plog.config.update(retention_bytes=6 * size - 1))  # never below the limit
    assert plog.delete_old_segments() == 0
    plog.update_config(plog.config.update(retention_bytes=3 * size))
    assert plog.delete_old_segments() == 1


def test_retention_needs_the_delete_policy(open_log, clock):
    plog = _filled(open_log, clock, LogConfig(retention_ms=1, cleanup_policy=("compact",)))
    clock.advance(10 * DAY)
    assert plog.delete_old_segments() == 0
    plog.update_config(plog.config.update(cleanup_policy=("compact", "delete")))
    assert plog.delete_old_segments() == 4


def test_retention_only_deletes_segments_below_the_high_watermark(open_log, clock):
    plog = _filled(open_log, clock, LogConfig(retention_ms=1))
    clock.advance(10 * DAY)
    plog.high_watermark = 5
    assert plog.delete_old_segments() == 1  # the segment [3, 6) still holds offsets above the high watermark
    assert plog.log_start_offset == 3


def test_deleted_segment_files_go_after_the_file_delete_delay(open_log, clock):
    plog = _filled(open_log, clock, LogConfig(retention_ms=1, file_delete_delay_ms=60_000))
    first = plog.segments[0]
    old_path = first.file.path
    clock.advance(10 * DAY)
    plog.delete_old_segments()
    assert not old_path.exists()
    renamed = old_path.with_name(old_path.name + ".deleted")
    assert renamed.exists()
    clock.advance(59_999)
    plog.purge_deleted_segments()
    assert renamed.exists()
    clock.advance(1)
    plog.purge_deleted_segments()
    assert not renamed.exists() and not list(plog.dir.glob("*.deleted"))


def test_delete_records_moves_the_log_start_and_drops_whole_segments(open_log, clock):
    plog = _filled(open_log, clock, LogConfig())
    assert plog.delete_records_before(4) == 4
    assert [s.base_offset for s in plog.segments] == [3, 6, 9, 12]
    assert plog.read(3, 100).error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert [r.offset for r in read_all(plog)][0] == 4
    assert plog.delete_records_before(2) == 4  # never moves back
    assert plog.delete_records_before(-1) == 12  # -1: up to the high watermark
    assert [s.base_offset for s in plog.segments] == [12]


def test_delete_records_beyond_the_high_watermark_is_an_error(open_log, clock):
    plog = _filled(open_log, clock, LogConfig())
    plog.high_watermark = 5
    with pytest.raises(OffsetOutOfRangeError) as info:
        plog.delete_records_before(6)
    assert info.value.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert plog.log_start_offset == 0


def test_truncate_to_removes_batches_and_later_segments(open_log, clock):
    plog = _filled(open_log, clock, LogConfig())
    plog.truncate_to(7)
    assert plog.log_end_offset == 7 and [s.base_offset for s in plog.segments] == [0, 3, 6]
    assert plog.high_watermark == 7
    info = plog.append_as_leader(value_batch(2), leader_epoch=1)
    assert info.first_offset == 7
    assert [r.offset for r in read_all(plog)] == list(range(9))


def test_truncate_inside_a_batch_removes_the_whole_batch(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(3), leader_epoch=0)
    plog.append_as_leader(value_batch(3), leader_epoch=0)
    plog.truncate_to(4)
    assert plog.log_end_offset == 3


def test_truncate_fully_and_start_at(open_log, clock):
    plog = _filled(open_log, clock, LogConfig())
    plog.truncate_fully_and_start_at(100)
    assert (plog.log_start_offset, plog.log_end_offset, plog.high_watermark) == (100, 100, 100)
    assert [s.base_offset for s in plog.segments] == [100]
    assert plog.read(0, 10).error == ErrorCode.OFFSET_OUT_OF_RANGE
    plog.append_as_leader(value_batch(1), leader_epoch=3)
    assert [r.offset for r in read_all(plog)] == [100]
    assert plog.leader_epoch_entries == [(3, 100)]
    plog.truncate_to(50)  # below the log start: start over there
    assert (plog.log_start_offset, plog.log_end_offset) == (50, 50)
