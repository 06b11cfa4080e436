"""Broker-side recompression (``compression.type`` other than ``producer``) and the CreateTime bounds
(``message.timestamp.before.max.ms`` / ``after.max.ms``) of leader appends.

``recompress(buf, batches, codec, level)`` returns the request with every batch whose codec is not ``codec``
re-encoded with it, or ``None`` when every batch already has it (then the producer's bytes are stored as
they are; with ``compression.type=producer`` this module is never called). The records section (bytes 61 to
the end of the batch) is the concatenation of the records, compressed as a whole: it is decompressed and
compressed again, so offsets deltas, timestamps, keys, values and headers are untouched, and so are the
header fields (producer id, epoch and base sequence, transactional bit, timestamps); the codec bits, the
batch length and the CRC-32C change. Control batches (transaction markers) are never recompressed, as in
Kafka. Raises ``LogAppendError`` (CORRUPT_MESSAGE) when a batch's records cannot be decompressed.

``check_timestamps(buf, batches, now_ms, before, after)`` decodes the records and raises INVALID_TIMESTAMP for
the first whose timestamp is more than ``before`` ms before or ``after`` ms after ``now_ms`` (a record
without a timestamp, -1, passes), as Kafka's ``LogValidator`` does for CreateTime topics.

Stateless; thread-safe.
"""

from __future__ import annotations

from broker.log.errors import LogAppendError
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import CorruptRecordError, compress, decode_batch_records, decompress
from spark_kafkalog.records.batch import (
    ATTRIBUTES_OFFSET,
    BATCH_HEADER_SIZE,
    CODEC_MASK,
    CONTROL_BIT,
    CRC_OFFSET,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    BatchHeader,
    parse_batch_header,
)
from spark_kafkalog.records.crc import crc32c
from spark_kafkalog.records.errors import DecompressedSizeLimitError

__all__ = ["check_timestamps", "recompress"]

_B = tuple[int, BatchHeader]
CODEC_NAMES = ("uncompressed", "gzip", "snappy", "lz4", "zstd")


def recompress(buf, batches: list[_B], codec: int, level: int | None) -> tuple[bytearray, list[_B]] | None:
    """The request with each non-control batch stored with ``codec``; None when nothing needs it."""
    if all(h.attributes & CODEC_MASK == codec or h.attributes & CONTROL_BIT for _, h in batches):
        return None
    view = memoryview(buf)
    out = bytearray()
    headers: list[_B] = []
    for pos, header in batches:
        size = header.batch_length + LOG_OVERHEAD
        start = len(out)
        source = header.attributes & CODEC_MASK
        if source == codec or header.attributes & CONTROL_BIT:
            out += view[pos : pos + size]
        else:
            section = view[pos + BATCH_HEADER_SIZE : pos + size]
            try:
                records = decompress(source, section)
            except (CorruptRecordError, DecompressedSizeLimitError, ValueError, OSError) as e:
                raise LogAppendError(
                    ErrorCode.CORRUPT_MESSAGE,
                    f"batch at byte {pos}: cannot decompress its {CODEC_NAMES[source]} records to store them as "
                    f"{CODEC_NAMES[codec]} (compression.type): {e}",
                ) from None
            encoded = compress(codec, records, level=level)
            out += HEADER_STRUCT.pack(
                header.base_offset,
                BATCH_HEADER_SIZE - LOG_OVERHEAD + len(encoded),
                header.partition_leader_epoch,
                header.magic,
                0,
                (header.attributes & ~CODEC_MASK) | codec,
                header.last_offset_delta,
                header.base_timestamp,
                header.max_timestamp,
                header.producer_id,
                header.producer_epoch,
                header.base_sequence,
                header.records_count,
            )
            out += encoded
            crc = crc32c(memoryview(out)[start + ATTRIBUTES_OFFSET :])
            out[start + CRC_OFFSET : start + CRC_OFFSET + 4] = crc.to_bytes(4, "big")
        headers.append((start, parse_batch_header(out, start)))
    return out, headers


def check_timestamps(buf, batches: list[_B], now_ms: int, before: int, after: int) -> None:
    """INVALID_TIMESTAMP for the first CreateTime record outside [now - before, now + after]."""
    view = memoryview(buf)
    for pos, header in batches:
        if header.attributes & CONTROL_BIT:
            continue
        size = header.batch_length + LOG_OVERHEAD
        try:
            records = decode_batch_records(view[pos : pos + size], header=header)
        except CorruptRecordError as e:
            raise LogAppendError(ErrorCode.CORRUPT_MESSAGE, f"batch at byte {pos}: {e}") from None
        for record in records:
            ts = record.timestamp
            if ts < 0:
                continue
            if now_ms - ts > before:
                raise LogAppendError(
                    ErrorCode.INVALID_TIMESTAMP,
                    f"record at offset delta {record.offset - header.base_offset} has timestamp {ts}, "
                    f"{now_ms - ts} ms before the broker time {now_ms}: more than "
                    f"message.timestamp.before.max.ms={before}",
                )
            if ts - now_ms > after:
                raise LogAppendError(
                    ErrorCode.INVALID_TIMESTAMP,
                    f"record at offset delta {record.offset - header.base_offset} has timestamp {ts}, "
                    f"{ts - now_ms} ms after the broker time {now_ms}: more than "
                    f"message.timestamp.after.max.ms={after}",
                )
