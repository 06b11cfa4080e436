"""The pytest plugin's settings: broker config lines, scopes and cluster size, merged in a fixed precedence.

Pure functions over strings (no pytest, no broker import), so they are tested as tables. Precedence, lowest
first: the plugin's test defaults (``TEST_DEFAULTS``; for a cluster also ``cluster_defaults(n)``), the ini key
``kafkalog_broker_config`` (one ``key=value`` per line), each ``--kafkalog-broker-config key=value`` option in
order, then a test's ``@pytest.mark.kafkalog(broker_config={...})``. Keys are broker config names
(``server.properties``); a snake_case key (``log_retention_ms``) means its dotted name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "SCOPES",
    "TEST_DEFAULTS",
    "SettingsError",
    "broker_config",
    "cluster_defaults",
    "config_key",
    "config_value",
    "parse_config_lines",
    "parse_scope",
    "parse_broker_count",
]

SCOPES = ("function", "class", "module", "package", "session")
"""The scopes ``kafkalog_broker_scope`` and ``kafkalog_cluster_scope`` accept (pytest's names)."""

TEST_DEFAULTS: Mapping[str, str] = {
    # a group's first member gets its assignment at once instead of after Kafka's 3 s wait for more members
    "group.initial.rebalance.delay.ms": "0",
    # the internal topics are created on first use; 50 partitions each (Kafka's default) cost start-up time
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.num.partitions": "4",
}
"""Broker settings the plugin starts every broker with (a user's settings override each)."""


class SettingsError(ValueError):
    """A plugin setting (option, ini key or marker argument) that cannot be used; the message names it."""


def config_key(key: str) -> str:
    """A broker config name: dotted as given, or a snake_case name turned dotted (``log_retention_ms``)."""
    key = key.strip()
    if not key:
        raise SettingsError("a broker config key is empty")
    return key if "." in key else key.replace("_", ".")


def config_value(value: Any) -> str:
    """A config value as ``server.properties`` holds it: booleans lower case, everything else ``str``."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def parse_config_lines(lines: Iterable[str], *, source: str) -> dict[str, str]:
    """``key=value`` lines (blank lines and ``#`` comments skipped) as ``{config name: value}``.

    ``source`` names where the lines came from (an option, an ini key) in the error a bad line raises.
    """
    out: dict[str, str] = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise SettingsError(f"{source}: {line!r} is not key=value")
        if not key.strip():
            raise SettingsError(f"{source}: {line!r} has no key")
        out[config_key(key)] = value.strip()
    return out


def broker_config(*layers: Mapping[str, Any] | None) -> dict[str, str]:
    """The layers merged in order (a later layer's key wins), keys as config names, values as strings."""
    out: dict[str, str] = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            out[config_key(key)] = config_value(value)
    return out


def cluster_defaults(brokers: int) -> dict[str, str]:
    """The replication settings a cluster of ``brokers`` starts with: topics and the internal topics get
    ``min(brokers, 3)`` replicas (a test of failover needs more than one)."""
    rf = str(min(brokers, 3))
    return {
        "default.replication.factor": rf,
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
    }


def parse_scope(value: str | None, *, source: str, default: str) -> str:
    """A fixture scope name (``SCOPES``); ``None`` or empty gives ``default``."""
    if value is None or not str(value).strip():
        return default
    scope = str(value).strip().lower()
    if scope not in SCOPES:
        raise SettingsError(f"{source}: {value!r} is not a pytest scope (one of {', '.join(SCOPES)})")
    return scope


def parse_broker_count(value: str | int | None, *, source: str, default: int = 3) -> int:
    """The number of brokers of a cluster (at least 1); ``None`` or empty gives ``default``."""
    if value is None or not str(value).strip():
        return default
    try:
        n = int(str(value).strip())
    except ValueError:
        raise SettingsError(f"{source}: {value!r} is not a number of brokers") from None
    if n < 1:
        raise SettingsError(f"{source}: a cluster needs at least one broker, not {n}")
    return n
