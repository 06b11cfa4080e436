"""A 3-broker cluster whose only listener is SASL_SSL (clients and replication over SCRAM-SHA-512, the set-up of
``cluster up --security``) keeps acks=all working across a leader kill: nothing acknowledged is lost, and the
producer goes on through the new leader."""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from broker.security.local_cluster import LocalClusterSecurity
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


def test_acks_all_survives_a_leader_kill_with_sasl_ssl_replication(zookeeper, tmp_path):
    from broker.cluster.zk_registry import ZooKeeperRegistry
    from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition

    security = LocalClusterSecurity.prepare(tmp_path)

    def write_admin(connect: str) -> None:
        registry = ZooKeeperRegistry(connect)
        try:
            registry.start(30)
            security.write_admin_credentials(registry)
        finally:
            registry.close()

    client = security.client_config()
    cluster = EmbeddedCluster(
        3,
        data_dir=tmp_path / "cluster",
        zookeeper_connect=f"{zookeeper.connect_string}/secure-failover-{uuid.uuid4().hex[:8]}",
        broker_config={
            **security.broker_config(),
            "min.insync.replicas": "2",
            "unclean.leader.election.enable": "false",
        },
        client_config=client,
        before_brokers=write_admin,
    )
    with cluster:
        bootstrap = cluster.bootstrap_servers
        topic = f"failover-{uuid.uuid4().hex[:8]}"
        with AdminClient(bootstrap, **client) as admin:
            admin.create_topics([NewTopic(topic, 1, 3)])

            def leader_and_isr() -> tuple[int, list[int]]:
                part = admin.describe_topics([topic])[topic].partitions[0]
                return part.leader, list(part.isr)

            wait_until(lambda: len(leader_and_isr()[1]) == 3, 60, "every replica in sync over SASL_SSL")
            leader = leader_and_isr()[0]

            acked: list[bytes] = []
            with Producer(bootstrap, acks="all", enable_idempotence=True, linger_ms=2, **client) as producer:
                futures = [(b"before-%d" % i, producer.send(topic, b"before-%d" % i, partition=0)) for i in range(500)]
                producer.flush(60)
                acked += [v for v, f in futures if f.exception() is None]
                assert len(acked) == 500

                cluster.kill_broker(leader)
                wait_until(
                    lambda: leader_and_isr()[0] not in (leader, -1), 60, f"a new leader after broker {leader} died"
                )
                futures = [(b"after-%d" % i, producer.send(topic, b"after-%d" % i, partition=0)) for i in range(500)]
                producer.flush(120)
                acked += [v for v, f in futures if f.exception() is None]
            assert len(acked) == 1000, "acks=all sends failed after the failover"

        consumer = Consumer(bootstrap, **client)
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            consumer.seek_to_beginning()
            got: list[bytes] = []
            for _ in range(60):
                got += [r.value for r in consumer.poll(1000)]
                if len(got) >= len(acked):
                    break
        finally:
            consumer.close()
        assert set(acked) <= set(got), f"{len(set(acked) - set(got))} acknowledged records lost"
        assert len(got) == len(set(got)), "duplicates despite idempotence"
