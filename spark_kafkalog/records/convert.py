"""Converting between v0/v1 message sets and v2 batches (old producers in, old consumers out).

Up-conversion of stored or fetched data (``legacy_to_batches``) keeps every record's offset, key,
value and timestamp and the wrapper's codec: a compressed wrapper becomes one batch with the same
codec; a run of uncompressed messages becomes one uncompressed batch. Offsets are kept as offset
deltas when they strictly increase (a batch ends where the next delta would not fit the int32 field,
so a gap of 2^31 or more starts a new batch); otherwise the records get consecutive deltas from the
first offset. v0 messages carry no timestamp, so their records get -1.

Up-conversion of what a producer sent (Produce v0-2, ``legacy_to_producer_batch``) follows Kafka's
``LogValidator`` instead: the client's offsets are not kept but validated or ignored, and the broker
assigns its own (the batch has base offset 0 and deltas 0..n-1, rewritten on append):

| message set                                          | outcome                                  |
|------------------------------------------------------|------------------------------------------|
| uncompressed messages (one or more)                  | one uncompressed batch; outer offsets    |
|                                                      | ignored                                  |
| one compressed wrapper                               | one batch of the wrapper's codec;        |
|                                                      | wrapper offset ignored                   |
| magic 1 wrapper: inner offsets not 0, 1, .., n-1     | ``InvalidRecordError``                   |
| magic 0 wrapper: inner offsets                       | ignored                                  |
| a wrapper plus any other message                     | ``InvalidRecordError``                   |
| messages (or inner messages) of different magic      | ``InvalidRecordError``                   |
| a compressed message inside a wrapper                | ``InvalidRecordError``                   |
| magic 1: LogAppendTime bit set by the producer       | ``InvalidTimestampError``                |
| magic 1: a record timestamp below -1                 | ``InvalidTimestampError``                |
| codec id 4 (zstd) with magic 0/1                     | ``UnsupportedCompressionError``          |
| codec id 5-7, bad size/length/CRC, payload that does | ``CorruptRecordError``                   |
| not decompress, empty wrapper, null wrapper value    |                                          |

The batch is CreateTime (-1 timestamps for magic 0); the log applies a LogAppendTime topic setting.

Down-conversion keeps absolute offsets, keys, values, timestamps (magic 1) and the codec, drops
headers and control batches, and cannot carry ZSTD. Stateless and thread-safe.
"""

from __future__ import annotations

from spark_kafkalog.records.batch import parse_batch_header
from spark_kafkalog.records.batch_builder import RecordBatchBuilder
from spark_kafkalog.records.batch_reader import decode_batch_records
from spark_kafkalog.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression, compress
from spark_kafkalog.records.errors import (
    CorruptRecordError,
    InvalidRecordError,
    InvalidTimestampError,
    UnsupportedCompressionError,
)
from spark_kafkalog.records.legacy import (
    CODEC_MASK,
    TIMESTAMP_TYPE_BIT,
    RawMessage,
    decode_legacy_entry,
    encode_message,
    read_inner_messages,
    read_message,
)
from spark_kafkalog.records.record import Record
from spark_kafkalog.records.splitter import iter_batches

__all__ = ["batch_to_legacy", "legacy_to_batches", "legacy_to_producer_batch"]

MAX_OFFSET_DELTA = (1 << 31) - 1  # last_offset_delta and record offset deltas are int32
MAX_OFFSET = (1 << 63) - 1


def legacy_to_batches(message_set_bytes) -> list[bytes]:
    """v2 batches holding the records of a complete v0/v1 message set, in order."""
    batches: list[bytes] = []
    run: list[Record] = []
    run_timestamp_type = 0
    pos = 0
    end = len(message_set_bytes)
    while pos < end:
        entry = decode_legacy_entry(message_set_bytes, pos)
        pos += entry.size
        if entry.compression:
            if run:
                batches.extend(_batches(run, Compression.NONE, run_timestamp_type))
                run = []
            batches.extend(_batches(entry.records, entry.compression, entry.timestamp_type))
            continue
        if run and entry.timestamp_type != run_timestamp_type:
            batches.extend(_batches(run, Compression.NONE, run_timestamp_type))
            run = []
        run_timestamp_type = entry.timestamp_type
        run.extend(entry.records)
    if run:
        batches.extend(_batches(run, Compression.NONE, run_timestamp_type))
    return batches


def _batches(records: list[Record], codec: int, timestamp_type: int) -> list[bytes]:
    """Batches of ``records`` keeping their offsets (see the module docstring)."""
    offsets = [r.offset for r in records]
    if not all(a < b for a, b in zip(offsets, offsets[1:])):
        whole = RecordBatchBuilder(codec, base_offset=offsets[0], timestamp_type=timestamp_type)
        for record in records:
            whole.append(record.timestamp, record.key, record.value)
        return [whole.build()]
    out = []
    builder: RecordBatchBuilder | None = None
    base = 0
    for record in records:
        if builder is None or record.offset - base > MAX_OFFSET_DELTA:
            if builder is not None:
                out.append(builder.build())
            base = record.offset
            builder = RecordBatchBuilder(codec, base_offset=base, timestamp_type=timestamp_type)
        builder.append(record.timestamp, record.key, record.value, offset_delta=record.offset - base)
    if builder is not None:
        out.append(builder.build())
    return out


