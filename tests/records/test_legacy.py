"""Message sets v0/v1: round trips, wrapper offset rules, timestamps, CRC-32 and structural checks."""

from __future__ import annotations

import struct

import pytest

from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    LegacyMessageSetBuilder,
    Record,
    UnsupportedCompressionError,
    compress,
    decode_legacy_entry,
    decompress,
    iter_legacy_records,
)
from spark_kafkalog.records.crc import crc32
from spark_kafkalog.records.legacy import encode_message

T0 = 1_600_000_000_000
CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]
RECORDS = [(T0 + i, None if i % 3 == 0 else b"key%d" % i, None if i == 4 else b"value %d" % i * i) for i in range(12)]


def build(magic, codec=Compression.NONE, records=RECORDS, **kwargs) -> bytes:
    builder = LegacyMessageSetBuilder(magic, codec, **kwargs)
    for ts, key, value in records:
        builder.append(ts, key, value)
    return builder.build()


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("magic", [0, 1])
def test_message_sets_round_trip_with_null_keys_and_values(magic, codec):
    decoded = list(iter_legacy_records(build(magic, codec, base_offset=1000)))
    assert decoded == [Record(1000 + i, ts if magic else -1, k, v, []) for i, (ts, k, v) in enumerate(RECORDS)]


@pytest.mark.parametrize("magic", [0, 1])
def test_a_compressed_set_is_one_wrapper_at_the_offset_of_its_last_message(magic):
    data = build(magic, Compression.GZIP, base_offset=50)
    entry = decode_legacy_entry(data)
    assert entry.size == len(data)
    assert (entry.offset, entry.compression, entry.magic) == (50 + len(RECORDS) - 1, Compression.GZIP, magic)
    if magic:
        assert entry.timestamp == max(ts for ts, _, _ in RECORDS)


def _inner_offsets(data, magic):
    wrapper = decode_legacy_entry(data)
    header = 18 if magic == 0 else 26
    (key_length,) = struct.unpack_from(">i", data, header)
    assert key_length == -1
    value = data[header + 8 :]
    inner = decompress(wrapper.compression, value, magic=magic)
    offsets, pos = [], 0
    while pos < len(inner):
        offset, size = struct.unpack_from(">qi", inner, pos)
        offsets.append(offset)
        pos += 12 + size
    return offsets


def test_magic_1_inner_offsets_are_relative_and_magic_0_inner_offsets_absolute():
    assert _inner_offsets(build(1, Compression.SNAPPY, base_offset=200), 1) == list(range(12))
    assert _inner_offsets(build(0, Compression.SNAPPY, base_offset=200), 0) == list(range(200, 212))


def test_magic_1_relative_offsets_resolve_against_the_wrapper_offset():
    inner = b"".join(encode_message(rel, 1, 0, T0 + rel, None, b"m%d" % rel) for rel in (0, 2, 5))
    wrapper = encode_message(1005, 1, Compression.GZIP, T0, None, compress(Compression.GZIP, inner, magic=1))
    assert [r.offset for r in iter_legacy_records(wrapper)] == [1000, 1002, 1005]


def test_a_log_append_time_wrapper_gives_its_timestamp_to_every_inner_message():
    data = build(1, Compression.LZ4, timestamp_type=1)
    entry = decode_legacy_entry(data)
    assert entry.timestamp_type == 1
    assert {r.timestamp for r in entry.records} == {entry.timestamp}


def test_an_empty_builder_builds_nothing():
    assert build(1, Compression.GZIP, records=[]) == b""


def test_builder_rejects_zstd_and_other_magics():
    with pytest.raises(UnsupportedCompressionError, match="zstd"):
        LegacyMessageSetBuilder(1, Compression.ZSTD)
    with pytest.raises(ValueError):
        LegacyMessageSetBuilder(2)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_flipped_bit_in_a_message_fails_its_crc(magic):
    data = build(magic, records=RECORDS[:1])
    for byte in range(16, len(data)):
        corrupt = bytearray(data)
        corrupt[byte] ^= 0x04
        with pytest.raises(CorruptRecordError):
            list(iter_legacy_records(corrupt))


def _sealed(body: bytes, offset: int = 0) -> bytes:
    return struct.pack(">qiI", offset, 4 + len(body), crc32(body)) + body


def test_structural_errors_are_corrupt_records_naming_the_problem():
    with pytest.raises(CorruptRecordError, match="magic 2"):
        list(iter_legacy_records(_sealed(b"\x02\x00" + b"\xff" * 8)))
    with pytest.raises(CorruptRecordError, match="key length"):
        list(iter_legacy_records(_sealed(b"\x00\x00" + struct.pack(">ii", 100, -1))))
    with pytest.raises(CorruptRecordError, match="unexpected bytes"):
        list(iter_legacy_records(_sealed(b"\x00\x00" + struct.pack(">ii", -1, -1) + b"xx")))
    with pytest.raises(CorruptRecordError, match="codec id 4"):
        list(iter_legacy_records(_sealed(b"\x01\x04" + struct.pack(">qii", T0, -1, 0))))
    with pytest.raises(CorruptRecordError, match="null value"):
        list(iter_legacy_records(_sealed(b"\x00\x01" + struct.pack(">ii", -1, -1))))
    with pytest.raises(CorruptRecordError, match="truncated"):
        list(iter_legacy_records(build(1)[:-3]))


def test_nested_compression_and_empty_wrappers_are_corrupt():
    inner_wrapper = build(1, Compression.GZIP, records=RECORDS[:2])
    nested = encode_message(1, 1, Compression.GZIP, T0, None, compress(Compression.GZIP, inner_wrapper, magic=1))
    with pytest.raises(CorruptRecordError, match="inside a compressed wrapper"):
        list(iter_legacy_records(nested))
    empty = encode_message(0, 1, Compression.GZIP, T0, None, compress(Compression.GZIP, b"", magic=1))
    with pytest.raises(CorruptRecordError, match="no inner messages"):
        list(iter_legacy_records(empty))


def test_corrupt_inner_messages_are_reported_as_the_wrappers_problem():
    inner = bytearray(build(1, records=RECORDS[:2]))
    inner[20] ^= 0xFF
    wrapper = encode_message(1, 1, Compression.SNAPPY, T0, None, compress(Compression.SNAPPY, bytes(inner), magic=1))
    with pytest.raises(CorruptRecordError, match="inner message"):
        list(iter_legacy_records(wrapper))
