"""Columnar record batch v2 encoding: Arrow/NumPy columns of many rows to whole batches, no per-row Python.

A column of byte strings is a ``BinaryColumn``: ``offsets`` (int64, n + 1 entries), ``data`` (the bytes) and
``nulls`` (uint8 per row, or ``None`` when no row is null) - an Arrow binary/string array's buffers, its
int32 offsets widened. The steps, each over whole arrays:

* ``key_partitions``: Kafka's default partition of every key, ``toPositive(murmur2(key)) % n`` (as
  ``records.murmur2.default_partition``);
* ``group_rows``: row indices grouped by partition, keeping row order inside a partition;
* ``split_rows``: a partition's rows cut into batches of at most ``batch_bytes`` estimated bytes;
* ``encode_records``: the records section of one batch (lengths, zigzag varints, fields), the same bytes
  as ``RecordBatchBuilder.append`` row by row;
* ``build_batch``: the 61-byte header, compression of the records section (gzip by ISA-L, see
  ``GZIP_LEVEL``; the other codecs as ``records.compression``), one CRC-32C;
* ``encode_batch``: both for one batch; uncompressed records are encoded after room for the header (one
  copy of the values, no more).

``encode_records`` and ``key_partitions`` run in the C extension ``spark_kafkalog._kernels`` when it was
built (``make install``), else in the pure-Python reference implementations here (``*_reference``), which
the tests compare with the kernel byte for byte. Headers arrive pre-encoded per row (``encode_headers``,
per-row Python: only for rows that have headers). Stateless and thread-safe.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from isal import isal_zlib

from spark_kafkalog.records.batch import ATTRIBUTES_OFFSET, BATCH_HEADER_SIZE, HEADER_STRUCT, LOG_OVERHEAD
from spark_kafkalog.records.compression import Compression, compress
from spark_kafkalog.records.crc import crc32c
from spark_kafkalog.records.murmur2 import default_partition
from spark_kafkalog.records.varint import encode_varint

try:
    from spark_kafkalog import _kernels
except ImportError:  # built without a C compiler: the reference implementations below
    _kernels = None

__all__ = [
    "HAVE_KERNELS",
    "BinaryColumn",
    "build_batch",
    "encode_batch",
    "encode_batches",
    "encode_headers",
    "encode_records",
    "encode_records_reference",
    "group_rows",
    "header_sections",
    "key_partitions",
    "key_partitions_reference",
    "record_sizes",
    "split_rows",
]

HAVE_KERNELS = _kernels is not None

# Upper bound of a record's bytes besides key, value and headers: length (5), attributes (1), timestamp
# delta (10), offset delta (5), key and value lengths (5 + 5), header count (5).
RECORD_OVERHEAD = 36
# gzip: one member deflated by ISA-L at its level 1: 390 MB/s and 2.41:1 on JSON-like 100 B values here,
# against zlib level 6 (records.compression, the per-record path) at 33 MB/s and 2.31:1
# (docs/dependencies.md); every gzip reader (Java's GZIPInputStream, librdkafka) inflates it.
GZIP_LEVEL = 1
_CRC = struct.Struct(">I")
_CRC_OFFSET = 17


@dataclass(frozen=True)
class BinaryColumn:
    """Byte strings of ``len(offsets) - 1`` rows: row i is ``data[offsets[i]:offsets[i + 1]]`` or null."""

    offsets: np.ndarray  # int64
    data: Any  # a buffer (bytes, pyarrow.Buffer, numpy uint8)
    nulls: np.ndarray | None  # uint8, 1 = null

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        """Byte length per row, -1 for null (int64)."""
        lengths = np.diff(self.offsets)
        if self.nulls is not None:
            lengths = np.where(self.nulls.view(bool), -1, lengths)
        return lengths

    def buffers(self) -> tuple[np.ndarray, Any, np.ndarray | None]:
        return self.offsets, self.data, self.nulls

    def value(self, row: int) -> bytes | None:
        if self.nulls is not None and self.nulls[row]:
            return None
        return bytes(memoryview(self.data)[int(self.offsets[row]) : int(self.offsets[row + 1])])

    @classmethod
    def of(cls, values: Any) -> BinaryColumn:
        """From a pyarrow binary/string (or large) array or chunked array, or a sequence of bytes/str/None."""
        if isinstance(values, BinaryColumn):
            return values
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if not isinstance(values, pa.Array):
            values = pa.array([v.encode("utf-8") if isinstance(v, str) else v for v in values], type=pa.binary())
        typ = values.type
        if pa.types.is_string(typ):
            values = values.view(pa.binary())
        elif pa.types.is_large_string(typ):
            values = values.view(pa.large_binary())
        elif not (pa.types.is_binary(typ) or pa.types.is_large_binary(typ)):
            raise TypeError(f"a column of byte strings must be binary or string, not {typ}")
        n = len(values)
        _, offsets_buf, data_buf = values.buffers()
        width = np.int64 if pa.types.is_large_binary(values.type) else np.int32
        if offsets_buf is None:  # an empty array
            offsets = np.zeros(n + 1, dtype=np.int64)
        else:
            offsets = np.frombuffer(offsets_buf, dtype=width)[values.offset : values.offset + n + 1].astype(
                np.int64, copy=width is not np.int64
            )
        nulls = None
        if values.null_count:
            nulls = values.is_null().to_numpy(zero_copy_only=False).view(np.uint8)
        return cls(offsets, data_buf if data_buf is not None else b"", nulls)


def record_sizes(values: BinaryColumn, keys: BinaryColumn | None, headers: BinaryColumn | None) -> np.ndarray:
    """Estimated encoded size per row (int64): an upper bound, as the per-record producer estimates."""
    sizes = np.maximum(values.lengths(), 0) + RECORD_OVERHEAD
    if keys is not None:
        sizes += np.maximum(keys.lengths(), 0)
    if headers is not None:
        sizes += np.maximum(headers.lengths(), 0)
    return sizes


# partitions -----------------------------------------------------------------------------------------
def key_partitions_reference(keys: BinaryColumn, num_partitions: int) -> np.ndarray:
    """``default_partition`` of every row's key (int32; null keys get 0: callers pick those)."""
    out = np.zeros(len(keys), dtype=np.int32)
    for i in range(len(keys)):
        key = keys.value(i)
        if key is not None:
            out[i] = default_partition(key, num_partitions)
    return out


