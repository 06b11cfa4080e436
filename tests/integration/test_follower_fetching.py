"""Follower fetching (KIP-392) on a 3-broker process cluster with 3 racks and Kafka's RackAwareReplicaSelector:
kafkalog's Consumer and confluent-kafka (librdkafka), each with ``client.rack``, read a replicated partition from
the follower in their rack (seen in the brokers' Prometheus metrics: the follower's counters grow, the leader
sends no records), and go back to the leader when that follower is stopped."""

from __future__ import annotations

import time
import urllib.request
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from broker.embedded_cluster import EmbeddedCluster
from broker.replication.replica_selector import RACK_AWARE_CLASS
from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition

pytestmark = pytest.mark.integration

TOPIC = "racked"
LEADER, NEAR_OURS, NEAR_THEIRS = 1, 2, 3  # broker ids; broker b is in rack-b


def scrape(url: str, name: str) -> float:
    """The value of counter ``name`` for ``TOPIC`` at the metrics endpoint ``url`` (0 when absent)."""
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and s.labels.get("topic") == TOPIC:
                return s.value
    return 0.0


def produce(bootstrap: str, values: list[bytes]) -> None:
    with Producer(bootstrap, acks=-1) as producer:
        for v in values:
            producer.send(TOPIC, v, partition=0)
        producer.flush()


def read_kafkalog(consumer: Consumer, want: int, timeout_s: float = 30.0) -> list[object]:
    got: list[object] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < want:
        assert time.monotonic() < deadline, f"kafkalog consumer: {len(got)} of {want} records"
        got += [r.value for r in consumer.poll(timeout_ms=200)]
    return got


def read_confluent(consumer, want: int, timeout_s: float = 30.0) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < want:
        assert time.monotonic() < deadline, f"confluent-kafka consumer: {len(got)} of {want} records"
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    return got


def test_consumers_read_from_their_racks_replica_and_fail_over_to_the_leader(zookeeper, tmp_path):
    from confluent_kafka import Consumer as CKConsumer
    from confluent_kafka import TopicPartition as CKTopicPartition

    with EmbeddedCluster(
        3,
        data_dir=tmp_path,
        zookeeper_connect=f"{zookeeper.connect_string}/racks-{uuid.uuid4().hex[:8]}",
        broker_config={"replica.selector.class": RACK_AWARE_CLASS},
        broker_configs={b: {"broker.rack": f"rack-{b}"} for b in (1, 2, 3)},
        metrics=True,
    ) as cluster:
        bootstrap = cluster.bootstrap_servers
        urls = {b: cluster.metrics_url(b) for b in cluster.broker_ids}
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(TOPIC, replica_assignment={0: [LEADER, NEAR_OURS, NEAR_THEIRS]})])
        first = [b"first-%03d" % i for i in range(100)]
        produce(bootstrap, first)

        ours = Consumer(bootstrap, {"client.rack": f"rack-{NEAR_OURS}", "enable.auto.commit": False})
        ours.assign([TopicPartition(TOPIC, 0)])
        ours.seek_to_beginning()
        theirs = CKConsumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "racked",
                "client.rack": f"rack-{NEAR_THEIRS}",
                "enable.auto.commit": False,
            }
        )
        theirs.assign([CKTopicPartition(TOPIC, 0, 0)])
        try:
            assert read_kafkalog(ours, len(first)) == first
            assert read_confluent(theirs, len(first)) == first
            assert ours.client.read_replicas.get(TopicPartition(TOPIC, 0)) == NEAR_OURS
            addresses = {b: ours.client.broker_address(b) for b in cluster.broker_ids}
            racks = {b: a.rack if a is not None else None for b, a in addresses.items()}  # registered, in Metadata
            assert racks == {b: f"rack-{b}" for b in cluster.broker_ids}
            served = {b: scrape(u, "kafkalog_follower_fetch_bytes_total") for b, u in urls.items()}
            # each consumer read from the follower in its rack, none from the leader
            assert served[NEAR_OURS] > 0 and served[NEAR_THEIRS] > 0, served
            assert served[LEADER] == 0
            assert scrape(urls[LEADER], "kafka_server_brokertopicmetrics_bytesout_total") == 0  # no records from it
            assert scrape(urls[NEAR_OURS], "kafka_server_brokertopicmetrics_bytesout_total") == served[NEAR_OURS]

            cluster.stop_broker(NEAR_OURS)  # the kafkalog consumer's replica: it goes back to the leader
            second = [b"second-%03d" % i for i in range(50)]
            produce(bootstrap, second)
            assert read_kafkalog(ours, len(second)) == second
            from_leader = scrape(urls[LEADER], "kafka_server_brokertopicmetrics_bytesout_total")
            assert from_leader > 0
            assert ours.client.read_replicas.get(TopicPartition(TOPIC, 0)) is None

            assert read_confluent(theirs, len(second)) == second  # still from its follower
            cluster.stop_broker(NEAR_THEIRS)  # confluent-kafka's replica: it goes back to the leader
            third = [b"third-%03d" % i for i in range(50)]
            produce(bootstrap, third)
            assert read_confluent(theirs, len(third)) == third
            assert scrape(urls[LEADER], "kafka_server_brokertopicmetrics_bytesout_total") > from_leader
        finally:
            ours.close()
            theirs.close()
