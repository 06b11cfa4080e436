"""Message sets of magic 0 and 1 (Kafka before 0.11): builder and reader, CRC-32 checked.

A message set is log entries back to back, with no count in front. Log entry (big-endian):

    | offset | size | field               | notes                                         |
    |--------|------|---------------------|-----------------------------------------------|
    | 0      | 8    | offset int64        | wrapper: offset of the last inner message     |
    | 8      | 4    | message_size int32  | bytes after this field                        |
    | 12     | 4    | crc uint32          | CRC-32 of bytes 16..end                       |
    | 16     | 1    | magic int8          | 0 or 1                                        |
    | 17     | 1    | attributes int8     | 0-2 codec (0-3); magic 1: bit 3 timestamp type |
    | 18     | 8    | timestamp int64     | magic 1 only                                  |
    | 18/26  | 4    | key_length int32    | -1 null                                       |
    | ..     | K    | key                 |                                               |
    | ..     | 4    | value_length int32  | -1 null                                       |
    | ..     | V    | value               | compressed wrapper: a compressed message set  |

Inside a compressed wrapper, magic 1 inner offsets are relative (0..n-1; absolute = wrapper offset
- last relative + relative) and magic 0 inner offsets are absolute. With a LogAppendTime wrapper every
inner message takes the wrapper's timestamp. Reading (``decode_legacy_entry``) is as lenient as a Kafka
consumer: inner relative offsets need not be 0..n-1, and when the wrapper offset is below the last of
them (a producer's wrapper at offset 0) the inner offsets are kept as stored; resolved offsets past
2^63-1 are corrupt.
A compressed inner message is an ``InvalidRecordError``; empty wrappers, a null wrapper value, codec ids
4-7 and anything structurally wrong (sizes, lengths, CRC-32, magic) are ``CorruptRecordError``s.
``read_message`` and ``read_inner_messages`` return the fields as stored, for callers that apply
stricter rules (the produce path: ``convert.legacy_to_producer_batch``).
Stateless and thread-safe; a builder belongs to one thread.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from spark_kafkalog.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression, compress, decompress
from spark_kafkalog.records.crc import crc32
from spark_kafkalog.records.errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from spark_kafkalog.records.record import Record

__all__ = [
    "LegacyMessage",
    "LegacyMessageSetBuilder",
    "RawMessage",
    "decode_legacy_entry",
    "encode_message",
    "iter_legacy_records",
    "read_inner_messages",
    "read_message",
]

# | offset int64 | message_size int32 |
_LOG_ENTRY = struct.Struct(">qi")
LOG_OVERHEAD = _LOG_ENTRY.size  # 12
# | crc uint32 | magic int8 | attributes int8 |
_MESSAGE_V0 = struct.Struct(">Ibb")
# | crc uint32 | magic int8 | attributes int8 | timestamp int64 |
_MESSAGE_V1 = struct.Struct(">Ibbq")
# | length int32 | (key or value length, -1 null)
_LENGTH = struct.Struct(">i")
_UINT32 = struct.Struct(">I")

# message_size of a message with null key and value
MIN_MESSAGE_SIZE = {0: _MESSAGE_V0.size + 8, 1: _MESSAGE_V1.size + 8}  # 14, 22
CRC_START = 16  # first byte covered by the CRC, from the start of the log entry
CODEC_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
MAX_OFFSET = (1 << 63) - 1


class RawMessage(NamedTuple):
    """One message's fields as stored (CRC checked, value not decompressed, offset not resolved)."""

    offset: int
    size: int  # whole entry, LOG_OVERHEAD included
    magic: int
    attributes: int  # signed int8 as stored; codec = attributes & CODEC_MASK
    timestamp: int  # -1 for magic 0
    key: bytes | None
    value: bytes | None


class LegacyMessage(NamedTuple):
    """One decoded log entry: its header fields and its records (the inner ones for a wrapper)."""

    offset: int
    size: int  # whole entry, LOG_OVERHEAD included
    magic: int
    compression: int
    timestamp_type: int
    timestamp: int
    records: list[Record]


def encode_message(offset: int, magic: int, attributes: int, timestamp: int, key, value) -> bytes:
    """One log entry (offset, size, CRC-32, message); ``timestamp`` is dropped by magic 0."""
    if magic == 0:
        head = bytes((0, attributes & 0xFF))
    else:
        head = struct.pack(">bbq", 1, attributes, timestamp)
    parts = [head]
    for field in (key, value):
        if field is None:
            parts.append(b"\xff\xff\xff\xff")
        else:
            parts.append(_LENGTH.pack(len(field)))
            parts.append(field)
    body = b"".join(parts)
    return b"".join((_LOG_ENTRY.pack(offset, 4 + len(body)), _UINT32.pack(crc32(body)), body))