def key_partitions(keys: BinaryColumn, num_partitions: int) -> np.ndarray:
    """Kafka's default partition of every key (int32); rows with a null key get an unspecified value."""
    if _kernels is None:
        return key_partitions_reference(keys, num_partitions)
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, not {num_partitions!r}")
    return np.frombuffer(_kernels.murmur2_partitions(keys.offsets, keys.data, num_partitions), dtype=np.int32)


def group_rows(partitions: np.ndarray, num_partitions: int) -> list[tuple[int, np.ndarray]]:
    """``[(partition, int64 row indices in row order)]`` for every partition that has rows."""
    order = np.argsort(partitions, kind="stable").astype(np.int64, copy=False)
    counts = np.bincount(partitions, minlength=num_partitions)
    ends = np.cumsum(counts)
    return [(p, order[ends[p] - counts[p] : ends[p]]) for p in np.flatnonzero(counts).tolist()]


def split_rows(rows: np.ndarray, sizes: np.ndarray, batch_bytes: int) -> list[np.ndarray]:
    """``rows`` cut into consecutive runs of at most ``batch_bytes`` estimated bytes (each run at least one
    row: a record larger than ``batch_bytes`` is a batch of its own)."""
    room = max(batch_bytes - BATCH_HEADER_SIZE, 1)
    cumulative = np.cumsum(sizes[rows])
    if not len(rows) or cumulative[-1] <= room:
        return [rows]
    out = []
    start, base, n = 0, 0, len(rows)
    while start < n:
        end = int(np.searchsorted(cumulative, base + room, side="right"))
        if end <= start:
            end = start + 1
        out.append(rows[start:end])
        base = int(cumulative[end - 1])
        start = end
    return out


