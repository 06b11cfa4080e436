"""Splitting a buffer of concatenated entries of any magic (a log segment slice, a fetch response).

v2 batches and v0/v1 log entries share their first 17 bytes' meaning, which is what the splitter
reads:

    | offset | size | v2 batch               | v0/v1 log entry          |
    |--------|------|------------------------|--------------------------|
    | 0      | 8    | base_offset            | offset                   |
    | 8      | 4    | batch_length           | message_size             |
    | 12     | 4    | partition_leader_epoch | crc                      |
    | 16     | 1    | magic (2)              | magic (0 or 1)           |

An entry occupies ``12 + length`` bytes. A trailing entry that is cut short (fetch responses stop at a
byte limit) ends the iteration normally; a negative length, one below the minimum for its magic, an
unknown magic, or one above ``max_entry_size`` raises ``CorruptRecordError``. Views do not copy bytes;
they stay valid while the buffer is not modified. Stateless and thread-safe.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from spark_kafkalog.records.batch import (
    CONTROL_BIT,
    HEADER_STRUCT,
    MIN_BATCH_LENGTH,
    BatchHeader,
    validate_batch,
)
from spark_kafkalog.records.batch_reader import decode_batch_records
from spark_kafkalog.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from spark_kafkalog.records.errors import CorruptRecordError
from spark_kafkalog.records.legacy import MIN_MESSAGE_SIZE, decode_legacy_entry
from spark_kafkalog.records.record import Record

__all__ = ["BatchView", "iter_batches", "iter_records"]

# | offset int64 | length int32 |
_ENTRY_PREFIX = struct.Struct(">qi")
LOG_OVERHEAD = 12
MAGIC_OFFSET = 16
# | last_offset_delta int32 | at offset 23 of a v2 batch
_LAST_OFFSET_DELTA = struct.Struct(">i")
_LAST_OFFSET_DELTA_POSITION = 23
_ATTRIBUTES = struct.Struct(">h")
_ATTRIBUTES_POSITION = 21
_MIN_LENGTH = {0: MIN_MESSAGE_SIZE[0], 1: MIN_MESSAGE_SIZE[1], 2: MIN_BATCH_LENGTH}
_SMALLEST_LENGTH = min(_MIN_LENGTH.values())
_CODEC_MASK = 0x07


class BatchView:
    """One entry of the buffer: a v2 batch, or a v0/v1 log entry (a message or a compressed wrapper).

    ``base_offset`` of a compressed v0/v1 wrapper is only known after decompressing it, which happens
    on first access; for everything else it is read from the header. Not thread-safe on first access
    of that lazy field (the worst case is decompressing twice).
    """

    __slots__ = ("_buf", "position", "size", "magic", "last_offset", "_base_offset")

    def __init__(self, buf, position: int, size: int, magic: int, base_offset: int | None, last_offset: int):
        self._buf = buf
        self.position = position
        self.size = size
        self.magic = magic
        self.last_offset = last_offset
        self._base_offset = base_offset

    @property
    def base_offset(self) -> int:
        """First offset of the entry."""
        if self._base_offset is None:
            self._base_offset = decode_legacy_entry(self.data).records[0].offset
        return self._base_offset

    @property
    def data(self) -> memoryview:
        """The entry's bytes, as a view into the buffer."""
        return memoryview(self._buf)[self.position : self.position + self.size]

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def is_control(self) -> bool:
        """True for v2 control batches (transaction markers), which carry no application records."""
        if self.magic != 2:
            return False
        return bool(_ATTRIBUTES.unpack_from(self._buf, self.position + _ATTRIBUTES_POSITION)[0] & CONTROL_BIT)

    def header(self) -> BatchHeader:
        """The v2 batch header (``CorruptRecordError`` for v0/v1 entries)."""
        if self.magic != 2:
            raise CorruptRecordError(f"magic {self.magic} entry has no v2 batch header", position=self.position)
        return BatchHeader._make(HEADER_STRUCT.unpack_from(self._buf, self.position))

    def validate(self) -> None:
        """Check the entry whole: size, magic and CRC (CRC-32C for v2, CRC-32 for v0/v1)."""
        if self.magic == 2:
            validate_batch(self.data)
        else:
            decode_legacy_entry(self.data)

    def records(self, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> list[Record]:
        """The entry's records (a v2 CRC is not checked here; v0/v1 CRCs always are)."""
        if self.magic == 2:
            return decode_batch_records(self.data, max_size=max_size)
        return decode_legacy_entry(self.data, max_size=max_size).records

    def __repr__(self) -> str:
        return (
            f"BatchView(position={self.position}, size={self.size}, magic={self.magic}, "
            f"base_offset={self._base_offset}, last_offset={self.last_offset})"
        )


def iter_batches(buf, *, max_entry_size: int | None = None) -> Iterator[BatchView]:
    """Views of the complete entries of ``buf`` in order; stops at a partial trailing entry."""
    end = len(buf)
    pos = 0
    while end - pos >= LOG_OVERHEAD:
        offset, length = _ENTRY_PREFIX.unpack_from(buf, pos)
        if length < _SMALLEST_LENGTH:
            raise CorruptRecordError(f"entry length {length} below the minimum {_SMALLEST_LENGTH}", position=pos)
        if max_entry_size is not None and length + LOG_OVERHEAD > max_entry_size:
            raise CorruptRecordError(
                f"entry of {length + LOG_OVERHEAD} bytes exceeds the limit {max_entry_size}", position=pos
            )
        if end - pos <= MAGIC_OFFSET:
            return
        magic = buf[pos + MAGIC_OFFSET]
        minimum = _MIN_LENGTH.get(magic)
        if minimum is None:
            raise CorruptRecordError(f"unknown magic {magic}", position=pos)
        if length < minimum:
            raise CorruptRecordError(
                f"entry length {length} below the minimum {minimum} for magic {magic}", position=pos
            )
        size = length + LOG_OVERHEAD
        if pos + size > end:
            return
        if magic == 2:
            delta = _LAST_OFFSET_DELTA.unpack_from(buf, pos + _LAST_OFFSET_DELTA_POSITION)[0]
            yield BatchView(buf, pos, size, 2, offset, offset + delta)
        elif buf[pos + 17] & _CODEC_MASK:
            yield BatchView(buf, pos, size, magic, None, offset)
        else:
            yield BatchView(buf, pos, size, magic, offset, offset)
        pos += size


def iter_records(
    buf,
    *,
    check_crc: bool = True,
    include_control: bool = False,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Iterator[Record]:
    """Every record of every complete entry of ``buf``, any magic, in order (the fetch-side reader).

    v2 CRC-32C checks are on unless ``check_crc`` is False (v0/v1 CRC-32 checks always run). Control
    batches are skipped unless ``include_control``. Entries are decoded one at a time, so records of
    earlier entries are yielded before a later entry's ``CorruptRecordError``.
    """
    for view in iter_batches(buf):
        if view.magic == 2:
            data = view.data
            header = validate_batch(data) if check_crc else None
            if not include_control and view.is_control:
                continue
            yield from decode_batch_records(data, header=header, max_size=max_size)
        else:
            yield from decode_legacy_entry(view.data, max_size=max_size).records
