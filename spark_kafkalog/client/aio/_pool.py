"""``AsyncConnectionPool``: the asyncio client's connections, one ``AsyncKafkaConnection`` per broker.

The bookkeeping (connections by broker id, bootstrap candidates and the bootstrap give-up rule, reconnect
backoff, metadata invalidation of what a lost broker led) is the blocking pool's ``PoolBookkeeping``; this
module only opens and closes connections on the event loop, with the same settings as
``pool.open_connection`` (``socket.connection.setup.timeout.ms``, ``request.timeout.ms`` for the
handshake, ``max.frame.size``, ``ClientSecurity`` for TLS and SASL).

Concurrency: one event loop. Opening a connection to a broker (or the bootstrap round) holds an
``asyncio.Lock`` of its own, so coroutines asking for the same broker at once share one connection while a
broker slow to connect does not hold up the others; an open connection is shared by every coroutine
(requests are pipelined on it).
"""

from __future__ import annotations

import asyncio
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import KafkaConnectionError
from spark_kafkalog.client.metadata import MetadataCache
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.client.network.pool import PoolBookkeeping, connection_settings

__all__ = ["AsyncConnectionPool", "open_async_connection"]


async def open_async_connection(
    config: ClientConfig, host: str, port: int, node_id: int | None = None
) -> AsyncKafkaConnection:
    """Connect to ``host:port`` and complete the handshake with ``config``'s connection settings; raises
    ``KafkaConnectionError``, ``KafkaSslError`` or ``KafkaAuthenticationError``."""
    return await AsyncKafkaConnection.open(host, port, node_id=node_id, **connection_settings(config))


class AsyncConnectionPool(PoolBookkeeping[AsyncKafkaConnection]):
    """asyncio connections keyed by broker id (``"bootstrap:<host:port>"`` before the brokers are known)."""

    def __init__(self, config: ClientConfig, metadata: MetadataCache) -> None:
        super().__init__(config, metadata)
        self._opening: dict[Any, asyncio.Lock] = {}  # by broker id, "bootstrap" for any_connection

    def _lock(self, key: Any) -> asyncio.Lock:
        lock = self._opening.get(key)
        if lock is None:
            lock = self._opening[key] = asyncio.Lock()
        return lock

    async def connection(self, node_id: int) -> AsyncKafkaConnection:
        """The open connection to broker ``node_id``, connecting to its address from the metadata (a
        retriable ``KafkaClientError`` when the metadata does not know it, ``KafkaConnectionError`` when it
        cannot be reached)."""
        conn = self.get(node_id)
        if conn is not None:
            return conn
        async with self._lock(node_id):
            conn = self.get(node_id)
            if conn is None:
                host, port = self.broker_address_of(node_id)
                conn = await self._keep(node_id, await self._open(host, port, node_id))
            return conn

    async def any_connection(self) -> AsyncKafkaConnection:
        """The least loaded open connection, else a new one to a known broker or a bootstrap server
        (``BrokerNotAvailableError`` naming every address tried when none answers)."""
        async with self._lock("bootstrap"):
            live = self.live()
            if live:
                return min(live, key=lambda c: c.protocol.in_flight)
            candidates, known_brokers = self.bootstrap_candidates()
            failures: list[KafkaConnectionError] = []
            labels: list[str] = []
            for key, host, port, node_id, label in candidates:
                try:
                    conn = await self._open(host, port, node_id)
                except KafkaConnectionError as e:
                    failures.append(e)
                    labels.append(f"{label} ({e.reason or e})")
                    continue
                return await self._keep(key, conn)
            raise self._bootstrap_failed(failures, labels, known_brokers=known_brokers)

    async def _keep(self, key: Any, conn: AsyncKafkaConnection) -> AsyncKafkaConnection:
        """Pool ``conn`` under ``key``, unless a bootstrap round and a broker's own lock connected to the same
        broker at once: then the first stays and ``conn`` is closed."""
        existing = self._conns.get(key)
        if existing is not None and not existing.closed:
            await conn.close()
            return existing
        self._conns[key] = conn
        return conn

    async def _open(self, host: str, port: int, node_id: int | None) -> AsyncKafkaConnection:
        try:
            conn = await open_async_connection(self.config, host, port, node_id)
        except KafkaConnectionError:
            self._open_failed(node_id)
            raise
        self._opened(node_id)
        return conn

    async def drop(self, conn: AsyncKafkaConnection, reason: BaseException | None = None) -> None:
        """Close ``conn`` (its in-flight requests fail with ``reason``) and forget it; the topics its broker
        led are marked for refresh."""
        self._forget(conn, conn.protocol.node_id)
        await conn.close(reason)

    async def close(self, reason: BaseException | None = None) -> None:
        """Close every connection. Idempotent."""
        conns = list(self._conns.values())
        self._conns.clear()
        for conn in conns:
            await conn.close(reason)
