"""``build_services``: the ``BrokerServices`` of a broker that is not running, for tests that call a handler
directly (``await handler(request_context(services, ...), body)``) instead of over a socket.

Every part is real and unstarted, over one in-process registry (not connected) and ``log_dir``: the metadata
cache is empty, the controller is not active, the coordinators coordinate nothing and run no timers, the
metrics serve nothing, ``run_blocking`` calls its function inline and ``is_stopping`` says False. A test
gives the parts it is about by keyword, by their ``BrokerServices`` field names (``controller=FakeController()``,
``is_stopping=lambda: True``); the parts built from a given one use it (``metadata=cache`` is the cache of the
replica manager, the coordinators and the controller too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from broker.api import HandlerRegistry, RequestContext
from broker.cluster.controller import Controller
from broker.cluster.memory_registry import MemoryRegistryStore
from broker.config import BrokerConfig
from broker.config_admin.group_configs import GroupConfigs
from broker.config_admin.topic_admin import TopicAdmin
from broker.coordinator.group_coordinator import GroupCoordinator
from broker.coordinator.txn_coordinator import TransactionCoordinator
from broker.handlers import register_all
from broker.log import LogConfig, LogManager
from broker.log.clock import SYSTEM_CLOCK, Clock
from broker.metadata.cache import MetadataCache
from broker.metrics import BrokerMetrics
from broker.producer_ids import ProducerIdAllocator
from broker.quotas.manager import QuotaManager
from broker.replication.fetch_session import FetchSessionCache
from broker.replication.replica_manager import ReplicaManager
from broker.security.authorizer import AclAuthorizer
from broker.services import BrokerServices
from broker.share.persister import CoordinatorPersister
from broker.share.share_coordinator import ShareCoordinator
from broker.share.share_partition_manager import SharePartitionManager
from broker.telemetry import ClientTelemetry
from spark_kafkalog.protocol.messages import RequestHeader

_FIELDS = frozenset(f.name for f in dataclasses.fields(BrokerServices))
T = TypeVar("T")


async def run_inline(fn: Callable[..., Any], *args: Any) -> Any:
    """``run_blocking`` of the built services: the call runs on the caller's thread (the in-process registry
    answers at once)."""
    return fn(*args)


def build_services(log_dir: Path, *, broker_id: int = 0, clock: Clock = SYSTEM_CLOCK, **parts: Any) -> BrokerServices:
    """The services of an unstarted broker ``broker_id`` logging to ``log_dir`` (see the module docstring);
    ``parts`` replace the built ones by field name; ``clock`` is the coordinators'."""
    unknown = set(parts) - _FIELDS
    if unknown:
        raise TypeError(f"BrokerServices has no field {', '.join(sorted(unknown))}")

    def part(name: str, build: Callable[[], T]) -> T:
        return parts[name] if name in parts else build()

    config = part(
        "config",
        lambda: BrokerConfig.from_properties(
            {"broker.id": str(broker_id), "log.dirs": str(log_dir), "zookeeper.connect": "memory:services-builder"}
        ),
    )
    defaults = LogConfig.broker_defaults(config.log_properties())
    metadata = part("metadata", lambda: MetadataCache(broker_id))
    registry = part("registry", lambda: MemoryRegistryStore().view())
    metrics = part("metrics", BrokerMetrics)
    run_blocking = part("run_blocking", lambda: run_inline)
    log_config_for = part("log_config_for", lambda: defaults.with_topic_overrides)
    replica_manager = part(
        "replica_manager",
        lambda: ReplicaManager(
            broker_id,
            LogManager([log_dir], defaults),
            metadata,
            metrics=metrics,
            config=config,
            registry=registry,
            run_blocking=run_blocking,
        ),
    )
    topic_admin = part("topic_admin", lambda: TopicAdmin(config, metadata, registry, log_config_for, run_blocking))
    producer_ids = part("producer_ids", lambda: ProducerIdAllocator(broker_id))

    share_coordinator = part(
        "share_coordinator",
        lambda: ShareCoordinator(broker_id, config, metadata, replica_manager, topic_admin, clock=clock),
    )

    def handlers() -> HandlerRegistry:
        served = HandlerRegistry()
        register_all(served)
        return served

    return BrokerServices(
        broker_id=broker_id,
        config=config,
        metadata=metadata,
        replica_manager=replica_manager,
        topic_admin=topic_admin,
        producer_ids=producer_ids,
        registry=registry,
        handlers=part("handlers", handlers),
        log_config_for=log_config_for,
        run_blocking=run_blocking,
        is_stopping=part("is_stopping", lambda: lambda: False),
        group_coordinator=part(
            "group_coordinator",
            lambda: GroupCoordinator(broker_id, config, metadata, replica_manager, topic_admin, clock=clock),
        ),
        controller=part("controller", lambda: Controller(broker_id, registry, run_blocking, config, metadata=metadata)),
        metrics=metrics,
        txn_coordinator=part(
            "txn_coordinator",
            lambda: TransactionCoordinator(
                broker_id, config, metadata, replica_manager, topic_admin, producer_ids, clock=clock
            ),
        ),
        share_coordinator=share_coordinator,
        share_persister=part("share_persister", lambda: CoordinatorPersister(broker_id, share_coordinator, metadata)),
        group_configs=part("group_configs", lambda: GroupConfigs(config, registry, run_blocking)),
        authorizer=part("authorizer", lambda: AclAuthorizer.from_config(config)),
        quotas=part("quotas", QuotaManager),
        telemetry=part("telemetry", ClientTelemetry),
        fetch_sessions=part(
            "fetch_sessions",
            lambda: FetchSessionCache(config["max.incremental.fetch.session.cache.slots"], clock=ReplicaManager.now_ms),
        ),
        share_partitions=part(
            "share_partitions",
            lambda: SharePartitionManager(config, metadata, replica_manager, persister=lambda: None),
        ),
    )


def request_context(services: BrokerServices, api_key: int, version: int, **fields: Any) -> RequestContext:
    """A ``RequestContext`` for one request at ``version`` from a client at 127.0.0.1 (``fields``: the other
    ``RequestContext`` fields, e.g. ``listener``)."""
    header = RequestHeader(api_key, version, correlation_id=1, client_id="services-builder")
    return RequestContext(services, header, "127.0.0.1:50000", **fields)
