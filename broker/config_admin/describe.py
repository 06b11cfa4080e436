"""What DescribeConfigs and CreateTopics (v5+) report: every config of a topic, a broker, a client metrics
subscription or a group with its value, source and synonyms.

Sources are Kafka's ``config_source`` codes: 1 topic override (``/config/topics``), 2 this broker's
dynamic config (``/config/brokers/<id>``), 3 the cluster-wide dynamic default (``/config/brokers/<default>``),
4 set in ``server.properties``, 5 default. A topic config's synonyms are, in precedence order, the topic
override and the broker key that sets its default (``log.retention.ms`` for ``retention.ms``) from each
source that sets it. ``dynamic`` (``broker.config_admin.dynamic.DynamicBrokerConfig``) holds the dynamic broker
values; without it only static sources are reported. Types are Kafka's ``ConfigType`` codes (v3+).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import CONFIG_KEYS, _to_property
from ..log.config import LogConfig
from .dynamic import DYNAMIC_BROKER_KEYS, DynamicBrokerConfig
from .group_config_defs import GROUP_CONFIG_DEFS, default_group_config

if TYPE_CHECKING:
    from ..services import BrokerServices

TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT_BROKER, STATIC_BROKER, DEFAULT = 1, 2, 3, 4, 5
CONFIG_TYPES = {"boolean": 1, "string": 2, "int": 3, "short": 4, "long": 5, "double": 6, "list": 7, "password": 9}


@dataclass
class DescribedConfig:
    name: str
    value: str | None
    source: int
    synonyms: list[tuple[str, str | None, int]]
    type: int
    doc: str
    sensitive: bool = False
    read_only: bool = False

    @property
    def is_default(self) -> bool:
        return self.source == DEFAULT


def _dynamic_synonyms(dynamic: DynamicBrokerConfig | None, key: str) -> list[tuple[str, str | None, int]]:
    if dynamic is None:
        return []
    out: list[tuple[str, str | None, int]] = []
    if key in dynamic.per_broker:
        out.append((key, dynamic.per_broker[key], DYNAMIC_BROKER))
    if key in dynamic.cluster_default:
        out.append((key, dynamic.cluster_default[key], DYNAMIC_DEFAULT_BROKER))
    return out


def describe_topic_configs(
    broker: BrokerServices, overrides: Mapping[str, str], dynamic: DynamicBrokerConfig | None = None
) -> list[DescribedConfig]:
    if dynamic is not None and (dynamic.per_broker or dynamic.cluster_default):
        cfg = dynamic.log_defaults().with_topic_overrides(overrides)
    else:
        cfg = broker.log_config_for(overrides)
    originals = broker.config.originals
    out = []
    for e in cfg.describe(overrides):
        synonyms: list[tuple[str, str | None, int]] = []
        if e.name in overrides:
            synonyms.append((e.name, overrides[e.name], TOPIC))
        dyn = _dynamic_synonyms(dynamic, e.synonym)
        synonyms += dyn
        if e.synonym and e.synonym in originals:
            synonyms.append((e.synonym, originals[e.synonym], STATIC_BROKER))
        else:  # a topic-only config (no broker key) has its own name as the default's synonym
            synonyms.append((e.synonym or e.name, _builtin_defaults().get(e.name), DEFAULT))
        source = int(e.source)
        if source != TOPIC and dyn:
            source = dyn[0][2]
        out.append(DescribedConfig(e.name, e.value, source, synonyms, CONFIG_TYPES.get(e.type, 0), e.doc))
    return out


@functools.cache
def _builtin_defaults() -> dict[str, str]:
    """Every topic config's value when nothing sets it (the DEFAULT_CONFIG synonym)."""
    return {e.name: e.value for e in LogConfig.broker_defaults({}).describe({})}


