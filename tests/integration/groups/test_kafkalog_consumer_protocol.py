"""kafkalog's Consumer with ``group_protocol="consumer"`` (KIP-848) against kafkalog's own brokers (the package's
3-broker cluster): two members share a topic's partitions and read each record once, one closes and the other gets
every partition, the commits are the group's, AdminClient.describe_consumer_groups shows both members; a regex subscription picks up a topic created later; a kafkalog member
and a confluent-kafka member (``group.protocol=consumer``) share one group.

A static member that closes (epoch -2) gets its share back when it returns; a broker whose
``group.coordinator.rebalance.protocols`` leaves out ``consumer`` fails ``poll`` naming ``group_protocol="classic"``.

The brokers' default heartbeat interval (5 s) paces the rebalances here.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.consumer import UnsupportedGroupProtocolError
from spark_kafkalog.protocol import ApiKey
from tests.client.consumer.polling_member import PollingMember, is_split
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

REBALANCE_S = 45  # a few 5 s heartbeats


@pytest.fixture()
def cluster(gcluster):
    """The package's cluster, which must serve ConsumerGroupHeartbeat (API 68)."""
    with KafkaClient(gcluster.bootstrap_servers) as client:
        assert client.any_connection().versions.supports(ApiKey.CONSUMER_GROUP_HEARTBEAT)
    return gcluster


def make_topic(bootstrap: str, name: str, partitions: int) -> set[TopicPartition]:
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return {TopicPartition(name, p) for p in range(partitions)}


def produce(bootstrap: str, topic: str, partitions: int, start: int, n: int) -> None:
    with Producer(bootstrap) as producer:
        for i in range(start, start + n):
            producer.send(topic, b"r%d" % i, partition=i % partitions)
        producer.flush(30)


def test_two_members_share_a_topic_and_the_survivor_gets_every_partition(cluster, group):
    bootstrap = cluster.bootstrap_servers
    topic = f"kip848-{uuid.uuid4().hex[:8]}"
    tps = make_topic(bootstrap, topic, 6)
    produce(bootstrap, topic, 6, 0, 60)
    a = PollingMember(bootstrap, group, (topic,), auto_commit_interval_ms=200)
    b = PollingMember(bootstrap, group, (topic,), auto_commit_interval_ms=200)
    members = [a, b]
    try:
        wait_until(lambda: is_split(members, tps), REBALANCE_S, "both members owning a share of the 6 partitions")
        wait_until(lambda: len(a.read()) + len(b.read()) >= 60, 30, "the 60 records read")
        assert a.epoch > 0 and b.epoch > 0 and a.member_id != b.member_id
        with AdminClient(bootstrap) as admin:
            described = admin.describe_consumer_groups([group])[group]
        assert (described.type, described.state, len(described.members)) == ("consumer", "Stable", 2)
        by_id = {m.member_id: m for m in described.members}
        assert set(by_id) == {a.member_id, b.member_id}
        for m in (a, b):
            assert set(by_id[m.member_id].assignment) == m.snapshot()
            assert by_id[m.member_id].subscribed_topic_names == (topic,)
        b.stop()
        members.remove(b)
        assert b.events[-1][0] == "revoked"
        wait_until(lambda: a.snapshot() == tps, REBALANCE_S, "the remaining member owning every partition")
        produce(bootstrap, topic, 6, 60, 30)
        wait_until(lambda: len(a.read()) + len(b.read()) >= 90, 30, "the 30 later records read")
        assert sorted(int(v[1:]) for *_, v in a.read() + b.read()) == list(range(90))
        with AdminClient(bootstrap) as admin:
            wait_until(
                lambda: {tp: o.offset for tp, o in admin.list_group_offsets(group).items()} == dict.fromkeys(tps, 15),
                15,
                "the commits of every partition at offset 15",
            )
    finally:
        for m in members:
            m.stop()


