"""Fetched RecordBatch v2 bytes straight into a ``pyarrow.RecordBatch`` of the Kafka read schema (no pyspark).

``KAFKA_SCHEMA`` / ``kafka_schema(include_headers)`` is Spark's Kafka source schema in the exact Arrow form
PySpark 4.3 compares against (``to_arrow_schema(schema, timezone="UTC")``, nullability included):

    | column        | Arrow type                                      | from                               |
    |---------------|-------------------------------------------------|------------------------------------|
    | key           | binary                                          | record key, null when absent       |
    | value         | binary                                          | record value, null for tombstones  |
    | topic         | string                                          |                                    |
    | partition     | int32                                           |                                    |
    | offset        | int64                                           | base_offset + offset_delta         |
    | timestamp     | timestamp[us, tz=UTC]                           | ms * 1000 (LogAppendTime: batch    |
    |               |                                                 | max_timestamp)                     |
    | timestampType | int32                                           | 0 CreateTime, 1 LogAppendTime      |
    | headers       | list<element: struct<key: string, value: binary>> | only with includeHeaders; null when |
    |               |                                                 | a record has none                  |

How a group of batches is decoded (``BatchDecoder.add`` then ``build``), per group rather than per record:

1. batch headers are read with one ``struct`` call each; control batches, empty batches and batches wholly
   outside ``[start, end)`` are skipped; each compressed record section is decompressed once
   (``records.decompress``); uncompressed sections that all view one fetch response are decoded where
   they are, other groups are joined into one buffer;
2. the record walk (``walk_records``): one pass over the records that finds each one's start by its length
   varint and the positions and values of its fields (timestamp and offset deltas, key, value, header
   count). Compiled (``spark_kafkalog._kernels.walk_records``, ``_kernels_src/decode.c``) when the extension
   is built; else ``walk_records_numpy``, its reference: record starts by a Python loop over the length
   varints (or, for many small batches, numpy steps finding the k-th record of every batch at once), the
   fields with numpy for all records at once;
3. lengths, record ends and batch ends are checked with numpy, and records outside ``[start, end)`` are
   masked out;
4. column buffers are handed to Arrow with ``pa.Array.from_buffers`` (validity bitmaps from
   ``np.packbits``); key and value bytes are gathered by Arrow's ``take`` over a zero-copy binary array
   that cuts the record data at every key (value) boundary.

Malformed data raises ``CorruptRecordError`` naming the batch's base offset. A record timestamp outside
Spark's ``TIMESTAMP`` range (0001-01-01 to 9999-12-31 UTC) raises ``RecordTimestampError`` naming topic,
partition, offset and value: Arrow would accept it and Spark would show a nonsense date. CRCs are not checked here
(the client's fetcher checks them). A ``BatchDecoder`` is used by one thread.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from spark_kafkalog.records import CorruptRecordError, decompress
from spark_kafkalog.records.batch import BATCH_HEADER_SIZE, CODEC_MASK, CONTROL_BIT, HEADER_STRUCT, TIMESTAMP_TYPE_BIT
from spark_kafkalog.records.varint import read_varlong

try:
    from spark_kafkalog import _kernels

    if not hasattr(_kernels, "walk_records"):  # an extension built before the decode kernel was added
        _kernels = None
except ImportError:  # built without a C compiler: the numpy walk
    _kernels = None

__all__ = [
    "BatchDecoder",
    "KAFKA_SCHEMA",
    "KAFKA_SCHEMA_WITH_HEADERS",
    "MAX_TIMESTAMP_MS",
    "MIN_TIMESTAMP_MS",
    "RecordTimestampError",
    "decode_batches",
    "kafka_schema",
]

MIN_TIMESTAMP_MS = -62_135_596_800_000
"""0001-01-01T00:00:00Z in milliseconds: the earliest Spark ``TIMESTAMP``."""
MAX_TIMESTAMP_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z in milliseconds: the latest Spark ``TIMESTAMP`` at millisecond precision."""
_MS_PER_YEAR = 31_556_952_000  # mean Gregorian year


