"""Segment rolling: on size, on age, on a full offset or time index, on 32-bit relative offset overflow."""

from __future__ import annotations

from broker.log import LogConfig
from broker.log.segment import MAX_RELATIVE_OFFSET

from .helpers import T0, batch, read_all, value_batch


def test_rolls_when_the_segment_would_exceed_segment_bytes(open_log):
    one = len(value_batch(1))
    plog = open_log(LogConfig(segment_bytes=3 * one))
    for _ in range(7):
        plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert [s.base_offset for s in plog.segments] == [0, 3, 6]
    assert all(s.size <= 3 * one for s in plog.segments)
    assert [r.offset for r in read_all(plog)] == list(range(7))


def test_rolls_when_the_segment_is_older_than_segment_ms(open_log, clock):
    plog = open_log(LogConfig(segment_ms=1000))
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    clock.advance(1000)
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert len(plog.segments) == 1
    clock.advance(1)
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert [s.base_offset for s in plog.segments] == [0, 2]


def test_an_empty_segment_never_rolls_on_age(open_log, clock):
    plog = open_log(LogConfig(segment_ms=10))
    clock.advance(10_000)
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert len(plog.segments) == 1


def test_rolls_when_the_offset_index_is_full(open_log):
    # 24 bytes: three 8-byte offset entries; equal timestamps add just one time index entry per segment
    plog = open_log(LogConfig(index_interval_bytes=0, max_index_size=24))
    for _ in range(7):
        plog.append_as_leader(batch([b"x"], timestamps=[T0]), leader_epoch=0)
    assert [s.base_offset for s in plog.segments] == [0, 3, 6]
    assert [len(s.index) for s in plog.segments] == [3, 3, 1]
    assert [len(s.time_index) for s in plog.segments[:-1]] == [1, 1]


def test_rolls_when_the_time_index_is_full(open_log):
    # 24 bytes: three offset index entries but only two 12-byte time index entries
    plog = open_log(LogConfig(index_interval_bytes=0, max_index_size=24))
    for i in range(4):
        plog.append_as_leader(batch([b"x"], timestamps=[T0 + i]), leader_epoch=0)
    assert [s.base_offset for s in plog.segments] == [0, 2]


def test_rolls_when_a_relative_offset_would_overflow_32_bits(open_log):
    plog = open_log()
    plog.append_as_follower(value_batch(1, base_offset=0))
    plog.append_as_follower(value_batch(1, base_offset=MAX_RELATIVE_OFFSET))  # still fits
    assert len(plog.segments) == 1
    plog.append_as_follower(value_batch(2, base_offset=MAX_RELATIVE_OFFSET + 1))
    assert [s.base_offset for s in plog.segments] == [0, MAX_RELATIVE_OFFSET + 1]
    assert [r.offset for r in read_all(plog)] == [
        0,
        MAX_RELATIVE_OFFSET,
        MAX_RELATIVE_OFFSET + 1,
        MAX_RELATIVE_OFFSET + 2,
    ]


def test_a_batch_spanning_the_relative_offset_limit_goes_to_a_new_segment(open_log):
    plog = open_log()
    plog.append_as_follower(value_batch(1, base_offset=0))
    plog.append_as_follower(value_batch(3, base_offset=MAX_RELATIVE_OFFSET - 1))  # last offset would not fit
    assert [s.base_offset for s in plog.segments] == [0, MAX_RELATIVE_OFFSET - 1]


def test_offsets_beyond_32_bits_work_after_starting_late(open_log):
    plog = open_log()
    start = 5 << 32
    plog.truncate_fully_and_start_at(start)
    info = plog.append_as_leader(value_batch(3), leader_epoch=0)
    assert (info.first_offset, info.last_offset) == (start, start + 2)
    assert plog.segments[0].file.path.name == f"{start:020d}.log"
    assert [r.offset for r in read_all(plog)] == [start, start + 1, start + 2]


def test_explicit_roll_and_empty_roll(open_log):
    plog = open_log()
    assert plog.roll() is plog.active_segment  # empty: no new segment
    plog.append_as_leader(value_batch(2), leader_epoch=0)
    new = plog.roll()
    assert new.base_offset == 2 and [s.base_offset for s in plog.segments] == [0, 2]
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert [r.offset for r in read_all(plog)] == [0, 1, 2]


def test_a_rolled_segment_is_fsynced_by_the_flush_task(open_log, clock):
    plog = open_log(LogConfig(segment_bytes=len(value_batch(1))))
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert plog.needs_flush(clock.milliseconds())
    plog.flush_if_due(clock.milliseconds())
    assert plog.recovery_point == 1  # the rolled segment; the active one waits for flush.ms / flush.messages
    assert not plog.needs_flush(clock.milliseconds())
