"""Cluster operations (``broker.cluster_operations``, ``EmbeddedBroker.down``/``up``) seen by real clients: on three
broker processes (RF 3) a moved leader and a pinned coordinator as kafkalog's client and confluent-kafka see them,
a stopped leader replaced while confluent-kafka produces with acks=all, the broker back in the ISR; in process, a
broker off the network and back on the same port with kafkalog's producer, confluent-kafka, kafka-python and
aiokafka reconnecting, and a leader off the network keeping its leadership while its follower drops out of the ISR
and rejoins."""

from __future__ import annotations

import socket
import threading
import uuid

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient as ConfluentAdmin

from broker.coordinator.offsets_topic import partition_for
from broker.embedded_cluster import EmbeddedCluster
from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, Producer, TopicPartition
from tests.integration.test_crash_restart import consume_all
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

OFFSETS_PARTITIONS = 5


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("cluster-ops"),
        zookeeper_connect=f"{zookeeper.connect_string}/ops-{uuid.uuid4().hex[:8]}",
        broker_config={
            "offsets.topic.num.partitions": OFFSETS_PARTITIONS,
            "offsets.topic.replication.factor": 3,
            "transaction.state.log.num.partitions": 3,
            "transaction.state.log.replication.factor": 3,
            "transaction.state.log.min.isr": 2,
            "replica.fetch.wait.max.ms": 100,
            "replica.fetch.backoff.ms": 200,
        },
    ).start()
    yield c
    c.stop()


def new_topic(cluster: EmbeddedCluster, replicas: list[int] | None = None) -> str:
    name = f"ops-{uuid.uuid4().hex[:8]}"
    topic = (
        NewTopic(name, 1, 3, {"min.insync.replicas": "2"})
        if replicas is None
        else NewTopic(name, replica_assignment={0: replicas}, config={"min.insync.replicas": "2"})
    )
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([topic])
    return name


def leader_seen_by_kafkalog(cluster: EmbeddedCluster, topic: str) -> tuple[int, tuple[int, ...]]:
    """(leader, ISR) of partition 0 as a new kafkalog client reads it from Metadata."""
    with KafkaClient(cluster.bootstrap_servers) as client:
        p = client.topic_info(topic, refresh=True).partitions[0]
        return p.leader, p.isr


