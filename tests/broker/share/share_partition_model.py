"""A naive per-offset model of a share partition (a dict entry per in-flight offset), the oracle the property
test compares ``SharePartition`` with. Written from the rules in share_partition.py's docstring, without its
range map: simple enough to check by reading."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from broker.share.share_partition import AckBatch, AcknowledgeType, RecordState
from spark_kafkalog.protocol import ErrorCode

AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = (
    RecordState.AVAILABLE,
    RecordState.ACQUIRED,
    RecordState.ACKNOWLEDGED,
    RecordState.ARCHIVED,
)


@dataclass(frozen=True)
class Offset:
    state: RecordState
    count: int
    member: str | None = None
    deadline: float | None = None


class ModelPartition:
    def __init__(
        self, start: int, offsets: dict[int, Offset], *, lock_s: float, limit: int, max_in_flight: int
    ) -> None:
        self.start = start
        self.offsets = dict(offsets)
        self.end = max(offsets, default=start - 1) + 1
        self.end = max(self.end, start)
        self.lock_s = lock_s
        self.limit = limit
        self.max_in_flight = max_in_flight
        self._advance()

    def _advance(self) -> None:
        while self.start < self.end and self.offsets[self.start].state in (ACKNOWLEDGED, ARCHIVED):
            del self.offsets[self.start]
            self.start += 1

    def next_fetch_offset(self) -> int | None:
        for o in range(self.start, self.end):
            if self.offsets[o].state == AVAILABLE:
                return o
        return None if self.end - self.start >= self.max_in_flight else self.end

    def acquire(
        self, member: str, batches: Sequence[tuple[int, int]], max_records: int, fetch_offset: int | None, now: float
    ) -> list[tuple[int, int]]:
        if not batches or max_records <= 0:
            return []
        deadline = now + self.lock_s
        span_first = batches[0][0] if fetch_offset is None else min(fetch_offset, batches[0][0])
        out: list[tuple[int, int]] = []
        remaining = max_records
        for o in range(max(span_first, self.start), min(batches[-1][1], self.end - 1) + 1):
            entry = self.offsets[o]
            if entry.state != AVAILABLE:
                continue
            if not any(b <= o <= last for b, last in batches) or entry.count >= self.limit:
                self.offsets[o] = Offset(ARCHIVED, entry.count)
            elif remaining > 0:
                if self.limit > 2 and entry.count == self.limit - 1:  # the last attempt goes out alone
                    if out:
                        remaining = 0
                        continue
                    remaining = 1
                self.offsets[o] = Offset(ACQUIRED, entry.count + 1, member, deadline)
                out.append((o, entry.count + 1))
                remaining -= 1
        self._advance()
        for base, last in batches:
            if last < self.end:
                continue
            if remaining <= 0 or self.end - self.start >= self.max_in_flight:
                break
            for o in range(self.end, max(base, self.end)):
                self.offsets[o] = Offset(ARCHIVED, 0)
            for o in range(max(base, self.end), last + 1):
                self.offsets[o] = Offset(ACQUIRED, 1, member, deadline)
                out.append((o, 1))
                remaining -= 1
            self.end = last + 1
        self._advance()
        return out

    def acknowledge(self, member: str, batches: Sequence[AckBatch], now: float) -> ErrorCode:
        previous = -1
        for b in batches:
            size = b.last_offset - b.first_offset + 1
            if (
                b.first_offset < 0
                or size <= 0
                or b.first_offset <= previous
                or len(b.types) not in (1, size)
                or any(t not in set(AcknowledgeType) for t in b.types)
                or b.last_offset >= self.end
            ):
                return ErrorCode.INVALID_REQUEST
            previous = b.last_offset
        per_offset = {
            o: b.types[0] if len(b.types) == 1 else b.types[o - b.first_offset]
            for b in batches
            for o in range(max(b.first_offset, self.start), b.last_offset + 1)
        }
        for o in per_offset:
            entry = self.offsets[o]
            if entry.state != ACQUIRED or entry.member != member or entry.deadline is None or entry.deadline <= now:
                return ErrorCode.INVALID_RECORD_STATE
        for o, kind in per_offset.items():
            entry = self.offsets[o]
            if kind == AcknowledgeType.RENEW:
                self.offsets[o] = replace(entry, deadline=now + self.lock_s)
            elif kind == AcknowledgeType.ACCEPT:
                self.offsets[o] = Offset(ACKNOWLEDGED, entry.count)
            elif kind == AcknowledgeType.RELEASE:
                self.offsets[o] = self._released(entry)
            else:
                self.offsets[o] = Offset(ARCHIVED, entry.count)
        self._advance()
        return ErrorCode.NONE

    def _released(self, entry: Offset) -> Offset:
        return Offset(ARCHIVED if entry.count >= self.limit else AVAILABLE, entry.count)

    def _release_where(self, predicate: Callable[[Offset], bool]) -> bool:
        hit = [o for o, e in self.offsets.items() if e.state == ACQUIRED and predicate(e)]
        for o in hit:
            self.offsets[o] = self._released(self.offsets[o])
        self._advance()
        return bool(hit)

    def release_member(self, member: str) -> bool:
        return self._release_where(lambda e: e.member == member)

    def expire_locks(self, now: float) -> bool:
        return self._release_where(lambda e: e.deadline is not None and e.deadline <= now)

    def advance_log_start(self, log_start: int) -> bool:
        if log_start <= self.start:
            return False
        for o in range(self.start, min(log_start, self.end)):
            del self.offsets[o]
        self.start = log_start
        self.end = max(self.end, log_start)
        self._advance()
        return True

    def reload(self) -> None:
        """What a new leader sees: the persisted state, ACQUIRED as AVAILABLE."""
        for o, e in self.offsets.items():
            if e.state == ACQUIRED:
                self.offsets[o] = Offset(AVAILABLE, e.count)
