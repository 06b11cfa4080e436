"""Fault injection keys (read by ``broker.faults``): the loopback control channel through which tests inject
request-path faults into a broker process (``EmbeddedCluster.faults``; docs/fault-injection.md)."""

from __future__ import annotations

from .schema import ConfigKey

FAULT_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "kafkalog.fault.injection.listener",
        "string",
        "",
        "Loopback address (`127.0.0.1:<port>`, `[::1]:<port>`, or a port) of the fault-injection control channel "
        "(JSON over HTTP) that tests use to push errors, delays and dropped connections into this broker; empty "
        "(the default) opens none. For tests only: anyone on the host may inject faults through it.",
    ),
)
