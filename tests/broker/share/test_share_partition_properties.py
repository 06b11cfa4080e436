"""Random operation sequences on a SharePartition agree with a naive per-offset model, and keep the invariants:
no offset held by two members, finished offsets never handed out again, the SPSO at or below every in-flight
offset, the in-flight offsets exactly [SPSO, SPEO), ranges fully merged, the persisted state round-trips."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from broker.share.share_partition import AckBatch, AcknowledgeType, RecordState, SharePartition, StateBatch
from tests.broker.share.share_partition_model import ModelPartition, Offset
from tests.broker.share.share_partition_steps import FakeClock, make_partition

MEMBERS = st.sampled_from(["a", "b", "c"])
LOCK_MS = 10_000


def _expand(partition: SharePartition) -> dict[int, Offset]:
    out: dict[int, Offset] = {}
    for e in partition.ranges():
        for o in range(e.first, e.last + 1):
            out[o] = Offset(e.state, e.delivery_count, e.member_id, e.deadline)
    return out


@st.composite
def log_batches(draw: st.DrawFn, around: int) -> list[tuple[int, int]]:
    """Consecutive record batches near ``around``, with gaps between some of them."""
    cursor = max(around - draw(st.integers(0, 3)), 0)
    batches: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(0, 4))):
        cursor += draw(st.sampled_from([0, 0, 0, 1, 2]))
        length = draw(st.integers(1, 6))
        batches.append((cursor, cursor + length - 1))
        cursor += length
    return batches


@st.composite
def ack_batches(draw: st.DrawFn, start: int, end: int) -> list[AckBatch]:
    cursor = max(start - draw(st.integers(0, 2)), 0)
    out: list[AckBatch] = []
    for _ in range(draw(st.integers(1, 3))):
        cursor += draw(st.integers(0, 3))
        length = draw(st.integers(1, 5))
        first, last = cursor, cursor + length - 1
        types: tuple[int, ...]
        if draw(st.booleans()):
            types = (draw(st.sampled_from(list(AcknowledgeType))),)
        else:
            types = tuple(draw(st.lists(st.sampled_from(list(AcknowledgeType)), min_size=length, max_size=length)))
        if draw(st.integers(0, 30)) == 0:  # now and then a malformed batch
            types = types + (AcknowledgeType.ACCEPT,) if draw(st.booleans()) else (5,)
        out.append(AckBatch(first, last, types))
        cursor = last + 1
    if end > start and draw(st.integers(0, 20)) == 0:
        out.append(AckBatch(cursor, end + 2, (AcknowledgeType.ACCEPT,)))
    return out


class SharePartitionMachine(RuleBasedStateMachine):
    @initialize(
        start=st.integers(0, 5),
        persisted=st.lists(
            st.tuples(st.integers(0, 3), st.integers(1, 4), st.sampled_from(list(RecordState)), st.integers(0, 4)),
            max_size=4,
        ),
        limit=st.integers(1, 4),
        max_in_flight=st.integers(5, 40),
    )
    def setup(
        self, start: int, persisted: list[tuple[int, int, RecordState, int]], limit: int, max_in_flight: int
    ) -> None:
        self.clock = FakeClock()
        batches: list[StateBatch] = []
        cursor = start
        for gap, length, state, count in persisted:
            cursor += gap
            batches.append(StateBatch(cursor, cursor + length - 1, int(state), count))
            cursor += length
        self.sp = make_partition(
            self.clock,
            start_offset=start,
            batches=tuple(batches),
            lock_ms=LOCK_MS,
            limit=limit,
            max_in_flight=max_in_flight,
        )
        offsets: dict[int, Offset] = {}
        o = start
        for b in batches:
            for hole in range(o, b.first_offset):
                offsets[hole] = Offset(RecordState.AVAILABLE, 0)
            state = RecordState(b.delivery_state)
            for x in range(b.first_offset, b.last_offset + 1):
                offsets[x] = Offset(RecordState.AVAILABLE if state == RecordState.ACQUIRED else state, b.delivery_count)
            o = b.last_offset + 1
        self.model = ModelPartition(start, offsets, lock_s=LOCK_MS / 1000, limit=limit, max_in_flight=max_in_flight)
        self.finished: set[int] = set()

    @rule(member=MEMBERS, data=st.data(), max_records=st.integers(1, 12), with_read_offset=st.booleans())
    def acquire(self, member: str, data: st.DataObject, max_records: int, with_read_offset: bool) -> None:
        fetch = self.sp.next_fetch_offset()
        assert fetch == self.model.next_fetch_offset()
        around = self.sp.end_offset if fetch is None else fetch
        batches = data.draw(log_batches(around))
        fetch_offset = fetch if with_read_offset and fetch is not None and batches and fetch <= batches[0][1] else None
        before = dict(self.model.offsets)
        got = self.sp.acquire(member, batches, max_records, fetch_offset=fetch_offset)
        # without fetch_offset the partition takes the next_fetch_offset() it just answered
        model_read_from = fetch if fetch_offset is None else fetch_offset
        expected = self.model.acquire(member, batches, max_records, model_read_from, self.clock.now)
        flat = [(o, r.delivery_count) for r in got for o in range(r.first_offset, r.last_offset + 1)]
        assert flat == expected
        for o, _count in flat:
            assert o not in self.finished, f"finished offset {o} handed out again"
            assert o not in before or before[o].state == RecordState.AVAILABLE, f"offset {o} acquired twice"

    @rule(member=MEMBERS, data=st.data())
    def acknowledge(self, member: str, data: st.DataObject) -> None:
        batches = data.draw(ack_batches(self.sp.start_offset, self.sp.end_offset))
        code, message = self.sp.acknowledge(member, batches)
        assert code == self.model.acknowledge(member, batches, self.clock.now), message

    @rule(seconds=st.sampled_from([0.5, 3.0, 5.0, 10.0]))
    def tick(self, seconds: float) -> None:
        self.clock.now += seconds

    @rule()
    def expire(self) -> None:
        assert self.sp.expire_locks() == self.model.expire_locks(self.clock.now)

    @rule(member=MEMBERS)
    def leave(self, member: str) -> None:
        assert self.sp.release_member(member) == self.model.release_member(member)

    @rule(delta=st.integers(-2, 6))
    def log_start(self, delta: int) -> None:
        offset = max(self.sp.start_offset + delta, 0)
        assert self.sp.advance_log_start(offset) == self.model.advance_log_start(offset)

    @rule()
    def reload(self) -> None:
        state = self.sp.persisted_state()
        self.sp = make_partition(
            self.clock,
            start_offset=state.start_offset,
            batches=state.state_batches,
            lock_ms=LOCK_MS,
            limit=self.model.limit,
            max_in_flight=self.model.max_in_flight,
        )
        self.model.reload()

    @invariant()
    def matches_model(self) -> None:
        assert (self.sp.start_offset, self.sp.end_offset) == (self.model.start, self.model.end)
        assert _expand(self.sp) == self.model.offsets
        for o, e in self.model.offsets.items():
            if e.state in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                self.finished.add(o)
        self.finished.update(range(0, self.sp.start_offset))
        assert self.sp.next_fetch_offset() == self.model.next_fetch_offset()
        assert self.sp.acquired_count() == sum(
            1 for e in self.model.offsets.values() if e.state == RecordState.ACQUIRED
        )
        deadlines = [e.deadline for e in self.model.offsets.values() if e.deadline is not None]
        assert self.sp.next_lock_deadline() == (min(deadlines) if deadlines else None)

    @invariant()
    def ranges_are_contiguous_merged_and_above_the_spso(self) -> None:
        ranges = self.sp.ranges()
        if not ranges:
            assert self.sp.start_offset == self.sp.end_offset
            return
        assert ranges[0].first == self.sp.start_offset
        assert ranges[0].state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
        assert ranges[-1].last == self.sp.end_offset - 1
        for left, right in zip(ranges, ranges[1:]):
            assert right.first == left.last + 1
            assert not left.same_state(right), (left, right)
        for e in ranges:
            assert (e.member_id is not None) == (e.state == RecordState.ACQUIRED) == (e.deadline is not None)

    @invariant()
    def lag_counts_unfinished_offsets(self) -> None:
        hwm = self.sp.end_offset + 3
        unfinished = sum(
            1 for e in self.model.offsets.values() if e.state in (RecordState.AVAILABLE, RecordState.ACQUIRED)
        )
        assert self.sp.lag(hwm) == unfinished + 3


SharePartitionMachine.TestCase.settings = settings(
    max_examples=300, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestSharePartitionAgainstModel = SharePartitionMachine.TestCase
