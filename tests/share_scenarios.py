"""Share-group (KIP-932) scenarios with confluent-kafka's ShareConsumer, the same code against any broker.

The proof of issue 31, run against Apache Kafka 4.4 (tests/compat/test_share_groups_confluent.py, the oracle)
and kafkalog (tests/integration/share/, and the compat module's kafkalog parameter):

- ``three_consumers_share_one_partition``: three members of one share group on a one-partition topic each
  receive records, together all of them, none twice (every delivery count 1);
- ``released_records_come_back`` / ``expired_locks_release_records``: a RELEASE, or a lock left to expire
  (the group's ``share.record.lock.duration.ms``), makes records available again with delivery count 2;
- ``delivery_limit_archives_records``: with ``share.delivery.count.limit`` 2 a record released twice is
  archived, a REJECTed one at once: neither is delivered again;
- ``expired_locks_at_the_limit_archive_records``: a record whose lock expired on its last delivery attempt is
  archived as well.

A broker under these scenarios needs a group lock duration of ``LOCK_MS`` to be valid (Kafka:
``group.share.min.record.lock.duration.ms`` at most ``LOCK_MS``). Every scenario creates its topic through
``new_topic`` (the target decides replication) and sets its group's configs with IncrementalAlterConfigs on
the GROUP resource (``share.auto.offset.reset=earliest``: records produced before the members join count).

Consumers run in explicit acknowledgement mode; ``ShareMember`` polls one consumer in its own thread (the
consumer is not thread-safe: only that thread touches it).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from confluent_kafka import AcknowledgeType, Message, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from confluent_kafka.admin import NewTopic as KafkaNewTopic

from tests.waiting import stays_true, wait_until

LOCK_MS = 2000
DELIVERY_LIMIT = 2
NewTopic = Callable[[int], str]  # partitions -> the name of a fresh topic
Polled = tuple["Delivery", Message]  # a record as received, and its Message (to acknowledge)


@dataclass(frozen=True)
class Delivery:
    """One record as a member received it."""

    member: int
    partition: int
    offset: int
    value: bytes
    delivery_count: int


def topic_maker(bootstrap: str, replication_factor: int = 1) -> NewTopic:
    """A ``new_topic(partitions)`` creating fresh topics on ``bootstrap`` (CreateTopics, confluent-kafka)."""

    def new_topic(partitions: int) -> str:
        name = f"share-t-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([KafkaNewTopic(name, partitions, replication_factor)])[name].result(30)
        return name

    return new_topic


def new_group(prefix: str = "share") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def set_group_configs(bootstrap: str, group: str, configs: dict[str, str], timeout_s: float = 30.0) -> None:
    """IncrementalAlterConfigs SET on the GROUP config resource (type 32); raises what the broker answered."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    futures = admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)])
    for future in futures.values():
        future.result(timeout_s)


def share_group(bootstrap: str, *, lock_ms: int | None = None, delivery_limit: int | None = None) -> str:
    """A fresh share group id whose configs read from the earliest offset (and lock/limit when given).

    Call it before creating the group's topics: brokers apply a group config asynchronously (Kafka from its
    metadata log, in order with a later topic's records; kafkalog from a ZooKeeper change notification, which
    takes fewer steps than a topic's creation), and a share partition takes ``share.auto.offset.reset`` when
    first loaded on its leader. Configs set after the topic may reach the leader after that load (``latest``
    then applies: the records produced before are skipped).
    """
    group = new_group()
    configs = {"share.auto.offset.reset": "earliest"}
    if lock_ms is not None:
        configs["share.record.lock.duration.ms"] = str(lock_ms)
    if delivery_limit is not None:
        configs["share.delivery.count.limit"] = str(delivery_limit)
    set_group_configs(bootstrap, group, configs)
    return group


