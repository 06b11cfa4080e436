"""Codecs: round trips, Kafka's framings (xerial snappy, magic-0 LZ4), kafka.codec interop, bad input."""

from __future__ import annotations

import gzip
import os
import random
import struct
import zlib

import cramjam
import kafka.codec
import lz4.frame
import pytest
import zstandard

from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    DecompressedSizeLimitError,
    UnsupportedCompressionError,
    compress,
    decompress,
)
from spark_kafkalog.records.snappy_framing import XERIAL_MAGIC
from spark_kafkalog.records.xxh32 import xxh32

from .oracle import lz4_magic0

CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
PAYLOADS = {
    "empty": b"",
    "small": b"hello kafka",
    "text": b"the quick brown fox jumps over the lazy dog " * 3000,
    "random": random.Random(7).randbytes(100_000),
}


def _codec_magic_pairs():
    for codec in CODECS:
        for magic in (0, 1, 2):
            if codec is Compression.ZSTD and magic < 2:
                continue
            yield codec, magic


@pytest.mark.parametrize("name", sorted(PAYLOADS))
@pytest.mark.parametrize(("codec", "magic"), list(_codec_magic_pairs()))
def test_every_codec_round_trips_at_every_magic_it_supports(codec, magic, name):
    data = PAYLOADS[name]
    assert decompress(codec, compress(codec, data, magic=magic), magic=magic) == data


def test_none_codec_returns_the_bytes_unchanged():
    assert compress(Compression.NONE, bytearray(b"abc")) == b"abc"
    assert decompress(0, memoryview(b"abc")) == b"abc"


@pytest.mark.parametrize(
    ("name", "codec"),
    [("gzip", 1), ("GZIP", 1), ("snappy", 2), ("lz4", 3), ("zstd", 4), ("none", 0), ("uncompressed", 0)],
)
def test_from_name_accepts_kafka_compression_type_values(name, codec):
    assert Compression.from_name(name) == codec


def test_from_name_rejects_an_unknown_codec_naming_it():
    with pytest.raises(ValueError, match="brotli"):
        Compression.from_name("brotli")


def test_zstd_cannot_be_written_with_magic_0_or_1():
    for magic in (0, 1):
        with pytest.raises(UnsupportedCompressionError, match="zstd"):
            compress(Compression.ZSTD, b"x", magic=magic)


def test_unknown_codec_id_in_data_is_a_corrupt_record():
    with pytest.raises(CorruptRecordError, match="codec id 5"):
        decompress(5, b"x")


def test_snappy_is_written_xerial_framed_in_32_kib_blocks_like_java():
    data = PAYLOADS["random"]
    out = compress(Compression.SNAPPY, data)
    assert out[:16] == XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    pos, blocks = 16, []
    while pos < len(out):
        (length,) = struct.unpack_from(">i", out, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(out[pos + 4 : pos + 4 + length])))
        pos += 4 + length
    assert [len(b) for b in blocks] == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert b"".join(blocks) == data


def test_raw_snappy_as_librdkafka_writes_it_is_read():
    data = PAYLOADS["text"]
    raw = bytes(cramjam.snappy.compress_raw(data))
    assert decompress(Compression.SNAPPY, raw) == data


@pytest.mark.parametrize("name", ["small", "text", "random"])
def test_kafka_python_codecs_read_what_we_write_at_magic_2(name):
    data = PAYLOADS[name]
    assert kafka.codec.gzip_decode(compress(1, data)) == data
    assert kafka.codec.snappy_decode(compress(2, data)) == data
    assert kafka.codec.lz4_decode(compress(3, data)) == data
    assert kafka.codec.zstd_decode(compress(4, data)) == data


@pytest.mark.parametrize("name", ["small", "text", "random"])
def test_we_read_what_kafka_python_codecs_write(name):
    data = PAYLOADS[name]
    assert decompress(1, kafka.codec.gzip_encode(data)) == data
    assert decompress(2, kafka.codec.snappy_encode(data)) == data
    assert decompress(2, kafka.codec.snappy_encode(data, xerial_compatible=False)) == data
    assert decompress(3, kafka.codec.lz4_encode(data)) == data
    assert decompress(4, kafka.codec.zstd_encode(data)) == data


def _lz4_hc_position(frame: bytes) -> int:
    flg = frame[4]
    return 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)


def test_lz4_magic_0_writes_the_header_checksum_over_the_magic_bytes_too():
    frame = compress(Compression.LZ4, b"abc" * 1000, magic=0)
    hc = _lz4_hc_position(frame)
    assert frame[hc] == (xxh32(frame[:hc]) >> 8) & 0xFF
    assert frame[hc] != (xxh32(frame[4:hc]) >> 8) & 0xFF  # differs from the standard value for this frame


def test_lz4_magic_1_and_2_write_the_standard_frame_with_independent_64_kib_blocks():
    for magic in (1, 2):
        frame = compress(Compression.LZ4, b"abc" * 1000, magic=magic)
        hc = _lz4_hc_position(frame)
        assert frame[hc] == (xxh32(frame[4:hc]) >> 8) & 0xFF
        assert frame[4] & 0x20, "block independence flag"
        assert not frame[4] & 0x08, "no content size, as Java's KafkaLZ4BlockOutputStream"
        assert frame[5] == 0x40, "64 KiB blocks"
        assert lz4.frame.decompress(frame) == b"abc" * 1000


