"""ZooKeeper implementation of ``ClusterRegistry`` (the only kazoo importer of the broker).

Node layout and JSON: see ``broker.cluster.registry``. The connect string is Kafka's ``zookeeper.connect``
(``host:port[,host:port...][/chroot]``); the chroot is created on ``start`` when missing and every path is
prefixed by this module (kazoo's own chroot is not used, so one session does everything).

Threads: kazoo's connection thread reports session state to ``_on_state`` and its callback thread fires
one-shot ZooKeeper watches into ``_Watch.trigger``; both only enqueue work. One dispatcher thread
(``zk-registry-dispatch``) runs that work in order: it re-reads the watched nodes (re-arming the watches
in the same reads) and calls the user's callback with the fresh snapshot. Several triggers queued for the
same watch collapse into one re-read. No lock is held while a callback runs.

Sessions: kazoo drops every watch when the connection is lost. On reconnection with the same session the
dispatcher re-reads (and so re-arms) every watch. After a session *expiry* kazoo opens a new session; the
dispatcher then (1) re-creates this registry's ephemeral broker node, (2) forgets controllership (the
ephemeral ``/controller`` went with the old session), (3) re-reads every watch, which delivers the current
controller to ``on_controller_changed`` callbacks, (4) calls ``on_session_reestablished`` callbacks.

Registration: ``register_broker`` also watches its own ``/brokers/ids/<id>``; when the node vanishes while
the session lives (deleted by an operator or a tool), the dispatcher re-creates it with the same bytes.
With a ``RegistrationRecord`` (see ``broker.cluster.registration_record``) the nodes still owned by the
session of this broker's previous run, ``/brokers/ids/<id>`` and ``/controller``, are deleted at once by
compare-and-delete, and the record is rewritten with the current session before the node is created.
Registration, re-registration and deregistration are serialised by one lock.

Requests: while the client is not connected every operation raises ``RegistryUnavailableError`` at once;
a request that gets no answer within ``request_timeout_ms`` raises it too (its effect is then unknown, as
with any ZooKeeper connection loss).
"""

from __future__ import annotations

import functools
import json
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    BadVersionError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    OperationTimeoutError,
    RolledBackError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType
from kazoo.retry import KazooRetry

from spark_kafkalog.protocol.topic_name import validate_topic_name

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
    new_cluster_id,
)

if TYPE_CHECKING:
    from broker.cluster.registration_record import RegistrationRecord

__all__ = ["ZooKeeperRegistry", "parse_connect_string"]

log = logging.getLogger(__name__)

# Persistent paths every Kafka broker creates at start-up (KafkaZkClient.createTopLevelPaths).
PERSISTENT_PATHS = (
    "/consumers", "/brokers/ids", "/brokers/topics", "/brokers/seqid", "/config/changes", "/config/topics",
    "/config/clients", "/config/users", "/config/brokers", "/admin/delete_topics", "/isr_change_notification",
    "/latest_producer_id_block", "/log_dir_event_notification", "/cluster",
)

_UNAVAILABLE = (ConnectionLoss, SessionExpiredError, ConnectionClosedError, OperationTimeoutError,
                KazooTimeoutError)


def parse_connect_string(connect: str) -> tuple[str, str]:
    """Split ``host:port[,host:port...][/chroot]`` into (hosts, chroot); chroot is "" or "/a/b" (no trailing /)."""
    if not isinstance(connect, str) or not connect.strip():
        raise ValueError(f"zookeeper.connect is empty: {connect!r}")
    hosts, slash, chroot = connect.strip().partition("/")
    if not hosts:
        raise ValueError(f"zookeeper.connect has no host:port before the chroot: {connect!r}")
    for host in hosts.split(","):
        name, colon, port = host.strip().rpartition(":")
        if not colon or not name or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"zookeeper.connect: {host!r} is not host:port (in {connect!r})")
    chroot = ("/" + chroot).rstrip("/") if slash else ""
    if chroot and any(part in ("", ".", "..") for part in chroot.split("/")[1:]):
        raise ValueError(f"zookeeper.connect: invalid chroot {chroot!r} (in {connect!r})")
    return hosts, chroot


def _check_topic(name: str) -> str:
    """``name`` when it is a legal topic name; ``InvalidTopicNameError`` (a ValueError) otherwise."""
    return validate_topic_name(name)


