"""Keeps a broker's ``MetadataCache`` and ``ReplicaManager`` in line with the cluster registry.

Registry watches (brokers, topics, each topic's partition states, controller) fire on the registry's
thread; each callback only queues an event onto the broker's event loop, where one task applies the
events in order: brokers and controller go into the cache; a new topic gets its configuration read and a
partition-state watch; a state change updates the cache and makes the replica manager open logs and take
the leader or follower role; a deleted topic leaves the cache and its local logs are deleted. The first
topics snapshot also deletes local logs of topics that no longer exist.

Config changes (a notification under ``/config/changes``, written by AlterConfigs and
IncrementalAlterConfigs on any broker) re-read this broker's dynamic broker configs (``/config/brokers/<default>``
and ``/<id>``, kept in ``dynamic_config``) and every topic's overrides; a topic whose effective ``LogConfig``
changed gets it at once (retention, segment size, cleanup policy, min.insync.replicas... of its open logs).

User entities (``/config/users/<u>``: SCRAM credentials) go into ``scram_credentials``: every user at start-up,
after a session re-establishment and whenever notifications may have been missed; otherwise only the users
named by new ``users/<sanitized user>`` notifications are re-read (as Kafka's brokers do); notifications
naming only quota entities or client metrics subscriptions (``broker.telemetry.sync`` follows those), and a change of ``/config/changes`` without a new notification (a purge), leave
topic and broker configs alone.

Client quota entities (``/config/users/<u>``, ``/config/clients/<c>``, ``/config/users/<u>/clients/<c>``) go
into ``quotas`` (the broker's ``QuotaManager``) the same way: all of them with ``replace_all`` whenever the
users are all read, and each entity named by a ``users/..``, ``clients/..`` or ``users/../clients/..``
notification with ``update_entity`` (a user entity's one read serves its credentials and its quotas). Only the
quota keys (``quota_entities.QUOTA_KEYS``) are passed on; an entity left without any gets an empty config.

``ready`` is set once the first brokers and topics snapshots, every known topic's states and the first load of
the users' credentials and the quota entities are applied.
Event-loop only, apart from the registry callbacks, which only post events.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..cluster.client_metrics_entities import parse_client_metrics_entity_path
from ..cluster.group_config_entities import parse_group_entity_path
from ..cluster.quota_entities import USER, QuotaEntity, parse_quota_entity_path, quota_keys_of
from ..cluster.registry import ClusterRegistry, NoSuchTopicError, RegistryError, TopicAssignment
from ..cluster.zk_layout import BROKER_DEFAULT_ENTITY
from ..config import BrokerConfig, ConfigError
from ..config_admin.dynamic import DEFAULT_ENTITY, DynamicBrokerConfig
from ..quotas.manager import QuotaManager
from ..security.scram_credentials import ScramCredentialCache

if TYPE_CHECKING:
    from ..log import LogConfig
    from ..replication.replica_manager import ReplicaManager
    from .cache import MetadataCache

log = logging.getLogger("kafkalog.metadata")


class MetadataSync:
    """Dependencies: the registry it follows, the cache and replica manager it updates,
    ``log_config_for(topic overrides)`` for topic configurations, and ``run_blocking`` for registry reads;
    ``scram_credentials``: the credential cache the listeners' SASL servers read (a new one when not given);
    ``quotas``: the quota manager the handlers record into (a new one when not given)."""

    def __init__(
        self,
        broker_id: int,
        registry: ClusterRegistry,
        metadata: MetadataCache,
        replica_manager: ReplicaManager,
        log_config_for: Callable[[Mapping[str, str]], LogConfig],
        run_blocking: Callable[..., Awaitable[Any]],
        scram_credentials: ScramCredentialCache | None = None,
        quotas: QuotaManager | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.quotas = QuotaManager() if quotas is None else quotas
        self.scram_credentials = ScramCredentialCache() if scram_credentials is None else scram_credentials
        self._config_change_seq = -1  # the newest config change notification applied (-1: none yet)
        self.registry = registry
        self.metadata = metadata
        self.replica_manager = replica_manager
        self._static_log_config_for = log_config_for
        self.run_blocking = run_blocking
        static = getattr(replica_manager, "config", None)
        if static is None:
            static = BrokerConfig.from_properties({"broker.id": str(broker_id)})
        self.dynamic_config = DynamicBrokerConfig(static)
        self.ready = asyncio.Event()
        self._events: asyncio.Queue = asyncio.Queue()
        self._subs: list[Any] = []
        self._state_subs: dict[str, Any] = {}
        self._assignments: dict[str, TopicAssignment] = {}
        self._configs: dict[str, dict[str, str]] = {}
        self._pending_states: set[str] = set()
        self._seen: set[str] = set()  # the kinds of update applied at least once ("brokers", "topics")
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name="metadata-sync")
        reg = self.registry
        self._subs = [
            reg.on_config_changes(self._post("configs")),
            reg.on_brokers_changed(self._post("brokers")),
            reg.on_controller_changed(self._post("controller")),
            reg.on_topics_changed(self._post("topics")),
            reg.on_session_reestablished(self._post("session")),
        ]

    async def stop(self) -> None:
        for sub in self._subs + list(self._state_subs.values()):
            sub.cancel()
        self._subs, self._state_subs = [], {}
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def _post(self, kind: str, topic: str | None = None) -> Callable[..., None]:
        loop = self._loop
        assert loop is not None, "registry callbacks are made once started"

        def callback(value: Any = None) -> None:
            try:
                loop.call_soon_threadsafe(self._events.put_nowait, (kind, topic, value))
            except RuntimeError:
                pass

        return callback

    async def _run(self) -> None:
        while True:
            kind, topic, value = await self._events.get()
            try:
                await self._apply(kind, topic, value)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("applying %s update failed", kind)
            self._check_ready()

    def _check_ready(self) -> None:
        if not self.ready.is_set() and {"brokers", "topics", "users"} <= self._seen and not self._pending_states:
            self.ready.set()

    async def _apply(self, kind: str, topic: str | None, value: Any) -> None:
        cache = self.metadata
        if kind == "brokers":
            cache.set_brokers(value)
            self._seen.add(kind)
        elif kind == "controller":
            cache.controller_id = value
        elif kind == "session":
            log.info("ZooKeeper session re-established; broker %d registered again", self.broker_id)
            await self._reload_users()
        elif kind == "topics":
            await self._topics_changed(value)
        elif kind == "configs":
            await self._configs_changed()
        elif kind == "states":
            assert topic is not None, "a states update is of one topic"
            self._pending_states.discard(topic)
            assignment = self._assignments.get(topic)
            if assignment is None:
                return
            cache.set_topic(assignment, value, self._configs.get(topic, {}))
            self.replica_manager.apply_topic(
                topic, dict(assignment.partitions), value, self.log_config_for(self._configs.get(topic, {}))
            )

    def log_config_for(self, overrides: Mapping[str, str]) -> LogConfig:
        """A topic's effective config: its overrides over the broker defaults with the dynamic ones applied."""
        if not self.dynamic_config.cluster_default and not self.dynamic_config.per_broker:
            return self._static_log_config_for(overrides)
        return self.dynamic_config.log_defaults().with_topic_overrides(overrides)

    async def _reload_users(self) -> None:
        """Every user entity's credentials into the cache (a failed read keeps the cache as it was)."""
        try:
            self.scram_credentials.replace_all(await self.run_blocking(self.registry.user_configs))
        except RegistryError as e:
            log.error("could not read the user entities (SCRAM credentials): %s", e)
        try:
            configs = await self.run_blocking(self.registry.quota_configs)
            self.quotas.replace_all({ent: q for ent, c in configs.items() if (q := quota_keys_of(c))})
        except (RegistryError, ValueError) as e:
            log.error("could not read the client quota entities: %s", e)
        finally:
            self._seen.add("users")

    async def _configs_changed(self) -> None:
        """Apply the notifications since the last one applied: the users and quota entities they name, then
        (unless they name only those) the broker's dynamic configs and the topics' overrides."""
        try:
            self._config_change_seq, paths = await self.run_blocking(
                self.registry.config_changes_since, self._config_change_seq
            )
        except RegistryError as e:
            log.error("could not read the config change notifications: %s", e)
            paths = None
        if paths is None:
            await self._reload_users()
        else:
            paths = [p for p in paths if parse_client_metrics_entity_path(p) is None]  # ClientMetricsSync's
            paths = [p for p in paths if parse_group_entity_path(p) is None]  # GroupConfigs'
            entities = [ent for p in paths if (ent := parse_quota_entity_path(p)) is not None]
            for entity in dict.fromkeys(entities):
                await self._entity_changed(entity)
            if len(entities) == len(paths):
                return  # quota entities only, or no new notification (a purge): topic and broker configs did not change
        await self._broker_and_topic_configs_changed()

    async def _entity_changed(self, entity: QuotaEntity) -> None:
        """Re-read one entity: a user's credentials and quotas, or a client-id or user/client-id entity's quotas."""
        try:
            if len(entity) == 1 and entity[0][0] == USER:
                user = entity[0][1] or BROKER_DEFAULT_ENTITY
                config = await self.run_blocking(self.registry.user_config, user)
                self.scram_credentials.update_user(user, config)
            else:
                config = await self.run_blocking(self.registry.quota_config, entity)
            self.quotas.update_entity(entity, quota_keys_of(config))
        except (RegistryError, ValueError) as e:
            log.error("could not read the config of quota entity %s: %s", entity, e)

    async def _broker_and_topic_configs_changed(self) -> None:
        reg, run = self.registry, self.run_blocking
        try:
            defaults_changed = self.dynamic_config.update(
                await run(reg.broker_config, DEFAULT_ENTITY), await run(reg.broker_config, str(self.broker_id))
            )
        except ConfigError as e:
            log.error("invalid dynamic broker config in the registry (%s); keeping the previous values", e)
            defaults_changed = False
        if "topics" not in self._seen:
            return  # the first topics snapshot reads every config
        for name in list(self._assignments):
            try:
                config = await run(reg.topic_config, name)
                self.log_config_for(config)
            except NoSuchTopicError:
                continue
            except ConfigError as e:
                log.error("topic %s has an invalid configuration (%s); keeping the previous one", name, e)
                continue
            if config == self._configs.get(name) and not defaults_changed:
                continue
            self._configs[name] = config
            if name in self.metadata.topics:
                await self._apply("states", name, dict(self.metadata.topics[name].states))
            log.info("topic %s: config now %s", name, config)

    async def _topics_changed(self, topics: dict[str, TopicAssignment]) -> None:
        first = "topics" not in self._seen
        for name in [n for n in self._assignments if n not in topics]:
            self._assignments.pop(name)
            self._configs.pop(name, None)
            self._pending_states.discard(name)
            sub = self._state_subs.pop(name, None)
            if sub is not None:
                sub.cancel()
            self.metadata.remove_topic(name)
            self.replica_manager.remove_topic(name)
            log.info("topic %s deleted", name)
        for name, assignment in topics.items():
            old = self._assignments.get(name)
            if old is not None and old.topic_id != assignment.topic_id:  # deleted and created again
                self._state_subs.pop(name).cancel()
                self.metadata.remove_topic(name)
                self.replica_manager.remove_topic(name)
                old = None
            try:
                config = await self.run_blocking(self.registry.topic_config, name)
            except NoSuchTopicError:
                continue
            try:
                self.log_config_for(config)
            except ConfigError as e:
                log.error("topic %s has an invalid configuration (%s); using the broker defaults", name, e)
                config = {}
            self._assignments[name] = assignment
            config_changed = self._configs.get(name) != config
            self._configs[name] = config
            if old is None:
                self._pending_states.add(name)
                self._state_subs[name] = self.registry.on_partition_states_changed(name, self._post("states", name))
            elif old.partitions != assignment.partitions or config_changed:
                states = self.metadata.topics[name].states if name in self.metadata.topics else {}
                await self._apply("states", name, dict(states))
        if first:
            self._seen.add("topics")
            try:
                self.replica_manager.delete_stray_logs(set(topics))
            except RegistryError as e:
                log.warning("could not check for logs of deleted topics: %s", e)
