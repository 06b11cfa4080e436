"""Client configuration under the Java client's names (``bootstrap.servers``, ``linger.ms``, ...).

``ClientConfig.from_kafka_properties({"bootstrap.servers": "h:9092", "acks": "1"})`` parses string
values (as in a ``.properties`` file or Spark's ``kafka.*`` options); ``ClientConfig.create(mapping,
**kwargs)`` also takes Python values and keyword names with underscores (``linger_ms=5``). One config
type serves every client (KafkaClient, Producer, Consumer, AdminClient), as librdkafka's does; a client
reads the settings that concern it.

Unknown keys raise ``ConfigError`` naming the key (with the closest known name). Java keys that have no
meaning here (``reconnect.backoff.ms``, metrics settings, ``ssl.keymanager.algorithm``, ...) are accepted
with a ``UserWarning``; settings we cannot honour (interceptors) raise ``ConfigError``.
``ClientConfig`` is immutable and thread-safe.

Security (issue 26): ``security.protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, any case) and the
TLS and SASL settings under Kafka's and librdkafka's names (``client.network.security``'s tables) are
kept as given in ``security_properties`` (hidden from ``repr``, like every secret) and checked for their
syntax (protocol, JAAS line, mechanism) when the config is built; ``security()`` builds the
``ClientSecurity`` - reading key and trust store files - the first time a client asks for it, once per
config object, on the machine where the client runs (a Spark executor, not the driver that validated the
options).
"""

from __future__ import annotations

import dataclasses
import difflib
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.config_values import (
    _DESERIALIZERS,
    _INT32_MAX,
    _SERIALIZERS,
    _acks,
    _assignors,
    _bool,
    _bytes_serializer,
    _callable_or_name,
    _choice,
    _compression,
    _group_instance_id,
    _group_protocol,
    _gzip_level,
    _int,
    _partitioner,
    _remote_assignor,
    _security_protocol,
    _servers,
    _str,
)
from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.serialization import (
    DeserializeFn,
    MessageField,
    SerializeFn,
    resolve_deserializer,
    resolve_serializer,
)
from spark_kafkalog.records import Compression

__all__ = ["ClientConfig", "IGNORED_KEYS", "Serializer", "Deserializer"]

Serializer = Callable[[Any], "bytes | None"]
Deserializer = Callable[["bytes | None"], Any]

# Kafka's ConsumerConfig refuses these when set explicitly under the other group protocol
_CLASSIC_ONLY_KEYS = ("partition.assignment.strategy", "heartbeat.interval.ms", "session.timeout.ms")
_CONSUMER_ONLY_KEYS = ("group.remote.assignor",)


@dataclass(frozen=True)
class _Option:
    attr: str
    parse: Callable[[str, Any], Any]


