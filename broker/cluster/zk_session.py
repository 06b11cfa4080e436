"""ZooKeeper session layer: one kazoo client, its session, watches that survive reconnects, and the primitive
node operations, with every kazoo exception translated into a registry exception at this boundary.

This is the only module of the broker that imports kazoo. It knows nothing of Kafka's znode layout (that is
``broker.cluster.zk_layout`` and ``broker.cluster.zk_registry``): it takes paths relative to the chroot and
bytes, and gives back bytes, ``NodeStat`` and child names (values and errors: ``broker.cluster.zk_nodes``).

Connect string: Kafka's ``zookeeper.connect``, ``host:port[,host:port...][/chroot]``. The chroot is created
on ``start`` when missing and every path is prefixed here (kazoo's own chroot is not used, so one session
does everything); error messages show the full path, exceptions carry the relative one.

Errors (``translate_kazoo_error``): no connection, a lost session or a request unanswered within
``request_timeout_ms`` -> ``RegistryUnavailableError`` (the effect of such a request is unknown, as with any
ZooKeeper connection loss); while the client is not connected every operation raises it at once, without
sending anything. Node conditions -> ``NodeExistsError``, ``NoNodeError``, ``BadVersionError`` (also a
``StaleStateError``) and ``NotEmptyError``, all ``NodeError``s naming the operation and the path. Anything else
from kazoo -> ``RegistryError`` naming the operation, the path and kazoo's exception.

Threads: kazoo's connection thread reports session state to ``_on_state`` and its callback thread fires one-shot
ZooKeeper watches; both only enqueue work. One dispatcher thread (``zk-registry-dispatch``,
``broker.cluster.zk_watches``) runs that work in order: it re-reads each subscription's nodes (re-arming the
one-shot watches in the same reads) and calls its callback with the fresh snapshot. No lock is held while a
callback runs. Every public method is thread-safe and may be called from a callback.

Sessions: kazoo drops every watch when the connection is lost. On reconnection with the same session the
dispatcher re-reads (and so re-arms) every watch. After a session *expiry* kazoo opens a new session; the
dispatcher then (1) runs the ``on_new_session`` hook given to the constructor (the registry re-creates its
ephemeral nodes there; raising ``RegistryUnavailableError`` defers everything to the next reconnection),
(2) re-reads and delivers every watch, (3) calls the ``on_session_reestablished`` callbacks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from kazoo import exceptions as kz
from kazoo.client import KazooClient, KazooState
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType
from kazoo.retry import KazooRetry

from broker.cluster.registry import RegistryError, RegistryUnavailableError, StaleStateError, Subscription
from broker.cluster.zk_nodes import (
    BadVersionError,
    CheckOp,
    CreateOp,
    DeleteOp,
    NodeError,
    NodeExistsError,
    NodeStat,
    NoNodeError,
    NotEmptyError,
    Op,
    SetOp,
    parse_connect_string,
)
from broker.cluster.zk_watches import WatchDispatcher, Watcher

__all__ = ["ZooKeeperSession", "Watcher", "translate_kazoo_error"]

log = logging.getLogger(__name__)


_NODE_ERRORS: dict[type, type[NodeError]] = {
    kz.NodeExistsError: NodeExistsError,
    kz.NoNodeError: NoNodeError,
    kz.BadVersionError: BadVersionError,
    kz.NotEmptyError: NotEmptyError,
}
_UNAVAILABLE = (
    kz.ConnectionLoss,
    kz.SessionExpiredError,
    kz.ConnectionClosedError,
    kz.OperationTimeoutError,
    kz.ConnectionDropped,
    KazooTimeoutError,
)


def translate_kazoo_error(
    exc: BaseException, operation: str, path: str, *, chroot: str = "", hosts: str = ""
) -> Exception:
    """The registry exception for kazoo's ``exc`` raised by ``operation`` on ``path`` (see the module docstring).

    Exceptions that are not kazoo's (a ValueError from a bad argument, ...) are returned unchanged.
    """
    full_path = chroot + path if path != "/" or not chroot else chroot
    for kazoo_type, ours in _NODE_ERRORS.items():
        if isinstance(exc, kazoo_type):
            return ours(operation, path, full_path)
    if isinstance(exc, _UNAVAILABLE):
        return RegistryUnavailableError(
            f"ZooKeeper at {hosts or '?'} unavailable during {operation} {full_path}: "
            f"{type(exc).__name__} {exc}".rstrip()
        )
    if isinstance(exc, kz.KazooException):
        return RegistryError(
            f"ZooKeeper at {hosts or '?'}: {operation} {full_path} failed: {type(exc).__name__} {exc}".rstrip()
        )
    return exc  # type: ignore[return-value]


def _stat(stat) -> NodeStat:
    return NodeStat(stat.version, stat.ephemeralOwner, stat.ctime)


class _NodeWatcher:
    """Kazoo watcher calling ``watch()`` for node events only (a dropped connection re-reads on reconnection).

    Equal (and hashing equal) to every other ``_NodeWatcher`` of an equal ``watch``: kazoo keeps its watchers of
    a path in a set, so re-reading an unchanged node with the same watch arms it once, not once per re-read.
    """

    __slots__ = ("watch",)

    def __init__(self, watch: Watcher) -> None:
        self.watch = watch

    def __call__(self, event) -> None:
        if event.type != EventType.NONE:
            self.watch()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NodeWatcher) and other.watch == self.watch

    def __hash__(self) -> int:
        return hash(self.watch)


def _node_watcher(watch: Watcher | None) -> _NodeWatcher | None:
    return None if watch is None else _NodeWatcher(watch)


# -- the session ---------------------------------------------------------------------------------------


class ZooKeeperSession:
    """One ZooKeeper session over ``connect`` (see the module docstring for errors, threads and sessions).

    ``session_timeout_ms`` is requested from the server (it clamps it to [2, 20] ticks unless configured
    otherwise). ``connection_timeout_ms`` bounds ``start`` (default: the session timeout).
    ``request_timeout_ms`` bounds each request (default: the session timeout). ``on_new_session`` runs on
    the dispatcher after a session expiry, before any watch is re-read.
    """

    def __init__(
        self,
        connect: str,
        *,
        session_timeout_ms: int = 6000,
        connection_timeout_ms: int | None = None,
        request_timeout_ms: int | None = None,
        on_new_session: Callable[[], None] | None = None,
    ) -> None:
        if session_timeout_ms <= 0:
            raise ValueError(f"session_timeout_ms must be positive, got {session_timeout_ms}")
        self.hosts, self.chroot = parse_connect_string(connect)
        self.connect = connect
        self._connection_timeout = (connection_timeout_ms or session_timeout_ms) / 1000
        self._request_timeout = (request_timeout_ms or session_timeout_ms) / 1000
        self._on_new_session = on_new_session
        retry = KazooRetry(max_tries=-1, delay=0.05, backoff=2, max_jitter=0.1, max_delay=1.0)
        self._client = KazooClient(
            hosts=self.hosts,
            timeout=session_timeout_ms / 1000,
            connection_retry=retry,
            command_retry=KazooRetry(max_tries=0),
        )
        self._lock = threading.Lock()
        self._watches = WatchDispatcher()
        self._session_lost = False
        self._started = False
        self._closed = False

    # -- lifecycle and state -------------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> None:
        """Connect (``RegistryUnavailableError`` after ``timeout`` s) and create the chroot. Idempotent."""
        if self._closed:
            raise RegistryUnavailableError("registry is closed")
        if self._started:
            return
        self._started = True
        self._watches.start()
        self._client.add_listener(self._on_state)
        timeout = self._connection_timeout if timeout is None else timeout
        try:
            self._client.start(timeout=timeout)
        except KazooTimeoutError as exc:
            raise RegistryUnavailableError(
                f"could not connect to ZooKeeper at {self.hosts} within {timeout:.1f} s"
            ) from exc
        if self.chroot:
            self._ensure_absolute(self.chroot)

    def close(self) -> None:
        """Cancel every watch, close the session (its ephemeral nodes vanish) and stop the dispatcher."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._watches.cancel_all()
        if self._started:
            try:
                self._client.stop()
            finally:
                self._client.close()
            self._watches.stop()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def connected(self) -> bool:
        return not self._closed and self._client.state == KazooState.CONNECTED

    @property
    def session_lost(self) -> bool:
        """True from a session expiry until the new session's ``on_new_session`` hook has succeeded."""
        return self._session_lost

    @property
    def session_id(self) -> int | None:
        """The current ZooKeeper session id, or None before the first connection."""
        cid = self._client.client_id
        return cid[0] if cid else None

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """(session id, password) of the current session: what a second client needs to take it over."""
        return self._client.client_id

    # -- primitives (paths relative to the chroot) ---------------------------------------------------

    def get(self, path: str, watch: Watcher | None = None) -> tuple[bytes, NodeStat]:
        data, stat = self._call("get", path, lambda full: self._client.get_async(full, watch=_node_watcher(watch)))
        return data, _stat(stat)

    def get_if_exists(self, path: str, watch: Watcher | None = None) -> tuple[bytes, NodeStat] | None:
        """(data, stat) of ``path``, or None; ``watch`` is armed on the node, or on its creation when absent.

        With a watch, a node created between the failed read and the ``exists`` is read again, never missed.
        """
        while True:
            try:
                return self.get(path, watch)
            except NoNodeError:
                if watch is None or self.exists(path, watch) is None:
                    return None

    def children(self, path: str, watch: Watcher | None = None) -> list[str]:
        return self._call(
            "get_children", path, lambda full: self._client.get_children_async(full, watch=_node_watcher(watch))
        )

    def exists(self, path: str, watch: Watcher | None = None) -> NodeStat | None:
        stat = self._call("exists", path, lambda full: self._client.exists_async(full, watch=_node_watcher(watch)))
        return None if stat is None else _stat(stat)

    def create(self, path: str, data: bytes | None = b"", *, ephemeral: bool = False, sequential: bool = False) -> str:
        """Create ``path``; the created path (relative; with its sequence number when ``sequential``). ``data``
        None is ZooKeeper's null data (read back as None), which differs from empty data (``b""``)."""
        created = self._call(
            "create", path, lambda full: self._client.create_async(full, data, ephemeral=ephemeral, sequence=sequential)
        )
        return self._relative(created)

    def set(self, path: str, data: bytes | None, version: int = -1) -> NodeStat:
        """Replace the data (compare-and-set when ``version`` is not -1); the node's new stat."""
        return _stat(self._call("set", path, lambda full: self._client.set_async(full, data, version=version)))

    def delete(self, path: str, version: int = -1) -> None:
        self._call("delete", path, lambda full: self._client.delete_async(full, version=version))

    def commit(self, ops: Sequence[Op]) -> list:
        """Run ``ops`` atomically (one ZooKeeper multi); the error of the first failing operation, naming its path.

        Returns one result per operation: the created path (relative) of a create, the new ``NodeStat`` of a
        set, None for a delete or a check.
        """
        txn = self._client.transaction()
        for op in ops:
            path = self._abs(op.path)
            if isinstance(op, CreateOp):
                txn.create(path, op.data, ephemeral=op.ephemeral, sequence=op.sequential)
            elif isinstance(op, SetOp):
                txn.set_data(path, op.data, version=op.version)
            elif isinstance(op, DeleteOp):
                txn.delete(path, version=op.version)
            elif isinstance(op, CheckOp):
                txn.check(path, op.version)
            else:
                raise TypeError(f"unknown transaction operation {op!r}")
        what = ",".join(self._abs(op.path) for op in ops)
        results = self._call("multi", what, lambda _full: txn.commit_async(), absolute=True)
        for op, result in zip(ops, results):
            if isinstance(result, Exception) and not isinstance(result, kz.RolledBackError):
                raise translate_kazoo_error(
                    result, f"multi {type(op).__name__}", op.path, chroot=self.chroot, hosts=self.hosts
                ) from result
        if any(isinstance(result, Exception) for result in results):
            raise RegistryError(f"ZooKeeper multi {what}: rolled back without a failing operation: {results}")
        return [
            self._relative(r) if isinstance(op, CreateOp) else _stat(r) if isinstance(op, SetOp) else None
            for op, r in zip(ops, results)
        ]

    def ensure_path(self, path: str) -> None:
        """Create ``path`` and its missing parents with null data, as Kafka does (``createRecursive``): Kafka
        parses the data of some of them (``/latest_producer_id_block``) when it is not null."""
        self._ensure_absolute(self._abs(path))

    def delete_tree(self, path: str) -> None:
        """Delete ``path`` and everything below it (not atomic; idempotent; retries if children appear)."""
        for _ in range(10):
            try:
                for child in self.children(path):
                    self.delete_tree(f"{path}/{child}")
                self.delete(path)
                return
            except NoNodeError:
                return
            except NotEmptyError:
                continue
        raise StaleStateError(f"{self.chroot}{path} keeps gaining children; could not delete it")

    def delete_if_owned_by(self, path: str, session: int | None) -> bool:
        """Compare-and-delete ``path`` when ``session`` owns it (ephemeral); True when this call deleted it."""
        if not session:
            return False
        try:
            _, stat = self.get(path)
            if stat.ephemeral_owner != session:
                return False
            self.delete(path, version=stat.version)
            return True
        except (NoNodeError, BadVersionError):
            return False

    def wait_for_change(self, path: str, timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``path`` to change or vanish; True at once when it is absent.

        Also True when the connection drops while waiting (the caller's next operation then reports it).
        """
        changed = threading.Event()
        if (
            self._call("exists", path, lambda full: self._client.exists_async(full, watch=lambda _event: changed.set()))
            is None
        ):
            return True
        return changed.wait(max(timeout, 0))

    # -- watches and session callbacks ---------------------------------------------------------------

    def watch(self, name: str, read: Callable[[Watcher], Any], callback: Callable[[Any], None]) -> Subscription:
        """Deliver ``callback(read(watcher))`` now and after every change seen by the watchers ``read`` arms.

        ``read`` passes the watcher it is given to the primitives it calls; it runs on the dispatcher.
        """
        return self._watches.watch(name, read, callback)

    def on_session_reestablished(self, callback: Callable[[], None]) -> Subscription:
        """Call ``callback()`` on the dispatcher after each session expiry, once watches were re-read."""
        return self._watches.on_session_reestablished(callback)

    def _on_state(self, state: str) -> None:
        """Kazoo connection thread: must not block; only records and enqueues."""
        if self._closed:
            return
        if state == KazooState.LOST:
            self._session_lost = True
            log.warning("ZooKeeper session lost (%s%s)", self.hosts, self.chroot)
        elif state == KazooState.SUSPENDED:
            log.warning("ZooKeeper connection suspended (%s%s)", self.hosts, self.chroot)
        elif state == KazooState.CONNECTED:
            self._watches.dispatch(self._reestablish if self._session_lost else self._watches.refresh_all)

    def _reestablish(self) -> None:
        """Dispatcher thread, after a session expiry: hook, re-arm, notify (see the module docstring)."""
        if not self._session_lost or self._closed:
            return
        if self._on_new_session is not None:
            try:
                self._on_new_session()
            except RegistryUnavailableError as exc:
                log.warning("new ZooKeeper session set-up deferred until reconnection: %s", exc)
                return  # still _session_lost: the next CONNECTED retries
            except Exception:  # noqa: BLE001 - the hook's own failures must not stop re-establishment
                log.exception("new ZooKeeper session hook %r raised", self._on_new_session)
        self._session_lost = False
        log.info("ZooKeeper session re-established (session 0x%x)", self.session_id or 0)
        self._watches.refresh_all()
        self._watches.notify_session_reestablished()

    # -- plumbing ------------------------------------------------------------------------------------

    def _abs(self, path: str) -> str:
        return self.chroot + path if path != "/" or not self.chroot else self.chroot

    def _relative(self, full: str) -> str:
        return full[len(self.chroot) :] or "/" if self.chroot else full

    def _call(self, operation: str, path: str, request: Callable[[str], Any], *, absolute: bool = False):
        """Send ``request(full path)`` (a kazoo ``*_async`` call) and wait; errors translated (module docstring)."""
        full = path if absolute else self._abs(path)
        if self._closed:
            raise RegistryUnavailableError(f"ZooKeeper {operation} {full}: registry is closed")
        if self._client.state != KazooState.CONNECTED:
            raise RegistryUnavailableError(
                f"ZooKeeper {operation} {full}: not connected to ZooKeeper "
                f"at {self.hosts} (connection {self._client.state})"
            )
        try:
            return request(full).get(timeout=self._request_timeout)
        except (kz.KazooException, KazooTimeoutError) as exc:
            raise translate_kazoo_error(
                exc, operation, path, chroot="" if absolute else self.chroot, hosts=self.hosts
            ) from exc

    def _ensure_absolute(self, full: str) -> None:
        current = ""
        for part in full.strip("/").split("/"):
            current += "/" + part
            if self._call("exists", current, self._client.exists_async, absolute=True) is None:
                try:
                    self._call("create", current, lambda full: self._client.create_async(full, None), absolute=True)
                except NodeExistsError:
                    pass