class RecordTimestampError(ValueError):
    """A record whose timestamp Spark cannot represent (outside years 1-9999)."""


HEADER_TYPE = pa.list_(pa.field("element", pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])))
KAFKA_SCHEMA = pa.schema(
    [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
)
KAFKA_SCHEMA_WITH_HEADERS = KAFKA_SCHEMA.append(pa.field("headers", HEADER_TYPE))

_MIN_RECORD_BODY = 6  # attributes, timestamp delta, offset delta, key length, value length, header count


def kafka_schema(include_headers: bool) -> pa.Schema:
    return KAFKA_SCHEMA_WITH_HEADERS if include_headers else KAFKA_SCHEMA


def _zigzag(raw: np.ndarray) -> np.ndarray:
    raw = raw.astype(np.uint64, copy=False)
    return ((raw >> np.uint64(1)) ^ (np.uint64(0) - (raw & np.uint64(1)))).view(np.int64)


def _varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zigzag varints starting at every position of ``pos``: (values int64, sizes int64)."""
    b0 = buf[pos]
    two = b0 >= 0x80
    if not two.any():
        return _zigzag(b0), np.ones(len(pos), np.int64)
    b1 = buf.take(pos + 1, mode="clip")  # read for every position, used only where b0 continues
    raw = np.where(two, (b0 & 0x7F).astype(np.uint64) | ((b1 & 0x7F).astype(np.uint64) << np.uint64(7)), b0)
    size = 1 + two.astype(np.int64)
    longer = np.flatnonzero(two & (b1 >= 0x80))
    shift = 14
    while longer.size:
        if shift > 63:
            raise CorruptRecordError("varint longer than 10 bytes")
        nb = buf[pos[longer] + size[longer]]
        raw[longer] |= (nb & 0x7F).astype(np.uint64) << np.uint64(shift)
        size[longer] += 1
        longer = longer[nb >= 0x80]
        shift += 7
    return _zigzag(raw), size


def _record_starts_loop(data, section_starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Start of every record: in each section, ``count`` consecutive records found by following their
    length varints.

    Lengths are trusted here (a negative one steps ``~length`` bytes, its magnitude minus one, as the
    compiled walk does); ``_decode`` checks that every record ends where the next begins and the last one
    where its section ends.
    """
    starts: list[int] = []
    append = starts.append
    two_byte = _TWO_BYTE_STEP
    for pos, count in zip(section_starts.tolist(), counts.tolist()):
        for _ in range(count):
            append(pos)
            b = data[pos]
            if b < 0x80:
                pos += 1 + (b >> 1)
            else:
                step = two_byte[b | (data[pos + 1] << 8)]
                if step:
                    pos += step
                else:
                    length, pos = read_varlong(data, pos)
                    pos += length if length >= 0 else ~length
    return np.array(starts, np.int64)


def _two_byte_steps() -> list[int]:
    """``[first | second << 8]`` -> bytes from a record's start to its end, for two-byte length varints
    (first byte >= 0x80, second < 0x80); 0 for every other pair."""
    steps = [0] * 65536
    for first in range(0x80, 0x100):
        for second in range(0x80):
            steps[first | second << 8] = 2 + ((second << 7 | first & 0x7F) >> 1)
    return steps


_TWO_BYTE_STEP = _two_byte_steps()


def _record_starts_across(buf: np.ndarray, section_starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Same as ``_record_starts_loop`` for every section at once: step k finds the k-th record of every
    batch that has one (batches visited longest first, so the live ones are always a prefix)."""
    order = np.argsort(-counts, kind="stable")
    sorted_counts = counts[order]
    first = (np.cumsum(counts) - counts)[order]
    pos = section_starts[order].copy()
    out = np.empty(int(counts.sum()), np.int64)
    live = len(order)
    for k in range(int(sorted_counts[0])):
        while sorted_counts[live - 1] <= k:
            live -= 1
        at = pos[:live]
        out[first[:live] + k] = at
        length, size = _varints(buf, at)
        at += size + (length ^ (length >> 63))  # ~length when negative, as in the loop
        if (at < 0).any():  # wrapped around int64: numpy would index from the end
            raise IndexError("record beyond the data")
    return out


# Per-step numpy overhead of ``_record_starts_across`` in record-equivalents of the Python loop.
_STEP_COST_RECORDS = 150


def _record_starts(data, buf: np.ndarray, section_starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Record starts, with whichever method is cheaper for this shape of batches."""
    if len(counts) > 1 and int(counts.max()) * _STEP_COST_RECORDS < int(counts.sum()):
        return _record_starts_across(buf, section_starts, counts)
    return _record_starts_loop(data, section_starts, counts)


WALK_FIELDS = 11
"""Rows of ``walk_records``: start, length, record_end, ts_delta, offset_delta, key_begin, key_length,
value_begin, value_length, header_count, after (the position after the header count)."""


def walk_records_numpy(data, buf: np.ndarray | None, section_starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The record walk in Python and numpy: ``WALK_FIELDS`` x n int64 (see ``_kernels_src/decode.c``).

    The reference of the compiled ``walk_records``; raises ``IndexError`` where a field lies beyond ``data``.
    ``buf`` is ``data`` as a uint8 array: this walk reads one buffer (only the compiled one takes ``data``
    as a buffer per section, ``buf`` None).
    """
    if buf is None:
        raise ValueError("the numpy record walk reads one buffer: pass it as a uint8 array in buf")
    size = len(buf)
    starts = _record_starts(data, buf, section_starts, counts)
    length, width = _varints(buf, starts)
    body = starts + width
    p = body + 1  # attributes (unused)
    ts_delta, width = _varints(buf, p)
    p += width
    offset_delta, width = _varints(buf, p)
    p += width
    key_length, width = _varints(buf, p)
    key_begin = p + width
    p = key_begin + np.maximum(key_length, 0)
    if (p < 0).any() or (p >= size).any():  # beyond the data (or wrapped around int64)
        raise IndexError("record field beyond the data")
    value_length, width = _varints(buf, p)
    value_begin = p + width
    p = value_begin + np.maximum(value_length, 0)
    if (p < 0).any() or (p >= size).any():
        raise IndexError("record field beyond the data")
    header_count, width = _varints(buf, p)
    fields = [starts, length, body + length, ts_delta, offset_delta, key_begin, key_length, value_begin]
    return np.stack(fields + [value_length, header_count, p + width])


def _walk_compiled(data, buf: np.ndarray | None, section_starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``walk_records_numpy`` in C (``spark_kafkalog._kernels.walk_records``), same result and errors.

    ``data`` may also be a list of one buffer per section (``buf`` None), positions then being within
    each section's buffer: the numpy walk cannot do that.
    """
    fields = np.empty((WALK_FIELDS, int(counts.sum())), np.int64)
    status = _kernels.walk_records(data, section_starts, counts, fields)
    if status == 1:
        raise IndexError("record field beyond the data")
    if status:
        raise CorruptRecordError("varint longer than 10 bytes")
    return fields


walk_records = walk_records_numpy if _kernels is None else _walk_compiled
"""The record walk used by ``BatchDecoder``: compiled when the extension is built, else numpy."""


def _base_and_offset(buffer) -> tuple[object, int]:
    """The object whose memory ``buffer`` views, and where in it ``buffer`` starts (``buffer``, 0 when unknown)."""
    view = memoryview(buffer)
    base = view.obj
    if base is None or base is buffer:
        return buffer, 0
    try:
        offset = pa.py_buffer(view).address - pa.py_buffer(base).address
    except (TypeError, ValueError, BufferError):
        return buffer, 0
    if not 0 <= offset <= len(memoryview(base)) - view.nbytes:
        return buffer, 0
    return base, offset


_BINARY = pa.binary()


def _binary_array(
    data, begin: np.ndarray, length: np.ndarray, type_: pa.DataType = _BINARY, counts: np.ndarray | None = None
) -> pa.Array:
    """A binary (or string) array of ``data[begin:begin+length]``; a negative length is null.

    ``data`` is one buffer, or (compiled gather only) a list of one buffer per section, ``counts`` then
    giving the number of segments in each. Compiled: ``_kernels.gather_binary`` copies the segments
    into one buffer of Arrow's pool; else ``_binary_array_take``.
    """
    if _kernels is None:
        return _binary_array_take(data, begin, length, type_)
    n = len(length)
    offsets = np.empty(n + 1, np.int32)
    if counts is None:
        counts = np.array([n], np.int64)
    valid = length >= 0
    # out of Arrow's memory pool, which keeps freed memory for the next batch (no fresh page faults)
    values = pa.allocate_buffer(int(length.sum(where=valid)), resizable=False)
    try:
        _kernels.gather_binary(data, counts, begin, length, offsets, values)
    except ValueError as e:
        raise CorruptRecordError(str(e)) from None
    nulls = n - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(type_, n, [bitmap, pa.py_buffer(offsets), values], null_count=nulls)


def _binary_array_take(data, begin: np.ndarray, length: np.ndarray, type_: pa.DataType = _BINARY) -> pa.Array:
    """``_binary_array`` with Arrow's ``take`` (the reference of the compiled gather).

    The segments are increasing and disjoint, so ``data`` cut at every segment boundary is a valid binary
    array (gap, segment, gap, segment, ..., gap) without copying; Arrow's ``take`` of the odd elements
    then gathers the segments in C++.
    """
    n = len(length)
    valid = length >= 0
    cuts = np.empty(2 * n + 2, np.int64)
    cuts[0] = 0
    cuts[1:-1:2] = begin
    cuts[2:-1:2] = begin + np.where(valid, length, 0)
    cuts[-1] = len(data)
    if len(data) >= 1 << 31:
        raise CorruptRecordError(f"{len(data)} bytes of records do not fit in one Arrow binary column")
    pieces = pa.Array.from_buffers(
        pa.binary(), 2 * n + 1, [None, pa.py_buffer(cuts.astype(np.int32)), pa.py_buffer(data)]
    )
    gathered = pieces.take(np.arange(1, 2 * n, 2, dtype=np.int64))
    nulls = n - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    _, offsets, values = gathered.buffers()
    return pa.Array.from_buffers(type_, n, [bitmap, offsets, values], null_count=nulls, offset=gathered.offset)


def _constant_string(text: str, n: int) -> pa.Array:
    raw = text.encode("utf-8")
    offsets = np.arange(n + 1, dtype=np.int32) * len(raw)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(raw * n)])


def _numeric(values: np.ndarray, type_: pa.DataType) -> pa.Array:
    return pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])


