"""Decoding the records of one v2 batch (decompressing once per batch), and the ``RecordBatch`` view.

Record layout inside a batch (after decompression; zigzag varints, see ``varint``):

    | field            | encoding  | notes                                          |
    |------------------|-----------|------------------------------------------------|
    | length           | varint    | bytes after this field                         |
    | attributes       | int8      | unused                                         |
    | timestamp_delta  | varlong   | added to the batch's base_timestamp            |
    | offset_delta     | varint    | added to the batch's base_offset               |
    | key_length       | varint    | -1 for a null key                              |
    | key              | bytes     |                                                |
    | value_length     | varint    | -1 for a null value                            |
    | value            | bytes     |                                                |
    | headers_count    | varint    |                                                |
    | headers          | repeated  | key_length varint, key UTF-8, value_length     |
    |                  |           | varint (-1 null), value bytes                  |

The hot loop inlines one- and two-byte varints (the common case for lengths and deltas) with a
lookup table for the zigzag step and calls ``read_varlong`` only for longer ones; truncation shows up
as an ``IndexError`` that is turned into one ``CorruptRecordError`` for the batch. Decoding is eager:
a batch yields all of its records or raises before yielding any. Stateless and thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator

from spark_kafkalog.records.batch import (
    BATCH_HEADER_SIZE,
    CODEC_MASK,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    TIMESTAMP_TYPE_BIT,
    BatchHeader,
    parse_batch_header,
    validate_batch,
)
from spark_kafkalog.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, decompress
from spark_kafkalog.records.errors import CorruptRecordError
from spark_kafkalog.records.record import Record
from spark_kafkalog.records.varint import read_varlong

__all__ = ["RecordBatch", "decode_batch_records", "iter_batch_records"]

# Zigzag decoding of every raw varint value that fits in two bytes.
_ZIGZAG = [(v >> 1) ^ -(v & 1) for v in range(1 << 14)]
# Smallest encoded record: length, attributes, timestamp, offset, key length, value length, header count.
_MIN_RECORD_SIZE = 7

_INT64_BOUND = 1 << 63


def iter_batch_records(
    batch, *, header: BatchHeader | None = None, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> Iterator[Record]:
    """Records of the v2 batch at the start of ``batch``, with absolute offsets and timestamps.

    ``header`` skips re-parsing when the caller already has it. The CRC is not checked (see
    ``validate_batch``). The batch is decoded eagerly: this raises ``CorruptRecordError`` before
    returning if any record is malformed, ``DecompressedSizeLimitError`` beyond ``max_size``.
    """
    return iter(decode_batch_records(batch, header=header, max_size=max_size))


def decode_batch_records(
    batch, *, header: BatchHeader | None = None, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> list[Record]:
    """Like ``iter_batch_records`` but returns the list."""
    if header is None:
        header = parse_batch_header(batch)
    size = header.batch_length + LOG_OVERHEAD
    if header.batch_length < MIN_BATCH_LENGTH or len(batch) < size:
        raise CorruptRecordError(f"truncated batch: {len(batch)} of {size} bytes")
    attributes = header.attributes
    codec = attributes & CODEC_MASK
    if codec:
        data = decompress(codec, memoryview(batch)[BATCH_HEADER_SIZE:size], max_size=max_size)
        start, end = 0, len(data)
    elif type(batch) is bytes:
        data, start, end = batch, BATCH_HEADER_SIZE, size
    else:
        data = bytes(memoryview(batch)[BATCH_HEADER_SIZE:size])
        start, end = 0, len(data)
    log_append_time = header.max_timestamp if attributes & TIMESTAMP_TYPE_BIT else None
    return _decode_records(
        data, start, end, header.records_count, header.base_offset, header.base_timestamp, log_append_time
    )


def _decode_records(
    data: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
) -> list[Record]:
    if count < 0 or count * _MIN_RECORD_SIZE > end - pos:
        raise CorruptRecordError(f"records_count {count} does not fit in {end - pos} bytes of records")
    records: list[Record] = []
    append = records.append
    new = tuple.__new__
    record_type = Record
    zz = _ZIGZAG
    varlong = read_varlong
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                length = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    length = zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    length, pos = varlong(data, pos)
            record_end = pos + length
            if length < 6 or record_end > end:
                raise CorruptRecordError(f"record length {length} out of bounds", position=pos)
            pos += 1  # attributes
            b = data[pos]
            if b < 0x80:
                timestamp_delta = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    timestamp_delta = zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    timestamp_delta, pos = varlong(data, pos)
            b = data[pos]
            if b < 0x80:
                offset_delta = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    offset_delta = zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    offset_delta, pos = varlong(data, pos)
            b = data[pos]
            if b < 0x80:
                key_length = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    key_length = zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    key_length, pos = varlong(data, pos)
            if key_length >= 0:
                key = data[pos : pos + key_length]
                pos += key_length
            elif key_length == -1:
                key = None
            else:
                raise CorruptRecordError(f"negative key length {key_length}", position=pos)
            b = data[pos]
            if b < 0x80:
                value_length = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    value_length = zz[(b & 0x7F) | (b2 << 7)]
                    pos += 2
                else:
                    value_length, pos = varlong(data, pos)
            if value_length >= 0:
                value = data[pos : pos + value_length]
                pos += value_length
            elif value_length == -1:
                value = None
            else:
                raise CorruptRecordError(f"negative value length {value_length}", position=pos)
            if data[pos] == 0:
                headers: list[tuple[str, bytes | None]] = []
                pos += 1
            else:
                headers, pos = _read_headers(data, pos, record_end)
            if pos != record_end:
                raise CorruptRecordError("record fields do not add up to its length", position=pos)
            if log_append_time is None:
                timestamp = base_timestamp + timestamp_delta
                if not -_INT64_BOUND <= timestamp < _INT64_BOUND:  # Java's long arithmetic wraps
                    timestamp = (timestamp + _INT64_BOUND) % (2 * _INT64_BOUND) - _INT64_BOUND
            else:
                timestamp = log_append_time
            append(new(record_type, (base_offset + offset_delta, timestamp, key, value, headers)))
    except IndexError:
        raise CorruptRecordError("record truncated", position=pos) from None
    if pos != end:
        raise CorruptRecordError(f"{end - pos} bytes after the last of {count} records", position=pos)
    return records


def _read_headers(data: bytes, pos: int, record_end: int) -> tuple[list, int]:
    count, pos = read_varlong(data, pos)
    if count < 0 or count * 2 > record_end - pos:
        raise CorruptRecordError(f"header count {count} out of bounds", position=pos)
    headers = []
    for _ in range(count):
        key_length, pos = read_varlong(data, pos)
        if key_length < 0 or pos + key_length > record_end:
            raise CorruptRecordError(f"header key length {key_length} out of bounds", position=pos)
        try:
            key = data[pos : pos + key_length].decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptRecordError("header key is not UTF-8", position=pos) from None
        pos += key_length
        value_length, pos = read_varlong(data, pos)
        if value_length == -1:
            value = None
        elif 0 <= value_length and pos + value_length <= record_end:
            value = data[pos : pos + value_length]
            pos += value_length
        else:
            raise CorruptRecordError(f"header value length {value_length} out of bounds", position=pos)
        headers.append((key, value))
    return headers, pos


class RecordBatch:
    """A read-only view of the v2 batch at the start of ``buf``; the bytes are not copied.

    ``header`` is parsed on construction (no CRC check); ``validate()`` checks the whole batch;
    ``records()`` decodes it. Safe to share between threads while the buffer is not modified.
    """

    __slots__ = ("_buf", "header")

    def __init__(self, buf) -> None:
        self.header = parse_batch_header(buf)
        self._buf = memoryview(buf)[: self.header.batch_length + LOG_OVERHEAD]

    @property
    def buffer(self) -> memoryview:
        """The batch's bytes (a view into the buffer given to the constructor)."""
        return self._buf

    def validate(self) -> BatchHeader:
        return validate_batch(self._buf)

    def records(self) -> Iterator[Record]:
        return iter_batch_records(self._buf, header=self.header)

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def __len__(self) -> int:
        return self.header.records_count

    def __repr__(self) -> str:
        h = self.header
        return (
            f"RecordBatch(base_offset={h.base_offset}, last_offset={h.last_offset}, "
            f"records_count={h.records_count}, compression={h.compression.name}, size={h.size_in_bytes})"
        )
