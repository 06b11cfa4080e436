"""The in-flight offset map of a share partition: contiguous offset ranges, each with one record state.

A share partition tracks every offset from its start offset (SPSO) up to its end offset (SPEO) as a sorted
list of non-overlapping ranges that together cover ``[start, end)`` without holes. A range holds one
``(state, delivery_count, member_id, deadline)``: a whole fetched record batch stays one range until an
acknowledgement, a partial redelivery or a lock expiry treats part of it differently; it is then split at
the offsets where the states differ, and neighbours that become equal again are merged. Memory and the cost
of an operation are therefore proportional to the number of distinct ranges, never to the number of
records (Kafka keeps a batch-level state and explodes it to per-offset state on the first difference; a
range split is the same idea with less memory).

Lookups are binary searches over a parallel list of first offsets; a split or merge is a list insert or
slice assignment (a memmove of pointers), so an operation on a span costs O(log n + ranges touched) plus that
memmove, with n the number of ranges.

Not thread-safe: the owning ``SharePartition`` is used from one event loop.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from broker.share.state_batches import RecordState, StateBatch

__all__ = ["FINISHED_STATES", "InFlightMap", "InFlightRange", "load_in_flight"]

FINISHED_STATES = frozenset({RecordState.ACKNOWLEDGED, RecordState.ARCHIVED})


@dataclass(slots=True)
class InFlightRange:
    """Offsets ``first..last`` (inclusive) sharing one state; member and deadline only while ACQUIRED."""

    first: int
    last: int
    state: RecordState
    delivery_count: int
    member_id: str | None = None
    deadline: float | None = None

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def same_state(self, other: InFlightRange) -> bool:
        return (
            self.state == other.state
            and self.delivery_count == other.delivery_count
            and self.member_id == other.member_id
            and self.deadline == other.deadline
        )

    def copy(self, first: int, last: int) -> InFlightRange:
        return InFlightRange(first, last, self.state, self.delivery_count, self.member_id, self.deadline)


class InFlightMap:
    """Sorted, contiguous, non-overlapping ranges with a split/merge API."""

    __slots__ = ("_firsts", "_ranges")

    def __init__(self) -> None:
        self._ranges: list[InFlightRange] = []
        self._firsts: list[int] = []

    def __len__(self) -> int:
        return len(self._ranges)

    def __iter__(self) -> Iterator[InFlightRange]:
        return iter(self._ranges)

    def __getitem__(self, index: int) -> InFlightRange:
        return self._ranges[index]

    @property
    def first_offset(self) -> int | None:
        return self._ranges[0].first if self._ranges else None

    @property
    def last_offset(self) -> int | None:
        return self._ranges[-1].last if self._ranges else None

    def append(self, entry: InFlightRange) -> None:
        """Add a range right after the last one (the map stays contiguous)."""
        if self._ranges and entry.first != self._ranges[-1].last + 1:
            raise ValueError(f"range {entry.first}-{entry.last} does not follow {self._ranges[-1].last}")
        if entry.last < entry.first:
            raise ValueError(f"empty range {entry.first}-{entry.last}")
        if self._ranges and self._ranges[-1].same_state(entry):
            self._ranges[-1].last = entry.last
            return
        self._ranges.append(entry)
        self._firsts.append(entry.first)

    def index_of(self, offset: int) -> int:
        """Index of the range holding ``offset``, or -1 when it is outside the map."""
        i = bisect.bisect_right(self._firsts, offset) - 1
        if i < 0 or self._ranges[i].last < offset:
            return -1
        return i

    def overlapping(self, first: int, last: int) -> Iterator[InFlightRange]:
        """The ranges that share at least one offset with ``first..last`` (not split)."""
        i = max(bisect.bisect_right(self._firsts, first) - 1, 0)
        while i < len(self._ranges) and self._ranges[i].first <= last:
            if self._ranges[i].last >= first:
                yield self._ranges[i]
            i += 1

    def split_at(self, offset: int) -> None:
        """Make ``offset`` the first offset of a range when it lies inside one."""
        i = self.index_of(offset)
        if i < 0 or self._ranges[i].first == offset:
            return
        entry = self._ranges[i]
        tail = entry.copy(offset, entry.last)
        entry.last = offset - 1
        self._ranges.insert(i + 1, tail)
        self._firsts.insert(i + 1, offset)

    def isolate(self, first: int, last: int) -> tuple[int, int]:
        """Split so ``first..last`` (clipped to the map) is covered by whole ranges; their index slice."""
        self.split_at(first)
        self.split_at(last + 1)
        lo = bisect.bisect_left(self._firsts, first)
        if lo > 0 and self._ranges[lo - 1].last >= first:
            lo -= 1
        hi = bisect.bisect_right(self._firsts, last)
        return lo, hi

    def merge_around(self, lo: int, hi: int) -> None:
        """Merge equal neighbours among the ranges ``lo-1 .. hi`` (the window an operation touched)."""
        start = max(lo - 1, 0)
        stop = min(hi + 1, len(self._ranges))
        if stop - start < 2:
            return
        merged: list[InFlightRange] = [self._ranges[start]]
        for entry in self._ranges[start + 1 : stop]:
            if merged[-1].same_state(entry):
                merged[-1].last = entry.last
            else:
                merged.append(entry)
        if len(merged) != stop - start:
            self._ranges[start:stop] = merged
            self._firsts[start:stop] = [entry.first for entry in merged]

    def merge_all(self) -> None:
        self.merge_around(0, len(self._ranges))

    def drop_before(self, offset: int) -> None:
        """Remove every offset below ``offset``."""
        self.split_at(offset)
        cut = bisect.bisect_left(self._firsts, offset)
        del self._ranges[:cut]
        del self._firsts[:cut]

    def ranges(self) -> list[InFlightRange]:
        return list(self._ranges)


def load_in_flight(start: int, state_batches: Iterable[StateBatch]) -> tuple[InFlightMap, int]:
    """The map a share partition starts from after a load, and its end offset: persisted batches clipped to
    ``start``; ACQUIRED as AVAILABLE; holes (offsets never delivered: Kafka's gap window) AVAILABLE with delivery
    count 0. Raises ValueError for overlapping or malformed batches."""
    in_flight = InFlightMap()
    next_offset = start
    for batch in sorted((b for b in state_batches if b.last_offset >= start), key=lambda b: b.first_offset):
        if batch.last_offset < batch.first_offset or batch.delivery_count < 0:
            raise ValueError(f"invalid persisted state batch {batch}")
        try:
            record_state = RecordState(batch.delivery_state)
        except ValueError:
            raise ValueError(f"unknown delivery state {batch.delivery_state} in {batch}") from None
        if record_state == RecordState.ACQUIRED:
            record_state = RecordState.AVAILABLE
        first = max(batch.first_offset, start)
        if first < next_offset:
            raise ValueError(f"persisted state batch {batch} overlaps offsets before {next_offset}")
        if first > next_offset:
            in_flight.append(InFlightRange(next_offset, first - 1, RecordState.AVAILABLE, 0))
        in_flight.append(InFlightRange(first, batch.last_offset, record_state, batch.delivery_count))
        next_offset = batch.last_offset + 1
    return in_flight, next_offset
