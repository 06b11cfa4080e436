"""Broker lifecycle: ordered, idempotent start and stop; ``EmbeddedBroker`` runs one in a background thread.

Start order: build each listener's security (TLS contexts, SASL users; ``broker.security.listener_security``)
and the inter-broker client side (``broker.security.inter_broker``) -> load and recover the logs (locking the log dirs) -> connect to the registry (ZooKeeper, or an
in-process registry for ``zookeeper.connect=memory:<name>``) -> bind the listeners -> follow the registry
(brokers, topics, partition states) until the first snapshot is applied -> register ``/brokers/ids/<id>``
(taking over the nodes a crashed previous run left, as recorded in the first log dir's
``zookeeper-registration``; see ``broker.cluster.registration_record``) -> serve requests -> compete for
the controller -> start the Schema Registry's listeners when ``schema.registry.listeners`` is set (the registry
reads its topic in the background; ``broker.schema_registry.service``). Stop order: stop the Schema Registry -> stop
the replica fetchers (Kafka's StopReplica) -> controlled shutdown (the
controller moves this broker's leaderships to other in-sync replicas and takes it out of the ISRs it
follows in; ``controlled.shutdown.*``) -> resign the controller -> stop the group coordinator (its waiting JoinGroup and
SyncGroup requests answer NOT_COORDINATOR, so no long poll holds the shutdown), the transaction coordinator and the
share coordinator (persister calls to it answer NOT_COORDINATOR, and its callers retry at the next leader) -> stop accepting and finish in-flight
requests (waiting long polls answer at once) -> stop following the registry -> flush logs and write
checkpoints (clean-shutdown marker) -> deregister -> close the registry. Both are idempotent; a failed start undoes what it did.

Concurrency: a ``Broker`` lives on one asyncio event loop (handlers, replica manager, metadata); blocking
registry calls run in its thread pool (``run_blocking``); the log manager runs retention, flushing and
cleaning on its own background thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .api import HandlerRegistry
from .cluster.registry import BrokerInfo, ClusterRegistry
from .cluster.registry_factory import MEMORY_PREFIX, make_registry
from .config import BrokerConfig
from .config_admin.group_configs import GroupConfigs
from .config_admin.topic_admin import TopicAdmin
from .coordinator.group_coordinator import GroupCoordinator
from .coordinator.txn_coordinator import TransactionCoordinator
from .event_loop import loop_name, new_event_loop
from .faults import FaultInjector
from .handlers import register_all
from .log.clock import SYSTEM_CLOCK, Clock
from .metadata.cache import MetadataCache
from .metadata.sync import MetadataSync
from .metrics import BrokerMetrics, BrokerSnapshot
from .network import SocketServer
from .producer_ids import ProducerIdAllocator
from .quotas.manager import QuotaManager
from .replication.fetch_session import FetchSessionCache
from .replication.replica_manager import ReplicaManager
from .security.acl_sync import AclSync
from .security.authorizer import AclAuthorizer
from .security.inter_broker import InterBrokerClient
from .security.scram_credentials import ScramCredentialCache
from .services import BrokerServices
from .share.persister import CoordinatorPersister
from .share.share_coordinator import ShareCoordinator
from .share.share_partition_manager import SharePartitionManager
from .share.share_services import ShareServices
from .telemetry import ClientTelemetry
from .telemetry.prometheus import ClientTelemetryCollector
from .telemetry.sync import ClientMetricsSync

if TYPE_CHECKING:
    from .cluster.controller import Controller

log = logging.getLogger("kafkalog.broker")


class Broker:
    """One broker. ``await start()``, then serve until ``await stop()``; see the module docstring."""

    def __init__(
        self, config: BrokerConfig, *, registry: ClusterRegistry | None = None, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        from .log import LogConfig

        self.config = config
        self.broker_id = config.broker_id
        self.default_log_config = LogConfig.broker_defaults(config.log_properties())
        self.registry = registry
        self.clock = clock
        """The time of the log store and the coordinators (tests pass a ``ManualClock``)."""
        self.metadata = MetadataCache(self.broker_id)
        self.handlers = HandlerRegistry()
        register_all(self.handlers)
        self.producer_ids = ProducerIdAllocator(self.broker_id)
        self.metrics = BrokerMetrics()
        self.authorizer = AclAuthorizer.from_config(config)
        self.quotas = QuotaManager.from_config(config)
        self.metrics.watch_quotas(self.quotas.figures)
        self.telemetry = ClientTelemetry(
            max_bytes=config["telemetry.max.bytes"], max_clients=config["client.telemetry.max.clients"]
        )
        """KIP-714 client telemetry; what clients push is on the metrics endpoint (``broker.telemetry``)."""
        self.metrics.registry.register(ClientTelemetryCollector(self.telemetry))
        self.client_metrics_sync: ClientMetricsSync | None = None
        self.group_configs: GroupConfigs | None = None
        self.fetch_sessions = FetchSessionCache(
            config["max.incremental.fetch.session.cache.slots"], clock=ReplicaManager.now_ms
        )
        self.metrics.watch_fetch_sessions(self.fetch_sessions.figures)
        self.topic_admin: TopicAdmin | None = None
        self.group_coordinator: GroupCoordinator | None = None
        self.txn_coordinator: TransactionCoordinator | None = None
        self.share: ShareServices | None = None
        """The share-group parts (KIP-932), also as ``share_coordinator``, ``share_persister``, ``share_partitions``."""
        self.share_coordinator: ShareCoordinator | None = None
        self.share_persister: CoordinatorPersister | None = None
        self.share_partitions: SharePartitionManager | None = None
        self.log_manager: Any = None
        self.replica_manager: ReplicaManager | None = None
        self.socket_server: SocketServer | None = None
        self.metadata_sync: MetadataSync | None = None
        self.acl_sync: AclSync | None = None
        """Keeps ``authorizer``'s ACLs current from the registry (only when the authorizer is enabled)."""
        self.controller: Controller | None = None
        self.services: BrokerServices | None = None
        self.faults = FaultInjector(self.broker_id)
        """Request-path fault injection (``broker.faults``; ``EmbeddedBroker.faults``)."""
        self.scram_credentials = ScramCredentialCache()
        """SCRAM credentials from ``/config/users`` (kept current by ``MetadataSync``), read by the SASL servers."""
        self.inter_broker: InterBrokerClient | None = None
        """How this broker reaches the others (inter-broker listener and its client security); set by ``start``."""
        self.schema_registry: Any = None
        """The ``broker.schema_registry.service.SchemaRegistryService`` when ``schema.registry.listeners`` is set."""
        self._executor = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix=f"broker-{self.broker_id}")
        self._state = "new"
        self._registered = False

    # -- helpers for components -----------------------------------------------------------------
    async def run_blocking(self, fn: Callable, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, functools.partial(fn, *args))

    def log_config_for(self, topic_config: Mapping[str, str]):
        return self.default_log_config.with_topic_overrides(topic_config)

    @property
    def stopping(self) -> bool:
        return self._state in ("stopping", "stopped")

    @property
    def bound_ports(self) -> dict[str, int]:
        return {} if self.socket_server is None else {n: a[1] for n, a in self.socket_server.bound.items()}

    def endpoints(self) -> tuple[str, ...]:
        """Advertised endpoints, with the real port of listeners configured with port 0."""
        out = []
        bound = self.bound_ports
        for lst in self.config.advertised_listeners:
            port = lst.port or bound.get(lst.name, 0)
            host = f"[{lst.host}]" if ":" in lst.host else lst.host
            out.append(f"{lst.name}://{host}:{port}")
        return tuple(out)

    @property
    def bootstrap_server(self) -> str:
        return self.endpoints()[0].split("://", 1)[1]

    @property
    def schema_registry_urls(self) -> list[str]:
        """The Schema Registry's URLs with their bound ports (``[]`` without ``schema.registry.listeners``)."""
        return [] if self.schema_registry is None else self.schema_registry.urls

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self, timeout_s: float = 60.0) -> None:
        if self._state != "new":
            raise RuntimeError(f"broker {self.broker_id} cannot start: it is {self._state}")
        self._state = "starting"
        try:
            await asyncio.wait_for(self._start(), timeout_s)
        except BaseException:
            log.error("broker %d failed to start; undoing", self.broker_id)
            await self.stop()
            raise
        self._state = "serving"
        assert self.registry is not None  # connected by _start
        log.info(
            "broker %d serving on %s (cluster %s, %s event loop)",
            self.broker_id,
            ", ".join(self.endpoints()),
            self.registry.cluster_id,
            loop_name(asyncio.get_running_loop()),
        )

    async def _start(self) -> None:
        from .cluster.controller import Controller
        from .log import LogManager
        from .security.listener_security import listener_securities

        cfg = self.config
        log.debug("broker %d configuration: %s", self.broker_id, cfg.redacted())
        # TLS contexts, JAAS users and inter-broker credentials first: a bad store fails the start at once
        securities = listener_securities(cfg, scram_credential=self.scram_credentials.lookup)
        self.inter_broker = InterBrokerClient.from_config(cfg)
        if cfg["schema.registry.listeners"]:  # its listeners, TLS context and users checked now too
            from .schema_registry.service import SchemaRegistryService

            self.schema_registry = SchemaRegistryService(self)
        dirs = [Path(d) for d in cfg.log_dirs]
        self.log_manager = LogManager(
            dirs,
            self.default_log_config,
            recovery_threads=cfg["num.recovery.threads.per.data.dir"],
            time=self.clock,
        )
        await self.run_blocking(self.log_manager.load)
        self.log_manager.start()
        if self.registry is None:
            self.registry = make_registry(cfg)
        registry = self.registry
        connect_timeout_ms = cfg["zookeeper.connection.timeout.ms"] or cfg["zookeeper.session.timeout.ms"]
        await self.run_blocking(registry.start, connect_timeout_ms / 1000)
        self.replica_manager = ReplicaManager(
            self.broker_id,
            self.log_manager,
            self.metadata,
            metrics=self.metrics,
            config=cfg,
            registry=registry,
            run_blocking=self.run_blocking,
        )
        self.replica_manager.start()
        self.topic_admin = TopicAdmin(cfg, self.metadata, registry, self.log_config_for, self.run_blocking)
        self.controller = Controller(self.broker_id, registry, self.run_blocking, cfg, metadata=self.metadata)
        self.group_coordinator = GroupCoordinator(
            self.broker_id, cfg, self.metadata, self.replica_manager, self.topic_admin, clock=self.clock
        )
        self.group_coordinator.use_share_persister(lambda: getattr(self.services, "share_persister", None))
        self.group_coordinator.use_group_configs(lambda: getattr(self.services, "group_configs", None))
        self.group_coordinator.start()
        self.txn_coordinator = TransactionCoordinator(
            self.broker_id,
            cfg,
            self.metadata,
            self.replica_manager,
            self.topic_admin,
            self.producer_ids,
            clock=self.clock,
        )
        self.txn_coordinator.markers.inter_broker = self.inter_broker
        self.txn_coordinator.start()
        self.share = share = ShareServices(self)
        self.share_coordinator, self.share_persister = share.coordinator, share.persister
        self.share_partitions = share.partitions
        share.start()
        self.group_configs = GroupConfigs(cfg, registry, self.run_blocking)
        self.services = BrokerServices(
            broker_id=self.broker_id,
            config=cfg,
            metadata=self.metadata,
            replica_manager=self.replica_manager,
            topic_admin=self.topic_admin,
            producer_ids=self.producer_ids,
            registry=registry,
            handlers=self.handlers,
            log_config_for=self.log_config_for,
            run_blocking=self.run_blocking,
            is_stopping=lambda: self.stopping,
            group_coordinator=self.group_coordinator,
            controller=self.controller,
            metrics=self.metrics,
            txn_coordinator=self.txn_coordinator,
            share_coordinator=self.share_coordinator,
            share_persister=self.share_persister,
            group_configs=self.group_configs,
            authorizer=self.authorizer,
            quotas=self.quotas,
            telemetry=self.telemetry,
            fetch_sessions=self.fetch_sessions,
            share_partitions=self.share_partitions,
            faults=self.faults,
        )
        self.group_configs.start()  # the groups' own configs, followed from the registry
        if self.authorizer.enabled:  # every ACL in the cache before the first request can be authorized
            self.acl_sync = AclSync(registry, self.authorizer, self.run_blocking)
            self.acl_sync.start()
            await self.acl_sync.ready.wait()
        self.socket_server = SocketServer(cfg, self.handlers, self.services, securities)
        await self.socket_server.start()
        self.faults.bind(asyncio.get_running_loop(), self._client_connections, cfg["kafkalog.fault.injection.listener"])
        self._serve_metrics()
        self.metadata_sync = MetadataSync(
            self.broker_id,
            registry,
            self.metadata,
            self.replica_manager,
            self.log_config_for,
            self.run_blocking,
            scram_credentials=self.scram_credentials,
            quotas=self.quotas,
        )
        self.metadata_sync.start()
        await self.metadata_sync.ready.wait()
        self.client_metrics_sync = ClientMetricsSync(registry, self.telemetry, self.run_blocking)
        self.client_metrics_sync.start()
        host, port = self.bootstrap_server.rsplit(":", 1)
        protocols = {lst.name: cfg.security_protocol(lst.name) for lst in cfg.advertised_listeners}
        info = BrokerInfo(self.broker_id, host.strip("[]"), int(port), cfg["broker.rack"], self.endpoints(), protocols)
        await self.run_blocking(registry.register_broker, info, self._registration_record())
        self._registered = True
        while self.broker_id not in self.metadata.brokers:
            await asyncio.sleep(0.005)
        self.controller.start()
        if self.schema_registry is not None:  # a client of this broker: started last, ready in the background
            await self.schema_registry.start()

    async def _controlled_shutdown(self) -> None:
        """Ask the controller to move this broker's leaderships away (``broker.cluster.controlled_shutdown``)."""
        from .cluster.controlled_shutdown import controlled_shutdown

        cfg = self.config
        try:
            await controlled_shutdown(
                self.broker_id,
                self.metadata,
                self.controller,
                max_retries=cfg["controlled.shutdown.max.retries"],
                backoff_s=cfg["controlled.shutdown.retry.backoff.ms"] / 1000,
                inter_broker=self.inter_broker,
            )
        except Exception:  # never keeps the broker from stopping
            log.exception("broker %d: controlled shutdown failed", self.broker_id)

    def _serve_metrics(self) -> None:
        """Register the scrape-time gauges and, with ``metrics.port`` >= 0, serve ``/metrics``."""
        self.metrics.watch(self._metrics_snapshot, asyncio.get_running_loop())
        port = self.config["metrics.port"]
        if port < 0:
            return
        host = self.config["metrics.host"]
        if host is None:
            host = self.config.listeners[0].host if self.config.listeners else ""
        bound = self.metrics.serve(host or "0.0.0.0", port)
        log.info("broker %d: metrics at http://%s:%d/metrics", self.broker_id, host or "0.0.0.0", bound)

    def _client_connections(self) -> list[Any]:
        """The live client connections (for ``faults.drop_connections``; event loop)."""
        server = self.socket_server
        return [] if server is None else [conn for conn, _ in server._connections.values()]

    def _metrics_snapshot(self) -> BrokerSnapshot:
        """The scrape-time figures of ``broker.metrics``, as each component reports them (event loop)."""
        services, server = self.services, self.socket_server
        if services is None or server is None:  # not started: the gauges are registered once both exist
            return BrokerSnapshot()
        return BrokerSnapshot(
            replicas=services.replica_manager.replica_figures(),
            active_controller=services.controller.is_active,
            offline_partitions=services.controller.offline_partition_count(),
            groups_by_state=services.group_coordinator.groups_by_state(),
            lag=services.group_coordinator.consumer_lag(),
            transactions_by_state=services.txn_coordinator.transactions_by_state(),
            connections=server.connection_count,
        )

    def _registration_record(self):
        """The record of this broker's ZooKeeper registrations in its first log dir (locked by the log manager)."""
        from .cluster.registration_record import RegistrationRecord
        from .log.log_manager import LOCK_FILE

        first = self.log_manager.log_dirs[0]
        return RegistrationRecord(first, lock_file=first / LOCK_FILE)

    async def stop(self) -> None:
        if self._state in ("stopping", "stopped"):
            return
        self._state = "stopping"
        if self.schema_registry is not None:  # its clients talk to this broker: first
            await self.schema_registry.stop()
        if self.replica_manager is not None:  # before the controlled shutdown takes it out of the ISRs
            await self.replica_manager.stop_following()
        if self._registered and self.config["controlled.shutdown.enable"]:
            await self._controlled_shutdown()
        if self.controller is not None:
            await self.controller.stop()
        if self.group_coordinator is not None:  # waiting JoinGroup/SyncGroup answer NOT_COORDINATOR now
            await self.group_coordinator.stop()
        if self.txn_coordinator is not None:
            await self.txn_coordinator.stop()
        if self.share is not None:  # waiting ShareFetches answer now; then persister calls answer NOT_COORDINATOR
            await self.share.stop()
        if self.replica_manager is not None:  # long polls and acks=all waits answer now, not at their timeout
            await self.replica_manager.stop()
        if self.socket_server is not None:
            await self.socket_server.stop()
        self.metrics.close()
        self.faults.close()
        if self.metadata_sync is not None:
            await self.metadata_sync.stop()
        if self.acl_sync is not None:
            await self.acl_sync.stop()
        if self.client_metrics_sync is not None:
            await self.client_metrics_sync.stop()
        if self.group_configs is not None:
            await self.group_configs.stop()
        if self.log_manager is not None:
            await self.run_blocking(self.log_manager.shutdown)
        if self.registry is not None and self._registered:
            try:
                await self.run_blocking(self.registry.deregister_broker)
            except Exception as e:  # the session may already be gone
                log.warning("broker %d: deregistering failed: %s", self.broker_id, e)
        if self.registry is not None:
            await self.run_blocking(self.registry.close)
        self._executor.shutdown(wait=False)
        self._state = "stopped"
        log.info("broker %d stopped", self.broker_id)


