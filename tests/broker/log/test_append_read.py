"""Appends (leader and follower) and reads by offset: offsets, validation, file regions, limits."""

from __future__ import annotations

import struct

import pytest

from broker.log import InvalidOffsetError, LogAppendError, LogConfig
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import (
    Compression,
    LegacyMessageSetBuilder,
    build_control_batch,
    iter_batches,
    iter_records,
    parse_batch_header,
    validate_batch,
)

from .helpers import T0, batch, read_all, value_batch


def test_leader_append_assigns_offsets_and_epoch_in_place(open_log):
    plog = open_log()
    first = value_batch(3)
    info = plog.append_as_leader(first, leader_epoch=7)
    assert (info.first_offset, info.last_offset, info.num_records, info.duplicate) == (0, 2, 3, False)
    assert info.log_append_time == -1 and info.log_start_offset == 0
    assert (info.max_timestamp, info.offset_of_max_timestamp) == (T0 + 2, 2)
    second = value_batch(2)
    info = plog.append_as_leader(second, leader_epoch=7)
    assert (info.first_offset, info.last_offset) == (3, 4)
    header = parse_batch_header(second)
    assert (header.base_offset, header.partition_leader_epoch) == (3, 7)
    validate_batch(second)  # the in-place rewrites kept the CRC valid
    assert plog.log_end_offset == 5
    assert [r.offset for r in read_all(plog)] == [0, 1, 2, 3, 4]


def test_bytes_input_is_copied_not_required_writable(open_log):
    plog = open_log()
    data = bytes(value_batch(2))
    assert plog.append_as_leader(data, leader_epoch=0).last_offset == 1
    assert plog.append_as_leader(memoryview(data), leader_epoch=0).first_offset == 2


def test_several_batches_in_one_request(open_log):
    plog = open_log()
    info = plog.append_as_leader(value_batch(2) + value_batch(3, codec=Compression.GZIP), leader_epoch=0)
    assert (info.first_offset, info.last_offset, info.num_records) == (0, 4, 5)
    assert [r.value for r in read_all(plog)] == [b"v-0", b"v-1", b"v-0", b"v-1", b"v-2"]


def test_log_append_time_rewrites_timestamps_and_crc(open_log, clock):
    plog = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    data = batch([b"a", b"b"], timestamps=[5, 6])
    info = plog.append_as_leader(data, leader_epoch=0)
    assert info.log_append_time == clock.milliseconds() == info.max_timestamp
    header = validate_batch(data)
    assert header.timestamp_type == 1 and header.max_timestamp == clock.milliseconds()
    assert [r.timestamp for r in read_all(plog)] == [clock.milliseconds()] * 2


def _corrupt_crc(data: bytearray) -> bytearray:
    data[-1] ^= 0xFF
    return data


