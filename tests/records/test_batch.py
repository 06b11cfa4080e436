"""RecordBatch v2: building, reading, header fields, validation, and the broker's in-place rewrites."""

from __future__ import annotations

import random
import struct

import pytest

from spark_kafkalog.records import (
    BATCH_HEADER_SIZE,
    Compression,
    CorruptRecordError,
    Record,
    RecordBatch,
    RecordBatchBuilder,
    build_control_batch,
    iter_batch_records,
    parse_batch_header,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
    validate_batch,
)
from spark_kafkalog.records.crc import crc32c

T0 = 1_700_000_000_000
ALL_CODECS = list(Compression)


def build(records, codec=Compression.NONE, **kwargs) -> bytes:
    builder = RecordBatchBuilder(codec, **kwargs)
    for ts, key, value, headers in records:
        builder.append(ts, key, value, headers)
    return builder.build()


def sample_records(n=20, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        key = None if i % 5 == 0 else f"key-{i}".encode()
        value = None if i % 7 == 3 else (b"" if i % 7 == 4 else rng.randbytes(rng.randrange(0, 300)))
        headers = [] if i % 3 else [("h", b"v"), ("null-value", None), ("ünïcode", b"")]
        out.append((T0 + rng.randrange(-5000, 5000), key, value, headers))
    return out


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_records_round_trip_with_null_keys_values_empty_values_and_headers(codec):
    records = sample_records()
    batch = build(records, codec, base_offset=100)
    validate_batch(batch)
    decoded = list(iter_batch_records(batch))
    assert decoded == [Record(100 + i, ts, k, v, list(h)) for i, (ts, k, v, h) in enumerate(records)]


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_a_large_batch_round_trips(codec):
    rng = random.Random(1)
    records = [(T0 + i, b"k%d" % i, rng.randbytes(200), []) for i in range(20_000)]
    batch = build(records, codec)
    header = validate_batch(batch)
    assert header.records_count == 20_000 and header.last_offset_delta == 19_999
    assert [r.value for r in iter_batch_records(batch)] == [v for _, _, v, _ in records]


def test_fields_needing_long_varints_round_trip():
    big_key = b"k" * 70_000  # 3-byte length varint
    big_header = [("x" * 200, b"y" * 20_000)]
    records = [(T0, big_key, b"v", big_header), (T0 + 10**9, None, b"w" * 9000, []), (T0 - 10**12, b"", None, [])]
    decoded = list(iter_batch_records(build(records)))
    assert [(r.timestamp, r.key, r.value, r.headers) for r in decoded] == [
        (ts, k, v, list(h)) for ts, k, v, h in records
    ]


def test_header_fields_and_properties_describe_the_batch():
    records = [(T0 + 5, b"a", b"1", []), (T0, b"b", b"2", []), (T0 + 9, b"c", b"3", [])]
    batch = build(
        records,
        Compression.LZ4,
        base_offset=42,
        partition_leader_epoch=7,
        producer_id=1234,
        producer_epoch=3,
        base_sequence=99,
        is_transactional=True,
    )
    h = parse_batch_header(batch)
    assert (h.base_offset, h.partition_leader_epoch, h.magic) == (42, 7, 2)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (1234, 3, 99)
    assert (h.base_timestamp, h.max_timestamp) == (T0 + 5, T0 + 9)
    assert (h.records_count, h.last_offset_delta, h.last_offset, h.next_offset) == (3, 2, 44, 45)
    assert h.compression is Compression.LZ4 and h.timestamp_type == 0
    assert h.is_transactional and not h.is_control
    assert h.size_in_bytes == len(batch) == h.batch_length + 12


def test_builder_counts_records_estimates_size_and_returns_offset_deltas():
    builder = RecordBatchBuilder()
    assert builder.build() == b"" and len(builder) == 0
    assert builder.estimated_size() == BATCH_HEADER_SIZE
    assert [builder.append(T0, b"k", b"v" * 10) for _ in range(3)] == [0, 1, 2]
    assert len(builder) == 3
    assert builder.estimated_size() == len(builder.build())


def test_builder_keeps_explicit_offset_delta_gaps():
    builder = RecordBatchBuilder(base_offset=10)
    builder.append(T0, b"a", b"1", offset_delta=0)
    builder.append(T0, b"b", b"2", offset_delta=5)
    batch = builder.build()
    header = validate_batch(batch)
    assert (header.records_count, header.last_offset_delta) == (2, 5)
    assert [r.offset for r in iter_batch_records(batch)] == [10, 15]
    with pytest.raises(ValueError):
        builder.append(T0, b"c", b"3", offset_delta=5)


def test_log_append_time_batches_give_every_record_the_max_timestamp():
    batch = bytearray(build([(T0, b"a", b"1", []), (T0 + 50, b"b", b"2", [])], timestamp_type=1))
    set_log_append_time(batch, 0, T0 + 999)
    header = validate_batch(batch)
    assert header.timestamp_type == 1 and header.max_timestamp == T0 + 999
    assert [r.timestamp for r in iter_batch_records(batch)] == [T0 + 999, T0 + 999]


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_base_offset_and_leader_epoch_rewrites_keep_the_crc_valid(codec):
    batch = bytearray(build(sample_records(5), codec))
    crc_before = parse_batch_header(batch).crc
    set_base_offset(batch, 0, 1_000_000)
    set_partition_leader_epoch(batch, 0, 17)
    header = validate_batch(batch)
    assert (header.base_offset, header.partition_leader_epoch, header.crc) == (1_000_000, 17, crc_before)
    assert [r.offset for r in iter_batch_records(batch)] == list(range(1_000_000, 1_000_005))


def test_rewrites_work_at_a_position_inside_a_writable_memoryview():
    first, second = build(sample_records(3)), build(sample_records(4, seed=2))
    buf = bytearray(first + second)
    view = memoryview(buf)
    set_base_offset(view, len(first), 500)
    set_log_append_time(view, len(first), T0)
    header = validate_batch(buf, len(first))
    assert (header.base_offset, header.max_timestamp, header.timestamp_type) == (500, T0, 1)
    validate_batch(buf, 0)


def test_set_log_append_time_recomputes_the_crc():
    batch = bytearray(build(sample_records(5)))
    old = parse_batch_header(batch).crc
    set_log_append_time(batch, 0, T0 + 1)
    new = parse_batch_header(batch).crc
    assert new != old and new == crc32c(bytes(batch[21:]))


def test_rewrites_refuse_a_read_only_buffer():
    with pytest.raises(TypeError):
        set_base_offset(build(sample_records(1)), 0, 5)


def test_a_flipped_bit_anywhere_in_attributes_to_end_fails_validation():
    batch = build([(T0, b"k", b"value", [("h", b"x")]), (T0 + 1, None, b"v2", [])])
    for byte in range(21, len(batch)):
        for bit in range(8):
            corrupt = bytearray(batch)
            corrupt[byte] ^= 1 << bit
            with pytest.raises(CorruptRecordError):
                validate_batch(corrupt)


def test_a_flipped_bit_in_the_crc_field_fails_validation_naming_the_crc():
    corrupt = bytearray(build(sample_records(2)))
    corrupt[17] ^= 0x10
    with pytest.raises(CorruptRecordError, match="CRC-32C"):
        validate_batch(corrupt)


def _reseal(batch: bytearray) -> bytearray:
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    return batch


def test_validation_names_each_failed_check():
    good = build(sample_records(3))
    with pytest.raises(CorruptRecordError, match="truncated batch header"):
        validate_batch(good[:60])
    with pytest.raises(CorruptRecordError, match="truncated batch"):
        validate_batch(good[:-1])
    small = bytearray(good)
    struct.pack_into(">i", small, 8, 48)
    with pytest.raises(CorruptRecordError, match="below the minimum"):
        validate_batch(small)
    bad_magic = bytearray(good)
    bad_magic[16] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        validate_batch(bad_magic)
    bad_codec = bytearray(good)
    struct.pack_into(">h", bad_codec, 21, 6)
    with pytest.raises(CorruptRecordError, match="codec"):
        validate_batch(_reseal(bad_codec))
    negative = bytearray(good)
    struct.pack_into(">i", negative, 57, -1)
    with pytest.raises(CorruptRecordError, match="negative records_count"):
        validate_batch(_reseal(negative))
    inconsistent = bytearray(good)
    struct.pack_into(">i", inconsistent, 23, 1)  # 3 records need last_offset_delta >= 2
    with pytest.raises(CorruptRecordError, match="last_offset_delta"):
        validate_batch(_reseal(inconsistent))


def test_validation_accepts_a_batch_emptied_by_compaction():
    empty = bytearray(build(sample_records(3)))
    del empty[BATCH_HEADER_SIZE:]
    struct.pack_into(">i", empty, 8, BATCH_HEADER_SIZE - 12)
    struct.pack_into(">i", empty, 57, 0)
    header = validate_batch(_reseal(empty))
    assert header.records_count == 0 and header.last_offset_delta == 2
    assert list(iter_batch_records(empty)) == []


def test_records_count_larger_than_the_records_is_corrupt():
    batch = bytearray(build(sample_records(3)))
    struct.pack_into(">i", batch, 57, 4)
    with pytest.raises(CorruptRecordError):
        list(iter_batch_records(batch))


def test_bytes_after_the_last_counted_record_are_corrupt():
    batch = bytearray(build(sample_records(3)))
    struct.pack_into(">i", batch, 57, 2)
    with pytest.raises(CorruptRecordError, match="after the last"):
        list(iter_batch_records(batch))


def test_a_record_whose_length_disagrees_with_its_fields_is_corrupt():
    batch = bytearray(build([(T0, b"key", b"value", [])]))
    batch[BATCH_HEADER_SIZE] += 2  # length varint (zigzag): claims one more byte
    batch += b"\x00"
    struct.pack_into(">i", batch, 8, len(batch) - 12)
    with pytest.raises(CorruptRecordError):
        list(iter_batch_records(batch))


def test_reading_raises_before_yielding_anything_when_a_later_record_is_bad():
    batch = build([(T0, b"a", b"1", []), (T0, b"b", b"2", [])])
    truncated = bytearray(batch[:-2])
    struct.pack_into(">i", truncated, 8, len(truncated) - 12)
    with pytest.raises(CorruptRecordError):
        iter_batch_records(truncated)


@pytest.mark.parametrize(("kind", "marker"), [("abort", 0), ("commit", 1)])
def test_control_batches_hold_one_end_transaction_marker(kind, marker):
    batch = build_control_batch(
        kind, producer_id=77, producer_epoch=2, coordinator_epoch=9, timestamp_ms=T0, base_offset=30
    )
    header = validate_batch(batch)
    assert header.is_control and header.is_transactional and header.records_count == 1
    assert (header.producer_id, header.producer_epoch, header.base_offset) == (77, 2, 30)
    (record,) = iter_batch_records(batch)
    assert record.key == struct.pack(">hh", 0, marker)
    assert record.value == struct.pack(">hi", 0, 9)
    assert (record.offset, record.timestamp) == (30, T0)


def test_control_batch_kind_must_be_commit_or_abort():
    with pytest.raises(ValueError, match="rollback"):
        build_control_batch("rollback", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=T0)


def test_record_batch_view_exposes_header_records_and_validation_without_copying():
    buf = bytearray(build(sample_records(4), Compression.GZIP) + b"trailing bytes of the next batch")
    view = RecordBatch(buf)
    assert len(view) == 4 and view.header.compression is Compression.GZIP
    assert view.buffer.obj is buf and len(view.buffer) == view.header.size_in_bytes
    assert view.validate() == view.header
    assert [r.offset for r in view.records()] == [0, 1, 2, 3]
    assert list(view) == list(view.records())
    assert "GZIP" in repr(view)


def test_parse_batch_header_refuses_other_magics():
    legacy_like = bytearray(build(sample_records(1)))
    legacy_like[16] = 0
    with pytest.raises(CorruptRecordError, match="magic 0"):
        parse_batch_header(legacy_like)


def test_builder_rejects_a_bad_timestamp_type_and_codec():
    with pytest.raises(ValueError):
        RecordBatchBuilder(timestamp_type=2)
    with pytest.raises(ValueError):
        RecordBatchBuilder(9)
