"""One client connection: read frames, dispatch each to its handler, write responses in request order.

Concurrency contract (all on the broker's event loop, one task pair per connection):

* the *reader* cuts frames out of the socket, decodes each request and starts its handler as a task at
  once, in arrival order, so a handler's synchronous part (e.g. a produce append) runs in request
  order; at most ``queued.max.requests`` requests may be waiting for their responses, after which the
  reader stops reading (back-pressure);
* the *writer* awaits the handler tasks strictly in request order and sends each response, so a
  long-polling Fetch holds back later responses on the same connection, as Kafka's muted channel does,
  while requests on other connections proceed;
* a handler that returns ``NO_RESPONSE`` (Produce with acks=0) writes nothing; one that returns
  ``CloseConnection`` (a failed acks=0 produce) closes the connection after the earlier responses;
* memory follows the bytes received, not the sizes announced: a large frame (``POOLED_FRAME_SIZE`` or
  more) is received into a buffer from the server's shared pool or one that doubles as bytes arrive,
  chunk by chunk within the broker-wide ``queued.max.request.bytes`` budget (``RequestMemory``), and
  idle connections hold no receive buffer (one shared buffer is read into only when a socket is
  readable); a client silent for ``connections.max.idle.ms``, between requests or inside one, is closed;
* when the client closes its side, ``disconnected`` completes: requests still waiting (a long-poll Fetch,
  an acks=all Produce) answer at once instead of holding the socket until their timeout;
* a frame over ``socket.request.max.bytes``, a request that cannot be decoded, an API version we do not
  serve (other than ApiVersions, which gets the v0 error body Kafka clients expect), or a handler that
  raises closes this connection with one log line naming the peer and the reason; other connections
  are unaffected;
* record data given as a file region is sent with ``os.sendfile`` straight from the segment file on
  PLAINTEXT connections (and TLS ones whose kernel took TX, kTLS); through user-space TLS it is read in
  chunks into a pooled buffer and encrypted (``broker.network.file_sender``).

Security (the listener's ``ListenerSecurity``; PLAINTEXT takes none of these paths):

* SSL and SASL_SSL: the accepted socket is an ``ssl.SSLSocket`` whose handshake runs first, on the loop,
  within ``handshake_timeout_s`` (a failure or timeout closes this connection with one log line); reads
  drain ``pending()`` before waiting on the fd, writes go through ``tls_socket.send_all``. An SSL listener's
  principal is the client certificate's mapped DN (``User:ANONYMOUS`` without one);
* SASL_PLAINTEXT and SASL_SSL: frames go to the connection's ``SaslAuthenticator`` until it authenticates
  (frames capped at ``sasl_max_receive_size`` meanwhile, the exchange bounded by ``handshake_timeout_s``);
  its replies are queued in request order like responses; a failed exchange closes the connection after
  ``failed_authentication_delay_ms``. Each request's ``RequestContext.principal`` is the connection's
  principal when it was read.

Fault injection (``broker.faults``): while ``services.faults.live`` a request is answered through
``FaultInjector.intercept`` (an injected error, some partitions failed, a delayed response - still in order);
otherwise it costs one attribute check. ``drop()`` closes the connection at once.

Quotas (``broker.network.throttling``): ``RequestContext.throttle(ms)`` mutes this connection: after the
throttled response (sent at once), no new request is read for ``ms`` (frames already read are served); while
a ``request_percentage`` quota is configured, handler time is recorded and may throttle too (KIP-219).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from broker.api import NO_RESPONSE, ClientSoftware, CloseConnection, RequestContext
from spark_kafkalog.protocol import (
    API_BY_KEY,
    ApiKey,
    DecodeError,
    ErrorCode,
    FrameDecoder,
    ProtocolError,
    UnsupportedVersionError,
    decode_request,
    encode_response,
    encode_response_parts,
)
from spark_kafkalog.protocol.frame_pool import POOLED_FRAME_SIZE
from spark_kafkalog.protocol.messages import RequestHeader
from spark_kafkalog.security.principal import ssl_principal

from .file_sender import RegionEndedEarly, SendBuffers, region_path, send_chunked, sendfile
from .request_memory import receive_large_frame
from .sasl_authenticator import AuthStep, SaslAuthenticator
from .throttling import ChannelMute, dispatch_frames, under_request_quota
from .tls_socket import handshake as tls_handshake
from .tls_socket import recv_into as tls_recv_into
from .tls_socket import send_all as tls_send_all

if TYPE_CHECKING:
    from broker.api import HandlerRegistry
    from broker.config import BrokerConfig
    from broker.security.listener_security import ListenerSecurity
    from broker.services import BrokerServices
    from spark_kafkalog.protocol.frame_pool import FramePool

    from .request_memory import RequestMemory

log = logging.getLogger("kafkalog.network")

_CLOSE = object()


class _CloseAfter:
    """Writer queue item: after the responses before it, wait ``delay_s`` then close (failed authentication)."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s


