"""confluent-kafka consumers with ``group.protocol=consumer`` (KIP-848) on a 3-broker kafkalog cluster: three
members share a 6-partition topic while records flow, one leaves and another joins, and every record is read
exactly once and committed; a regular-expression subscription picks up a topic created after it subscribed; a
classic group of kafka-python members is converted online when confluent-kafka members join it.

The module runs its own cluster with a 500 ms consumer group heartbeat interval
(``group.consumer.heartbeat.interval.ms``), so reconciliations take a second or two instead of Kafka's 5 s.
"""

from __future__ import annotations

import threading
import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, Producer
from tests.waiting import wait_until

from .members import ThreadMember

pytestmark = pytest.mark.integration

PARTITIONS = 6


@pytest.fixture(scope="module")
def kcluster(zookeeper, tmp_path_factory):
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("kip848"),
        zookeeper_connect=f"{zookeeper.connect_string}/kip848-{uuid.uuid4().hex[:8]}",
        broker_config={
            "offsets.topic.num.partitions": 6,
            "group.consumer.heartbeat.interval.ms": 500,
            "group.consumer.session.timeout.ms": 10000,
        },
    )
    c.start()
    yield c
    c.stop()


class ConsumerProtocolMember(ThreadMember):
    """A confluent-kafka member of the consumer protocol, committing each record synchronously after reading it;
    ``subscription`` is a topic name or a regex (``^...``)."""

    def __init__(self, bootstrap: str, group: str, subscription: str) -> None:
        self.config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            "topic.metadata.refresh.interval.ms": 1000,
        }
        self.commit_errors: list = []
        self.by_topic: list[tuple[str, int, int]] = []
        super().__init__(subscription)

    def loop(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        consumer = Consumer(self.config)
        consumer.subscribe([self.topic])
        try:
            while not self._stop.is_set():
                msg = consumer.poll(0.1)
                with self._lock:
                    self.owned = {tp.partition for tp in consumer.assignment()}
                if msg is None or msg.error() is not None:
                    continue
                with self._lock:
                    self.records.append((msg.partition(), msg.offset(), msg.value()))
                    self.by_topic.append((msg.topic(), msg.partition(), msg.offset()))
                try:
                    consumer.commit(message=msg, asynchronous=False)
                except KafkaException as e:
                    self.commit_errors.append(e.args[0])
        finally:
            consumer.close()


def new_topic(bootstrap: str, name: str | None = None, partitions: int = PARTITIONS) -> str:
    name = name or f"kip848-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    with AdminClient(bootstrap) as admin:
        return {(tp.topic, tp.partition): om.offset for tp, om in admin.list_group_offsets(group).items()}


def owned(members) -> list[set[int]]:
    return [m.snapshot() for m in members]


def split(members) -> bool:
    """Every partition owned by exactly one member, evenly (the uniform assignor's target reached)."""
    sets = owned(members)
    together = set().union(*sets)
    even = {PARTITIONS // len(members)}
    return (
        together == set(range(PARTITIONS))
        and sum(len(s) for s in sets) == PARTITIONS
        and {len(s) for s in sets} == even
    )


def test_three_members_share_a_topic_while_one_leaves_and_one_joins(kcluster):
    bootstrap = kcluster.bootstrap_servers
    topic, group = new_topic(bootstrap), f"g-{uuid.uuid4().hex[:8]}"
    sent: list[bytes] = []
    stop = threading.Event()

    def produce() -> None:
        with Producer(bootstrap) as p:
            i = 0
            while not stop.is_set():
                value = b"v%d" % i
                p.send(topic, value, partition=i % PARTITIONS)
                sent.append(value)
                i += 1
                if i % 20 == 0:
                    p.flush(30)
                    stop.wait(0.05)
            p.flush(30)

    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    members = [ConsumerProtocolMember(bootstrap, group, topic) for _ in range(3)]
    try:
        wait_until(lambda: split(members), 60, "3 members to split 6 partitions 2 each")
        leaving = members.pop(0)
        leaving.stop()
        wait_until(lambda: split(members), 60, "the 2 others to take the leaver's partitions")
        members.append(ConsumerProtocolMember(bootstrap, group, topic))
        wait_until(lambda: split(members), 60, "the newcomer to get its share")
        stop.set()
        producer.join(30)
        everyone = [leaving, *members]

        def read_all() -> bool:
            return sum(len(m.records) for m in everyone) >= len(sent)

        wait_until(read_all, 60, f"the members to read all {len(sent)} records")
    finally:
        stop.set()
        for m in members:
            m._stop.set()
        for m in members:
            m.stop()
    values = [v for m in everyone for _, _, v in m.records]
    assert len(values) == len(set(values)) == len(sent), "a record read twice, or one missing"
    assert set(values) == set(sent)
    ends = {}
    for m in everyone:
        for p, o, _ in m.records:
            ends[(topic, p)] = max(ends.get((topic, p), 0), o + 1)
    assert committed(bootstrap, group) == ends
    # a commit sent just before a heartbeat moved the member's epoch still lands (KIP-1251, as Kafka 4.4)
    assert all(not m.commit_errors for m in everyone), [m.commit_errors for m in everyone]


def test_a_regex_subscription_picks_up_a_topic_created_later(kcluster):
    bootstrap = kcluster.bootstrap_servers
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    group = f"g-{uuid.uuid4().hex[:8]}"
    first = new_topic(bootstrap, f"{prefix}-a", 2)
    new_topic(bootstrap, f"other{prefix}", 2)  # not matched
    member = ConsumerProtocolMember(bootstrap, group, f"^{prefix}-.*")
    try:
        with Producer(bootstrap) as p:
            for i in range(4):
                p.send(first, b"a%d" % i, partition=i % 2)
            p.flush(30)
        wait_until(lambda: len(member.records) >= 4, 60, "the first topic's records")
        later = new_topic(bootstrap, f"{prefix}-b", 3)
        with Producer(bootstrap) as p:
            for i in range(6):
                p.send(later, b"b%d" % i, partition=i % 3)
            p.flush(30)
        wait_until(lambda: len(member.records) >= 10, 60, "the later topic's records")
    finally:
        member.stop()
    topics = {t for t, _, _ in member.by_topic}
    assert topics == {first, later}
    assert sorted(v for _, _, v in member.records) == sorted(
        [b"a%d" % i for i in range(4)] + [b"b%d" % i for i in range(6)]
    )


def test_a_classic_group_of_kafka_python_members_is_converted_online(kcluster):
    """Two kafka-python members (JoinGroup/SyncGroup, range) share a topic; two confluent-kafka members with
    ``group.protocol=consumer`` join the same group: the coordinator converts it to a consumer group online, the
    kafka-python members stay in it as classic members, the four split the partitions, nothing is lost and the
    offsets stay the group's."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    from spark_kafkalog.client import AdminClient as Admin

    from .members import KafkaPythonMember

    bootstrap = kcluster.bootstrap_servers
    topic, group = new_topic(bootstrap), f"g-{uuid.uuid4().hex[:8]}"
    with Producer(bootstrap) as p:
        for i in range(60):
            p.send(topic, b"c%d" % i, partition=i % PARTITIONS)
        p.flush(30)
    classic = [KafkaPythonMember(kcluster, group, topic, RangePartitionAssignor) for _ in range(2)]
    modern: list[ConsumerProtocolMember] = []
    try:
        wait_until(lambda: split(classic), 60, "the kafka-python members to split the topic")
        modern = [ConsumerProtocolMember(bootstrap, group, topic) for _ in range(2)]
        everyone = [*classic, *modern]

        def four_way() -> bool:
            sets = owned(everyone)
            return set().union(*sets) == set(range(PARTITIONS)) and sum(map(len, sets)) == PARTITIONS and all(sets)

        wait_until(four_way, 90, "the classic and the consumer-protocol members to share the topic")
        with Admin(bootstrap) as admin:
            d = admin.describe_consumer_groups([group])[group]
        assert d.type == "consumer"
        assert sorted(m.member_type for m in d.members) == ["classic", "classic", "consumer", "consumer"]
        with Producer(bootstrap) as p:
            for i in range(60, 120):
                p.send(topic, b"c%d" % i, partition=i % PARTITIONS)
            p.flush(30)
        wait_until(
            lambda: {v for m in everyone for _, _, v in m.records} >= {b"c%d" % i for i in range(120)},
            60,
            "every record read",
        )
    finally:
        for m in [*classic, *modern]:
            m._stop.set()
        for m in [*classic, *modern]:
            m.stop()
    ends: dict[tuple[str, int], int] = {}
    for m in [*classic, *modern]:
        for p, o, _ in m.records:
            ends[(topic, p)] = max(ends.get((topic, p), 0), o + 1)
    assert committed(bootstrap, group) == ends