# Kafka name -> (ClientConfig attribute, parser). Defaults live on the dataclass fields below.
_OPTIONS: dict[str, _Option] = {
    "bootstrap.servers": _Option("bootstrap_servers", _servers),
    "client.id": _Option("client_id", _str),
    "request.timeout.ms": _Option("request_timeout_ms", _int(1)),
    "default.api.timeout.ms": _Option("default_api_timeout_ms", _int(1)),
    "socket.connection.setup.timeout.ms": _Option("connect_timeout_ms", _int(1)),
    "retries": _Option("retries", _int(0, _INT32_MAX)),
    "retry.backoff.ms": _Option("retry_backoff_ms", _int(0)),
    "retry.backoff.max.ms": _Option("retry_backoff_max_ms", _int(0)),
    "metadata.max.age.ms": _Option("metadata_max_age_ms", _int(0)),
    "allow.auto.create.topics": _Option("allow_auto_create_topics", _bool),
    "send.buffer.bytes": _Option("send_buffer_bytes", _int(-1)),
    "receive.buffer.bytes": _Option("receive_buffer_bytes", _int(-1)),
    "socket.request.max.bytes": _Option("max_frame_size", _int(1024)),
    # fetching
    "fetch.max.bytes": _Option("fetch_max_bytes", _int(0)),
    "max.partition.fetch.bytes": _Option("max_partition_fetch_bytes", _int(0)),
    "fetch.min.bytes": _Option("fetch_min_bytes", _int(0)),
    "fetch.max.wait.ms": _Option("fetch_max_wait_ms", _int(0)),
    "isolation.level": _Option("isolation_level", _choice({"read_uncommitted": 0, "read_committed": 1})),
    "check.crcs": _Option("check_crcs", _bool),
    "client.rack": _Option("client_rack", _str),
    "max.poll.records": _Option("max_poll_records", _int(1)),
    "auto.offset.reset": _Option(
        "auto_offset_reset", _choice({"latest": "latest", "earliest": "earliest", "none": "none"})
    ),
    "group.id": _Option("group_id", _str),
    "enable.auto.commit": _Option("enable_auto_commit", _bool),
    "auto.commit.interval.ms": _Option("auto_commit_interval_ms", _int(0)),
    "session.timeout.ms": _Option("session_timeout_ms", _int(1)),
    "heartbeat.interval.ms": _Option("heartbeat_interval_ms", _int(1)),
    "max.poll.interval.ms": _Option("max_poll_interval_ms", _int(1)),
    "group.instance.id": _Option("group_instance_id", _group_instance_id),
    "partition.assignment.strategy": _Option("partition_assignment_strategy", _assignors),
    "group.protocol": _Option("group_protocol", _group_protocol),
    "group.remote.assignor": _Option("group_remote_assignor", _remote_assignor),
    "offsets.storage": _Option("offsets_storage", _choice({"kafka": "kafka", "zookeeper": "zookeeper"})),
    "dual.commit.enabled": _Option("dual_commit_enabled", _bool),
    "key.deserializer": _Option("key_deserializer", _callable_or_name(_DESERIALIZERS)),
    "value.deserializer": _Option("value_deserializer", _callable_or_name(_DESERIALIZERS)),
    # producing
    "acks": _Option("acks", _acks),
    "linger.ms": _Option("linger_ms", _int(0)),
    "batch.size": _Option("batch_size", _int(0)),
    "compression.type": _Option("compression_type", _compression),
    "compression.gzip.level": _Option("compression_gzip_level", _gzip_level),
    "compression.lz4.level": _Option("compression_lz4_level", _int(1, 17)),
    "compression.zstd.level": _Option("compression_zstd_level", _int(-131072, 22)),
    "enable.idempotence": _Option("enable_idempotence", _bool),
    "transactional.id": _Option("transactional_id", _str),
    "transaction.timeout.ms": _Option("transaction_timeout_ms", _int(1)),
    "max.in.flight.requests.per.connection": _Option("max_in_flight", _int(1)),
    "delivery.timeout.ms": _Option("delivery_timeout_ms", _int(1)),
    "max.request.size": _Option("max_request_size", _int(1)),
    "buffer.memory": _Option("buffer_memory", _int(1)),
    "max.block.ms": _Option("max_block_ms", _int(0)),
    "partitioner": _Option("partitioner", _partitioner),
    "partitioner.class": _Option("partitioner", _partitioner),
    "partitioner.ignore.keys": _Option("partitioner_ignore_keys", _bool),
    "key.serializer": _Option("key_serializer", _callable_or_name(_SERIALIZERS)),
    "value.serializer": _Option("value_serializer", _callable_or_name(_SERIALIZERS)),
    # security: the TLS and SASL settings themselves are kept in security_properties (see _with)
    "security.protocol": _Option("security_protocol", _security_protocol),
}

_KEY_BY_ATTR = {option.attr: key for key, option in reversed(list(_OPTIONS.items()))}

IGNORED_KEYS = frozenset(
    (
        "client.dns.lookup",
        "connections.max.idle.ms",
        "reconnect.backoff.ms",
        "reconnect.backoff.max.ms",
        "metadata.max.idle.ms",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.recording.level",
        "metrics.sample.window.ms",
        "auto.include.jmx.reporter",
        "enable.metrics.push",
        "exclude.internal.topics",
        "partitioner.adaptive.partitioning.enable",
        "partitioner.availability.timeout.ms",
    )
)
"""Java client keys that are accepted with a warning because they mean nothing to this client."""

