"""Checks on batches before they are appended: leader appends (from producers) and follower appends.

Leader append (``validate_leader_batches``), each v2 batch of the request in order:

| check                                              | error                           |
|----------------------------------------------------|---------------------------------|
| a full 61-byte header, length >= 49, batch inside  | CORRUPT_MESSAGE                 |
| magic 2 (0/1 must be converted before the log)     | UNSUPPORTED_FOR_MESSAGE_FORMAT  |
| size <= ``max.message.bytes``                      | MESSAGE_TOO_LARGE               |
| size <= ``segment.bytes``                          | RECORD_LIST_TOO_LARGE           |
| known codec, CRC-32C of attributes..end            | CORRUPT_MESSAGE                 |
| records_count >= 1, last_offset_delta = count - 1  | INVALID_RECORD                  |
| not a control batch (producers cannot send them;   | INVALID_RECORD                  |
|   ``allow_control``: markers appended by the log)  |                                 |
| transactional batch: producer id and epoch >= 0    | INVALID_RECORD                  |
| compacted topic: every record has a key            | INVALID_RECORD                  |

Records are only decoded for compacted topics (keys); otherwise the CRC vouches for the bytes, and
consumers decode them. Follower append (``validate_follower_batches``) checks size, magic, CRC and that
offsets increase from the log end. Both return ``[(position, header), ...]`` and raise ``LogAppendError``
for the first failure, before anything is written.

v0/v1 message sets (Produce v0-2) are converted first by ``convert_legacy_message_set``, as Kafka's
``LogValidator`` treats them (``records.convert.legacy_to_producer_batch`` has the rules): the client's
offsets are ignored (magic 1 inner offsets must be 0..n-1) and the result is one v2 batch that then
goes through the checks above. Its failures map to error codes:

| conversion failure                                          | error                         |
|-------------------------------------------------------------|-------------------------------|
| size, length, magic, CRC-32, codec id 5-7, undecodable or   | CORRUPT_MESSAGE               |
| empty wrapper payload                                       |                               |
| nested compression, mixed magic, a wrapper with other       | INVALID_RECORD                |
| messages, magic 1 inner offsets not 0..n-1                  |                               |
| LogAppendTime set by the producer, timestamp below -1       | INVALID_TIMESTAMP             |
| codec id 4 (zstd) with magic 0/1                            | UNSUPPORTED_COMPRESSION_TYPE  |

Stateless; thread-safe.
"""

from __future__ import annotations

from broker.log.errors import InvalidOffsetError, LogAppendError
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    UnsupportedCompressionError,
    decode_batch_records,
    legacy_to_producer_batch,
    validate_batch,
)
from spark_kafkalog.records.batch import (
    ATTRIBUTES_OFFSET,
    BATCH_HEADER_SIZE,
    CODEC_MASK,
    CONTROL_BIT,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_BATCH_LENGTH,
    TRANSACTIONAL_BIT,
    BatchHeader,
)
from spark_kafkalog.records.crc import crc32c

__all__ = ["convert_legacy_message_set", "validate_follower_batches", "validate_leader_batches"]

_B = tuple[int, BatchHeader]
_unpack_header = HEADER_STRUCT.unpack_from
_new_header = tuple.__new__


def _frame_error(buf, pos: int, end: int) -> LogAppendError:
    """The error for a batch that is too short for a header or does not have magic 2."""
    left = end - pos
    magic = buf[pos + MAGIC_OFFSET] if left > MAGIC_OFFSET else 2
    if magic in (0, 1):
        return LogAppendError(
            ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
            f"batch at byte {pos}: magic {magic}; the log stores only v2 batches (convert first)",
        )
    if left < BATCH_HEADER_SIZE:
        return LogAppendError(
            ErrorCode.CORRUPT_MESSAGE, f"batch at byte {pos}: {left} bytes, less than a {BATCH_HEADER_SIZE}-byte header"
        )
    return LogAppendError(ErrorCode.CORRUPT_MESSAGE, f"batch at byte {pos}: unknown magic {magic}")


def convert_legacy_message_set(records) -> bytearray:
    """The v2 batch (writable) for a producer's v0/v1 message set; raises ``LogAppendError`` (table above)."""
    try:
        return bytearray(legacy_to_producer_batch(records))
    except InvalidTimestampError as e:
        raise LogAppendError(ErrorCode.INVALID_TIMESTAMP, f"message set: {e}") from None
    except InvalidRecordError as e:
        raise LogAppendError(ErrorCode.INVALID_RECORD, f"message set: {e}") from None
    except CorruptRecordError as e:
        raise LogAppendError(ErrorCode.CORRUPT_MESSAGE, f"unreadable message set: {e}") from None
    except UnsupportedCompressionError as e:
        raise LogAppendError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"message set: {e}") from None


