"""Message sets from old producers (Produce v0-2) become one v2 batch, validated as Kafka's LogValidator does."""

from __future__ import annotations

import struct

import pytest

from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    LegacyMessageSetBuilder,
    UnsupportedCompressionError,
    batch_to_legacy,
    compress,
    iter_batch_records,
    iter_legacy_records,
    legacy_to_batches,
    legacy_to_producer_batch,
    validate_batch,
)
from spark_kafkalog.records.crc import crc32
from spark_kafkalog.records.legacy import encode_message

from .oracle import LegacyRecordBatchBuilder, lz4_magic0

T0 = 1_700_000_000_000
CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4]


def records_of(batch):
    return [(r.offset, r.timestamp, r.key, r.value) for r in iter_batch_records(batch)]


def wrapper(magic, codec, inner: bytes, *, offset=0, attributes=0, timestamp=T0) -> bytes:
    payload = compress(codec, inner, magic=magic)
    return encode_message(offset, magic, int(codec) | attributes, timestamp, None, payload)


def plain(offsets, magic=1, timestamp=T0):
    return b"".join(encode_message(o, magic, 0, timestamp + i, b"k%d" % i, b"v%d" % i) for i, o in enumerate(offsets))


def test_client_offsets_of_uncompressed_messages_are_ignored_even_past_int32():
    """Issue 10 defect 6: offsets 0 and 2^32 crashed the handler with struct.error."""
    batch = legacy_to_producer_batch(plain([0, 2**32]))
    header = validate_batch(batch)
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (0, 1, 2)
    assert records_of(batch) == [(0, T0, b"k0", b"v0"), (1, T0 + 1, b"k1", b"v1")]


@pytest.mark.parametrize("offsets", [[0, 0, 0], [7, 3, 2**63 - 1], [-(2**63), -1, 5]])
@pytest.mark.parametrize("magic", [0, 1])
def test_any_outer_offsets_get_deltas_zero_to_n_minus_one(offsets, magic):
    batch = legacy_to_producer_batch(plain(offsets, magic))
    assert [r[0] for r in records_of(batch)] == [0, 1, 2]
    assert {r[1] for r in records_of(batch)} == ({-1} if magic == 0 else {T0, T0 + 1, T0 + 2})


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("wrapper_offset", [0, 2, 2**32, -5, 2**63 - 1])
def test_a_magic_1_wrapper_offset_is_ignored_and_relative_inner_offsets_accepted(codec, wrapper_offset):
    inner = plain([0, 1, 2])
    batch = legacy_to_producer_batch(wrapper(1, codec, inner, offset=wrapper_offset))
    assert validate_batch(batch).compression == codec
    assert records_of(batch) == [(i, T0 + i, b"k%d" % i, b"v%d" % i) for i in range(3)]


@pytest.mark.parametrize("inner_offsets", [[0, 2**32], [1, 2, 3], [0, 0, 1], [5], [2, 1, 0]])
def test_magic_1_inner_offsets_other_than_zero_to_n_minus_one_are_invalid(inner_offsets):
    data = wrapper(1, Compression.GZIP, plain(inner_offsets), offset=len(inner_offsets) - 1)
    with pytest.raises(InvalidRecordError, match="relative offset"):
        legacy_to_producer_batch(data)


def test_magic_0_inner_offsets_are_ignored():
    data = wrapper(0, Compression.SNAPPY, plain([2**40, 0, 2**32], magic=0), offset=2**40)
    assert [r[0] for r in records_of(legacy_to_producer_batch(data))] == [0, 1, 2]


def test_a_wrapper_must_be_alone_in_its_message_set():
    one = wrapper(1, Compression.LZ4, plain([0, 1]))
    with pytest.raises(InvalidRecordError, match="only message"):
        legacy_to_producer_batch(one + one)
    with pytest.raises(InvalidRecordError, match="only message"):
        legacy_to_producer_batch(plain([0]) + one)
    with pytest.raises(InvalidRecordError, match="only message"):
        legacy_to_producer_batch(one + plain([0]))


