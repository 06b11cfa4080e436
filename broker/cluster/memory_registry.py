"""An in-process ``ClusterRegistry``: the cluster state of brokers that share one Python process.

``MemoryRegistryStore`` holds the state (what ZooKeeper holds for ``ZooKeeperRegistry``); every broker
gets its own ``MemoryRegistry`` view of one store, so several in-process brokers form a cluster, with
ephemeral registrations (broker node, ``/controller``) released when a view closes, as a ZooKeeper
session's are. Used by ``EmbeddedBroker`` when no ``zookeeper.connect`` is given and by handler tests;
multi-process clusters use ZooKeeper.

Contract: as ``ClusterRegistry`` (thread-safe; callbacks on one dispatcher thread per view, in order,
never under the store lock; initial snapshot on registration).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from spark_kafkalog.security.acl import AccessControlEntry, PatternType, ResourcePattern

from .client_metrics_entities import client_metrics_entity_path
from .group_config_entities import group_entity_path
from .quota_entities import DEFAULT_ENTITY, USER, QuotaEntity, check_quota_entity, quota_entity_path
from .registry import (
    BrokerIdInUseError,
    BrokerInfo,
    ClusterRegistry,
    NoSuchTopicError,
    PartitionState,
    RegistryUnavailableError,
    StaleStateError,
    Subscription,
    TopicAssignment,
    TopicExistsError,
    new_cluster_id,
)
from .zk_layout import (
    ACL_CHANGE_EXPIRY_S,
    acl_path,
    apply_config_updates,
    broker_config_path,
    consumer_offset_path,
    sanitize_entity_name,
    user_config_path,
)
from .zk_layout import check_replacement as _check_replacement

if TYPE_CHECKING:
    from .registration_record import RegistrationRecord

log = logging.getLogger("kafkalog.registry")

CONFIG_CHANGES_KEPT = 100
"""Change notifications kept, as ``ZooKeeperRegistry`` keeps them under ``/config/changes``."""


class MemoryRegistryStore:
    """The shared state; ``view()`` returns a new registry (one per broker)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.cluster_id = new_cluster_id()
        self.brokers: dict[int, tuple[BrokerInfo, MemoryRegistry]] = {}
        self.topics: dict[str, TopicAssignment] = {}
        self.configs: dict[str, dict[str, str]] = {}
        self.broker_configs: dict[str, dict[str, str]] = {}
        self.config_changes = 0
        self.change_log: list[tuple[int, str]] = []  # (sequence, entity path) of the newest notifications
        self.user_configs: dict[str, dict[str, str]] = {}
        self.quota_configs: dict[QuotaEntity, dict[str, str]] = {}  # client-id and user/client-id entities
        self.client_metrics_configs: dict[str, dict[str, str]] = {}  # KIP-714 subscriptions by name
        self.group_configs: dict[str, dict[str, str]] = {}  # GROUP config resources by group id
        self.states: dict[str, dict[int, PartitionState]] = {}
        self.deletions: set[str] = set()
        self.controller: tuple[int, MemoryRegistry] | None = None
        self.controller_epoch = 0
        self.consumer_offsets: dict[tuple[str, str, int], int] = {}
        self.views: list[MemoryRegistry] = []
        self.acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        # per change directory (extended?): (sequence, pattern, monotonic time) of the notifications kept, and
        # the next sequence number; notifications expire after ACL_CHANGE_EXPIRY_S, as Kafka's do
        self.acl_changes: dict[bool, list[tuple[int, ResourcePattern, float]]] = {False: [], True: []}
        self.acl_change_next: dict[bool, int] = {False: 0, True: 0}

    def view(self) -> MemoryRegistry:
        return MemoryRegistry(self)

    def config_changed(self, entity_path: str) -> None:
        """Leave a change notification (with the lock held), as ``/config/changes`` does, and notify the views."""
        self.change_log.append((self.config_changes, entity_path))
        del self.change_log[:-CONFIG_CHANGES_KEPT]
        self.config_changes += 1
        self.changed("configs")

    def acl_changed(self, pattern: ResourcePattern) -> None:
        """Leave an ACL change notification (with the lock held), purge expired ones, and notify the views."""
        extended = pattern.pattern_type is not PatternType.LITERAL
        now = time.monotonic()
        kept = self.acl_changes[extended]
        kept.append((self.acl_change_next[extended], pattern, now))
        self.acl_change_next[extended] += 1
        kept[:] = [c for c in kept if now - c[2] < ACL_CHANGE_EXPIRY_S]
        self.changed("acls")

    def changed(self, what: str, topic: str | None = None) -> None:
        """Notify every open view (called with the lock held; deliveries happen on each view's thread)."""
        for v in list(self.views):
            v._fire(what, topic)