def _translate_kazoo_errors(method):
    """Decorator for public methods: a kazoo error that escapes becomes a ``RegistryError`` naming the method."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except KazooException as exc:
            raise RegistryError(f"ZooKeeper at {self._hosts}{self._chroot}: {method.__name__} failed: "
                                f"{type(exc).__name__} {exc}".rstrip()) from exc
    return wrapper


class _Registration(NamedTuple):
    """What ``register_broker`` was given: kept to re-create the node with the same bytes."""

    info: BrokerInfo
    data: bytes
    record: RegistrationRecord | None


def _check_group(group: str) -> str:
    if not isinstance(group, str) or not group or "/" in group or group in (".", ".."):
        raise ValueError(f"invalid consumer group name {group!r} for a ZooKeeper path")
    return group


class _Watch:
    """One subscription: re-reads its nodes (arming one-shot watches) and delivers the snapshot."""

    def __init__(self, registry: "ZooKeeperRegistry", name: str, read: Callable[[Callable], Any],
                 callback: Callable[[Any], None]) -> None:
        self.registry = registry
        self.name = name
        self.read = read
        self.callback = callback
        self.subscription = Subscription(lambda: registry._forget_watch(self))
        self._pending = False
        self._lock = threading.Lock()

    def trigger(self, event=None) -> None:
        """Kazoo watcher (kazoo's callback thread): queue one re-read unless one is queued already."""
        if event is not None and event.type == EventType.NONE:
            return  # connection state change: everything is re-read on reconnection
        if self.subscription.cancelled:
            return
        with self._lock:
            if self._pending:
                return
            self._pending = True
        self.registry._dispatch(self.refresh)

    def refresh(self) -> None:
        """Dispatcher thread: read with watches re-armed, then deliver."""
        with self._lock:
            self._pending = False
        if self.subscription.cancelled or self.registry._closed:
            return
        try:
            value = self.read(self.trigger)
        except (RegistryUnavailableError, *_UNAVAILABLE) as exc:
            log.debug("watch %s: re-read deferred until reconnection (%s)", self.name, exc)
            return
        except Exception:  # noqa: BLE001 - malformed node data must not kill the dispatcher
            log.exception("watch %s: could not read the watched nodes", self.name)
            return
        if self.subscription.cancelled:
            return
        try:
            self.callback(value)
        except Exception:  # noqa: BLE001 - user callback
            log.exception("watch %s: callback %r raised", self.name, self.callback)


class ZooKeeperRegistry(ClusterRegistry):
    """``ClusterRegistry`` over a ZooKeeper ensemble (see the module docstring for threads and sessions).

    ``session_timeout_ms`` is requested from the server (it clamps it to [2, 20] ticks unless configured
    otherwise). ``connection_timeout_ms`` bounds ``start`` (default: the session timeout).
    ``request_timeout_ms`` bounds each request (default: the session timeout).
    ``registration_wait_ms``: when ``/brokers/ids/<id>`` is held by another session (not the one of this
    broker's previous run named by its ``RegistrationRecord``: that node is taken over at once), wait this
    long for it to vanish before raising ``BrokerIdInUseError``.
    """

    def __init__(self, connect: str, *, session_timeout_ms: int = 6000, connection_timeout_ms: int | None = None,
                 request_timeout_ms: int | None = None, registration_wait_ms: int = 0) -> None:
        if session_timeout_ms <= 0:
            raise ValueError(f"session_timeout_ms must be positive, got {session_timeout_ms}")
        self._hosts, self._chroot = parse_connect_string(connect)
        self.connect = connect
        self._connection_timeout = (connection_timeout_ms or session_timeout_ms) / 1000
        self._request_timeout = (request_timeout_ms or session_timeout_ms) / 1000
        self._registration_wait = registration_wait_ms / 1000
        retry = KazooRetry(max_tries=-1, delay=0.05, backoff=2, max_jitter=0.1, max_delay=1.0)
        self._client = KazooClient(hosts=self._hosts, timeout=session_timeout_ms / 1000,
                                   connection_retry=retry, command_retry=KazooRetry(max_tries=0))
        self._lock = threading.Lock()
        self._watches: list[_Watch] = []
        self._session_callbacks: list[tuple[Subscription, Callable[[], None]]] = []
        self._registration: _Registration | None = None
        self._registration_lock = threading.Lock()  # register / re-register / deregister, one at a time
        self._registration_watch: tuple[int, Subscription] | None = None
        self._is_controller = False
        self._cluster_id: str | None = None
        self._session_lost = False
        self._started = False
        self._closed = False
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._dispatcher = threading.Thread(target=self._dispatch_loop, name="zk-registry-dispatch", daemon=True)

    # -- lifecycle -----------------------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> None:
        if self._closed:
            raise RegistryUnavailableError("registry is closed")
        if self._started:
            return
        self._started = True
        self._dispatcher.start()
        self._client.add_listener(self._on_state)
        try:
            self._client.start(timeout=self._connection_timeout if timeout is None else timeout)
        except KazooTimeoutError as exc:
            raise RegistryUnavailableError(f"could not connect to ZooKeeper at {self._hosts} within "
                                           f"{self._connection_timeout if timeout is None else timeout:.1f} s") from exc
        if self._chroot:
            self._ensure_path(self._chroot, absolute=True)
        for path in PERSISTENT_PATHS:
            self._ensure_path(path)
        try:
            self._create("/controller_epoch", b"0")
        except NodeExistsError:
            pass
        self._cluster_id = self._get_or_create_cluster_id()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            watches, self._watches = self._watches, []
            self._session_callbacks = []
        for w in watches:
            w.subscription.cancel()
        if self._started:
            try:
                self._client.stop()  # closes the session: ephemeral nodes vanish with it
            finally:
                self._client.close()
            self._queue.put(None)
            if threading.current_thread() is not self._dispatcher:
                self._dispatcher.join(5)
        self._registration = None
        self._is_controller = False

    def __enter__(self) -> "ZooKeeperRegistry":
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
        return self._chroot

    @property
    def session_id(self) -> int | None:
        """The current ZooKeeper session id, or None before the first connection."""
        cid = self._client.client_id
        return cid[0] if cid else None

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """(session id, password) of the current session: what a second client needs to take it over."""
        return self._client.client_id

    @property
    def connected(self) -> bool:
        return not self._closed and self._client.state == KazooState.CONNECTED

    # -- brokers -------------------------------------------------------------------------------------

    @_translate_kazoo_errors
    def register_broker(self, info: BrokerInfo, record: RegistrationRecord | None = None) -> None:
        reg = _Registration(info, info.to_json().encode(), record)
        with self._registration_lock:
            self._register(reg)
            with self._lock:
                self._registration = reg
                watched = self._registration_watch
            if watched is None or watched[0] != info.broker_id:
                if watched is not None:
                    watched[1].cancel()
                path = f"/brokers/ids/{info.broker_id}"
                sub = self._watch(f"registration:{info.broker_id}",
                                  lambda w: self._get_or_watch_creation(path, w), self._keep_registered)
                with self._lock:
                    self._registration_watch = (info.broker_id, sub)
        log.info("registered broker %d at %s/brokers/ids/%d (session 0x%x)", info.broker_id, self._chroot,
                 info.broker_id, self.session_id or 0)

    @_translate_kazoo_errors
    def deregister_broker(self) -> None:
        with self._registration_lock:
            with self._lock:
                reg, self._registration = self._registration, None
                watched, self._registration_watch = self._registration_watch, None
            if watched is not None:
                watched[1].cancel()
            if reg is not None:
                self._delete_if_ours(f"/brokers/ids/{reg.info.broker_id}")

    def _register(self, reg: _Registration) -> None:
        """Create ``/brokers/ids/<id>`` on the current session, taking over the previous run's nodes first.

        Caller holds ``_registration_lock``. Order (each step safe to crash after): delete the nodes owned by
        the recorded session, record the current session, create the node.
        """
        broker_id = reg.info.broker_id
        path = f"/brokers/ids/{broker_id}"
        session = self.session_id
        stale = reg.record.read(self.cluster_id, broker_id) if reg.record is not None else None
        if reg.record is not None and stale != session:
            if stale is not None:
                for node in (path, "/controller"):
                    if self._delete_if_owned_by(node, stale):
                        log.warning("broker %d: replaced the stale %s%s of its previous run (session 0x%x, "
                                    "recorded in %s)", broker_id, self._chroot, node, stale, reg.record.path)
            reg.record.write(self.cluster_id, broker_id, session)
        deadline = time.monotonic() + self._registration_wait
        while True:
            try:
                self._create(path, reg.data, ephemeral=True)
                return
            except NoNodeError:  # /brokers/ids itself was deleted
                self._ensure_path("/brokers/ids")
                continue
            except NodeExistsError:
                pass
            holder = self._ephemeral_holder(path)
            if holder is True:  # ours: an earlier attempt succeeded before its answer was lost
                try:
                    self._set(path, reg.data)
                    return
                except NoNodeError:
                    continue
            if holder is None:
                continue  # vanished in between: try again
            gone = threading.Event()
            try:
                if self._exists(path, watch=lambda _event, gone=gone: gone.set()) is None:
                    continue
            except NoNodeError:
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not gone.wait(remaining):
                raise BrokerIdInUseError(broker_id, holder, self._not_previous_run(reg, stale)) from None

    @staticmethod
    def _not_previous_run(reg: _Registration, stale: int | None) -> str:
        if reg.record is None:
            return ""
        if stale is None:
            return f"not this broker's previous run: {reg.record.path} names none"
        return f"not this broker's previous run, session 0x{stale:x} recorded in {reg.record.path}"

    def _keep_registered(self, node) -> None:
        """Dispatcher thread, watch of our ``/brokers/ids/<id>``: re-create it if it vanished while we run."""
        if node is not None and node[1].ephemeralOwner == self.session_id:
            return
        with self._registration_lock:
            with self._lock:
                reg = self._registration
            if reg is None or self._session_lost or self._closed:
                return  # deregistered, or the session expired: _reestablish registers again
            path = f"{self._chroot}/brokers/ids/{reg.info.broker_id}"
            if node is not None:
                log.error("broker %d: %s is held by another session (0x%x), not by this broker's (0x%x); it "
                          "is registered again if that node vanishes", reg.info.broker_id, path,
                          node[1].ephemeralOwner, self.session_id or 0)
                return
            log.warning("broker %d: %s was deleted while the broker runs; registering again",
                        reg.info.broker_id, path)
            try:
                self._register(reg)
            except BrokerIdInUseError as exc:
                log.error("broker %d: could not register again: %s", reg.info.broker_id, exc)
                return
            except (RegistryError, KazooException, *_UNAVAILABLE) as exc:
                log.warning("broker %d: registering again deferred until the next change or reconnection: %s",
                            reg.info.broker_id, exc)
                return
        log.info("broker %d registered again at %s (session 0x%x)", reg.info.broker_id, path, self.session_id or 0)

    def live_brokers(self) -> dict[int, BrokerInfo]:
        return self._read_brokers(None)

    # -- topics --------------------------------------------------------------------------------------

    def create_topic(self, assignment: TopicAssignment, config: Mapping[str, str]) -> None:
        name = _check_topic(assignment.name)
        config_json = json.dumps({"version": 1, "config": {str(k): str(v) for k, v in config.items()}},
                                 separators=(",", ":"))
        try:
            self._commit([("create", f"/config/topics/{name}", config_json.encode()),
                          ("create", f"/brokers/topics/{name}", assignment.to_json().encode())])
        except NodeExistsError:
            raise TopicExistsError(name) from None

    def topics(self) -> dict[str, TopicAssignment]:
        return self._read_topics(None)

    def topic(self, name: str) -> TopicAssignment | None:
        try:
            data, _ = self._get(f"/brokers/topics/{_check_topic(name)}")
        except NoNodeError:
            return None
        return TopicAssignment.from_json(name, data)

    def topic_config(self, name: str) -> dict[str, str]:
        _check_topic(name)
        try:
            data, _ = self._get(f"/config/topics/{name}")
        except NoNodeError:
            if self.topic(name) is None:
                raise NoSuchTopicError(name) from None
            return {}
        return _parse_config(name, data)

    def set_topic_config(self, name: str, config: Mapping[str, str]) -> None:
        _check_topic(name)
        if self.topic(name) is None:
            raise NoSuchTopicError(name)
        data = json.dumps({"version": 1, "config": {str(k): str(v) for k, v in config.items()}},
                          separators=(",", ":")).encode()
        change = json.dumps({"version": 2, "entity_path": f"topics/{name}"}, separators=(",", ":")).encode()
        write = ("set", f"/config/topics/{name}", data) if self._exists(f"/config/topics/{name}") else \
            ("create", f"/config/topics/{name}", data)
        self._commit([write, ("create_sequential", "/config/changes/config_change_", change)])

    def add_partitions(self, name: str, new: Mapping[int, tuple[int, ...]]) -> TopicAssignment:
        _check_topic(name)
        path = f"/brokers/topics/{name}"
        try:
            data, stat = self._get(path)
        except NoNodeError:
            raise NoSuchTopicError(name) from None
        current = TopicAssignment.from_json(name, data)
        expected = list(range(len(current.partitions), len(current.partitions) + len(new)))
        if not new or sorted(new) != expected:
            raise ValueError(f"topic {name!r} has partitions 0..{len(current.partitions) - 1}; new partition "
                             f"ids must be {expected}, got {sorted(new)}")
        updated = TopicAssignment(name, {**current.partitions, **new}, current.topic_id)
        try:
            self._set(path, updated.to_json().encode(), version=stat.version)
        except BadVersionError:
            raise StaleStateError(f"assignment of topic {name!r} changed concurrently") from None
        except NoNodeError:
            raise NoSuchTopicError(name) from None
        return updated

    def mark_topic_for_deletion(self, name: str) -> None:
        if self.topic(_check_topic(name)) is None:
            raise NoSuchTopicError(name)
        try:
            self._create(f"/admin/delete_topics/{name}", b"")
        except NodeExistsError:
            pass

    def pending_topic_deletions(self) -> list[str]:
        return self._read_deletions(None)

    def remove_topic(self, name: str) -> None:
        _check_topic(name)
        self._delete_tree(f"/brokers/topics/{name}")
        self._delete_tree(f"/config/topics/{name}")
        self._delete_tree(f"/admin/delete_topics/{name}")

    # -- partition state -----------------------------------------------------------------------------

    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        return self._read_partition_states(_check_topic(topic), None)

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        path = _state_path(_check_topic(topic), partition)
        try:
            data, stat = self._get(path)
        except NoNodeError:
            return None
        return PartitionState.from_json(data, stat.version, what=path)

    def create_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        _check_topic(topic)
        base = f"/brokers/topics/{topic}/partitions"
        for path in (base, f"{base}/{partition}"):
            try:
                self._create(path, b"")
            except NodeExistsError:
                pass
            except NoNodeError:
                raise NoSuchTopicError(topic) from None
        try:
            self._create(_state_path(topic, partition), state.to_json().encode())
        except NodeExistsError:
            raise StaleStateError(f"partition state of {topic}-{partition} already exists") from None
        except NoNodeError:
            raise NoSuchTopicError(topic) from None
        return _with_version(state, 0)

    def update_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        path = _state_path(_check_topic(topic), partition)
        try:
            stat = self._set(path, state.to_json().encode(), version=state.zk_version)
        except BadVersionError:
            raise StaleStateError(f"partition state of {topic}-{partition} moved past version "
                                  f"{state.zk_version}") from None
        except NoNodeError:
            raise StaleStateError(f"partition state of {topic}-{partition} does not exist") from None
        return _with_version(state, stat.version)

    # -- controller ----------------------------------------------------------------------------------

    @_translate_kazoo_errors
    def try_become_controller(self, broker_id: int) -> int | None:
        node = json.dumps({"version": 1, "brokerid": int(broker_id), "timestamp": str(int(time.time() * 1000))},
                          separators=(",", ":")).encode()
        for _ in range(10):
            holder = self._ephemeral_holder("/controller")
            if holder is True:
                with self._lock:
                    self._is_controller = True
                return self.controller_epoch()
            if holder is not None:
                return None
            try:
                data, stat = self._get("/controller_epoch")
            except NoNodeError:
                try:
                    self._create("/controller_epoch", b"0")
                except NodeExistsError:
                    pass
                continue
            epoch = int(data or b"0") + 1
            try:
                self._commit([("create_ephemeral", "/controller", node),
                              ("set", "/controller_epoch", str(epoch).encode(), stat.version)])
            except NodeExistsError:
                return None
            except BadVersionError:
                continue  # another election bumped the epoch in between: look again
            with self._lock:
                self._is_controller = True
            log.info("broker %d became controller with epoch %d", broker_id, epoch)
            return epoch
        raise StaleStateError("could not increment /controller_epoch: too many concurrent elections")

    def controller_id(self) -> int | None:
        return self._read_controller(None)

    def controller_epoch(self) -> int:
        try:
            data, _ = self._get("/controller_epoch")
        except NoNodeError:
            return 0
        return int(data or b"0")

    @_translate_kazoo_errors
    def resign_controller(self) -> None:
        with self._lock:
            self._is_controller = False
        self._delete_if_ours("/controller")

    # -- watches -------------------------------------------------------------------------------------

    def on_brokers_changed(self, callback) -> Subscription:
        return self._watch("brokers", self._read_brokers, callback)

    def on_topics_changed(self, callback) -> Subscription:
        return self._watch("topics", self._read_topics, callback)

    def on_topic_deletions(self, callback) -> Subscription:
        return self._watch("topic-deletions", self._read_deletions, callback)

    def on_partition_states_changed(self, topic: str, callback) -> Subscription:
        _check_topic(topic)
        return self._watch(f"partition-states:{topic}", lambda w: self._read_partition_states(topic, w), callback)

    def on_controller_changed(self, callback) -> Subscription:
        return self._watch("controller", self._read_controller, callback)

    def on_session_reestablished(self, callback) -> Subscription:
        entry: tuple[Subscription, Callable[[], None]]

        def forget() -> None:
            with self._lock:
                if entry in self._session_callbacks:
                    self._session_callbacks.remove(entry)

        entry = (Subscription(forget), callback)
        with self._lock:
            self._session_callbacks.append(entry)
        return entry[0]

    # -- consumer offsets ----------------------------------------------------------------------------

    def commit_consumer_offset(self, group: str, topic: str, partition: int, offset: int) -> None:
        path = f"/consumers/{_check_group(group)}/offsets/{_check_topic(topic)}/{int(partition)}"
        data = str(int(offset)).encode()
        try:
            self._set(path, data)
        except NoNodeError:
            self._ensure_path(path.rsplit("/", 1)[0])
            try:
                self._create(path, data)
            except NodeExistsError:
                self._set(path, data)

    def fetch_consumer_offset(self, group: str, topic: str, partition: int) -> int | None:
        path = f"/consumers/{_check_group(group)}/offsets/{_check_topic(topic)}/{int(partition)}"
        try:
            data, _ = self._get(path)
        except NoNodeError:
            return None
        return int(data)

    # -- readers (watch=None: plain read; else the watcher is armed on every node read) ---------------

    def _read_brokers(self, watch) -> dict[int, BrokerInfo]:
        brokers = {}
        for child in self._children("/brokers/ids", watch):
            try:
                data, _ = self._get(f"/brokers/ids/{child}")
            except NoNodeError:
                continue
            brokers[int(child)] = BrokerInfo.from_json(int(child), data)
        return dict(sorted(brokers.items()))

    def _read_topics(self, watch) -> dict[str, TopicAssignment]:
        topics = {}
        for name in sorted(self._children("/brokers/topics", watch)):
            try:
                data, _ = self._get(f"/brokers/topics/{name}", watch)
            except NoNodeError:
                continue
            topics[name] = TopicAssignment.from_json(name, data)
        return topics

    def _read_deletions(self, watch) -> list[str]:
        return sorted(self._children("/admin/delete_topics", watch))

    def _read_partition_states(self, topic: str, watch) -> dict[int, PartitionState]:
        base = f"/brokers/topics/{topic}/partitions"
        try:
            children = self._children(base, watch)
        except NoNodeError:
            if watch is not None and self._exists(base, watch) is not None:
                return self._read_partition_states(topic, watch)  # created in between
            return {}
        states = {}
        for child in children:
            if not child.isdigit():
                continue
            path = f"{base}/{child}/state"
            node = self._get_or_watch_creation(path, watch)
            if node is not None:
                states[int(child)] = PartitionState.from_json(node[0], node[1].version, what=path)
        return dict(sorted(states.items()))

    def _read_controller(self, watch) -> int | None:
        node = self._get_or_watch_creation("/controller", watch)
        if node is None:
            return None
        data = node[0]
        try:
            return int(json.loads(data)["brokerid"])
        except (ValueError, KeyError, TypeError):
            return int(data)  # pre-0.8.2 nodes hold the bare broker id

    def _get_or_watch_creation(self, path: str, watch):
        """(data, stat) of ``path`` with ``watch`` armed on it, or None with ``watch`` armed on its creation.

        A node created between the failed read and the ``exists`` is read again, never missed.
        """
        while True:
            try:
                return self._get(path, watch)
            except NoNodeError:
                if watch is None or self._exists(path, watch) is None:
                    return None

    # -- watch plumbing ------------------------------------------------------------------------------

    def _watch(self, name: str, read, callback) -> Subscription:
        if not callable(callback):
            raise TypeError(f"watch callback must be callable, got {callback!r}")
        w = _Watch(self, name, read, callback)
        with self._lock:
            if self._closed:
                raise RegistryUnavailableError("registry is closed")
            self._watches.append(w)
        w.trigger()
        return w.subscription

    def _forget_watch(self, w: _Watch) -> None:
        with self._lock:
            if w in self._watches:
                self._watches.remove(w)

    def _dispatch(self, job: Callable[[], None]) -> None:
        if not self._closed:
            self._queue.put(job)

    def _dispatch_loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None or self._closed:
                return
            try:
                job()
            except Exception:  # noqa: BLE001 - keep dispatching
                log.exception("registry dispatcher job %r failed", job)

    def _on_state(self, state: str) -> None:
        """Kazoo connection thread: must not block; only records and enqueues."""
        if self._closed:
            return
        if state == KazooState.LOST:
            self._session_lost = True
            log.warning("ZooKeeper session lost (%s%s)", self._hosts, self._chroot)
        elif state == KazooState.SUSPENDED:
            log.warning("ZooKeeper connection suspended (%s%s)", self._hosts, self._chroot)
        elif state == KazooState.CONNECTED:
            self._dispatch(self._reestablish if self._session_lost else self._refresh_all)

    def _refresh_all(self) -> None:
        """Dispatcher thread: re-read (re-arm) and deliver every watch now, in registration order."""
        with self._lock:
            watches = list(self._watches)
        for w in watches:
            w.refresh()

    def _reestablish(self) -> None:
        """Dispatcher thread, after a session expiry: re-register, re-arm, notify (see module docstring)."""
        if not self._session_lost or self._closed:
            return
        with self._lock:
            self._is_controller = False
        with self._registration_lock:
            with self._lock:
                reg = self._registration
            if reg is not None:
                try:
                    self._register(reg)
                    log.info("registered broker %d again after session expiry", reg.info.broker_id)
                except BrokerIdInUseError as exc:
                    log.error("could not re-register after session expiry: %s", exc)
                except (RegistryUnavailableError, *_UNAVAILABLE) as exc:
                    log.warning("re-registration deferred until reconnection: %s", exc)
                    return  # still _session_lost: the next CONNECTED retries
                except (RegistryError, KazooException) as exc:
                    log.error("could not re-register after session expiry: %s: %s", type(exc).__name__, exc)
        self._session_lost = False
        log.info("ZooKeeper session re-established (session 0x%x)", self.session_id or 0)
        self._refresh_all()
        with self._lock:
            callbacks = [cb for sub, cb in self._session_callbacks if not sub.cancelled]
        for cb in callbacks:
            try:
                cb()
            except Exception:  # noqa: BLE001 - user callback
                log.exception("on_session_reestablished callback %r raised", cb)

    # -- ZooKeeper primitives (paths relative to the chroot; errors translated) -----------------------

    def _abs(self, path: str) -> str:
        return self._chroot + path if path != "/" or not self._chroot else self._chroot

    def _call(self, method: str, *args, **kwargs):
        if self._closed:
            raise RegistryUnavailableError("registry is closed")
        if self._client.state != KazooState.CONNECTED:
            raise RegistryUnavailableError(f"not connected to ZooKeeper at {self._hosts} "
                                           f"(connection {self._client.state})")
        try:
            return getattr(self._client, method)(*args, **kwargs).get(timeout=self._request_timeout)
        except _UNAVAILABLE as exc:
            raise RegistryUnavailableError(f"ZooKeeper at {self._hosts} unavailable: "
                                           f"{type(exc).__name__} {exc}".rstrip()) from exc

    def _get(self, path: str, watch=None):
        return self._call("get_async", self._abs(path), watch=watch)

    def _children(self, path: str, watch=None) -> list[str]:
        return self._call("get_children_async", self._abs(path), watch=watch)

    def _exists(self, path: str, watch=None):
        return self._call("exists_async", self._abs(path), watch=watch)

    def _create(self, path: str, data: bytes, *, ephemeral: bool = False) -> None:
        self._call("create_async", self._abs(path), data, ephemeral=ephemeral)

    def _set(self, path: str, data: bytes, version: int = -1):
        return self._call("set_async", self._abs(path), data, version=version)

    def _delete(self, path: str, version: int = -1) -> None:
        self._call("delete_async", self._abs(path), version=version)

    def _commit(self, ops: list[tuple]) -> list:
        """Run ``ops`` atomically; re-raise the first failing operation's error (NodeExistsError ...)."""
        txn = self._client.transaction()
        for op in ops:
            kind, path = op[0], self._abs(op[1])
            if kind == "create":
                txn.create(path, op[2])
            elif kind == "create_ephemeral":
                txn.create(path, op[2], ephemeral=True)
            elif kind == "create_sequential":
                txn.create(path, op[2], sequence=True)
            elif kind == "set":
                txn.set_data(path, op[2], version=op[3] if len(op) > 3 else -1)
            elif kind == "delete":
                txn.delete(path, version=op[2] if len(op) > 2 else -1)
            else:
                raise ValueError(f"unknown transaction operation {kind!r}")
        results = self._call_txn(txn)
        failures = [r for r in results if isinstance(r, Exception)]
        for failure in failures:
            if not isinstance(failure, RolledBackError):
                raise failure
        if failures:
            raise RolledBackError(f"transaction rolled back: {failures}")
        return results

    def _call_txn(self, txn) -> list:
        if self._closed:
            raise RegistryUnavailableError("registry is closed")
        if self._client.state != KazooState.CONNECTED:
            raise RegistryUnavailableError(f"not connected to ZooKeeper at {self._hosts}")
        try:
            return txn.commit_async().get(timeout=self._request_timeout)
        except _UNAVAILABLE as exc:
            raise RegistryUnavailableError(f"ZooKeeper at {self._hosts} unavailable: {type(exc).__name__}") from exc

    def _ensure_path(self, path: str, *, absolute: bool = False) -> None:
        """Create ``path`` and its missing parents (empty data)."""
        prefix = "" if absolute else self._chroot
        current = ""
        for part in path.strip("/").split("/"):
            current += "/" + part
            full = prefix + current
            if self._call("exists_async", full) is None:
                try:
                    self._call("create_async", full, b"")
                except NodeExistsError:
                    pass

    def _delete_tree(self, path: str) -> None:
        """Delete ``path`` and everything below it (not atomic; idempotent; retries if children appear)."""
        for _ in range(10):
            try:
                for child in self._children(path):
                    self._delete_tree(f"{path}/{child}")
                self._delete(path)
                return
            except NoNodeError:
                return
            except NotEmptyError:
                continue
        raise StaleStateError(f"{path} keeps gaining children; could not delete it")

    def _ephemeral_holder(self, path: str):
        """True when this session owns the ephemeral node, None when absent, else the holder description."""
        try:
            data, stat = self._get(path)
        except NoNodeError:
            return None
        if stat.ephemeralOwner and stat.ephemeralOwner == self.session_id:
            return True
        if path.startswith("/brokers/ids/"):
            try:
                return BrokerInfo.from_json(int(path.rsplit("/", 1)[1]), data).address + \
                    f" (session 0x{stat.ephemeralOwner:x})"
            except ValueError:
                pass
        return f"session 0x{stat.ephemeralOwner:x}"

    def _delete_if_ours(self, path: str) -> None:
        self._delete_if_owned_by(path, self.session_id)

    def _delete_if_owned_by(self, path: str, session: int | None) -> bool:
        """Compare-and-delete ``path`` when ``session`` owns it (ephemeral); True when this call deleted it."""
        if not session:
            return False
        try:
            _, stat = self._get(path)
            if stat.ephemeralOwner != session:
                return False
            self._delete(path, version=stat.version)
            return True
        except (NoNodeError, BadVersionError):
            return False

    def _get_or_create_cluster_id(self) -> str:
        for _ in range(3):
            try:
                data, _ = self._get("/cluster/id")
            except NoNodeError:
                candidate = new_cluster_id()
                try:
                    self._create("/cluster/id", json.dumps({"version": "1", "id": candidate},
                                                           separators=(",", ":")).encode())
                    return candidate
                except NodeExistsError:
                    continue
            try:
                return str(json.loads(data)["id"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{self._chroot}/cluster/id: malformed cluster id node {data!r:.200}") from exc
        raise RegistryUnavailableError("/cluster/id kept changing while being read")


def _state_path(topic: str, partition: int) -> str:
    if not isinstance(partition, int) or partition < 0:
        raise ValueError(f"partition must be a non-negative int, got {partition!r}")
    return f"/brokers/topics/{topic}/partitions/{partition}/state"


def _with_version(state: PartitionState, version: int) -> PartitionState:
    return PartitionState(state.leader, state.leader_epoch, state.isr, state.controller_epoch, version)


def _parse_config(topic: str, data: bytes) -> dict[str, str]:
    try:
        obj = json.loads(data)
        return {str(k): str(v) for k, v in obj["config"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"/config/topics/{topic}: malformed config node {data!r:.200}") from exc
