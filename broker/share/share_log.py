"""What a share fetch takes from the log: record batch headers only (records are never decoded here).

``read_batches`` reads a region of a partition log as the Fetch handler does (``PartitionLog.read``: whole v2
batches from the one holding the offset, below the high watermark or the last stable offset) and lists the
batches' headers: base and last offset (bytes 0 and 23), attributes (21; transactional 0x10, control 0x20) and
producer id (43) of each complete batch. ``aborted`` names the data batches of aborted transactions
(read_committed share groups archive them, as Kafka does), ``records_for`` the bytes of the batches that hold
acquired offsets (the ShareFetch answer's ``records``), and ``record_limit`` cuts the batch list so that at most
``max_records`` offsets from the fetch offset on are offered (ShareAcquireMode record_limit, KIP-1206).

Stateless; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.splitter import iter_batches

__all__ = ["LogBatch", "LogSlice", "aborted", "read_batches", "record_limit", "records_for"]

_TRANSACTIONAL = 0x10
_CONTROL = 0x20


class LogBatch(NamedTuple):
    base_offset: int
    last_offset: int
    position: int
    size: int
    producer_id: int
    transactional: bool
    control: bool


class LogSlice(NamedTuple):
    """A read: ``error`` NONE or OFFSET_OUT_OF_RANGE; ``data`` the region's bytes; ``batches`` its batches."""

    error: ErrorCode
    data: bytes
    batches: list[LogBatch]
    log_start_offset: int


def read_batches(plog: Any, offset: int, max_bytes: int, *, max_offset: int, min_one_batch: bool) -> LogSlice:
    """Whole batches of ``plog`` from the one holding ``offset``, at most ``max_bytes`` (the first batch whole
    when ``min_one_batch``), below ``max_offset``."""
    got = plog.read(offset, max(max_bytes, 0), max_offset=max_offset, min_one_batch=min_one_batch)
    if got.error != ErrorCode.NONE or got.records is None or len(got.records) == 0:
        return LogSlice(got.error, b"", [], got.log_start_offset)
    with got.records as region:
        data = region.read_bytes()
    batches = []
    for view in iter_batches(data):
        if view.magic != 2:  # the log holds v2 batches only (older formats are converted on append)
            continue
        h = view.header()
        batches.append(
            LogBatch(
                view.base_offset,
                view.last_offset,
                view.position,
                view.size,
                h.producer_id,
                bool(h.attributes & _TRANSACTIONAL),
                bool(h.attributes & _CONTROL),
            )
        )
    return LogSlice(ErrorCode.NONE, data, batches, got.log_start_offset)


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


def records_for(data: bytes, batches: Sequence[LogBatch], ranges: Sequence[tuple[int, int]]) -> bytes:
    """The bytes of the batches that hold an offset of ``ranges`` (inclusive ``(first, last)`` pairs)."""
    chunks = []
    for b in batches:
        if any(first <= b.last_offset and b.base_offset <= last for first, last in ranges):
            chunks.append(data[b.position : b.position + b.size])
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
