"""Confluent's wire format for Schema Registry framed keys and values.

Layout (all big-endian)::

    byte 0      magic byte 0
    bytes 1-4   schema id, int32
    Protobuf only: the message indexes, the path of the message type in the .proto file
                (zig-zag varints: a count, then that many indexes; the path [0], the file's first message,
                is written as the single byte 0)
    the rest    the payload in the schema's format (Avro binary, JSON text, Protobuf message bytes)

Pure functions; ``WireFormatError`` names what was wrong with the bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

MAGIC_BYTE = 0
_HEADER = struct.Struct(">bI")


class WireFormatError(ValueError):
    """Bytes that are not in Confluent's wire format (an unknown magic byte, too short, bad message indexes)."""


def frame(schema_id: int, payload: bytes, message_indexes: Sequence[int] | None = None) -> bytes:
    """The framed bytes of a payload written with schema ``schema_id`` (``message_indexes``: Protobuf only)."""
    if not 0 <= schema_id < 2**31:
        raise WireFormatError(f"schema id {schema_id} is out of range")
    head = _HEADER.pack(MAGIC_BYTE, schema_id)
    if message_indexes is None:
        return head + payload
    return head + encode_message_indexes(message_indexes) + payload


def unframe(data: bytes | bytearray | memoryview, *, protobuf: bool = False) -> tuple[int, tuple[int, ...], memoryview]:
    """``(schema id, message indexes, payload)`` of framed bytes (indexes ``()`` unless ``protobuf``)."""
    view = memoryview(data)
    if len(view) < _HEADER.size:
        raise WireFormatError(f"{len(view)} bytes are too short for Confluent's wire format (magic byte and schema id)")
    magic, schema_id = _HEADER.unpack_from(view)
    if magic == 1:
        raise WireFormatError("magic byte 1 (a schema GUID instead of an id) is not supported: write schema ids")
    if magic != MAGIC_BYTE:
        raise WireFormatError(f"unknown magic byte {magic & 0xFF} (Confluent's wire format starts with 0)")
    if not protobuf:
        return schema_id, (), view[_HEADER.size :]
    indexes, used = decode_message_indexes(view, _HEADER.size)
    return schema_id, indexes, view[used:]


def encode_message_indexes(indexes: Sequence[int]) -> bytes:
    """Protobuf message indexes as Confluent writes them (``[0]`` as the single byte 0)."""
    if list(indexes) == [0]:
        return b"\x00"
    out = bytearray(_zigzag_varint(len(indexes)))
    for index in indexes:
        if index < 0:
            raise WireFormatError(f"negative message index {index}")
        out += _zigzag_varint(index)
    return bytes(out)


def decode_message_indexes(data: bytes | memoryview, offset: int = 0) -> tuple[tuple[int, ...], int]:
    """``(indexes, offset after them)``; a count of 0 means ``(0,)``."""
    count, offset = _read_zigzag(data, offset)
    if count == 0:
        return (0,), offset
    if count < 0 or count > 1024:
        raise WireFormatError(f"invalid Protobuf message index count {count}")
    indexes = []
    for _ in range(count):
        index, offset = _read_zigzag(data, offset)
        if index < 0:
            raise WireFormatError(f"negative Protobuf message index {index}")
        indexes.append(index)
    return tuple(indexes), offset


def _zigzag_varint(value: int) -> bytes:
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_zigzag(data: bytes | memoryview, offset: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if offset >= len(data):
            raise WireFormatError("the Protobuf message indexes are truncated")
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift > 63:
            raise WireFormatError("a Protobuf message index varint is too long")
    return (result >> 1) ^ -(result & 1), offset