class BackgroundProducer:
    """confluent-kafka producing numbered records (acks=all, idempotent) on its own thread until ``stop``."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5}
        )
        self.topic = topic
        self.delivered: set[bytes] = set()
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _report(self, err, msg) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.delivered.add(msg.value())

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            self.producer.produce(self.topic, b"v%d" % i, on_delivery=self._report)
            i += 1
            self.producer.poll(0.005)

    def wait_for_more(self, n: int, what: str) -> None:
        start = len(self.delivered)
        wait_until(lambda: len(self.delivered) >= start + n, 30, f"{n} more records delivered {what}")

    def stop(self) -> set[bytes]:
        self._stop.set()
        self._thread.join(10)
        assert self.producer.flush(30) == 0, "records still undelivered"
        assert self.errors == [], self.errors
        return self.delivered


def values_in_log(cluster: EmbeddedCluster, topic: str, expected: int) -> set[bytes]:
    return {value for _, _, value in consume_all(cluster.bootstrap_servers, topic, 1, expected)}


def test_move_leader_is_seen_by_kafkalog_and_confluent_kafka_produces_through_it(cluster):
    topic = new_topic(cluster, [1, 2, 3])
    assert leader_seen_by_kafkalog(cluster, topic)[0] == 1
    producing = BackgroundProducer(cluster.bootstrap_servers, topic)
    try:
        producing.wait_for_more(50, "before the move")
        for target in (3, 2):
            cluster.move_leader(topic, 0, target)
            assert leader_seen_by_kafkalog(cluster, topic)[0] == target
            producing.wait_for_more(50, f"with broker {target} leading")
    finally:
        delivered = producing.stop()
    assert values_in_log(cluster, topic, len(delivered)) >= delivered


def test_move_leader_to_a_broker_that_is_not_a_replica_reassigns_keeping_the_replication_factor(cluster):
    topic = new_topic(cluster, [1, 2])
    with Producer(cluster.bootstrap_servers, acks="all") as producer:
        for i in range(20):
            producer.send(topic, b"r%d" % i)
    cluster.move_leader(topic, 0, 3)
    with KafkaClient(cluster.bootstrap_servers) as client:
        p = client.topic_info(topic, refresh=True).partitions[0]
    assert (p.leader, p.replicas) == (3, (3, 1))
    assert values_in_log(cluster, topic, 20) == {b"r%d" % i for i in range(20)}


def test_pin_coordinator_is_seen_in_find_coordinator_and_a_group_commits_across_it(cluster):
    topic = new_topic(cluster)
    with Producer(cluster.bootstrap_servers, acks="all") as producer:
        for i in range(20):
            producer.send(topic, b"g%d" % i)
    group = f"pinned-{uuid.uuid4().hex[:6]}"

    def coordinator() -> int:
        return confluent_coordinator(cluster, group)

    first = coordinator() % 3 + 1  # another broker than the one coordinating it now
    assert cluster.pin_coordinator(group, first) == partition_for(group, OFFSETS_PARTITIONS)
    assert coordinator() == first
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0)])
        got = consumer.consume(10, timeout=20)
        assert len(got) == 10 and not any(m.error() for m in got)
        consumer.commit(asynchronous=False)
        second = first % 3 + 1
        cluster.pin_coordinator(group, second)
        assert coordinator() == second
        got = consumer.consume(10, timeout=20)
        assert len(got) == 10 and not any(m.error() for m in got)
        committed = wait_until(lambda: _commit(consumer), 30, "a commit through the new coordinator")
        assert committed[0].offset == 20
    finally:
        consumer.close()
    with AdminClient(cluster.bootstrap_servers) as kafkalog_admin:
        assert kafkalog_admin.list_group_offsets(group)[TopicPartition(topic, 0)].offset == 20


def partition_seen_by_kafkalog(cluster: EmbeddedCluster, topic: str, partition: int = 0) -> tuple[int, tuple[int, ...]]:
    """(leader, replicas) of a partition as a new kafkalog client reads it from Metadata."""
    with KafkaClient(cluster.bootstrap_servers) as client:
        p = client.topic_info(topic, refresh=True).partitions[partition]
        return p.leader, p.replicas


def test_leader_moved_gives_the_replica_list_and_the_leadership_back_on_exit(cluster):
    reordered, reassigned = new_topic(cluster, [1, 2, 3]), new_topic(cluster, [1, 2])
    with cluster.leader_moved(reordered, 0, 3), cluster.leader_moved(reassigned, 0, 3):
        assert partition_seen_by_kafkalog(cluster, reordered) == (3, (3, 1, 2))
        assert partition_seen_by_kafkalog(cluster, reassigned) == (3, (3, 1))
    assert partition_seen_by_kafkalog(cluster, reordered) == (1, (1, 2, 3))
    assert partition_seen_by_kafkalog(cluster, reassigned) == (1, (1, 2))


def test_coordinator_pinned_gives_the_coordinator_back_on_exit(cluster):
    group = f"pinned-{uuid.uuid4().hex[:6]}"
    partition = partition_for(group, OFFSETS_PARTITIONS)
    with AdminClient(cluster.bootstrap_servers) as admin:
        assert admin.list_group_offsets(group) == {}  # its FindCoordinator creates __consumer_offsets if missing
    _, replicas = partition_seen_by_kafkalog(cluster, "__consumer_offsets", partition)
    other = next(b for b in (1, 2, 3) if b != replicas[0])
    with cluster.coordinator_pinned(group, other) as pinned:
        assert pinned == partition
        assert confluent_coordinator(cluster, group) == other
    assert confluent_coordinator(cluster, group) == replicas[0]
    assert partition_seen_by_kafkalog(cluster, "__consumer_offsets", partition) == (replicas[0], replicas)


def confluent_coordinator(cluster: EmbeddedCluster, group: str) -> int:
    """The coordinator confluent-kafka's admin finds (a new one each time: librdkafka caches coordinators)."""
    admin = ConfluentAdmin({"bootstrap.servers": cluster.bootstrap_servers})
    return admin.describe_consumer_groups([group])[group].result(10).coordinator.id


