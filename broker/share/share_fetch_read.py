"""One partition's part of a ShareFetch: read batch headers at the share partition's next fetch offset, acquire.

``acquire_from_log(sp, plog, member, ...)`` (the share partition's lock held by the caller):

1. moves the share partition's start past a log start offset that retention or DeleteRecords advanced;
2. reads from ``sp.next_fetch_offset()`` (None: the in-flight limit is reached, nothing is read) below the
   high watermark (read_uncommitted) or the last stable offset (read_committed), at most ``max_bytes`` but a
   whole first batch when ``min_one_batch`` (KIP-74), batch headers only and no further than ``max_records``
   offsets (``share_log.read_batches``);
3. offers the data batches to ``sp.acquire``: control batches (transaction markers) and, read_committed, the
   batches of aborted transactions are left out, so the share partition archives their offsets as gaps (a read
   of nothing but such batches reads on, up to ``_MAX_READS`` times); record_limit mode cuts the offer to
   ``max_records`` offsets (KIP-1206);
4. returns ``PartitionFetch`` (the acquired ranges and the bytes of the batches holding them, read now) and
   whether the start offset moved (the caller writes the state then). The regions read are released before
   returning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.protocol import ErrorCode

from .share_log import LogBatch, LogSlice, aborted, read_batches, record_limit, records_for

__all__ = ["PartitionFetch", "acquire_from_log"]

_MAX_READS = 8


@dataclass
class PartitionFetch:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    records: bytes = b""
    acquired: list[Any] = field(default_factory=list)
    """``AcquiredRange``s (first offset, last offset, delivery count)."""


def acquire_from_log(
    sp: Any,
    plog: Any,
    member_id: str,
    *,
    max_records: int,
    max_bytes: int,
    min_one_batch: bool,
    record_limit: bool = False,
    read_committed: bool = False,
) -> tuple[PartitionFetch, bool]:
    """See the module docstring."""
    changed = bool(sp.advance_log_start(plog.log_start_offset))
    offset = sp.next_fetch_offset()
    if offset is None:
        return PartitionFetch(), changed
    upper = plog.last_stable_offset if read_committed else plog.high_watermark
    slices: list[LogSlice] = []
    try:
        return _acquire(
            sp,
            plog,
            member_id,
            offset,
            upper,
            slices,
            changed,
            max_records,
            max_bytes,
            min_one_batch,
            record_limit,
            read_committed,
        )
    finally:
        for sl in slices:
            sl.release()


def _acquire(
    sp: Any,
    plog: Any,
    member_id: str,
    offset: int,
    upper: int,
    slices: list[LogSlice],
    changed: bool,
    max_records: int,
    max_bytes: int,
    min_one_batch: bool,
    record_limit: bool,
    read_committed: bool,
) -> tuple[PartitionFetch, bool]:
    batches: list[LogBatch] = []
    offered: list[LogBatch] = []
    used = 0
    read_at = offset
    for _ in range(_MAX_READS):
        if read_at >= upper:
            break
        got = read_batches(
            plog, read_at, max_bytes - used, max_offset=upper, min_one_batch=min_one_batch, max_offsets=max_records
        )
        slices.append(got)
        if got.error == ErrorCode.OFFSET_OUT_OF_RANGE and read_at < got.log_start_offset and not batches:
            changed = bool(sp.advance_log_start(got.log_start_offset)) or changed
            next_offset = sp.next_fetch_offset()
            if next_offset is None:
                return PartitionFetch(), changed
            offset = read_at = next_offset
            continue
        if got.error != ErrorCode.NONE:
            return PartitionFetch(got.error, f"reading offset {read_at} failed"), changed
        if not got.batches:
            break
        excluded = _excluded(plog, got.batches, read_at, upper) if read_committed else set()
        used += got.size
        for b in got.batches:
            batches.append(b)
            if not b.control and (b.base_offset, b.last_offset) not in excluded:
                offered.append(b)
        if offered:
            break
        read_at = got.batches[-1].last_offset + 1
        min_one_batch = False
        if used >= max_bytes:
            break
    if not offered:
        return PartitionFetch(), changed
    if record_limit:
        ranges = _cut(offered, offset, max_records)
    else:
        ranges = [(b.base_offset, b.last_offset) for b in offered]
    acquired = list(sp.acquire(member_id, ranges, max_records, fetch_offset=offset))
    held = [(a.first_offset, a.last_offset) for a in acquired]
    return PartitionFetch(records=records_for(batches, held), acquired=acquired), changed


def _cut(batches: list[Any], offset: int, max_records: int) -> list[tuple[int, int]]:
    return record_limit(batches, offset, max_records)


def _excluded(plog: Any, batches: list[LogBatch], start: int, upper: int) -> set[tuple[int, int]]:
    """(base, last) of the batches of aborted transactions among ``batches``."""
    return set(aborted(batches, plog.aborted_transactions(start, upper)))
