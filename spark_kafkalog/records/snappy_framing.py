"""Snappy as Kafka clients exchange it: xerial-framed on write (as Java), raw or xerial-framed on read.

xerial framing (``org.xerial.snappy.SnappyOutputStream``; big-endian):

    | offset | size | field                                          |
    |--------|------|------------------------------------------------|
    | 0      | 8    | magic 82 'S' 'N' 'A' 'P' 'P' 'Y' 00            |
    | 8      | 4    | version int32 (1)                              |
    | 12     | 4    | compatible version int32 (1)                   |
    | 16     | ...  | blocks: length int32, then that many bytes of  |
    |        |      | raw snappy (each of at most 32 KiB of input)   |

Raw snappy (what librdkafka writes) opens with the uncompressed length as an unsigned varint. A raw
snappy element expands at most 64/3 times (a 3-byte copy of 64 bytes), so a claimed length above
22 times the compressed size is corrupt and is rejected before anything is allocated.

Stateless and thread-safe.
"""

from __future__ import annotations

import struct

import cramjam

from spark_kafkalog.records.errors import CorruptRecordError, DecompressedSizeLimitError

__all__ = ["snappy_compress", "snappy_decompress", "XERIAL_MAGIC"]

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_BLOCK_SIZE = 32 * 1024
_MAX_EXPANSION = 22

# | magic 8s | version int32 | compatible int32 |
_XERIAL_HEADER = struct.Struct(">8sii")
# | block length int32 |
_BLOCK_LENGTH = struct.Struct(">i")

_compress_raw = cramjam.snappy.compress_raw
_decompress_raw = cramjam.snappy.decompress_raw
_SnappyError = cramjam.DecompressionError


def snappy_compress(data) -> bytes:
    """xerial-framed snappy of ``data`` in 32 KiB blocks, byte-compatible with Java's producer."""
    view = memoryview(data)
    parts = [_XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1)]
    pack_length = _BLOCK_LENGTH.pack
    for start in range(0, len(view), _BLOCK_SIZE):
        block = bytes(_compress_raw(view[start : start + _BLOCK_SIZE]))
        parts.append(pack_length(len(block)))
        parts.append(block)
    return b"".join(parts)


def _raw_length(view) -> int:
    """The uncompressed length claimed by a raw snappy block's varint preamble."""
    value = 0
    for i in range(min(5, len(view))):
        byte = view[i]
        value |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            return value
    raise CorruptRecordError("bad raw snappy length preamble")


def _raw_decompress(view, budget: int) -> bytes:
    claimed = _raw_length(view)
    if claimed > budget:
        raise DecompressedSizeLimitError(f"snappy block claims {claimed} bytes, over the limit")
    if claimed > len(view) * _MAX_EXPANSION:
        raise CorruptRecordError(f"snappy block of {len(view)} bytes claims {claimed} uncompressed bytes")
    try:
        out = bytes(_decompress_raw(view))
    except _SnappyError as exc:
        raise CorruptRecordError(f"bad snappy data: {exc}") from None
    if len(out) != claimed:
        raise CorruptRecordError("snappy block length differs from its preamble")
    return out


def snappy_decompress(data, *, max_size: int) -> bytes:
    """Uncompressed bytes of raw or xerial-framed snappy ``data`` (detected by the xerial magic)."""
    view = memoryview(data)
    if view[:8] != XERIAL_MAGIC:
        return _raw_decompress(view, max_size)
    if len(view) < _XERIAL_HEADER.size:
        raise CorruptRecordError("truncated xerial snappy header")
    pieces = []
    total = 0
    pos = _XERIAL_HEADER.size
    end = len(view)
    while pos < end:
        if pos + 4 > end:
            raise CorruptRecordError("truncated xerial snappy block length", position=pos)
        (length,) = _BLOCK_LENGTH.unpack_from(view, pos)
        pos += 4
        if length < 0 or pos + length > end:
            raise CorruptRecordError(f"xerial snappy block length {length} out of bounds", position=pos - 4)
        block = _raw_decompress(view[pos : pos + length], max_size - total)
        pieces.append(block)
        total += len(block)
        pos += length
    return b"".join(pieces)