@pytest.mark.parametrize(
    "data",
    [b"", b"x", bytes(range(256)) * 256, os.urandom(70_000), b"abc" * 50_000 + os.urandom(65_536) + b"abc" * 10],
    ids=["empty", "one byte", "exactly one block", "incompressible, two blocks", "mixed, four blocks"],
)
def test_lz4_blocks_are_compressed_or_stored_per_64_kib_block_and_read_by_lz4_frame(data):
    frame = compress(Compression.LZ4, data)
    assert lz4.frame.decompress(frame) == data
    assert decompress(Compression.LZ4, frame, max_size=len(data) + 1) == data
    pos, blocks = 7, []
    while (length := int.from_bytes(frame[pos : pos + 4], "little")) != 0:
        stored = bool(length & 0x80000000)
        size = length & 0x7FFFFFFF
        blocks.append((stored, size))
        pos += 4 + size
    assert frame[pos:] == b"\x00\x00\x00\x00"
    assert len(blocks) == -(-len(data) // 65536)
    for i, (stored, size) in enumerate(blocks):
        block = data[i * 65536 : (i + 1) * 65536]
        assert size == len(block) if stored else size < len(block)


@pytest.mark.parametrize("name", ["small", "text", "random"])
def test_lz4_magic_0_quirk_interoperates_with_kafka_python_both_ways(name):
    data = PAYLOADS[name]
    with lz4_magic0():
        assert kafka.codec.lz4_decode_old_kafka(compress(3, data, magic=0)) == data
        assert decompress(3, kafka.codec.lz4_encode_old_kafka(data), magic=0) == data


def test_lz4_magic_0_read_also_accepts_a_standard_header_checksum():
    data = PAYLOADS["text"]
    assert decompress(3, compress(3, data, magic=2), magic=0) == data


def test_lz4_magic_0_frame_is_rejected_by_the_magic_2_reader():
    with pytest.raises(CorruptRecordError, match="LZ4"):
        decompress(3, compress(3, PAYLOADS["text"], magic=0), magic=2)


def test_zstd_frames_without_content_size_and_several_frames_are_read():
    data = PAYLOADS["text"]
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert decompress(4, streamed) == data
    assert decompress(4, streamed + compress(4, b"tail")) == data + b"tail"
    assert decompress(4, compress(4, data) + streamed) == data + data


def test_gzip_with_several_members_is_read_whole():
    assert decompress(1, gzip.compress(b"one") + gzip.compress(b"two")) == b"onetwo"


@pytest.mark.parametrize("codec", CODECS)
def test_truncated_compressed_data_is_a_corrupt_record(codec):
    packed = compress(codec, PAYLOADS["random"])
    for cut in (0, 1, 5, len(packed) // 2, len(packed) - 1):
        with pytest.raises(CorruptRecordError):
            decompress(codec, packed[:cut])


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_is_a_corrupt_record_never_a_library_exception(codec):
    rng = random.Random(codec)
    for _ in range(200):
        with pytest.raises(CorruptRecordError):
            decompress(codec, rng.randbytes(rng.randrange(1, 64)))


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_stops_at_max_size(codec):
    packed = compress(codec, bytes(1_000_000))
    assert len(decompress(codec, packed, max_size=1_000_000)) == 1_000_000
    with pytest.raises(DecompressedSizeLimitError):
        decompress(codec, packed, max_size=999_999)


def test_raw_snappy_claiming_a_huge_length_is_rejected_before_allocating():
    # varint 0xFFFFFFFF: cramjam would try to allocate 4 GiB (and abort the process) if asked
    bomb = bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) + bytes(cramjam.snappy.compress_raw(b"x" * 100))[1:]
    with pytest.raises(DecompressedSizeLimitError):
        decompress(2, bomb)
    small_claim = bytes([0xFF, 0xFF, 0x3F]) + b"\x00" * 10  # 1 MiB claimed from 13 bytes
    with pytest.raises(CorruptRecordError, match="claims"):
        decompress(2, small_claim)


def test_zstd_frame_claiming_a_huge_content_size_is_rejected_before_allocating():
    frame = bytearray(zstandard.ZstdCompressor(write_content_size=True).compress(b"x" * 100_000))
    # frame header: magic(4) FHD(1) [window] content size; force an 8-byte field claiming 2**40
    fhd = frame[4]
    assert fhd >> 6 == 2  # 4-byte content size field as written for 100 kB
    header_end = 5 + (0 if fhd & 0x20 else 1)
    bad = frame[:4] + bytes([(fhd & 0x3F) | 0xC0]) + frame[5:header_end] + struct.pack("<Q", 1 << 40)
    bad += frame[header_end + 4 :]
    with pytest.raises(DecompressedSizeLimitError):
        decompress(4, bytes(bad))


def test_lz4_frame_claiming_a_huge_content_size_is_rejected_without_allocating_it():
    frame = bytearray(lz4.frame.compress(b"x" * 1000, store_size=True))
    frame[6:14] = struct.pack("<Q", 1 << 40)
    frame[14] = (xxh32(frame[4:14]) >> 8) & 0xFF
    with pytest.raises(CorruptRecordError):
        decompress(3, bytes(frame))


def test_gzip_bomb_stops_at_the_limit():
    bomb = zlib.compress(bytes(50_000_000), 9)
    with pytest.raises(DecompressedSizeLimitError):
        decompress(1, bomb, max_size=1_000_000)


def test_bytes_after_the_last_gzip_member_are_ignored_as_java_does():
    assert decompress(1, gzip.compress(b"data") + b"\x00\x00\x00") == b"data"
