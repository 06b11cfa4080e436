"""LogConfig: broker defaults agree with broker/config.py, topic overrides, errors, and describe()."""

from __future__ import annotations

import dataclasses

import pytest

from broker.config import KEYS_BY_NAME, BrokerConfig, ConfigError
from broker.log import TOPIC_CONFIG_KEYS, ConfigSource, LogConfig

HOUR = 3_600_000


def _broker_default(key) -> object:
    """The default broker/config.py gives the topic config's synonym (derived keys resolved)."""
    synonym = key.synonym
    if synonym == "log.roll.ms":
        return KEYS_BY_NAME["log.roll.hours"].default * HOUR
    if synonym == "log.retention.ms":
        return KEYS_BY_NAME["log.retention.hours"].default * HOUR
    if synonym == "log.roll.jitter.ms":
        return KEYS_BY_NAME["log.roll.jitter.hours"].default * HOUR
    if not synonym:  # a topic-only config (tiered storage, throttled replicas): its own default
        return key.default
    if synonym == "log.flush.interval.ms":
        return KEYS_BY_NAME["log.flush.scheduler.interval.ms"].default
    return KEYS_BY_NAME[synonym].default


@pytest.mark.parametrize("name", sorted(TOPIC_CONFIG_KEYS))
def test_dataclass_default_agrees_with_broker_config_for_every_topic_key(name):
    key = TOPIC_CONFIG_KEYS[name]
    assert not key.synonym or key.synonym in KEYS_BY_NAME
    expected = _broker_default(key)
    assert getattr(LogConfig(), key.field) == expected
    assert getattr(LogConfig.broker_defaults({}), key.field) == expected


def test_broker_only_fields_agree_with_broker_config():
    defaults = LogConfig.broker_defaults({})
    assert defaults == LogConfig()
    assert defaults.retention_check_interval_ms == KEYS_BY_NAME["log.retention.check.interval.ms"].default
    assert defaults.cleaner_backoff_ms == KEYS_BY_NAME["log.cleaner.backoff.ms"].default
    assert defaults.recovery_threads_per_data_dir == KEYS_BY_NAME["num.recovery.threads.per.data.dir"].default


def test_broker_defaults_resolve_hours_minutes_and_ms_in_kafka_order():
    assert LogConfig.broker_defaults({"log.retention.hours": "2"}).retention_ms == 2 * HOUR
    assert LogConfig.broker_defaults({"log.retention.hours": "2", "log.retention.minutes": "3"}).retention_ms == 180_000
    assert LogConfig.broker_defaults({"log.retention.minutes": "3", "log.retention.ms": "7"}).retention_ms == 7
    assert LogConfig.broker_defaults({"log.retention.hours": "-1"}).retention_ms == -1
    assert LogConfig.broker_defaults({"log.roll.hours": "1"}).segment_ms == HOUR
    assert LogConfig.broker_defaults({"log.roll.ms": "500", "log.roll.hours": "1"}).segment_ms == 500
    assert LogConfig.broker_defaults({"log.flush.scheduler.interval.ms": "900"}).flush_interval_ms == 900


def test_broker_defaults_from_a_broker_config_object():
    cfg = BrokerConfig.from_properties(
        {
            "broker.id": "1",
            "zookeeper.connect": "zk:2181",
            "log.segment.bytes": "1048576",
            "log.cleanup.policy": "compact,delete",
            "message.max.bytes": "2000000",
        }
    )
    log_cfg = LogConfig.broker_defaults(cfg.log_properties())
    assert log_cfg.segment_bytes == 1_048_576
    assert log_cfg.cleanup_policy == ("compact", "delete")
    assert log_cfg.max_message_bytes == 2_000_000


def test_broker_defaults_reject_a_bad_value_naming_the_key():
    with pytest.raises(ConfigError, match="log.segment.bytes"):
        LogConfig.broker_defaults({"log.segment.bytes": "lots"})


def test_topic_overrides_use_topic_level_names():
    cfg = LogConfig().with_topic_overrides(
        {
            "retention.ms": "1000",
            "cleanup.policy": "compact",
            "segment.bytes": "4096",
            "min.cleanable.dirty.ratio": "0.25",
            "message.timestamp.type": "LogAppendTime",
            "unclean.leader.election.enable": "true",
            "segment.index.bytes": "800",
        }
    )
    assert (cfg.retention_ms, cfg.cleanup_policy, cfg.segment_bytes) == (1000, ("compact",), 4096)
    assert cfg.min_cleanable_dirty_ratio == 0.25 and cfg.log_append_time and cfg.compact and not cfg.delete
    assert cfg.unclean_leader_election_enable is True
    assert cfg.max_index_entries == 100


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("retention.ms", "soon", "retention.ms"),
        ("retention.ms", "-2", "at least -1"),
        ("segment.bytes", "10", "at least 14"),
        ("segment.bytes", "4294967296", "32-bit"),
        ("cleanup.policy", "shred", "one of"),
        ("cleanup.policy", "", "at least one"),
        ("min.cleanable.dirty.ratio", "1.5", "at most 1"),
        ("message.timestamp.type", "WallTime", "one of"),
        ("unclean.leader.election.enable", "yes", "true or false"),
        ("retention.hours", "1", "unknown topic config"),
    ],
)
def test_bad_topic_override_raises_config_error_naming_the_key(key, value, message):
    with pytest.raises(ConfigError, match=message) as info:
        LogConfig().with_topic_overrides({key: value})
    assert key in str(info.value)


def test_overrides_accumulate_and_describe_reports_sources():
    defaults = LogConfig.broker_defaults({"log.retention.hours": "1", "log.segment.bytes": "2048"})
    cfg = defaults.with_topic_overrides({"retention.ms": "5"}).with_topic_overrides({"cleanup.policy": "compact"})
    rows = {row.name: row for row in cfg.describe()}
    assert list(rows) == list(TOPIC_CONFIG_KEYS)
    assert rows["retention.ms"][:4] == ("retention.ms", "5", False, "log.retention.ms")
    assert rows["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert rows["cleanup.policy"].value == "compact" and not rows["cleanup.policy"].is_default
    assert rows["segment.bytes"].source == ConfigSource.STATIC_BROKER_CONFIG and rows["segment.bytes"].is_default
    assert rows["segment.bytes"].value == "2048"
    assert rows["delete.retention.ms"].source == ConfigSource.DEFAULT_CONFIG
    assert rows["unclean.leader.election.enable"].value == "false"
    assert rows["min.cleanable.dirty.ratio"].value == "0.5"
    assert rows["flush.ms"].source == ConfigSource.DEFAULT_CONFIG


def test_describe_with_explicit_overrides_marks_only_those():
    rows = {row.name: row for row in LogConfig().describe({"segment.ms": "100"})}
    assert not rows["segment.ms"].is_default
    assert sum(not row.is_default for row in rows.values()) == 1


def test_update_checks_ranges_and_field_names():
    assert LogConfig().update(retention_bytes=10).retention_bytes == 10
    with pytest.raises(ConfigError, match="retention.bytes"):
        LogConfig().update(retention_bytes=-5)
    with pytest.raises(ConfigError, match="not a LogConfig field"):
        LogConfig().update(retention_hours=1)


def test_log_config_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        LogConfig().segment_bytes = 1
