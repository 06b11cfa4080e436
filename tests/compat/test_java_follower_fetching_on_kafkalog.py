"""Apache Kafka 4.4's own consumer (``kafka-console-consumer`` with ``client.rack``) against a 3-rack kafkalog cluster
with Kafka's RackAwareReplicaSelector: it follows the leader's preferred read replica (KIP-392) and reads every
record from the follower in its rack, as the brokers' Prometheus metrics show."""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from broker.replication.replica_selector import RACK_AWARE_CLASS
from spark_kafkalog.client import AdminClient, NewTopic, Producer
from tests.integration.test_follower_fetching import scrape

from .tools import run_tool

pytestmark = pytest.mark.compat

TOPIC = "racked"  # the topic ``scrape`` reads the counters of
LEADER, NEAR = 1, 3  # broker ids; broker b is in rack-b
RECORDS = 60


def test_kafkas_consumer_reads_from_the_follower_in_its_rack(zookeeper, tmp_path):
    with EmbeddedCluster(
        3,
        data_dir=tmp_path,
        zookeeper_connect=f"{zookeeper.connect_string}/java-racks-{uuid.uuid4().hex[:8]}",
        broker_config={"replica.selector.class": RACK_AWARE_CLASS},
        broker_configs={b: {"broker.rack": f"rack-{b}"} for b in (1, 2, 3)},
        metrics=True,
    ) as cluster:
        bootstrap = cluster.bootstrap_servers
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(TOPIC, replica_assignment={0: [LEADER, 2, NEAR]})])
        with Producer(bootstrap, acks=-1) as producer:
            for i in range(RECORDS):
                producer.send(TOPIC, b"v%d" % i, partition=0)
            producer.flush(30)
        out = run_tool(
            "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--partition", "0",
            "--offset", "earliest", "--max-messages", str(RECORDS), "--timeout-ms", "30000",
            "--consumer-property", f"client.rack=rack-{NEAR}",
        ).stdout  # fmt: skip
        printed = [line for line in out.splitlines() if line.startswith("v")]  # not the tool's option notices
        assert printed == [f"v{i}" for i in range(RECORDS)]
        served = {b: scrape(cluster.metrics_url(b), "kafkalog_follower_fetch_bytes_total") for b in cluster.broker_ids}
        assert served[NEAR] > 0 and served[LEADER] == 0 and served[2] == 0, served
        assert scrape(cluster.metrics_url(LEADER), "kafka_server_brokertopicmetrics_bytesout_total") == 0
