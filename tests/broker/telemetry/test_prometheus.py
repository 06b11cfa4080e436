"""Pushed client metrics in the Prometheus text exposition."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from broker.telemetry.prometheus import ClientTelemetryCollector, prometheus_label, prometheus_name
from broker.telemetry.store import ClientSeries


@pytest.mark.parametrize(
    "name, expected",
    [
        ("org.apache.kafka.producer.record.queue.time.avg", "org_apache_kafka_producer_record_queue_time_avg"),
        (
            "org.apache.kafka.consumer.coordinator.rebalance.latency.max",
            "org_apache_kafka_consumer_coordinator_rebalance_latency_max",
        ),
        ("a-b/c d", "a_b_c_d"),
        ("9lives", "_9lives"),
        ("ns:name", "ns:name"),
    ],
)
def test_metric_names_become_prometheus_safe(name, expected):
    assert prometheus_name(name) == expected


def test_label_names_become_prometheus_safe():
    assert prometheus_label("node.id") == "node_id"
    assert prometheus_label("a:b") == "a_b"


class Figures:
    def __init__(self, series: list[ClientSeries]) -> None:
        self._series = series

    def series(self) -> list[ClientSeries]:
        return self._series

    def instance_count(self) -> int:
        return 7

    def subscription_names(self) -> list[str]:
        return ["a", "b"]


def _scrape(series):
    registry = CollectorRegistry()
    registry.register(ClientTelemetryCollector(Figures(series)))
    return generate_latest(registry).decode()


def test_the_brokers_own_figures_are_exposed():
    text = _scrape([])
    assert "kafka_server_client_metrics_instance_count 7.0" in text
    assert "kafka_server_client_metrics_subscription_count 2.0" in text


def test_series_are_exposed_under_the_clients_names_with_their_labels():
    labels = (("client_id", "app"), ("client_instance_id", "ASNFZ4mrze8RIjNEVWZ3iA"), ("node.id", "1"))
    text = _scrape(
        [
            ClientSeries("org.apache.kafka.producer.record.queue.time.avg", "gauge", "queue time", labels, 1.5),
            ClientSeries("org.apache.kafka.producer.record.send.total", "counter", "", labels, 12.0),
            ClientSeries("org.apache.kafka.producer.request.count", "counter", "", labels, 3.0),
        ]
    )
    assert "# TYPE org_apache_kafka_producer_record_queue_time_avg gauge" in text
    assert (
        'org_apache_kafka_producer_record_queue_time_avg{client_id="app",'
        'client_instance_id="ASNFZ4mrze8RIjNEVWZ3iA",node_id="1"} 1.5'
    ) in text
    assert "# TYPE org_apache_kafka_producer_record_send_total counter" in text
    assert "org_apache_kafka_producer_record_send_total{" in text and "_total_total" not in text
    assert "org_apache_kafka_producer_request_count_total{" in text


def test_names_in_the_brokers_namespace_and_type_clashes_are_left_out():
    text = _scrape(
        [
            ClientSeries("kafka.server.brokertopicmetrics.bytesin", "gauge", "", (), 1.0),
            ClientSeries("x.y", "gauge", "", (("client_id", "a"),), 1.0),
            ClientSeries("x.y", "counter", "", (("client_id", "b"),), 2.0),
        ]
    )
    assert "kafka_server_brokertopicmetrics" not in text
    assert 'x_y{client_id="a"} 1.0' in text and 'client_id="b"' not in text
