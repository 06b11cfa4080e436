"""How the share coordinator folds a write's state batches into a share-partition's stored batches (Kafka's
``PersisterStateBatchCombiner``, in our words).

``combine_state_batches(current, new, start_offset)``: each new batch, in order, replaces whatever of the
current batches its offsets cover (a current batch it overlaps only partly keeps its other offsets; a later new
batch wins over an earlier one); offsets below ``start_offset`` are dropped (a batch across it is cut to start
there; ``start_offset`` -1 drops nothing); the result is sorted by offset and adjacent batches with the same
delivery state and count are merged into one. Pure code, thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .state_batches import StateBatch


def _cut(batches: list[StateBatch], first: int, last: int) -> list[StateBatch]:
    """``batches`` without the offsets ``first..last``."""
    out: list[StateBatch] = []
    for b in batches:
        if b.last_offset < first or b.first_offset > last:
            out.append(b)
            continue
        if b.first_offset < first:
            out.append(StateBatch(b.first_offset, first - 1, b.delivery_state, b.delivery_count))
        if b.last_offset > last:
            out.append(StateBatch(last + 1, b.last_offset, b.delivery_state, b.delivery_count))
    return out


def _coalesce(batches: Iterable[StateBatch]) -> tuple[StateBatch, ...]:
    out: list[StateBatch] = []
    for b in sorted(batches, key=lambda b: b.first_offset):
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.last_offset + 1 == b.first_offset
            and (prev.delivery_state, prev.delivery_count) == (b.delivery_state, b.delivery_count)
        ):
            out[-1] = StateBatch(prev.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
        else:
            out.append(b)
    return tuple(out)


def combine_state_batches(
    current: Sequence[StateBatch], new: Sequence[StateBatch], start_offset: int
) -> tuple[StateBatch, ...]:
    """The stored batches after a write of ``new`` with ``start_offset`` (see the module docstring)."""
    merged = list(current)
    for b in new:
        merged = _cut(merged, b.first_offset, b.last_offset)
        merged.append(b)
    if start_offset >= 0:
        merged = _cut(merged, -(1 << 63), start_offset - 1)
    return _coalesce(merged)
