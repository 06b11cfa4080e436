"""The configs a group may set (``GROUP`` config resources, type 32; Kafka 4.x's ``GroupConfig``): names, types,
the broker keys that give their defaults, and validation with Kafka's rules and messages.

    name                            type    default from (broker key)              valid
    consumer.session.timeout.ms     int     group.consumer.session.timeout.ms      group.consumer.min/max.session.timeout.ms
    consumer.heartbeat.interval.ms  int     group.consumer.heartbeat.interval.ms   group.consumer.min/max.heartbeat.interval.ms
    share.session.timeout.ms        int     group.share.session.timeout.ms         group.share.min/max.session.timeout.ms
    share.heartbeat.interval.ms     int     group.share.heartbeat.interval.ms      group.share.min/max.heartbeat.interval.ms
    share.record.lock.duration.ms   int     group.share.record.lock.duration.ms    >= 1000, group.share.min/max.record.lock.duration.ms
    share.delivery.count.limit      int     group.share.delivery.count.limit       >= 2, group.share.min/max.delivery.count.limit
    share.auto.offset.reset         string  latest                                 latest, earliest, by_duration:<ISO-8601 PnDTnHnMn.nS, not negative>
    share.isolation.level           string  read_uncommitted                       read_committed, read_uncommitted

and each session timeout must be greater than its heartbeat interval. ``validate_group_config`` checks a group's
whole set of overrides (after an alter, as Kafka's controller does) and raises ``ConfigError`` with Kafka's
message; ``effective_group_config`` gives every value of a group (overrides over the broker defaults, an
override outside the broker's current bounds clamped into them). Pure; thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config import KEYS_BY_NAME, ConfigError

__all__ = [
    "GROUP_CONFIG_DEFS",
    "GroupConfigDef",
    "default_group_config",
    "effective_group_config",
    "parse_duration_ms",
    "validate_group_config",
]

_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT = re.compile(r"^[+-]?\d+$")
# java.time.Duration.parse: PnDTnHnMn.nS, case-insensitive, each part and the whole optionally signed
_DURATION = re.compile(
    r"^([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$", re.IGNORECASE
)
BY_DURATION = "by_duration:"


@dataclass(frozen=True)
class GroupConfigDef:
    name: str
    type: str  # "int" or "string"
    broker_key: str | None  # the broker config giving the default (Kafka's synonym)
    default: str | None  # the default without a broker key
    at_least: int | None
    bounds: tuple[str, str] | None  # broker keys of the smallest and largest value a group may set
    choices: tuple[str, ...] | None
    doc: str


GROUP_CONFIG_DEFS: dict[str, GroupConfigDef] = {
    d.name: d
    for d in (
        GroupConfigDef(
            "consumer.session.timeout.ms",
            "int",
            "group.consumer.session.timeout.ms",
            None,
            1,
            ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
            None,
            "The timeout to detect client failures when using the consumer group protocol.",
        ),
        GroupConfigDef(
            "consumer.heartbeat.interval.ms",
            "int",
            "group.consumer.heartbeat.interval.ms",
            None,
            1,
            ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
            None,
            "The heartbeat interval given to the members of a consumer group.",
        ),
        GroupConfigDef(
            "share.session.timeout.ms",
            "int",
            "group.share.session.timeout.ms",
            None,
            1,
            ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
            None,
            "The timeout to detect client failures when using the share group protocol.",
        ),
        GroupConfigDef(
            "share.heartbeat.interval.ms",
            "int",
            "group.share.heartbeat.interval.ms",
            None,
            1,
            ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
            None,
            "The heartbeat interval given to the members of a share group.",
        ),
        GroupConfigDef(
            "share.record.lock.duration.ms",
            "int",
            "group.share.record.lock.duration.ms",
            None,
            1000,
            ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
            None,
            "The record acquisition lock duration in milliseconds for share groups.",
        ),
        GroupConfigDef(
            "share.delivery.count.limit",
            "int",
            "group.share.delivery.count.limit",
            None,
            2,
            ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
            None,
            "The maximum number of delivery attempts for a record delivered to a share group.",
        ),
        GroupConfigDef(
            "share.auto.offset.reset",
            "string",
            None,
            "latest",
            None,
            None,
            None,
            "The strategy to initialize the share-partition start offset: earliest (the log start offset), latest "
            "(the high watermark) or by_duration:<duration> (the first record at or after now minus the ISO-8601 "
            "duration PnDTnHnMn.nS; not negative).",
        ),
        GroupConfigDef(
            "share.isolation.level",
            "string",
            None,
            "read_uncommitted",
            None,
            None,
            ("read_committed", "read_uncommitted"),
            "Controls how to read records written transactionally: read_committed delivers only committed "
            "transactional records, read_uncommitted all of them. Non-transactional records are delivered in "
            "either mode.",
        ),
    )
}
_TIMEOUT_PAIRS = (
    ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
)


def parse_duration_ms(text: str) -> int | None:
    """Milliseconds of an ISO-8601 duration as Java's ``Duration.parse`` reads it; None when it is not one."""
    m = _DURATION.match(text)
    if (
        m is None
        or not any(m.group(i) for i in (2, 4, 5, 6))
        or (m.group(3) and not any(m.group(i) for i in (4, 5, 6)))
    ):
        return None
    days, hours, minutes, seconds = (int(m.group(i) or 0) for i in (2, 4, 5, 6))
    frac = int((m.group(7) or "").ljust(9, "0")) if m.group(7) else 0
    nanos = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1_000_000_000
    nanos += -frac if (m.group(6) or "").startswith("-") else frac
    if m.group(1) == "-":
        nanos = -nanos
    return nanos // 1_000_000


