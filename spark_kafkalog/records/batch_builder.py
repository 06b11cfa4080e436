"""Building v2 record batches: ``RecordBatchBuilder`` and transaction control batches.

The header layout is in ``batch``, the record layout in ``batch_reader``. The builder writes
``base_timestamp`` = the first record's timestamp, ``max_timestamp`` = the largest, offset deltas
0, 1, 2, ... in append order (or as given), and the CRC-32C last. A builder is not thread-safe: one
producer thread appends and builds.
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
from spark_kafkalog.records.varint import encode_varint

__all__ = ["RecordBatchBuilder", "build_control_batch"]

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
        varint = encode_varint
        parts = [_ATTRIBUTES, varint(timestamp_ms - self._base_timestamp), varint(delta)]
        if key is None:
            parts.append(_NULL)
        else:
            parts.append(varint(len(key)))
            parts.append(key)
        if value is None:
            parts.append(_NULL)
        else:
            parts.append(varint(len(value)))
            parts.append(value)
        if headers:
            parts.append(varint(len(headers)))
            for header_key, header_value in headers:
                encoded = header_key.encode("utf-8")
                parts.append(varint(len(encoded)))
                parts.append(encoded)
                if header_value is None:
                    parts.append(_NULL)
                else:
                    parts.append(varint(len(header_value)))
                    parts.append(header_value)
        else:
            parts.append(_ZERO)
        body = b"".join(parts)
        buffer = self._buffer
        buffer += varint(len(body))
        buffer += body
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
