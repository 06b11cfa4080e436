"""Restart after a crash: a SIGKILLed broker, and a SIGKILLed whole cluster (ZooKeeper included), come back on
their data dirs at once, without waiting for their dead ZooKeeper sessions, with every acknowledged record.

The brokers' ZooKeeper sessions last 60 s here (the server's maximum), far longer than any start-up below is
allowed to take: coming back in time is only possible by taking over the stale registrations.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker.embedded_cluster import EmbeddedCluster
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

SESSION_MS = 60000
START_TIMEOUT_S = 30  # < SESSION_MS: a broker that waited for its dead session could not make it


def produce_acked(bootstrap: str, topic: str, n: int) -> set[tuple[int, int, bytes]]:
    """Send ``n`` records with acks=all; the (partition, offset, value) of each acknowledged one."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=2)
    futures = [(producer.send(topic, key=b"k%d" % i, value=b"v%d" % i), b"v%d" % i) for i in range(n)]
    producer.flush(30)
    acked = set()
    for future, value in futures:
        md = future.get(10)
        acked.add((md.partition, md.offset, value))
    producer.close()
    return acked


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int) -> set[tuple[int, int, bytes]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    got = set()

    def read_expected() -> bool:
        for tp, records in consumer.poll(timeout_ms=500).items():
            got.update((tp.partition, r.offset, r.value) for r in records)
        return len(got) >= expected

    try:
        wait_until(read_expected, 60, f"kafka-python to read {expected} records")
    finally:
        consumer.close()
    return got


def create_topic(bootstrap: str, partitions: int) -> str:
    from spark_kafkalog.client import AdminClient, NewTopic

    name = f"crash-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, {})])
    return name


def zk_client(connect: str) -> KazooClient:
    client = KazooClient(hosts=connect, timeout=10)
    client.start(10)
    return client


def owners(zk: KazooClient, broker_ids) -> dict[str, int]:
    """The ephemeral owner of each broker node and of /controller."""
    paths = [f"/brokers/ids/{b}" for b in broker_ids] + ["/controller"]
    return {p: zk.exists(p).ephemeralOwner for p in paths}


def test_a_broker_killed_with_sigkill_restarts_at_once_and_serves_every_acknowledged_record(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/crash-{uuid.uuid4().hex[:8]}"
    with EmbeddedCluster(
        2,
        data_dir=tmp_path,
        zookeeper_connect=connect,
        start_timeout_s=START_TIMEOUT_S,
        broker_config={"zookeeper.session.timeout.ms": SESSION_MS},
    ) as cluster:
        zk = zk_client(connect)
        try:
            topic = create_topic(cluster.bootstrap_servers, 4)
            acked = produce_acked(cluster.bootstrap_servers, topic, 2000)
            victim = json.loads(zk.get("/controller")[0])["brokerid"]  # the controller: both nodes go stale
            before = owners(zk, cluster.broker_ids)

            cluster.kill_broker(victim)
            assert owners(zk, cluster.broker_ids) == before  # its dead session still holds its nodes
            cluster.start_broker(victim)  # serving within START_TIMEOUT_S

            node = zk.exists(f"/brokers/ids/{victim}")
            assert node.ephemeralOwner != before[f"/brokers/ids/{victim}"]
            wait_until(
                lambda: (c := zk.exists("/controller")) and c.ephemeralOwner != before["/controller"],
                START_TIMEOUT_S,
                "a controller elected on a live session",
            )
            assert consume_all(cluster.bootstrap_servers, topic, 4, len(acked)) == acked
            more = produce_acked(cluster.bootstrap_servers, create_topic(cluster.bootstrap_servers, 2), 10)
            assert len(more) == 10  # the new controller elected the new topic's leaders
        finally:
            zk.stop()
            zk.close()


def test_the_whole_cluster_killed_with_sigkill_comes_back_on_the_same_data_dir(tmp_path):
    config = {"zookeeper.session.timeout.ms": SESSION_MS}
    first = EmbeddedCluster(2, data_dir=tmp_path, broker_config=config).start()
    try:
        topic = create_topic(first.bootstrap_servers, 4)
        acked = produce_acked(first.bootstrap_servers, topic, 2000)
        zk = zk_client(first.zookeeper_connect)
        before = owners(zk, first.broker_ids)
        zk.stop()
        zk.close()
    finally:
        first.kill()  # ZooKeeper and both brokers: the restarted ZooKeeper restores their sessions

    with EmbeddedCluster(2, data_dir=tmp_path, broker_config=config, start_timeout_s=START_TIMEOUT_S) as second:
        zk = zk_client(second.zookeeper_connect)
        try:
            after = owners(zk, second.broker_ids)
            assert all(after[f"/brokers/ids/{b}"] != before[f"/brokers/ids/{b}"] for b in second.broker_ids)
            wait_until(
                lambda: (c := zk.exists("/controller")) and c.ephemeralOwner != before["/controller"],
                START_TIMEOUT_S,
                "a controller elected on a live session",
            )
        finally:
            zk.stop()
            zk.close()
        assert consume_all(second.bootstrap_servers, topic, 4, len(acked)) == acked
        assert len(produce_acked(second.bootstrap_servers, create_topic(second.bootstrap_servers, 2), 10)) == 10


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (Linux ``/proc/<pid>/task/<tid>/children``), deepest last."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            out.append(child)
            out.extend(descendants(child))
    return out


def read_line(proc: subprocess.Popen, prefix: str, timeout: float) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while sel.select(max(0.0, deadline - time.monotonic())):
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(prefix):
                return line.strip().split("=", 1)[1]
    finally:
        sel.close()
    proc.kill()
    raise AssertionError(
        f"`kafkalog cluster up` printed no {prefix!r} within {timeout}s; stderr:\n{proc.communicate(timeout=30)[1]}"
    )


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the cluster's processes in /proc")
def test_cluster_up_comes_back_after_a_sigkill_of_zookeeper_and_the_brokers(tmp_path):
    command = [
        sys.executable,
        "-m",
        "broker.cli",
        "cluster",
        "up",
        "--brokers",
        "2",
        "--data-dir",
        str(tmp_path),
        "--override",
        f"zookeeper.session.timeout.ms={SESSION_MS}",
    ]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        bootstrap = read_line(first, "bootstrap.servers=", 90)
        topic = create_topic(bootstrap, 4)
        acked = produce_acked(bootstrap, topic, 1000)
    finally:
        children = descendants(first.pid)
        for pid in children:  # the children first: killing `cluster up` first would make them stop cleanly
            os.kill(pid, signal.SIGKILL)
        first.kill()
        first.communicate(timeout=30)
    assert len(children) == 3  # ZooKeeper and two brokers

    second = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        bootstrap = read_line(second, "bootstrap.servers=", START_TIMEOUT_S)
        assert consume_all(bootstrap, topic, 4, len(acked)) == acked
    finally:
        second.send_signal(signal.SIGINT)
        second.communicate(timeout=60)
