"""Prometheus metrics of a 3-broker process cluster scraped over HTTP: what kafka-python produced and
consumed, a group's lag, the controller, and what a stopped broker leaves under-replicated."""

from __future__ import annotations

import urllib.request
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, TopicPartition
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

TOPIC = "metered"
RECORDS = 300


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(scrapes: list[dict], name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return sum(s.get(key, 0.0) for s in scrapes)


def test_metrics_of_a_cluster_add_up_to_what_clients_did(zookeeper, tmp_path):
    from kafka import KafkaConsumer, KafkaProducer
    from kafka import TopicPartition as KTP

    with EmbeddedCluster(
        3,
        data_dir=tmp_path,
        zookeeper_connect=f"{zookeeper.connect_string}/metrics-{uuid.uuid4().hex[:8]}",
        metrics=True,
    ) as cluster:
        urls = [cluster.metrics_url(b) for b in cluster.broker_ids]
        with AdminClient(cluster.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(TOPIC, 3, 3)])
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", linger_ms=5)
        for i in range(RECORDS):
            producer.send(TOPIC, b"value-%04d" % i, partition=i % 3)
        producer.flush()
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None, consumer_timeout_ms=3000)
        consumer.assign([KTP(TOPIC, p) for p in range(3)])
        consumer.seek_to_beginning()
        consumed = sum(1 for _ in consumer)
        consumer.close()
        assert consumed == RECORDS
        with AdminClient(cluster.bootstrap_servers) as admin:
            admin.alter_group_offsets("metered-group", {TopicPartition(TOPIC, p): 40 for p in range(3)})

        scrapes = [scrape(u) for u in urls]
        assert total(scrapes, "kafka_server_brokertopicmetrics_messagesin_total", topic=TOPIC) == RECORDS
        stored = sum(
            s[("kafka_log_log_size", (("partition", str(p)), ("topic", TOPIC)))]
            for s in scrapes
            for p in range(3)
            if ("kafka_log_log_size", (("partition", str(p)), ("topic", TOPIC))) in s
        )
        bytes_in = total(scrapes, "kafka_server_brokertopicmetrics_bytesin_total", topic=TOPIC)
        assert stored == 3 * bytes_in  # every batch the leaders took, stored on three replicas
        assert total(scrapes, "kafka_server_brokertopicmetrics_bytesout_total", topic=TOPIC) >= bytes_in
        assert total(scrapes, "kafka_server_brokertopicmetrics_replicationbytesout_total", topic=TOPIC) >= 2 * bytes_in
        assert total(scrapes, "kafka_controller_kafkacontroller_activecontrollercount") == 1
        assert total(scrapes, "kafka_server_replicamanager_leadercount") >= 3
        assert total(scrapes, "kafka_server_replicamanager_partitioncount") >= 9  # three replicas of each partition
        assert total(scrapes, "kafka_network_requestmetrics_requests_total", request="Fetch", version="18") > 0
        lag = [
            total(scrapes, "kafka_consumergroup_lag", consumergroup="metered-group", topic=TOPIC, partition=str(p))
            for p in range(3)
        ]
        assert lag == [RECORDS / 3 - 40] * 3
        assert total(scrapes, "kafka_server_replicamanager_underreplicatedpartitions") == 0

        stopped = cluster.broker_ids[-1]
        cluster.stop_broker(stopped)
        alive = [cluster.metrics_url(b) for b in cluster.broker_ids if b != stopped]

        def under_replicated() -> float:
            return total([scrape(u) for u in alive], "kafka_server_replicamanager_underreplicatedpartitions")

        wait_until(lambda: under_replicated() >= 3, 30, "the stopped broker's replicas to count as under-replicated")
