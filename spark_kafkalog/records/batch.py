"""RecordBatch v2 header: parsing, validation, and the in-place rewrites a broker performs.

Batch header (big-endian; ``HEADER_STRUCT`` below). The CRC-32C covers bytes 21 to the end of the batch, so
``base_offset`` and ``partition_leader_epoch`` can be rewritten without touching it:

    | offset | size | field                  | notes                                           |
    |--------|------|------------------------|-------------------------------------------------|
    | 0      | 8    | base_offset int64      |                                                 |
    | 8      | 4    | batch_length int32     | bytes after this field (total size - 12)        |
    | 12     | 4    | partition_leader_epoch |                                                 |
    | 16     | 1    | magic int8             | 2                                               |
    | 17     | 4    | crc uint32             | CRC-32C of bytes 21..end                        |
    | 21     | 2    | attributes int16       | 0-2 codec, 3 timestamp type, 4 transactional,   |
    |        |      |                        | 5 control                                       |
    | 23     | 4    | last_offset_delta      |                                                 |
    | 27     | 8    | base_timestamp int64   | first record's timestamp                        |
    | 35     | 8    | max_timestamp int64    | LogAppendTime batches: the append time          |
    | 43     | 8    | producer_id int64      | -1 when not idempotent                          |
    | 51     | 2    | producer_epoch int16   |                                                 |
    | 53     | 4    | base_sequence int32    |                                                 |
    | 57     | 4    | records_count int32    |                                                 |
    | 61     | ...  | records                | compressed as a whole when codec != 0           |

Functions take any buffer and a start position; the rewrites need a writable one (``bytearray`` or a
writable ``memoryview``). Nothing here holds state; concurrent rewrites of the same bytes must be
serialised by the caller.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from spark_kafkalog.records.compression import Compression
from spark_kafkalog.records.crc import crc32c
from spark_kafkalog.records.errors import CorruptRecordError

__all__ = [
    "BATCH_HEADER_SIZE",
    "BatchHeader",
    "parse_batch_header",
    "set_base_offset",
    "set_log_append_time",
    "set_partition_leader_epoch",
    "validate_batch",
]

HEADER_STRUCT = struct.Struct(">qiibIhiqqqhii")
BATCH_HEADER_SIZE = HEADER_STRUCT.size  # 61
LOG_OVERHEAD = 12  # base_offset + batch_length
MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD  # 49

MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35

_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_INT16 = struct.Struct(">h")

CODEC_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20

CREATE_TIME = 0
LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    """The 61-byte header of a v2 batch, as stored (``crc`` unsigned)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def compression(self) -> Compression:
        return Compression(self.attributes & CODEC_MASK)

    @property
    def timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime."""
        return (self.attributes >> 3) & 1

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_BIT)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD


def parse_batch_header(buf, pos: int = 0) -> BatchHeader:
    """The header of the v2 batch at ``buf[pos]``, without checking the CRC or the batch's extent.

    Raises ``CorruptRecordError`` when fewer than 61 bytes remain or the magic byte is not 2.
    """
    if len(buf) - pos < BATCH_HEADER_SIZE:
        raise CorruptRecordError(
            f"truncated batch header: {max(len(buf) - pos, 0)} of {BATCH_HEADER_SIZE} bytes", position=pos
        )
    header = BatchHeader._make(HEADER_STRUCT.unpack_from(buf, pos))
    if header.magic != 2:
        raise CorruptRecordError(f"magic {header.magic} where a v2 batch (magic 2) was expected", position=pos)
    return header


def validate_batch(buf, pos: int = 0) -> BatchHeader:
    """The header of the v2 batch at ``buf[pos]`` after checking it whole.

    Checks, in order: a full header is present, ``batch_length`` >= 49, the whole batch is present,
    magic is 2, the codec id is known, the CRC-32C of attributes..end matches, ``records_count`` >= 0
    and ``last_offset_delta`` >= ``records_count`` - 1. Raises ``CorruptRecordError`` naming the first
    check that fails.
    """
    available = len(buf) - pos
    if available < BATCH_HEADER_SIZE:
        raise CorruptRecordError(
            f"truncated batch header: {max(available, 0)} of {BATCH_HEADER_SIZE} bytes", position=pos
        )
    header = BatchHeader._make(HEADER_STRUCT.unpack_from(buf, pos))
    if header.batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(
            f"batch_length {header.batch_length} below the minimum {MIN_BATCH_LENGTH}", position=pos
        )
    size = header.batch_length + LOG_OVERHEAD
    if size > available:
        raise CorruptRecordError(f"truncated batch: {available} of {size} bytes", position=pos)
    if header.magic != 2:
        raise CorruptRecordError(f"magic {header.magic} where a v2 batch (magic 2) was expected", position=pos)
    if header.attributes & CODEC_MASK > Compression.ZSTD:
        raise CorruptRecordError(f"unknown compression codec id {header.attributes & CODEC_MASK}", position=pos)
    computed = crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + size])
    if computed != header.crc:
        raise CorruptRecordError(
            f"CRC-32C mismatch: stored {header.crc:#010x}, computed {computed:#010x}", position=pos
        )
    if header.records_count < 0:
        raise CorruptRecordError(f"negative records_count {header.records_count}", position=pos)
    if header.last_offset_delta < header.records_count - 1:
        raise CorruptRecordError(
            f"last_offset_delta {header.last_offset_delta} inconsistent with records_count {header.records_count}",
            position=pos,
        )
    return header


def set_base_offset(buf, pos: int, offset: int) -> None:
    """Rewrite the base offset in place (outside the CRC, which stays valid)."""
    _INT64.pack_into(buf, pos, offset)


def set_partition_leader_epoch(buf, pos: int, epoch: int) -> None:
    """Rewrite the partition leader epoch in place (outside the CRC, which stays valid)."""
    _INT32.pack_into(buf, pos + 12, epoch)


def set_log_append_time(buf, pos: int, timestamp: int) -> None:
    """Mark the batch LogAppendTime with ``timestamp`` as its max timestamp, and recompute the CRC.

    The whole batch must be in ``buf``; raises ``CorruptRecordError`` otherwise.
    """
    header = parse_batch_header(buf, pos)
    size = header.batch_length + LOG_OVERHEAD
    if header.batch_length < MIN_BATCH_LENGTH or len(buf) - pos < size:
        raise CorruptRecordError("cannot set the log append time of an incomplete batch", position=pos)
    _INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, header.attributes | TIMESTAMP_TYPE_BIT)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, timestamp)
    _UINT32.pack_into(buf, pos + CRC_OFFSET, crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : pos + size]))
