"""Zigzag varints (protobuf encoding) of record fields: encoders and the general-case decoder.

A zigzag varint maps n to (n << 1) ^ (n >> 63) and writes it 7 bits per byte, least significant group
first, with bit 7 set on every byte but the last. Record fields are varints (at most 5 bytes) except
the timestamp delta, a varlong (at most 10 bytes). The record reader inlines the one- and two-byte
cases and calls ``read_varlong`` for the rest. Stateless and thread-safe.
"""

from __future__ import annotations

from spark_kafkalog.records.errors import CorruptRecordError

__all__ = ["encode_varint", "read_varlong", "size_of_varint"]

_CACHE_MIN = -(1 << 13)
_CACHE_MAX = 1 << 13


def _encode(n: int) -> bytes:
    n = ((n + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)  # wrapped to int64 first, as Java's long is
    value = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# Every value that fits in one or two bytes (|n| < 8192): lengths, deltas and counts of typical records.
_CACHE = [_encode(n) for n in range(_CACHE_MIN, _CACHE_MAX)]


def encode_varint(n: int, _cache=_CACHE, _lo=_CACHE_MIN, _hi=_CACHE_MAX) -> bytes:
    """Zigzag varint (or varlong) bytes of the signed int ``n``."""
    if _lo <= n < _hi:
        return _cache[n - _lo]
    return _encode(n)


def size_of_varint(n: int) -> int:
    """Number of bytes ``encode_varint(n)`` produces."""
    n = ((n + (1 << 63)) & 0xFFFFFFFFFFFFFFFF) - (1 << 63)
    value = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while value > 0x7F:
        value >>= 7
        size += 1
    return size


def read_varlong(data, pos: int) -> tuple[int, int]:
    """Decode the zigzag varlong at ``data[pos]``: returns (value, position after it).

    Raises ``CorruptRecordError`` for a varint longer than 10 bytes and ``IndexError`` when ``data``
    ends inside it (the record reader turns that into ``CorruptRecordError`` for the whole record).
    """
    value = 0
    shift = 0
    start = pos
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptRecordError("varint longer than 10 bytes", position=start)
