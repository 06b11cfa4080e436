"""A small step language for table-driven share-partition tests, and a fake monotonic clock.

A scenario is a list of steps run against one ``SharePartition``:

- ``Acquire(member, batches, max_records, expect)``: ``expect`` is the list of (first, last, delivery count);
- ``Ack(member, [(first, last, types...)], error)``: ``error`` is the expected ErrorCode;
- ``Tick(seconds)``, ``Expire(changed)``, ``Leave(member, changed)``, ``LogStart(offset, changed)``,
  ``NextFetch(offset)``;
- ``Expect(start, end, batches)``: ``batches`` are (first, last, state letter, delivery count) with letters
  V=AVAILABLE, Q=ACQUIRED, K=ACKNOWLEDGED, X=ARCHIVED.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from broker.share.share_partition import AckBatch, PersistedState, RecordState, SharePartition, StateBatch
from spark_kafkalog.protocol import ErrorCode

TOPIC_ID = uuid.UUID("7f1f0c4e-3c1a-4d57-9a34-0b2f7d9c1a11")
LETTERS = {
    "V": RecordState.AVAILABLE,
    "Q": RecordState.ACQUIRED,
    "K": RecordState.ACKNOWLEDGED,
    "X": RecordState.ARCHIVED,
}
STATE_LETTERS = {state: letter for letter, state in LETTERS.items()}


class FakeClock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_partition(
    clock: FakeClock,
    *,
    start_offset: int = 0,
    batches: tuple[StateBatch, ...] = (),
    lock_ms: int = 30_000,
    limit: int = 3,
    max_in_flight: int = 2000,
) -> SharePartition:
    state = PersistedState(state_epoch=1, start_offset=start_offset, state_batches=batches)
    return SharePartition(
        "g",
        TOPIC_ID,
        0,
        state,
        lock_duration_ms=lock_ms,
        delivery_count_limit=limit,
        max_in_flight_records=max_in_flight,
        clock=clock,
    )


def batch(first: int, last: int, letter: str, count: int) -> StateBatch:
    return StateBatch(first, last, int(LETTERS[letter]), count)


@dataclass
class Acquire:
    member: str
    batches: list[tuple[int, int]]
    max_records: int
    expect: list[tuple[int, int, int]]
    fetch_offset: int | None = None


@dataclass
class Ack:
    member: str
    batches: list[tuple[int, ...]]
    error: ErrorCode = ErrorCode.NONE


@dataclass
class Tick:
    seconds: float


@dataclass
class Expire:
    changed: bool


@dataclass
class Leave:
    member: str
    changed: bool


@dataclass
class LogStart:
    offset: int
    changed: bool


@dataclass
class NextFetch:
    offset: int | None


@dataclass
class Expect:
    start: int
    end: int
    batches: list[tuple[int, int, str, int]] = field(default_factory=list)


Step = Acquire | Ack | Tick | Expire | Leave | LogStart | NextFetch | Expect


def ack_batches(spec: list[tuple[int, ...]]) -> list[AckBatch]:
    return [AckBatch(s[0], s[1], tuple(s[2:])) for s in spec]


def run_steps(partition: SharePartition, clock: FakeClock, steps: list[Step]) -> None:
    for number, step in enumerate(steps):
        where = f"step {number}: {step}"
        if isinstance(step, Acquire):
            got = partition.acquire(step.member, step.batches, step.max_records, fetch_offset=step.fetch_offset)
            assert [(r.first_offset, r.last_offset, r.delivery_count) for r in got] == step.expect, where
        elif isinstance(step, Ack):
            code, message = partition.acknowledge(step.member, ack_batches(step.batches))
            assert code == step.error, f"{where}: {message}"
            assert (message is None) == (code == ErrorCode.NONE), where
        elif isinstance(step, Tick):
            clock.now += step.seconds
        elif isinstance(step, Expire):
            assert partition.expire_locks() == step.changed, where
        elif isinstance(step, Leave):
            assert partition.release_member(step.member) == step.changed, where
        elif isinstance(step, LogStart):
            assert partition.advance_log_start(step.offset) == step.changed, where
        elif isinstance(step, NextFetch):
            assert partition.next_fetch_offset() == step.offset, where
        else:
            got_batches = [
                (b.first_offset, b.last_offset, STATE_LETTERS[RecordState(b.delivery_state)], b.delivery_count)
                for b in partition.in_flight()
            ]
            offsets = (partition.start_offset, partition.end_offset, got_batches)
            assert offsets == (step.start, step.end, step.batches), where
