"""What request handlers may use of their broker: a small, explicit set of services.

Handlers receive ``ctx.services`` and nothing else of the broker, so what an API can touch is written
down here (and a test keeps ``broker.handlers`` from importing ``broker.server`` or ``broker.network``).
Built by ``Broker`` once its components exist, before the listeners open; every field is required, so a
handler never checks for a missing part. Tests that call handlers directly build one with
``tests/broker/services_builder.py`` (real, unstarted parts; fakes where a test asks for them).

Concurrency: the services live on the broker's event loop; ``run_blocking`` moves a blocking call (a
registry write) to the broker's thread pool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .faults import FaultInjector

if TYPE_CHECKING:
    from .cluster.controller import Controller
    from .cluster.registry import ClusterRegistry
    from .config import BrokerConfig
    from .config_admin.group_configs import GroupConfigs
    from .config_admin.topic_admin import TopicAdmin
    from .coordinator.group_coordinator import GroupCoordinator
    from .coordinator.txn_coordinator import TransactionCoordinator
    from .log import LogConfig
    from .metadata.cache import MetadataCache
    from .metrics import BrokerMetrics
    from .producer_ids import ProducerIdAllocator
    from .quotas.manager import QuotaManager
    from .replication.fetch_session import FetchSessionCache
    from .replication.replica_manager import ReplicaManager
    from .security.authorizer import AclAuthorizer
    from .share.persister import Persister
    from .share.share_coordinator import ShareCoordinator
    from .share.share_partition_manager import SharePartitionManager
    from .telemetry import ClientTelemetry


class ServedApis(Protocol):
    """The served API versions (``broker.api.HandlerRegistry``)."""

    def version_ranges(self) -> list[tuple[int, int, int]]: ...


@dataclass(frozen=True)
class BrokerServices:
    broker_id: int
    config: BrokerConfig
    metadata: MetadataCache
    """This broker's view of the cluster: brokers, controller, topics, partition states."""
    replica_manager: ReplicaManager
    """The partitions hosted here, with their logs, roles and high watermarks."""
    topic_admin: TopicAdmin
    """Create, extend and delete topics (validated, then written to the registry)."""
    producer_ids: ProducerIdAllocator
    registry: ClusterRegistry
    """The cluster registry, for what the cache does not hold (cluster id)."""
    handlers: ServedApis
    """The APIs and versions served (ApiVersions answers from it)."""
    log_config_for: Callable[[Mapping[str, str]], LogConfig]
    """The effective log configuration of a topic with these overrides of the broker defaults."""
    run_blocking: Callable[..., Awaitable[Any]]
    is_stopping: Callable[[], bool]
    group_coordinator: GroupCoordinator
    """Consumer groups and committed offsets (``broker.coordinator``)."""
    controller: Controller
    """This broker's controller (active only while it holds ``/controller``); serves ControlledShutdown and
    the reassignment APIs."""
    metrics: BrokerMetrics
    """Counters of requests and traffic (``broker.metrics``)."""
    txn_coordinator: TransactionCoordinator
    """Transactional ids and their transactions (``__transaction_state``)."""
    authorizer: AclAuthorizer
    """ACL decisions (``broker.security.authorizer``); ``authorizer.enabled`` is False without
    ``authorizer.class.name``, and then it allows everything."""
    quotas: QuotaManager
    """Client quotas: records bytes and request time, answers throttle times (``broker.quotas``)."""
    telemetry: ClientTelemetry
    """Client telemetry (KIP-714): subscriptions, client instances, pushed metrics (``broker.telemetry``)."""
    fetch_sessions: FetchSessionCache
    """Incremental fetch sessions (KIP-227, ``broker.replication.fetch_session``)."""
    share_partitions: SharePartitionManager
    """Share partitions led here and share sessions (KIP-932, ``broker.share.share_partition_manager``)."""
    share_coordinator: ShareCoordinator
    """Share-partition state in ``__share_group_state`` for the keys coordinated here (KIP-932,
    ``broker.share.share_coordinator``)."""
    share_persister: Persister
    """Reads and writes share-partition state at its share coordinator, local or remote
    (``broker.share.persister``)."""
    group_configs: GroupConfigs
    """Every group's own configs (GROUP config resources), cached by a watch; ``share_config(group)``
    (``broker.config_admin.group_configs``)."""
    faults: FaultInjector = field(default_factory=FaultInjector)
    """Request-path fault injection (``broker.faults``); the connection consults it only while ``faults.live``."""

    @property
    def stopping(self) -> bool:
        """The broker is shutting down: waiting requests answer now instead of at their timeout."""
        return self.is_stopping()

    @property
    def cluster_id(self) -> str:
        return self.registry.cluster_id
