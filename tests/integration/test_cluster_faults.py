"""The cluster in ZooKeeper and under faults: node layout, SIGKILL of a broker, misbehaving clients,
and metadata agreement between brokers."""

from __future__ import annotations

import json
import struct
import threading
import time

import pytest
from kazoo.client import KazooClient

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from tests.waiting import wait_until

from ..broker.wire import Wire
from .conftest import new_topic

pytestmark = pytest.mark.integration


@pytest.fixture()
def zk(cluster):
    client = KazooClient(hosts=cluster.zookeeper_connect, timeout=10)
    client.start(10)
    yield client
    client.stop()
    client.close()


def metadata(address: str, topic: str):
    R = API_BY_KEY[ApiKey.METADATA].Request
    with Wire(address) as w:
        return w.call(ApiKey.METADATA, 12, topics=[R.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)


def test_zookeeper_layout(cluster, zk):
    topic = new_topic(cluster, 4, retention_ms=3600000)
    ids = sorted(int(x) for x in zk.get_children("/brokers/ids"))
    assert ids == [1, 2, 3]
    for b in ids:
        data, stat = zk.get(f"/brokers/ids/{b}")
        node = json.loads(data)
        assert stat.ephemeralOwner != 0
        assert node["port"] == cluster.ports[b] and node["host"] == "127.0.0.1"
        assert node["endpoints"] == [f"PLAINTEXT://127.0.0.1:{cluster.ports[b]}"] and node["version"] == 5
        assert node["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    assert len(cluster_id) == 22
    assignment = json.loads(zk.get(f"/brokers/topics/{topic}")[0])
    assert sorted(assignment["partitions"]) == ["0", "1", "2", "3"]
    assert {r[0] for r in assignment["partitions"].values()} == {1, 2, 3}  # spread over the brokers
    for p, replicas in assignment["partitions"].items():
        state = json.loads(zk.get(f"/brokers/topics/{topic}/partitions/{p}/state")[0])
        assert state["leader"] == replicas[0] and state["isr"] == replicas and state["leader_epoch"] >= 0
    assert json.loads(zk.get(f"/config/topics/{topic}")[0])["config"] == {"retention.ms": "3600000"}
    controller = json.loads(zk.get("/controller")[0])
    assert controller["brokerid"] in ids and zk.get("/controller")[1].ephemeralOwner != 0
    assert int(zk.get("/controller_epoch")[0]) >= 1


def test_metadata_agrees_on_every_broker(cluster):
    topic = new_topic(cluster, 6)
    views = []
    for b in cluster.broker_ids:
        resp = metadata(f"127.0.0.1:{cluster.ports[b]}", topic)
        views.append(
            (
                sorted((x.node_id, x.host, x.port) for x in resp.brokers),
                resp.cluster_id,
                resp.controller_id,
                sorted(
                    (p.partition_index, p.leader_id, p.leader_epoch, tuple(p.replica_nodes))
                    for p in resp.topics[0].partitions
                ),
            )
        )
    assert all(v == views[0] for v in views), views
    leaders = {p[1] for p in views[0][3]}
    assert leaders == {1, 2, 3}


def test_sigkill_broker_vanishes_then_serves_everything_again(cluster, zk):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = new_topic(cluster, 3)
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=2)
    futures = [producer.send(topic, value=b"v%d" % i, key=b"k%d" % i) for i in range(3_000)]
    producer.flush(30)
    acked = [f.get(10) for f in futures]
    producer.close()
    victim = acked[0].partition
    victim_broker = metadata(cluster.bootstrap_servers.split(",")[0], topic).topics[0].partitions[victim].leader_id

    cluster.kill_broker(victim_broker)
    killed_at = time.monotonic()
    wait_until(lambda: str(victim_broker) not in zk.get_children("/brokers/ids"), 15, "the ephemeral node to vanish")
    assert time.monotonic() - killed_at < 10  # session timeout 6 s (capped by the server's max)
    other = next(b for b in cluster.broker_ids if b != victim_broker)
    wait_until(
        lambda: metadata(f"127.0.0.1:{cluster.ports[other]}", topic).topics[0].partitions[victim].leader_id == -1,
        10,
        "the controller to mark the partition offline",
    )

    cluster.start_broker(victim_broker)
    wait_until(
        lambda: (
            metadata(f"127.0.0.1:{cluster.ports[other]}", topic).topics[0].partitions[victim].leader_id == victim_broker
        ),
        20,
        "leadership to return",
    )
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None)
    tps = [TopicPartition(topic, p) for p in range(3)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    got = {}

    def read_acked() -> bool:
        for tp, recs in consumer.poll(timeout_ms=500).items():
            for r in recs:
                got[(tp.partition, r.offset)] = r.value
        return len(got) >= len(acked)

    try:
        wait_until(read_acked, 60, f"kafka-python to read the {len(acked)} acknowledged records")
    finally:
        consumer.close()
    assert {(md.partition, md.offset) for md in acked} == set(got)


def test_garbage_clients_are_dropped_while_a_producer_keeps_going(cluster):
    from kafka import KafkaProducer

    topic = new_topic(cluster, 1)
    stop = threading.Event()
    results = []

    def produce():
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, linger_ms=1)
        i = 0
        while not stop.is_set():
            results.append(producer.send(topic, value=b"%d" % i))
            i += 1
            time.sleep(0.001)
        producer.flush(30)
        producer.close()

    t = threading.Thread(target=produce)
    t.start()
    try:
        wait_until(lambda: len(results) >= 50, 10, "the producer under way")
        for payload in (
            b"\x00\x00\x00\x10" + b"\xde\xad\xbe\xef" * 4,  # undecodable request
            struct.pack(">i", 500 * 1024 * 1024),  # oversized frame
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        ):  # not Kafka at all
            for b in cluster.broker_ids:
                with Wire(f"127.0.0.1:{cluster.ports[b]}") as bad:
                    bad.send_raw(payload)
                    assert bad.closed_by_peer(), f"broker {b} kept a connection that sent {payload[:8]!r}"
        sent = len(results)
        wait_until(lambda: len(results) >= sent + 60, 10, "the producer to go on after the garbage clients")
    finally:
        stop.set()
        t.join(30)
    assert len(results) > 100
    offsets = [f.get(10).offset for f in results]
    assert offsets == list(range(len(results)))
