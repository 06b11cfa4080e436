"""Apache Kafka 4.4's tools on the admin APIs of issue 28 against kafkalog: ``kafka-topics --describe`` through
DescribeTopicPartitions (paged by the cursor, no fallback to Metadata), ``kafka-leader-election`` (preferred and
unclean, by partition, by file, every partition) on a two-broker kafkalog cluster, with ``kafkalog
leader-election`` printing the same lines for the same cluster state, and Spark's own Kafka connector reading
the stream source's offset JSON with its topic-id entries. (DescribeProducers and DescribeLogDirs at Kafka 4.x's
versions: ``kafka-transactions describe-producers`` and ``kafka-log-dirs`` in test_kafka_admin_tools_on_kafkalog.)
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.datasource.stream_planning import to_offset_json
from spark_kafkalog.datasource.topic_ids import kafka_topic_id
from tests.waiting import wait_until

from .conftest import new_topic
from .test_kafka_tools_on_kafkalog import fields
from .test_spark_kafka_on_kafkalog import spark  # noqa: F401 - the SparkSession with Spark's Kafka connector
from .tools import run_tool

pytestmark = pytest.mark.compat

LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"  # bin/kafka-leader-election.sh


def test_kafka_topics_describes_through_describe_topic_partitions_page_by_page(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topics = sorted(new_topic(bootstrap, n, prefix="dtp") for n in (5, 1, 3))
    described = run_tool(
        "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--partition-size-limit-per-response", "2"
    )  # fmt: skip
    assert "DescribeTopicPartitions API is not supported" not in described.stderr  # no fallback to Metadata
    rows = [fields(line) for line in described.stdout.splitlines() if line.strip()]
    with AdminClient(bootstrap) as admin:
        ours = admin.describe_topic_partitions(topics, partition_limit=2)
    for name in topics:
        header = next(r for r in rows if r.get("Topic") == name and "TopicId" in r)
        assert header["TopicId"] == kafka_topic_id(ours[name].topic_id or "")
        assert header["PartitionCount"] == str(ours[name].num_partitions)
        parts = [r for r in rows if r.get("Topic") == name and "Partition" in r]
        assert [(p["Partition"], p["Leader"], p["Replicas"], p["Isr"], p["Elr"], p["LastKnownElr"]) for p in parts] == [
            (str(p.partition), str(p.leader), ",".join(map(str, p.replicas)), ",".join(map(str, p.isr)), "", "")
            for p in ours[name].partitions
        ]  # Elr/LastKnownElr empty lists (Metadata's answer would print N/A)
    missing = run_tool(
        "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "no-such-dtp", check=False
    )
    assert missing.returncode == 1 and "Topic 'no-such-dtp' does not exist as expected" in missing.stderr


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    """Two kafkalog broker processes without automatic preferred-replica elections, and a registry view."""
    connect = f"{zookeeper.connect_string}/compat-elect-{uuid.uuid4().hex[:8]}"
    c = EmbeddedCluster(
        2,
        data_dir=tmp_path_factory.mktemp("compat-elect"),
        zookeeper_connect=connect,
        broker_config={"auto.leader.rebalance.enable": "false", "replica.fetch.wait.max.ms": 100},
    ).start()
    registry = ZooKeeperRegistry(connect)
    registry.start(10)
    yield c, registry
    registry.close()
    c.stop()


def kafka_election(bootstrap: str, *args: str) -> subprocess.CompletedProcess:
    return run_tool(LEADER_ELECTION, "--bootstrap-server", bootstrap, *args, check=False)


def kafkalog_election(bootstrap: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "broker.cli", "leader-election", "--bootstrap-server", bootstrap, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_kafka_leader_election_preferred_and_unclean_on_a_kafkalog_cluster(cluster, tmp_path):
    c, registry = cluster
    bootstrap = c.bootstrap_servers
    topic = f"elect-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, replica_assignment={0: [1, 2], 1: [2, 1]})])

    def state(p: int = 0):
        return registry.partition_state(topic, p)

    wait_until(lambda: state(0) is not None and sorted(state(0).isr) == [1, 2], timeout_s=30, what="ISR [1, 2]")
    c.stop_broker(1)
    wait_until(lambda: state(0).leader == 2, timeout_s=30, what="broker 2 leading p0")
    c.start_broker(1)
    wait_until(lambda: 1 in state(0).isr, timeout_s=30, what="broker 1 back in sync")

    elected = kafka_election(bootstrap, "--election-type", "preferred", "--topic", topic, "--partition", "0")
    assert (elected.returncode, elected.stdout) == (
        0,
        f"Successfully completed leader election (PREFERRED) for partitions {topic}-0\n",
    ), elected.stderr
    assert state(0).leader == 1

    plan = tmp_path / "election.json"
    plan.write_text(json.dumps({"partitions": [{"topic": topic, "partition": 0}]}))
    noop = kafka_election(bootstrap, "--election-type", "PREFERRED", "--path-to-json-file", str(plan))
    ours = kafkalog_election(bootstrap, "--election-type", "PREFERRED", "--path-to-json-file", str(plan))
    assert (noop.returncode, noop.stdout) == (0, f"Valid replica already elected for partitions {topic}-0\n")
    assert (ours.returncode, ours.stdout) == (noop.returncode, noop.stdout)
    every = kafka_election(bootstrap, "--election-type", "preferred", "--all-topic-partitions")
    assert (every.returncode, every.stdout) == (0, "")  # only partitions that needed an election are answered

    unknown = kafka_election(bootstrap, "--election-type", "preferred", "--topic", topic, "--partition", "7")
    assert unknown.returncode == 1 and unknown.stdout.startswith(
        f"Error completing leader election (PREFERRED) for partition: {topic}-7: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"
    )

    # unclean: p1 (2, 1) loses its ISR member 2 after 1 fell out of sync, then 1 comes back alone
    c.stop_broker(1)
    wait_until(lambda: state(1).isr == (2,), timeout_s=30, what="p1's ISR [2]")
    c.stop_broker(2)
    c.start_broker(1)
    try:
        wait_until(lambda: state(1).leader == -1, timeout_s=30, what="p1 offline")
        refused = kafka_election(bootstrap, "--election-type", "preferred", "--topic", topic, "--partition", "1")
        assert refused.returncode == 1 and "PreferredLeaderNotAvailableException" in refused.stdout
        unclean = kafka_election(bootstrap, "--election-type", "unclean", "--topic", topic, "--partition", "1")
        assert (unclean.returncode, unclean.stdout) == (
            0,
            f"Successfully completed leader election (UNCLEAN) for partitions {topic}-1\n",
        ), unclean.stderr
        assert (state(1).leader, state(1).isr) == (1, (1,))
        again = ("--election-type", "unclean", "--topic", topic, "--partition", "1")
        kafka, ours = kafka_election(bootstrap, *again), kafkalog_election(bootstrap, *again)
        assert (kafka.returncode, kafka.stdout) == (0, f"Valid replica already elected for partitions {topic}-1\n")
        assert (ours.returncode, ours.stdout) == (kafka.returncode, kafka.stdout)
    finally:
        c.start_broker(2)


def test_spark_kafka_connector_reads_the_stream_offsets_with_topic_ids_as_starting_offsets(spark, kafkalog):  # noqa: F811
    """The stream source's offset JSON (with its ``@topicId`` entries) given to Spark's own ``format("kafka")`` as
    ``startingOffsets``: Spark's parser takes the entries for topics without partitions and reads from exactly the
    recorded offsets."""
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2, prefix="ids")
    with Producer(bootstrap) as producer:
        for i in range(10):
            producer.send(topic, b"v%d" % i, partition=i % 2)
        producer.flush(30)
    with AdminClient(bootstrap) as admin:
        topic_id = kafka_topic_id(admin.describe_topics([topic])[topic].topic_id or "")
    offsets = to_offset_json({TopicPartition(topic, 0): 3, TopicPartition(topic, 1): 4}, {topic: topic_id})
    assert f"@topicId:{topic}:{topic_id}" in offsets
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", json.dumps(offsets))
        .load()
        .selectExpr("partition", "offset")
        .collect()
    )
    assert sorted((r.partition, r.offset) for r in rows) == [(0, 3), (0, 4), (1, 4)]