class EmbeddedBroker:
    """A broker on its own event-loop thread, for tests, notebooks and ``make run``.

    ``EmbeddedBroker(broker_id=0, zookeeper_connect=None, log_dir=None, clock=SYSTEM_CLOCK, **overrides)``: without
    ``zookeeper_connect`` it joins the in-process registry ``memory:default`` (brokers of one process that
    share a registry name form a cluster); without ``log_dir`` it uses a temporary directory removed on
    stop. Listens on 127.0.0.1 port 0 unless ``listeners`` is given. ``clock`` is the broker's time (a test moves
    a ``ManualClock`` by hand to expire sessions, transactions and offsets). Context manager.

    ``down()`` / ``up()`` (or ``with broker.stopped():``) take the broker off the network and back, as
    librdkafka's mock ``broker_set_down`` / ``up``: see ``down``.
    """

    def __init__(
        self,
        broker_id: int = 0,
        *,
        zookeeper_connect: str | None = None,
        log_dir: str | Path | None = None,
        clock: Clock = SYSTEM_CLOCK,
        **overrides: Any,
    ) -> None:
        self._clock = clock
        self._tmp = None
        if log_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix=f"kafkalog-broker-{broker_id}-")
            log_dir = self._tmp.name
        props = {
            "broker.id": str(broker_id),
            "listeners": "PLAINTEXT://127.0.0.1:0",
            "log.dirs": str(log_dir),
            "zookeeper.connect": zookeeper_connect or f"{MEMORY_PREFIX}default",
        }
        props.update(
            {
                (k if "." in k else k.replace("_", ".")): v
                if isinstance(v, str)
                else str(v).lower()
                if isinstance(v, bool)
                else str(v)
                for k, v in overrides.items()
            }
        )
        self.config = BrokerConfig.from_properties(props)
        self.broker: Broker | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def bootstrap_servers(self) -> str:
        assert self.broker is not None, "the broker is not started"
        return self.broker.bootstrap_server

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    @property
    def schema_registry_url(self) -> str | None:
        """The Schema Registry's URL(s), comma-joined as Confluent's clients take them (bound ports resolved);
        None without ``schema_registry_listeners``. Requests made before the registry has read its topic wait."""
        assert self.broker is not None, "the broker is not started"
        return ",".join(self.broker.schema_registry_urls) or None

    def start_schema_registry(self, listeners: str = "http://127.0.0.1:0", timeout_s: float = 60.0) -> str:
        """Serve a Schema Registry on this running broker (when it serves none yet; else keep that one), wait
        until it is ready and return its URL(s). ``listeners`` as ``schema.registry.listeners``; the other
        ``schema.registry.*`` keys come from the broker's config. Stopped with the broker."""
        broker = self.broker
        assert broker is not None, "the broker is not started"
        if broker.schema_registry is None:
            from .schema_registry.service import SchemaRegistryService

            async def start() -> None:
                service = SchemaRegistryService(broker, listeners=listeners.split(","))
                await service.start()
                broker.schema_registry = service

            self.call(start, timeout_s)
        return self.wait_schema_registry(timeout_s)

    def wait_schema_registry(self, timeout_s: float = 60.0) -> str:
        """Wait until the Schema Registry is ready (topic created and read) and return its URL; raises its
        start-up failure, or ``TimeoutError``."""
        assert self.broker is not None, "the broker is not started"
        service = self.broker.schema_registry
        if service is None:
            raise RuntimeError("this broker serves no Schema Registry (schema_registry_listeners is not set)")
        self.call(lambda: service.wait_ready(timeout_s), timeout_s + 5)
        return ",".join(service.urls)

    @property
    def faults(self) -> FaultInjector:
        """This broker's request-path fault injection (thread-safe; docs/fault-injection.md)."""
        assert self.broker is not None, "the broker is not started"
        return self.broker.faults

    def call(self, fn: Callable[[], Any], timeout_s: float = 30.0) -> Any:
        """Run ``fn()`` on the broker's loop (a coroutine function is awaited) and return its result."""

        async def run():
            result = fn()
            return await result if asyncio.iscoroutine(result) else result

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout_s)

    def start(self, timeout_s: float = 60.0) -> EmbeddedBroker:
        started: concurrent.futures.Future[None] = concurrent.futures.Future()

        def main() -> None:
            loop = new_event_loop(self.config["event.loop"])
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self.broker = Broker(self.config, clock=self._clock)
                loop.run_until_complete(self.broker.start(timeout_s))
            except BaseException as e:
                started.set_exception(e)
                loop.close()
                return
            started.set_result(None)
            loop.run_forever()
            loop.run_until_complete(self.broker.stop())
            loop.close()

        self._thread = threading.Thread(target=main, name=f"broker-{self.config.broker_id}", daemon=True)
        self._thread.start()
        started.result(timeout_s + 5)
        return self

    def stop(self, timeout_s: float = 30.0) -> None:
        if self._thread is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout_s)
        self._thread = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- fault injection: the broker off the network (docs/fault-injection.md, "Cluster operations") ----
    def down(self, timeout_s: float = 30.0) -> None:
        """Take the broker off the network: its listeners close and every connection to it (clients', other
        brokers' fetchers) is cut at once, requests in flight unanswered; new connections are refused. The
        broker itself keeps running with its data, its registration and its leaderships (the in-process
        registry has no session to expire, as librdkafka's mock broker down moves no leader): clients retry
        until ``up``. Returns once the listeners are closed; idempotent."""
        self.call(self._socket_server().close_listeners, timeout_s)

    def up(self, timeout_s: float = 30.0) -> None:
        """Listen again on the same ports (``bootstrap_servers`` stays valid) after ``down``; returns once new
        connections are accepted. Idempotent. An ``OSError`` names a port another process took meanwhile."""
        self.call(self._socket_server().reopen_listeners, timeout_s)

    @property
    def is_down(self) -> bool:
        """The broker is started and off the network (``down``)."""
        return not self._socket_server().listening

    @contextlib.contextmanager
    def stopped(self) -> Iterator[EmbeddedBroker]:
        """``with broker.stopped():`` the broker is down inside the block and up again after it (also on error)."""
        self.down()
        try:
            yield self
        finally:
            self.up()

    def _socket_server(self) -> SocketServer:
        if self.broker is None or self.broker.socket_server is None:
            raise RuntimeError("the broker is not started")
        return self.broker.socket_server

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
