"""The driver's share-group membership (``ShareMember``) over a scripted share group (``FakeShareGroup``): batches
acquired and acknowledged in Spark's call order, refused acknowledgements, and a driver that dies and restarts
from its checkpoint: every record processed at least once, none acknowledged twice."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.share_member import ShareMember, offsets_to_ranges
from spark_kafkalog.datasource.share_planning import ShareBatchOffset, plan_share_partitions

ACCEPT = 1
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@dataclass(frozen=True)
class Record:
    topic: str
    partition: int
    offset: int
    delivery_count: int


@dataclass
class Entry:
    state: str = "available"  # available, acquired, acknowledged
    member: str | None = None
    deadline: float = 0.0
    delivery_count: int = 0


class FakeShareGroup:
    """One share group's records as a broker keeps them: available, acquired (member, deadline), acknowledged;
    locks expire ``lock_s`` after acquisition (clock driven by the test)."""

    def __init__(self, offsets: dict[TopicPartition, int], lock_s: float = 30.0) -> None:
        self.now = 0.0
        self.lock_s = lock_s
        self.state = {(tp, o): Entry() for tp, n in offsets.items() for o in range(n)}
        self.accepted: list[tuple[TopicPartition, int]] = []

    def _expire(self) -> None:
        for entry in self.state.values():
            if entry.state == "acquired" and entry.deadline <= self.now:
                entry.state, entry.member = "available", None

    def acquire(self, member: str, max_records: int) -> list[Record]:
        self._expire()
        out: list[Record] = []
        for (tp, offset), entry in sorted(self.state.items()):
            if entry.state == "available" and len(out) < max_records:
                entry.state, entry.member, entry.deadline = "acquired", member, self.now + self.lock_s
                entry.delivery_count += 1
                out.append(Record(tp.topic, tp.partition, offset, entry.delivery_count))
        return out

    def acknowledge(self, member: str, tp: TopicPartition, offsets: list[int]) -> str | None:
        self._expire()
        if any((self.state[(tp, o)].state, self.state[(tp, o)].member) != ("acquired", member) for o in offsets):
            return "INVALID_RECORD_STATE"  # all-or-nothing per partition
        for o in offsets:
            self.state[(tp, o)].state = "acknowledged"
            self.accepted.append((tp, o))
        return None

    def release(self, member: str) -> None:
        for entry in self.state.values():
            if (entry.state, entry.member) == ("acquired", member):
                entry.state, entry.member = "available", None


class FakeShareConsumer:
    """Explicit acknowledgement mode as the client's: a poll while a delivered record is unacknowledged raises."""

    def __init__(self, group: FakeShareGroup, member: str, max_poll_records: int) -> None:
        self.group, self.member, self.max_poll_records = group, member, max_poll_records
        self.topics: list[str] = []
        self.delivered: set[tuple[TopicPartition, int]] = set()
        self.pending: dict[TopicPartition, list[int]] = {}
        self.commit_error: Exception | None = None
        self.closed = False
        self.polls = 0
        self.timeouts: list[int] = []

    def subscribe(self, topics):
        self.topics = list(topics)

    def poll(self, timeout_ms):
        if self.delivered:
            raise RuntimeError("All records must be acknowledged in explicit acknowledgement mode")
        self.polls += 1
        self.timeouts.append(timeout_ms)
        records = self.group.acquire(self.member, self.max_poll_records)
        self.delivered = {(TopicPartition(r.topic, r.partition), r.offset) for r in records}
        return records

    def acknowledge(self, record, type=ACCEPT):
        topic, partition, offset = record
        assert type == ACCEPT
        tp = TopicPartition(topic, partition)
        self.delivered.discard((tp, offset))
        self.pending.setdefault(tp, []).append(offset)

    def commit_sync(self, timeout_ms):
        pending, self.pending = self.pending, {}
        if self.commit_error is not None:
            raise self.commit_error
        return {tp: self.group.acknowledge(self.member, tp, offsets) for tp, offsets in pending.items()}

    def close(self):
        self.closed = True
        self.group.release(self.member)


def member_of(group: FakeShareGroup, name: str, max_records: int = 4) -> tuple[ShareMember, list[FakeShareConsumer]]:
    consumers: list[FakeShareConsumer] = []

    def open_consumer() -> FakeShareConsumer:
        consumers.append(FakeShareConsumer(group, name, max_records))
        return consumers[-1]

    return ShareMember("g", ["t"], open_consumer, max_wait_ms=100, acknowledge_timeout_ms=1000), consumers