def test_mixed_magic_is_invalid():
    with pytest.raises(InvalidRecordError, match="magic 0 after messages of magic 1"):
        legacy_to_producer_batch(plain([0], magic=1) + plain([1], magic=0))
    with pytest.raises(InvalidRecordError, match="inner message 1 has magic 0"):
        legacy_to_producer_batch(wrapper(1, Compression.GZIP, plain([0], magic=1) + plain([1], magic=0)))


def test_nested_compression_is_invalid():
    nested = wrapper(1, Compression.GZIP, wrapper(1, Compression.GZIP, plain([0, 1])))
    with pytest.raises(InvalidRecordError, match="compressed inside a compressed wrapper"):
        legacy_to_producer_batch(nested)


def test_log_append_time_set_by_a_producer_is_an_invalid_timestamp():
    with pytest.raises(InvalidTimestampError, match="LogAppendTime"):
        legacy_to_producer_batch(encode_message(0, 1, 0x08, T0, None, b"v"))
    with pytest.raises(InvalidTimestampError, match="LogAppendTime"):
        legacy_to_producer_batch(wrapper(1, Compression.GZIP, plain([0]), attributes=0x08))
    # magic 0 has no timestamp: the bit means nothing there, as in Kafka
    assert records_of(legacy_to_producer_batch(encode_message(0, 0, 0x08, T0, None, b"v"))) == [(0, -1, None, b"v")]


@pytest.mark.parametrize("timestamp", [-2, -(2**63)])
def test_negative_timestamps_other_than_minus_one_are_invalid(timestamp):
    with pytest.raises(InvalidTimestampError, match=f"timestamp {timestamp}"):
        legacy_to_producer_batch(plain([0], timestamp=timestamp))
    with pytest.raises(InvalidTimestampError, match=f"timestamp {timestamp}"):
        legacy_to_producer_batch(wrapper(1, Compression.SNAPPY, plain([0], timestamp=timestamp)))


def test_zstd_is_unsupported_with_magic_0_and_1():
    data = encode_message(0, 1, Compression.ZSTD, T0, None, compress(Compression.ZSTD, plain([0])))
    with pytest.raises(UnsupportedCompressionError, match="zstd"):
        legacy_to_producer_batch(data)


def _sealed(body: bytes, offset: int = 0, size_delta: int = 0) -> bytes:
    return struct.pack(">qiI", offset, 4 + len(body) + size_delta, crc32(body)) + body


@pytest.mark.parametrize(
    "data,reason",
    [
        (b"", "no messages"),
        (plain([0])[:-1], "truncated"),
        (plain([0])[:5], "truncated"),
        (_sealed(b"\x01\x00" + struct.pack(">qii", T0, -1, -1), size_delta=-30), "below the minimum"),
        (_sealed(b"\x02\x00" + struct.pack(">qii", T0, -1, -1)), "magic 2"),
        (_sealed(b"\x01\x05" + struct.pack(">qii", T0, -1, -1)), "codec id 5"),
        (_sealed(b"\x01\x00" + struct.pack(">qii", T0, 2**31 - 1, -1)), "key length"),
        (_sealed(b"\x01\x00" + struct.pack(">qii", T0, -7, -1)), "key length"),
        (_sealed(b"\x01\x00" + struct.pack(">qi", T0, -1) + struct.pack(">i", 9) + b"abc"), "value length"),
        (_sealed(b"\x01\x01" + struct.pack(">qii", T0, -1, -1)), "null value"),
        (_sealed(b"\x01\x01" + struct.pack(">qii", T0, -1, 5) + b"\x1f\x8bxyz"), "gzip"),
        (wrapper(1, Compression.GZIP, b""), "no inner messages"),
        (wrapper(1, Compression.LZ4, plain([0, 1])[:-2]), "inner message"),
    ],
)
def test_malformed_message_sets_are_corrupt_records_naming_the_problem(data, reason):
    with pytest.raises(CorruptRecordError, match=reason) as info:
        legacy_to_producer_batch(data)
    if reason != "no messages":
        assert not isinstance(info.value, InvalidRecordError)


def test_a_flipped_crc_bit_is_corrupt():
    data = bytearray(plain([0, 1]))
    data[12] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC-32"):
        legacy_to_producer_batch(bytes(data))