class _StopReading(Exception):
    """The reader is done (a failed authentication): the writer sends what is queued, then closes."""


def _complete(fut: asyncio.Future) -> None:
    """Reader/writer callback: the socket is ready; wake its waiter (once)."""
    if not fut.done():
        fut.set_result(None)


def _time_out(fut: asyncio.Future) -> None:
    """Timer callback: the socket stayed silent too long; its waiter raises ``TimeoutError``."""
    if not fut.done():
        fut.set_exception(TimeoutError())


class ConnectionClosed(Exception):
    """The connection is being closed; carries the reason for the log line."""


class ConnectionHost(Protocol):
    """What a connection uses of the server that accepted it (``SocketServer``): shared by all its connections."""

    config: BrokerConfig
    registry: HandlerRegistry
    services: BrokerServices
    recv_buffer: memoryview
    request_memory: RequestMemory
    frame_pool: FramePool
    send_buffers: SendBuffers
    ktls_detector: Callable[[socket.socket], bool]

    def security_of(self, listener: str) -> ListenerSecurity: ...


class ClientConnection:
    """Serves one accepted socket until the peer leaves, misbehaves, or the server stops."""

    def __init__(self, server: ConnectionHost, sock: socket.socket, peer: str, connection_id: int, listener: str):
        self.server = server
        self.sock = sock
        self.peer = peer
        self.connection_id = connection_id
        self.listener = listener
        self.loop = asyncio.get_running_loop()
        self._pending: asyncio.Queue = asyncio.Queue(maxsize=server.config["queued.max.requests"])
        self._in_flight: deque[asyncio.Task] = deque()
        self._stopping = False
        self.requests_served = 0
        self.client = ClientSoftware()  # filled by ApiVersions v3+
        self.client_id: str | None = None  # of the latest request (fault injection drops connections by it)
        self.disconnected: asyncio.Future = self.loop.create_future()
        self._reader_task: asyncio.Task | None = None
        self._pending_releases: list[bytearray] = []
        self.security = server.security_of(listener)
        self.tls = isinstance(sock, ssl.SSLSocket)
        self.ktls_tx = False  # the kernel encrypts what we write (kTLS): file regions go out with sendfile
        self.principal = "User:ANONYMOUS"
        self.authenticator: SaslAuthenticator | None = None
        self._decoder: FrameDecoder | None = None
        self._auth_timer: asyncio.TimerHandle | None = None
        self._read_waiter: asyncio.Future | None = None  # TLS: the reader's readability wait (woken by stop)
        self._mute = ChannelMute(self.loop)  # KIP-219: no request is read while a quota throttle lasts
        self._throttle = self._mute.throttle

    # -- lifecycle -------------------------------------------------------------------------------
    async def run(self) -> None:
        self._reader_task = asyncio.current_task()
        writer = asyncio.create_task(self._write_loop(), name=f"conn-{self.connection_id}-writer")
        reason = None
        try:
            if self.tls:
                await self._tls_handshake()
            if self.security.uses_sasl:
                self._start_authentication()
            reason = await self._read_loop()
        except _StopReading:
            reason = None
        except ConnectionClosed as e:
            reason = str(e)
        except (ConnectionError, OSError) as e:
            reason = f"socket error: {e}"
        except asyncio.CancelledError:
            reason = "server stopping"
            self._cancel_in_flight()
            writer.cancel()
            raise
        finally:
            if reason is not None and not self._stopping:
                log.info("closing connection from %s: %s", self.peer, reason)
            if not writer.done():
                if reason is None or self._stopping:  # orderly: let queued responses go out
                    await self._put(_CLOSE)
                    try:
                        await writer
                    except Exception:
                        pass
                else:
                    self._cancel_in_flight()
                    writer.cancel()
            if self._auth_timer is not None:
                self._auth_timer.cancel()
            self._close_socket()

    async def stop(self) -> None:
        """Stop reading new requests; responses to requests already read are still sent."""
        self._stopping = True
        self._mute.wake()

    def drop(self, reason: str) -> None:
        """Close this connection at once, without sending what is queued (fault injection; event loop)."""
        self._broken(reason)

    def shutdown_read(self) -> None:
        """End reading (server stop, after ``stop()``): the reader sees end-of-stream and ends in order.

        A plaintext socket is half-closed (SHUT_RD). A TLS one is not touched: OpenSSL answers an end of stream
        without close_notify with a fatal alert, after which the queued responses could not be written (and
        ``SSLSocket.shutdown`` would drop the TLS state); its reader is woken instead and, seeing ``_stopping``,
        reads no more.
        """
        if not self.tls:
            self.sock.shutdown(socket.SHUT_RD)
            return
        waiter = self._read_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- security --------------------------------------------------------------------------------
    async def _tls_handshake(self) -> None:
        sock = self.sock
        assert isinstance(sock, ssl.SSLSocket)
        timeout_s = self.security.handshake_timeout_s
        try:
            await tls_handshake(self.loop, sock, timeout_s)
        except TimeoutError:
            raise ConnectionClosed(f"TLS handshake on {self.listener} not complete within {timeout_s:g} s") from None
        except (ssl.SSLError, ConnectionError) as e:
            raise ConnectionClosed(f"TLS handshake on {self.listener} failed: {e}") from None
        if self.security.ktls:
            self.ktls_tx = self.server.ktls_detector(sock)
        if self.security.protocol == "SSL":
            try:
                der = sock.getpeercert(binary_form=True)
                self.principal = ssl_principal(der, self.security.ssl_principal_mapping_rules)
            except Exception as e:  # no rule matched, a certificate we cannot read: this connection only
                raise ConnectionClosed(f"no principal for the client certificate: {e}") from None

    def _start_authentication(self) -> None:
        metrics = self.server.services.metrics
        listener = self.listener

        def counted(mechanism: str, success: bool) -> None:
            metrics.authenticated(listener, mechanism, success=success)

        self.authenticator = SaslAuthenticator(self.security, self.peer, on_result=counted, monotonic=self.loop.time)
        timeout_s = self.security.handshake_timeout_s
        self._auth_timer = self.loop.call_later(timeout_s, self._authentication_timed_out, timeout_s)

    def _authentication_timed_out(self, timeout_s: float) -> None:
        auth = self.authenticator
        if auth is not None and not auth.authenticated and not self._stopping:
            self._broken(f"SASL authentication on {self.listener} not complete within {timeout_s:g} s")

    async def _authentication_step(self, step: AuthStep, frame: Any) -> None:
        """Carry out what the authenticator decided for ``frame`` (see ``AuthStep``)."""
        if step.close is not None and not step.delayed:
            raise ConnectionClosed(step.close)
        if step.dispatch:
            await self._dispatch_request(frame)
        if step.reply is not None:
            await self._put(self._ready([step.reply]))
        if step.close is not None:
            if not step.logged:
                log.info("closing connection from %s: %s", self.peer, step.close)
            await self._put(_CloseAfter(self.security.failed_authentication_delay_ms / 1000))
            raise _StopReading()
        auth = self.authenticator
        if auth is not None and auth.authenticated:
            self.principal = auth.principal
            if self._auth_timer is not None:
                self._auth_timer.cancel()
                self._auth_timer = None
            if self._decoder is not None:
                self._decoder.max_frame_size = self.server.config["socket.request.max.bytes"]

    def _cancel_in_flight(self) -> None:
        for task in self._in_flight:
            task.cancel()
        self._in_flight.clear()

    def _close_socket(self) -> None:
        self._peer_gone()
        try:
            self.sock.close()
        except OSError:
            pass

    async def _put(self, item: Any) -> None:
        await self._pending.put(item)

    # -- reading ---------------------------------------------------------------------------------
    async def _read_loop(self) -> str | None:
        cfg = self.server.config
        decoder = FrameDecoder(cfg["socket.request.max.bytes"])
        if self.authenticator is not None:  # CVE-2022-34917: frames before authentication are small
            decoder.max_frame_size = min(decoder.max_frame_size, self.security.sasl_max_receive_size)
        self._decoder = decoder
        view = self.server.recv_buffer  # shared by all connections: each read is consumed before any await
        idle_s = cfg["connections.max.idle.ms"] / 1000
        while not self._stopping:
            if self._mute.until:  # throttled (quotas): read nothing until the mute ends
                await self._mute.wait()
                continue
            idle = self._pending.empty() and not self._in_flight
            n = await self._recv_into(view, idle_s if idle else None, self._mute)
            if n == 0:
                self._peer_gone()
                return None  # the peer closed its side: an orderly end
            try:
                frames = decoder.feed(view[:n])
            except DecodeError as e:
                raise ConnectionClosed(f"bad frame: {e}") from None
            # each frame its own copy: waiting between them (a throttle, KIP-219) leaves the shared buffer free
            await dispatch_frames(frames, self._dispatch, self._mute, self.server.services.quotas)
            partial = decoder.take_partial_frame(POOLED_FRAME_SIZE)
            if partial is not None:
                buffer, size = await self._receive_large_frame(*partial, idle_s)
                target = memoryview(buffer)
                frame_view = target[:size]
                target.release()
                await self._dispatch(frame_view, pooled=buffer)
        return None

    async def _recv_into(self, view: memoryview, timeout_s: float | None, mute: ChannelMute | None = None) -> int:
        """Receive into ``view`` once data is there (a wait longer than ``timeout_s`` closes the connection); with
        ``mute``, a throttle that began during the wait holds the read until it ends (0 if the server stops)."""
        if self.tls:
            return await self._tls_recv_into(view, timeout_s, mute)
        while True:
            try:
                return self.sock.recv_into(view)
            except (BlockingIOError, InterruptedError):
                pass
            await self._readable(timeout_s)
            if mute is not None and mute.until:
                await mute.wait()
                if self._stopping:
                    return 0

    async def _tls_recv_into(self, view: memoryview, timeout_s: float | None, mute: ChannelMute | None = None) -> int:
        """``_recv_into`` through TLS (``tls_socket.recv_into``: every record OpenSSL can decrypt without waiting, in
        one go); 0 at the peer's end of stream, or when the server stops (``shutdown_read``) while it waits."""

        async def readable() -> bool:
            if self._stopping:
                return False  # the server is stopping (shutdown_read): read no more
            await self._readable(timeout_s)
            if mute is not None and mute.until:
                await mute.wait()
            return True

        return await tls_recv_into(self.sock, view, readable)  # type: ignore[arg-type]  # self.tls: an SSLSocket

    async def _readable(self, timeout_s: float | None) -> None:
        """Wait until the socket has data (or EOF); longer than ``timeout_s`` closes the connection.

        Nothing is allocated for a read until this returns, so a silent client costs no buffer. Through TLS,
        bytes OpenSSL already decrypted (``pending()``) do not make the fd readable: they return at once.
        """
        if self.tls and self.sock.pending():  # type: ignore[attr-defined]
            return
        fut = self.loop.create_future()
        if self.tls:
            self._read_waiter = fut
        fd = self.sock.fileno()
        self.loop.add_reader(fd, _complete, fut)
        timer = self.loop.call_later(timeout_s, _time_out, fut) if timeout_s is not None else None
        try:
            await fut
        except TimeoutError:
            raise ConnectionClosed(f"idle for more than {self.server.config['connections.max.idle.ms']} ms") from None
        finally:
            self.loop.remove_reader(fd)
            if timer is not None:
                timer.cancel()

    async def _receive_large_frame(self, head: bytearray, size: int, idle_s: float) -> tuple[bytearray, int]:
        """Receive the rest of a large frame within the broker-wide budget (``request_memory.receive_large_frame``);
        the buffer (the frame at its start) and ``size``."""

        def closed() -> NoReturn:
            self._peer_gone()
            raise ConnectionClosed(f"connection closed in the middle of a {size}-byte request")

        receiving = receive_large_frame(
            self.server.request_memory,
            self.server.frame_pool,
            self,
            head,
            size,
            readable=lambda: self._readable(idle_s),
            recv_into=lambda view: self._recv_into(view, idle_s),
            closed=closed,
        )
        del head  # a pooled buffer holds the frame: the first bytes' buffer may go
        return await receiving, size

    def _peer_gone(self) -> None:
        """The client closed its side: requests still waiting (long polls, acks=all) give up at once."""
        if not self.disconnected.done():
            self.disconnected.set_result(None)

    async def _dispatch(self, frame, pooled: bytearray | None = None) -> None:
        """Decode and start one request; ``pooled`` is the pool buffer ``frame`` views, returned after the response.

        While a SASL exchange is under way the frame goes to the authenticator instead.
        """
        auth = self.authenticator
        if auth is not None and auth.intercepts:
            if pooled is not None:  # exchange frames are small: copy, and give the pooled buffer back now
                data = bytes(frame)
                frame.release()
                self.server.frame_pool.release(pooled)
                frame, pooled = data, None
            await self._authentication_step(auth.on_frame(frame), frame)
            return
        await self._dispatch_request(frame, pooled)

    async def _dispatch_request(self, frame, pooled: bytearray | None = None) -> None:
        try:
            request = decode_request(frame)
        except UnsupportedVersionError as e:
            header: RequestHeader = e.header  # type: ignore[attr-defined]
            if header.api_key == ApiKey.API_VERSIONS:
                await self._put(self._ready(self._api_versions_error(header)))
                return
            raise ConnectionClosed(f"unsupported request: {e}") from None
        except DecodeError as e:
            raise ConnectionClosed(f"undecodable request: {e}") from None
        header = request.header
        entry = self.server.registry.get(header.api_key)
        if entry is None or not entry.min_version <= header.api_version <= entry.max_version:
            if header.api_key == ApiKey.API_VERSIONS:
                await self._put(self._ready(self._api_versions_error(header)))
                return
            raise ConnectionClosed(
                f"{request.api.name} v{header.api_version} is not served "
                f"(served: {'none' if entry is None else f'{entry.min_version}-{entry.max_version}'})"
            )
        auth = self.authenticator
        if auth is not None and auth.authenticated:
            step = auth.on_request(request)
            if step is not None:
                if pooled is not None:
                    frame.release()
                    self.server.frame_pool.release(pooled)
                await self._authentication_step(step, frame)
                return
        ctx = RequestContext(
            self.server.services,
            header,
            self.peer,
            self.listener,
            self.connection_id,
            disconnected=self.disconnected,
            client=self.client,
            principal=self.principal,
            security_protocol=self.security.protocol,
            throttle=self._throttle,
        )
        received = self.loop.time()
        self.client_id = header.client_id
        faults = ctx.services.faults

        def start() -> Coroutine[Any, Any, Any]:
            # Called when the task first runs, so a task cancelled before it starts (the connection closed)
            # leaves no handler coroutine that was never awaited.
            if faults.live:  # fault injection (broker.faults): may answer, trim or delay this request
                handling = faults.intercept(ctx, request, entry.handler)
            else:
                handling = entry.handler(ctx, request.body)
            return under_request_quota(ctx, request.body, handling, self.loop.time)  # may time it and throttle

        handling = self._timed(start, request.api.name, header.api_version, received, ctx.services.metrics)
        task = self.loop.create_task(handling, name=f"{request.api.name}-{header.correlation_id}")
        self._in_flight.append(task)
        if pooled is not None:
            frame.release()  # the request's fields hold their own views; the pool checks they are gone
            buf = pooled
            task.add_done_callback(lambda _t: self._pending_releases.append(buf))
        await self._put((request, task))

    async def _timed(
        self, start: Callable[[], Coroutine[Any, Any, Any]], name: str, version: int, received: float, metrics
    ) -> Any:
        """Run a handler (``start()`` makes its coroutine) and record its request's queue and handling time (the
        write wait is not counted: a response waits there behind the earlier ones of its connection, which is
        the client's pipelining)."""
        started = self.loop.time()
        try:
            return await start()
        finally:
            metrics.request_done(name, version, self.loop.time() - received, started - received)

    def _ready(self, frame_parts: list) -> tuple[None, asyncio.Future]:
        fut = self.loop.create_future()
        fut.set_result(frame_parts)
        return (None, fut)

    def _api_versions_error(self, header: RequestHeader) -> list:
        """The v0 body Kafka clients expect for an ApiVersions version we do not serve."""
        api = API_BY_KEY[ApiKey.API_VERSIONS]
        entry = self.server.registry.get(ApiKey.API_VERSIONS)
        assert entry is not None, "the handler registry always serves ApiVersions"
        body = api.Response(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                api.Response.ApiVersion(
                    api_key=ApiKey.API_VERSIONS, min_version=entry.min_version, max_version=entry.max_version
                )
            ],
        )
        return [encode_response(ApiKey.API_VERSIONS, 0, header.correlation_id, body, framed=True)]

    # -- writing ---------------------------------------------------------------------------------
    async def _write_loop(self) -> None:
        while True:
            item = await self._pending.get()
            if item is _CLOSE:
                return
            if isinstance(item, _CloseAfter):
                await asyncio.sleep(item.delay_s)
                self._stopping = True
                self._cancel_in_flight()
                self._close_socket()
                return
            request, task = item
            try:
                result = await task
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a handler bug must not take the broker down: drop this client only
                log.error(
                    "%s handler failed for %s", request.api.name if request else "request", self.peer, exc_info=True
                )
                self._broken(f"handler failed: {e!r}", error=True)
                return
            finally:
                if self._in_flight and self._in_flight[0] is task:
                    self._in_flight.popleft()
            if request is None:  # a pre-encoded frame
                parts = result
            else:
                self.requests_served += 1
                if result is NO_RESPONSE:
                    del item, request, task, result
                    self._recycle()
                    continue
                if isinstance(result, CloseConnection):
                    self._broken(result.reason)
                    return
                try:
                    parts = encode_response_parts(
                        request.header.api_key, request.header.api_version, request.header.correlation_id, result
                    )
                except ProtocolError as e:
                    self._broken(f"cannot encode {request.api.name} response: {e}", error=True)
                    return
            try:
                await self._send_parts(parts)
            except (ConnectionError, OSError, ConnectionClosed) as e:
                self._broken(f"send failed: {e}")
                return
            del item, request, task, result, parts
            self._recycle()

    def _recycle(self) -> None:
        """Return the frame buffers of answered requests to the pool (each only if no view of it is left)."""
        while self._pending_releases:
            self.server.frame_pool.release(self._pending_releases.pop())

    def _broken(self, reason: str, *, error: bool = False) -> None:
        """The writer cannot go on: log once, drop pending work, close the socket (the reader then ends)."""
        if not self._stopping:
            (log.error if error else log.info)("closing connection from %s: %s", self.peer, reason)
        self._stopping = True
        self._cancel_in_flight()
        self._close_socket()
        reader = self._reader_task
        if reader is not None and reader is not asyncio.current_task() and not reader.done():
            reader.cancel()  # it may be waiting on the socket just closed: no read would ever wake it

    async def _send_parts(self, parts: list) -> None:
        send = self._tls_send_all if self.tls else self._plain_send_all
        pending = bytearray()
        for part in parts:
            if isinstance(part, (bytes, bytearray, memoryview)):
                pending += part
                continue
            if pending:
                await send(pending)
                pending = bytearray()
            await self._sendfile(part)
        if pending:
            await send(pending)

    async def _plain_send_all(self, data: Any) -> None:
        await self.loop.sock_sendall(self.sock, data)

    async def _tls_send_all(self, data: Any) -> None:
        await tls_send_all(self.loop, self.sock, data)  # type: ignore[arg-type]

    async def _sendfile(self, region: Any) -> None:
        """Send a file region (``fileno()``, ``position``, ``len()``): os.sendfile on plaintext and kTLS sockets,
        read-and-encrypt in pooled chunks through user-space TLS; a region that ends early closes the connection."""
        try:
            if region_path(self.tls, self.ktls_tx) == "sendfile":
                await sendfile(self.sock.fileno(), region, self._writable)
            else:
                await send_chunked(region, self.server.send_buffers, self._tls_send_all)
        except RegionEndedEarly as e:
            raise ConnectionClosed(str(e)) from None

    async def _writable(self) -> None:
        fut = self.loop.create_future()
        fd = self.sock.fileno()
        self.loop.add_writer(fd, _complete, fut)
        try:
            await fut
        finally:
            self.loop.remove_writer(fd)
