"""Per-log configuration: Kafka's topic-level config names, their broker-level synonyms, and defaults.

``LogConfig.broker_defaults(props)`` builds the defaults of every topic from the broker's ``log.*``
strings (``BrokerConfig.log_properties()``; ``min.insync.replicas`` and
``unclean.leader.election.enable`` are read too when present), using ``broker.config.CONFIG_KEYS`` for
their types, ranges and defaults, so the two tables cannot drift. ``config.with_topic_overrides(props)``
applies a topic's own settings (``/config/topics/<t>``, CreateTopics, AlterConfigs) by their topic-level
names (``retention.ms``, ``cleanup.policy``...). A bad or unknown key raises ``ConfigError`` naming it.

``TOPIC_CONFIG_KEYS`` (``topic_configs``) lists every topic config with its broker synonym, type and meaning;
``config.describe()`` returns one ``ConfigEntry`` per key, in that order:
``(name, value, is_default, synonym, source, type, doc)`` where ``value`` is Kafka's string form,
``is_default`` is False only for topic overrides, and ``source`` tells a topic override
(DYNAMIC_TOPIC_CONFIG) from a value set in server.properties (STATIC_BROKER_CONFIG) or the built-in
default (DEFAULT_CONFIG) — what DescribeConfigs answers.

The last six fields (retention check, flush scheduler, checkpoint and cleaner intervals, recovery
threads) are broker-wide settings the ``LogManager`` reads from its defaults; topics cannot override them.

Immutable; safe to share between threads.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

from broker.config import KEYS_BY_NAME, ConfigError
from broker.log.topic_configs import TOPIC_CONFIG_KEYS, TopicConfigKey

__all__ = ["ConfigEntry", "ConfigError", "ConfigSource", "LogConfig", "TOPIC_CONFIG_KEYS", "TopicConfigKey"]

LONG_MAX = 9_223_372_036_854_775_807
_HOUR_MS = 3_600_000
_MINUTE_MS = 60_000


class ConfigSource(IntEnum):
    """Kafka's DescribeConfigs ``config_source`` codes for the sources a topic config can come from."""

    DYNAMIC_TOPIC_CONFIG = 1
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class ConfigEntry(NamedTuple):
    """One row of ``LogConfig.describe()``."""

    name: str
    value: str
    is_default: bool
    synonym: str
    source: ConfigSource
    type: str
    doc: str


# Topic configs whose broker default may come from several keys (the first one set wins).
_DERIVED: dict[str, tuple[str, ...]] = {
    "log.roll.ms": ("log.roll.ms", "log.roll.hours"),
    "log.retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "log.flush.interval.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    "log.roll.jitter.ms": ("log.roll.jitter.ms", "log.roll.jitter.hours"),
}

_CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

# Broker-only settings kept in LogConfig for the LogManager: field -> broker key.
_BROKER_ONLY: dict[str, str] = {
    "retention_check_interval_ms": "log.retention.check.interval.ms",
    "flush_scheduler_interval_ms": "log.flush.scheduler.interval.ms",
    "flush_offset_checkpoint_interval_ms": "log.flush.offset.checkpoint.interval.ms",
    "cleaner_enable": "log.cleaner.enable",
    "cleaner_backoff_ms": "log.cleaner.backoff.ms",
    "recovery_threads_per_data_dir": "num.recovery.threads.per.data.dir",
}


