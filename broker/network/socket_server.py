"""The listener: accepts client sockets on every configured listener and runs one connection task each.

Shared by the connections (all on one event loop): the receive buffer every read goes into first, the
pool of large-frame buffers, the ``queued.max.request.bytes`` budget (``RequestMemory``) and the chunk
buffers of TLS file-region sends (``SendBuffers``).

Each listener's security is a ``ListenerSecurity`` from ``listener_security`` (by listener name; a listener
missing from it is PLAINTEXT). On SSL and SASL_SSL listeners an accepted socket is wrapped in TLS (no I/O:
the connection runs the handshake on the loop); with ``ListenerSecurity.ktls`` the listener's context gets
OpenSSL's ``SSL_OP_ENABLE_KTLS`` and each connection asks ``ktls_detector`` after its handshake whether the
kernel took TX.

``start()`` binds (port 0 picks a free port; ``bound`` reports the real ones) and starts accepting;
``stop()`` is ordered and idempotent: stop accepting, stop reading new requests, let requests already
read finish and their responses go out (up to a grace period), then close every socket.
``close_listeners()`` / ``reopen_listeners()`` take the server off the network and back without stopping it
(``EmbeddedBroker.down`` / ``up``): the listening sockets close and every connection is cut at once (requests in
flight are not answered); reopening binds the same ports again. Runs on the broker's event loop; not thread-safe.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import socket
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from broker.api import HandlerRegistry
from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol.frame_pool import FramePool

from .connection import ClientConnection
from .file_sender import SendBuffers
from .request_memory import RequestMemory
from .tls_socket import enable_ktls, ktls_tx_active
from .tls_socket import wrap as tls_wrap

if TYPE_CHECKING:
    from broker.config import BrokerConfig, Listener
    from broker.services import BrokerServices

log = logging.getLogger("kafkalog.network")

_RECV_BUFFER_SIZE = 256 * 1024  # one socket read; shared by every connection of this server
_POOLED_BYTES = 64 * 1024 * 1024  # large-frame buffers kept for reuse across connections


class SocketServer:
    def __init__(
        self,
        config: BrokerConfig,
        registry: HandlerRegistry,
        services: BrokerServices,
        listener_security: Mapping[str, ListenerSecurity] | None = None,
        *,
        ktls_detector: Callable[[socket.socket], bool] = ktls_tx_active,
    ) -> None:
        self.config = config
        self.registry = registry
        self.services = services
        self.bound: dict[str, tuple[str, int]] = {}
        self._listen_socks: list[tuple[str, socket.socket]] = []
        self._accept_tasks: list[asyncio.Task] = []
        self._connections: dict[int, tuple[ClientConnection, asyncio.Task]] = {}
        self._ids = itertools.count(1)
        self._stopped = False
        self.recv_buffer = memoryview(bytearray(_RECV_BUFFER_SIZE))
        self.request_memory = RequestMemory(config["queued.max.request.bytes"])
        self.frame_pool = FramePool(max_buffers=16, max_bytes=_POOLED_BYTES)
        self.send_buffers = SendBuffers()
        self.ktls_detector = ktls_detector
        self.listener_security: dict[str, ListenerSecurity] = dict(listener_security or {})
        for security in self.listener_security.values():
            if security.uses_tls and security.ssl_context is None:
                raise ValueError(f"listener {security.name} is {security.protocol} but has no SSL context")
            if security.uses_tls and security.ktls and security.ssl_context is not None:
                enable_ktls(security.ssl_context)

    def security_of(self, listener: str) -> ListenerSecurity:
        """The security of ``listener`` (PLAINTEXT when none was given for it)."""
        security = self.listener_security.get(listener)
        if security is None:
            security = self.listener_security[listener] = ListenerSecurity(name=listener)
        return security

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    @property
    def listening(self) -> bool:
        """The listeners accept connections (started, not stopped, not closed by ``close_listeners``)."""
        return bool(self._listen_socks)

    async def start(self) -> None:
        for listener in self.config.listeners:
            sock = _bind(listener, self.bound[listener.name][1] if listener.name in self.bound else None)
            host, port = sock.getsockname()[:2]
            self.bound[listener.name] = (host, port)
            self._listen_socks.append((listener.name, sock))
            self._accept_tasks.append(asyncio.create_task(self._accept_loop(listener.name, sock)))
            log.info("listening on %s://%s:%d", listener.name, host, port)

    async def _accept_loop(self, name: str, lsock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, addr = await loop.sock_accept(lsock)
            except asyncio.CancelledError:
                raise
            except OSError as e:
                if self._stopped:
                    return
                log.warning("accept failed on %s: %s", name, e)
                await asyncio.sleep(0.1)
                continue
            self._configure(sock)
            conn_id = next(self._ids)
            peer = f"{addr[0]}:{addr[1]}"
            security = self.security_of(name)
            if security.uses_tls:
                assert security.ssl_context is not None
                try:
                    sock = tls_wrap(security.ssl_context, sock)
                except (OSError, ValueError) as e:
                    log.info("closing connection from %s on %s: cannot start TLS: %s", peer, name, e)
                    sock.close()
                    continue
            conn = ClientConnection(self, sock, peer, conn_id, name)
            task = asyncio.create_task(conn.run(), name=f"conn-{conn_id}")
            self._connections[conn_id] = (conn, task)
            task.add_done_callback(functools.partial(self._connection_done, conn_id))

    def _connection_done(self, conn_id: int, _task: asyncio.Task) -> None:
        self._connections.pop(conn_id, None)

    def _configure(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for key, opt in (
            ("socket.send.buffer.bytes", socket.SO_SNDBUF),
            ("socket.receive.buffer.bytes", socket.SO_RCVBUF),
        ):
            if self.config[key] > 0:
                sock.setsockopt(socket.SOL_SOCKET, opt, self.config[key])

    async def close_listeners(self) -> None:
        """Stop accepting (the listening sockets close) and cut every client connection now, without answering
        the requests it has in flight; ``bound`` keeps the ports for ``reopen_listeners``. Idempotent."""
        if self._listen_socks:
            log.info("closing the listeners and %d connections (taken off the network)", len(self._connections))
        await self._close_listen_socks()
        conns = [task for _, task in self._connections.values()]
        for task in conns:
            task.cancel()  # the connection closes its socket and drops its in-flight requests
        await asyncio.gather(*conns, return_exceptions=True)

    async def reopen_listeners(self) -> None:
        """Listen again on the ports of ``bound`` after ``close_listeners`` (an ``OSError`` names a listener
        whose port was taken meanwhile). Idempotent; refused once stopped."""
        if self._stopped:
            raise RuntimeError("the socket server is stopped")
        if not self._listen_socks:
            await self.start()

    async def _close_listen_socks(self) -> None:
        tasks, self._accept_tasks = self._accept_tasks, []
        socks, self._listen_socks = self._listen_socks, []
        for task in tasks:
            task.cancel()
        for _, sock in socks:
            sock.close()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def stop(self, grace_s: float = 10.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        await self._close_listen_socks()
        conns = list(self._connections.values())
        for conn, _ in conns:
            await conn.stop()
            try:
                conn.shutdown_read()  # the reader sees end-of-stream and finishes in order
            except OSError:
                pass
        tasks = [t for _, t in conns]
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=grace_s)
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)


def _bind(listener: Listener, port: int | None = None) -> socket.socket:
    """A listening socket on ``listener``'s address (on ``port`` instead of its own when given: a reopen)."""
    host = listener.host or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, listener.port if port is None else port))
    except OSError as e:
        sock.close()
        raise OSError(e.errno, f"cannot listen on {listener}: {e.strerror}") from None
    sock.listen(512)
    sock.setblocking(False)
    return sock
