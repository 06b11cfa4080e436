"""Replication with broker processes on a real ZooKeeper: acks=all to RF 3 with min.insync.replicas 2,
SIGKILL of the leader, election from the ISR, no acknowledged record lost, and the old leader rejoining."""

from __future__ import annotations

import uuid

import pytest

from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic
from tests.integration.test_crash_restart import consume_all, produce_acked
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


def test_leader_killed_under_acks_all_loses_no_acknowledged_record(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/repl-{uuid.uuid4().hex[:8]}"
    cluster = EmbeddedCluster(
        3,
        data_dir=tmp_path,
        zookeeper_connect=connect,
        broker_config={
            "replica.lag.time.max.ms": 3000,
            "replica.fetch.wait.max.ms": 100,
            "replica.fetch.backoff.ms": 200,
        },
    ).start()
    registry = ZooKeeperRegistry(connect)
    registry.start(10)
    try:
        topic = f"repl-{uuid.uuid4().hex[:8]}"
        with AdminClient(cluster.bootstrap_servers) as admin:  # RF 3 through CreateTopics
            admin.create_topics([NewTopic(topic, 2, 3, {"min.insync.replicas": "2"})])

        def isr(p):
            st = registry.partition_state(topic, p)
            return sorted(st.isr) if st is not None else None

        wait_until(lambda: isr(0) == isr(1) == [1, 2, 3], timeout_s=20, what="full ISRs")
        acked = produce_acked(cluster.bootstrap_servers, topic, 200)
        assert len(acked) == 200

        leader = registry.partition_state(topic, 0).leader
        cluster.kill_broker(leader)
        # the dead leader's session expires (6 s), the controller elects an ISR member
        wait_until(
            lambda: registry.partition_state(topic, 0).leader not in (leader, -1), timeout_s=30, what="a new leader"
        )
        more = produce_acked(cluster.bootstrap_servers, topic, 100)
        got = consume_all(cluster.bootstrap_servers, topic, 2, len(acked) + len(more))
        assert acked | more <= got
        assert len(got) == len(acked) + len(more)  # nothing else (no duplicates, no unacknowledged leftovers)

        cluster.start_broker(leader)
        wait_until(lambda: isr(0) == isr(1) == [1, 2, 3], timeout_s=30, what="the old leader back in the ISRs")
    finally:
        registry.close()
        cluster.stop()
