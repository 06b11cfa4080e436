"""Pure helpers of the share partition over offset ranges: checking the record batches offered to ``acquire``
and the acknowledgement batches of ShareFetch/ShareAcknowledge, run-length encoding per-offset acknowledgement
types, and merging ranges into AcquiredRecords or persisted state batches. All ranges are inclusive
(first, last) offset pairs; nothing here keeps state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from broker.share.in_flight import InFlightRange
from broker.share.state_batches import AckBatch, AcknowledgeType, AcquiredRange, RecordState, StateBatch

__all__ = [
    "ack_type_runs",
    "check_ack_batch",
    "check_record_batches",
    "coalesce_acquired",
    "merged_state_batches",
    "present_segments",
]

ACK_TYPES = frozenset(int(t) for t in AcknowledgeType)


def check_record_batches(batches: Sequence[tuple[int, int]]) -> None:
    previous = -1
    for base, last in batches:
        if base < 0 or last < base or base <= previous:
            raise ValueError(f"record batches must be ascending, non-overlapping (base, last): {list(batches)}")
        previous = last


def present_segments(span_first: int, batches: Sequence[tuple[int, int]]) -> list[tuple[int, int, bool]]:
    """The span ``span_first..last batch`` cut into (first, last, holds records) segments."""
    segments: list[tuple[int, int, bool]] = []
    cursor = span_first
    for base, last in batches:
        if base > cursor:
            segments.append((cursor, base - 1, False))
        segments.append((max(base, cursor), last, True))
        cursor = last + 1
    return segments


def check_ack_batch(batch: AckBatch, previous_last: int, end_offset: int) -> str | None:
    size = batch.last_offset - batch.first_offset + 1
    if batch.first_offset < 0 or size <= 0:
        return f"acknowledgement batch {batch.first_offset}-{batch.last_offset} is empty or negative"
    if batch.first_offset <= previous_last:
        return f"acknowledgement batch {batch.first_offset}-{batch.last_offset} overlaps or is out of order"
    if len(batch.types) not in (1, size):
        return (
            f"acknowledgement batch {batch.first_offset}-{batch.last_offset} has {len(batch.types)} types; "
            f"expected 1 or {size}"
        )
    bad = [t for t in batch.types if t not in ACK_TYPES]
    if bad:
        return f"invalid acknowledge type {bad[0]} in batch {batch.first_offset}-{batch.last_offset}"
    if batch.last_offset >= end_offset:
        return (
            f"acknowledgement batch {batch.first_offset}-{batch.last_offset} reaches past the in-flight "
            f"records (end offset {end_offset})"
        )
    return None


def ack_type_runs(batch: AckBatch) -> Iterator[tuple[int, int, int]]:
    """(first, last, type) runs of one acknowledgement batch (per-offset types run-length encoded)."""
    if len(batch.types) == 1:
        yield batch.first_offset, batch.last_offset, batch.types[0]
        return
    run_first = batch.first_offset
    for i in range(1, len(batch.types) + 1):
        if i == len(batch.types) or batch.types[i] != batch.types[i - 1]:
            yield run_first, batch.first_offset + i - 1, batch.types[i - 1]
            run_first = batch.first_offset + i


def coalesce_acquired(acquired: list[AcquiredRange]) -> list[AcquiredRange]:
    out: list[AcquiredRange] = []
    for r in acquired:
        if out and out[-1].last_offset + 1 == r.first_offset and out[-1].delivery_count == r.delivery_count:
            out[-1] = AcquiredRange(out[-1].first_offset, r.last_offset, r.delivery_count)
        else:
            out.append(r)
    return out


def merged_state_batches(in_flight: Iterable[InFlightRange], *, persist: bool) -> list[StateBatch]:
    out: list[StateBatch] = []
    for e in in_flight:
        state = RecordState.AVAILABLE if persist and e.state == RecordState.ACQUIRED else e.state
        if out and out[-1].delivery_state == state and out[-1].delivery_count == e.delivery_count:
            out[-1] = StateBatch(out[-1].first_offset, e.last, int(state), e.delivery_count)
        else:
            out.append(StateBatch(e.first, e.last, int(state), e.delivery_count))
    return out