def produce(bootstrap: str, topic: str, values: Iterable[bytes], *, batch_each: bool = False) -> None:
    """Send ``values`` to partition 0 in order; ``batch_each``: one record batch per record (a flush each)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0 if batch_each else 5})
    for value in values:
        producer.produce(topic, value, partition=0)
        if batch_each:
            producer.flush(30)
    assert producer.flush(30) == 0, "records left unsent"


def share_consumer(bootstrap: str, group: str, topic: str, **config: str) -> ShareConsumer:
    """A subscribed ShareConsumer in explicit acknowledgement mode."""
    consumer = ShareConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            **config,
        }
    )
    consumer.subscribe([topic])
    return consumer


def poll_once(consumer: ShareConsumer, member: int = 0, timeout_s: float = 0.5) -> list[Polled]:
    """One poll: the deliveries with their Message (to acknowledge); an error message fails the test."""
    out: list[Polled] = []
    for m in consumer.poll(timeout_s):
        if m.error() is not None:
            raise AssertionError(f"member {member} polled an error: {m.error()}")
        partition, offset, value, count = m.partition(), m.offset(), m.value(), m.delivery_count()
        assert partition is not None and offset is not None and value is not None, f"member {member}: {m}"
        assert count is not None, f"member {member}: no delivery count at offset {offset}"
        out.append((Delivery(member, partition, offset, value, count), m))
    return out


def poll_until(consumer: ShareConsumer, count: int, timeout_s: float = 30.0, member: int = 0) -> list[Polled]:
    """Poll until ``count`` deliveries arrived (without acknowledging any: only one poll may return records in
    explicit mode, so a poll that returns fewer than ``count`` fails unless nothing was returned yet)."""
    got: list[Polled] = []

    def polled() -> bool:
        got.extend(poll_once(consumer, member))
        return len(got) >= count

    wait_until(polled, timeout_s, f"member {member} to receive {count} records (got {[d for d, _ in got]})")
    return got


def acknowledge(consumer: ShareConsumer, polled: list[Polled], ack_type: AcknowledgeType) -> None:
    """Acknowledge every polled record with ``ack_type`` and commit; every partition's result must be success."""
    for _, message in polled:
        consumer.acknowledge(message, ack_type)
    results = consumer.commit_sync(30.0)
    failed = {f"{tp.topic}[{tp.partition}]": err for tp, err in results.items() if err is not None}
    assert not failed, f"acknowledgement {ack_type.name} failed: {failed}"


def consume(
    consumer: ShareConsumer,
    decide: Callable[[Delivery], AcknowledgeType],
    until: Callable[[list[Delivery]], bool],
    timeout_s: float = 30.0,
    member: int = 0,
) -> list[Delivery]:
    """Poll and acknowledge every record as ``decide`` says (a commit per poll, every result a success) until
    ``until(deliveries so far)``; returns the deliveries in order."""
    got: list[Delivery] = []

    def polled() -> bool:
        batch = poll_once(consumer, member)
        for delivery, message in batch:
            consumer.acknowledge(message, decide(delivery))
        if batch:
            results = consumer.commit_sync(30.0)
            failed = {f"{tp.topic}[{tp.partition}]": err for tp, err in results.items() if err is not None}
            assert not failed, f"member {member}: acknowledgements failed: {failed}"
            got.extend(d for d, _ in batch)
        return until(got)

    wait_until(polled, timeout_s, f"member {member} to finish consuming (got {got})")
    return got


class ShareMember:
    """A ShareConsumer polling in its own thread, accepting every record it receives (commit per poll).

    ``deliveries`` is every record received, in order; ``pause_s`` is how long the member waits after a poll
    that returned records (so that the other members of the group get their turn at the partition).
    """

    def __init__(self, index: int, bootstrap: str, group: str, topic: str, pause_s: float = 0.05) -> None:
        self.index = index
        self.deliveries: list[Delivery] = []
        self.errors: list[BaseException] = []
        self._consumer = share_consumer(bootstrap, group, topic)
        self._pause_s = pause_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name=f"share-member-{index}", daemon=True)
        self.thread.start()

    def received(self) -> list[Delivery]:
        with self._lock:
            return list(self.deliveries)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                polled = poll_once(self._consumer, self.index)
                if not polled:
                    continue
                acknowledge(self._consumer, polled, AcknowledgeType.ACCEPT)
                with self._lock:
                    self.deliveries.extend(d for d, _ in polled)
                self._stop.wait(self._pause_s)
        except BaseException as exc:  # reported by stop()
            self.errors.append(exc)
        finally:
            self._consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(60)
        assert not self.thread.is_alive(), f"member {self.index} did not stop"
        assert not self.errors, f"member {self.index} failed: {self.errors[0]!r}"


