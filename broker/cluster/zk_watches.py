"""Watch subscriptions of the ZooKeeper session and the one dispatcher thread that delivers them (no kazoo here).

A subscription is a ``read(watcher)`` function plus a callback: ``read`` fetches the nodes it needs and passes
``watcher`` to each read so that ZooKeeper's one-shot watches are armed in the same reads; the callback gets what
``read`` returned. A fired watcher only queues a re-read of its subscription (one at most: triggers that arrive
while one is queued collapse into it); the dispatcher thread (``zk-registry-dispatch``) runs every queued job in
order: re-reads (re-arming the watches) and delivers. ``refresh_all`` queues nothing: it re-reads and delivers
every live subscription on the calling thread (the session calls it on the dispatcher after a reconnection).

Thread-safety: every method may be called from any thread, including from a callback. No lock is held while
``read`` or a callback runs. A ``read`` that raises ``RegistryUnavailableError`` is skipped quietly (the session
re-reads everything on reconnection); any other failure of ``read`` or of a callback is logged and the
dispatcher carries on.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from broker.cluster.registry import RegistryUnavailableError, Subscription

__all__ = ["WatchDispatcher", "Watcher", "DISPATCH_THREAD_NAME"]

log = logging.getLogger(__name__)

DISPATCH_THREAD_NAME = "zk-registry-dispatch"

Watcher = Callable[[], None]
"""A one-shot watcher: called once (kazoo's callback thread) when the node or its children change."""


class _Watch:
    """One subscription: re-reads its nodes (arming one-shot watches) and delivers the snapshot."""

    def __init__(
        self, dispatcher: WatchDispatcher, name: str, read: Callable[[Watcher], Any], callback: Callable[[Any], None]
    ) -> None:
        self.dispatcher = dispatcher
        self.name = name
        self.read = read
        self.callback = callback
        self.subscription = Subscription(lambda: dispatcher._forget(self))
        self._pending = False
        self._lock = threading.Lock()

    def trigger(self) -> None:
        """The watcher (kazoo's callback thread, or the subscriber): queue one re-read unless one is queued."""
        if self.subscription.cancelled:
            return
        with self._lock:
            if self._pending:
                return
            self._pending = True
        self.dispatcher.dispatch(self.refresh)

    def refresh(self) -> None:
        """Read with watches re-armed, then deliver (the dispatcher thread)."""
        with self._lock:
            self._pending = False
        if self.subscription.cancelled or self.dispatcher.closed:
            return
        try:
            value = self.read(self.trigger)
        except RegistryUnavailableError as exc:
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


class WatchDispatcher:
    """Live subscriptions, session callbacks and the dispatcher thread (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: list[_Watch] = []
        self._session_callbacks: list[tuple[Subscription, Callable[[], None]]] = []
        self._closed = False
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=DISPATCH_THREAD_NAME, daemon=True)

    @property
    def closed(self) -> bool:
        return self._closed

    def start(self) -> None:
        self._thread.start()

    def cancel_all(self) -> None:
        """Refuse new subscriptions and cancel every live one and every session callback (idempotent)."""
        with self._lock:
            self._closed = True
            watches, self._watches = self._watches, []
            self._session_callbacks = []
        for w in watches:
            w.subscription.cancel()

    def stop(self, timeout: float = 5.0) -> None:
        """After ``cancel_all``: end the thread once the running job returns (not waited for on the thread)."""
        self._queue.put(None)
        if self._thread.ident is not None and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def watch(self, name: str, read: Callable[[Watcher], Any], callback: Callable[[Any], None]) -> Subscription:
        """Subscribe; the first delivery is queued at once."""
        if not callable(callback):
            raise TypeError(f"watch callback must be callable, got {callback!r}")
        w = _Watch(self, name, read, callback)
        with self._lock:
            if self._closed:
                raise RegistryUnavailableError("registry is closed")
            self._watches.append(w)
        w.trigger()
        return w.subscription

    def on_session_reestablished(self, callback: Callable[[], None]) -> Subscription:
        """Keep ``callback`` for ``notify_session_reestablished`` until the subscription is cancelled."""
        entry: tuple[Subscription, Callable[[], None]]

        def forget() -> None:
            with self._lock:
                if entry in self._session_callbacks:
                    self._session_callbacks.remove(entry)

        entry = (Subscription(forget), callback)
        with self._lock:
            self._session_callbacks.append(entry)
        return entry[0]

    def dispatch(self, job: Callable[[], None]) -> None:
        """Run ``job()`` on the dispatcher thread after the jobs already queued (dropped once closed)."""
        if not self._closed:
            self._queue.put(job)

    def refresh_all(self) -> None:
        """Re-read (re-arm) and deliver every live subscription now, in subscription order."""
        with self._lock:
            watches = list(self._watches)
        for w in watches:
            w.refresh()

    def notify_session_reestablished(self) -> None:
        """Call every live session callback, in subscription order."""
        with self._lock:
            callbacks = [cb for sub, cb in self._session_callbacks if not sub.cancelled]
        for cb in callbacks:
            try:
                cb()
            except Exception:  # noqa: BLE001 - user callback
                log.exception("on_session_reestablished callback %r raised", cb)

    def _forget(self, w: _Watch) -> None:
        with self._lock:
            if w in self._watches:
                self._watches.remove(w)

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None or self._closed:
                return
            try:
                job()
            except Exception:  # noqa: BLE001 - keep dispatching
                log.exception("registry dispatcher job %r failed", job)
