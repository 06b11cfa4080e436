"""Broker registration in ZooKeeper: the ephemeral ``/brokers/ids/<id>`` of this broker, kept while it runs.

``register`` creates the node on the current session. With a ``RegistrationRecord`` (see
``broker.cluster.registration_record``) the nodes still owned by the session of this broker's previous run,
``/brokers/ids/<id>`` and ``/controller``, are deleted at once by compare-and-delete, and the record is rewritten
with the current session before the node is created. A node held by any other session is a different broker:
after waiting up to ``registration_wait`` s for it to vanish, ``BrokerIdInUseError`` names its holder.

Kept while the broker runs: a watch on the node re-creates it with the same bytes when it vanishes while the
session lives (deleted by an operator or a tool); after a session expiry the session's ``on_new_session`` hook
calls ``reregister_after_expiry``. Only the ``ZooKeeperSession`` primitives are used (no kazoo here).

Thread-safety: register, re-register (user thread, or the session's dispatcher) and deregister are serialised by
one lock, held while they talk to ZooKeeper; the dispatcher may therefore wait for a registration in progress.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, NamedTuple

from broker.cluster.registry import BrokerIdInUseError, BrokerInfo, RegistryError, RegistryUnavailableError
from broker.cluster.zk_layout import BROKER_IDS, CONTROLLER, broker_path
from broker.cluster.zk_nodes import NodeExistsError, NodeStat, NoNodeError

if TYPE_CHECKING:
    from broker.cluster.registration_record import RegistrationRecord
    from broker.cluster.registry import Subscription
    from broker.cluster.zk_session import ZooKeeperSession

__all__ = ["BrokerRegistration"]

log = logging.getLogger(__name__)


class _Registration(NamedTuple):
    """What ``register`` was given: kept to re-create the node with the same bytes."""

    info: BrokerInfo
    data: bytes
    record: RegistrationRecord | None


class BrokerRegistration:
    """This registry's ``/brokers/ids/<id>`` (see the module docstring); ``cluster_id`` keys the record."""

    def __init__(self, session: ZooKeeperSession, cluster_id: Callable[[], str], registration_wait: float) -> None:
        self._zk = session
        self._cluster_id = cluster_id
        self._wait = registration_wait
        self._lock = threading.Lock()
        self._registration: _Registration | None = None
        self._watched: tuple[int, Subscription] | None = None

    def register(self, info: BrokerInfo, record: RegistrationRecord | None = None) -> None:
        reg = _Registration(info, info.to_json().encode(), record)
        path = broker_path(info.broker_id)
        with self._lock:
            self._register(reg)
            self._registration = reg
            if self._watched is None or self._watched[0] != info.broker_id:
                if self._watched is not None:
                    self._watched[1].cancel()
                self._watched = (
                    info.broker_id,
                    self._zk.watch(
                        f"registration:{info.broker_id}",
                        lambda w: self._zk.get_if_exists(path, w),
                        self._keep_registered,
                    ),
                )
        log.info(
            "registered broker %d at %s%s (session 0x%x)",
            info.broker_id,
            self._zk.chroot,
            path,
            self._zk.session_id or 0,
        )

    def deregister(self) -> None:
        """Forget the registration and delete the node if this session owns it (no-op when not registered)."""
        with self._lock:
            reg, self._registration = self._registration, None
            watched, self._watched = self._watched, None
            if watched is not None:
                watched[1].cancel()
            if reg is not None:
                self._zk.delete_if_owned_by(broker_path(reg.info.broker_id), self._zk.session_id)

    def forget(self) -> None:
        """Drop the registration without touching ZooKeeper (the session is closing: the node goes with it)."""
        self._registration = None

    def reregister_after_expiry(self) -> None:
        """The dispatcher, on a new session: register again; RegistryUnavailableError defers to reconnection.

        Any other failure (another broker took the id, a malformed node ...) is logged: the broker runs on
        unregistered rather than stopping the session's re-establishment.
        """
        with self._lock:
            reg = self._registration
            if reg is None:
                return
            try:
                self._register(reg)
            except RegistryUnavailableError:
                raise
            except BrokerIdInUseError as exc:
                log.error("could not re-register after session expiry: %s", exc)
                return
            except RegistryError as exc:
                log.error("could not re-register after session expiry: %s: %s", type(exc).__name__, exc)
                return
        log.info("registered broker %d again after session expiry", reg.info.broker_id)

    def _register(self, reg: _Registration) -> None:
        """Create ``/brokers/ids/<id>`` on the current session, taking over the previous run's nodes first.

        Caller holds ``_lock``. Order (each step safe to crash after): delete the nodes owned by the recorded
        session, record the current session, create the node.
        """
        broker_id = reg.info.broker_id
        path = broker_path(broker_id)
        session = self._zk.session_id
        if session is None:
            raise RegistryUnavailableError(f"broker {broker_id}: no ZooKeeper session to register with")
        stale = reg.record.read(self._cluster_id(), broker_id) if reg.record is not None else None
        if reg.record is not None and stale != session:
            if stale is not None:
                for node in (path, CONTROLLER):
                    if self._zk.delete_if_owned_by(node, stale):
                        log.warning(
                            "broker %d: replaced the stale %s%s of its previous run (session 0x%x, recorded in %s)",
                            broker_id,
                            self._zk.chroot,
                            node,
                            stale,
                            reg.record.path,
                        )
            reg.record.write(self._cluster_id(), broker_id, session)
        deadline = time.monotonic() + self._wait
        while True:
            try:
                self._zk.create(path, reg.data, ephemeral=True)
                return
            except NoNodeError:  # /brokers/ids itself was deleted
                self._zk.ensure_path(BROKER_IDS)
                continue
            except NodeExistsError:
                pass
            holder = self._holder(path)
            if holder is True:  # ours: an earlier attempt succeeded before its answer was lost
                try:
                    self._zk.set(path, reg.data)
                    return
                except NoNodeError:
                    continue
            if holder is None:
                continue  # vanished in between: try again
            if self._zk.wait_for_change(path, deadline - time.monotonic()):
                continue
            raise BrokerIdInUseError(broker_id, holder, self._not_previous_run(reg, stale)) from None

    def _holder(self, path: str) -> Literal[True] | str | None:
        """True when this session owns ``path``, None when it is absent, else its holder's host:port and session."""
        node = self._zk.get_if_exists(path)
        if node is None:
            return None
        data, stat = node
        if stat.ephemeral_owner and stat.ephemeral_owner == self._zk.session_id:
            return True
        try:
            address = BrokerInfo.from_json(int(path.rsplit("/", 1)[1]), data).address
            return f"{address} (session 0x{stat.ephemeral_owner:x})"
        except ValueError:
            return f"session 0x{stat.ephemeral_owner:x}"

    @staticmethod
    def _not_previous_run(reg: _Registration, stale: int | None) -> str:
        if reg.record is None:
            return ""
        if stale is None:
            return f"not this broker's previous run: {reg.record.path} names none"
        return f"not this broker's previous run, session 0x{stale:x} recorded in {reg.record.path}"

    def _keep_registered(self, node: tuple[bytes, NodeStat] | None) -> None:
        """The dispatcher, watch of our ``/brokers/ids/<id>``: re-create it if it vanished while we run."""
        if node is not None and node[1].ephemeral_owner == self._zk.session_id:
            return
        with self._lock:
            reg = self._registration
            if reg is None or self._zk.session_lost or self._zk.closed:
                return  # deregistered, or the session expired: reregister_after_expiry registers again
            path = f"{self._zk.chroot}{broker_path(reg.info.broker_id)}"
            if node is not None:
                log.error(
                    "broker %d: %s is held by another session (0x%x), not by this broker's (0x%x); it "
                    "is registered again if that node vanishes",
                    reg.info.broker_id,
                    path,
                    node[1].ephemeral_owner,
                    self._zk.session_id or 0,
                )
                return
            log.warning("broker %d: %s was deleted while the broker runs; registering again", reg.info.broker_id, path)
            try:
                self._register(reg)
            except BrokerIdInUseError as exc:
                log.error("broker %d: could not register again: %s", reg.info.broker_id, exc)
                return
            except RegistryError as exc:
                log.warning(
                    "broker %d: registering again deferred until the next change or reconnection: %s",
                    reg.info.broker_id,
                    exc,
                )
                return
        log.info("broker %d registered again at %s (session 0x%x)", reg.info.broker_id, path, self._zk.session_id or 0)
