"""kafka-python 3.0.12 as an independent reader and writer of record formats (test-only oracle).

kafka-python's magic-0 LZ4 helpers need the ``xxhash`` package, which is not installed here; ``lz4_magic0``
lends them an xxh32 whose correctness is checked against the LZ4 C library (see test_crc.py).
"""

from __future__ import annotations

import contextlib

import kafka.codec
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from spark_kafkalog.records.xxh32 import xxh32

__all__ = [
    "DefaultRecordBatch",
    "DefaultRecordBatchBuilder",
    "LegacyRecordBatch",
    "LegacyRecordBatchBuilder",
    "MemoryRecords",
    "kp_build_default",
    "kp_build_legacy",
    "kp_read_all",
    "lz4_magic0",
]


class _Digest:
    def __init__(self, data) -> None:
        self._value = xxh32(bytes(data))

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


class _XxhashShim:
    xxh32 = _Digest


@contextlib.contextmanager
def lz4_magic0():
    """Let kafka.codec's lz4_encode_old_kafka / lz4_decode_old_kafka run without the xxhash package."""
    saved = kafka.codec.xxhash
    kafka.codec.xxhash = saved or _XxhashShim
    try:
        yield
    finally:
        kafka.codec.xxhash = saved


def kp_build_default(
    records, codec=0, *, base_offset=0, producer_id=-1, producer_epoch=-1, base_sequence=-1, is_transactional=False
) -> bytes:
    """A v2 batch built by kafka-python from (timestamp, key, value, headers) tuples."""
    builder = DefaultRecordBatchBuilder(
        2, codec, is_transactional, producer_id, producer_epoch, base_sequence, batch_size=1 << 30
    )
    for i, (ts, key, value, headers) in enumerate(records):
        builder.append(i, ts, key, value, list(headers))
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big", signed=True)
    return bytes(data)


def kp_build_legacy(records, magic, codec=0) -> bytes:
    """A v0/v1 message set built by kafka-python from (timestamp, key, value) tuples, at offsets 0..n-1.

    kafka-python's producer leaves a compressed wrapper at offset 0 for the broker to assign; like a
    broker, this sets it to the offset of the last inner message (the offset is outside the CRC).
    """
    builder = LegacyRecordBatchBuilder(magic, codec, batch_size=1 << 30)
    for i, (ts, key, value) in enumerate(records):
        builder.append(i, ts if magic else None, key, value)
    with lz4_magic0():
        data = bytearray(builder.build())
    if codec:
        data[0:8] = (len(records) - 1).to_bytes(8, "big")
    return bytes(data)


def kp_read_all(buf) -> list:
    """(offset, timestamp, key, value, headers) of every record kafka-python reads from ``buf``, with
    kafka-python's own CRC checks run on every batch (v2) or message (v0/v1)."""
    out = []
    records = MemoryRecords(bytes(buf))
    with lz4_magic0():
        while records.has_next():
            batch = records.next_batch()
            assert batch.validate_crc(), "kafka-python rejects the batch (or wrapper message) CRC"
            if isinstance(batch, DefaultRecordBatch) and batch.is_control_batch:
                continue
            for record in batch:
                if not isinstance(batch, DefaultRecordBatch):
                    assert record.validate_crc(), "kafka-python rejects a message CRC"
                out.append((record.offset, record.timestamp, record.key, record.value, list(record.headers)))
    return out