def _broker_value(broker_config: Any, key: str) -> Any:
    try:
        return broker_config[key]
    except KeyError:
        return KEYS_BY_NAME[key].default


def _invalid(name: str, raw: str, why: str) -> ConfigError:
    return ConfigError(f"Invalid value {raw} for configuration {name}: {why}")


def _parse(d: GroupConfigDef, raw: str) -> Any:
    """One value, checked alone (type, lower bound, choices); ConfigError with Kafka's ``ConfigException`` text."""
    text = raw.strip()
    if d.type == "int":
        if not _INT.match(text) or not _INT32[0] <= int(text) <= _INT32[1]:
            raise _invalid(d.name, raw, "Not a number of type INT")
        value = int(text)
        if d.at_least is not None and value < d.at_least:
            raise _invalid(d.name, raw, f"Value must be at least {d.at_least}")
        return value
    if d.choices is not None and text not in d.choices:
        raise _invalid(d.name, raw, f"String must be one of: {', '.join(d.choices)}")
    if d.name == "share.auto.offset.reset" and text not in ("latest", "earliest"):
        ms = parse_duration_ms(text[len(BY_DURATION) :]) if text.startswith(BY_DURATION) else None
        if ms is None or ms < 0:
            raise _invalid(
                d.name,
                raw,
                f"Invalid value `{raw}` for configuration {d.name}. The value must be either 'earliest', 'latest' "
                "or of the format 'by_duration:<PnDTnHnMn.nS>'.",
            )
    return text


def default_group_config(broker_config: Any) -> dict[str, Any]:
    """Every group config's value for a group that sets none (from the broker keys)."""
    return {
        name: _broker_value(broker_config, d.broker_key) if d.broker_key else d.default
        for name, d in GROUP_CONFIG_DEFS.items()
    }


def validate_group_config(overrides: Mapping[str, str], broker_config: Any) -> dict[str, Any]:
    """Check a group's whole set of overrides as Kafka's ``GroupConfig.validate``: known names, each value, the
    broker's bounds, session timeouts above heartbeat intervals. Returns the typed overrides; raises
    ``ConfigError`` (INVALID_CONFIG) with Kafka's message."""
    for name in overrides:
        if name not in GROUP_CONFIG_DEFS:
            raise ConfigError(f"Unknown group config name: {name}")
    typed = {name: _parse(GROUP_CONFIG_DEFS[name], raw) for name, raw in overrides.items()}
    for name, value in typed.items():
        bounds = GROUP_CONFIG_DEFS[name].bounds
        if bounds is not None:
            lo, hi = (_broker_value(broker_config, k) for k in bounds)
            if not lo <= value <= hi:
                raise ConfigError(f"{name} must be in the range {lo} to {hi} inclusive.")
    values = default_group_config(broker_config) | typed
    for session, heartbeat in _TIMEOUT_PAIRS:
        if (session in typed or heartbeat in typed) and values[session] <= values[heartbeat]:
            raise ConfigError(f"{session} must be greater than {heartbeat}")
    return typed


def effective_group_config(overrides: Mapping[str, str], broker_config: Any) -> dict[str, Any]:
    """Every group config's value for a group with ``overrides`` (as stored: each is used when it parses, clamped
    into the broker's current bounds; an unknown or unparsable one is ignored)."""
    values = default_group_config(broker_config)
    for name, raw in overrides.items():
        d = GROUP_CONFIG_DEFS.get(name)
        if d is None:
            continue
        try:
            value = _parse(d, raw)
        except ConfigError:
            continue
        if d.bounds is not None:
            lo, hi = (_broker_value(broker_config, k) for k in d.bounds)
            value = min(max(value, lo), hi)
        values[name] = value
    return values