@pytest.mark.parametrize(
    "make, code",
    [
        (lambda: value_batch(2)[:40], ErrorCode.CORRUPT_MESSAGE),
        (lambda: value_batch(2)[:-3], ErrorCode.CORRUPT_MESSAGE),
        (lambda: _corrupt_crc(value_batch(2)), ErrorCode.CORRUPT_MESSAGE),
        (lambda: _legacy_message_set(), ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
        (lambda: value_batch(20, size=100), ErrorCode.MESSAGE_TOO_LARGE),
        (
            lambda: bytearray(
                build_control_batch("commit", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=T0)
            ),
            ErrorCode.INVALID_RECORD,
        ),
        (lambda: bytearray(), ErrorCode.INVALID_RECORD),
    ],
    ids=["short-header", "cut-batch", "bad-crc", "legacy", "too-large", "control", "empty"],
)
def test_invalid_requests_are_rejected_with_kafka_error_codes(open_log, make, code):
    plog = open_log(LogConfig(max_message_bytes=1000))
    data = make()
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(data, leader_epoch=0)
    assert info.value.error_code == code
    assert plog.log_end_offset == 0 and plog.size_in_bytes == 0


def _legacy_message_set() -> bytearray:
    builder = LegacyMessageSetBuilder(magic=1)
    builder.append(T0, None, b"old")
    return bytearray(builder.build())


def test_batch_larger_than_a_segment_is_record_list_too_large(open_log):
    plog = open_log(LogConfig(segment_bytes=300))
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(value_batch(10, size=50), leader_epoch=0)
    assert info.value.error_code == ErrorCode.RECORD_LIST_TOO_LARGE


def test_inconsistent_record_count_is_invalid_record(open_log):
    plog = open_log()
    data = value_batch(3)
    struct.pack_into(">i", data, 23, 5)  # last_offset_delta 5 with 3 records
    from spark_kafkalog.records.crc import crc32c

    struct.pack_into(">I", data, 17, crc32c(memoryview(data)[21:]))
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(data, leader_epoch=0)
    assert info.value.error_code == ErrorCode.INVALID_RECORD


def test_nothing_is_appended_when_a_later_batch_is_invalid(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    request = value_batch(2) + _corrupt_crc(value_batch(2))
    before = bytes(request[:20])
    with pytest.raises(LogAppendError):
        plog.append_as_leader(request, leader_epoch=0)
    assert plog.log_end_offset == 1 and [r.offset for r in read_all(plog)] == [0]
    assert bytes(request[:20]) == before  # not even the first batch's offset was rewritten


def test_compacted_topic_rejects_records_without_key(open_log):
    plog = open_log(LogConfig(cleanup_policy=("compact",)))
    plog.append_as_leader(batch([b"a"], keys=[b"k"]), leader_epoch=0)
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(batch([b"a", b"b"], keys=[b"k", None]), leader_epoch=0)
    assert info.value.error_code == ErrorCode.INVALID_RECORD
    assert "key" in str(info.value)
    assert plog.log_end_offset == 1


def test_read_inside_a_batch_returns_the_whole_batch(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(5), leader_epoch=0)
    plog.append_as_leader(value_batch(5), leader_epoch=0)
    data = plog.read(7, 1 << 20)
    assert data.error == ErrorCode.NONE
    views = list(iter_batches(data.records.read_bytes()))
    assert [(v.base_offset, v.last_offset) for v in views] == [(5, 9)]


def test_read_at_end_is_empty_and_outside_is_out_of_range(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(3), leader_epoch=0)
    at_end = plog.read(3, 100)
    assert (at_end.error, at_end.records, at_end.log_end_offset) == (ErrorCode.NONE, None, 3)
    assert plog.read(4, 100).error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert plog.read(-1, 100).error == ErrorCode.OFFSET_OUT_OF_RANGE


def test_read_stops_at_max_offset(open_log):
    plog = open_log()
    for _ in range(4):
        plog.append_as_leader(value_batch(2), leader_epoch=0)
    data = plog.read(0, 1 << 20, max_offset=4)
    assert [r.offset for r in iter_records(data.records.read_bytes())] == [0, 1, 2, 3]
    assert plog.read(4, 1 << 20, max_offset=4).records is None


def test_read_returns_at_least_one_batch_beyond_max_bytes(open_log):
    plog = open_log()
    big = value_batch(10, size=200)
    plog.append_as_leader(big, leader_epoch=0)
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    data = plog.read(0, 10)
    assert len(data.records) == len(big)
    assert plog.read(0, 10, min_one_batch=False).records is not None
    assert len(plog.read(0, 10, min_one_batch=False).records) == 10  # a partial batch, as Kafka sends
    assert plog.read(0, 0, min_one_batch=False).records is None


def test_max_bytes_may_cut_the_last_batch(open_log):
    plog = open_log()
    sizes = [len(b) for b in (value_batch(3),) * 3]
    for _ in range(3):
        plog.append_as_leader(value_batch(3), leader_epoch=0)
    data = plog.read(0, sizes[0] + 10)
    assert len(data.records) == sizes[0] + 10
    assert [v.base_offset for v in iter_batches(data.records.read_bytes())] == [0]


def test_file_region_exposes_fd_position_and_length(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    second = value_batch(1)
    plog.append_as_leader(second, leader_epoch=0)
    region = plog.read(1, 1000).records
    import os

    assert region.position == len(value_batch(1))
    assert os.pread(region.fileno(), len(region), region.position) == bytes(second) == region.read_bytes()
    region.release()
    with pytest.raises(ValueError):
        region.fileno()


def test_follower_append_keeps_offsets_and_epochs(open_log):
    leader = open_log(name="t-0")
    follower = open_log(name="t-1")
    leader.append_as_leader(value_batch(3), leader_epoch=2)
    leader.append_as_leader(value_batch(2), leader_epoch=5)
    raw = leader.read(0, 1 << 20).records.read_bytes()
    info = follower.append_as_follower(raw)
    assert (info.first_offset, info.last_offset, info.num_records) == (0, 4, 5)
    assert follower.log_end_offset == 5
    assert follower.leader_epoch_entries == [(2, 0), (5, 3)] == leader.leader_epoch_entries
    assert read_all(follower) == read_all(leader)


def test_follower_append_must_not_go_below_the_log_end(open_log):
    plog = open_log()
    plog.append_as_follower(value_batch(3, base_offset=0))
    with pytest.raises(InvalidOffsetError):
        plog.append_as_follower(value_batch(1, base_offset=2))
    plog.append_as_follower(value_batch(1, base_offset=10))  # gaps are allowed (compacted leaders)
    assert plog.log_end_offset == 11
    with pytest.raises(LogAppendError) as info:
        plog.append_as_follower(_corrupt_crc(value_batch(1, base_offset=11)))
    assert info.value.error_code == ErrorCode.CORRUPT_MESSAGE


def test_leader_epoch_cache_answers_offset_for_leader_epoch(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(3), leader_epoch=1)
    plog.append_as_leader(value_batch(3), leader_epoch=3)
    plog.append_as_leader(value_batch(3), leader_epoch=4)
    assert plog.latest_epoch == 4
    assert plog.end_offset_for_epoch(4) == (4, 9)
    assert plog.end_offset_for_epoch(3) == (3, 6)
    assert plog.end_offset_for_epoch(2) == (1, 3)  # unknown epoch: the largest below it, ending at the next start
    assert plog.end_offset_for_epoch(0) == (0, 0)
    assert plog.end_offset_for_epoch(5) == (-1, -1)
    plog.truncate_to(6)
    assert plog.leader_epoch_entries == [(1, 0), (3, 3)]


def test_high_watermark_is_clamped_to_the_log(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(4), leader_epoch=0)
    plog.high_watermark = 10
    assert plog.high_watermark == 4
    plog.high_watermark = -3
    assert plog.high_watermark == 0


def test_appending_to_a_closed_log_is_a_storage_error(open_log):
    plog = open_log()
    plog.close()
    with pytest.raises(LogAppendError) as info:
        plog.append_as_leader(value_batch(1), leader_epoch=0)
    assert info.value.error_code == ErrorCode.KAFKA_STORAGE_ERROR