def _commit(consumer) -> list | None:
    """Commit synchronously; None when the coordinator answered a retriable error (it just moved)."""
    try:
        return consumer.commit(asynchronous=False)
    except confluent_kafka.KafkaException as e:
        if e.args[0].retriable():
            return None
        raise


def test_pin_coordinator_of_a_transactional_id_then_confluent_kafka_commits_a_transaction(cluster):
    topic = new_topic(cluster)
    txn_id = f"txn-{uuid.uuid4().hex[:6]}"
    cluster.pin_coordinator(txn_id, 2, key_type="transaction")
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"in-txn")
    cluster.pin_coordinator(txn_id, 3, key_type="transaction")
    producer.commit_transaction(30)
    assert values_in_log(cluster, topic, 1) == {b"in-txn"}


def test_broker_down_elects_a_new_leader_while_acks_all_producing_goes_on_and_broker_up_rejoins(cluster):
    topic = new_topic(cluster, [1, 2, 3])
    producing = BackgroundProducer(cluster.bootstrap_servers, topic)
    try:
        producing.wait_for_more(50, "before the leader stops")
        with cluster.broker_stopped(1):
            leader, isr = leader_seen_by_kafkalog(cluster, topic)
            assert leader in (2, 3) and 1 not in isr
            with pytest.raises(OSError):
                socket.create_connection((cluster.host, cluster.ports[1]), 1).close()
            producing.wait_for_more(100, "while broker 1 is down")
        leader, isr = leader_seen_by_kafkalog(cluster, topic)
        assert sorted(isr) == [1, 2, 3]
        producing.wait_for_more(50, "after broker 1 is back")
        cluster.move_leader(topic, 0, 1)
        producing.wait_for_more(50, "with broker 1 leading again")
    finally:
        delivered = producing.stop()
    assert values_in_log(cluster, topic, len(delivered)) >= delivered


def test_a_crashed_leader_and_coordinator_fails_over_for_kafka_python_and_comes_back(cluster):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition
    from kafka.structs import OffsetAndMetadata

    topic, group = new_topic(cluster, [2, 3, 1]), f"crash-{uuid.uuid4().hex[:6]}"
    cluster.pin_coordinator(group, 2)
    with Producer(cluster.bootstrap_servers, acks="all") as producer:
        for i in range(10):
            producer.send(topic, b"c%d" % i)
    tp = KafkaTopicPartition(topic, 0)
    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id=group, enable_auto_commit=False, retry_backoff_ms=100
    )
    try:
        consumer.assign([tp])
        consumer.commit({tp: OffsetAndMetadata(5, "", -1)})  # through broker 2
        cluster.broker_down(2, clean=False)  # SIGKILL: seen once its ZooKeeper session expires
        assert 2 not in cluster.processes
        assert leader_seen_by_kafkalog(cluster, topic)[0] in (3, 1)
        assert confluent_coordinator(cluster, group) in (3, 1)
        consumer.commit({tp: OffsetAndMetadata(10, "", -1)})  # kafka-python finds the new coordinator
        assert consumer.committed(tp) == 10
    finally:
        consumer.close()
    cluster.broker_up(2)
    assert 2 in leader_seen_by_kafkalog(cluster, topic)[1]


def test_operations_refuse_brokers_that_are_not_running(cluster):
    topic = new_topic(cluster)
    with pytest.raises(ValueError, match="broker 7 is not running"):
        cluster.move_leader(topic, 0, 7)
    with pytest.raises(ValueError, match="key_type"):
        cluster.pin_coordinator("g", 1, key_type="share")
    with pytest.raises(RuntimeError, match="already running"):
        cluster.broker_up(1)


