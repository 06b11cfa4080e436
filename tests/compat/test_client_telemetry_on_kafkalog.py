"""Apache Kafka 4.4 against kafkalog's client telemetry (KIP-714): kafka-client-metrics manages subscriptions
(``--alter``, ``--list``, ``--describe``, ``--delete``) that kafkalog stores as ``/config/client-metrics/<name>``,
and Kafka's Java producer, with its default ``enable.metrics.push=true``, gets the matching subscription and pushes
its metrics, which kafkalog's Prometheus endpoint shows under the producer's metric names."""

from __future__ import annotations

import urllib.request
import uuid
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from spark_kafkalog.client import AdminClient

from .conftest import new_topic
from .tools import compile_java, run_java, run_tool

pytestmark = pytest.mark.compat

DRIVER = Path(__file__).parent / "java" / "TelemetryDriver.java"


@pytest.fixture(scope="module")
def broker(zookeeper, tmp_path_factory):
    """One kafkalog broker with its Prometheus endpoint on a free port."""
    from broker.server import EmbeddedBroker

    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"{zookeeper.connect_string}/telemetry-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("kafkalog"),
        metrics_port=0,
    )
    b.start()
    yield b
    b.stop()


def scrape(broker) -> list:
    text = urllib.request.urlopen(f"http://127.0.0.1:{broker.broker.metrics.port}/metrics", timeout=10).read()
    return [s for family in text_string_to_metric_families(text.decode()) for s in family.samples]


def test_kafka_client_metrics_manages_subscriptions_and_the_java_producer_pushes(broker):
    bootstrap = broker.bootstrap_servers
    tool = ("org.apache.kafka.tools.ClientMetricsCommand", "--bootstrap-server", bootstrap)
    altered = run_tool(*tool, "--alter", "--name", "java-producers", "--metrics", "org.apache.kafka.producer.",
                       "--interval", "500", "--match", "client_software_name=apache-kafka-java,client_id=tel-.*")  # fmt: skip
    assert altered.stdout.strip() == "Altered client metrics config for java-producers."
    run_tool(*tool, "--alter", "--name", "unused", "--metrics", "org.apache.kafka.consumer.")
    assert run_tool(*tool, "--list").stdout.split() == ["java-producers", "unused"]
    described = run_tool(*tool, "--describe", "--name", "java-producers").stdout
    assert "interval.ms=500" in described and "metrics=org.apache.kafka.producer." in described
    assert "match=client_software_name=apache-kafka-java,client_id=tel-.*" in described
    with AdminClient(bootstrap) as admin:
        assert admin.list_client_metrics_resources() == ["java-producers", "unused"]
    deleted = run_tool(*tool, "--delete", "--name", "unused")
    assert deleted.stdout.strip() == "Deleted client metrics config for unused."
    assert run_tool(*tool, "--list").stdout.split() == ["java-producers"]

    topic = new_topic(bootstrap, 1, prefix="telemetry")
    out = run_java(compile_java(DRIVER.read_text()), "TelemetryDriver", "produce", bootstrap, topic, "tel-java", "4")
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert int(lines["sent"]) > 0
    instance = lines["instance"]  # KafkaProducer.clientInstanceId: what the broker assigned, as Kafka prints a Uuid
    pushed = [s for s in scrape(broker) if s.labels.get("client_instance_id") == instance]
    names = {s.name for s in pushed}
    assert pushed and all(s.labels["client_id"] == "tel-java" for s in pushed)
    assert all(n.startswith("org_apache_kafka_producer_") for n in names), sorted(names)
    assert "org_apache_kafka_producer_record_queue_time_avg" in names, sorted(names)


def test_kafka_configs_alters_and_describes_a_client_metrics_resource(broker):
    configs = ("kafka-configs", "--bootstrap-server", broker.bootstrap_servers, "--entity-type", "client-metrics")
    named = (*configs, "--entity-name", "by-configs")
    altered = run_tool(
        *named,
        "--alter",
        "--add-config",
        "metrics=[org.apache.kafka.consumer.,org.apache.kafka.client.],interval.ms=2000",
    )
    assert altered.stdout.strip() == "Completed updating config for client-metric by-configs."
    described = run_tool(*named, "--describe").stdout.splitlines()
    assert described[0] == "Dynamic configs for client-metric by-configs are:"
    assert "  interval.ms=2000 sensitive=false synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:interval.ms=2000}" in described
    assert any(line.startswith("  metrics=org.apache.kafka.consumer.,org.apache.kafka.client. ") for line in described)
    every = run_tool(*named, "--describe", "--all").stdout
    assert "match= sensitive=false synonyms={}" in every  # the default, as Kafka describes it
    refused = run_tool(*named, "--alter", "--add-config", "interval.ms=5", check=False)
    assert refused.returncode != 0 and "interval must be between 100 and 3600000" in refused.stdout + refused.stderr
    missing = run_tool(*configs, "--entity-name", "nope", "--describe").stdout.strip()
    assert missing == "The client-metric 'nope' doesn't exist and doesn't have dynamic config."
    run_tool(*named, "--alter", "--delete-config", "metrics,interval.ms")
    with AdminClient(broker.bootstrap_servers) as admin:
        assert "by-configs" not in admin.list_client_metrics_resources()
