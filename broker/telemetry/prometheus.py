"""Client metrics pushed over KIP-714, on the broker's Prometheus endpoint (``broker.metrics``).

A client's metric name becomes a Prometheus name by the OpenTelemetry-to-Prometheus rule: every character
outside ``[a-zA-Z0-9_:]`` becomes ``_`` (a leading digit gets a ``_`` before it), so
``org.apache.kafka.producer.record.queue.time.avg`` is ``org_apache_kafka_producer_record_queue_time_avg``; a
monotonic sum is a counter, exposed with the ``_total`` suffix (not doubled:
``org.apache.kafka.producer.record.send.total`` -> ``org_apache_kafka_producer_record_send_total``). Label names
(the points' attributes) follow the same rule without ``:``; ``client_instance_id`` and ``client_id`` name the
client. A name in the broker's own ``kafka_`` namespace, or one another client already sent with the other
type, is left out of the scrape (logged once per name).

Besides the clients' series, the broker's own figures of them (Kafka's ``client-metrics`` group, as the JMX
exporter names it)::

    kafka_server_client_metrics_instance_count       client instances the broker remembers
    kafka_server_client_metrics_subscription_count   client metrics subscriptions in force on this broker

Concurrency: ``collect`` runs on prometheus_client's HTTP thread and reads ``ClientTelemetry.series`` (locked).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .store import ClientSeries


class TelemetryFigures(Protocol):
    """What the collector reads (``ClientTelemetry``; thread-safe)."""

    def series(self) -> list[ClientSeries]: ...

    def instance_count(self) -> int: ...

    def subscription_names(self) -> list[str]: ...


__all__ = ["ClientTelemetryCollector", "prometheus_name", "prometheus_label"]

log = logging.getLogger("kafkalog.telemetry")

_NAME_BAD = re.compile(r"[^a-zA-Z0-9_:]")
_LABEL_BAD = re.compile(r"[^a-zA-Z0-9_]")
RESERVED_PREFIX = "kafka_"
"""The broker's own metric names start with it."""


def prometheus_name(name: str) -> str:
    """The Prometheus metric name of a client metric name."""
    out = _NAME_BAD.sub("_", name)
    return "_" + out if out[:1].isdigit() else out or "_"


def prometheus_label(name: str) -> str:
    """The Prometheus label name of an attribute name."""
    out = _LABEL_BAD.sub("_", name)
    return "_" + out if out[:1].isdigit() else out or "_"


class ClientTelemetryCollector(Collector):
    """Yields the pushed series of ``telemetry`` (one family per name) and the broker's figures of them."""

    def __init__(self, telemetry: TelemetryFigures) -> None:
        self._telemetry = telemetry
        self._warned: set[str] = set()

    def describe(self) -> list:
        return []  # the names are the clients': nothing to describe up front

    def _skip(self, name: str, why: str) -> None:
        if name not in self._warned:
            self._warned.add(name)
            log.warning("client metric %s is not exposed: %s", name, why)

    def collect(self) -> Iterator[Metric]:
        t = self._telemetry
        yield GaugeMetricFamily(
            "kafka_server_client_metrics_instance_count",
            "Client instances (KIP-714) this broker remembers.",
            value=t.instance_count(),
        )
        yield GaugeMetricFamily(
            "kafka_server_client_metrics_subscription_count",
            "Client metrics subscriptions in force on this broker.",
            value=len(t.subscription_names()),
        )
        families: dict[str, Metric] = {}
        for s in t.series():
            base = prometheus_name(s.name)
            if base.startswith(RESERVED_PREFIX):
                self._skip(s.name, f"{RESERVED_PREFIX}* names are the broker's own")
                continue
            if s.kind == "counter" and base.endswith("_total"):
                base = base[: -len("_total")]
            family = families.get(base)
            if family is None:
                family = families[base] = Metric(base, s.description or s.name, s.kind)
            elif family.type != s.kind:
                self._skip(s.name, f"sent as a {s.kind} and as a {family.type}")
                continue
            sample = base + "_total" if s.kind == "counter" else base
            labels: dict[str, str] = {}
            for key, value in s.labels:
                label = prometheus_label(key)
                if not label.startswith("__"):
                    labels[label] = value
            family.add_sample(sample, labels, s.value)
        yield from families.values()
