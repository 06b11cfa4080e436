"""The cluster registry ``zookeeper.connect`` names: ZooKeeper, or ``memory:<name>`` for an in-process one.

In-process registries of one name share one store (``broker.cluster.memory_registry``), so the brokers of one
process that name it form a cluster. Thread-safe.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from broker.config import BrokerConfig

    from .registry import ClusterRegistry

MEMORY_PREFIX = "memory:"
_memory_stores: dict[str, Any] = {}
_memory_lock = threading.Lock()


def make_registry(config: BrokerConfig) -> ClusterRegistry:
    """The registry named by ``zookeeper.connect``: ZooKeeper, or ``memory:<name>`` for an in-process one."""
    connect = config.zookeeper_connect
    if connect.startswith(MEMORY_PREFIX):
        from .memory_registry import MemoryRegistryStore

        with _memory_lock:
            store = _memory_stores.setdefault(connect, MemoryRegistryStore())
        return store.view()
    from .zk_registry import ZooKeeperRegistry

    timeout = config["zookeeper.session.timeout.ms"]
    return ZooKeeperRegistry(
        connect, session_timeout_ms=timeout, connection_timeout_ms=config["zookeeper.connection.timeout.ms"] or timeout
    )
