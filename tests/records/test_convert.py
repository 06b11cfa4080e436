"""Conversions between v0/v1 message sets and v2 batches keep offsets, keys, values and timestamps."""

from __future__ import annotations

import pytest

from spark_kafkalog.records import (
    Compression,
    LegacyMessageSetBuilder,
    Record,
    RecordBatchBuilder,
    UnsupportedCompressionError,
    batch_to_legacy,
    build_control_batch,
    decode_legacy_entry,
    iter_batch_records,
    iter_legacy_records,
    iter_records,
    legacy_to_batches,
    parse_batch_header,
    validate_batch,
)
from spark_kafkalog.records.legacy import encode_message

T0 = 1_650_000_000_000
LEGACY_CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]
RECORDS = [(T0 + 7 * i, None if i % 4 == 1 else b"k%d" % i, None if i == 3 else b"v" * i) for i in range(10)]


def legacy(magic, codec, base_offset=0, records=RECORDS, timestamp_type=0):
    builder = LegacyMessageSetBuilder(magic, codec, base_offset=base_offset, timestamp_type=timestamp_type)
    for ts, key, value in records:
        builder.append(ts, key, value)
    return builder.build()


def v2(codec, base_offset=0, headers=()):
    builder = RecordBatchBuilder(codec, base_offset=base_offset)
    for ts, key, value in RECORDS:
        builder.append(ts, key, value, list(headers))
    return builder.build()


@pytest.mark.parametrize("codec", LEGACY_CODECS)
@pytest.mark.parametrize("magic", [0, 1])
def test_up_conversion_keeps_offsets_keys_values_timestamps_and_codec(magic, codec):
    message_set = legacy(magic, codec, base_offset=300)
    batches = legacy_to_batches(message_set)
    assert len(batches) == 1
    header = validate_batch(batches[0])
    assert header.compression == codec and header.base_offset == 300
    assert list(iter_batch_records(batches[0])) == list(iter_legacy_records(message_set))


def test_up_conversion_makes_one_batch_per_wrapper_and_per_run_of_plain_messages():
    message_set = legacy(1, Compression.NONE, 0, RECORDS[:3]) + legacy(1, Compression.GZIP, 3, RECORDS[3:6])
    message_set += legacy(1, Compression.NONE, 6, RECORDS[6:])
    batches = legacy_to_batches(message_set)
    assert [parse_batch_header(b).compression for b in batches] == [0, 1, 0]
    assert [r for b in batches for r in iter_batch_records(b)] == list(iter_legacy_records(message_set))


def test_up_conversion_keeps_offset_gaps_and_falls_back_to_consecutive_deltas():
    gappy = b"".join(encode_message(o, 1, 0, T0, b"k", b"v") for o in (10, 11, 15))
    (batch,) = legacy_to_batches(gappy)
    assert [r.offset for r in iter_batch_records(batch)] == [10, 11, 15]
    unordered = b"".join(encode_message(0, 1, 0, T0, b"k", b"v") for _ in range(3))  # producers may send 0s
    (batch,) = legacy_to_batches(unordered)
    assert [r.offset for r in iter_batch_records(batch)] == [0, 1, 2]


def test_up_conversion_keeps_log_append_time():
    message_set = legacy(1, Compression.SNAPPY, timestamp_type=1)
    (batch,) = legacy_to_batches(message_set)
    header = validate_batch(batch)
    wrapper_ts = decode_legacy_entry(message_set).timestamp
    assert header.timestamp_type == 1 and header.max_timestamp == wrapper_ts
    assert {r.timestamp for r in iter_batch_records(batch)} == {wrapper_ts}


def test_v0_messages_become_records_without_timestamps():
    (batch,) = legacy_to_batches(legacy(0, Compression.NONE))
    assert {r.timestamp for r in iter_batch_records(batch)} == {-1}


@pytest.mark.parametrize("codec", LEGACY_CODECS)
@pytest.mark.parametrize("magic", [0, 1])
def test_down_conversion_keeps_absolute_offsets_keys_values_and_codec(magic, codec):
    batch = v2(codec, base_offset=4000, headers=[("dropped", b"x")])
    message_set = batch_to_legacy(batch, magic)
    entry = decode_legacy_entry(message_set)
    assert entry.magic == magic and entry.compression == codec
    assert list(iter_legacy_records(message_set)) == [
        Record(4000 + i, ts if magic else -1, k, v, []) for i, (ts, k, v) in enumerate(RECORDS)
    ]


def test_down_conversion_of_several_batches_keeps_them_in_order():
    data = v2(Compression.GZIP, base_offset=0) + v2(Compression.NONE, base_offset=10) + v2(Compression.LZ4, 20)
    message_set = batch_to_legacy(data, 1)
    assert [r.offset for r in iter_legacy_records(message_set)] == list(range(30))


def test_down_conversion_refuses_zstd_naming_the_codec():
    with pytest.raises(UnsupportedCompressionError, match="zstd"):
        batch_to_legacy(v2(Compression.ZSTD), 1)


def test_down_conversion_drops_control_batches():
    marker = build_control_batch(
        "abort", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=T0, base_offset=10
    )
    assert batch_to_legacy(marker, 1) == b""
    message_set = batch_to_legacy(v2(Compression.NONE) + marker, 0)
    assert [r.offset for r in iter_legacy_records(message_set)] == list(range(10))


def test_down_conversion_of_a_log_append_time_batch_marks_the_wrapper():
    builder = RecordBatchBuilder(Compression.GZIP, timestamp_type=1)
    builder.append(T0, b"a", b"1")
    builder.append(T0 + 5, b"b", b"2")
    entry = decode_legacy_entry(batch_to_legacy(builder.build(), 1))
    assert entry.timestamp_type == 1 and entry.timestamp == T0 + 5
    assert [r.timestamp for r in entry.records] == [T0 + 5, T0 + 5]


@pytest.mark.parametrize("magic", [0, 1])
def test_v1_to_v2_to_v1_round_trip_is_lossless(magic):
    message_set = legacy(magic, Compression.LZ4, base_offset=77)
    back = b"".join(batch_to_legacy(b, magic) for b in legacy_to_batches(message_set))
    assert list(iter_legacy_records(back)) == list(iter_legacy_records(message_set))


def test_down_converted_sets_read_the_same_through_the_splitter():
    data = v2(Compression.SNAPPY, base_offset=5)
    assert list(iter_records(batch_to_legacy(data, 1))) == [r._replace(headers=[]) for r in iter_records(data)]