def validate_leader_batches(
    buf, *, max_message_bytes: int, segment_bytes: int, compacted: bool, allow_control: bool = False
) -> list[_B]:
    # The checks of records.validate_batch, inlined (this is the produce hot path), then the leader's own.
    out: list[_B] = []
    end = len(buf)
    if end == 0:
        raise LogAppendError(ErrorCode.INVALID_RECORD, "no record batches to append")
    view = memoryview(buf)
    pos = 0
    while pos < end:
        if end - pos < BATCH_HEADER_SIZE or buf[pos + MAGIC_OFFSET] != 2:
            raise _frame_error(buf, pos, end)
        fields = _unpack_header(buf, pos)
        _, length, _, _, crc, attributes, last_delta, _, _, producer_id, producer_epoch, _, count = fields
        size = length + LOG_OVERHEAD
        if length < MIN_BATCH_LENGTH or size > end - pos:
            raise LogAppendError(
                ErrorCode.CORRUPT_MESSAGE,
                f"batch at byte {pos}: length {length} does not fit the {end - pos} bytes left",
            )
        if size > max_message_bytes:
            raise LogAppendError(
                ErrorCode.MESSAGE_TOO_LARGE, f"batch of {size} bytes exceeds max.message.bytes={max_message_bytes}"
            )
        if size > segment_bytes:
            raise LogAppendError(
                ErrorCode.RECORD_LIST_TOO_LARGE, f"batch of {size} bytes exceeds segment.bytes={segment_bytes}"
            )
        if attributes & CODEC_MASK > Compression.ZSTD:
            raise LogAppendError(
                ErrorCode.CORRUPT_MESSAGE, f"batch at byte {pos}: unknown codec id {attributes & CODEC_MASK}"
            )
        computed = crc32c(view[pos + ATTRIBUTES_OFFSET : pos + size])
        if computed != crc:
            raise LogAppendError(
                ErrorCode.CORRUPT_MESSAGE,
                f"batch at byte {pos}: CRC-32C mismatch: stored {crc:#010x}, computed {computed:#010x}",
            )
        if count < 1 or last_delta != count - 1:
            raise LogAppendError(
                ErrorCode.INVALID_RECORD,
                f"batch at byte {pos}: records_count {count} with last_offset_delta {last_delta} "
                "(a producer batch holds 1..n records at deltas 0..n-1)",
            )
        if attributes & CONTROL_BIT and not allow_control:
            raise LogAppendError(
                ErrorCode.INVALID_RECORD, f"batch at byte {pos}: producers cannot append control batches"
            )
        if attributes & TRANSACTIONAL_BIT and (producer_id < 0 or producer_epoch < 0):
            raise LogAppendError(
                ErrorCode.INVALID_RECORD,
                f"batch at byte {pos}: a transactional batch needs a producer id and epoch, "
                f"not {producer_id}/{producer_epoch}",
            )
        header = _new_header(BatchHeader, fields)
        if compacted:
            _check_keys(buf, pos, size, header)
        out.append((pos, header))
        pos += size
    return out


def _check_keys(buf, pos: int, size: int, header: BatchHeader) -> None:
    try:
        records = decode_batch_records(memoryview(buf)[pos : pos + size], header=header)
    except CorruptRecordError as e:
        raise LogAppendError(ErrorCode.CORRUPT_MESSAGE, f"batch at byte {pos}: {e}") from None
    for record in records:
        if record.key is None:
            raise LogAppendError(
                ErrorCode.INVALID_RECORD,
                f"record at offset delta {record.offset - header.base_offset} has no key; "
                "a compacted topic needs a key on every record",
            )


def validate_follower_batches(buf, log_end_offset: int) -> list[_B]:
    """Batches copied from the leader: whole, CRC-valid, offsets from ``log_end_offset`` upward."""
    out: list[_B] = []
    end = len(buf)
    pos = 0
    next_offset = log_end_offset
    while pos < end:
        if end - pos < BATCH_HEADER_SIZE or buf[pos + MAGIC_OFFSET] != 2:
            raise _frame_error(buf, pos, end)
        try:
            header = validate_batch(buf, pos)
        except CorruptRecordError as e:
            raise LogAppendError(ErrorCode.CORRUPT_MESSAGE, f"batch at byte {pos}: {e}") from None
        if header.base_offset < next_offset:
            raise InvalidOffsetError(
                f"batch at byte {pos} starts at offset {header.base_offset}, below the next offset {next_offset}"
            )
        next_offset = header.base_offset + header.last_offset_delta + 1
        out.append((pos, header))
        pos += header.batch_length + LOG_OVERHEAD
    return out
