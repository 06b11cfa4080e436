"""Cluster coordination: the registry interface, its ZooKeeper implementation and the ZooKeeper launcher.

Importing this package loads neither kazoo nor java: ``zk_registry`` (built on ``zk_session``, the only kazoo
importer) and ``zookeeper_server`` are imported explicitly by whoever needs them.
"""

from broker.cluster.registry import (
    BrokerIdInUseError,
    BrokerInfo,
    ClusterRegistry,
    NoSuchTopicError,
    PartitionState,
    RegistryError,
    RegistryUnavailableError,
    StaleStateError,
    Subscription,
    TopicAssignment,
    TopicExistsError,
)

__all__ = [
    "BrokerIdInUseError",
    "BrokerInfo",
    "ClusterRegistry",
    "NoSuchTopicError",
    "PartitionState",
    "RegistryError",
    "RegistryUnavailableError",
    "StaleStateError",
    "Subscription",
    "TopicAssignment",
    "TopicExistsError",
]
