"""Dynamic broker configs: the log-level defaults a broker takes from ZooKeeper while it runs.

Kafka's layout: ``/config/brokers/<default>`` holds cluster-wide values, ``/config/brokers/<id>`` one
broker's; both are ``{"version":1,"config":{...}}`` with ``server.properties`` key names. Precedence, highest
first: the broker's own dynamic value, the cluster-wide dynamic default, ``server.properties``, the built-in
default (DescribeConfigs sources 2, 3, 4, 5).

Only the broker keys that set a topic config's default are dynamic here (``DYNAMIC_BROKER_KEYS``:
``log.retention.ms``, ``log.segment.bytes``, ``log.cleanup.policy``, ``message.max.bytes``,
``min.insync.replicas``, ...; not ``unclean.leader.election.enable``): they apply at once to every topic without its own override. Any other key
(listeners, thread counts, ``log.retention.hours``, ...) is refused with the key named; it needs a
``server.properties`` change and a restart.

Concurrency: ``update`` and ``log_defaults`` run on the broker's event loop; values are replaced whole, so
readers on other threads see either the old or the new state.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..config import KEYS_BY_NAME, BrokerConfig, ConfigError
from ..log.config import TOPIC_CONFIG_KEYS, LogConfig

__all__ = ["DYNAMIC_BROKER_KEYS", "DynamicBrokerConfig", "check_dynamic_broker_config", "DEFAULT_ENTITY"]

DEFAULT_ENTITY = "<default>"
DYNAMIC_BROKER_KEYS = frozenset(k.synonym for k in TOPIC_CONFIG_KEYS.values() if k.synonym) - {
    "unclean.leader.election.enable"
}
"""Broker keys that may be set dynamically: the broker-level synonyms of the topic configs, except
``unclean.leader.election.enable`` (the controller reads its default from ``server.properties``; the topic
config ``unclean.leader.election.enable`` is dynamic)."""

DYNAMIC_BROKER, DYNAMIC_DEFAULT_BROKER = 2, 3


def check_dynamic_broker_config(config: Mapping[str, str]) -> None:
    """ConfigError naming the first key that is not dynamic or whose value is invalid."""
    for name, raw in config.items():
        if name not in DYNAMIC_BROKER_KEYS:
            if name in KEYS_BY_NAME:
                raise ConfigError(
                    f"{name}: cannot be changed dynamically (set it in server.properties and restart the broker); "
                    f"dynamic broker configs: {', '.join(sorted(DYNAMIC_BROKER_KEYS))}"
                )
            raise ConfigError(f"{name}: unknown broker config")
        KEYS_BY_NAME[name].parse(raw)


class DynamicBrokerConfig:
    """The static config of one broker plus its dynamic broker configs (see the module docstring)."""

    def __init__(self, static: BrokerConfig) -> None:
        self.static = static
        self.cluster_default: dict[str, str] = {}
        self.per_broker: dict[str, str] = {}
        self._log_defaults = LogConfig.broker_defaults(static.log_properties())

    def update(self, cluster_default: Mapping[str, str], per_broker: Mapping[str, str]) -> bool:
        """Take new dynamic values; True when they changed. ConfigError (nothing changed) if they are invalid."""
        cluster_default, per_broker = dict(cluster_default), dict(per_broker)
        if (cluster_default, per_broker) == (self.cluster_default, self.per_broker):
            return False
        check_dynamic_broker_config(cluster_default)
        check_dynamic_broker_config(per_broker)
        merged = {**self.static.log_properties(), **cluster_default, **per_broker}
        self._log_defaults = LogConfig.broker_defaults(merged)
        self.cluster_default, self.per_broker = cluster_default, per_broker
        return True

    def log_defaults(self) -> LogConfig:
        """Every topic's defaults: ``server.properties`` with the dynamic values on top."""
        return self._log_defaults

    def dynamic_source(self, key: str) -> tuple[str, int] | None:
        """(value, DescribeConfigs source) of a dynamically set broker key, or None."""
        if key in self.per_broker:
            return self.per_broker[key], DYNAMIC_BROKER
        if key in self.cluster_default:
            return self.cluster_default[key], DYNAMIC_DEFAULT_BROKER
        return None
