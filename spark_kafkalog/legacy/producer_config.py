"""``ProducerConfig``: the 0.8 producer's settings under the seeds' names, with today's names as aliases.

``ProducerConfig({"metadata.broker.list": "h:9092", "producer.type": "async"})``; values may be strings (as
in a ``.properties`` file) or Python values; keyword arguments with underscores are accepted too
(``ProducerConfig(batch_num_messages=50)``). ``SETTINGS`` is the table of every key: its seeds' name, the
aliases accepted next to it, its default and meaning (``docs/legacy-clients.md`` shows it). Two names of one
setting given different values, an unknown key, or a value of the wrong type or range raise ``ConfigError``
naming the key. Plug-in settings keep what was given (class, dotted path or instance); the producer turns
them into objects (``plugins.load_plugin``). Immutable after construction; thread-safe.

Security (issue 26, not in 0.8): ``security.protocol`` and the modern client's ``ssl.*`` / ``sasl.*`` keys
(Kafka's and librdkafka's names, ``security_settings.SECURITY_KEYS``) are accepted and checked by
``ClientConfig``; ``client_config()`` is the producer's ``ClientConfig`` with them, so every connection of the
producer uses one ``ClientSecurity``. ``repr`` shows the protocol and mechanism, never a password or JAAS line.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.legacy.security_settings import LegacySecurity, security_key
from spark_kafkalog.records import Compression

__all__ = ["SETTINGS", "ProducerConfig", "Setting"]

_PRODUCE_VERSIONS = range(0, 10)
_CODECS = {
    "none": Compression.NONE,
    "0": Compression.NONE,
    "gzip": Compression.GZIP,
    "1": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "2": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "3": Compression.LZ4,
}


def _int(lo: int, hi: int = 2**31 - 1) -> Callable[[str, Any], int]:
    def parse(key: str, v: Any) -> int:
        if isinstance(v, str):
            try:
                v = int(v.strip())
            except ValueError:
                raise ConfigError(f"setting {key!r} must be an integer, got {v!r}") from None
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"setting {key!r} must be an integer, got {type(v).__name__} {v!r}")
        if not lo <= v <= hi:
            raise ConfigError(f"setting {key!r} must be in [{lo}, {hi}], got {v}")
        return v

    return parse


def _brokers(key: str, v: Any) -> str:
    items = (
        [s.strip() for s in v.split(",")] if isinstance(v, str) else list(v) if isinstance(v, (list, tuple)) else None
    )
    if not items or not all(isinstance(s, str) and ":" in s for s in items):
        raise ConfigError(f"setting {key!r} must list brokers as 'host:port,host:port', got {v!r}")
    return ",".join(items)


def _producer_type(key: str, v: Any) -> str:
    text = str(v).strip().lower()
    if text not in ("sync", "async"):
        raise ConfigError(f"setting {key!r} must be sync or async, got {v!r}")
    return text


def _acks(key: str, v: Any) -> int:
    if isinstance(v, str) and v.strip().lower() == "all":
        return -1
    acks = _int(-1, 1)(key, v)
    return acks


def _codec(key: str, v: Any) -> int:
    text = str(int(v) if isinstance(v, int) and not isinstance(v, bool) else v).strip().lower()
    if text not in _CODECS:
        raise ConfigError(f"setting {key!r} must be none, gzip, snappy or lz4 (or 0-3), got {v!r}")
    return int(_CODECS[text])


def _produce_version(key: str, v: Any) -> int | None:
    if isinstance(v, str) and v.strip().lower() == "latest":
        return None
    return _int(_PRODUCE_VERSIONS.start, _PRODUCE_VERSIONS.stop - 1)(key, v)


def _plugin(key: str, v: Any) -> Any:
    if isinstance(v, str) and not v.strip():
        raise ConfigError(f"setting {key!r} must name a class, got an empty string")
    return v


def _client_id(key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ConfigError(f"setting {key!r} must be a string, got {type(v).__name__} {v!r}")
    return v


class Setting(NamedTuple):
    name: str  # the seeds' name
    aliases: tuple[str, ...]  # today's (or other seeds') names of the same setting
    attr: str
    default: Any
    parse: Callable[[str, Any], Any]
    doc: str


SETTINGS: tuple[Setting, ...] = (
    Setting("metadata.broker.list", ("bootstrap.servers",), "broker_list", None, _brokers,
            "Brokers to bootstrap metadata from, `host:port,host:port` (required)."),
    Setting("producer.type", (), "producer_type", "sync", _producer_type,
            "`sync`: `send` returns once acknowledged; `async`: a queue drained by a background thread."),
    Setting("queue.buffering.max.ms", ("queue.time",), "queue_buffering_max_ms", 5000, _int(0),
            "async: longest time data waits in the queue before its batch is sent."),
    Setting("batch.num.messages", ("batch.size",), "batch_num_messages", 200, _int(1),
            "async: messages per batch (a count, not bytes as today's `batch.size`)."),
    Setting("queue.buffering.max.messages", (), "queue_buffering_max_messages", 10000, _int(1),
            "async: messages the queue holds."),
    Setting("queue.enqueue.timeout.ms", (), "queue_enqueue_timeout_ms", -1, _int(-1),
            "async, queue full: 0 raise `QueueFullException` at once, -1 block, > 0 block that long then raise."),
    Setting("serializer.class", (), "serializer_class", "kafka.serializer.DefaultEncoder", _plugin,
            "Encoder of message values: class, dotted path or instance with `to_message(obj) -> bytes`."),
    Setting("key.serializer.class", (), "key_serializer_class", None, _plugin,
            "Encoder of keys (default: the value of `serializer.class`)."),
    Setting("partitioner.class", (), "partitioner_class", "kafka.producer.DefaultPartitioner", _plugin,
            "Partitioner: `partition(key, num_partitions) -> int`; null keys get a random partition."),
    Setting("callback.handler", (), "callback_handler", None, _plugin,
            "CallbackHandler subclass whose hooks run at the pipeline's stages."),
    Setting("event.handler", (), "event_handler", None, _plugin,
            "EventHandler replacing how a batch is serialized and sent (default: `DefaultEventHandler`)."),
    Setting("request.required.acks", ("acks",), "request_required_acks", 1, _acks,
            "0 no answer, 1 the leader's, -1 (`all`) every in-sync replica's."),
    Setting("compression.codec", ("compression.type",), "compression_codec", 0, _codec,
            "`none`, `gzip`, `snappy` or `lz4` (or 0-3)."),
    Setting("request.timeout.ms", (), "request_timeout_ms", 10000, _int(1),
            "How long the broker may wait for the acks, and the client for an answer."),
    Setting("message.send.max.retries", ("retries",), "message_send_max_retries", 3, _int(0),
            "Times a failed send is retried (after refreshing metadata) before it raises."),
    Setting("retry.backoff.ms", (), "retry_backoff_ms", 100, _int(0),
            "Pause before each retry."),
    Setting("topic.metadata.refresh.interval.ms", ("metadata.max.age.ms",), "topic_metadata_refresh_interval_ms",
            600000, _int(-1), "Metadata older than this is refreshed before a send (-1: only after failures)."),
    Setting("client.id", (), "client_id", "", _client_id,
            "Sent with every request (the seeds' default: empty)."),
    Setting("produce.api.version", (), "produce_api_version", None, _produce_version,
            "Produce version: `latest` (highest both sides support) or 0-9; 0-1 send message format v0, "
            "2 v1, 3+ record batches v2."),
)  # fmt: skip

_BY_NAME: dict[str, Setting] = {}
for _s in SETTINGS:
    for _name in (_s.name, *_s.aliases):
        _BY_NAME[_name] = _s
_HINTS = {
    "zk.connect": "the seeds' ZooKeeper-based producer discovery is not supported: set metadata.broker.list",
    "zookeeper.connect": "the producer finds brokers through metadata.broker.list, not ZooKeeper",
}


class ProducerConfig:
    """The parsed settings (see the module docstring); attributes are named after ``Setting.attr``."""

    broker_list: str
    producer_type: str
    queue_buffering_max_ms: int
    batch_num_messages: int
    queue_buffering_max_messages: int
    queue_enqueue_timeout_ms: int
    serializer_class: Any
    key_serializer_class: Any
    partitioner_class: Any
    callback_handler: Any
    event_handler: Any
    request_required_acks: int
    compression_codec: int
    request_timeout_ms: int
    message_send_max_retries: int
    retry_backoff_ms: int
    topic_metadata_refresh_interval_ms: int
    client_id: str
    produce_api_version: int | None
    security_settings: LegacySecurity

    def __init__(self, props: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        given: dict[str, tuple[str, Any]] = {}  # attr -> (key as given, parsed value)
        if props is not None and not isinstance(props, Mapping):
            raise ConfigError(f"producer settings must be a mapping of names to values, got {type(props).__name__}")
        items = list((props or {}).items()) + list(kwargs.items())
        security: dict[str, Any] = {}
        for raw_key, value in items:
            sec_key = security_key(raw_key)
            if sec_key is not None:
                if sec_key in security and security[sec_key] != value:  # values not shown: they may be secrets
                    raise ConfigError(f"setting {sec_key!r} is given twice with different values")
                security[sec_key] = value
                continue
            key = str(raw_key).strip().replace("_", ".")
            setting = _BY_NAME.get(key)
            if setting is None:
                hint = _HINTS.get(key)
                if hint is None:
                    close = difflib.get_close_matches(key, list(_BY_NAME), n=1)
                    hint = f"did you mean {close[0]!r}?" if close else "see ProducerConfig's SETTINGS"
                raise ConfigError(f"unknown producer setting {raw_key!r}: {hint}")
            parsed = setting.parse(key, value)
            earlier = given.get(setting.attr)
            if earlier is not None and earlier[1] != parsed:
                raise ConfigError(
                    f"settings {earlier[0]!r} and {key!r} name the same setting with different values "
                    f"({earlier[1]!r} and {parsed!r})"
                )
            given[setting.attr] = (key, parsed)
        for setting in SETTINGS:
            object.__setattr__(self, setting.attr, given[setting.attr][1] if setting.attr in given else setting.default)
        if self.broker_list is None:
            raise ConfigError(
                "setting 'metadata.broker.list' (or 'bootstrap.servers') is required, e.g. 'localhost:9092'"
            )
        if self.key_serializer_class is None:
            object.__setattr__(self, "key_serializer_class", self.serializer_class)
        object.__setattr__(self, "explicit", frozenset(given) | frozenset(security))
        object.__setattr__(self, "security_settings", LegacySecurity(security))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ProducerConfig is immutable")

    @property
    def is_async(self) -> bool:
        return self.producer_type == "async"

    def client_settings(self) -> dict[str, Any]:
        """The ``ClientConfig`` settings of the producer's ``KafkaClient``."""
        refresh = self.topic_metadata_refresh_interval_ms
        return {
            "bootstrap.servers": self.broker_list,
            "client.id": self.client_id,
            "request.timeout.ms": self.request_timeout_ms + 5000,  # the broker waits up to request.timeout.ms
            "default.api.timeout.ms": self.request_timeout_ms,  # metadata waits (a new topic's leader) per attempt
            "retry.backoff.ms": max(self.retry_backoff_ms, 1),
            "metadata.max.age.ms": refresh if refresh >= 0 else 2**31 - 1,
        }

    def client_config(self) -> ClientConfig:
        """The ``ClientConfig`` of the producer's ``KafkaClient``: ``client_settings()`` and the security
        settings (its ``security()`` is built once per ``ProducerConfig``)."""
        return self.security_settings.client_config(self.client_settings())

    def __repr__(self) -> str:
        shown = [f"{s.name}={getattr(self, s.attr)!r}" for s in SETTINGS]
        shown += [f"{key}={value!r}" for key, value in self.security_settings.describe().items()]
        return f"ProducerConfig({', '.join(shown)})"