def test_builder_output_of_old_clients_converts_with_its_codec():
    builder = LegacyMessageSetBuilder(1, Compression.SNAPPY, base_offset=12345)
    for i in range(4):
        builder.append(T0 + i, None, b"x%d" % i)
    batch = legacy_to_producer_batch(builder.build())
    assert validate_batch(batch).compression == Compression.SNAPPY
    assert records_of(batch) == [(i, T0 + i, None, b"x%d" % i) for i in range(4)]


@pytest.mark.parametrize("codec", [Compression.NONE, *CODECS])
@pytest.mark.parametrize("magic", [0, 1])
def test_kafka_python_producer_message_sets_convert_as_sent(magic, codec):
    """kafka-python's legacy producer leaves a compressed wrapper at offset 0 for the broker to assign."""
    builder = LegacyRecordBatchBuilder(magic, int(codec), batch_size=1 << 30)
    for i in range(5):
        builder.append(i, T0 + i if magic else None, b"k%d" % i, b"v%d" % i)
    with lz4_magic0():
        data = bytes(builder.build())
    batch = legacy_to_producer_batch(data)
    assert validate_batch(batch).compression == codec
    assert records_of(batch) == [(i, T0 + i if magic else -1, b"k%d" % i, b"v%d" % i) for i in range(5)]


def test_a_timestamp_span_past_int64_is_written_wrapped_as_java_writes_it():
    """-1 then 2^63-1: the delta is 2^63, which Java's long holds as -2^63; the encoder must wrap it too."""
    batch = legacy_to_producer_batch(
        encode_message(0, 1, 0, -1, None, b"a") + encode_message(1, 1, 0, 2**63 - 1, None, b"b")
    )
    stamps = [(r[1] + 2**63) % 2**64 - 2**63 for r in records_of(batch)]  # read back as Java would
    assert stamps == [-1, 2**63 - 1]


# -- the lenient conversion of fetched data keeps offsets, whatever their gaps ----------------------
def test_fetched_offsets_with_gaps_past_int32_split_into_batches_and_keep_their_offsets():
    data = plain([0, 1, 2**31 + 1, 2**32, 2**32 + 5])  # 2^32 is exactly 2^31 - 1 past 2^31 + 1: still fits
    batches = legacy_to_batches(data)
    assert [[r.offset for r in iter_batch_records(b)] for b in batches] == [[0, 1], [2**31 + 1, 2**32], [2**32 + 5]]
    for b in batches:
        validate_batch(b)


def test_fetched_magic_0_wrapper_offsets_far_apart_split_too():
    data = wrapper(0, Compression.GZIP, plain([0, 2**62], magic=0), offset=2**62)
    assert [[r.offset for r in iter_batch_records(b)] for b in legacy_to_batches(data)] == [[0], [2**62]]


@pytest.mark.parametrize("wrapper_offset,inner", [(2**63 - 1, [0, -1]), (2**63 - 2, [0, 5, 1])])
def test_a_magic_1_wrapper_whose_offsets_resolve_past_int64_is_corrupt(wrapper_offset, inner):
    data = wrapper(1, Compression.GZIP, plain(inner), offset=wrapper_offset)
    with pytest.raises(CorruptRecordError, match="resolves past 2\\^63-1"):
        legacy_to_batches(data)


@pytest.mark.parametrize("wrapper_offset,inner", [(0, [0, 1, 2]), (5, [0, 2**63 - 1])])
def test_a_magic_1_wrapper_below_its_last_inner_offset_keeps_the_inner_offsets_as_kafka_does(wrapper_offset, inner):
    data = wrapper(1, Compression.GZIP, plain(inner), offset=wrapper_offset)
    assert [r.offset for r in iter_legacy_records(data)] == inner
    assert [r.offset for b in legacy_to_batches(data) for r in iter_batch_records(b)] == inner


def test_down_converting_a_magic_0_wrapper_whose_offsets_span_past_int64_is_corrupt():
    inner = plain([-(2**63), 2**63 - 1], magic=0)
    data = wrapper(0, Compression.GZIP, inner, offset=5)
    assert [r.offset for r in iter_legacy_records(data)] == [-(2**63), 2**63 - 1]  # magic 0: absolute, as stored
    with pytest.raises(CorruptRecordError, match="relative offsets of a magic 1 wrapper"):
        batch_to_legacy(data, 1)