@dataclass(frozen=True)
class LogConfig:
    """Settings of one partition log. Defaults are Kafka's (and ``broker/config.py``'s)."""

    segment_bytes: int = 1_073_741_824
    segment_ms: int = 168 * _HOUR_MS
    max_index_size: int = 10_485_760
    index_interval_bytes: int = 4096
    max_message_bytes: int = 1_048_588
    retention_ms: int = 168 * _HOUR_MS
    retention_bytes: int = -1
    cleanup_policy: tuple[str, ...] = ("delete",)
    delete_retention_ms: int = 86_400_000
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    flush_interval_messages: int = LONG_MAX
    flush_interval_ms: int = LONG_MAX
    message_timestamp_type: str = "CreateTime"
    file_delete_delay_ms: int = 60_000
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    max_compaction_lag_ms: int = LONG_MAX
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    message_timestamp_difference_max_ms: int = LONG_MAX
    message_downconversion_enable: bool = True
    message_format_version: str = "3.0-IV1"
    preallocate: bool = False
    segment_jitter_ms: int = 0
    local_retention_ms: int = -2
    local_retention_bytes: int = -2
    remote_storage_enable: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    follower_replication_throttled_replicas: tuple[str, ...] = ()
    # broker-wide (LogManager) settings; not topic configs
    retention_check_interval_ms: int = 300_000
    flush_scheduler_interval_ms: int = LONG_MAX
    flush_offset_checkpoint_interval_ms: int = 60_000
    cleaner_enable: bool = True
    cleaner_backoff_ms: int = 15_000
    recovery_threads_per_data_dir: int = 1
    # bookkeeping for describe(): broker keys set in server.properties, and this topic's overrides
    broker_keys_set: frozenset[str] = dataclasses.field(default=frozenset(), repr=False)
    topic_overrides: tuple[tuple[str, str], ...] = dataclasses.field(default=(), repr=False)
    #: entries the offset index may hold (8 bytes each; at least one)
    max_index_entries: int = dataclasses.field(init=False, repr=False, compare=False)
    #: entries the time index may hold (12 bytes each; at least one)
    max_time_index_entries: int = dataclasses.field(init=False, repr=False, compare=False)

    # -- derived ------------------------------------------------------------------------------------
    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == "LogAppendTime"

    @property
    def roll_ms(self) -> int:
        """How old the active segment may get: ``segment.ms``, or ``max.compaction.lag.ms`` when smaller on a
        compacted topic (so the cleaner can reach a record within that lag, as Kafka's ``maxSegmentMs``)."""
        if "compact" in self.cleanup_policy and self.max_compaction_lag_ms < self.segment_ms:
            return self.max_compaction_lag_ms
        return self.segment_ms

    @property
    def recompression_codec(self) -> int | None:
        """The codec id every batch is stored with (``compression.type``), or None for ``producer``."""
        return _CODECS.get(self.compression_type)

    @property
    def recompression_level(self) -> int | None:
        """The level of ``recompression_codec`` (None: the codec's default)."""
        codec = self.recompression_codec
        if codec == 1:
            return None if self.compression_gzip_level == -1 else self.compression_gzip_level
        if codec == 3:
            return self.compression_lz4_level
        if codec == 4:
            return self.compression_zstd_level
        return None

    @property
    def timestamp_bounds(self) -> tuple[int, int] | None:
        """``(before, after)``: how far a CreateTime record may lie before and after the broker time, or None
        when both are unbounded (``message.timestamp.*.max.ms``; the deprecated difference bounds both)."""
        before = min(self.message_timestamp_before_max_ms, self.message_timestamp_difference_max_ms)
        after = min(self.message_timestamp_after_max_ms, self.message_timestamp_difference_max_ms)
        if before == LONG_MAX and after == LONG_MAX:
            return None
        return before, after

    def __post_init__(self) -> None:
        # derived limits, precomputed for the append path
        object.__setattr__(self, "max_index_entries", max(1, self.max_index_size // 8))
        object.__setattr__(self, "max_time_index_entries", max(1, self.max_index_size // 12))

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def broker_defaults(cls, props: Mapping[str, Any]) -> LogConfig:
        """Topic defaults from ``server.properties`` strings (unknown keys are ignored here)."""
        props = {k: _as_string(v) for k, v in props.items()}

        def value(key: str) -> Any:
            spec = KEYS_BY_NAME[key]
            return spec.parse(props[key]) if key in props else spec.default

        kwargs: dict[str, Any] = {}
        for key in TOPIC_CONFIG_KEYS.values():
            if key.name in ("segment.ms", "retention.ms", "flush.ms", "segment.jitter.ms"):
                continue
            kwargs[key.field] = value(key.synonym) if key.synonym else key.default
        kwargs["segment_jitter_ms"] = _first_set(
            value("log.roll.jitter.ms"), _scaled(value("log.roll.jitter.hours"), _HOUR_MS)
        )
        kwargs["segment_ms"] = _first_set(value("log.roll.ms"), _scaled(value("log.roll.hours"), _HOUR_MS))
        kwargs["retention_ms"] = _first_set(
            value("log.retention.ms"),
            _scaled(value("log.retention.minutes"), _MINUTE_MS),
            _scaled(value("log.retention.hours"), _HOUR_MS),
        )
        kwargs["flush_interval_ms"] = _first_set(
            value("log.flush.interval.ms"), value("log.flush.scheduler.interval.ms")
        )
        for field, broker_key in _BROKER_ONLY.items():
            kwargs[field] = value(broker_key)
        set_keys = {k for k in props if k in KEYS_BY_NAME}
        for synonym, sources in _DERIVED.items():
            if set_keys & set(sources):
                set_keys.add(synonym)
        return cls(**kwargs, broker_keys_set=frozenset(set_keys))

    def with_topic_overrides(self, props: Mapping[str, Any]) -> LogConfig:
        """This config with a topic's settings applied (topic-level names), on top of earlier overrides.

        Call it on the broker defaults with the topic's whole override map to start afresh."""
        props = {k: _as_string(v) for k, v in props.items()}
        changes: dict[str, Any] = {}
        for name, raw in props.items():
            key = TOPIC_CONFIG_KEYS.get(name)
            if key is None:
                raise ConfigError(f"{name}: unknown topic config (known: {', '.join(sorted(TOPIC_CONFIG_KEYS))})")
            changes[key.field] = _parse(key, raw)
        merged = {**dict(self.topic_overrides), **props}
        out = dataclasses.replace(self, **changes, topic_overrides=tuple(sorted(merged.items())))
        if out.min_compaction_lag_ms > out.max_compaction_lag_ms:
            raise ConfigError(
                f"min.compaction.lag.ms ({out.min_compaction_lag_ms}) must not be larger than max.compaction.lag.ms "
                f"({out.max_compaction_lag_ms})"
            )
        return out

    def update(self, **fields: Any) -> LogConfig:
        """A copy with some fields replaced (Python callers and tests); values are range-checked."""
        by_field = {k.field: k for k in TOPIC_CONFIG_KEYS.values()}
        for name, value in fields.items():
            if name in by_field:
                _check(by_field[name], value)
            elif name not in _BROKER_ONLY:
                raise ConfigError(f"{name}: not a LogConfig field")
        return dataclasses.replace(self, **fields)

    def describe(self, overrides: Mapping[str, Any] | None = None) -> list[ConfigEntry]:
        """Every topic config with its value and source; ``overrides`` defaults to the ones applied."""
        names = set(overrides) if overrides is not None else {k for k, _ in self.topic_overrides}
        out = []
        for key in TOPIC_CONFIG_KEYS.values():
            if key.name in names:
                source = ConfigSource.DYNAMIC_TOPIC_CONFIG
            elif key.synonym in self.broker_keys_set:
                source = ConfigSource.STATIC_BROKER_CONFIG
            else:
                source = ConfigSource.DEFAULT_CONFIG
            value = _format(getattr(self, key.field))
            out.append(ConfigEntry(key.name, value, key.name not in names, key.synonym, source, key.type, key.doc))
        return out


# -- helpers -----------------------------------------------------------------------------------------
def _first_set(*values: Any) -> Any:
    for v in values:
        if v is not None:
            return v
    return None


def _scaled(value: int | None, factor: int) -> int | None:
    if value is None:
        return None
    return value if value < 0 else value * factor


def _as_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value)


def _parse(key: TopicConfigKey, raw: str) -> Any:
    text = raw.strip()
    try:
        if key.type in ("int", "long"):
            value: Any = int(text)
        elif key.type == "double":
            value = float(text)
        elif key.type == "boolean":
            if text.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            value = text.lower() == "true"
        elif key.type == "list":
            value = tuple(p.strip() for p in text.split(",") if p.strip())
        else:
            value = text
    except ValueError as e:
        raise ConfigError(f"{key.name}={raw!r}: expected {key.type} ({e})") from None
    _check(key, value)
    return value


def _check(key: TopicConfigKey, value: Any) -> None:
    if key.at_least is not None and value < key.at_least:
        raise ConfigError(f"{key.name}={_format(value)!r}: must be at least {key.at_least:g}")
    if key.at_most is not None and value > key.at_most:
        raise ConfigError(f"{key.name}={_format(value)!r}: must be at most {key.at_most:g}")
    if key.type in ("int",) and value > 0x7FFFFFFF:
        raise ConfigError(f"{key.name}={value!r}: must fit in a 32-bit int")
    if value in key.excluded:
        raise ConfigError(f"{key.name}={_format(value)!r}: not a valid value ({key.doc})")
    if key.pattern is not None and not re.fullmatch(key.pattern, value):
        raise ConfigError(f"{key.name}={value!r}: not a Kafka version like 3.0-IV1 or 2.8")
    if key.unsupported is not None:
        reason = key.unsupported(value)
        if reason is not None:
            raise ConfigError(f"{key.name}={_format(value)!r} is not supported: {reason}")
    if key.choices is not None:
        items = value if isinstance(value, tuple) else (value,)
        if key.type == "list" and not items:
            raise ConfigError(f"{key.name}: must name at least one of {', '.join(key.choices)}")
        bad = [v for v in items if v not in key.choices]
        if bad:
            raise ConfigError(f"{key.name}={_format(value)!r}: must be one of {', '.join(key.choices)}")