class MemoryRegistry(ClusterRegistry):
    def __init__(self, store: MemoryRegistryStore | None = None) -> None:
        self.store = store or MemoryRegistryStore()
        self._watches: list[tuple[str, str | None, Callable, Subscription]] = []
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._open = False
        self._broker_id: int | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> None:
        with self.store.lock:
            if self._open:
                return
            self._open = True
            self.store.views.append(self)
        self._thread = threading.Thread(target=self._dispatch, name="memory-registry", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with self.store.lock:
            if not self._open:
                return
            self.deregister_broker()
            self.resign_controller()
            self._open = False
            self.store.views.remove(self)
        self._queue.put(None)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _check(self) -> None:
        if not self._open:
            raise RegistryUnavailableError("the registry is closed")

    @property
    def cluster_id(self) -> str:
        return self.store.cluster_id

    # -- brokers --------------------------------------------------------------------------------
    def register_broker(self, info: BrokerInfo, record: RegistrationRecord | None = None) -> None:
        """As ``ClusterRegistry``; ``record`` is not used: registrations live in this process's memory, so
        none can outlive a crashed broker."""
        s = self.store
        with s.lock:
            self._check()
            held = s.brokers.get(info.broker_id)
            if held is not None and held[1] is not self:
                raise BrokerIdInUseError(info.broker_id, held[0].address)
            s.brokers[info.broker_id] = (info, self)
            self._broker_id = info.broker_id
            s.changed("brokers")

    def deregister_broker(self) -> None:
        s = self.store
        with s.lock:
            if self._broker_id is not None and s.brokers.get(self._broker_id, (None, None))[1] is self:
                del s.brokers[self._broker_id]
                s.changed("brokers")
            self._broker_id = None

    def live_brokers(self) -> dict[int, BrokerInfo]:
        with self.store.lock:
            self._check()
            return {b: info for b, (info, _) in self.store.brokers.items()}

    # -- topics ---------------------------------------------------------------------------------
    def create_topic(self, assignment: TopicAssignment, config: Mapping[str, str]) -> None:
        s = self.store
        with s.lock:
            self._check()
            if assignment.name in s.topics or assignment.name in s.configs:
                raise TopicExistsError(assignment.name)
            s.configs[assignment.name] = dict(config)
            s.topics[assignment.name] = assignment
            s.changed("topics")

    def topics(self) -> dict[str, TopicAssignment]:
        with self.store.lock:
            self._check()
            return dict(self.store.topics)

    def topic(self, name: str) -> TopicAssignment | None:
        with self.store.lock:
            self._check()
            return self.store.topics.get(name)

    def topic_config(self, name: str) -> dict[str, str]:
        with self.store.lock:
            self._check()
            if name not in self.store.topics:
                raise NoSuchTopicError(name)
            return dict(self.store.configs.get(name, {}))

    def set_topic_config(self, name: str, config: Mapping[str, str]) -> None:
        s = self.store
        with s.lock:
            self._check()
            if name not in s.topics:
                raise NoSuchTopicError(name)
            s.configs[name] = dict(config)
            s.changed("topics")
            s.config_changed(f"topics/{name}")

    def broker_config(self, entity: str) -> dict[str, str]:
        broker_config_path(entity)
        with self.store.lock:
            self._check()
            return dict(self.store.broker_configs.get(entity, {}))

    def set_broker_config(self, entity: str, config: Mapping[str, str]) -> None:
        broker_config_path(entity)
        s = self.store
        with s.lock:
            self._check()
            s.broker_configs[entity] = dict(config)
            s.config_changed(f"brokers/{entity}")

    def add_partitions(self, name: str, new: Mapping[int, tuple[int, ...]]) -> TopicAssignment:
        s = self.store
        with s.lock:
            self._check()
            t = s.topics.get(name)
            if t is None:
                raise NoSuchTopicError(name)
            n = len(t.partitions)
            if sorted(new) != list(range(n, n + len(new))):
                raise ValueError(f"new partitions {sorted(new)} of {name!r} must continue from {n}")
            updated = TopicAssignment(
                name,
                {**t.partitions, **{p: tuple(r) for p, r in new.items()}},
                t.topic_id,
                t.adding_replicas,
                t.removing_replicas,
            )
            s.topics[name] = updated
            s.changed("topics")
            return updated

    def replace_assignment(self, current: TopicAssignment, new: TopicAssignment) -> TopicAssignment:
        _check_replacement(current, new)
        s = self.store
        with s.lock:
            self._check()
            held = s.topics.get(current.name)
            if held is None:
                raise NoSuchTopicError(current.name)
            if held != current:
                raise StaleStateError(f"assignment of topic {current.name!r} changed concurrently")
            s.topics[current.name] = new
            s.changed("topics")
            return new

    def mark_topic_for_deletion(self, name: str) -> None:
        s = self.store
        with s.lock:
            self._check()
            if name not in s.topics:
                raise NoSuchTopicError(name)
            if name not in s.deletions:
                s.deletions.add(name)
                s.changed("deletions")

    def pending_topic_deletions(self) -> list[str]:
        with self.store.lock:
            self._check()
            return sorted(self.store.deletions)

    def remove_topic(self, name: str) -> None:
        s = self.store
        with s.lock:
            self._check()
            existed = s.topics.pop(name, None) is not None
            s.configs.pop(name, None)
            s.states.pop(name, None)
            was_pending = name in s.deletions
            s.deletions.discard(name)
            if existed:
                s.changed("topics")
                s.changed("states", name)
            if was_pending:
                s.changed("deletions")

    # -- partition state ------------------------------------------------------------------------
    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        with self.store.lock:
            self._check()
            return dict(self.store.states.get(topic, {}))

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        with self.store.lock:
            self._check()
            return self.store.states.get(topic, {}).get(partition)

    def create_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        s = self.store
        with s.lock:
            self._check()
            if topic not in s.topics:
                raise NoSuchTopicError(topic)
            states = s.states.setdefault(topic, {})
            if partition in states:
                raise StaleStateError(f"state of {topic}-{partition} already exists")
            new = _with_version(state, 0)
            states[partition] = new
            s.changed("states", topic)
            return new

    def update_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        s = self.store
        with s.lock:
            self._check()
            cur = s.states.get(topic, {}).get(partition)
            if cur is None or cur.zk_version != state.zk_version:
                raise StaleStateError(
                    f"state of {topic}-{partition} moved (expected version {state.zk_version}, "
                    f"found {None if cur is None else cur.zk_version})"
                )
            new = _with_version(state, cur.zk_version + 1)
            s.states[topic][partition] = new
            s.changed("states", topic)
            return new

    # -- controller -----------------------------------------------------------------------------
    def try_become_controller(self, broker_id: int) -> int | None:
        s = self.store
        with s.lock:
            self._check()
            if s.controller is not None:
                return None
            s.controller_epoch += 1
            s.controller = (broker_id, self)
            s.changed("controller")
            return s.controller_epoch

    def controller_id(self) -> int | None:
        with self.store.lock:
            self._check()
            return None if self.store.controller is None else self.store.controller[0]

    def controller_epoch(self) -> int:
        with self.store.lock:
            return self.store.controller_epoch

    def resign_controller(self) -> None:
        s = self.store
        with s.lock:
            if s.controller is not None and s.controller[1] is self:
                s.controller = None
                s.changed("controller")

    # -- consumer offsets -----------------------------------------------------------------------
    def commit_consumer_offset(self, group: str, topic: str, partition: int, offset: int) -> None:
        consumer_offset_path(group, topic, partition)  # the names ZooKeeper's layout refuses are refused here too
        with self.store.lock:
            self._check()
            self.store.consumer_offsets[(group, topic, partition)] = offset

    def fetch_consumer_offset(self, group: str, topic: str, partition: int) -> int | None:
        consumer_offset_path(group, topic, partition)
        with self.store.lock:
            self._check()
            return self.store.consumer_offsets.get((group, topic, partition))

    # -- user entities --------------------------------------------------------------------------
    def user_config(self, user: str) -> dict[str, str]:
        user_config_path(user)
        with self.store.lock:
            self._check()
            return dict(self.store.user_configs.get(user, {}))

    def user_configs(self) -> dict[str, dict[str, str]]:
        with self.store.lock:
            self._check()
            return {u: dict(c) for u, c in sorted(self.store.user_configs.items())}

    def alter_user_config(self, user: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        user_config_path(user)
        s = self.store
        with s.lock:
            self._check()
            config = apply_config_updates(s.user_configs.get(user, {}), updates)
            s.user_configs[user] = config
            s.config_changed(f"users/{sanitize_entity_name(user)}")
            return dict(config)

    # -- client quota entities (a user-only entity is the user entity above) ---------------------
    def quota_config(self, entity: QuotaEntity) -> dict[str, str]:
        entity = check_quota_entity(entity)
        with self.store.lock:
            self._check()
            return dict(self._quota_configs().get(entity, {}))

    def quota_configs(self) -> dict[QuotaEntity, dict[str, str]]:
        with self.store.lock:
            self._check()
            return {e: dict(c) for e, c in self._quota_configs().items() if c}

    def _quota_configs(self) -> dict[QuotaEntity, dict[str, str]]:
        users = {((USER, None if u == DEFAULT_ENTITY else u),): c for u, c in self.store.user_configs.items()}
        return users | self.store.quota_configs

    def alter_quota_config(self, entity: QuotaEntity, updates: Mapping[str, str | None]) -> dict[str, str]:
        entity = check_quota_entity(entity)
        if len(entity) == 1 and entity[0][0] == USER:
            return self.alter_user_config(entity[0][1] or DEFAULT_ENTITY, updates)
        s = self.store
        with s.lock:
            self._check()
            config = apply_config_updates(s.quota_configs.get(entity, {}), updates)
            s.quota_configs[entity] = config
            s.config_changed(quota_entity_path(entity))
            return dict(config)

    # -- client metrics subscriptions ---------------------------------------------------------------
    def client_metrics_config(self, name: str) -> dict[str, str]:
        client_metrics_entity_path(name)
        with self.store.lock:
            self._check()
            return dict(self.store.client_metrics_configs.get(name, {}))

    def client_metrics_configs(self) -> dict[str, dict[str, str]]:
        with self.store.lock:
            self._check()
            return {n: dict(c) for n, c in sorted(self.store.client_metrics_configs.items()) if c}

    def alter_client_metrics_config(self, name: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        entity_path = client_metrics_entity_path(name)
        s = self.store
        with s.lock:
            self._check()
            config = apply_config_updates(s.client_metrics_configs.get(name, {}), updates)
            s.client_metrics_configs[name] = config
            s.config_changed(entity_path)
            return dict(config)

    # -- group configs --------------------------------------------------------------------------------
    def group_config(self, group_id: str) -> dict[str, str]:
        group_entity_path(group_id)
        with self.store.lock:
            self._check()
            return dict(self.store.group_configs.get(group_id, {}))

    def group_configs(self) -> dict[str, dict[str, str]]:
        with self.store.lock:
            self._check()
            return {g: dict(c) for g, c in sorted(self.store.group_configs.items()) if c}

    def alter_group_config(self, group_id: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        entity_path = group_entity_path(group_id)
        s = self.store
        with s.lock:
            self._check()
            config = apply_config_updates(s.group_configs.get(group_id, {}), updates)
            s.group_configs[group_id] = config
            s.config_changed(entity_path)
            return dict(config)

    def config_changes_since(self, after: int) -> tuple[int, list[str] | None]:
        with self.store.lock:
            self._check()
            log_ = self.store.change_log
            highest = max(after, log_[-1][0]) if log_ else after
            if after < 0 or (log_ and log_[0][0] > after + 1):
                return highest, None
            return highest, [path for seq, path in log_ if seq > after]

    # -- ACLs -----------------------------------------------------------------------------------
    def all_acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        with self.store.lock:
            self._check()
            return dict(self.store.acls)

    def resource_acls(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        acl_path(pattern)  # the patterns ZooKeeper's layout refuses are refused here too
        with self.store.lock:
            self._check()
            return self.store.acls.get(pattern, frozenset())

    def update_resource_acls(
        self,
        pattern: ResourcePattern,
        update: Callable[[frozenset[AccessControlEntry]], frozenset[AccessControlEntry]],
    ) -> frozenset[AccessControlEntry]:
        acl_path(pattern)
        s = self.store
        with s.lock:  # no concurrent writer to lose against: one read-modify-write under the lock
            self._check()
            current = s.acls.get(pattern, frozenset())
            new = frozenset(update(current))
            if new == current:
                return current
            if new:
                s.acls[pattern] = new
            else:
                s.acls.pop(pattern, None)
            s.acl_changed(pattern)
            return new

    def acl_changes_since(self, after: int, extended: bool) -> tuple[int, list[ResourcePattern] | None]:
        with self.store.lock:
            self._check()
            kept, following = self.store.acl_changes[extended], self.store.acl_change_next[extended]
            highest = max(after, following - 1)
            first_kept = kept[0][0] if kept else following
            if after < 0 or first_kept > after + 1:
                return highest, None
            return highest, [pattern for seq, pattern, _ in kept if seq > after]

    def on_acl_changes(self, callback: Callable[[], None]) -> Subscription:
        return self._watch("acls", None, lambda _counts: callback())

    # -- watches --------------------------------------------------------------------------------
    def _snapshot(self, what: str, topic: str | None) -> Any:
        s = self.store
        if what == "brokers":
            return {b: info for b, (info, _) in s.brokers.items()}
        if what == "topics":
            return dict(s.topics)
        if what == "deletions":
            return sorted(s.deletions)
        if what == "states":
            assert topic is not None, "a states watch is of one topic"
            return dict(s.states.get(topic, {}))
        if what == "controller":
            return None if s.controller is None else s.controller[0]
        if what == "configs":
            return s.config_changes
        if what == "acls":
            return dict(s.acl_change_next)
        raise AssertionError(what)

    def _watch(self, what: str, topic: str | None, callback: Callable) -> Subscription:
        sub = Subscription()
        with self.store.lock:
            self._check()
            self._watches.append((what, topic, callback, sub))
            self._queue.put((callback, sub, self._snapshot(what, topic)))
        return sub

    def _fire(self, what: str, topic: str | None) -> None:
        for w, t, cb, sub in self._watches:
            if w == what and t == topic and not sub.cancelled:
                self._queue.put((cb, sub, self._snapshot(what, topic)))

    def _dispatch(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            cb, sub, value = item
            if sub.cancelled:
                continue
            try:
                cb(value)
            except Exception:
                log.exception("registry callback %r failed", cb)

    def on_brokers_changed(self, callback) -> Subscription:
        return self._watch("brokers", None, callback)

    def on_topics_changed(self, callback) -> Subscription:
        return self._watch("topics", None, callback)

    def on_topic_deletions(self, callback) -> Subscription:
        return self._watch("deletions", None, callback)

    def on_partition_states_changed(self, topic: str, callback) -> Subscription:
        return self._watch("states", topic, callback)

    def on_controller_changed(self, callback) -> Subscription:
        return self._watch("controller", None, callback)

    def on_config_changes(self, callback) -> Subscription:
        return self._watch("configs", None, callback)

    def on_session_reestablished(self, callback) -> Subscription:
        return Subscription()  # an in-process registry has no sessions to lose


def _with_version(state: PartitionState, version: int) -> PartitionState:
    return PartitionState(state.leader, state.leader_epoch, tuple(state.isr), state.controller_epoch, version)
