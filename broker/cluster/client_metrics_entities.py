"""Where client metrics subscriptions (KIP-714 ``CLIENT_METRICS`` config resources) live in ZooKeeper (pure; no
I/O).

Kafka never kept these in ZooKeeper: KIP-714 came with KRaft (Kafka 3.9's ``ZkAdminManager`` refuses the resource
type, and its ZooKeeper migration skips it), where they are ``ConfigRecord``s of type ``CLIENT_METRICS``. kafkalog
keeps one config entity per subscription in the format and place of Kafka's other ``ConfigEntityZNode`` entities
(``/config/<entity type>/<name>``, Kafka's ``ConfigType.CLIENT_METRICS`` = ``client-metrics`` as the type), with a
change notification naming ``client-metrics/<name>`` after each write (paths relative to the chroot; the name
sanitized with ``sanitize_entity_name``, which leaves ``[A-Za-z0-9._-]`` as it is)::

    /config/client-metrics/<sanitized name>   {"version":1,"config":{"metrics":"org.apache.kafka.producer.",
                                               "interval.ms":"1000","match":"client_id=app.*"}}
    /config/changes/config_change_<seq>        {"version":2,"entity_path":"client-metrics/<sanitized name>"}

A subscription whose keys were all deleted keeps its node with an empty config and is not listed. Thread-safe
(pure functions and constants).
"""

from __future__ import annotations

from .zk_layout import desanitize_entity_name, sanitize_entity_name

__all__ = [
    "CLIENT_METRICS_CONFIG",
    "CLIENT_METRICS_SEGMENT",
    "client_metrics_entity_path",
    "client_metrics_config_path",
    "parse_client_metrics_entity_path",
]

CLIENT_METRICS_SEGMENT = "client-metrics"
CLIENT_METRICS_CONFIG = f"/config/{CLIENT_METRICS_SEGMENT}"


def client_metrics_entity_path(name: str) -> str:
    """``client-metrics/<sanitized name>``, the entity path of change notifications; ValueError for an empty
    name."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a client metrics subscription needs a non-empty name, got {name!r}")
    return f"{CLIENT_METRICS_SEGMENT}/{sanitize_entity_name(name)}"


def client_metrics_config_path(name: str) -> str:
    """``/config/client-metrics/<sanitized name>``."""
    return f"/config/{client_metrics_entity_path(name)}"


def parse_client_metrics_entity_path(entity_path: str) -> str | None:
    """The subscription name a change notification's entity path names; None for another entity type or a
    name that does not desanitize."""
    segment, _, sanitized = entity_path.partition("/")
    if segment != CLIENT_METRICS_SEGMENT or not sanitized or "/" in sanitized:
        return None
    try:
        return desanitize_entity_name(sanitized) or None
    except UnicodeDecodeError:
        return None
