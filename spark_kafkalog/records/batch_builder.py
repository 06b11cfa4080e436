"""Building v2 record batches: ``RecordBatchBuilder``, ``build_batch`` and transaction control batches.

The header layout is in ``batch``, the record layout in ``batch_reader``. Both write ``base_timestamp``
= the first record's timestamp, ``max_timestamp`` = the largest, offset deltas 0, 1, 2, ... in append
order (the builder also takes given deltas), and the CRC-32C last. ``RecordBatchBuilder`` encodes each
record as it is appended; ``build_batch`` encodes a whole list of ``(timestamp_ms, key, value,
headers)`` tuples in one pass (the producer's drain-time path; the compiled ``encode_record_tuples`` of
``spark_kafkalog._kernels`` when built, the same bytes). A builder is not thread-safe: one producer
thread appends and builds; ``build_batch`` is stateless.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence

from spark_kafkalog.records.batch import (
    ATTRIBUTES_OFFSET,
    BATCH_HEADER_SIZE,
    CONTROL_BIT,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    TRANSACTIONAL_BIT,
)
from spark_kafkalog.records.compression import Compression, compress
from spark_kafkalog.records.crc import crc32c
from spark_kafkalog.records.varint import _CACHE, _CACHE_MAX, _CACHE_MIN, encode_varint

__all__ = ["RecordBatchBuilder", "build_batch", "build_control_batch", "encode_record_tuples"]

_NULL = encode_varint(-1)
_ZERO = encode_varint(0)
_ATTRIBUTES = b"\x00"

# Control record key (version int16, type int16) and value (version int16, coordinator_epoch int32).
_CONTROL_KEY = struct.Struct(">hh")
_CONTROL_VALUE = struct.Struct(">hi")
_CONTROL_TYPES = {"abort": 0, "commit": 1}


class RecordBatchBuilder:
    """Accumulates records and encodes them as one v2 batch.

    ``append`` returns the record's offset delta; ``build`` returns the batch bytes (``b""`` when no
    record was appended: Kafka has no empty batch to send). Records are encoded as they are appended;
    compression runs once, in ``build``.
    """

    __slots__ = (
        "_compression",
        "_base_offset",
        "_partition_leader_epoch",
        "_producer_id",
        "_producer_epoch",
        "_base_sequence",
        "_attributes",
        "_base_timestamp",
        "_max_timestamp",
        "_count",
        "_last_delta",
        "_buffer",
    )

    def __init__(
        self,
        compression: int = Compression.NONE,
        *,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        is_transactional: bool = False,
        timestamp_type: int = 0,
    ) -> None:
        self._compression = Compression(compression)
        if timestamp_type not in (0, 1):
            raise ValueError(f"timestamp_type must be 0 (CreateTime) or 1 (LogAppendTime), not {timestamp_type!r}")
        self._base_offset = base_offset
        self._partition_leader_epoch = partition_leader_epoch
        self._producer_id = producer_id
        self._producer_epoch = producer_epoch
        self._base_sequence = base_sequence
        self._attributes = (
            int(self._compression) | (timestamp_type << 3) | (TRANSACTIONAL_BIT if is_transactional else 0)
        )
        self._base_timestamp: int | None = None
        self._max_timestamp = -1
        self._count = 0
        self._last_delta = -1
        self._buffer = bytearray()

    def append(
        self,
        timestamp_ms: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]] = (),
        *,
        offset_delta: int | None = None,
    ) -> int:
        """Add a record; ``timestamp_ms`` None means now. Returns its offset delta.

        Offset deltas are 0, 1, 2, ... unless ``offset_delta`` is given (conversion and compaction keep
        gaps); they must strictly increase, else ``ValueError``.
        """
        if timestamp_ms is None:
            timestamp_ms = int(time.time() * 1000)
        if self._base_timestamp is None:
            self._base_timestamp = timestamp_ms
        if timestamp_ms > self._max_timestamp:
            self._max_timestamp = timestamp_ms
        if offset_delta is None:
            delta = self._last_delta + 1
        elif offset_delta > self._last_delta:
            delta = offset_delta
        else:
            raise ValueError(f"offset delta {offset_delta} does not follow {self._last_delta}")
        self._buffer += _encode_one(timestamp_ms - self._base_timestamp, delta, key, value, headers)
        self._count += 1
        self._last_delta = delta
        return delta

    def __len__(self) -> int:
        return self._count

    def estimated_size(self) -> int:
        """Size of the batch if built now without compression (an upper bound for most data)."""
        return BATCH_HEADER_SIZE + len(self._buffer)

    def build(self) -> bytes:
        """The encoded batch; the builder can keep appending and build again."""
        if not self._count:
            return b""
        payload = compress(self._compression, self._buffer) if self._compression else bytes(self._buffer)
        header = bytearray(
            HEADER_STRUCT.pack(
                self._base_offset,
                BATCH_HEADER_SIZE - LOG_OVERHEAD + len(payload),
                self._partition_leader_epoch,
                2,
                0,
                self._attributes,
                self._last_delta,
                self._base_timestamp,
                self._max_timestamp,
                self._producer_id,
                self._producer_epoch,
                self._base_sequence,
                self._count,
            )
        )
        crc = crc32c(payload, crc32c(memoryview(header)[ATTRIBUTES_OFFSET:]))
        struct.pack_into(">I", header, 17, crc)
        return b"".join((header, payload))


# varints of 0..8191 by value (1 or 2 bytes) and their sizes: the common lengths and deltas of records
_SMALL = _CACHE[-_CACHE_MIN:]
_SMALL_SIZE = [len(v) for v in _SMALL]

RecordTuple = tuple[int, "bytes | None", "bytes | None", Sequence[tuple[str, "bytes | None"]]]


def _encode_one(timestamp_delta: int, offset_delta: int, key, value, headers) -> bytes:
    """One record (length prefix included); the general case of ``encode_record_tuples``."""
    varint = encode_varint
    parts = [_ATTRIBUTES, varint(timestamp_delta), varint(offset_delta)]
    if key is None:
        parts.append(_NULL)
    else:
        parts += (varint(len(key)), key)
    if value is None:
        parts.append(_NULL)
    else:
        parts += (varint(len(value)), value)
    if headers:
        parts.append(varint(len(headers)))
        for header_key, header_value in headers:
            encoded = header_key.encode("utf-8")
            parts += (varint(len(encoded)), encoded)
            if header_value is None:
                parts.append(_NULL)
            else:
                parts += (varint(len(header_value)), header_value)
    else:
        parts.append(_ZERO)
    body = b"".join(parts)
    return varint(len(body)) + body


def _encode_record_tuples_py(
    records: Sequence[RecordTuple], base_timestamp: int, header_room: int = 0
) -> tuple[bytearray, int]:
    """Pure-Python ``encode_record_tuples``: non-null key and value, no headers and 1-2 byte varints
    take the inlined path, everything else ``_encode_one``."""
    small, size = _SMALL, _SMALL_SIZE
    hi = _CACHE_MAX
    parts: list[bytes] = [bytes(header_room)]
    extend = parts.extend
    offset_delta = 0
    max_timestamp = base_timestamp
    for timestamp, key, value, headers in records:
        if timestamp > max_timestamp:
            max_timestamp = timestamp
        delta = timestamp - base_timestamp
        if key is not None and value is not None and not headers and 0 <= delta < hi and offset_delta < hi:
            kl = len(key)
            vl = len(value)
            if kl < hi and vl < hi:
                body = 2 + size[delta] + size[offset_delta] + size[kl] + kl + size[vl] + vl
                if body < hi:
                    extend((small[body], _ATTRIBUTES, small[delta], small[offset_delta], small[kl], key, small[vl]))
                    extend((value, _ZERO))
                    offset_delta += 1
                    continue
        parts.append(_encode_one(delta, offset_delta, key, value, headers))
        offset_delta += 1
    return bytearray(b"").join(parts), max_timestamp


try:
    from spark_kafkalog._kernels import encode_record_tuples as _encode_record_tuples_c  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # no compiler at install time, or a build from before this kernel
    _encode_record_tuples_c = None


def encode_record_tuples(
    records: Sequence[RecordTuple], base_timestamp: int, header_room: int = 0
) -> tuple[bytearray, int]:
    """``(buffer, max timestamp)``: ``header_room`` zero bytes, then the records section of a v2 batch holding ``records``
    (``(timestamp_ms, key, value, headers)`` tuples; headers are ``(str, bytes | None)`` pairs) with offset
    deltas 0..n-1 and timestamp deltas from ``base_timestamp``: the compiled kernel when built and the
    records are plain (bytes, lists, tuples), else the pure-Python reference; the same bytes either way."""
    if _encode_record_tuples_c is not None:
        encoded = _encode_record_tuples_c(records, base_timestamp, header_room)
        if encoded is not None:
            return encoded
    return _encode_record_tuples_py(records, base_timestamp, header_room)


def build_batch(
    records: Sequence[RecordTuple],
    compression: int = Compression.NONE,
    *,
    level: int | None = None,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
) -> bytearray:
    """One v2 batch of ``records`` - ``(timestamp_ms, key, value, headers)`` tuples, offset deltas 0..n-1,
    CreateTime, the transactional attribute when ``transactional`` - compressed with ``compression`` at ``level``
    (``None``: the codec's default, see ``records.compression``): the bytes ``RecordBatchBuilder`` builds from the same
    appends, in a new ``bytearray`` (the records are encoded behind room for the header, which is then
    written in place: no copy of an uncompressed batch). ``bytearray()`` for no records."""
    if not records:
        return bytearray()
    base_timestamp = records[0][0]
    buf, max_timestamp = encode_record_tuples(records, base_timestamp, BATCH_HEADER_SIZE)
    max_timestamp = max(max_timestamp, -1)  # -1 (none) below, as RecordBatchBuilder
    if compression:
        payload = compress(Compression(compression), memoryview(buf)[BATCH_HEADER_SIZE:], level=level)
        buf = bytearray(BATCH_HEADER_SIZE) + payload
    HEADER_STRUCT.pack_into(
        buf,
        0,
        base_offset,
        len(buf) - LOG_OVERHEAD,
        partition_leader_epoch,
        2,
        0,
        int(compression) | (TRANSACTIONAL_BIT if transactional else 0),
        len(records) - 1,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    struct.pack_into(">I", buf, 17, crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))
    return buf


def build_control_batch(
    kind: str,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp_ms: int,
    base_offset: int = 0,
) -> bytes:
    """A transactional control batch holding one end-transaction marker (``kind`` "commit" or "abort")."""
    try:
        marker = _CONTROL_TYPES[kind]
    except KeyError:
        raise ValueError(f"control batch kind must be 'commit' or 'abort', not {kind!r}") from None
    builder = RecordBatchBuilder(
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
    )
    builder._attributes |= CONTROL_BIT
    builder.append(timestamp_ms, _CONTROL_KEY.pack(0, marker), _CONTROL_VALUE.pack(0, coordinator_epoch))
    return builder.build()
