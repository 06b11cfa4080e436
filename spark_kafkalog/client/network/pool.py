"""``ConnectionPool``: one client's connections to the brokers of a cluster, opened on first use.

``open_connection`` is the one place a client connection is opened: ``SocketConnection.open`` with the
connection settings of a ``ClientConfig`` (``socket.connection.setup.timeout.ms``, ``request.timeout.ms``
for the ApiVersions handshake, ``max.frame.size``, socket buffer sizes) and its ``ClientSecurity`` (TLS and
SASL, built once per config object: ``ClientConfig.security()``). A failed TLS handshake (``KafkaSslError``)
or SASL authentication (``KafkaAuthenticationError``) is not retriable and is raised at once, without
trying the other bootstrap servers. ``KafkaClient`` keeps a pool
(used under its lock) and the producer's sender thread keeps its own (its connections are polled with
``select`` on that thread). A failed attempt or a dropped connection marks, in the shared
``MetadataCache``, every topic that broker led for refresh.

Bootstrap (``any_connection`` while no connection is open): the brokers known from metadata (shuffled),
then ``bootstrap.servers`` in order; the first that completes the handshake serves. When none does,
``BrokerNotAvailableError`` names each address tried with its reason, e.g.
``cannot connect to any bootstrap server: 127.0.0.1:9999 (connection refused)``. It is retriable: callers
retry within their deadline (``default.api.timeout.ms``) as Kafka's clients do, so a cluster that is
restarting, or a broker slow to answer, is waited for. One exception: while the pool has never reached the
cluster and every address keeps failing at once (connection refused, unknown host, no route, not a Kafka
broker: ``KafkaConnectionError.refused``) for ``BOOTSTRAP_REFUSED_GIVE_UP_S``, the error is raised as not
retriable - a wrong or dead address fails within seconds instead of at the deadline, while a client started
a moment before its cluster still connects.

After a failed attempt, ``backing_off`` tells for ``retry.backoff.ms`` that the broker should not be tried
again yet (Kafka's reconnect backoff; the sender asks it, ``KafkaClient`` retries on its own backoff plan).

Not thread-safe: one thread (or one lock holder) uses a pool.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import BrokerNotAvailableError, KafkaClientError, KafkaConnectionError
from spark_kafkalog.client.metadata import MetadataCache
from spark_kafkalog.client.network.connection import InFlightRequest
from spark_kafkalog.client.network.socket_transport import SocketConnection, format_address, split_host_port

__all__ = ["BOOTSTRAP_REFUSED_GIVE_UP_S", "ConnectionPool", "PoolBookkeeping", "connection_settings", "open_connection"]

log = logging.getLogger("kafkalog.client")

#: How long every bootstrap address may keep refusing before a pool that never reached its cluster gives up.
BOOTSTRAP_REFUSED_GIVE_UP_S = 3.0
_WARN_INTERVAL_S = 10.0


def connection_settings(config: ClientConfig) -> dict[str, Any]:
    """The keyword arguments both transports' ``open`` take from ``config``: client id, connect and handshake
    timeouts (seconds), ``max.frame.size`` and the ``ClientSecurity``."""
    return {
        "client_id": config.client_id,
        "connect_timeout": config.connect_timeout_ms / 1000.0,
        "request_timeout": config.request_timeout_ms / 1000.0,
        "max_frame_size": config.max_frame_size,
        "security": config.security(),
    }


def open_connection(config: ClientConfig, host: str, port: int, node_id: int | None = None) -> SocketConnection:
    """Connect to ``host:port`` and complete the handshake with ``config``'s connection settings;
    raises ``KafkaConnectionError`` (see ``SocketConnection.open``)."""
    return SocketConnection.open(
        host,
        port,
        node_id=node_id,
        send_buffer_bytes=config.send_buffer_bytes,
        receive_buffer_bytes=config.receive_buffer_bytes,
        **connection_settings(config),
    )


class _Pooled(Protocol):
    @property
    def closed(self) -> bool: ...


ConnT = TypeVar("ConnT", bound=_Pooled)

#: A bootstrap candidate: (pool key, host, port, node id or None, label for errors).
Candidate = tuple[Any, str, int, "int | None", str]


class PoolBookkeeping(Generic[ConnT]):
    """What a pool knows apart from how it opens and closes connections: its connections keyed by broker id
    (``"bootstrap:<host:port>"`` before the brokers are known), the bootstrap candidates, failed attempts
    (reconnect backoff, metadata invalidation) and the bootstrap give-up rule of the module docstring. Shared
    by ``ConnectionPool`` (blocking) and the asyncio client's pool (``spark_kafkalog.client.aio``)."""

    def __init__(
        self, config: ClientConfig, metadata: MetadataCache, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config
        self.metadata = metadata
        self._clock = clock
        self._conns: dict[Any, ConnT] = {}
        self._failed_at: dict[int, float] = {}
        self.reached_cluster = False  # some connection completed its handshake
        self._refused_since: float | None = None  # start of the current run of all-refused bootstrap rounds
        self._warned_at = float("-inf")

    def get(self, node_id: int) -> ConnT | None:
        """The open connection to broker ``node_id``, if there is one."""
        conn = self._conns.get(node_id)
        return conn if conn is not None and not conn.closed else None

    def live(self) -> list[ConnT]:
        return [c for c in self._conns.values() if not c.closed]

    def backing_off(self, node_id: int, now: float | None = None) -> bool:
        """True for ``retry.backoff.ms`` after a failed attempt to connect to ``node_id``."""
        failed = self._failed_at.get(node_id)
        now = self._clock() if now is None else now
        return failed is not None and now - failed < self.config.retry_backoff_ms / 1000.0

    def broker_address_of(self, node_id: int) -> tuple[str, int]:
        """``(host, port)`` of broker ``node_id`` from the metadata; a retriable ``KafkaClientError`` when the
        metadata does not know the broker (refresh it first)."""
        address = self.metadata.broker(node_id)
        if address is None:
            raise KafkaClientError(f"broker {node_id} is not in the cluster metadata", retriable=True)
        return address.host, address.port

    def bootstrap_candidates(self) -> tuple[list[Candidate], bool]:
        """Where ``any_connection`` tries to connect when no connection is open, in order: the brokers known
        from metadata (shuffled), then ``bootstrap.servers``; and whether any broker is known."""
        brokers = list(self.metadata.brokers.values())
        random.shuffle(brokers)
        candidates: list[Candidate] = [
            (b.node_id, b.host, b.port, b.node_id, f"broker {b.node_id} at {format_address(b.host, b.port)}")
            for b in brokers
        ]
        for server in self.config.bootstrap_servers:
            host, port = split_host_port(server)
            label = format_address(host, port) if not brokers else f"bootstrap server {format_address(host, port)}"
            candidates.append((f"bootstrap:{server}", host, port, None, label))
        return candidates, bool(brokers)

    def _open_failed(self, node_id: int | None) -> None:
        """Record a failed attempt to connect to ``node_id``: backoff, and the topics it led are refreshed."""
        if node_id is not None and node_id >= 0:
            self._failed_at[node_id] = self._clock()
            self.metadata.invalidate_broker(node_id)

    def _opened(self, node_id: int | None) -> None:
        """Record a completed handshake (with broker ``node_id`` when known)."""
        if node_id is not None:
            self._failed_at.pop(node_id, None)
        self.reached_cluster = True
        self._refused_since = None

    def _forget(self, conn: ConnT, node_id: int | None) -> None:
        """Remove the (closed) ``conn`` of broker ``node_id`` from the pool; the topics it led are refreshed."""
        for key, c in list(self._conns.items()):
            if c is conn:
                del self._conns[key]
        if isinstance(node_id, int) and node_id >= 0:
            self.metadata.invalidate_broker(node_id)

    def _bootstrap_failed(
        self, failures: list[KafkaConnectionError], labels: list[str], *, known_brokers: bool
    ) -> BrokerNotAvailableError:
        now = self._clock()
        what = "any broker" if known_brokers else "any bootstrap server"
        message = f"cannot connect to {what}: {', '.join(labels)}"
        give_up = False
        refused = bool(failures) and all(f.refused for f in failures)
        if refused and not self.reached_cluster:
            if self._refused_since is None:
                self._refused_since = now
            waited = now - self._refused_since
            give_up = waited >= BOOTSTRAP_REFUSED_GIVE_UP_S
            if give_up:
                message += f"; still failing after {waited:.1f} s: is the address right and the cluster up?"
        else:
            self._refused_since = None
        if not give_up and (not refused or self.reached_cluster) and now - self._warned_at >= _WARN_INTERVAL_S:
            self._warned_at = now
            log.warning(
                "%s; retrying until default.api.timeout.ms (%d ms) runs out",
                message,
                self.config.default_api_timeout_ms,
            )
        return BrokerNotAvailableError(message, failures=failures, retriable=not give_up)


class ConnectionPool(PoolBookkeeping[SocketConnection]):
    """Blocking connections keyed by broker id (``"bootstrap:<host:port>"`` before the brokers are known)."""

    # connections -------------------------------------------------------------------------------
    def connection(self, node_id: int) -> SocketConnection:
        """The open connection to broker ``node_id``, connecting to its address from the metadata.

        Raises ``KafkaConnectionError`` (retriable) when the broker cannot be reached, and a retriable
        ``KafkaClientError`` when the metadata does not know the broker (refresh it first).
        """
        conn = self.get(node_id)
        if conn is not None:
            return conn
        host, port = self.broker_address_of(node_id)
        conn = self._open(host, port, node_id)
        self._conns[node_id] = conn
        return conn

    def any_connection(self) -> SocketConnection:
        """An open connection to some broker: the least loaded open one, else a new one to a known broker
        or a bootstrap server (see the module docstring for the errors)."""
        live = self.live()
        if live:
            return min(live, key=lambda c: c.in_flight)
        candidates, known_brokers = self.bootstrap_candidates()
        failures: list[KafkaConnectionError] = []
        labels: list[str] = []
        for key, host, port, node_id, label in candidates:
            try:
                conn = self._open(host, port, node_id)
            except KafkaConnectionError as e:
                failures.append(e)
                labels.append(f"{label} ({e.reason or e})")
                continue
            self._conns[key] = conn
            return conn
        raise self._bootstrap_failed(failures, labels, known_brokers=known_brokers)

    def _open(self, host: str, port: int, node_id: int | None) -> SocketConnection:
        try:
            conn = open_connection(self.config, host, port, node_id)
        except KafkaConnectionError:
            self._open_failed(node_id)
            raise
        self._opened(node_id)
        return conn

    # closing -----------------------------------------------------------------------------------
    def drop(self, conn: SocketConnection, reason: BaseException | None = None) -> list[InFlightRequest]:
        """Close ``conn`` and forget it; the topics its broker led are marked for refresh. Returns its
        requests still in flight, failed with ``reason``."""
        failed = conn.close(reason)
        self._forget(conn, conn.node_id)
        return failed

    def close(self, reason: BaseException | None = None) -> list[InFlightRequest]:
        """Close every connection; returns their in-flight requests, failed with ``reason``. Idempotent."""
        failed: list[InFlightRequest] = []
        for conn in list(self._conns.values()):
            failed += conn.close(reason)
        self._conns.clear()
        return failed
