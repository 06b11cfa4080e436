"""The state of one share partition (KIP-932) on its leader: which records are in flight, who holds them,
how often they were delivered, and where the share-partition start and end offsets are.

Vocabulary (Kafka's): the share-partition start offset (SPSO, ``start_offset``) is the first offset not yet
finished; the end offset (SPEO, ``end_offset``) is the first offset never acquired. Every offset in
``[start_offset, end_offset)`` is in flight, in one ``RecordState``:

- AVAILABLE -> ACQUIRED by ``acquire`` (delivery count + 1, acquisition lock until now + lock duration; a
  record on its last delivery attempt is handed out alone, as Kafka does);
- ACQUIRED -> ACKNOWLEDGED (ACCEPT), ARCHIVED (REJECT, GAP), AVAILABLE (RELEASE, lock expiry, member left;
  ARCHIVED instead once the delivery count reached ``delivery_count_limit``); RENEW restarts the lock;
- ACKNOWLEDGED and ARCHIVED are final; the SPSO moves over a finished prefix and forgets it.

Acquisition: ``acquire`` gets the (base, last) offsets of the record batches one log read returned. It
redelivers the AVAILABLE in-flight offsets those batches cover (up to ``max_records`` exactly), then takes
new offsets at the SPEO in whole batches while fewer than ``max_records`` were acquired and fewer than
``max_in_flight_records`` offsets lie in ``[SPSO, SPEO)`` (the batch that crosses either limit is taken
whole, as Kafka does; redelivery is not limited by the in-flight count).

Gaps (offsets with no record: compaction, or control and aborted batches the caller leaves out): offsets
between two returned batches, and between the read offset and the first batch, hold no record. Kafka
acquires such gaps with the records around them and its consumer acknowledges them as GAP; here they are
archived at once (delivery count 0) and never handed out, so a consumer that does not know about gaps cannot
hold up the SPSO until their locks expire. The read offset is ``acquire``'s ``fetch_offset``, or else the
last ``next_fetch_offset()`` answer when nothing changed since (without either, offsets before the first
batch are left alone). Offsets inside a batch are always acquired (a compacted batch's missing offsets are
the consumer's GAPs, as in Kafka). Holes between persisted state batches are offsets never delivered
(Kafka's "gap window" after a load): they are AVAILABLE with delivery count 0.

Acknowledgements are all-or-nothing: INVALID_REQUEST for a malformed batch (order, overlap, types count or
value, offsets at or past the SPEO), INVALID_RECORD_STATE for an offset not ACQUIRED by the member or whose
lock deadline passed; offsets below the SPSO are already finished and ignored (as Kafka does).

Cost: the in-flight offsets are ranges (``InFlightMap``), so acquire, acknowledge, release and expiry cost
O(ranges touched + log ranges), independent of the records per batch (per-offset acknowledgement types are
run-length encoded first).

Concurrency: not thread-safe and never blocks; the share-partition manager calls it from the event loop and
persists ``persisted_state()`` after each change. Time comes from the injected ``clock`` (monotonic seconds).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence

from broker.share.batch_ranges import (
    ack_type_runs,
    check_ack_batch,
    check_record_batches,
    coalesce_acquired,
    merged_state_batches,
    present_segments,
)
from broker.share.in_flight import FINISHED_STATES, InFlightRange, load_in_flight
from broker.share.state_batches import (
    AckBatch,
    AcknowledgeType,
    AcquiredRange,
    PersistedState,
    RecordState,
    StateBatch,
)
from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "AckBatch",
    "AcknowledgeType",
    "AcquiredRange",
    "PersistedState",
    "RecordState",
    "SharePartition",
    "StateBatch",
]


class SharePartition:
    """In-flight records of one (group, topic id, partition); see the module docstring for the states."""

    def __init__(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state: PersistedState,
        *,
        lock_duration_ms: int,
        delivery_count_limit: int,
        max_in_flight_records: int,
        clock: Callable[[], float],
    ) -> None:
        if state.start_offset < 0:
            raise ValueError(
                f"share partition {group_id}:{topic_id}:{partition} needs a start offset >= 0, got {state.start_offset}"
            )
        for name, value in (
            ("lock_duration_ms", lock_duration_ms),
            ("delivery_count_limit", delivery_count_limit),
            ("max_in_flight_records", max_in_flight_records),
        ):
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        self.group_id = group_id
        self.topic_id = topic_id
        self.partition = partition
        self.lock_duration_ms = lock_duration_ms
        self.delivery_count_limit = delivery_count_limit
        self.max_in_flight_records = max_in_flight_records
        self.state_epoch = state.state_epoch
        self.leader_epoch = state.leader_epoch
        self._clock = clock
        self._map, self.end_offset = load_in_flight(state.start_offset, state.state_batches)
        self._read_from: int | None = None
        self.start_offset = state.start_offset
        self._advance_start()

    def __repr__(self) -> str:
        return (
            f"SharePartition({self.group_id!r}, {self.topic_id}, {self.partition}, "
            f"start={self.start_offset}, end={self.end_offset}, ranges={len(self._map)})"
        )

    # -- reading -------------------------------------------------------------------------------------------

    def next_fetch_offset(self) -> int | None:
        """Where the next log read starts: the first AVAILABLE offset, else the end offset; None when nothing
        is AVAILABLE and ``max_in_flight_records`` offsets are already in flight. Remembered until the state
        changes: an ``acquire`` without ``fetch_offset`` takes it as the offset its batches were read from."""
        self._read_from = self._first_available()
        return self._read_from

    def _first_available(self) -> int | None:
        for entry in self._map:
            if entry.state == RecordState.AVAILABLE:
                return entry.first
        if self.end_offset - self.start_offset >= self.max_in_flight_records:
            return None
        return self.end_offset

    def in_flight(self) -> list[StateBatch]:
        """The in-flight offsets as merged state batches (ACQUIRED shown as ACQUIRED)."""
        return merged_state_batches(self._map, persist=False)

    def persisted_state(self) -> PersistedState:
        """The state to write: ACQUIRED offsets as AVAILABLE with their delivery count (a new leader
        redelivers them)."""
        return PersistedState(
            self.state_epoch, self.start_offset, tuple(merged_state_batches(self._map, persist=True)), self.leader_epoch
        )

    def ranges(self) -> list[InFlightRange]:
        """The internal ranges with holders and lock deadlines (copies; for debugging and tests)."""
        return [e.copy(e.first, e.last) for e in self._map]

    def acquired_count(self) -> int:
        return sum(e.size for e in self._map if e.state == RecordState.ACQUIRED)

    def lag(self, high_watermark: int) -> int:
        """Records below ``high_watermark`` not yet acknowledged or archived."""
        if high_watermark <= self.start_offset:
            return 0
        finished = sum(
            min(e.last, high_watermark - 1) - e.first + 1
            for e in self._map.overlapping(self.start_offset, high_watermark - 1)
            if e.state in FINISHED_STATES
        )
        return high_watermark - self.start_offset - finished

    def next_lock_deadline(self) -> float | None:
        deadlines = [e.deadline for e in self._map if e.state == RecordState.ACQUIRED and e.deadline is not None]
        return min(deadlines) if deadlines else None

    # -- acquiring -----------------------------------------------------------------------------------------

    def acquire(
        self,
        member_id: str,
        batches: Sequence[tuple[int, int]],
        max_records: int,
        *,
        fetch_offset: int | None = None,
    ) -> list[AcquiredRange]:
        """Acquire for ``member_id`` the offsets of ``batches`` (the (base, last) offsets of consecutive record
        batches one log read returned, read from ``fetch_offset``, by default the ``next_fetch_offset()``
        answered since the last change, if any): AVAILABLE in-flight offsets
        first (delivery count + 1; archived instead when the count already reached the limit; a record on its
        last delivery attempt alone, without anything before or after it), then new
        offsets at the end offset, whole batches while fewer than ``max_records`` were acquired and fewer
        than ``max_in_flight_records`` offsets are in flight. Gaps are archived (see the module docstring)."""
        if not member_id:
            raise ValueError("acquire needs a member id")
        check_record_batches(batches)
        if not batches or max_records <= 0:
            return []
        if fetch_offset is None:
            fetch_offset = self._read_from
        deadline = self._clock() + self.lock_duration_ms / 1000.0
        span_first = batches[0][0] if fetch_offset is None else min(fetch_offset, batches[0][0])
        span_last = batches[-1][1]
        acquired: list[AcquiredRange] = []
        remaining = max_records
        # 1. redelivery: AVAILABLE in-flight offsets inside the span
        lo = max(span_first, self.start_offset)
        hi = min(span_last, self.end_offset - 1)
        if lo <= hi:
            plan = list(self._plan_redelivery(lo, hi, span_first, batches))
            for first, last, kind, count in plan:
                if kind == "acquire":
                    if remaining <= 0:
                        continue
                    last = min(last, first + remaining - 1)
                    remaining -= last - first + 1
                    if self._last_attempt(count):  # delivered alone: stop before it, or right after it
                        if acquired:
                            remaining = 0
                            continue
                        last, remaining = first, 0
                for entry in self._slice(first, last):
                    if kind == "acquire":
                        entry.state = RecordState.ACQUIRED
                        entry.delivery_count += 1
                        entry.member_id = member_id
                        entry.deadline = deadline
                        acquired.append(AcquiredRange(entry.first, entry.last, entry.delivery_count))
                    else:
                        entry.state = RecordState.ARCHIVED
            self._merge(lo, hi)
            self._advance_start()
        # 2. new offsets at the end offset, whole batches
        for base, last in batches:
            if last < self.end_offset:
                continue
            if remaining <= 0 or self.end_offset - self.start_offset >= self.max_in_flight_records:
                break
            first = max(base, self.end_offset)
            if first > self.end_offset:
                self._map.append(InFlightRange(self.end_offset, first - 1, RecordState.ARCHIVED, 0))
            self._map.append(InFlightRange(first, last, RecordState.ACQUIRED, 1, member_id, deadline))
            acquired.append(AcquiredRange(first, last, 1))
            self.end_offset = last + 1
            remaining -= last - first + 1
        self._advance_start()
        return coalesce_acquired(acquired)

    def _plan_redelivery(
        self, lo: int, hi: int, span_first: int, batches: Sequence[tuple[int, int]]
    ) -> Iterator[tuple[int, int, str, int]]:
        """(first, last, "acquire" | "archive", delivery count) pieces of the AVAILABLE offsets in ``lo..hi``: two-pointer walk
        over the in-flight ranges and the batches (offsets of the span outside every batch are gaps)."""
        pieces = [
            (e.first, e.last, e.delivery_count)
            for e in self._map.overlapping(lo, hi)
            if e.state == RecordState.AVAILABLE
        ]
        present = present_segments(span_first, batches)
        j = 0
        for first, last, count in pieces:
            first, last = max(first, lo), min(last, hi)
            exhausted = count >= self.delivery_count_limit
            while j < len(present) and present[j][1] < first:
                j += 1
            k = j
            while k < len(present) and present[k][0] <= last:
                seg_first, seg_last, is_record = present[k]
                a, b = max(seg_first, first), min(seg_last, last)
                yield a, b, "acquire" if is_record and not exhausted else "archive", count
                k += 1

    def _last_attempt(self, delivery_count: int) -> bool:
        """A record about to get its last delivery goes out alone (as Kafka does since 4.1), so a record that
        breaks its consumer does not take the delivery attempts of its neighbours with it."""
        return self.delivery_count_limit > 2 and delivery_count == self.delivery_count_limit - 1

    # -- acknowledging -------------------------------------------------------------------------------------

    def acknowledge(self, member_id: str, batches: Sequence[AckBatch]) -> tuple[ErrorCode, str | None]:
        """Apply all acknowledgement batches or none: INVALID_REQUEST for malformed batches (types, order,
        offsets past the end offset), INVALID_RECORD_STATE when an offset is not ACQUIRED by ``member_id``
        (or its lock deadline passed). Offsets below the start offset are already finished and ignored."""
        runs: list[tuple[int, int, int]] = []
        previous_last = -1
        for batch in batches:
            error = check_ack_batch(batch, previous_last, self.end_offset)
            if error is not None:
                return ErrorCode.INVALID_REQUEST, error
            previous_last = batch.last_offset
            runs.extend(r for r in ack_type_runs(batch) if r[1] >= self.start_offset)
        runs = [(max(first, self.start_offset), last, kind) for first, last, kind in runs]
        now = self._clock()
        for first, last, _kind in runs:
            for entry in self._map.overlapping(first, last):
                if entry.state != RecordState.ACQUIRED or entry.member_id != member_id:
                    holder = f" by {entry.member_id}" if entry.state == RecordState.ACQUIRED else ""
                    return ErrorCode.INVALID_RECORD_STATE, (
                        f"offsets {max(first, entry.first)}-{min(last, entry.last)} are "
                        f"{entry.state.name}{holder}, not acquired by {member_id}"
                    )
                if entry.deadline is not None and entry.deadline <= now:
                    return ErrorCode.INVALID_RECORD_STATE, (
                        f"the acquisition lock of offsets {max(first, entry.first)}-{min(last, entry.last)} expired"
                    )
        renewed = now + self.lock_duration_ms / 1000.0
        for first, last, kind in runs:
            for entry in self._slice(first, last):
                if kind == AcknowledgeType.RENEW:
                    entry.deadline = renewed
                elif kind == AcknowledgeType.ACCEPT:
                    _finish(entry, RecordState.ACKNOWLEDGED)
                elif kind == AcknowledgeType.RELEASE:
                    self._release(entry)
                else:  # GAP, REJECT
                    _finish(entry, RecordState.ARCHIVED)
        if runs:
            self._merge(runs[0][0], runs[-1][1])
        self._advance_start()
        return ErrorCode.NONE, None

    # -- releasing -----------------------------------------------------------------------------------------

    def release_member(self, member_id: str) -> bool:
        """The member left (share session closed): its ACQUIRED offsets become AVAILABLE (or ARCHIVED at the
        delivery count limit). True when something changed."""
        return self._release_where(lambda e: e.member_id == member_id)

    def expire_locks(self) -> bool:
        """Release the offsets whose acquisition lock deadline passed. True when something changed."""
        now = self._clock()
        return self._release_where(lambda e: e.deadline is not None and e.deadline <= now)

    def advance_log_start(self, log_start_offset: int) -> bool:
        """Retention or DeleteRecords moved the log start: offsets below it are gone (acquired ones too; their
        later acknowledgements are ignored)."""
        if log_start_offset <= self.start_offset:
            return False
        self._map.drop_before(log_start_offset)
        self.start_offset = log_start_offset
        self.end_offset = max(self.end_offset, log_start_offset)
        self._advance_start()
        return True

    def _release_where(self, predicate: Callable[[InFlightRange], bool]) -> bool:
        changed = False
        for entry in self._map:
            if entry.state == RecordState.ACQUIRED and predicate(entry):
                self._release(entry)
                changed = True
        if changed:
            self._map.merge_all()
            self._advance_start()
        return changed

    def _release(self, entry: InFlightRange) -> None:
        final = entry.delivery_count >= self.delivery_count_limit
        _finish(entry, RecordState.ARCHIVED if final else RecordState.AVAILABLE)

    # -- map helpers ---------------------------------------------------------------------------------------

    def _slice(self, first: int, last: int) -> list[InFlightRange]:
        lo, hi = self._map.isolate(first, last)
        return [self._map[i] for i in range(lo, hi)]

    def _merge(self, first: int, last: int) -> None:
        lo = max(self._map.index_of(first), 0)
        hi = self._map.index_of(last)
        self._map.merge_around(lo, len(self._map) if hi < 0 else hi + 1)

    def _advance_start(self) -> None:
        """After every change: move the SPSO over the finished prefix; forget the remembered read offset."""
        self._read_from = None
        for entry in self._map:
            if entry.state not in FINISHED_STATES:
                self._map.drop_before(entry.first)
                self.start_offset = entry.first
                return
        self._map.drop_before(self.end_offset)
        self.start_offset = self.end_offset


def _finish(entry: InFlightRange, state: RecordState) -> None:
    entry.state = state
    entry.member_id = None
    entry.deadline = None
