"""The share-group parts one broker runs (KIP-932), built, started and stopped together by ``broker.server``.

``ShareServices`` holds the ``ShareCoordinator`` (``__share_group_state`` for the keys coordinated here), the
``CoordinatorPersister`` that reaches the share coordinator of any key (this one or another broker's) and the
``SharePartitionManager`` (share partitions led here, share sessions). ``start`` starts the coordinator, then the
manager; ``stop`` stops the manager first (waiting ShareFetches answer at once), then the coordinator (persister
calls to it answer NOT_COORDINATOR, and their callers retry at the next leader), then closes the persister's
connections. Event loop only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .persister import CoordinatorPersister
from .share_coordinator import ShareCoordinator
from .share_partition_manager import SharePartitionManager

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.config_admin.topic_admin import TopicAdmin
    from broker.log.clock import Clock
    from broker.metadata.cache import MetadataCache
    from broker.replication.replica_manager import ReplicaManager
    from broker.security.inter_broker import InterBrokerClient


class ShareHost(Protocol):
    """What ``ShareServices`` uses of ``broker.server.Broker`` (which it must not import: the layers)."""

    broker_id: int
    config: BrokerConfig
    metadata: MetadataCache
    replica_manager: ReplicaManager | None
    topic_admin: TopicAdmin | None
    inter_broker: InterBrokerClient | None
    clock: Clock
    services: Any  # the broker's BrokerServices once built: its group_configs (None before)


class ShareServices:
    """``coordinator``, ``persister`` and ``partitions`` of ``broker`` (module docstring), built once its replica
    manager and topic admin exist."""

    def __init__(self, broker: ShareHost) -> None:
        assert broker.replica_manager is not None and broker.topic_admin is not None
        cfg, metadata, replicas = broker.config, broker.metadata, broker.replica_manager
        self.coordinator = ShareCoordinator(
            broker.broker_id, cfg, metadata, replicas, broker.topic_admin, clock=broker.clock
        )
        self.persister = CoordinatorPersister(broker.broker_id, self.coordinator, metadata, broker.inter_broker)
        self.partitions = SharePartitionManager(
            cfg,
            metadata,
            replicas,
            persister=lambda: self.persister,
            group_configs=lambda: getattr(broker.services, "group_configs", None),
        )

    def start(self) -> None:
        self.coordinator.start()
        self.partitions.start()

    async def stop(self) -> None:
        await self.partitions.stop()
        await self.coordinator.stop()
        await self.persister.close()