def describe_broker_configs(
    broker: BrokerServices, dynamic: DynamicBrokerConfig | None = None
) -> list[DescribedConfig]:
    """Every broker config of this broker, dynamic values first (read-only unless dynamic)."""
    originals = broker.config.originals
    out = []
    for key in CONFIG_KEYS:
        value = broker.config[key.name]
        text = None if value is None else _to_property(value)
        source = STATIC_BROKER if key.name in originals else DEFAULT
        synonyms = _dynamic_synonyms(dynamic, key.name) + [(key.name, text, source)]
        if synonyms[0][2] in (DYNAMIC_BROKER, DYNAMIC_DEFAULT_BROKER):
            text, source = synonyms[0][1], synonyms[0][2]
        out.append(
            DescribedConfig(
                key.name,
                text,
                source,
                synonyms,
                CONFIG_TYPES.get(key.type, 0),
                key.doc,
                key.type == "password",
                key.name not in DYNAMIC_BROKER_KEYS,
            )
        )
    return out


def describe_default_broker_configs(dynamic: DynamicBrokerConfig) -> list[DescribedConfig]:
    """The cluster-wide dynamic defaults (``/config/brokers/<default>``): what Kafka lists for the broker
    resource named ``""``."""
    by_name = {k.name: k for k in CONFIG_KEYS}
    out = []
    for name, value in sorted(dynamic.cluster_default.items()):
        key = by_name.get(name)
        out.append(
            DescribedConfig(
                name,
                value,
                DYNAMIC_DEFAULT_BROKER,
                [(name, value, DYNAMIC_DEFAULT_BROKER)],
                CONFIG_TYPES.get(key.type, 0) if key else 0,
                key.doc if key else "",
            )
        )
    return out


CLIENT_METRICS_CONFIG = 7
"""Kafka's ``ConfigSource.CLIENT_METRICS_CONFIG``: a key a client metrics subscription sets."""


def describe_client_metrics_configs(config: Mapping[str, str]) -> list[DescribedConfig]:
    """A client metrics subscription (KIP-714) as Kafka's ``ConfigHelper`` describes it: each of ``metrics``,
    ``interval.ms`` and ``match`` with its value (lists joined by ``,``), set ones with source 7 and themselves as
    synonym, the others with their default and source 5. ``config`` must have passed
    ``broker.telemetry.subscriptions.parse_subscription``."""
    from ..telemetry.subscriptions import CONFIG_DEFAULTS, CONFIG_DOCS
    from ..telemetry.subscriptions import CONFIG_TYPES as SUBSCRIPTION_TYPES

    out = []
    for name in sorted(CONFIG_DEFAULTS):
        kind = SUBSCRIPTION_TYPES[name]
        raw = config.get(name, CONFIG_DEFAULTS[name])
        if kind == "list":
            value = ",".join(p.strip() for p in raw.split(",")) if raw.strip() else ""
        else:
            value = str(int(raw))
        source = CLIENT_METRICS_CONFIG if name in config else DEFAULT
        synonyms: list[tuple[str, str | None, int]] = [(name, value, CLIENT_METRICS_CONFIG)] if name in config else []
        out.append(DescribedConfig(name, value, source, synonyms, CONFIG_TYPES[kind], CONFIG_DOCS[name]))
    return out


GROUP_CONFIG = 8
"""Kafka's ``ConfigSource.GROUP_CONFIG``: a key a group's own config (``/config/groups/<group>``) sets."""


def describe_group_configs(broker: BrokerServices, overrides: Mapping[str, str]) -> list[DescribedConfig]:
    """A group's configs (``GROUP`` resource, type 32) as Kafka describes them: every group config
    (``group_config_defs``) with its value, set ones with source 8 and synonyms the override and the broker key
    that gives its default, the others with the broker's value and source 5 (4 when ``server.properties`` sets
    the broker key). A stored value is reported as stored."""
    originals = broker.config.originals
    defaults = default_group_config(broker.config)
    out = []
    for name, d in sorted(GROUP_CONFIG_DEFS.items()):
        default = _to_property(defaults[name])
        default_source = STATIC_BROKER if d.broker_key in originals else DEFAULT
        synonyms: list[tuple[str, str | None, int]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], GROUP_CONFIG))
        synonyms.append((d.broker_key or name, default, default_source))
        value, source = (overrides[name], GROUP_CONFIG) if name in overrides else (default, default_source)
        out.append(DescribedConfig(name, value, source, synonyms, CONFIG_TYPES[d.type], d.doc))
    return out
