"""Partition reassignment on three broker processes and a real ZooKeeper: ``kafkalog partitions reassign``
(single partition, plan file with --execute/--verify/--cancel, --list) while kafka-python produces with
acks=all, then kafka-python's own admin client (AlterPartitionReassignments / ListPartitionReassignments)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid

import pytest

from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic
from tests.integration.test_crash_restart import consume_all, produce_acked
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "broker.cli", "partitions", "reassign"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def env(zookeeper, tmp_path_factory):
    connect = f"{zookeeper.connect_string}/reassign-{uuid.uuid4().hex[:8]}"
    cluster = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("reassign"),
        zookeeper_connect=connect,
        broker_config={"replica.fetch.wait.max.ms": 100, "replica.fetch.backoff.ms": 200},
    ).start()
    registry = ZooKeeperRegistry(connect)
    registry.start(10)
    yield cluster, registry
    registry.close()
    cluster.stop()


def new_topic(cluster, replicas: list[int]) -> str:
    name = f"mv-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, replica_assignment={0: replicas})])
    return name


def settled(registry, topic: str, replicas: list[int]) -> bool:
    t, st = registry.topic(topic), registry.partition_state(topic, 0)
    return (
        t is not None
        and list(t.partitions[0]) == replicas
        and not t.is_reassigning(0)
        and st is not None
        and sorted(st.isr) == sorted(replicas)
    )


def log_bytes(cluster, broker_id: int, topic: str) -> bytes:
    """The partition's segment files on the broker's disk, concatenated in offset order."""
    segments = sorted((cluster.broker_dir(broker_id) / "logs" / f"{topic}-0").glob("*.log"))
    return b"".join(s.read_bytes() for s in segments)


def test_cli_reassigns_while_kafka_python_produces_acks_all(env, tmp_path):
    cluster, registry = env
    bootstrap = cluster.bootstrap_servers
    topic = new_topic(cluster, [1, 2])
    wait_until(lambda: settled(registry, topic, [1, 2]), timeout_s=30, what="ISR [1, 2]")
    acked: set = set()
    producing = threading.Thread(target=lambda: acked.update(produce_acked(bootstrap, topic, 3000)))
    producing.start()
    try:
        r = cli("--bootstrap-server", bootstrap, "--topic", topic, "--partition", "0", "--replicas", "2,3")
        assert r.returncode == 0, r.stderr
        assert f"Started the reassignment of {topic}-0 to replicas 2,3" in r.stdout
        rollback = json.loads(r.stdout.split("\n\n")[1])
        assert rollback["partitions"] == [{"topic": topic, "partition": 0, "replicas": [1, 2], "log_dirs": ["any"] * 2}]
        plan = tmp_path / "plan.json"
        plan.write_text(
            json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [2, 3]}]})
        )
        wait_until(
            lambda: (
                cli("--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), "--verify").returncode == 0
            ),
            timeout_s=60,
            what="--verify to report the reassignment complete",
        )
        r = cli("--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), "--verify")
        assert f"Reassignment of partition {topic}-0 is complete." in r.stdout
        assert cli("--bootstrap-server", bootstrap, "--list").stdout.strip() == "No partition reassignments found."
    finally:
        producing.join(120)
    assert len(acked) == 3000
    wait_until(lambda: settled(registry, topic, [2, 3]), timeout_s=30, what="replicas and ISR [2, 3]")
    assert registry.partition_state(topic, 0).leader == 2  # the first target replica took over from 1
    logs = cluster.broker_dir(1) / "logs"
    wait_until(lambda: not any(d.name.startswith(f"{topic}-0") for d in logs.iterdir()), what="broker 1's log deleted")
    assert acked <= consume_all(bootstrap, topic, 1, len(acked))

    # the new replica (3) holds the same bytes as the one that stayed (2)
    wait_until(lambda: log_bytes(cluster, 2, topic) == log_bytes(cluster, 3, topic), what="replicas 2 and 3 equal")
    assert len(log_bytes(cluster, 3, topic)) > 3000 * 10

    # a plan file: --execute, then --cancel at once
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [1, 2]}]}))
    r = cli("--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), "--execute")
    assert r.returncode == 0, r.stderr
    r = cli("--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), "--cancel")
    assert r.returncode == 0, r.stderr
    # cancelled, or already complete (broker 1 caught up first): either way no reassignment is left
    assert r.stdout.strip() in (f"Cancelled the reassignment of {topic}-0", f"No reassignment of {topic}-0")
    expected = [2, 3] if "Cancelled" in r.stdout else [1, 2]
    wait_until(lambda: settled(registry, topic, expected), timeout_s=30, what=f"replicas {expected}")


def test_cli_mistakes_are_one_line(env, tmp_path):
    cluster, _ = env
    bootstrap = cluster.bootstrap_servers
    topic = new_topic(cluster, [1])
    r = cli("--bootstrap-server", bootstrap, "--topic", topic, "--partition", "0", "--replicas", "1,9")
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "INVALID_REPLICA_ASSIGNMENT" in r.stderr and "brokers [9] are not live" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"version":1,"partitions":[{"topic":"x","partition":0,"replicas":[]}]}')
    r = cli("--bootstrap-server", bootstrap, "--reassignment-json-file", str(bad), "--execute")
    assert (r.returncode, r.stderr.count("\n")) == (1, 1)
    assert "replicas must be a non-empty list of broker ids" in r.stderr
    r = cli("--bootstrap-server", bootstrap, "--reassignment-json-file", str(tmp_path / "missing.json"), "--verify")
    assert r.returncode == 1 and "cannot read" in r.stderr
    r = cli("--bootstrap-server", bootstrap, "--topic", topic, "--replicas", "1")
    assert r.returncode == 2 and "needs --topic, --partition and --replicas" in r.stderr


def test_kafka_python_admin_alters_and_lists_reassignments(env):
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.errors import NoReassignmentInProgressError

    cluster, registry = env
    topic = new_topic(cluster, [3])
    wait_until(lambda: settled(registry, topic, [3]), timeout_s=30, what="the topic's leader")
    tp = TopicPartition(topic, 0)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        assert admin.alter_partition_reassignments({tp: [1, 3]}) == {tp: None}
        listed = admin.list_partition_reassignments([tp])
        assert listed in ({}, {tp: {"replicas": [1, 3], "adding_replicas": [1], "removing_replicas": []}})
        wait_until(lambda: settled(registry, topic, [1, 3]), timeout_s=30, what="replicas [1, 3] in sync")
        assert admin.list_partition_reassignments() == {}
        assert admin.alter_partition_reassignments({tp: None}) == {tp: NoReassignmentInProgressError}
    finally:
        admin.close()
