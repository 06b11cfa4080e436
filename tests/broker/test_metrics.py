"""The broker's Prometheus endpoint, scraped over HTTP and checked against what was produced, fetched and
committed (one in-process broker, metrics.port 0)."""

from __future__ import annotations

import urllib.request

import confluent_kafka
import pytest
from prometheus_client.parser import text_string_to_metric_families

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, TopicPartition
from tests.waiting import wait_until

from .requests import batch, create, fetch, produce
from .wire import Wire


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        log_dir=tmp_path_factory.mktemp("metrics"),
        metrics_port=0,
        offsets_topic_num_partitions=1,
        transaction_state_log_num_partitions=1,
    )
    b.start()
    yield b
    b.stop()


def scrape(b: EmbeddedBroker) -> dict[tuple[str, tuple], float]:
    """Every sample as {(name, sorted labels): value}."""
    url = f"http://127.0.0.1:{b.broker.metrics.port}/metrics"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_count_what_was_produced_fetched_and_committed(broker):
    controller = ("kafka_controller_kafkacontroller_activecontrollercount", ())
    wait_until(lambda: scrape(broker)[controller] == 1, 30, "the broker became the controller")
    sizes = []
    with Wire(broker.bootstrap_servers) as w:
        create(w, "m-topic")
        for n in (3, 5):
            records = batch([b"v%d" % i for i in range(n)])
            sizes.append(len(records))
            assert produce(w, "m-topic", records).error_code == 0
        fetched = fetch(w, "m-topic", 0)
        fetched_bytes = len(bytes(fetched.records))
        after = scrape(broker)
        assert after[("kafka_server_socketservermetrics_connection_count", ())] >= 1
    topic = (("topic", "m-topic"),)
    assert after[("kafka_server_brokertopicmetrics_bytesin_total", topic)] == sum(sizes)
    assert after[("kafka_server_brokertopicmetrics_messagesin_total", topic)] == 8
    assert after[("kafka_server_brokertopicmetrics_bytesout_total", topic)] == fetched_bytes == sum(sizes)
    assert after[("kafka_network_requestmetrics_requests_total", (("request", "Produce"), ("version", "9")))] == 2
    produce_time = after[("kafka_network_requestmetrics_totaltimems_count", (("request", "Produce"),))]
    assert produce_time == 2
    replica = (("partition", "0"), ("topic", "m-topic"))
    assert after[("kafka_log_log_logendoffset", replica)] == 8
    assert after[("kafka_cluster_partition_highwatermark", replica)] == 8
    assert after[("kafka_log_log_numlogsegments", replica)] == 1
    plog = broker.broker.replica_manager.get_partition("m-topic", 0).log
    assert after[("kafka_log_log_size", replica)] == plog.size_in_bytes == sum(sizes)
    assert after[("kafka_server_replicamanager_leadercount", ())] >= 1
    assert after[("kafka_server_replicamanager_underreplicatedpartitions", ())] == 0
    assert after[("kafka_controller_kafkacontroller_offlinepartitionscount", ())] == 0

    with AdminClient(broker.bootstrap_servers) as admin:
        admin.alter_group_offsets("m-group", {TopicPartition("m-topic", 0): 3})
    lagging = scrape(broker)
    assert (
        lagging[("kafka_consumergroup_lag", (("consumergroup", "m-group"), ("partition", "0"), ("topic", "m-topic")))]
        == 5
    )
    assert lagging[("kafka_coordinator_group_groupmetadatamanager_numgroups", (("state", "Empty"),))] >= 1


def test_metrics_count_the_coordinated_transactions_by_state(broker):
    def count(state):
        return scrape(broker).get(
            ("kafka_coordinator_transaction_transactionstatemanager_numtransactions", (("state", state),))
        )

    assert count("Ongoing") == 0
    with Wire(broker.bootstrap_servers) as w:
        create(w, "m-txn-topic")
    p = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "m-txn"})
    p.init_transactions(30)
    assert count("Empty") == 1
    p.begin_transaction()
    p.produce("m-txn-topic", b"v")
    p.flush(30)  # the partition was added to the transaction before the records were sent
    assert (count("Empty"), count("Ongoing")) == (0, 1)
    p.commit_transaction(30)
    wait_until(lambda: count("CompleteCommit") == 1, 30, "the commit completed (markers written)")
    assert count("Ongoing") == count("PrepareCommit") == 0


def test_metrics_are_off_by_default(tmp_path):
    b = EmbeddedBroker(9, log_dir=tmp_path).start()
    try:
        assert b.broker.metrics.port is None
    finally:
        b.stop()