def test_offsets_to_ranges_merges_per_partition():
    assert offsets_to_ranges([("t", 0, 3), ("t", 1, 0), ("t", 0, 1), ("t", 0, 2)]) == {T0: ((1, 3),), T1: ((0, 0),)}


def test_nothing_acquired_keeps_the_start_offset():
    member, consumers = member_of(FakeShareGroup({T0: 0}), "m")
    start = member.initial_offset()
    assert member.next_batch(start) is start
    assert member.next_batch(start) is start
    assert consumers[0].topics == ["t"]
    assert consumers[0].timeouts == [5000, 100]  # the first poll waits for the join too


def test_spark_call_order_acquires_then_acknowledges_each_finished_batch():
    group = FakeShareGroup({T0: 5, T1: 3})
    member, consumers = member_of(group, "m", max_records=4)
    first = member.next_batch(member.initial_offset())
    assert (first.batch, first.acquired) == (1, {T0: ((0, 3),)})
    assert member.next_batch(member.initial_offset()) is first  # asked again before Spark recorded it: same batch
    assert consumers[0].polls == 1
    second = member.next_batch(first)  # batch 1 is done: acknowledged before the next poll
    assert group.accepted == [(T0, o) for o in range(4)]
    assert (second.batch, second.acquired) == (2, {T0: ((4, 4),), T1: ((0, 2),)})
    assert [r.topic_partition for r in plan_share_partitions(second)] == [T0, T1]
    member.acknowledge_through(1)  # Spark's commit(end of batch 1) after the next batch was planned: nothing left
    assert len(group.accepted) == 4
    result = member.acknowledge_through(2)  # commit(end of batch 2)
    assert (result.batches, result.accepted, result.failed) == ((2,), 4, {})
    assert sorted(group.accepted) == sorted(group.state)
    assert member.next_batch(second) == second  # nothing left: no new batch
    member.close()
    assert consumers[0].closed and member.ledger == {}


def test_a_refused_acknowledgement_is_logged_and_the_records_come_back(caplog):
    group = FakeShareGroup({T0: 2}, lock_s=10)
    member, _ = member_of(group, "m")
    batch = member.next_batch(member.initial_offset())
    group.now = 11  # the batch took longer than the lock: the records went back to the group
    with caplog.at_level(logging.WARNING):
        result = member.acknowledge_through(batch.batch)
    assert result.failed == {T0: "INVALID_RECORD_STATE"} and result.accepted == 0
    assert "will be delivered again" in caplog.text
    again = member.next_batch(batch)
    assert (again.batch, again.acquired) == (2, {T0: ((0, 1),)})  # redelivered
    assert group.state[(T0, 0)].delivery_count == 2


def test_a_failed_commit_is_logged_and_the_batch_forgotten(caplog):
    group = FakeShareGroup({T0: 2})
    member, consumers = member_of(group, "m")
    batch = member.next_batch(member.initial_offset())
    consumers[0].commit_error = TimeoutError("no answer")
    with caplog.at_level(logging.WARNING):
        result = member.acknowledge_through(batch.batch)
    assert result.failed == {T0: "no answer"} and member.ledger == {}
    assert "acknowledging batches [1] failed" in caplog.text


def test_close_releases_unacknowledged_records_to_the_group():
    group = FakeShareGroup({T0: 3})
    member, _ = member_of(group, "m")
    member.next_batch(member.initial_offset())
    member.close()
    other, _ = member_of(group, "other")
    assert other.next_batch(other.initial_offset()).acquired == {T0: ((0, 2),)}


