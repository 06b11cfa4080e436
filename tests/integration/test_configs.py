"""Config changes on broker processes and a real ZooKeeper: kafka-python's and confluent-kafka's admin clients
and ``kafkalog configs`` alter topic and broker configs; the nodes under ``/config`` are Kafka's; every broker
follows at once, and a retention.ms change deletes old segments without a restart."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid

import pytest
from kazoo.client import KazooClient

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, Producer
from spark_kafkalog.client.admin.admin_configs import ConfigResource
from tests.waiting import stays_true, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def chroot():
    return f"/configs-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory, chroot):
    c = EmbeddedCluster(
        2,
        data_dir=tmp_path_factory.mktemp("configs"),
        zookeeper_connect=f"{zookeeper.connect_string}{chroot}",
        broker_config={"log.retention.check.interval.ms": 300, "log.segment.delete.delay.ms": 0},
    )
    c.start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def zk(zookeeper, chroot, cluster):
    client = KazooClient(hosts=f"{zookeeper.connect_string}{chroot}", timeout=10)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def node(zk, path):
    return json.loads(zk.get(path)[0])


def change_notifications(zk) -> list[dict]:
    return [node(zk, f"/config/changes/{c}") for c in sorted(zk.get_children("/config/changes"))]


def new_topic(cluster, partitions=1, rf=2, **config) -> str:
    name = f"cfg-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, rf, {k: str(v) for k, v in config.items()})])
    return name


def describe_on_each_broker(cluster, resource: ConfigResource, key: str) -> list[tuple[str | None, str]]:
    """(value, source) of ``key`` as each broker reports it (each asked alone)."""
    out = []
    for b in cluster.broker_ids:
        with AdminClient(f"127.0.0.1:{cluster.ports[b]}") as admin:
            entries = admin.describe_resource_configs([resource], keys=[key])[resource]
            out.append((entries[0].value, entries[0].source_name))
    return out


def kafkalog(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "broker.cli", "configs", *args], capture_output=True, text=True, timeout=120
    )


def test_kafka_python_alter_configs_writes_kafkas_nodes_and_every_broker_follows(cluster, zk):
    from kafka.admin import ConfigResource as KPResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient

    name = new_topic(cluster, **{"retention.ms": 1000})
    before = len(zk.get_children("/config/changes"))
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=30000)
    try:
        admin.alter_configs(
            [KPResource(ConfigResourceType.TOPIC, name, configs={"segment.bytes": "1048576"})], incremental=False
        )
        # kafka-python's AlterConfigs carries the other modified keys too (AlterConfigs replaces the whole set)
        assert node(zk, f"/config/topics/{name}") == {
            "version": 1,
            "config": {"segment.bytes": "1048576", "retention.ms": "1000"},
        }
        changes = change_notifications(zk)
        assert len(changes) == before + 1
        assert changes[-1] == {"version": 2, "entity_path": f"topics/{name}"}
        res = ConfigResource(2, name)
        wait_until(
            lambda: describe_on_each_broker(cluster, res, "segment.bytes") == [("1048576", "DYNAMIC_TOPIC_CONFIG")] * 2,
            30,
            "both brokers to report segment.bytes=1048576",
        )
        assert describe_on_each_broker(cluster, res, "retention.ms") == [("1000", "DYNAMIC_TOPIC_CONFIG")] * 2
        described = admin.describe_configs([KPResource(ConfigResourceType.TOPIC, name)], config_filter="all")
        text = repr(described)
        assert "segment.bytes" in text and "1048576" in text
    finally:
        admin.close()


def test_confluent_kafka_alters_topic_and_cluster_default_broker_configs(cluster, zk):
    from confluent_kafka.admin import AdminClient as CKAdmin
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ResourceType
    from confluent_kafka.admin import ConfigResource as CKResource

    name = new_topic(cluster)
    admin = CKAdmin({"bootstrap.servers": cluster.bootstrap_servers})
    topic = CKResource(
        ResourceType.TOPIC,
        name,
        incremental_configs=[
            ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
            ConfigEntry("max.message.bytes", "200000", incremental_operation=AlterConfigOpType.SET),
        ],
    )
    for f in admin.incremental_alter_configs([topic]).values():
        f.result(30)
    assert node(zk, f"/config/topics/{name}")["config"] == {
        "cleanup.policy": "delete,compact",
        "max.message.bytes": "200000",
    }
    legacy = CKResource(ResourceType.TOPIC, name, set_config={"retention.bytes": "123456789"})
    with pytest.deprecated_call():
        futures = admin.alter_configs([legacy])
    for f in futures.values():
        f.result(30)
    assert node(zk, f"/config/topics/{name}")["config"] == {"retention.bytes": "123456789"}
    one = cluster.broker_ids[0]
    own = CKResource(
        ResourceType.BROKER,
        str(one),
        incremental_configs=[ConfigEntry("log.retention.ms", "86400000", incremental_operation=AlterConfigOpType.SET)],
    )
    try:
        for f in admin.incremental_alter_configs([own]).values():
            f.result(30)
        assert node(zk, f"/config/brokers/{one}") == {"version": 1, "config": {"log.retention.ms": "86400000"}}
        assert change_notifications(zk)[-1] == {"version": 2, "entity_path": f"brokers/{one}"}
        wait_until(
            lambda: (
                describe_on_each_broker(cluster, ConfigResource(2, name), "retention.ms")
                == [("86400000", "DYNAMIC_BROKER_CONFIG"), ("604800000", "DEFAULT_CONFIG")]
            ),
            30,
            f"broker {one} (only) to apply its own log.retention.ms",
        )
        refused = CKResource(
            ResourceType.BROKER,
            str(one),
            incremental_configs=[ConfigEntry("num.partitions", "3", incremental_operation=AlterConfigOpType.SET)],
        )
        with pytest.raises(Exception) as e:
            for f in admin.incremental_alter_configs([refused]).values():
                f.result(30)
        assert "num.partitions" in str(e.value)
    finally:
        clear = CKResource(
            ResourceType.BROKER,
            str(one),
            incremental_configs=[ConfigEntry("log.retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)],
        )
        for f in admin.incremental_alter_configs([clear]).values():
            f.result(30)
    assert node(zk, f"/config/brokers/{one}")["config"] == {}


def test_cli_alters_retention_live_and_old_segments_go_without_a_restart(cluster, zk):
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CKTopicPartition

    name = new_topic(cluster, rf=2, **{"segment.bytes": 1024})
    old = int(time.time() * 1000) - 3_600_000
    with Producer(cluster.bootstrap_servers, acks=-1, linger_ms=0, batch_size=200) as producer:
        for _ in range(40):
            producer.send(name, b"x" * 100, partition=0, timestamp_ms=old).result(30)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "configs-test"})
    try:

        def earliest() -> int:
            return consumer.get_watermark_offsets(CKTopicPartition(name, 0), timeout=10)[0]

        # retention runs every 300 ms; a week's retention.ms keeps everything
        stays_true(lambda: earliest() == 0, 1.0, "every segment kept while retention.ms is a week")
        boot = cluster.bootstrap_servers
        r = kafkalog("alter", "--bootstrap-server", boot, "--topic", name, "--add-config", "retention.ms=60000")
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"Completed updating config for topic {name}."
        wait_until(lambda: earliest() >= 30, 60, "retention to delete the old segments")
    finally:
        consumer.close()

    r = kafkalog("describe", "--bootstrap-server", boot, "--entity-type", "topics", "--entity-name", name)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"Dynamic configs for topic {name} are:"
    assert sorted(line.split()[0] for line in lines[1:]) == ["retention.ms=60000", "segment.bytes=1024"]
    assert "synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000, DEFAULT_CONFIG:log.retention.ms=604800000}" in r.stdout
    r = kafkalog("describe", "--bootstrap-server", boot, "--topic", name, "--all")
    assert "All configs for topic" in r.stdout and "  cleanup.policy=delete sensitive=false" in r.stdout

    r = kafkalog(
        "alter",
        "--bootstrap-server",
        boot,
        "--topic",
        name,
        "--add-config",
        "cleanup.policy=[compact,delete]",
        "--delete-config",
        "segment.bytes",
    )
    assert r.returncode == 0, r.stderr
    assert node(zk, f"/config/topics/{name}")["config"] == {"retention.ms": "60000", "cleanup.policy": "compact,delete"}

    r = kafkalog("alter", "--bootstrap-server", boot, "--broker-defaults", "--add-config", "log.segment.bytes=2000000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Completed updating default config for brokers in the cluster."
    r = kafkalog("describe", "--bootstrap-server", boot, "--entity-type", "brokers", "--entity-default")
    assert r.stdout.splitlines() == [
        "Default configs for brokers in the cluster are:",
        "  log.segment.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000}",
    ]
    kafkalog("alter", "--bootstrap-server", boot, "--broker-defaults", "--delete-config", "log.segment.bytes")
    assert node(zk, "/config/brokers/<default>")["config"] == {}

    bad = kafkalog("alter", "--bootstrap-server", boot, "--topic", name, "--add-config", "retention.ms=soon")
    assert bad.returncode == 1 and "retention.ms" in bad.stderr and "INVALID_CONFIG" in bad.stderr
    bad = kafkalog(
        "alter",
        "--bootstrap-server",
        boot,
        "--broker",
        str(cluster.broker_ids[0]),
        "--add-config",
        "listeners=PLAINTEXT://:1",
    )
    assert bad.returncode == 1 and "listeners: cannot be changed dynamically" in bad.stderr
    bad = kafkalog("alter", "--bootstrap-server", boot, "--broker", "99", "--add-config", "log.retention.ms=1")
    assert bad.returncode == 1 and "broker 99 is not in the cluster" in bad.stderr
    usage = kafkalog("describe", "--bootstrap-server", boot)
    assert usage.returncode == 2 and "configs needs one entity" in usage.stderr


def test_every_kafka_topic_config_at_kafkas_default_creates_a_topic_and_a_refused_one_names_why(cluster):
    from confluent_kafka.admin import AdminClient as CKAdmin
    from confluent_kafka.admin import ConfigResource as CKResource
    from confluent_kafka.admin import NewTopic as CKTopic
    from confluent_kafka.admin import ResourceType

    from tests.broker.log.test_kafka_topic_configs import KAFKA_TOPIC_DEFAULTS

    admin = CKAdmin({"bootstrap.servers": cluster.bootstrap_servers})
    name = f"cfg-all-{uuid.uuid4().hex[:8]}"
    given = {k: v for k, v in KAFKA_TOPIC_DEFAULTS.items() if v != ""}  # librdkafka sends no empty values
    admin.create_topics([CKTopic(name, 1, 2, config=given)])[name].result(30)
    described = admin.describe_configs([CKResource(ResourceType.TOPIC, name)])
    entries = next(iter(described.values())).result(30)
    assert {k: e.value or "" for k, e in entries.items()} == KAFKA_TOPIC_DEFAULTS
    refused = f"cfg-tiered-{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception) as e:
        admin.create_topics([CKTopic(refused, 1, 1, config={"remote.storage.enable": "true"})])[refused].result(30)
    assert "INVALID_CONFIG" in str(e.value) and "tiered storage" in str(e.value)


def test_compression_type_recompresses_on_the_leader_and_every_replica_stores_the_same_bytes(cluster):
    from confluent_kafka import Producer as CKProducer
    from kafka import KafkaConsumer, TopicPartition

    from spark_kafkalog.records import iter_batches

    name = new_topic(cluster, rf=2, **{"compression.type": "zstd"})
    producer = CKProducer({"bootstrap.servers": cluster.bootstrap_servers, "compression.type": "gzip", "linger.ms": 5})
    for i in range(200):
        producer.produce(name, key=b"k%d" % (i % 7), value=b"value-%d" % i)
    assert producer.flush(30) == 0
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, consumer_timeout_ms=5000)
    tp = TopicPartition(name, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    values = [m.value for m in consumer]
    consumer.close()
    assert values == [b"value-%d" % i for i in range(200)]

    def stored(broker_id: int) -> bytes:  # the segment file as written (pwrite: visible before any fsync)
        return (cluster.broker_dir(broker_id) / "logs" / f"{name}-0" / f"{0:020d}.log").read_bytes()

    wait_until(lambda: len({stored(b) for b in cluster.broker_ids}) == 1, 30, "both replicas to hold the same bytes")
    codecs = {v.header().compression.name for v in iter_batches(stored(cluster.broker_ids[0]))}
    assert codecs == {"ZSTD"}