def test_an_in_process_broker_down_refuses_connections_and_clients_reconnect_after_up():
    with EmbeddedBroker(broker_id=0, zookeeper_connect=f"memory:ops-{uuid.uuid4().hex}") as broker:
        bootstrap = broker.bootstrap_servers
        host, port = bootstrap.rsplit(":", 1)
        topic = f"ops-{uuid.uuid4().hex[:8]}"
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(topic, 1, 1)])
        confluent = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 60000})
        kafkalog = Producer(bootstrap, acks="all", delivery_timeout_ms=60000)
        try:
            confluent.produce(topic, b"c-before")
            assert confluent.flush(10) == 0
            kafkalog.send(topic, b"k-before").result(10)
            with broker.stopped():
                assert broker.is_down
                with pytest.raises(OSError):
                    socket.create_connection((host, int(port)), 1).close()
                confluent.produce(topic, b"c-during")
                pending = kafkalog.send(topic, b"k-during")
                assert confluent.flush(1) == 1  # queued, not delivered while the broker is down
                assert not pending.done()
            assert not broker.is_down and broker.bootstrap_servers == bootstrap
            assert confluent.flush(30) == 0
            assert pending.result(30).offset >= 1
            with KafkaClient(bootstrap) as client:  # a new kafkalog client reaches it at the same address
                assert client.topics() == {topic: 1}
        finally:
            kafkalog.close()
        assert {r[2] for r in consume_all(bootstrap, topic, 1, 4)} == {
            b"c-before",
            b"k-before",
            b"c-during",
            b"k-during",
        }


def test_an_in_process_leader_down_keeps_its_leadership_and_its_follower_rejoins_the_isr_after_up():
    registry = f"memory:ops-{uuid.uuid4().hex}"
    settings = {"zookeeper_connect": registry, "replica_lag_time_max_ms": 1000, "replica_fetch_wait_max_ms": 100}
    with EmbeddedBroker(broker_id=1, **settings) as leader, EmbeddedBroker(broker_id=2, **settings) as follower:
        topic = f"ops-{uuid.uuid4().hex[:8]}"
        with AdminClient(follower.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, replica_assignment={0: [1, 2]})])

        def state() -> tuple[int, tuple[int, ...]]:
            with KafkaClient(follower.bootstrap_servers) as client:
                p = client.topic_info(topic, refresh=True).partitions[0]
                return p.leader, tuple(sorted(p.isr))

        wait_until(lambda: state() == (1, (1, 2)), 20, "broker 2 in the ISR")
        with leader.stopped():  # broker 2 cannot fetch from broker 1: it drops out of the ISR, no leader moves
            wait_until(lambda: state() == (1, (1,)), 20, "broker 2 out of the ISR while broker 1 is down")
        wait_until(lambda: state() == (1, (1, 2)), 20, "broker 2 back in the ISR after broker 1 is up")
        with Producer(leader.bootstrap_servers, acks="all") as producer:
            assert producer.send(topic, b"after").result(10).offset == 0


def test_kafka_python_and_aiokafka_producers_deliver_what_they_sent_while_an_in_process_broker_was_down():
    import asyncio

    from aiokafka import AIOKafkaProducer
    from kafka import KafkaProducer

    with EmbeddedBroker(broker_id=0, zookeeper_connect=f"memory:ops-{uuid.uuid4().hex}") as broker:
        bootstrap = broker.bootstrap_servers
        topic = f"ops-{uuid.uuid4().hex[:8]}"
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(topic, 1, 1)])
        sync = KafkaProducer(bootstrap_servers=bootstrap, retries=10, reconnect_backoff_max_ms=500)

        async def aiokafka_across_down() -> None:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, retry_backoff_ms=100)
            await producer.start()
            try:
                await producer.send_and_wait(topic, b"a-before")
                broker.down()
                sent = await producer.send(topic, b"a-during")
                synced = sync.send(topic, b"p-during")
                await asyncio.sleep(1)
                assert not sent.done() and not synced.is_done  # nothing reaches a broker that is down
                broker.up()
                assert (await asyncio.wait_for(sent, 30)).offset >= 1
                assert synced.get(30).offset >= 1
            finally:
                await producer.stop()

        try:
            sync.send(topic, b"p-before").get(10)
            asyncio.run(aiokafka_across_down())
        finally:
            sync.close()
        got = {r[2] for r in consume_all(bootstrap, topic, 1, 4)}
        assert got == {b"a-before", b"p-before", b"a-during", b"p-during"}