def stop_all(members: list[ShareMember]) -> None:
    for member in members:
        member._stop.set()
    for member in members:
        member.stop()


# -- scenarios ---------------------------------------------------------------------------------------------------


def three_consumers_share_one_partition(bootstrap: str, new_topic: NewTopic, timeout_s: float = 60.0) -> None:
    """Three members, one partition: each receives records, together all, none twice (delivery count 1)."""
    group = share_group(bootstrap)
    topic = new_topic(1)
    members = [ShareMember(i, bootstrap, group, topic) for i in range(3)]
    produced = 0
    try:
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        deadline = time.monotonic() + timeout_s
        # one record batch per record, a few at a time, until every member received some (at least 30 records)
        while produced < 30 or not all(m.received() for m in members):
            assert time.monotonic() < deadline, (
                f"not every member received records after {produced} produced: "
                f"{[len(m.received()) for m in members]}; errors: {[m.errors for m in members]}"
            )
            for _ in range(3):
                producer.produce(topic, b"r%d" % produced, partition=0)
                produced += 1
                producer.flush(30)
            time.sleep(0.02)  # pacing the producer, not synchronization

        def all_received() -> bool:
            assert not any(m.errors for m in members), [m.errors for m in members]
            return sum(len(m.received()) for m in members) >= produced

        wait_until(all_received, 30, f"the members to receive all {produced} records")
        stays_true(lambda: sum(len(m.received()) for m in members) == produced, 1.0, "no record delivered twice")
    finally:
        stop_all(members)
    deliveries = [d for m in members for d in m.deliveries]
    assert all(m.deliveries for m in members), [len(m.deliveries) for m in members]
    offsets = sorted(d.offset for d in deliveries)
    assert offsets == list(range(produced)), "each record exactly once across the members"
    assert {d.value for d in deliveries} == {b"r%d" % i for i in range(produced)}
    assert {d.delivery_count for d in deliveries} == {1}


def released_records_come_back(bootstrap: str, new_topic: NewTopic) -> None:
    """RELEASEd records are delivered again with delivery count 2; once accepted, never again."""
    group = share_group(bootstrap)
    topic = new_topic(1)
    produce(bootstrap, topic, [b"a", b"b", b"c", b"d", b"e"])
    with share_consumer(bootstrap, group, topic) as consumer:
        first = poll_until(consumer, 5)
        assert [(d.offset, d.value, d.delivery_count) for d, _ in first] == [
            (i, v, 1) for i, v in enumerate([b"a", b"b", b"c", b"d", b"e"])
        ]
        acknowledge(consumer, first, AcknowledgeType.RELEASE)
        second = poll_until(consumer, 5)
        assert [(d.offset, d.delivery_count) for d, _ in second] == [(i, 2) for i in range(5)]
        acknowledge(consumer, second, AcknowledgeType.ACCEPT)
        produce(bootstrap, topic, [b"marker"])
        (marker,) = poll_until(consumer, 1)
        assert (marker[0].offset, marker[0].value, marker[0].delivery_count) == (5, b"marker", 1)
        acknowledge(consumer, [marker], AcknowledgeType.ACCEPT)
        stays_true(lambda: not poll_once(consumer), LOCK_MS / 1000 + 1, "accepted records are not delivered again")


