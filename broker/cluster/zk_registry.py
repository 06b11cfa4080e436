"""ZooKeeper implementation of ``ClusterRegistry``: Kafka's znode layout over one ``ZooKeeperSession``.

Layers: ``zk_session`` (the only kazoo importer: connection, session expiry and re-establishment, watches that
survive reconnects, primitive node operations, kazoo's exceptions translated into ``zk_nodes`` errors) <-
``zk_layout`` (paths and node encodings) and ``zk_registration`` (this broker's ``/brokers/ids/<id>``) <- this
module (with its mixins ``zk_acl_store``, the ACL nodes, and ``zk_entity_configs``, the user and client quota
entity nodes; ``zk_notifications`` reads change notifications), which maps node conditions to the registry's own (``NodeExistsError`` on a topic's nodes ->
``TopicExistsError``, a lost compare-and-set -> ``StaleStateError`` ...). No kazoo name appears here, and no
kazoo exception can leave a method: what the session does not translate to a narrower condition is still a
``RegistryError``.

Threads (see ``zk_session``): every method is thread-safe and may be called from a watch callback; callbacks
run on the session's dispatcher thread (``zk-registry-dispatch``). After a session *expiry* the dispatcher
(1) re-creates this registry's broker node (the ephemeral ``/controller`` went with the old session), (2)
re-reads every watch, which delivers the current controller to ``on_controller_changed`` callbacks, (3) calls
``on_session_reestablished`` callbacks.

Requests: while the client is not connected every operation raises ``RegistryUnavailableError`` at once; a
request that gets no answer within ``request_timeout_ms`` raises it too (its effect is then unknown).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from broker.cluster import zk_layout as zl
from broker.cluster.registry import (
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
    new_cluster_id,
)
from broker.cluster.zk_acl_store import ZooKeeperAclStore
from broker.cluster.zk_entity_configs import CONFIG_WRITE_ATTEMPTS, ZooKeeperEntityConfigStore
from broker.cluster.zk_nodes import (
    BadVersionError,
    CheckOp,
    CreateOp,
    NodeExistsError,
    NoNodeError,
    SetOp,
    parse_connect_string,
)
from broker.cluster.zk_registration import BrokerRegistration
from broker.cluster.zk_session import Watcher, ZooKeeperSession

if TYPE_CHECKING:
    from broker.cluster.registration_record import RegistrationRecord

__all__ = ["ZooKeeperRegistry", "parse_connect_string"]

log = logging.getLogger(__name__)

CONFIG_CHANGES_KEPT = 100
"""Config change notifications kept under ``/config/changes``: each config write deletes older ones (Kafka
purges them after 15 minutes; brokers here only need to hear that something changed)."""


class ZooKeeperRegistry(ZooKeeperAclStore, ZooKeeperEntityConfigStore, ClusterRegistry):
    """``ClusterRegistry`` over a ZooKeeper ensemble (see the module docstring for threads and sessions).

    ``session_timeout_ms``, ``connection_timeout_ms`` and ``request_timeout_ms``: see ``ZooKeeperSession``.
    ``registration_wait_ms``: when ``/brokers/ids/<id>`` is held by another session (not the one of this
    broker's previous run named by its ``RegistrationRecord``: that node is taken over at once), wait this
    long for it to vanish before raising ``BrokerIdInUseError``.
    """

    def __init__(
        self,
        connect: str,
        *,
        session_timeout_ms: int = 6000,
        connection_timeout_ms: int | None = None,
        request_timeout_ms: int | None = None,
        registration_wait_ms: int = 0,
    ) -> None:
        self._zk = ZooKeeperSession(
            connect,
            session_timeout_ms=session_timeout_ms,
            connection_timeout_ms=connection_timeout_ms,
            request_timeout_ms=request_timeout_ms,
            on_new_session=self._on_new_session,
        )
        self.connect = connect
        self._registration = BrokerRegistration(self._zk, lambda: self.cluster_id, registration_wait_ms / 1000)
        self._cluster_id: str | None = None

    # -- lifecycle -----------------------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> None:
        if self._zk.closed:
            raise RegistryUnavailableError("registry is closed")
        if self._cluster_id is not None:
            return
        self._zk.start(timeout)
        for path in zl.PERSISTENT_PATHS:
            self._zk.ensure_path(path)
        self._null_producer_id_block()
        try:
            self._zk.create(zl.CONTROLLER_EPOCH, zl.encode_controller_epoch(0))
        except NodeExistsError:
            pass
        self._cluster_id = self._get_or_create_cluster_id()

    def _null_producer_id_block(self) -> None:
        """Earlier kafkalog versions created the persistent paths with empty data; Kafka's controller fails every
        producer id allocation on an empty ``/latest_producer_id_block`` (it parses any non-null data), so a
        cluster migrated to Kafka could not serve InitProducerId. Set it back to null (Kafka's initial state)."""
        found = self._zk.get_if_exists(zl.PRODUCER_ID_BLOCK)
        if found is not None and found[0] == b"":
            try:
                self._zk.set(zl.PRODUCER_ID_BLOCK, None, found[1].version)
            except BadVersionError:  # a Kafka controller wrote a block meanwhile
                pass

    def close(self) -> None:
        self._zk.close()  # closes the session: ephemeral nodes vanish with it
        self._registration.forget()

    def __enter__(self) -> ZooKeeperRegistry:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def cluster_id(self) -> str:
        if self._cluster_id is None:
            raise RegistryUnavailableError("registry not started")
        return self._cluster_id

    @property
    def chroot(self) -> str:
        return self._zk.chroot

    @property
    def session_id(self) -> int | None:
        """The current ZooKeeper session id, or None before the first connection."""
        return self._zk.session_id

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """(session id, password) of the current session: what a second client needs to take it over."""
        return self._zk.client_id

    @property
    def connected(self) -> bool:
        return self._zk.connected

    def _on_new_session(self) -> None:
        """The session's hook after an expiry (dispatcher thread): register the broker again."""
        self._registration.reregister_after_expiry()

    # -- brokers -------------------------------------------------------------------------------------

    def register_broker(self, info: BrokerInfo, record: RegistrationRecord | None = None) -> None:
        self._registration.register(info, record)

    def deregister_broker(self) -> None:
        self._registration.deregister()

    def live_brokers(self) -> dict[int, BrokerInfo]:
        return self._read_brokers(None)

    # -- topics --------------------------------------------------------------------------------------

    def create_topic(self, assignment: TopicAssignment, config: Mapping[str, str]) -> None:
        name = zl.check_topic(assignment.name)
        try:
            self._zk.commit(
                [
                    CreateOp(zl.topic_config_path(name), zl.encode_topic_config(config)),
                    CreateOp(zl.topic_path(name), assignment.to_json().encode()),
                ]
            )
        except NodeExistsError:
            raise TopicExistsError(name) from None

    def topics(self) -> dict[str, TopicAssignment]:
        return self._read_topics(None)

    def topic(self, name: str) -> TopicAssignment | None:
        node = self._zk.get_if_exists(zl.topic_path(zl.check_topic(name)))
        return None if node is None else TopicAssignment.from_json(name, node[0])

    def topic_config(self, name: str) -> dict[str, str]:
        node = self._zk.get_if_exists(zl.topic_config_path(zl.check_topic(name)))
        if node is None:
            if self.topic(name) is None:
                raise NoSuchTopicError(name)
            return {}
        return zl.decode_topic_config(name, node[0])

    def set_topic_config(self, name: str, config: Mapping[str, str]) -> None:
        """Write the overrides and a change notification in one transaction, checked against the assignment node.

        The config node is updated when it exists and created when it does not; when another writer creates or
        deletes it in between (the transaction then fails as a whole), the write is retried the other way.
        """
        path = zl.topic_config_path(zl.check_topic(name))
        data, change = zl.encode_topic_config(config), zl.encode_config_change(name)
        for _ in range(CONFIG_WRITE_ATTEMPTS):
            assignment = self._zk.exists(zl.topic_path(name))
            if assignment is None:
                raise NoSuchTopicError(name)
            write = SetOp(path, data) if self._zk.exists(path) is not None else CreateOp(path, data)
            try:
                self._zk.commit(
                    [
                        CheckOp(zl.topic_path(name), assignment.version),
                        write,
                        CreateOp(zl.CONFIG_CHANGE_PREFIX, change, sequential=True),
                    ]
                )
                self._purge_config_changes()
                return
            except (NodeExistsError, NoNodeError, BadVersionError) as exc:
                # the config node was created or deleted concurrently, or the assignment changed or went (or a
                # parent of the new nodes is missing): look again
                log.debug("set_topic_config(%r): %s; retrying", name, exc)
                if isinstance(exc, NoNodeError) and exc.path in (path, zl.CONFIG_CHANGE_PREFIX):
                    self._zk.ensure_path(exc.path.rsplit("/", 1)[0])
        raise StaleStateError(
            f"topic {name!r}: config node kept changing; gave up after {CONFIG_WRITE_ATTEMPTS} attempts"
        )

    def broker_config(self, entity: str) -> dict[str, str]:
        path = zl.broker_config_path(entity)
        node = self._zk.get_if_exists(path)
        return {} if node is None else zl.decode_entity_config(path, node[0])

    def set_broker_config(self, entity: str, config: Mapping[str, str]) -> None:
        """Write ``/config/brokers/<entity>`` (created when missing) and the change notification in one transaction."""
        path = zl.broker_config_path(entity)
        data, change = zl.encode_topic_config(config), zl.encode_config_change(entity, "brokers")
        for _ in range(CONFIG_WRITE_ATTEMPTS):
            write = SetOp(path, data) if self._zk.exists(path) is not None else CreateOp(path, data)
            try:
                self._zk.commit([write, CreateOp(zl.CONFIG_CHANGE_PREFIX, change, sequential=True)])
                self._purge_config_changes()
                return
            except (NodeExistsError, NoNodeError) as exc:
                log.debug("set_broker_config(%r): %s; retrying", entity, exc)
                if isinstance(exc, NoNodeError) and exc.path in (path, zl.CONFIG_CHANGE_PREFIX):
                    self._zk.ensure_path(exc.path.rsplit("/", 1)[0])
        raise StaleStateError(f"broker config {entity!r}: node kept changing; gave up after {CONFIG_WRITE_ATTEMPTS}")

    def _purge_config_changes(self) -> None:
        """Delete all but the newest ``CONFIG_CHANGES_KEPT`` notifications (sequence order; a concurrent purge's
        deletions are fine)."""
        try:
            children = sorted(self._zk.children(zl.CONFIG_CHANGES))
            for child in children[: max(0, len(children) - CONFIG_CHANGES_KEPT)]:
                try:
                    self._zk.delete(f"{zl.CONFIG_CHANGES}/{child}")
                except NoNodeError:
                    pass
        except RegistryError as exc:  # the write itself succeeded; the next one purges
            log.debug("purging config change notifications: %s", exc)

    def add_partitions(self, name: str, new: Mapping[int, tuple[int, ...]]) -> TopicAssignment:
        path = zl.topic_path(zl.check_topic(name))
        node = self._zk.get_if_exists(path)
        if node is None:
            raise NoSuchTopicError(name)
        current = TopicAssignment.from_json(name, node[0])
        expected = list(range(len(current.partitions), len(current.partitions) + len(new)))
        if not new or sorted(new) != expected:
            raise ValueError(
                f"topic {name!r} has partitions 0..{len(current.partitions) - 1}; new partition "
                f"ids must be {expected}, got {sorted(new)}"
            )
        updated = TopicAssignment(
            name, {**current.partitions, **new}, current.topic_id, current.adding_replicas, current.removing_replicas
        )
        try:
            self._zk.set(path, updated.to_json().encode(), version=node[1].version)
        except BadVersionError:
            raise StaleStateError(f"assignment of topic {name!r} changed concurrently") from None
        except NoNodeError:
            raise NoSuchTopicError(name) from None
        return updated

    def replace_assignment(self, current: TopicAssignment, new: TopicAssignment) -> TopicAssignment:
        zl.check_replacement(current, new)
        path = zl.topic_path(zl.check_topic(current.name))
        node = self._zk.get_if_exists(path)
        if node is None:
            raise NoSuchTopicError(current.name)
        if TopicAssignment.from_json(current.name, node[0]) != current:
            raise StaleStateError(f"assignment of topic {current.name!r} changed concurrently")
        try:
            self._zk.set(path, new.to_json().encode(), version=node[1].version)
        except BadVersionError:
            raise StaleStateError(f"assignment of topic {current.name!r} changed concurrently") from None
        except NoNodeError:
            raise NoSuchTopicError(current.name) from None
        return new

    def mark_topic_for_deletion(self, name: str) -> None:
        if self.topic(zl.check_topic(name)) is None:
            raise NoSuchTopicError(name)
        try:
            self._zk.create(zl.deletion_path(name))
        except NodeExistsError:
            pass

    def pending_topic_deletions(self) -> list[str]:
        return self._read_deletions(None)

    def remove_topic(self, name: str) -> None:
        zl.check_topic(name)
        self._zk.delete_tree(zl.topic_path(name))
        self._zk.delete_tree(zl.topic_config_path(name))
        self._zk.delete_tree(zl.deletion_path(name))

    # -- partition state -----------------------------------------------------------------------------

    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        return self._read_partition_states(zl.check_topic(topic), None)

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        path = zl.partition_state_path(zl.check_topic(topic), partition)
        node = self._zk.get_if_exists(path)
        return None if node is None else PartitionState.from_json(node[0], node[1].version, what=path)

    def create_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        zl.check_topic(topic)
        for path in (zl.partitions_path(topic), zl.partition_path(topic, partition)):
            try:
                self._zk.create(path)
            except NodeExistsError:
                pass
            except NoNodeError:
                raise NoSuchTopicError(topic) from None
        try:
            self._zk.create(zl.partition_state_path(topic, partition), state.to_json().encode())
        except NodeExistsError:
            raise StaleStateError(f"partition state of {topic}-{partition} already exists") from None
        except NoNodeError:
            raise NoSuchTopicError(topic) from None
        return _with_version(state, 0)

    def update_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        path = zl.partition_state_path(zl.check_topic(topic), partition)
        try:
            stat = self._zk.set(path, state.to_json().encode(), version=state.zk_version)
        except BadVersionError:
            raise StaleStateError(
                f"partition state of {topic}-{partition} moved past version {state.zk_version}"
            ) from None
        except NoNodeError:
            raise StaleStateError(f"partition state of {topic}-{partition} does not exist") from None
        return _with_version(state, stat.version)

    # -- controller ----------------------------------------------------------------------------------

    def try_become_controller(self, broker_id: int) -> int | None:
        node = zl.encode_controller(broker_id)
        for _ in range(10):
            holder = self._zk.exists(zl.CONTROLLER)
            if holder is not None:
                return self.controller_epoch() if holder.ephemeral_owner == self._zk.session_id else None
            epoch_node = self._zk.get_if_exists(zl.CONTROLLER_EPOCH)
            if epoch_node is None:
                try:
                    self._zk.create(zl.CONTROLLER_EPOCH, zl.encode_controller_epoch(0))
                except NodeExistsError:
                    pass
                continue
            epoch = zl.decode_controller_epoch(epoch_node[0]) + 1
            try:
                self._zk.commit(
                    [
                        CreateOp(zl.CONTROLLER, node, ephemeral=True),
                        SetOp(zl.CONTROLLER_EPOCH, zl.encode_controller_epoch(epoch), epoch_node[1].version),
                    ]
                )
            except NodeExistsError:
                return None
            except BadVersionError:
                continue  # another election bumped the epoch in between: look again
            log.info("broker %d became controller with epoch %d", broker_id, epoch)
            return epoch
        raise StaleStateError("could not increment /controller_epoch: too many concurrent elections")

    def controller_id(self) -> int | None:
        return self._read_controller(None)

    def controller_epoch(self) -> int:
        node = self._zk.get_if_exists(zl.CONTROLLER_EPOCH)
        return 0 if node is None else zl.decode_controller_epoch(node[0])

    def resign_controller(self) -> None:
        self._zk.delete_if_owned_by(zl.CONTROLLER, self._zk.session_id)

    # -- watches -------------------------------------------------------------------------------------

    def on_brokers_changed(self, callback) -> Subscription:
        return self._zk.watch("brokers", self._read_brokers, callback)

    def on_topics_changed(self, callback) -> Subscription:
        return self._zk.watch("topics", self._read_topics, callback)

    def on_topic_deletions(self, callback) -> Subscription:
        return self._zk.watch("topic-deletions", self._read_deletions, callback)

    def on_partition_states_changed(self, topic: str, callback) -> Subscription:
        zl.check_topic(topic)
        return self._zk.watch(f"partition-states:{topic}", lambda w: self._read_partition_states(topic, w), callback)

    def on_controller_changed(self, callback) -> Subscription:
        return self._zk.watch("controller", self._read_controller, callback)

    def on_config_changes(self, callback) -> Subscription:
        return self._zk.watch("config-changes", lambda w: len(self._zk.children(zl.CONFIG_CHANGES, w)), callback)

    def on_session_reestablished(self, callback) -> Subscription:
        return self._zk.on_session_reestablished(callback)

    # -- consumer offsets ----------------------------------------------------------------------------

    def commit_consumer_offset(self, group: str, topic: str, partition: int, offset: int) -> None:
        path = zl.consumer_offset_path(group, topic, partition)
        data = zl.encode_offset(offset)
        try:
            self._zk.set(path, data)
        except NoNodeError:
            self._zk.ensure_path(path.rsplit("/", 1)[0])
            try:
                self._zk.create(path, data)
            except NodeExistsError:
                self._zk.set(path, data)

    def fetch_consumer_offset(self, group: str, topic: str, partition: int) -> int | None:
        path = zl.consumer_offset_path(group, topic, partition)
        node = self._zk.get_if_exists(path)
        return None if node is None else zl.decode_offset(node[0], what=f"{self.chroot}{path}")

    # -- readers (watch=None: plain read; else the watcher is armed on every node read) ---------------

    def _read_brokers(self, watch: Watcher | None) -> dict[int, BrokerInfo]:
        brokers = {}
        for child in self._zk.children(zl.BROKER_IDS, watch):
            node = self._zk.get_if_exists(zl.broker_path(int(child)))
            if node is not None:
                brokers[int(child)] = BrokerInfo.from_json(int(child), node[0])
        return dict(sorted(brokers.items()))

    def _read_topics(self, watch: Watcher | None) -> dict[str, TopicAssignment]:
        topics = {}
        for name in sorted(self._zk.children(zl.TOPICS, watch)):
            try:
                data, _ = self._zk.get(zl.topic_path(name), watch)
            except NoNodeError:
                continue
            topics[name] = TopicAssignment.from_json(name, data)
        return topics

    def _read_deletions(self, watch: Watcher | None) -> list[str]:
        return sorted(self._zk.children(zl.DELETE_TOPICS, watch))

    def _read_partition_states(self, topic: str, watch: Watcher | None) -> dict[int, PartitionState]:
        base = zl.partitions_path(topic)
        try:
            children = self._zk.children(base, watch)
        except NoNodeError:
            if watch is not None and self._zk.exists(base, watch) is not None:
                return self._read_partition_states(topic, watch)  # created in between
            return {}
        states = {}
        for child in children:
            if not child.isdigit():
                continue
            path = zl.partition_state_path(topic, int(child))
            node = self._zk.get_if_exists(path, watch)
            if node is not None:
                states[int(child)] = PartitionState.from_json(node[0], node[1].version, what=path)
        return dict(sorted(states.items()))

    def _read_controller(self, watch: Watcher | None) -> int | None:
        node = self._zk.get_if_exists(zl.CONTROLLER, watch)
        return None if node is None else zl.decode_controller(node[0])

    def _get_or_create_cluster_id(self) -> str:
        for _ in range(3):
            node = self._zk.get_if_exists(zl.CLUSTER_ID)
            if node is None:
                candidate = new_cluster_id()
                try:
                    self._zk.create(zl.CLUSTER_ID, zl.encode_cluster_id(candidate))
                    return candidate
                except NodeExistsError:
                    continue
            return zl.decode_cluster_id(node[0], what=f"{self.chroot}{zl.CLUSTER_ID}")
        raise RegistryUnavailableError("/cluster/id kept changing while being read")


def _with_version(state: PartitionState, version: int) -> PartitionState:
    return PartitionState(state.leader, state.leader_epoch, state.isr, state.controller_epoch, version)