def legacy_to_producer_batch(message_set_bytes, *, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> bytes:
    """One v2 batch (base offset 0, deltas 0..n-1) of the records of a message set a producer sent.

    Validated as Kafka's ``LogValidator`` does (the table in the module docstring); raises
    ``CorruptRecordError`` or its subclasses ``InvalidRecordError`` and ``InvalidTimestampError``, or
    ``UnsupportedCompressionError``, and nothing else. ``max_size`` bounds a wrapper's decompressed size.
    """
    end = len(message_set_bytes)
    if end == 0:
        raise InvalidRecordError("a message set with no messages")
    messages: list[RawMessage] = []
    pos = 0
    while pos < end:
        message = read_message(message_set_bytes, pos, end)
        codec = message.attributes & CODEC_MASK
        if codec == Compression.ZSTD:
            raise UnsupportedCompressionError(
                f"message at byte {pos}: compression codec zstd cannot be used with magic {message.magic}"
            )
        if messages and message.magic != messages[0].magic:
            raise InvalidRecordError(
                f"message of magic {message.magic} after messages of magic {messages[0].magic}", position=pos
            )
        if messages and (codec or messages[0].attributes & CODEC_MASK):
            raise InvalidRecordError(
                "a compressed wrapper message must be the only message of its message set", position=pos
            )
        if message.magic == 1 and message.attributes & TIMESTAMP_TYPE_BIT:
            raise InvalidTimestampError("producers cannot set the LogAppendTime timestamp type", position=pos)
        messages.append(message)
        pos += message.size
    magic = messages[0].magic
    codec = messages[0].attributes & CODEC_MASK
    if codec:
        messages = read_inner_messages(messages[0], max_size=max_size)
        for i, inner in enumerate(messages):
            if inner.magic != magic:
                raise InvalidRecordError(f"inner message {i} has magic {inner.magic}, its wrapper magic {magic}")
            if inner.attributes & CODEC_MASK:
                raise InvalidRecordError(f"inner message {i} is compressed inside a compressed wrapper")
            if magic == 1 and inner.offset != i:
                raise InvalidRecordError(
                    f"inner message {i} has relative offset {inner.offset}; "
                    "the inner offsets of a magic 1 wrapper must be 0, 1, .., n-1"
                )
    builder = RecordBatchBuilder(codec)
    for i, message in enumerate(messages):
        timestamp = message.timestamp
        if timestamp < -1:
            raise InvalidTimestampError(f"record {i} has timestamp {timestamp}; timestamps are -1 (none) or >= 0")
        builder.append(timestamp, message.key, message.value)
    return builder.build()


def batch_to_legacy(batch_bytes, magic: int) -> bytes:
    """A v0/v1 message set holding the records of the complete entries of ``batch_bytes``.

    Entries are v2 batches (v0/v1 entries are re-encoded at ``magic``); a partial trailing entry is
    ignored, as in ``iter_batches``. Raises ``UnsupportedCompressionError`` for a ZSTD batch.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy message sets have magic 0 or 1, not {magic!r}")
    out: list[bytes] = []
    for view in iter_batches(batch_bytes):
        if view.magic == 2:
            header = parse_batch_header(view.data)
            if header.is_control:
                continue
            codec = header.attributes & 0x07
            if codec == Compression.ZSTD:
                raise UnsupportedCompressionError(f"compression codec zstd cannot be down-converted to magic {magic}")
            if codec > Compression.ZSTD:
                raise CorruptRecordError(f"unknown compression codec id {codec}", position=view.position)
            records = decode_batch_records(view.data, header=header)
            timestamp_type, wrapper_timestamp = header.timestamp_type, header.max_timestamp
        else:
            entry = decode_legacy_entry(view.data)
            records, codec = entry.records, entry.compression
            timestamp_type = entry.timestamp_type
            wrapper_timestamp = max(r.timestamp for r in records)
        if records:
            out.append(_legacy(records, codec, timestamp_type, wrapper_timestamp, magic))
    return b"".join(out)


def _legacy(records: list[Record], codec: int, timestamp_type: int, wrapper_timestamp: int, magic: int) -> bytes:
    ts_bit = TIMESTAMP_TYPE_BIT if timestamp_type and magic == 1 else 0
    if not codec:
        return b"".join(encode_message(r.offset, magic, ts_bit, r.timestamp, r.key, r.value) for r in records)
    first = records[0].offset if magic == 1 else 0
    if magic == 1 and any(not -MAX_OFFSET - 1 <= r.offset - first <= MAX_OFFSET for r in records):
        raise CorruptRecordError(
            f"offsets {first}..{records[-1].offset} of one entry cannot be relative offsets of a magic 1 wrapper"
        )
    inner = b"".join(encode_message(r.offset - first, magic, 0, r.timestamp, r.key, r.value) for r in records)
    payload = compress(codec, inner, magic=magic)
    return encode_message(records[-1].offset, magic, codec | ts_bit, wrapper_timestamp, None, payload)
