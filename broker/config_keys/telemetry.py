"""Client telemetry keys (KIP-714, read by ``broker.telemetry``): Kafka's ``telemetry.max.bytes`` and kafkalog's
bound on the clients whose pushed metrics the Prometheus endpoint keeps. The subscriptions themselves are
``CLIENT_METRICS`` config resources (``/config/client-metrics/<name>``), not broker keys."""

from __future__ import annotations

from .schema import ConfigKey

_K = ConfigKey

TELEMETRY_KEYS: tuple[ConfigKey, ...] = (
    _K(
        "telemetry.max.bytes",
        "int",
        1048576,
        "Largest client metrics payload a PushTelemetry may carry, compressed and decompressed "
        "(GetTelemetrySubscriptions tells clients); larger is TELEMETRY_TOO_LARGE.",
        at_least=1,
    ),
    _K(
        "client.telemetry.max.clients",
        "int",
        1000,
        "Client instances whose pushed metrics the Prometheus endpoint keeps (the least recently pushed is "
        "dropped first); each client's metrics also go a minute (or three push intervals) after its last push.",
        at_least=1,
    ),
)