# records ----------------------------------------------------------------------------------------------
def header_sections(headers: Any) -> pa.Array:
    """Each row's encoded headers section as a binary array (see ``encode_headers``)."""
    rows = headers.to_pylist() if isinstance(headers, (pa.Array, pa.ChunkedArray)) else headers
    parts: list[bytes | None] = []
    varint = encode_varint
    for i, row in enumerate(rows):
        if not row:
            parts.append(None)
            continue
        out = [varint(len(row))]
        for header in row:
            if header is None:
                raise ValueError(f"null header in row {i}; Kafka header keys are non-null strings")
            if isinstance(header, dict):
                key, value = header.get("key"), header.get("value")
            else:
                key, value = header
            if key is None:
                raise ValueError(f"null header key in row {i}; Kafka header keys are non-null strings")
            encoded = key.encode("utf-8")
            out.append(varint(len(encoded)))
            out.append(encoded)
            if value is None:
                out.append(varint(-1))
            else:
                if isinstance(value, str):
                    value = value.encode("utf-8")
                out.append(varint(len(value)))
                out.append(bytes(value))
        parts.append(b"".join(out))
    return pa.array(parts, type=pa.binary())


def encode_headers(headers: Any) -> BinaryColumn:
    """Each row's headers section (count varint, then per header: key length, UTF-8 key, value length or -1,
    value) from a pyarrow ``list<struct<key: string, value: binary>>`` array or a sequence of per-row
    ``[(key, value), ...]`` (or dicts with ``key``/``value``); a null or empty row has no section (null).
    Raises ``ValueError`` naming the row of a null header or header key. Per-row Python."""
    return BinaryColumn.of(header_sections(headers))


def encode_records_reference(
    rows: np.ndarray,
    ts_deltas: np.ndarray | None,
    values: BinaryColumn,
    keys: BinaryColumn | None,
    headers: BinaryColumn | None,
    headroom: int = 0,
) -> bytearray:
    """``headroom`` zero bytes, then the records section for ``rows`` (offset deltas 0, 1, ...), one Python
    loop per record."""
    varint = encode_varint
    out = bytearray(headroom)
    for delta, row in enumerate(rows.tolist()):
        key = keys.value(row) if keys is not None else None
        value = values.value(row)
        section = headers.value(row) if headers is not None else None
        body = b"".join(
            (
                b"\x00",
                varint(int(ts_deltas[delta]) if ts_deltas is not None else 0),
                varint(delta),
                varint(-1) if key is None else varint(len(key)) + key,
                varint(-1) if value is None else varint(len(value)) + value,
                section or b"\x00",
            )
        )
        out += varint(len(body))
        out += body
    return out


def encode_records(
    rows: np.ndarray,
    ts_deltas: np.ndarray | None,
    values: BinaryColumn,
    keys: BinaryColumn | None,
    headers: BinaryColumn | None,
    headroom: int = 0,
) -> bytearray:
    """``headroom`` zero bytes, then the records section of a batch holding ``rows`` (int64 row indices) in
    that order; ``ts_deltas`` (int64, aligned with ``rows``) are timestamp minus the batch's base timestamp,
    ``None`` for all 0."""
    if _kernels is None:
        return encode_records_reference(rows, ts_deltas, values, keys, headers, headroom)
    return _kernels.encode_records(
        np.ascontiguousarray(rows, dtype=np.int64),
        None if ts_deltas is None else np.ascontiguousarray(ts_deltas, dtype=np.int64),
        values.buffers(),
        None if keys is None else keys.buffers(),
        None if headers is None else headers.buffers(),
        headroom,
    )


