"""Apache Kafka 4.4's command-line tools and Java clients against a kafkalog broker on real ZooKeeper."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, OffsetSpec, Producer, TopicPartition

from .conftest import new_topic
from .tools import compile_java, run_java, run_tool

pytestmark = pytest.mark.compat

JAVA_DIR = Path(__file__).parent / "java"


def fields(line: str) -> dict[str, str]:
    """``Key: value`` pairs of one tab-separated line of ``kafka-topics --describe``."""
    out = {}
    for part in line.strip().split("\t"):
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def read_all(bootstrap: str, topic: str, partitions: int, **config) -> list:
    """Every record of the topic up to its end offsets (kafkalog's consumer, manual assignment)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with KafkaClient(bootstrap) as client:
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps}, isolation_level=config.get("iso", 0))
    records: list = []
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100, **config) as consumer:
        consumer.assign(tps)
        for _ in range(200):
            if all(consumer.position(tp) >= ends[tp] for tp in tps):
                break
            records.extend(consumer.poll(200))
    return records


def test_kafka_topics_create_list_describe(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = f"tools-{uuid.uuid4().hex[:8]}"
    created = run_tool(
        "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
        "--partitions", "3", "--replication-factor", "1", "--config", "retention.ms=123456",
    )  # fmt: skip
    assert created.stdout.strip() == f"Created topic {topic}."
    listed = run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--list").stdout.split()
    assert topic in listed
    described = run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic).stdout
    lines = [fields(line) for line in described.splitlines() if line.strip()]
    header, partitions = lines[0], lines[1:]
    with AdminClient(bootstrap) as admin:
        ours = admin.describe_topics([topic])[topic]
    assert header["Topic"] == topic and header["PartitionCount"] == "3" and header["ReplicationFactor"] == "1"
    assert "retention.ms=123456" in header["Configs"]
    assert header["TopicId"] == base64.urlsafe_b64encode(uuid.UUID(ours.topic_id).bytes).decode().rstrip("=")
    assert [(p["Partition"], p["Leader"], p["Replicas"], p["Isr"]) for p in partitions] == [
        (str(p.partition), str(p.leader), ",".join(map(str, p.replicas)), ",".join(map(str, p.isr)))
        for p in ours.partitions
    ]


def test_console_producer_records_read_by_kafkalog(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 1)
    lines = [f"key-{i}:value {i} with spaces" for i in range(50)]
    run_tool(
        "kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
        "--property", "parse.key=true", "--property", "key.separator=:",
        "--producer-property", "acks=all", "--producer-property", "compression.type=lz4",
        input="\n".join(lines) + "\n",
    )  # fmt: skip
    records = read_all(bootstrap, topic, 1)
    assert [(r.offset, r.key, r.value) for r in records] == [
        (i, f"key-{i}".encode(), f"value {i} with spaces".encode()) for i in range(50)
    ]


def test_console_consumer_prints_kafkalog_records(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    with Producer(bootstrap) as producer:
        sent = [producer.send(topic, b"v%d" % i, key=b"k%d" % i, headers=[("h", b"%d" % i)]) for i in range(40)]
        producer.flush(30)
        metas = [f.result(30) for f in sent]
    out = run_tool(
        "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
        "--max-messages", "40", "--timeout-ms", "30000",
        "--property", "print.key=true", "--property", "print.partition=true", "--property", "print.offset=true",
    ).stdout  # fmt: skip
    printed = sorted(tuple(line.split("\t")) for line in out.splitlines() if line.startswith("Partition:"))
    expected = sorted((f"Partition:{m.partition}", f"Offset:{m.offset}", f"k{i}", f"v{i}") for i, m in enumerate(metas))
    assert printed == expected


def test_consumer_groups_describe_shows_committed_offsets_and_lag(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    with Producer(bootstrap) as producer:
        for i in range(30):
            producer.send(topic, b"v%d" % i, partition=i % 2)
    group = f"tools-g-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): 10, TopicPartition(topic, 1): 15})
    tool = run_tool("kafka-consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
    out = tool.stdout
    rows = [line.split() for line in out.splitlines() if line.startswith(group)]
    table = {int(r[2]): (r[1], r[3], r[4], r[5]) for r in rows}
    assert table == {0: (topic, "10", "15", "5"), 1: (topic, "15", "15", "0")}
    assert f"Consumer group '{group}' has no active members." in tool.stderr


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_java_transactional_producer_and_read_committed_group(kafkalog, strategy):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    classes = compile_java((JAVA_DIR / "ExactlyOnceDriver.java").read_text())
    n = 60
    txn = f"java-tx-{uuid.uuid4().hex[:8]}"
    produced = run_java(classes, "ExactlyOnceDriver", "produce", bootstrap, topic, txn, str(n)).stdout
    committed = sorted(
        tuple(map(int, line.split()[1:])) for line in produced.splitlines() if line.startswith("committed")
    )
    assert len(committed) == n
    # kafkalog's own view: the committed records only under read_committed, both transactions without
    ours = read_all(bootstrap, topic, 3, isolation_level="read_committed")
    assert sorted((r.partition, r.offset) for r in ours) == committed
    assert sorted(r.value for r in ours) == sorted(b"committed-%d" % i for i in range(n))
    assert len(read_all(bootstrap, topic, 3)) == 2 * n

    group = f"java-g-{uuid.uuid4().hex[:8]}"
    java_strategy = {
        "range": "org.apache.kafka.clients.consumer.RangeAssignor",
        "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    }[strategy]
    consumed = run_java(classes, "ExactlyOnceDriver", "consume", bootstrap, topic, group, str(n), java_strategy).stdout
    rows = [line.split(" ", 4)[1:] for line in consumed.splitlines() if line.startswith("record")]
    assert sorted((int(p), int(o)) for p, o, _, _ in rows) == committed
    assert sorted(v for _, _, _, v in rows) == sorted(f"committed-{i}" for i in range(n))
    assert all(k == f"key-{v.split('-')[1]}" for _, _, k, v in rows)
    # the group's commits: each partition's position after its last committed record (past the markers)
    with AdminClient(bootstrap) as admin, KafkaClient(bootstrap) as client:
        offsets = admin.list_group_offsets(group)
        tps = [TopicPartition(topic, p) for p in range(3)]
        stable = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps}, isolation_level=1)
        described = admin.describe_groups([group])[group]
    assert {tp: o.offset for tp, o in offsets.items()} == {tp: stable[tp] for tp in tps}
    assert described.protocol_type == "consumer" and described.state == "Empty"
