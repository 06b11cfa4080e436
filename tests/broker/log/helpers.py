"""Shared helpers of the log store tests: batch builders and a reader of everything a log serves."""

from __future__ import annotations

from spark_kafkalog.records import Compression, Record, RecordBatchBuilder, iter_batches, iter_records

T0 = 1_700_000_000_000


def batch(
    values,
    *,
    keys=None,
    timestamps=None,
    codec: Compression = Compression.NONE,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    base_offset: int = 0,
    leader_epoch: int = -1,
) -> bytearray:
    """One v2 batch holding ``values`` (bytes or None), with optional keys and timestamps."""
    builder = RecordBatchBuilder(
        codec,
        base_offset=base_offset,
        partition_leader_epoch=leader_epoch,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )
    for i, value in enumerate(values):
        key = keys[i] if keys is not None else None
        ts = timestamps[i] if timestamps is not None else T0 + i
        builder.append(ts, key, value)
    return bytearray(builder.build())


def value_batch(n: int, tag: str = "v", size: int = 0, **kwargs) -> bytearray:
    """``n`` records with values ``<tag>-<i>`` padded to ``size`` bytes."""
    return batch([f"{tag}-{i}".encode().ljust(size, b".") for i in range(n)], **kwargs)


def read_all(plog, start: int | None = None, max_offset: int | None = None) -> list[Record]:
    """Every record the log serves from ``start`` (default: log start), following fetches to the end."""
    offset = plog.log_start_offset if start is None else start
    out: list[Record] = []
    while True:
        data = plog.read(offset, 1 << 16, max_offset=max_offset)
        assert data.error == 0, data
        if data.records is None:
            return out
        raw = data.records.read_bytes()
        data.records.release()
        progressed = False
        for record in iter_records(raw):
            if record.offset >= offset:
                out.append(record)
                offset = record.offset + 1
                progressed = True
        if not progressed:
            # a batch whose records were all compacted away (empty batch) or skipped: move past it
            views = list(iter_batches(raw))
            assert views, f"no complete batch served at offset {offset}"
            offset = max(offset, views[0].last_offset + 1)


def batches_served(plog) -> list:
    """``(base_offset, last_offset)`` of every batch the log serves."""
    out = []
    offset = plog.log_start_offset
    while True:
        data = plog.read(offset, 1 << 20)
        if data.records is None:
            return out
        views = list(iter_batches(data.records.read_bytes()))
        data.records.release()
        out.extend((v.base_offset, v.last_offset) for v in views)
        offset = views[-1].last_offset + 1