def _pack_header(
    buf: bytearray,
    payload_size: int,
    count: int,
    base_timestamp: int,
    max_timestamp: int,
    compression: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> None:
    HEADER_STRUCT.pack_into(
        buf,
        0,
        0,
        BATCH_HEADER_SIZE - LOG_OVERHEAD + payload_size,
        -1,
        2,
        0,
        int(compression),
        count - 1,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    )


def _compressed(compression: int, records: Any, level: int | None) -> Any:
    if compression == Compression.GZIP and level is None:
        return isal_zlib.compress(records, GZIP_LEVEL, 31)
    return compress(compression, records, level=level)


def build_batch(
    records: Any,
    count: int,
    base_timestamp: int,
    max_timestamp: int,
    compression: int = Compression.NONE,
    *,
    level: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
) -> bytearray:
    """A v2 batch (base offset 0, CreateTime) around an encoded records section of ``count`` records,
    compressed at ``level`` (``None``: the default, ISA-L level 1 for gzip)."""
    payload = _compressed(compression, records, level) if compression else records
    header = bytearray(BATCH_HEADER_SIZE)
    _pack_header(
        header,
        len(payload),
        count,
        base_timestamp,
        max_timestamp,
        compression,
        producer_id,
        producer_epoch,
        base_sequence,
    )
    _CRC.pack_into(header, _CRC_OFFSET, crc32c(payload, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:])))
    header += payload
    return header


def encode_batch(
    rows: np.ndarray,
    timestamps: np.ndarray,
    values: BinaryColumn,
    keys: BinaryColumn | None,
    headers: BinaryColumn | None,
    compression: int = Compression.NONE,
    *,
    level: int | None = None,
    crc: bool = True,
) -> bytearray:
    """One v2 batch (base offset 0, CreateTime, no producer state) of ``rows`` in that order, ``timestamps``
    aligned with ``rows``. Uncompressed, the records are encoded straight after room for the header, which is
    then written in place (no copy of the records). ``crc=False`` leaves the CRC field 0, for a caller that
    stamps producer state and computes it then (``producer_batch.stamp_producer_state``). ``level``: see
    ``build_batch``."""
    base = int(timestamps[0])
    deltas = timestamps - base
    ts_deltas = deltas if deltas.any() else None
    max_timestamp = int(timestamps.max())
    if compression:
        records = encode_records(rows, ts_deltas, values, keys, headers)
        return build_batch(records, len(rows), base, max_timestamp, compression, level=level)
    batch = encode_records(rows, ts_deltas, values, keys, headers, BATCH_HEADER_SIZE)
    _pack_header(batch, len(batch) - BATCH_HEADER_SIZE, len(rows), base, max_timestamp, compression, -1, -1, -1)
    if crc:
        _CRC.pack_into(batch, _CRC_OFFSET, crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]))
    return batch


def encode_batches(
    values: Any,
    keys: Any = None,
    *,
    timestamps: Sequence[int] | np.ndarray | int,
    headers: Any = None,
    compression: int = Compression.NONE,
    batch_bytes: int = 1 << 20,
    rows: np.ndarray | None = None,
) -> list[tuple[bytearray, int]]:
    """``[(batch bytes, record count)]`` for ``rows`` (default: every row) of one partition, in order."""
    values = BinaryColumn.of(values)
    keys = None if keys is None else BinaryColumn.of(keys)
    headers = None if headers is None else (headers if isinstance(headers, BinaryColumn) else encode_headers(headers))
    if rows is None:
        rows = np.arange(len(values), dtype=np.int64)
    ts = np.asarray(timestamps, dtype=np.int64)
    if ts.ndim == 0:
        ts = np.full(len(values), int(ts), dtype=np.int64)
    sizes = record_sizes(values, keys, headers)
    out = []
    for run in split_rows(rows, sizes, batch_bytes):
        out.append((encode_batch(run, ts[run], values, keys, headers, compression), len(run)))
    return out