def test_a_regex_subscription_picks_up_a_topic_created_later(cluster, group):
    bootstrap = cluster.bootstrap_servers
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    first = make_topic(bootstrap, f"{prefix}-a", 2)
    make_topic(bootstrap, f"x{prefix}-a", 1)  # matches only part of its name
    member = PollingMember(bootstrap, group, pattern=f"{prefix}-.*")
    try:
        wait_until(lambda: member.snapshot() == first, REBALANCE_S, "the matching topic assigned")
        later = make_topic(bootstrap, f"{prefix}-b", 2)
        wait_until(lambda: member.snapshot() == first | later, 60, "the topic created later assigned too")
    finally:
        member.stop()


class ConfluentConsumerProtocolMember:
    """A confluent-kafka member with ``group.protocol=consumer`` polling in a thread; ``owned`` its partitions."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.config = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 100,
        }
        self.topic = topic
        self.owned: set[TopicPartition] = set()
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from confluent_kafka import Consumer

        try:
            consumer = Consumer(self.config)
            consumer.subscribe([self.topic])
            try:
                while not self._stop.is_set():
                    consumer.poll(0.1)
                    self.owned = {TopicPartition(tp.topic, tp.partition) for tp in consumer.assignment()}
            finally:
                consumer.close()
        except BaseException as e:
            self.errors.append(e)

    def snapshot(self) -> set[TopicPartition]:
        return set(self.owned)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(30)
        assert not self.errors, self.errors


def test_a_kafkalog_member_and_a_confluent_kafka_member_share_one_group(cluster, group):
    bootstrap = cluster.bootstrap_servers
    topic = f"kip848-{uuid.uuid4().hex[:8]}"
    tps = make_topic(bootstrap, topic, 4)
    ours = PollingMember(bootstrap, group, (topic,))
    theirs = ConfluentConsumerProtocolMember(bootstrap, group, topic)
    try:
        wait_until(
            lambda: ours.snapshot() and theirs.snapshot() and ours.snapshot() | theirs.snapshot() == tps
            and not ours.snapshot() & theirs.snapshot(),
            REBALANCE_S,
            "the kafkalog and confluent-kafka members splitting the 4 partitions",
        )  # fmt: skip
        theirs.stop()
        wait_until(lambda: ours.snapshot() == tps, REBALANCE_S, "the kafkalog member owning every partition")
    finally:
        ours.stop()
        if theirs.thread.is_alive():
            theirs.stop()


def test_a_static_member_that_closes_gets_its_share_back_when_it_returns(cluster, group):
    bootstrap = cluster.bootstrap_servers
    topic = f"kip848-{uuid.uuid4().hex[:8]}"
    tps = make_topic(bootstrap, topic, 4)
    a = PollingMember(bootstrap, group, (topic,), group_instance_id="static-a")
    b = PollingMember(bootstrap, group, (topic,), group_instance_id="static-b")
    try:
        wait_until(lambda: is_split([a, b], tps), REBALANCE_S, "both static members owning a share")
        share = a.snapshot()
        a.stop()
        a = PollingMember(bootstrap, group, (topic,), group_instance_id="static-a")
        wait_until(lambda: a.snapshot() == share, REBALANCE_S, "the static member's own share back")
        assert b.snapshot() == tps - share
        assert not [e for e in b.events if e[0] == "assigned" and e[1]][1:]  # b never got a's share meanwhile
    finally:
        a.stop()
        b.stop()


def test_a_broker_without_the_consumer_protocol_fails_poll_naming_the_classic_protocol(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/classic-only-{uuid.uuid4().hex[:8]}"
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=connect,
        log_dir=tmp_path,
        offsets_topic_num_partitions=1,
        offsets_topic_replication_factor=1,
        group_coordinator_rebalance_protocols="classic",
    ).start()
    try:
        # the broker refuses the heartbeat with UNSUPPORTED_VERSION (whether or not ApiVersions lists API 68)
        topic = f"kip848-{uuid.uuid4().hex[:8]}"
        make_topic(broker.bootstrap_servers, topic, 1)
        with Consumer(broker.bootstrap_servers, group_id="g", group_protocol="consumer") as consumer:
            consumer.subscribe([topic])
            # polls until the refusal arrives; bounded by time, not by a count of polls (a loaded machine is slow)
            give_up = time.monotonic() + 60
            with pytest.raises(UnsupportedGroupProtocolError, match='use group_protocol="classic"'):
                while time.monotonic() < give_up:
                    consumer.poll(100)
    finally:
        broker.stop()
