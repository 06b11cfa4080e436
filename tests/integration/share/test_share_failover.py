"""Share-group state across failures in a replicated kafkalog cluster: nothing a member acknowledged is
delivered again when the share coordinator of the partition's ``__share_group_state`` key goes (stopped, or
SIGKILLed together with the topic partition's leader) or the partition's leader alone is SIGKILLed, and what a
member released comes back once, counted.

The share coordinator of (group, topic id, partition) is the leader of ``__share_group_state`` partition
``abs(hash("group:topic id:partition")) % partitions`` (Java's String.hashCode; FindCoordinator key type 2
names it). These tests stop and kill brokers, so they have their own cluster (module scope). The last one kills the
broker under a member that is accepting records as they come: an acceptance whose commit was confirmed is
final, one whose commit failed may be delivered again.
"""

from __future__ import annotations

import threading

import pytest
from confluent_kafka import AcknowledgeType, KafkaException, Producer, TopicCollection
from confluent_kafka.admin import AdminClient

from broker.coordinator.offsets_topic import partition_for
from spark_kafkalog.protocol import ApiKey, ErrorCode
from tests.share_scenarios import (
    LOCK_MS,
    Delivery,
    consume,
    poll_once,
    produce,
    share_consumer,
    share_group,
    topic_maker,
)
from tests.waiting import stays_true, wait_until

from ...broker.wire import Wire
from .conftest import SHARE_CLUSTER_CONFIG, share_cluster

pytestmark = pytest.mark.integration

SHARE_STATE_TOPIC = "__share_group_state"
RECORDS = 20


@pytest.fixture(scope="module")
def fcluster(zookeeper, tmp_path_factory):
    c = share_cluster(zookeeper, tmp_path_factory, "share-failover")
    yield c
    c.stop()


