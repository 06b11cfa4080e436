"""Every broker config key, declared once: ``CONFIG_KEYS`` (in ``docs/configuration.md`` order, which is
also the order ``BrokerConfig`` fills and DescribeConfigs reports them) and ``KEYS_BY_NAME``.

One module per concern: ``server`` (identity, networking, ZooKeeper, topic creation), ``security``
(listeners' protocols, TLS, SASL; ``LISTENER_OVERRIDABLE`` names the keys ``listener.name.<l>.`` may prefix), ``log`` (the topic
defaults), ``replication``, ``coordinator`` (groups, offsets, transactions), ``consumer_groups`` (KIP-848), ``share_coordinator`` (KIP-932's share-group state), ``share_groups`` (KIP-932 membership and group config bounds), ``share_fetch`` (KIP-932 share sessions and locks), ``quotas`` (client quota windows), ``telemetry`` (KIP-714 client metrics), ``faults`` (the fault-injection control channel), ``schema_registry`` (the Schema Registry's REST listeners); ``schema`` declares
``ConfigKey`` and ``ConfigError``. ``broker.config`` re-exports all of it.
"""

from __future__ import annotations

from .consumer_groups import CONSUMER_GROUP_KEYS
from .coordinator import GROUP_KEYS, TRANSACTION_KEYS
from .faults import FAULT_KEYS
from .log import LOG_KEYS
from .quotas import QUOTA_KEYS
from .replication import REPLICATION_KEYS
from .schema import ConfigError, ConfigKey
from .schema_registry import SCHEMA_REGISTRY_KEYS
from .security import LISTENER_OVERRIDABLE, SECURITY_KEYS
from .server import BROKER_KEYS, TOPIC_KEYS, ZOOKEEPER_KEYS
from .share_coordinator import SHARE_COORDINATOR_KEYS
from .share_fetch import SHARE_FETCH_KEYS
from .share_groups import SHARE_GROUP_KEYS
from .telemetry import TELEMETRY_KEYS

CONFIG_KEYS: tuple[ConfigKey, ...] = (
    BROKER_KEYS
    + SECURITY_KEYS
    + ZOOKEEPER_KEYS
    + TOPIC_KEYS
    + LOG_KEYS
    + REPLICATION_KEYS
    + GROUP_KEYS
    + CONSUMER_GROUP_KEYS
    + SHARE_COORDINATOR_KEYS
    + SHARE_GROUP_KEYS
    + SHARE_FETCH_KEYS
    + TRANSACTION_KEYS
    + QUOTA_KEYS
    + TELEMETRY_KEYS
    + FAULT_KEYS
    + SCHEMA_REGISTRY_KEYS
)
KEYS_BY_NAME: dict[str, ConfigKey] = {k.name: k for k in CONFIG_KEYS}

__all__ = ["CONFIG_KEYS", "KEYS_BY_NAME", "LISTENER_OVERRIDABLE", "ConfigError", "ConfigKey"]
