"""Converting between v0/v1 message sets and v2 batches (old producers in, old consumers out).

Up-conversion keeps every record's offset, key, value and timestamp and the wrapper's codec: a
compressed wrapper becomes one batch with the same codec; a run of uncompressed messages becomes one
uncompressed batch. Offsets are kept as offset deltas when they strictly increase (the broker then
assigns the base offset in place); otherwise the records get consecutive deltas from the first
offset. v0 messages carry no timestamp, so their records get -1.

Down-conversion keeps absolute offsets, keys, values, timestamps (magic 1) and the codec, drops
headers and control batches, and cannot carry ZSTD. Stateless and thread-safe.
"""

from __future__ import annotations

from spark_kafkalog.records.batch import parse_batch_header
from spark_kafkalog.records.batch_builder import RecordBatchBuilder
from spark_kafkalog.records.batch_reader import decode_batch_records
from spark_kafkalog.records.compression import Compression, compress
from spark_kafkalog.records.errors import CorruptRecordError, UnsupportedCompressionError
from spark_kafkalog.records.legacy import TIMESTAMP_TYPE_BIT, decode_legacy_entry, encode_message
from spark_kafkalog.records.record import Record
from spark_kafkalog.records.splitter import iter_batches

__all__ = ["batch_to_legacy", "legacy_to_batches"]


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
                batches.append(_batch(run, Compression.NONE, run_timestamp_type))
                run = []
            batches.append(_batch(entry.records, entry.compression, entry.timestamp_type))
            continue
        if run and entry.timestamp_type != run_timestamp_type:
            batches.append(_batch(run, Compression.NONE, run_timestamp_type))
            run = []
        run_timestamp_type = entry.timestamp_type
        run.extend(entry.records)
    if run:
        batches.append(_batch(run, Compression.NONE, run_timestamp_type))
    return batches


def _batch(records: list[Record], codec: int, timestamp_type: int) -> bytes:
    base = records[0].offset
    offsets = [r.offset for r in records]
    keep = all(a < b for a, b in zip(offsets, offsets[1:]))
    builder = RecordBatchBuilder(codec, base_offset=base, timestamp_type=timestamp_type)
    for i, record in enumerate(records):
        builder.append(record.timestamp, record.key, record.value, offset_delta=record.offset - base if keep else i)
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
                raise UnsupportedCompressionError(
                    f"compression codec zstd cannot be down-converted to magic {magic}"
                )
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
    inner = b"".join(encode_message(r.offset - first, magic, 0, r.timestamp, r.key, r.value) for r in records)
    payload = compress(codec, inner, magic=magic)
    return encode_message(records[-1].offset, magic, codec | ts_bit, wrapper_timestamp, None, payload)