class LegacyMessageSetBuilder:
    """Accumulates records and encodes them as a magic 0 or 1 message set.

    Uncompressed: one message per record at offsets ``base_offset``, ``base_offset + 1``, ...
    Compressed: one wrapper message (null key, offset ``base_offset + n - 1``, magic 1 timestamp = the
    largest inner timestamp) around the compressed inner set. ``timestamp_type`` 1 marks magic 1
    messages LogAppendTime. ZSTD raises ``UnsupportedCompressionError``. Not thread-safe.
    """

    __slots__ = ("_magic", "_compression", "_base_offset", "_timestamp_type", "_records")

    def __init__(
        self, magic: int, compression: int = Compression.NONE, *, base_offset: int = 0, timestamp_type: int = 0
    ) -> None:
        if magic not in (0, 1):
            raise ValueError(f"legacy message sets have magic 0 or 1, not {magic!r}")
        compression = Compression(compression)
        if compression is Compression.ZSTD:
            raise UnsupportedCompressionError(f"compression codec zstd cannot be used with magic {magic}")
        if timestamp_type not in (0, 1):
            raise ValueError(f"timestamp_type must be 0 or 1, not {timestamp_type!r}")
        self._magic = magic
        self._compression = compression
        self._base_offset = base_offset
        self._timestamp_type = timestamp_type if magic == 1 else 0
        self._records: list[tuple[int, bytes | None, bytes | None]] = []

    def append(self, timestamp_ms: int, key: bytes | None, value: bytes | None) -> int:
        """Add a record (``timestamp_ms`` is dropped by magic 0). Returns its offset delta."""
        self._records.append((-1 if timestamp_ms is None else timestamp_ms, key, value))
        return len(self._records) - 1

    def __len__(self) -> int:
        return len(self._records)

    def build(self) -> bytes:
        """The encoded message set (``b""`` when empty)."""
        magic = self._magic
        records = self._records
        if not records:
            return b""
        ts_bit = TIMESTAMP_TYPE_BIT if self._timestamp_type else 0
        if not self._compression:
            base = self._base_offset
            return b"".join(
                encode_message(base + i, magic, ts_bit, ts, key, value) for i, (ts, key, value) in enumerate(records)
            )
        first = 0 if magic == 1 else self._base_offset
        inner = b"".join(
            encode_message(first + i, magic, 0, ts, key, value) for i, (ts, key, value) in enumerate(records)
        )
        wrapper_ts = max(ts for ts, _, _ in records)
        payload = compress(self._compression, inner, magic=magic)
        return encode_message(
            self._base_offset + len(records) - 1, magic, int(self._compression) | ts_bit, wrapper_ts, None, payload
        )


def read_message(buf, pos: int = 0, end: int | None = None) -> RawMessage:
    """The log entry at ``buf[pos]``, which must end by ``end`` (default: the end of ``buf``).

    Checks sizes, magic (0 or 1), CRC-32 and the key and value lengths; raises ``CorruptRecordError``.
    Attributes are not interpreted.
    """
    if end is None:
        end = len(buf)
    return _read_message(buf, pos, end)


def _read_message(buf, pos: int, end: int) -> RawMessage:
    if end - pos < LOG_OVERHEAD + MIN_MESSAGE_SIZE[0]:
        raise CorruptRecordError(f"truncated message: {end - pos} bytes", position=pos)
    offset, size = _LOG_ENTRY.unpack_from(buf, pos)
    magic = buf[pos + CRC_START]
    if magic > 1:
        raise CorruptRecordError(f"magic {magic} in a v0/v1 message set", position=pos)
    if size < MIN_MESSAGE_SIZE[magic]:
        raise CorruptRecordError(f"message_size {size} below the minimum for magic {magic}", position=pos)
    entry_end = pos + LOG_OVERHEAD + size
    if entry_end > end:
        raise CorruptRecordError(f"truncated message: needs {size + LOG_OVERHEAD} bytes", position=pos)
    if magic == 0:
        crc, _, attributes = _MESSAGE_V0.unpack_from(buf, pos + LOG_OVERHEAD)
        timestamp = -1
        p = pos + LOG_OVERHEAD + _MESSAGE_V0.size
    else:
        crc, _, attributes, timestamp = _MESSAGE_V1.unpack_from(buf, pos + LOG_OVERHEAD)
        p = pos + LOG_OVERHEAD + _MESSAGE_V1.size
    computed = crc32(memoryview(buf)[pos + CRC_START : entry_end])
    if computed != crc:
        raise CorruptRecordError(f"CRC-32 mismatch: stored {crc:#010x}, computed {computed:#010x}", position=pos)
    fields: list[bytes | None] = []
    for name in ("key", "value"):
        if p + 4 > entry_end:
            raise CorruptRecordError(f"message truncated before its {name} length", position=p)
        (length,) = _LENGTH.unpack_from(buf, p)
        p += 4
        if length == -1:
            fields.append(None)
        elif 0 <= length <= entry_end - p:
            fields.append(bytes(buf[p : p + length]))
            p += length
        else:
            raise CorruptRecordError(f"{name} length {length} out of bounds", position=p - 4)
    if p != entry_end:
        raise CorruptRecordError(f"{entry_end - p} unexpected bytes after the value", position=p)
    return RawMessage(offset, size + LOG_OVERHEAD, magic, attributes, timestamp, fields[0], fields[1])


