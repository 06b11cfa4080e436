"""Share-group scenarios with kafkalog's own ``ShareConsumer``, the same code against any broker: Apache Kafka 4.4
(tests/compat/test_share_consumer_client.py, the oracle) and kafkalog (tests/client/share/test_share_consumer.py).

- ``members_split_one_partition``: two or three members of one share group on a one-partition topic each receive
  records and together read every record exactly once (delivery count 1), acknowledging as they go;
- ``released_records_come_back``: an explicit RELEASE makes the records come back with delivery count 2;
- ``rejected_records_never_come_back``: REJECTed records are not delivered again, ACCEPTed neither;
- ``close_releases_records``: records a member holds unacknowledged when it closes go to another member at once
  (long before their lock would expire), with delivery count 2;
- ``implicit_mode_accepts_on_the_next_poll``: in implicit mode a record is acknowledged by the poll after the one
  that returned it (nothing comes back after the member closes).

Every scenario takes ``share_group(bootstrap) -> group id`` (a fresh group whose members start at the earliest
offset) and ``new_topic(partitions) -> name``. Records go to partition 0 with kafkalog's ``Producer``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from spark_kafkalog.client import AcknowledgeType, ConsumerRecord, Producer, ShareConsumer
from tests.waiting import stays_true, wait_until

NewTopic = Callable[[int], str]
NewGroup = Callable[[str], str]


def produce(bootstrap: str, topic: str, values: Iterable[bytes], *, batch_each: bool = False) -> None:
    with Producer(bootstrap, linger_ms=0 if batch_each else 5) as producer:
        for value in values:
            producer.send(topic, value, partition=0)
            if batch_each:
                producer.flush()
        producer.flush()


def consumer(bootstrap: str, group: str, topic: str, *, mode: str = "explicit", **settings: object) -> ShareConsumer:
    c = ShareConsumer(bootstrap, group, acknowledgement_mode=mode, **settings)
    c.subscribe([topic])
    return c


def poll_until(c: ShareConsumer, count: int, timeout_s: float = 30.0) -> list[ConsumerRecord]:
    """Poll until ``count`` records came (in explicit mode only one poll may return records unacknowledged)."""
    got: list[ConsumerRecord] = []

    def polled() -> bool:
        got.extend(c.poll(500))
        return len(got) >= count

    wait_until(polled, timeout_s, f"{count} records (got {[(r.offset, r.delivery_count) for r in got]})")
    return got


def acknowledge(c: ShareConsumer, records: list[ConsumerRecord], kind: AcknowledgeType) -> None:
    for r in records:
        c.acknowledge(r, kind)
    results = c.commit_sync(30000)
    failed = {tp: e for tp, e in results.items() if e is not None}
    assert not failed, f"{kind.name} failed: {failed}"


class Member:
    """A ShareConsumer polling in a thread of its own, accepting what it gets (a commit per poll)."""

    def __init__(self, index: int, bootstrap: str, group: str, topic: str) -> None:
        self.index = index
        self.records: list[ConsumerRecord] = []
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._consumer = consumer(bootstrap, group, topic, max_poll_records=5)
        self.thread = threading.Thread(target=self._run, name=f"share-member-{index}", daemon=True)
        self.thread.start()

    def received(self) -> list[ConsumerRecord]:
        with self._lock:
            return list(self.records)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                records = self._consumer.poll(200)
                if records:
                    acknowledge(self._consumer, records, AcknowledgeType.ACCEPT)
                    with self._lock:
                        self.records.extend(records)
                    self._stop.wait(0.05)  # the others' turn at the partition
        except BaseException as e:  # reported by stop()
            self.errors.append(e)
        finally:
            self._consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(60)
        assert not self.thread.is_alive(), f"member {self.index} did not stop"
        assert not self.errors, f"member {self.index} failed: {self.errors[0]!r}"


def members_split_one_partition(bootstrap: str, new_topic: NewTopic, share_group: NewGroup, members: int = 3) -> None:
    topic = new_topic(1)
    group = share_group(bootstrap)
    running = [Member(i, bootstrap, group, topic) for i in range(members)]
    produced = 0
    try:
        with Producer(bootstrap, linger_ms=0) as producer:

            def every_member_got_some() -> bool:
                nonlocal produced
                for _ in range(3):  # a record batch per record, a few at a time
                    producer.send(topic, b"r%d" % produced, partition=0).result(30)
                    produced += 1
                assert not any(m.errors for m in running), [m.errors for m in running]
                return produced >= 30 and all(m.received() for m in running)

            wait_until(every_member_got_some, 60, "every member to receive records")
        total = lambda: sum(len(m.received()) for m in running)  # noqa: E731
        wait_until(lambda: total() >= produced, 30, f"all {produced} records to be received")
        stays_true(lambda: total() == produced, 1.0, "no record delivered twice")
    finally:
        for m in running:
            m._stop.set()
        for m in running:
            m.stop()
    records = [r for m in running for r in m.records]
    assert all(m.records for m in running), [len(m.records) for m in running]
    assert sorted(r.offset for r in records) == list(range(produced))
    assert {r.value for r in records} == {b"r%d" % i for i in range(produced)}
    assert {r.delivery_count for r in records} == {1}


def released_records_come_back(bootstrap: str, new_topic: NewTopic, share_group: NewGroup) -> None:
    topic = new_topic(1)
    group = share_group(bootstrap)
    produce(bootstrap, topic, [b"a", b"b", b"c"])
    with consumer(bootstrap, group, topic) as c:
        first = poll_until(c, 3)
        assert [(r.offset, r.value, r.delivery_count) for r in first] == [(0, b"a", 1), (1, b"b", 1), (2, b"c", 1)]
        acknowledge(c, first, AcknowledgeType.RELEASE)
        second = poll_until(c, 3)
        assert [(r.offset, r.delivery_count) for r in second] == [(0, 2), (1, 2), (2, 2)]
        acknowledge(c, second, AcknowledgeType.ACCEPT)
        stays_true(lambda: not c.poll(200), 1.0, "accepted records are not delivered again")


def rejected_records_never_come_back(bootstrap: str, new_topic: NewTopic, share_group: NewGroup) -> None:
    topic = new_topic(1)
    group = share_group(bootstrap)
    produce(bootstrap, topic, [b"bad", b"good"])
    with consumer(bootstrap, group, topic) as c:
        first = poll_until(c, 2)
        c.acknowledge(first[0], AcknowledgeType.REJECT)
        c.acknowledge(first[1], AcknowledgeType.ACCEPT)
        assert all(e is None for e in c.commit_sync(30000).values())
        produce(bootstrap, topic, [b"marker"])
        (marker,) = poll_until(c, 1)
        assert (marker.offset, marker.value, marker.delivery_count) == (2, b"marker", 1)
        acknowledge(c, [marker], AcknowledgeType.ACCEPT)
        stays_true(lambda: not c.poll(200), 1.0, "rejected and accepted records are not delivered again")


def close_releases_records(bootstrap: str, new_topic: NewTopic, share_group: NewGroup) -> None:
    topic = new_topic(1)
    group = share_group(bootstrap)
    produce(bootstrap, topic, [b"x0", b"x1", b"x2"])
    holder = consumer(bootstrap, group, topic)
    held = poll_until(holder, 3)
    assert [r.delivery_count for r in held] == [1, 1, 1]
    holder.close()  # explicit mode, nothing acknowledged: released
    with consumer(bootstrap, group, topic) as other:
        again = poll_until(other, 3, timeout_s=10)  # well within the 30 s default lock
        assert [(r.offset, r.value, r.delivery_count) for r in again] == [(0, b"x0", 2), (1, b"x1", 2), (2, b"x2", 2)]
        acknowledge(other, again, AcknowledgeType.ACCEPT)


def implicit_mode_accepts_on_the_next_poll(bootstrap: str, new_topic: NewTopic, share_group: NewGroup) -> None:
    topic = new_topic(1)
    group = share_group(bootstrap)
    produce(bootstrap, topic, [b"i0", b"i1"])
    with consumer(bootstrap, group, topic, mode="implicit") as c:
        got = poll_until(c, 2)
        assert [(r.offset, r.delivery_count) for r in got] == [(0, 1), (1, 1)]
        assert not c.poll(200)  # this poll accepted them
    with consumer(bootstrap, group, topic, mode="implicit") as c:
        stays_true(lambda: not c.poll(200), 1.0, "implicitly accepted records are not delivered again")