def expired_locks_release_records(bootstrap: str, new_topic: NewTopic) -> None:
    """Records a member holds past the group's lock duration go to another member with delivery count 2."""
    group = share_group(bootstrap, lock_ms=LOCK_MS)
    topic = new_topic(1)
    produce(bootstrap, topic, [b"x0", b"x1", b"x2"])
    holder = share_consumer(bootstrap, group, topic)
    try:
        held = poll_until(holder, 3)
        acquired_at = time.monotonic()
        assert [(d.offset, d.delivery_count) for d, _ in held] == [(0, 1), (1, 1), (2, 1)]
        with share_consumer(bootstrap, group, topic) as other:
            again = poll_until(other, 3, timeout_s=LOCK_MS / 1000 + 30, member=1)
            waited = time.monotonic() - acquired_at
            assert [(d.offset, d.value, d.delivery_count) for d, _ in again] == [
                (0, b"x0", 2),
                (1, b"x1", 2),
                (2, b"x2", 2),
            ]
            assert waited >= LOCK_MS / 1000 * 0.75, f"redelivered after {waited:.2f}s, before the lock expired"
            acknowledge(other, again, AcknowledgeType.ACCEPT)
            stays_true(lambda: not poll_once(other, 1), 1.0, "accepted records are not delivered again")
    finally:
        holder.close()


def delivery_limit_archives_records(bootstrap: str, new_topic: NewTopic) -> None:
    """With delivery limit 2: released twice -> archived; rejected -> archived; accepted -> done."""
    group = share_group(bootstrap, lock_ms=LOCK_MS, delivery_limit=DELIVERY_LIMIT)
    topic = new_topic(1)
    produce(bootstrap, topic, [b"twice", b"rejected", b"accepted"])
    with share_consumer(bootstrap, group, topic) as consumer:
        first = poll_until(consumer, 3)
        assert [(d.offset, d.delivery_count) for d, _ in first] == [(0, 1), (1, 1), (2, 1)]
        consumer.acknowledge(first[0][1], AcknowledgeType.RELEASE)
        consumer.acknowledge(first[1][1], AcknowledgeType.REJECT)
        consumer.acknowledge(first[2][1], AcknowledgeType.ACCEPT)
        assert all(err is None for err in consumer.commit_sync(30.0).values())
        second = poll_until(consumer, 1)
        assert [(d.offset, d.value, d.delivery_count) for d, _ in second] == [(0, b"twice", 2)]
        acknowledge(consumer, second, AcknowledgeType.RELEASE)  # delivery count 2 = the limit: archived
        produce(bootstrap, topic, [b"marker"])
        (marker,) = poll_until(consumer, 1)
        assert (marker[0].offset, marker[0].value, marker[0].delivery_count) == (3, b"marker", 1)
        acknowledge(consumer, [marker], AcknowledgeType.ACCEPT)
        stays_true(lambda: not poll_once(consumer), LOCK_MS / 1000 + 1, "archived records are not delivered again")


def expired_locks_at_the_limit_archive_records(bootstrap: str, new_topic: NewTopic) -> None:
    """With delivery limit 2: a record held past its lock twice (by two members) is archived, not delivered to a
    third member."""
    group = share_group(bootstrap, lock_ms=LOCK_MS, delivery_limit=DELIVERY_LIMIT)
    topic = new_topic(1)
    produce(bootstrap, topic, [b"held"])
    first = share_consumer(bootstrap, group, topic)
    second = share_consumer(bootstrap, group, topic)
    try:
        (held,) = poll_until(first, 1)
        assert (held[0].offset, held[0].delivery_count) == (0, 1)
        (again,) = poll_until(second, 1, timeout_s=LOCK_MS / 1000 + 30, member=1)
        assert (again[0].offset, again[0].delivery_count) == (0, 2)
        with share_consumer(bootstrap, group, topic) as third:
            # the second lock expires while the third member polls: the record is archived, not delivered
            stays_true(lambda: not poll_once(third, 2), LOCK_MS / 1000 + 1, "a record past its limit not delivered")
            produce(bootstrap, topic, [b"marker"])
            (marker,) = poll_until(third, 1, member=2)
            assert (marker[0].offset, marker[0].value, marker[0].delivery_count) == (1, b"marker", 1)
            acknowledge(third, [marker], AcknowledgeType.ACCEPT)
            stays_true(lambda: not poll_once(third, 2), 1.0, "archived records are not delivered again")
    finally:
        first.close()
        second.close()