@pytest.mark.parametrize("dies_after", ["batch-planned", "batch-processed"])
def test_a_driver_that_dies_restarts_to_every_record_at_least_once_and_none_acknowledged_twice(dies_after, caplog):
    """Spark's loop over a checkpoint (offset log, commit log), the first driver killed mid-stream."""
    group = FakeShareGroup({T0: 6, T1: 6}, lock_s=30)
    processed: list[tuple[TopicPartition, int]] = []
    offset_log: list[ShareBatchOffset] = []
    commit_log: list[int] = []

    def process(end: ShareBatchOffset) -> None:
        for task in plan_share_partitions(end):
            processed.extend((task.topic_partition, o) for a, b in task.ranges for o in range(a, b + 1))

    first, _ = member_of(group, "driver-1", max_records=4)
    start = first.initial_offset()
    for _ in range(2):  # two batches done
        end = first.next_batch(start)
        offset_log.append(end)
        first.acknowledge_through(start.batch)  # Spark's commit of the previous batch
        process(end)
        commit_log.append(end.batch)
        start = end
    end = first.next_batch(start)  # batch 3 planned ...
    offset_log.append(end)
    if dies_after == "batch-processed":
        process(end)
        commit_log.append(end.batch)
    # ... SIGKILL: no close, the locks of batch 3 stay with the dead member
    second, _ = member_of(group, "driver-2", max_records=4)
    last = offset_log[-1]
    with caplog.at_level(logging.WARNING):
        if commit_log[-1] != last.batch:  # Spark replays the planned batch first
            second.note_replayed(last)
            process(last)
            commit_log.append(last.batch)
    assert ("acquired by an earlier run" in caplog.text) == (dies_after == "batch-planned")
    start = last
    group.now += 31  # the dead member's locks expire
    while True:
        end = second.next_batch(start)
        if end is start:
            break
        offset_log.append(end)
        process(end)
        commit_log.append(end.batch)
        start = end
    assert [b.batch for b in offset_log] == list(range(1, len(offset_log) + 1))
    assert set(processed) == set(group.state)  # every record at least once
    assert sorted(group.accepted) == sorted(group.state)  # every record acknowledged exactly once
    duplicates = {r for r in processed if processed.count(r) > 1}
    assert duplicates == {
        (tp, o) for tp, ranges in offset_log[2].acquired.items() for a, b in ranges for o in range(a, b + 1)
    }


class LateConsumer(FakeShareConsumer):
    """Polls that return nothing for the first ``empty`` calls (an assignment or share state still loading), each
    taking its whole timeout on the test's clock."""

    def __init__(self, group: FakeShareGroup, clock: list[float], empty: int) -> None:
        super().__init__(group, "m", 100)
        self.clock, self.empty = clock, empty

    def poll(self, timeout_ms):
        if self.empty > 0:
            self.empty -= 1
            self.timeouts.append(timeout_ms)
            self.clock[0] += min(timeout_ms, 300) / 1000  # an early empty answer
            return []
        return super().poll(timeout_ms)


@pytest.mark.parametrize(("available_now", "empty", "expected_batch"), [(True, 3, 1), (False, 3, 0), (True, 30, 0)])
def test_available_now_polls_for_the_join_wait_before_reporting_no_batch(available_now, empty, expected_batch):
    clock = [0.0]
    group = FakeShareGroup({T0: 2})
    consumer = LateConsumer(group, clock, empty)
    member = ShareMember(
        "g", ["t"], lambda: consumer, max_wait_ms=100, acknowledge_timeout_ms=1000, clock=lambda: clock[0]
    )
    member.consumer  # noqa: B018 - joined
    member._polled = True  # not the first poll: only AvailableNow waits the join time
    member.available_now = available_now
    assert member.next_batch(member.initial_offset()).batch == expected_batch
    assert clock[0] <= member.join_wait_ms / 1000 + 0.3


def test_a_record_the_consumer_will_not_acknowledge_or_a_missing_answer_counts_as_not_acknowledged(caplog):
    group = FakeShareGroup({T0: 2, T1: 2})
    member, consumers = member_of(group, "m")
    batch = member.next_batch(member.initial_offset())
    consumer = consumers[0]
    plain_acknowledge, plain_commit = consumer.acknowledge, consumer.commit_sync

    def acknowledge(record, type=ACCEPT):
        if record[1:] == (0, 1):
            raise RuntimeError("record t-0 at offset 1 cannot be acknowledged")
        plain_acknowledge(record, type)

    def commit_sync(timeout_ms):
        return {tp: e for tp, e in plain_commit(timeout_ms).items() if tp != T1}  # no answer for t-1

    consumer.acknowledge, consumer.commit_sync = acknowledge, commit_sync  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING):
        result = member.acknowledge_through(batch.batch)
    assert result.accepted == 0 and set(result.failed) == {T0, T1}
    assert "offset 1 could not be acknowledged" in result.failed[T0]
    assert "no answer" in result.failed[T1]
    assert member.ledger == {}
