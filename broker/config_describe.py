"""What DescribeConfigs and CreateTopics (v5+) report: every config of a topic or a broker with its value,
source and synonyms.

Sources are Kafka's ``config_source`` codes: 1 topic override (``/config/topics``), 4 set in
``server.properties``, 5 default. A topic config's synonyms are, in precedence order, the topic override
and the broker key that sets its default (``log.retention.ms`` for ``retention.ms``). Types are Kafka's
``ConfigType`` codes (v3+).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .config import CONFIG_KEYS, _to_property

if TYPE_CHECKING:
    from .services import BrokerServices

TOPIC, DEFAULT, STATIC_BROKER = 1, 5, 4
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

    @property
    def is_default(self) -> bool:
        return self.source == DEFAULT


def describe_topic_configs(broker: BrokerServices, overrides: Mapping[str, str]) -> list[DescribedConfig]:
    cfg = broker.log_config_for(overrides)
    originals = broker.config.originals
    out = []
    for e in cfg.describe(overrides):
        synonyms = []
        if e.name in overrides:
            synonyms.append((e.name, overrides[e.name], TOPIC))
        if e.synonym in originals:
            synonyms.append((e.synonym, originals[e.synonym], STATIC_BROKER))
        source = int(e.source)
        out.append(
            DescribedConfig(
                e.name, e.value, source, synonyms or [(e.synonym, e.value, DEFAULT)], CONFIG_TYPES.get(e.type, 0), e.doc
            )
        )
    return out


def describe_broker_configs(broker: BrokerServices) -> list[DescribedConfig]:
    originals = broker.config.originals
    out = []
    for key in CONFIG_KEYS:
        value = broker.config[key.name]
        text = None if value is None else _to_property(value)
        source = STATIC_BROKER if key.name in originals else DEFAULT
        out.append(
            DescribedConfig(
                key.name,
                text,
                source,
                [(key.name, text, source)],
                CONFIG_TYPES.get(key.type, 0),
                key.doc,
                key.type == "password",
            )
        )
    return out