def topic_id(bootstrap: str, topic: str) -> str:
    """The topic's id in Kafka's string form (URL-safe base64, no padding)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_topics(TopicCollection([topic])).values()
    return str(future.result(30).topic_id)


def partition_leaders(bootstrap: str, topic: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_topics(TopicCollection([topic])).values()
    return {p.id: p.leader.id for p in future.result(30).partitions}


def share_coordinator(cluster, key: str, via: int) -> int | None:
    """The broker ``via`` names as share coordinator of ``key`` (FindCoordinator v6, key type 2), else None."""
    with Wire(f"127.0.0.1:{cluster.ports[via]}") as w:
        answer = w.call(ApiKey.FIND_COORDINATOR, 6, key_type=2, coordinator_keys=[key])
    (found,) = answer.coordinators
    return found.node_id if found.error_code == ErrorCode.NONE else None


def first_round(bootstrap: str, group: str, topic: str) -> set[int]:
    """A member accepts offsets below 10 and the even ones, releases the odd ones from 10 (each record's first
    delivery), and leaves; returns the accepted offsets."""

    def decide(d: Delivery) -> AcknowledgeType:
        return AcknowledgeType.RELEASE if d.offset >= RECORDS // 2 and d.offset % 2 else AcknowledgeType.ACCEPT

    with share_consumer(bootstrap, group, topic) as consumer:
        got = consume(consumer, decide, lambda got: {d.offset for d in got} >= set(range(RECORDS)))
    # a released record may have come back (delivery count 2) before the member stopped polling: it was
    # accepted then
    return {d.offset for d in got if decide(d) == AcknowledgeType.ACCEPT or d.delivery_count > 1}


@pytest.mark.parametrize("how", ["coordinator-stopped", "leader-killed", "coordinator-and-leader-killed"])
def test_acknowledged_records_stay_acknowledged_when_the_share_coordinator_or_leader_goes(fcluster, how):
    bootstrap = fcluster.bootstrap_servers
    group = share_group(bootstrap, lock_ms=LOCK_MS)  # before the topic: see share_group
    topic = topic_maker(bootstrap, replication_factor=3)(1)
    produce(bootstrap, topic, [b"f%02d" % i for i in range(RECORDS)], batch_each=True)
    accepted = first_round(bootstrap, group, topic)
    released = set(range(RECORDS)) - accepted
    assert accepted >= set(range(RECORDS // 2)), sorted(accepted)

    key = f"{group}:{topic_id(bootstrap, topic)}:0"
    coordinator = wait_until(lambda: share_coordinator(fcluster, key, fcluster.broker_ids[0]), 30, "a coordinator")
    state_partition = partition_for(key, SHARE_CLUSTER_CONFIG["share.coordinator.state.topic.num.partitions"])
    assert partition_leaders(bootstrap, SHARE_STATE_TOPIC)[state_partition] == coordinator, (
        f"FindCoordinator names {coordinator} for {key!r}, not the leader of {SHARE_STATE_TOPIC}-{state_partition}"
    )
    others = [b for b in fcluster.broker_ids if b != coordinator]
    if how == "coordinator-stopped":
        fcluster.move_leader(topic, 0, others[0])  # the share partition stays loaded where it was
        gone, clean = coordinator, True
    elif how == "leader-killed":
        fcluster.move_leader(topic, 0, others[0])  # the new leader loads the state from the same coordinator
        gone, clean = others[0], False
    else:
        fcluster.move_leader(topic, 0, coordinator)  # both go at once: the new leader loads the state anew
        gone, clean = coordinator, False
    left = [b for b in fcluster.broker_ids if b != gone]
    survivors = ",".join(f"127.0.0.1:{fcluster.ports[b]}" for b in left)

    with fcluster.broker_stopped(gone, clean=clean):
        wait_until(
            lambda: share_coordinator(fcluster, key, left[0]) in left, 30, f"a live share coordinator of {key!r}"
        )
        produce(survivors, topic, [b"after-%d" % i for i in range(5)])
        with share_consumer(survivors, group, topic) as consumer:
            second = consume(
                consumer,
                lambda d: AcknowledgeType.ACCEPT,
                lambda got: {d.offset for d in got} >= released | set(range(RECORDS, RECORDS + 5)),
                timeout_s=60,
            )
            assert not accepted & {d.offset for d in second}, f"accepted records delivered again: {second}"
            assert sorted((d.offset, d.delivery_count) for d in second) == sorted(
                [(o, 2) for o in released] + [(o, 1) for o in range(RECORDS, RECORDS + 5)]
            )
            stays_true(lambda: not poll_once(consumer), LOCK_MS / 1000 + 1, "nothing delivered again")

    # the broker is back; the partition's leader moves, so its share partition is loaded again from the
    # persisted state: every record so far is acknowledged
    fcluster.move_leader(topic, 0, next(b for b in fcluster.broker_ids if b != partition_leaders(bootstrap, topic)[0]))
    produce(bootstrap, topic, [b"last"])
    with share_consumer(bootstrap, group, topic) as consumer:
        third = consume(consumer, lambda d: AcknowledgeType.ACCEPT, lambda got: bool(got), timeout_s=60)
        assert [(d.offset, d.value, d.delivery_count) for d in third] == [(RECORDS + 5, b"last", 1)]
        stays_true(lambda: not poll_once(consumer), LOCK_MS / 1000 + 1, "nothing delivered again")


class AcceptingMember:
    """A ShareConsumer accepting everything in its own thread through failures: each delivery is kept with
    whether the commit of its ACCEPT was confirmed (partition result None); errors are kept, not raised."""

    def __init__(self, bootstrap: str, group: str, topic: str, hold_s: float) -> None:
        self.hold_s = hold_s  # how long each poll's records stay acquired before the member accepts them
        self.deliveries: list[tuple[Delivery, bool]] = []
        self.errors: list[str] = []
        self._consumer = share_consumer(bootstrap, group, topic)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def values(self) -> set[bytes]:
        return {d.value for d, _ in self.snapshot()}

    def snapshot(self) -> list[tuple[Delivery, bool]]:
        with self._lock:
            return list(self.deliveries)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                polled = poll_once(self._consumer)
            except (AssertionError, KafkaException) as exc:  # an error message while the leader moves
                self.errors.append(str(exc))
                continue
            if not polled:
                continue
            self._stop.wait(self.hold_s)
            for _, message in polled:
                self._consumer.acknowledge(message, AcknowledgeType.ACCEPT)
            try:
                results = self._consumer.commit_sync(30.0)
                confirmed = bool(results) and all(err is None for err in results.values())
            except KafkaException as exc:
                self.errors.append(str(exc))
                confirmed = False
            with self._lock:
                self.deliveries.extend((d, confirmed) for d, _ in polled)
        self._consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(60)
        assert not self.thread.is_alive(), "the member did not stop"


def test_records_accepted_while_the_coordinator_and_leader_are_killed_are_not_delivered_again(fcluster):
    """A member accepts records as they are produced while the broker that is both the share coordinator and
    the partition leader is SIGKILLed: every record is delivered, and none whose acceptance was confirmed is
    delivered again (an acceptance whose commit failed may be, with a higher delivery count)."""
    bootstrap = fcluster.bootstrap_servers
    group = share_group(bootstrap, lock_ms=LOCK_MS)
    topic = topic_maker(bootstrap, replication_factor=3)(1)
    key = f"{group}:{topic_id(bootstrap, topic)}:0"
    coordinator = wait_until(lambda: share_coordinator(fcluster, key, fcluster.broker_ids[0]), 30, "a coordinator")
    fcluster.move_leader(topic, 0, coordinator)
    others = [b for b in fcluster.broker_ids if b != coordinator]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all", "enable.idempotence": True})
    produced: list[bytes] = []

    def send(n: int) -> None:
        for _ in range(n):
            value = b"u%04d" % len(produced)
            producer.produce(topic, value, partition=0)
            produced.append(value)
            producer.flush(60)

    member = AcceptingMember(bootstrap, group, topic, hold_s=0.3)
    try:
        send(10)
        wait_until(lambda: len(member.values()) >= 5, 30, "the member to accept records")
        send(20)  # the member holds records acquired a moment ago while their leader is killed
        with fcluster.broker_stopped(coordinator, clean=False):
            send(30)
            wait_until(lambda: share_coordinator(fcluster, key, others[0]) in others, 30, "a new share coordinator")
            send(30)
            wait_until(lambda: member.values() >= set(produced), 60, "every record to be delivered")
            # a lock of a delivery whose acceptance was lost expires within LOCK_MS: it may come back then, but
            # no record whose acceptance was confirmed may
            stays_true(
                lambda: not delivered_after_confirmation(member.snapshot()),
                LOCK_MS / 1000 + 2,
                "no confirmed acceptance undone",
            )
    finally:
        member.stop()
    again = delivered_after_confirmation(member.deliveries)
    assert not again, f"records delivered again after their acceptance was confirmed: {again}"
    assert {d.value for d, _ in member.deliveries} == set(produced)
    assert len({d.offset for d, _ in member.deliveries}) == len(produced)


def delivered_after_confirmation(deliveries: list[tuple[Delivery, bool]]) -> list[tuple[int, int]]:
    """(offset, delivery count) of each delivery that came after an earlier delivery of that offset whose
    acceptance was confirmed."""
    confirmed: set[int] = set()
    again = []
    for d, ok in deliveries:
        if d.offset in confirmed:
            again.append((d.offset, d.delivery_count))
        if ok:
            confirmed.add(d.offset)
    return again
