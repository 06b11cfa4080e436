"""What a share fetch takes from the log: record batch headers only (records are never decoded, nor read whole).

``read_batches`` reads a region of a partition log as the Fetch handler does (``PartitionLog.read``: whole v2
batches from the one holding the offset, below the high watermark or the last stable offset, as a ``FileRegion``)
and walks the batches' 61-byte headers with ``pread`` (``spark_kafkalog.records.batch.HEADER_STRUCT``): base offset
(byte 0), length (8), magic (16), attributes (21; transactional 0x10, control 0x20), last offset delta (23) and
producer id (43). The walk stops at the end of the region, at a batch cut short, at anything that is not a v2
batch, and once the data batches cover ``max_offsets`` offsets from the read offset on (a fetch never acquires
more), so a large region costs a few header reads, not its size.

``aborted`` names the data batches of aborted transactions (read_committed share groups archive them, as Kafka
does), ``records_for`` reads the bytes of the batches that hold acquired offsets (the ShareFetch answer's
``records``; consecutive batches in one ``pread``), and ``record_limit`` cuts the batch list so that at most
``max_records`` offsets from the fetch offset on are offered (ShareAcquireMode record_limit, KIP-1206).

A ``LogSlice`` holds its region's file reference until ``release()`` (or garbage collection). Safe from any thread;
a slice is used by one task.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch import (
    BATCH_HEADER_SIZE,
    CONTROL_BIT,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    TRANSACTIONAL_BIT,
)

__all__ = ["LogBatch", "LogSlice", "aborted", "read_batches", "record_limit", "records_for"]


class LogBatch(NamedTuple):
    base_offset: int
    last_offset: int
    position: int
    """Of the batch in its segment file."""
    size: int
    producer_id: int
    transactional: bool
    control: bool
    region: Any
    """The ``FileRegion`` it was read from (its file stays open while the slice lives)."""


class LogSlice(NamedTuple):
    """A read: ``error`` NONE or OFFSET_OUT_OF_RANGE; ``batches`` the complete batches found."""

    error: ErrorCode
    batches: list[LogBatch]
    log_start_offset: int
    size: int
    """Bytes the walked batches take."""
    region: Any = None

    def release(self) -> None:
        if self.region is not None:
            self.region.release()


def read_batches(
    plog: Any, offset: int, max_bytes: int, *, max_offset: int, min_one_batch: bool, max_offsets: int | None = None
) -> LogSlice:
    """The batches of ``plog`` from the one holding ``offset``, at most ``max_bytes`` (the first batch whole when
    ``min_one_batch``), below ``max_offset``, until data batches cover ``max_offsets`` offsets from ``offset``."""
    got = plog.read(offset, max(max_bytes, 0), max_offset=max_offset, min_one_batch=min_one_batch)
    if got.error != ErrorCode.NONE or got.records is None or len(got.records) == 0:
        if got.records is not None:
            got.records.release()
        return LogSlice(got.error, [], got.log_start_offset, 0)
    region = got.records
    fd, start, end = region.fileno(), region.position, len(region)
    batches: list[LogBatch] = []
    pos = 0
    covered = 0
    while end - pos >= BATCH_HEADER_SIZE:
        raw = os.pread(fd, BATCH_HEADER_SIZE, start + pos)
        if len(raw) < BATCH_HEADER_SIZE:
            break
        h = HEADER_STRUCT.unpack(raw)
        base, length, magic, attributes, delta, producer_id = h[0], h[1], h[3], h[5], h[6], h[9]
        size = length + LOG_OVERHEAD
        if magic != 2 or length < MIN_BATCH_LENGTH or pos + size > end:
            break
        control = bool(attributes & CONTROL_BIT)
        last = base + delta
        batches.append(
            LogBatch(base, last, start + pos, size, producer_id, bool(attributes & TRANSACTIONAL_BIT), control, region)
        )
        pos += size
        if not control and last >= offset:
            covered += last - max(base, offset) + 1
        if max_offsets is not None and covered >= max_offsets:
            break
    return LogSlice(ErrorCode.NONE, batches, got.log_start_offset, pos, region)


def aborted(batches: Sequence[LogBatch], transactions: Sequence[Any]) -> list[tuple[int, int]]:
    """``(base, last)`` of the transactional data batches that belong to one of the aborted ``transactions``
    (``AbortedTxn``: producer id, first and last offset)."""
    out = []
    for b in batches:
        if not b.transactional or b.control:
            continue
        for t in transactions:
            if t.producer_id == b.producer_id and t.first_offset <= b.base_offset <= t.last_offset:
                out.append((b.base_offset, b.last_offset))
                break
    return out


def records_for(batches: Sequence[LogBatch], ranges: Sequence[tuple[int, int]]) -> bytes:
    """The bytes of the batches that hold an offset of ``ranges`` (inclusive ``(first, last)`` pairs)."""
    spans: list[list[Any]] = []  # [region, position, end]
    for b in batches:
        if not any(first <= b.last_offset and b.base_offset <= last for first, last in ranges):
            continue
        if spans and spans[-1][0] is b.region and spans[-1][2] == b.position:
            spans[-1][2] = b.position + b.size
        else:
            spans.append([b.region, b.position, b.position + b.size])
    chunks = []
    for region, position, stop in spans:
        fd = region.fileno()
        while position < stop:
            chunk = os.pread(fd, stop - position, position)
            if not chunk:  # truncated under us: below the high watermark this does not happen
                break
            chunks.append(chunk)
            position += len(chunk)
    return b"".join(chunks)


def record_limit(batches: Sequence[LogBatch], fetch_offset: int, max_records: int) -> list[tuple[int, int]]:
    """``(base, last)`` of ``batches`` cut so that they cover at most ``max_records`` offsets at or after
    ``fetch_offset`` (a batch may be cut in two: only its first part is offered)."""
    out: list[tuple[int, int]] = []
    left = max_records
    for b in batches:
        if b.last_offset < fetch_offset:
            continue
        if left <= 0:
            break
        first = max(b.base_offset, fetch_offset)
        last = min(b.last_offset, first + left - 1)
        out.append((b.base_offset, last))
        left -= last - first + 1
    return out
