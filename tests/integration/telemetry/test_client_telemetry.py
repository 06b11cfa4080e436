"""KIP-714 against a broker process: a client metrics subscription set with ``kafkalog configs --entity-type
client-metrics`` makes confluent-kafka (librdkafka 2.5+ pushes telemetry by default) push its metrics, which show
up on the broker's Prometheus endpoint under the client's metric names with its ``client_id``; without a matching
subscription nothing is pushed."""

from __future__ import annotations

import urllib.request
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from broker.cli.app import main as kafkalog
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


def samples(url: str) -> list:
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def client_series(url: str, client_id: str) -> dict[str, float]:
    """The pushed series of ``client_id`` on the endpoint: ``{sample name: value}`` (the last of each name)."""
    return {
        s.name: s.value
        for s in samples(url)
        if s.labels.get("client_id") == client_id and "client_instance_id" in s.labels
    }


def subscriptions_in_force(url: str) -> float:
    return next(s.value for s in samples(url) if s.name == "kafka_server_client_metrics_subscription_count")


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    with EmbeddedCluster(
        1,
        data_dir=tmp_path_factory.mktemp("telemetry"),
        zookeeper_connect=f"{zookeeper.connect_string}/telemetry-{uuid.uuid4().hex[:8]}",
        metrics=True,
    ) as c:
        with AdminClient(c.bootstrap_servers) as admin:
            admin.create_topics([NewTopic("telemetry", 1, 1)])
        yield c


def test_librdkafka_pushes_the_subscribed_metrics_into_the_prometheus_endpoint(cluster, capsys):
    from confluent_kafka import Producer

    bootstrap = cluster.bootstrap_servers
    status = kafkalog(
        [
            "configs",
            "--alter",
            "--bootstrap-server",
            bootstrap,
            "--entity-type",
            "client-metrics",
            "--entity-name",
            "rdkafka-producers",
            "--add-config",
            "metrics=[org.apache.kafka.producer.],interval.ms=1000,match=[client_id=tel-.*]",
        ]
    )
    assert status == 0
    assert "Completed updating config for client-metric rdkafka-producers." in capsys.readouterr().out
    url = cluster.metrics_url(cluster.broker_ids[0])
    # the broker follows /config/client-metrics: a client asking before it does gets no subscription (for 5 min)
    wait_until(lambda: subscriptions_in_force(url) == 1, what="the subscription in force on the broker")

    subscribed = Producer({"bootstrap.servers": bootstrap, "client.id": "tel-app", "linger.ms": 5})
    unsubscribed = Producer({"bootstrap.servers": bootstrap, "client.id": "other-app", "linger.ms": 5})
    try:

        def pushed() -> dict[str, float]:
            for p in (subscribed, unsubscribed):
                p.produce("telemetry", b"x" * 100)
                p.poll(0.1)
            return client_series(url, "tel-app")

        series = wait_until(pushed, timeout_s=30, what="tel-app's pushed metrics on the metrics endpoint")
        assert all(name.startswith("org_apache_kafka_producer_") for name in series), sorted(series)
        assert "org_apache_kafka_producer_record_queue_time_avg" in series
        assert client_series(url, "other-app") == {}  # no subscription matches it: it pushes nothing
    finally:
        subscribed.flush(10)
        unsubscribed.flush(10)

    assert kafkalog(["configs", "--describe", "--bootstrap-server", bootstrap, "--entity-type", "client-metrics"]) == 0
    out = capsys.readouterr().out
    assert "Dynamic configs for client-metric rdkafka-producers are:" in out
    assert "interval.ms=1000 sensitive=false synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:interval.ms=1000}" in out