class BatchDecoder:
    """Collects fetched v2 batches of one topic-partition and decodes them into one Arrow batch.

    ``add(buffer)`` takes the bytes of one whole v2 batch (a ``BatchView.data`` or ``bytes``; compressed or
    not); ``build()`` returns the records with offsets in ``[start, end)`` as a ``pyarrow.RecordBatch`` of
    ``kafka_schema(include_headers)`` (``None`` when none) and empties the decoder.
    """

    __slots__ = ("topic", "partition", "start", "end", "include_headers", "_sections", "_meta", "records", "size")

    def __init__(
        self, topic: str, partition: int, start: int = 0, end: int | None = None, *, include_headers: bool = False
    ):
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end
        self.include_headers = include_headers
        # (buffer, start, size, view) of each record section; the view (None for decompressed data) keeps a
        # pooled fetch buffer exported, so that it is not reused for a later response before ``build``
        self._sections: list[tuple[object, int, int, memoryview | None]] = []
        self._meta: list[tuple[int, int, int, int, int]] = []
        self.records = 0
        """Records added since the last ``build`` (an upper bound of the rows it returns)."""
        self.size = 0
        """Bytes of record data added since the last ``build`` (after decompression)."""

    def shares_buffer(self, buffer) -> bool:
        """Whether ``buffer`` views the same memory as the pending uncompressed batches (decoding them
        together then needs no copy); True when nothing is pending."""
        return not self._sections or _base_and_offset(buffer)[0] is self._sections[-1][0]

    def wants_build_before(self, buffer) -> bool:
        """Whether to ``build`` the pending records before adding ``buffer`` (a batch of another fetch
        response): decoding them together would need a copy (pending batches in another buffer, without
        the compiled walk or with headers), or pending uncompressed batches pin a pooled fetch buffer that
        the next response could otherwise reuse. Decompressed batches from several responses are decoded
        together when compiled (fewer, larger Arrow batches)."""
        if self.shares_buffer(buffer):
            return False
        if _kernels is None or self.include_headers:
            return True
        return any(view is not None for _, _, _, view in self._sections)

    def add(self, buffer) -> None:
        (base_offset, batch_length, _, magic, _, attributes, last_delta, base_ts, max_ts, _, _, _, count) = (
            HEADER_STRUCT.unpack_from(buffer, 0)
        )
        if magic != 2:
            raise CorruptRecordError(f"batch at offset {base_offset} has magic {magic}, expected a v2 batch")
        if attributes & CONTROL_BIT or count <= 0:
            return
        if base_offset + last_delta < self.start or (self.end is not None and base_offset >= self.end):
            return
        size = batch_length + 12
        if size > len(buffer) or size < BATCH_HEADER_SIZE:
            raise CorruptRecordError(f"batch at offset {base_offset} is truncated: {len(buffer)} of {size} bytes")
        codec = attributes & CODEC_MASK
        section: tuple[object, int, int, memoryview | None]
        if codec:
            body = decompress(codec, memoryview(buffer)[BATCH_HEADER_SIZE:size])
            section = (body, 0, len(body), None)
        else:
            base, at = _base_and_offset(buffer)
            section = (base, at + BATCH_HEADER_SIZE, size - BATCH_HEADER_SIZE, memoryview(buffer))
        log_append = 1 if attributes & TIMESTAMP_TYPE_BIT else 0
        self._sections.append(section)
        self._meta.append((base_offset, count, base_ts, max_ts, log_append))
        self.records += count
        self.size += section[2]

    def build(self) -> pa.RecordBatch | None:
        sections, meta = self._sections, self._meta
        self._sections, self._meta, self.records, self.size = [], [], 0, 0
        if not meta:
            return None
        try:
            return self._decode(sections, meta)
        except IndexError:
            raise CorruptRecordError(
                f"record data of {self.topic}-{self.partition} from offset {meta[0][0]} is truncated"
            ) from None

    def _decode(self, sections: list, meta: list) -> pa.RecordBatch | None:
        data = sections[0][0]
        section_starts = np.array([s[1] for s in sections], np.int64)
        section_sizes = np.array([s[2] for s in sections], np.int64)
        in_place = (
            all(s[0] is data for s in sections) and (section_starts[1:] >= (section_starts + section_sizes)[:-1]).all()
        )
        # several buffers (or out of order): the compiled walk and gather read them where they are (the
        # header decoding needs one buffer); else one copy
        separate = not in_place and _kernels is not None and not self.include_headers
        if separate:
            data = [memoryview(b)[at : at + n] for b, at, n, _ in sections]
            section_starts = np.zeros(len(sections), np.int64)
        elif not in_place:
            data = b"".join([memoryview(b)[at : at + n] for b, at, n, _ in sections])
            section_starts = np.cumsum(section_sizes) - section_sizes
        base_offsets, counts, base_ts, max_ts, log_append = (np.array(column, np.int64) for column in zip(*meta))
        buf = None if separate else np.frombuffer(data, np.uint8)
        (
            starts,
            length,
            record_end,
            ts_delta,
            offset_delta,
            key_begin,
            key_length,
            value_begin,
            value_length,
            header_count,
            p,
        ) = walk_records(data, buf, section_starts, counts)
        section_ends = section_starts + section_sizes
        last_of_batch = np.cumsum(counts) - 1
        followed = np.ones(len(starts), bool)  # records that have a next record in the same batch
        followed[last_of_batch] = False
        if (
            (length < _MIN_RECORD_BODY).any()
            or (record_end[:-1][followed[:-1]] != starts[1:][followed[:-1]]).any()
            or (record_end[last_of_batch] != section_ends).any()
        ):
            self._raise_corrupt(meta, counts, record_end, section_ends, length)
        offsets = np.repeat(base_offsets, counts) + offset_delta
        keep = offsets >= self.start
        if self.end is not None:
            keep &= offsets < self.end
        if not keep.all():
            index = np.flatnonzero(keep)
            if not index.size:
                return None
            offsets, record_end, ts_delta = offsets[index], record_end[index], ts_delta[index]
            key_begin, key_length, value_begin, value_length = (
                key_begin[index],
                key_length[index],
                value_begin[index],
                value_length[index],
            )
            header_count, p = header_count[index], p[index]
            batch_of = np.repeat(np.arange(len(counts)), counts)[index]
            kept_per_section = np.bincount(batch_of, minlength=len(counts)).astype(np.int64)
        else:
            batch_of = np.repeat(np.arange(len(counts)), counts)
            kept_per_section = counts
        n = len(offsets)
        if (key_length < -1).any() or (value_length < -1).any() or (header_count < 0).any() or (p > record_end).any():
            bad = int(
                np.flatnonzero((key_length < -1) | (value_length < -1) | (header_count < 0) | (p > record_end))[0]
            )
            raise CorruptRecordError(
                f"record at offset {int(offsets[bad])} of {self.topic}-{self.partition} has invalid key, value or "
                "header lengths"
            )
        has_headers = header_count > 0
        if not self.include_headers and (p[~has_headers] != record_end[~has_headers]).any():
            bad = int(np.flatnonzero((p != record_end) & ~has_headers)[0])
            raise CorruptRecordError(
                f"record at offset {int(offsets[bad])} of {self.topic}-{self.partition}: fields do not add up to its length"
            )

        log_append_rec = log_append[batch_of].astype(bool)
        timestamps_ms = np.where(log_append_rec, max_ts[batch_of], base_ts[batch_of] + ts_delta)
        out_of_range = (timestamps_ms < MIN_TIMESTAMP_MS) | (timestamps_ms > MAX_TIMESTAMP_MS)
        if out_of_range.any():
            bad = int(np.flatnonzero(out_of_range)[0])
            self._raise_timestamp(int(offsets[bad]), int(timestamps_ms[bad]), bool(log_append_rec[bad]))
        columns = [
            _binary_array(data, key_begin, key_length, counts=kept_per_section),
            _binary_array(data, value_begin, value_length, counts=kept_per_section),
            _constant_string(self.topic, n),
            _numeric(np.full(n, self.partition, np.int32), pa.int32()),
            _numeric(offsets, pa.int64()),
            _numeric(timestamps_ms * 1000, pa.timestamp("us", tz="UTC")),
            _numeric(log_append_rec.astype(np.int32), pa.int32()),
        ]
        if self.include_headers:
            columns.append(self._headers(data, buf, p, header_count, record_end, offsets))
        return pa.RecordBatch.from_arrays(columns, schema=kafka_schema(self.include_headers))

    def _headers(self, data, buf, p, header_count, record_end, offsets) -> pa.Array:
        """``list<struct<key, value>>``: null for records without headers; decoded one header rank at a time."""
        n = len(header_count)
        if ((header_count * 2) > (record_end - p)).any():
            bad = int(np.flatnonzero(header_count * 2 > record_end - p)[0])
            raise CorruptRecordError(
                f"record at offset {int(offsets[bad])}: header count {int(header_count[bad])} out of bounds"
            )
        list_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(header_count, out=list_offsets[1:])
        total = int(list_offsets[-1])
        hk_begin = np.zeros(total, np.int64)
        hk_length = np.zeros(total, np.int64)
        hv_begin = np.zeros(total, np.int64)
        hv_length = np.zeros(total, np.int64)
        pos = p.copy()
        rank = 0
        active = np.flatnonzero(header_count > 0)
        while active.size:
            slot = list_offsets[active] + rank
            at = pos[active]
            k_len, size = _varints(buf, at)
            at = at + size
            hk_begin[slot], hk_length[slot] = at, k_len
            at = at + np.maximum(k_len, 0)
            v_len, size = _varints(buf, at)
            at = at + size
            hv_begin[slot], hv_length[slot] = at, v_len
            at = at + np.maximum(v_len, 0)
            if (k_len < 0).any() or (v_len < -1).any() or (at > record_end[active]).any():
                bad = int(active[np.flatnonzero((k_len < 0) | (v_len < -1) | (at > record_end[active]))[0]])
                raise CorruptRecordError(f"record at offset {int(offsets[bad])}: header {rank} has an invalid length")
            pos[active] = at
            rank += 1
            active = active[header_count[active] > rank]
        if (pos != record_end).any():
            bad = int(np.flatnonzero(pos != record_end)[0])
            raise CorruptRecordError(f"record at offset {int(offsets[bad])}: fields do not add up to its length")
        keys = _binary_array(data, hk_begin, hk_length, pa.string())
        try:
            keys.validate(full=True)
        except pa.ArrowInvalid:
            raise CorruptRecordError(f"a header key of {self.topic}-{self.partition} is not valid UTF-8") from None
        values = _binary_array(data, hv_begin, hv_length)
        entries = pa.StructArray.from_arrays([keys, values], fields=list(HEADER_TYPE.value_type))
        has = header_count > 0
        nulls = n - int(np.count_nonzero(has))
        bitmap = pa.py_buffer(np.packbits(has, bitorder="little")) if nulls else None
        return pa.Array.from_buffers(
            HEADER_TYPE, n, [bitmap, pa.py_buffer(list_offsets.astype(np.int32))], null_count=nulls, children=[entries]
        )

    def _raise_timestamp(self, offset: int, ms: int, log_append: bool) -> None:
        kind = "LogAppendTime" if log_append else "CreateTime"
        raise RecordTimestampError(
            f"Record at offset {offset} of topic {self.topic} partition {self.partition} has timestamp {ms} "
            f"({kind}, milliseconds since the epoch, about year {1970 + ms // _MS_PER_YEAR}), outside Spark's "
            f"timestamp range 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z ({MIN_TIMESTAMP_MS} .. "
            f"{MAX_TIMESTAMP_MS} ms). The producer wrote a wrong timestamp; read around the record, e.g. "
            f'.option("startingOffsets", \'{{"{self.topic}":{{"{self.partition}":{offset + 1}}}}}\')'
        )

    def _raise_corrupt(self, meta, counts, record_end, section_ends, length) -> None:
        first_record = np.concatenate([[0], np.cumsum(counts)[:-1]])
        for (base_offset, *_), first, last, section_end in zip(meta, first_record, np.cumsum(counts) - 1, section_ends):
            ok = (length[first : last + 1] >= _MIN_RECORD_BODY).all() and record_end[last] == section_end
            if not ok:
                raise CorruptRecordError(
                    f"batch at offset {base_offset} of {self.topic}-{self.partition}: records do not fill the batch "
                    "(wrong records_count or record lengths)"
                )
        raise CorruptRecordError(f"record data of {self.topic}-{self.partition} is corrupt")


def decode_batches(
    buffers, topic: str, partition: int, start: int = 0, end: int | None = None, *, include_headers: bool = False
) -> pa.RecordBatch | None:
    """Decode whole v2 batches (bytes-like, one batch each) in one go; see ``BatchDecoder``."""
    decoder = BatchDecoder(topic, partition, start, end, include_headers=include_headers)
    for buffer in buffers:
        decoder.add(buffer)
    return decoder.build()
