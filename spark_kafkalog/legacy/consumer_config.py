"""``ConsumerConfig``: the settings of Kafka 0.8's high-level consumer (``kafka.consumer.ConsumerConfig``).

Keys and defaults are 0.8.2's; values may be given typed or as properties strings. An unknown key is an error
naming it. ``dual.commit.enabled`` defaults to true with ``offsets.storage=kafka`` (0.8.2's default) and to
false with ``offsets.storage=zookeeper``; set explicitly, it applies to either store (see
``connector_offsets``). Immutable after construction.

Security (issue 26, not in 0.8): ``security.protocol`` and the modern client's ``ssl.*`` / ``sasl.*`` keys
(Kafka's and librdkafka's names, ``security_settings.SECURITY_KEYS``), checked by ``ClientConfig``; every
connection of the connector (its offsets/metadata client and its fetcher) uses one ``ClientSecurity``
(``security_settings``). ``listener.name`` (kafkalog's own key) names the broker listener whose endpoint the
connector takes from ``/brokers/ids/<id>``; without it, the first listener whose protocol (in the
registration's ``listener_security_protocol_map``) is ``security.protocol``. ``repr`` never shows a secret
(passwords, JAAS lines, keys: ``'<hidden>'``).
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.legacy.security_settings import LegacySecurity, security_key

__all__ = ["ConsumerConfig"]


def _int(lo: int) -> Callable[[str, Any], int]:
    def parse(key: str, value: Any) -> int:
        try:
            number = int(str(value).strip()) if not isinstance(value, int) or isinstance(value, bool) else value
        except ValueError:
            raise ConfigError(f"setting {key!r} must be an integer, not {value!r}") from None
        if number < lo:
            raise ConfigError(f"setting {key!r} must be >= {lo}, not {number}")
        return number

    return parse


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"setting {key!r} must be true or false, not {value!r}")
    return text == "true"


def _choice(*allowed: str) -> Callable[[str, Any], str]:
    def parse(key: str, value: Any) -> str:
        text = str(value).strip().lower()
        if text not in allowed:
            raise ConfigError(f"setting {key!r} must be one of {', '.join(allowed)}, not {value!r}")
        return text

    return parse


def _str(key: str, value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ConfigError(f"setting {key!r} must not be empty")
    return text


# key: (attribute, parser, default); None default = required (or computed)
_OPTIONS: dict[str, tuple[str, Callable[[str, Any], Any], Any]] = {
    "zookeeper.connect": ("zookeeper_connect", _str, None),
    "group.id": ("group_id", _str, None),
    "consumer.id": ("consumer_id", _str, None),
    "client.id": ("client_id", _str, None),
    "socket.timeout.ms": ("socket_timeout_ms", _int(1), 30000),
    "fetch.message.max.bytes": ("fetch_message_max_bytes", _int(1), 1024 * 1024),
    "fetch.min.bytes": ("fetch_min_bytes", _int(0), 1),
    "fetch.wait.max.ms": ("fetch_wait_max_ms", _int(0), 100),
    "queued.max.message.chunks": ("queued_max_message_chunks", _int(1), 2),
    "auto.commit.enable": ("auto_commit_enable", _bool, True),
    "auto.commit.interval.ms": ("auto_commit_interval_ms", _int(1), 60 * 1000),
    "auto.offset.reset": ("auto_offset_reset", _choice("smallest", "largest"), "largest"),
    "consumer.timeout.ms": ("consumer_timeout_ms", _int(-1), -1),
    "rebalance.max.retries": ("rebalance_max_retries", _int(1), 4),
    "rebalance.backoff.ms": ("rebalance_backoff_ms", _int(0), 2000),
    "refresh.leader.backoff.ms": ("refresh_leader_backoff_ms", _int(0), 200),
    "exclude.internal.topics": ("exclude_internal_topics", _bool, True),
    "offsets.storage": ("offsets_storage", _choice("zookeeper", "kafka"), "zookeeper"),
    "dual.commit.enabled": ("dual_commit_enabled", _bool, None),
    "zookeeper.session.timeout.ms": ("zookeeper_session_timeout_ms", _int(1), 6000),
    "zookeeper.connection.timeout.ms": ("zookeeper_connection_timeout_ms", _int(1), 6000),
    "listener.name": ("listener_name", _str, None),  # kafkalog's: which listener of /brokers/ids/<id>
}

KEYS = tuple(_OPTIONS)


class ConsumerConfig:
    """``ConsumerConfig({"zookeeper.connect": "zk:2181/kafka", "group.id": "g", ...})`` (see the module docstring).

    Attributes use Python spelling (``group_id``, ``auto_commit_interval_ms``, ...); ``props`` holds the keys
    as given.
    """

    zookeeper_connect: str
    group_id: str
    consumer_id: str | None
    client_id: str
    socket_timeout_ms: int
    fetch_message_max_bytes: int
    fetch_min_bytes: int
    fetch_wait_max_ms: int
    queued_max_message_chunks: int
    auto_commit_enable: bool
    auto_commit_interval_ms: int
    auto_offset_reset: str
    consumer_timeout_ms: int
    rebalance_max_retries: int
    rebalance_backoff_ms: int
    refresh_leader_backoff_ms: int
    exclude_internal_topics: bool
    offsets_storage: str
    dual_commit_enabled: bool
    zookeeper_session_timeout_ms: int
    zookeeper_connection_timeout_ms: int
    listener_name: str | None
    security_settings: LegacySecurity

    def __init__(self, props: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        given = dict(props or {})
        given.update({(security_key(k) or k.replace("_", ".")): v for k, v in kwargs.items()})
        security = {}
        for key in list(given):
            sec_key = security_key(key)
            if sec_key is not None:
                security[sec_key] = given.pop(key)
            elif key not in _OPTIONS:
                raise ConfigError(
                    f"unknown ConsumerConnector setting {key!r} (known: {', '.join(sorted(_OPTIONS))}, "
                    "and security.protocol with the ssl.* and sasl.* settings)"
                )
        object.__setattr__(self, "security_settings", LegacySecurity(security))
        for key, (attr, parse, default) in _OPTIONS.items():
            value = parse(key, given[key]) if given.get(key) is not None else default
            object.__setattr__(self, attr, value)
        for required in ("zookeeper.connect", "group.id"):
            if given.get(required) is None:
                raise ConfigError(f"setting {required!r} is required")
        if self.client_id is None:
            object.__setattr__(self, "client_id", self.group_id)
        if self.dual_commit_enabled is None:
            object.__setattr__(self, "dual_commit_enabled", self.offsets_storage == "kafka")
        self.props = {**given, **security}

    @property
    def security_protocol(self) -> str:
        """``security.protocol``, upper-cased (PLAINTEXT when not given)."""
        return self.security_settings.protocol

    def client_config(self, settings: Mapping[str, Any]) -> ClientConfig:
        """A ``ClientConfig`` of ``settings`` with the security settings (one ``ClientSecurity`` shared)."""
        return self.security_settings.client_config(settings)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "props" and "props" not in self.__dict__:
            object.__setattr__(self, name, value)
            return
        raise AttributeError("ConsumerConfig is immutable")

    def consumer_id_string(self) -> str:
        """0.8's consumer id: ``<group>_<consumer.id>``, or ``<group>_<hostname>-<ms>-<uuid[:8]>`` without it."""
        if self.consumer_id is not None:
            return f"{self.group_id}_{self.consumer_id}"
        return f"{self.group_id}_{socket.gethostname()}-{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"

    def __repr__(self) -> str:
        shown = {k: v for k, v in self.props.items() if security_key(k) is None}
        shown.update(self.security_settings.describe())
        return f"ConsumerConfig({shown!r})"