def read_inner_messages(
    wrapper: RawMessage, *, position: int = 0, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> list[RawMessage]:
    """The messages of the compressed message set in ``wrapper``'s value, as stored.

    ``position`` is the wrapper's place in the caller's buffer, for error messages. Raises
    ``CorruptRecordError`` for a codec id other than 1-3, a null value, a payload that does not
    decompress (or expands past ``max_size``), an inner message that fails ``read_message``, or no inner
    message at all. Inner magic, attributes and offsets are returned unchecked.
    """
    codec = wrapper.attributes & CODEC_MASK
    if not Compression.NONE < codec <= Compression.LZ4:
        raise CorruptRecordError(
            f"compression codec id {codec} is not valid with magic {wrapper.magic}", position=position
        )
    if wrapper.value is None:
        raise CorruptRecordError("compressed wrapper message with a null value", position=position)
    inner = decompress(codec, wrapper.value, magic=wrapper.magic, max_size=max_size)
    messages = []
    inner_pos = 0
    inner_end = len(inner)
    while inner_pos < inner_end:
        try:
            message = _read_message(inner, inner_pos, inner_end)
        except CorruptRecordError as exc:
            raise CorruptRecordError(f"inner message of the wrapper: {exc.reason}", position=position) from None
        messages.append(message)
        inner_pos += message.size
    if not messages:
        raise CorruptRecordError("compressed wrapper message with no inner messages", position=position)
    return messages


def decode_legacy_entry(buf, pos: int = 0, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> LegacyMessage:
    """The log entry at ``buf[pos]`` (which must be complete), with its records decoded.

    Raises ``CorruptRecordError`` on a bad CRC, size, magic, codec or inner message set, and its
    subclass ``InvalidRecordError`` for a compressed inner message.
    """
    wrapper = _read_message(buf, pos, len(buf))
    offset, size, magic, attributes, timestamp, key, value = wrapper
    codec = attributes & CODEC_MASK
    timestamp_type = (attributes >> 3) & 1 if magic == 1 else 0
    if not codec:
        record = Record(offset, timestamp, key, value, [])
        return LegacyMessage(offset, size, magic, 0, timestamp_type, timestamp, [record])
    messages = read_inner_messages(wrapper, position=pos, max_size=max_size)
    for m in messages:
        if m.attributes & CODEC_MASK:
            raise InvalidRecordError("compressed message inside a compressed wrapper", position=pos)
    if magic == 0:
        records = [Record(m[0], -1, m[5], m[6], []) for m in messages]
    else:
        base = offset - messages[-1][0]
        if base < 0:  # not resolvable (as Kafka's consumer: the inner offsets stay as stored)
            base = 0
        elif base + max(m[0] for m in messages) > MAX_OFFSET:
            raise CorruptRecordError(
                f"wrapper offset {offset} with inner relative offsets up to {max(m[0] for m in messages)} "
                "resolves past 2^63-1",
                position=pos,
            )
        if timestamp_type:
            records = [Record(base + m[0], timestamp, m[5], m[6], []) for m in messages]
        else:
            records = [Record(base + m[0], m[4], m[5], m[6], []) for m in messages]
    return LegacyMessage(offset, size, magic, codec, timestamp_type, timestamp, records)


def iter_legacy_records(buf, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> Iterator[Record]:
    """Records of a whole v0/v1 message set, in order; headers empty, timestamp -1 for magic 0.

    Every entry must be complete (use ``splitter.iter_records`` for a fetch response cut at a byte
    limit). Entries are decoded one at a time: records before a corrupt entry are yielded before its
    ``CorruptRecordError`` is raised.
    """
    pos = 0
    end = len(buf)
    while pos < end:
        entry = decode_legacy_entry(buf, pos, max_size=max_size)
        yield from entry.records
        pos += entry.size