_UNSUPPORTED = {
    "interceptor.classes": "interceptors are Java classes; wrap send()/poll() in Python instead",
}
_VERBATIM_KEYS = frozenset(("oauth_cb",))  # librdkafka's names with an underscore


def _security_tables() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    from spark_kafkalog.client.network.security import IGNORED_SECURITY_KEYS, SASL_KEYS, SSL_KEYS

    return SSL_KEYS, SASL_KEYS, IGNORED_SECURITY_KEYS


_SECURITY_LOCK = threading.Lock()


@dataclass(frozen=True)
class ClientConfig:
    """Typed client settings; attribute names are the Kafka names with dots as underscores, except
    ``connect_timeout_ms`` (socket.connection.setup.timeout.ms), ``max_in_flight``
    (max.in.flight.requests.per.connection) and ``max_frame_size`` (socket.request.max.bytes)."""

    bootstrap_servers: tuple[str, ...] = ()
    client_id: str = "kafkalog"
    request_timeout_ms: int = 30000
    default_api_timeout_ms: int = 60000
    connect_timeout_ms: int = 10000
    retries: int = _INT32_MAX
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1000
    metadata_max_age_ms: int = 300000
    allow_auto_create_topics: bool | None = None  # None: True for producers, False otherwise
    send_buffer_bytes: int = 131072
    receive_buffer_bytes: int = 65536
    max_frame_size: int = 104857600
    fetch_max_bytes: int = 52428800
    max_partition_fetch_bytes: int = 1048576
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int = 500
    isolation_level: int = 0
    check_crcs: bool = True
    client_rack: str = ""  # KIP-392: sent in Fetch v11+; the leader may name a replica in this rack to read from
    max_poll_records: int = 500
    auto_offset_reset: str = "latest"
    group_id: str | None = None
    enable_auto_commit: bool = True  # with a group.id: commit positions every auto.commit.interval.ms
    auto_commit_interval_ms: int = 5000
    session_timeout_ms: int = 45000  # a member that does not heartbeat for this long is removed from the group
    heartbeat_interval_ms: int = 3000  # heartbeats to the group coordinator (below a third of the session timeout)
    max_poll_interval_ms: int = 300000  # longest gap between polls before leaving the group; the rebalance timeout
    group_instance_id: str | None = None  # static membership (KIP-345): no LeaveGroup on close
    partition_assignment_strategy: tuple[str, ...] = ("range", "cooperative-sticky")  # preferred first, as Java
    group_protocol: str = "classic"  # or consumer: KIP-848 (ConsumerGroupHeartbeat, assignment by the coordinator)
    group_remote_assignor: str | None = None  # consumer protocol: the server-side assignor (uniform, range)
    offsets_storage: str = "kafka"  # or zookeeper: OffsetCommit/OffsetFetch v0 (the seeds' ZooKeeper offsets)
    dual_commit_enabled: bool = False  # commit to both stores, read the larger (migrating between them)
    key_deserializer: Deserializer | None = None
    value_deserializer: Deserializer | None = None
    acks: int = -1
    linger_ms: int = 5
    batch_size: int = 16384
    compression_type: Compression = Compression.NONE
    # KIP-390 levels; the defaults: gzip -1 = zlib level 6 for send, ISA-L level 1 for send_batch (and the
    # Spark sink); lz4 unset = LZ4's fast compressor (1-17: LZ4 HC); zstd 3, as Kafka
    compression_gzip_level: int = -1
    compression_lz4_level: int | None = None
    compression_zstd_level: int = 3
    enable_idempotence: bool = True
    transactional_id: str | None = None  # a transactional producer (init_transactions, ...), idempotent
    transaction_timeout_ms: int = 60000
    max_in_flight: int = 5
    delivery_timeout_ms: int = 120000
    max_request_size: int = 1048576
    buffer_memory: int = 33554432
    max_block_ms: int = 60000
    partitioner: Any = None
    partitioner_ignore_keys: bool = False
    key_serializer: Serializer | None = None
    value_serializer: Serializer | None = None
    security_protocol: str = "PLAINTEXT"
    security_properties: tuple[tuple[str, Any], ...] = field(default=(), repr=False)
    """The TLS and SASL settings as given (Kafka/librdkafka names, sorted); hidden: they hold secrets."""
    explicit: frozenset[str] = field(default=frozenset(), compare=False)
    """Kafka names of the settings given by the user (the rest are defaults)."""
    # the built ClientSecurity, in a cell shared by the configs derived from this one with the same security
    # settings (a Producer's config and its KafkaClient's): stores are read once per client
    _security_cell: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_security_cell"] = []  # an SSLContext does not pickle; each process builds its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # construction ------------------------------------------------------------------------------
    @classmethod
    def from_kafka_properties(cls, props: Mapping[str, Any]) -> ClientConfig:
        """Settings from Kafka-named properties (string values are parsed)."""
        return cls.create(props)

    @classmethod
    def create(cls, mapping: Mapping[str, Any] | ClientConfig | None = None, **kwargs: Any) -> ClientConfig:
        """Settings from a mapping of Kafka names and/or keyword arguments (``linger_ms=5``).

        A ``ClientConfig`` given as ``mapping`` is extended by ``kwargs``. Raises ``ConfigError``.
        """
        base = mapping if isinstance(mapping, ClientConfig) else cls()
        items: dict[str, Any] = {}
        if mapping is not None and not isinstance(mapping, ClientConfig):
            if not isinstance(mapping, Mapping):
                raise ConfigError(f"client settings must be a mapping of Kafka names, got {type(mapping).__name__}")
            for key, value in mapping.items():
                items[_normalise_key(key)] = value
        for key, value in kwargs.items():
            items[_normalise_key(key)] = value
        return base._with(items)

    def with_overrides(self, **kwargs: Any) -> ClientConfig:
        """A copy with ``kwargs`` (underscore or Kafka names) applied."""
        return ClientConfig.create(self, **kwargs)

    def with_defaults(self, **kwargs: Any) -> ClientConfig:
        """A copy where ``kwargs`` apply only to settings the user did not set explicitly."""
        items = {}
        for key, value in kwargs.items():
            name = _normalise_key(key)
            if name not in self.explicit:
                items[name] = value
        changes = self._with(items)
        return self._share_security(dataclasses.replace(changes, explicit=self.explicit))

    def _share_security(self, derived: ClientConfig) -> ClientConfig:
        if (derived.security_protocol, derived.security_properties) == (
            self.security_protocol,
            self.security_properties,
        ):
            object.__setattr__(derived, "_security_cell", self._security_cell)
        return derived

    def _with(self, items: Mapping[str, Any]) -> ClientConfig:
        changes: dict[str, Any] = {}
        explicit = set(self.explicit)
        ssl_keys, sasl_keys, ignored_security_keys = _security_tables()
        security = dict(self.security_properties)
        for key, value in items.items():
            option = _OPTIONS.get(key)
            if option is not None:
                changes[option.attr] = option.parse(key, value)
                explicit.add(key)
                continue
            if key in _UNSUPPORTED:
                raise ConfigError(f"setting {key!r} is not supported: {_UNSUPPORTED[key]}")
            if key in ssl_keys or key in sasl_keys:
                if value is None:
                    security.pop(key, None)
                else:
                    security[key] = value
                explicit.add(key)
                continue
            if key in IGNORED_KEYS or key in ignored_security_keys:
                warnings.warn(f"client setting {key!r} is ignored by spark_kafkalog.client", UserWarning, stacklevel=4)
                continue
            raise ConfigError(_unknown_key_message(key))
        changes["security_properties"] = tuple(sorted(security.items()))
        config = self._share_security(dataclasses.replace(self, explicit=frozenset(explicit), **changes))
        config._check()
        return config

    def security_config(self) -> dict[str, Any]:
        """``security.protocol`` and the TLS/SASL settings, under their dotted names (values as given)."""
        return {"security.protocol": self.security_protocol, **dict(self.security_properties)}

    def security(self) -> Any:
        """The ``ClientSecurity`` of this config, built on first use (stores are read then) and cached
        (shared with the configs derived from this one that have the same security settings).

        Raises ``ConfigError`` naming the setting at fault (a store that cannot be read, a wrong store
        password, a JAAS line we refuse); its message never holds a secret.
        """
        cell = self._security_cell
        if not cell:
            with _SECURITY_LOCK:
                if not cell:
                    cell.append(self._build_security())
        return cell[0]

    def _build_security(self) -> Any:
        from spark_kafkalog.client.network.security import ClientSecurity
        from spark_kafkalog.security.errors import SecurityConfigError

        if self.security_protocol == "PLAINTEXT":
            return ClientSecurity()
        try:
            return ClientSecurity.from_config(self.security_config())
        except SecurityConfigError as e:
            raise ConfigError(str(e)) from None

    def _check(self) -> None:
        self._check_security()
        self._check_group_protocol()
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(
                f"setting 'heartbeat.interval.ms' ({self.heartbeat_interval_ms}) must be below "
                f"'session.timeout.ms' ({self.session_timeout_ms}); a third of it is usual"
            )
        if self.retry_backoff_max_ms < self.retry_backoff_ms:
            object.__setattr__(self, "retry_backoff_max_ms", self.retry_backoff_ms)
        if (
            self.delivery_timeout_ms < self.linger_ms + self.request_timeout_ms
            and "delivery.timeout.ms" in self.explicit
        ):
            raise ConfigError(
                f"setting 'delivery.timeout.ms' ({self.delivery_timeout_ms}) must be >= linger.ms + request.timeout.ms "
                f"({self.linger_ms + self.request_timeout_ms})"
            )

    def _check_group_protocol(self) -> None:
        """As Kafka's ConsumerConfig: the classic protocol's member-side settings are refused under the consumer
        protocol (the coordinator assigns and times sessions there), and ``group.remote.assignor`` under classic."""
        refused = _CLASSIC_ONLY_KEYS if self.group_protocol == "consumer" else _CONSUMER_ONLY_KEYS
        for key in refused:
            if key in self.explicit:
                raise ConfigError(
                    f"setting {key!r} is not supported when 'group.protocol' is {self.group_protocol} "
                    + (
                        "(the group coordinator assigns partitions and times sessions; see group.remote.assignor)"
                        if self.group_protocol == "consumer"
                        else "(it names a server-side assignor of the consumer protocol)"
                    )
                )

    def _check_security(self) -> None:
        """Syntax of the SASL settings now (so a Spark query fails at planning); stores are read later."""
        if self.security_protocol not in ("SASL_PLAINTEXT", "SASL_SSL"):
            return
        from spark_kafkalog.security.errors import SecurityConfigError

        try:
            from spark_kafkalog.security.sasl import SaslClientSettings
        except ImportError:  # the mechanisms are not installed in this build: checked when connecting
            return
        try:
            settings = SaslClientSettings.from_config(self.security_config())
        except SecurityConfigError as e:
            raise ConfigError(str(e)) from None
        if settings is None:
            raise ConfigError(
                f"security.protocol={self.security_protocol} needs SASL settings: sasl.mechanism and credentials "
                "(sasl.jaas.config, or sasl.username and sasl.password)"
            )

    # derived settings ----------------------------------------------------------------------------
    def compression_level(self) -> int | None:
        """The ``compression.<codec>.level`` of ``compression.type``; ``None`` for the codec's default."""
        codec = self.compression_type
        if codec == Compression.GZIP:
            return None if self.compression_gzip_level == -1 else self.compression_gzip_level
        if codec == Compression.LZ4:
            return self.compression_lz4_level
        if codec == Compression.ZSTD:
            return self.compression_zstd_level
        return None

    def idempotence_enabled(self) -> bool:
        """Whether the producer is idempotent, with Java's rules: an explicit ``enable.idempotence=true``
        conflicting with acks != all, retries=0 or more than 5 in-flight requests is an error; the default
        (true) is silently dropped in those cases."""
        conflicts = []
        if self.acks != -1:
            conflicts.append(f"acks={self.acks} (needs all)")
        if self.retries == 0:
            conflicts.append("retries=0 (needs > 0)")
        if self.max_in_flight > 5:
            conflicts.append(f"max.in.flight.requests.per.connection={self.max_in_flight} (needs <= 5)")
        if self.transactional_id is not None:
            if not self.enable_idempotence or conflicts:
                raise ConfigError(
                    "transactional.id needs an idempotent producer; it conflicts with "
                    + ", ".join(conflicts or ["enable.idempotence=false"])
                )
            return True
        if not self.enable_idempotence:
            return False
        if conflicts:
            if "enable.idempotence" in self.explicit:
                raise ConfigError("enable.idempotence=true conflicts with " + ", ".join(conflicts))
            return False
        return True

    def auto_create_topics(self, *, producer: bool) -> bool:
        if self.allow_auto_create_topics is None:
            return producer
        return self.allow_auto_create_topics

    def key_serializer_fn(self) -> Serializer:
        return self.key_serializer or _bytes_serializer

    def value_serializer_fn(self) -> Serializer:
        return self.value_serializer or _bytes_serializer

    # The per-record (de)serializing functions of (data, topic, headers), resolved once by each client
    # (client.serialization.resolve_serializer): Serializer objects get a SerializationContext and their
    # failures raise Key/ValueSerializationError; plain callables get the data alone. The blocking and asyncio
    # producers and consumers call these, so they apply serializers identically.
    def key_serializer_for(self) -> SerializeFn:
        """``key.serializer`` as ``f(key, topic, headers) -> bytes | None`` (the default: bytes-like and str)."""
        return resolve_serializer(self.key_serializer, MessageField.KEY, _bytes_serializer)

    def value_serializer_for(self) -> SerializeFn:
        """``value.serializer`` as ``f(value, topic, headers) -> bytes | None`` (the default: bytes-like and str)."""
        return resolve_serializer(self.value_serializer, MessageField.VALUE, _bytes_serializer)

    def key_deserializer_for(self) -> DeserializeFn:
        """``key.deserializer`` as ``f(data, topic, headers) -> key`` (the default: the bytes as they are)."""
        return resolve_deserializer(self.key_deserializer, MessageField.KEY)

    def value_deserializer_for(self) -> DeserializeFn:
        """``value.deserializer`` as ``f(data, topic, headers) -> value`` (the default: the bytes as they are)."""
        return resolve_deserializer(self.value_deserializer, MessageField.VALUE)

    def to_kafka_properties(self) -> dict[str, Any]:
        """The explicitly set settings under their Kafka names (values as parsed)."""
        out = {}
        security = dict(self.security_properties)
        for key in sorted(self.explicit):
            out[key] = security[key] if key in security else getattr(self, _OPTIONS[key].attr)
        return out


def _normalise_key(key: Any) -> str:
    if not isinstance(key, str):
        raise ConfigError(f"client setting names must be strings, got {key!r}")
    key = key.strip()
    if key in _VERBATIM_KEYS:
        return key
    by_attr = _KEY_BY_ATTR.get(key)
    if by_attr is not None:
        return by_attr
    if "_" in key and "." not in key:
        key = key.replace("_", ".")
    return key


def _unknown_key_message(key: str) -> str:
    ssl_keys, sasl_keys, ignored_security_keys = _security_tables()
    known = list(_OPTIONS) + sorted(IGNORED_KEYS) + sorted(ssl_keys | sasl_keys | ignored_security_keys)
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown client setting {key!r}{hint}"
