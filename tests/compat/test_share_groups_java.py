"""Apache Kafka 4.4's Java share consumer (KafkaShareConsumer, explicit acknowledgement) and its
kafka-share-groups tool, on Apache Kafka 4.4 (the oracle) and kafkalog: a RELEASEd record comes back with
delivery count 2, every record is accepted once, and the tool lists and describes the group; Kafka's
kafka-console-share-consumer reads a topic through a share group. On a 3-broker kafkalog cluster the Java
consumer shares partitions led by different brokers, its group and share coordinators elsewhere."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer

from broker.embedded_cluster import EmbeddedCluster
from tests.share_scenarios import produce, share_group, topic_maker

from .tools import compile_java, run_java, run_tool

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).parent / "java" / "ShareConsumerDriver.java"
SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"  # kafka-share-groups.sh
CONSOLE_SHARE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"  # kafka-console-share-consumer.sh


@pytest.fixture(scope="module")
def kafkalog_cluster(zookeeper, tmp_path_factory):
    from .share_brokers import SHARE_PROPERTIES

    config = {k: v for k, v in SHARE_PROPERTIES.items() if not k.startswith("share.coordinator.state.topic")}
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("share-java"),
        zookeeper_connect=f"{zookeeper.connect_string}/share-java-{uuid.uuid4().hex[:8]}",
        broker_config={"group.initial.rebalance.delay.ms": 0, "offsets.topic.num.partitions": 10, **config},
    )
    c.start()
    yield c
    c.stop()


def deliveries_of(out: str) -> list[tuple[int, int, int, str]]:
    """(partition, offset, delivery count, value) of each ``record`` line the driver printed."""
    return [
        (int(p), int(o), int(c), v)
        for _, p, o, c, v in (line.split() for line in out.splitlines() if line.startswith("record "))
    ]


def table(output: str) -> list[dict[str, str]]:
    """The rows of a kafka-share-groups table (a header line of column names, then one line per row)."""
    lines = [line.split() for line in output.splitlines() if line.strip()]
    header = next((i for i, fields in enumerate(lines) if fields[0] == "GROUP"), None)
    assert header is not None, f"no table in kafka-share-groups' output:\n{output}"
    return [dict(zip(lines[header], fields, strict=False)) for fields in lines[header + 1 :] if len(fields) > 1]


def test_java_share_consumer_releases_and_accepts_and_kafka_share_groups_describes(share_target):
    bootstrap = share_target.bootstrap_servers
    group = share_group(bootstrap)
    topic = share_target.new_topic(1)
    produce(bootstrap, topic, [b"v%d" % i for i in range(6)])
    classes = compile_java(DRIVER.read_text())
    out = run_java(classes, "ShareConsumerDriver", "consume", bootstrap, topic, group, "6").stdout
    deliveries = [tuple(line.split()[1:]) for line in out.splitlines() if line.startswith("record ")]
    first = [(p, o, c, v) for p, o, c, v in deliveries if c == "1"]
    again = [(p, o, c, v) for p, o, c, v in deliveries if c != "1"]
    assert first == [("0", str(i), "1", f"v{i}") for i in range(6)]
    assert sorted(again, key=lambda d: int(d[1])) == [("0", str(i), "2", f"v{i}") for i in (1, 3, 5)]

    listed = run_tool(SHARE_GROUPS, "--bootstrap-server", bootstrap, "--list").stdout.split()
    assert group in listed
    state = table(
        run_tool(SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe", "--state", "--group", group).stdout
    )
    assert [(r["GROUP"], r["STATE"], r["#MEMBERS"]) for r in state] == [(group, "Empty", "0")]
    offsets = table(run_tool(SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe", "--group", group).stdout)
    assert [(r["GROUP"], r["TOPIC"], r["PARTITION"], r["LAG"]) for r in offsets] == [(group, topic, "0", "0")]
    # Kafka 4.4 reports the start offset of the last state written, which need not have moved past every
    # acknowledged record yet: only that it lies within the topic
    assert 0 <= int(offsets[0]["START-OFFSET"]) <= 6


def test_kafka_console_share_consumer_reads_every_record_once(share_target):
    bootstrap = share_target.bootstrap_servers
    group = share_group(bootstrap)
    topic = share_target.new_topic(1)
    produce(bootstrap, topic, [b"c%d" % i for i in range(4)])
    out = run_tool(
        CONSOLE_SHARE_CONSUMER,
        *("--bootstrap-server", bootstrap, "--topic", topic, "--group", group),
        *("--max-messages", "4", "--timeout-ms", "60000"),
        *("--formatter-property", "print.offset=true", "--formatter-property", "print.delivery=true"),
    ).stdout
    assert out.splitlines() == [f"Offset:{i}\tDelivery:1\tc{i}" for i in range(4)]


def test_java_share_consumer_on_a_kafkalog_cluster_shares_partitions_of_three_leaders(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    group = share_group(bootstrap)
    topic = topic_maker(bootstrap, replication_factor=3)(3)
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(3):
        for i in range(4):
            producer.produce(topic, f"p{p}-{i}".encode(), partition=p)
    assert producer.flush(30) == 0
    classes = compile_java(DRIVER.read_text())
    out = run_java(classes, "ShareConsumerDriver", "consume", bootstrap, topic, group, "12").stdout
    got = deliveries_of(out)
    assert sorted(d for d in got if d[2] == 1) == [(p, i, 1, f"p{p}-{i}") for p in range(3) for i in range(4)]
    assert sorted(d for d in got if d[2] != 1) == [(p, i, 2, f"p{p}-{i}") for p in range(3) for i in (1, 3)]
