"""Blocking socket transport for ``KafkaConnection`` (used in Spark executors, the CLI and the producer).

``SocketConnection.open(host, port, ...)`` connects and completes the ApiVersions handshake;
``request`` sends and waits; ``send`` + ``wait`` pipeline several requests on one connection (responses
come back in order, and waiting for a later request completes the earlier ones first).

Frames are read without a frame decoder copy: the 4-byte size, then the payload straight into a buffer of
that size (``recv_into``), with a small read-ahead buffer so that pipelined small responses cost one
system call for several frames. Frames of ``POOLED_FRAME_SIZE`` or more (fetch responses) are received
into buffers lent by a ``FramePool``: a buffer is reused for a later response once no view of the earlier
one (a fetched batch, an Arrow buffer over it) is alive, so whoever keeps record bytes must keep a view.
A request that gets no answer within its timeout closes the connection (its response could otherwise be
mistaken for a later one) and raises ``KafkaTimeoutError``.

TLS (``security.protocol`` SSL or SASL_SSL): the TCP socket is wrapped with the client's ``SSLContext``
(``server_hostname`` = the broker's host, for SNI, also when the host name is not checked) and the TLS
handshake completes within ``connect_timeout``; a certificate that is not trusted or names another host,
or a port that does not speak TLS, raises ``KafkaSslError`` (not retriable) naming the broker. Over TLS,
gathered writes join their buffers (an ``SSLSocket`` has no ``sendmsg``) and ``poll`` also reads the bytes
OpenSSL has already decrypted (``pending()``), which would never make the socket readable again. SASL runs
inside ``KafkaConnection``; ``open`` returns once it succeeded (``KafkaAuthenticationError`` otherwise).

Not thread-safe: one thread uses a connection at a time (``KafkaClient`` serialises access with its
lock; the producer's sender thread owns its own connections).
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError, KafkaConnectionError, KafkaSslError, KafkaTimeoutError
from spark_kafkalog.client.network.connection import InFlightRequest, KafkaConnection
from spark_kafkalog.client.network.versions import ApiVersionTable, api_name
from spark_kafkalog.protocol import DEFAULT_MAX_FRAME_SIZE
from spark_kafkalog.protocol.frame_pool import POOLED_FRAME_SIZE, FramePool

__all__ = ["SocketConnection", "format_address", "split_host_port"]

_SIZE = struct.Struct(">i")
_READ_AHEAD = 64 * 1024
_IOV_MAX = 1024  # Linux's limit on the buffers of one sendmsg
_TLS_WRITE = 256 * 1024  # over TLS, small buffers are joined up to this size per write


def tls_failure_reason(error: ssl.SSLError) -> str:
    """OpenSSL's reason for a failed TLS handshake, in words (the certificate check's message first)."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"certificate verify failed: {error.verify_message}"
    reason = getattr(error, "reason", None)
    if reason == "WRONG_VERSION_NUMBER":
        return "the port does not speak TLS (WRONG_VERSION_NUMBER): is it a PLAINTEXT listener?"
    return str(reason or error).replace("_", " ").lower()


def split_host_port(address: str) -> tuple[str, int]:
    """``"host:port"`` (``"[v6]:port"`` too) as ``(host, port)``."""
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host.strip("[]"), int(port)


def format_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 host in brackets (the inverse of ``split_host_port``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _connect_failure(error: OSError, timeout: float) -> tuple[str, bool]:
    """``(reason, refused)`` for a failed ``connect``: refused when it failed at once (see
    ``KafkaConnectionError.refused``), not when it timed out."""
    if isinstance(error, (socket.timeout, TimeoutError)):
        return f"connect timed out after {timeout:.1f} s (socket.connection.setup.timeout.ms)", False
    if isinstance(error, ConnectionRefusedError):
        return "connection refused", True
    if isinstance(error, socket.gaierror):
        return f"unknown host: {error.strerror}", True
    return (error.strerror or str(error)).lower(), True


class SocketConnection:
    """One blocking TCP connection to a broker, driven by a sans-IO ``KafkaConnection``."""

    def __init__(self, sock: socket.socket, protocol: KafkaConnection) -> None:
        self._sock = sock
        self._tls = isinstance(sock, ssl.SSLSocket)
        self.protocol = protocol
        self._rbuf = bytearray()
        self._pool = FramePool()
        self._failed: list[InFlightRequest] = []  # requests failed by a connection loss, not yet reported
        self.bytes_received = 0
        self.bytes_sent = 0

    @classmethod
    def open(
        cls,
        host: str,
        port: int,
        *,
        node_id: int | None = None,
        client_id: str | None = "kafkalog",
        connect_timeout: float = 10.0,
        request_timeout: float = 30.0,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        send_buffer_bytes: int = -1,
        receive_buffer_bytes: int = -1,
        security: Any = None,
    ) -> SocketConnection:
        """Connect (TLS when ``security`` says so), complete the ApiVersions handshake and SASL.

        ``security`` is a ``ClientSecurity`` (None: PLAINTEXT). Raises ``KafkaConnectionError`` naming the
        broker, the address and why (``reason``, ``refused``: see ``errors.KafkaConnectionError``), also
        when the handshake is not answered within ``request_timeout`` seconds; ``KafkaSslError`` when the
        TLS handshake fails, ``KafkaAuthenticationError`` when SASL does (neither is retriable).
        """
        address = format_address(host, port)
        peer = f"{node_id if node_id is not None and node_id >= 0 else 'bootstrap'} ({address})"
        try:
            sock = socket.create_connection((host, port), timeout=connect_timeout)
        except OSError as e:
            reason, refused = _connect_failure(e, connect_timeout)
            raise KafkaConnectionError(
                f"cannot connect to broker {peer}: {reason}",
                broker=peer,
                address=address,
                reason=reason,
                refused=refused,
            ) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if send_buffer_bytes > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer_bytes)
            if receive_buffer_bytes > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer_bytes)
        except OSError:
            pass
        if security is not None and security.uses_tls:
            sock = _wrap_tls(sock, security.ssl_context, host, peer, address, connect_timeout)
        protocol = KafkaConnection(
            peer, client_id=client_id, max_frame_size=max_frame_size, node_id=node_id, security=security
        )
        conn = cls(sock, protocol)
        try:
            conn._handshake(request_timeout)
        except KafkaConnectionError as e:  # closed, reset, or an answer that is not Kafka's
            conn.close()
            detail = str(e).replace(f"connection to broker {peer} ", "connection ").replace(f"broker {peer} ", "")
            reason = f"ApiVersions handshake failed: {detail}; is it a Kafka broker?"
            raise KafkaConnectionError(
                f"cannot connect to broker {peer}: {reason}", broker=peer, address=address, reason=reason, refused=True
            ) from None
        except KafkaTimeoutError:
            conn.close()
            reason = f"no answer to the ApiVersions handshake within {request_timeout:.1f} s (request.timeout.ms)"
            raise KafkaConnectionError(
                f"cannot connect to broker {peer}: {reason}", broker=peer, address=address, reason=reason
            ) from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _handshake(self, timeout: float) -> None:
        protocol = self.protocol
        protocol.start_handshake()
        deadline = time.monotonic() + timeout
        while not protocol.ready:
            self._flush()
            if protocol.closed:
                raise protocol.close_reason or KafkaConnectionError(f"handshake with {protocol.peer} failed")
            request = protocol.oldest_in_flight()
            if request is None:  # pragma: no cover - the handshake always has a request in flight
                raise KafkaConnectionError(f"handshake with {protocol.peer} stalled", broker=protocol.peer)
            self._read_one(deadline, request)
            if protocol.closed:
                raise protocol.close_reason or KafkaConnectionError(f"handshake with {protocol.peer} failed")

    # properties ------------------------------------------------------------------------------------
    @property
    def peer(self) -> str:
        return self.protocol.peer

    @property
    def node_id(self) -> int | None:
        return self.protocol.node_id

    @property
    def versions(self) -> ApiVersionTable:
        assert self.protocol.versions is not None
        return self.protocol.versions

    @property
    def closed(self) -> bool:
        return self.protocol.closed

    @property
    def in_flight(self) -> int:
        return self.protocol.in_flight

    def fileno(self) -> int:
        return self._sock.fileno()

    # requests --------------------------------------------------------------------------------------
    def send(self, api_key: int, body: Any, **kwargs: Any) -> InFlightRequest | None:
        """Send a request (see ``KafkaConnection.send`` for the keyword arguments) without waiting."""
        request = self.protocol.send(api_key, body, **kwargs)
        self._flush()
        return request

    def wait(self, request: InFlightRequest, timeout: float) -> Any:
        """Read responses until ``request`` completes; returns its body or raises its error."""
        deadline = time.monotonic() + timeout
        while not request.done:
            if self.protocol.closed:
                break
            self._read_one(deadline, request)
        return request.result()

    def request(self, api_key: int, body: Any, *, timeout: float, **kwargs: Any) -> Any:
        """Send a request and wait for its response body."""
        request = self.send(api_key, body, **kwargs)
        if request is None:
            return None
        return self.wait(request, timeout)

    def poll(self) -> list[InFlightRequest]:
        """Read the responses that are available now without blocking for new ones (for select loops).

        Call when the socket is readable: a frame that has started arriving is read whole. Returns the
        completed requests, including those failed because the connection broke.
        """
        done: list[InFlightRequest] = []
        try:
            while True:
                self._sock.settimeout(0.0)
                try:
                    chunk = self._sock.recv(_READ_AHEAD)
                except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    chunk = None  # over TLS: only part of a record has arrived
                except OSError as e:
                    self._lost(e)
                    chunk = None
                if chunk == b"":
                    self._lost(None)
                elif chunk:
                    self._rbuf += chunk
                    self.bytes_received += len(chunk)
                    deadline = time.monotonic() + 30.0
                    while self._rbuf and not self.protocol.closed:
                        done.extend(self._read_one(deadline, self.protocol.oldest_in_flight()))
                # bytes OpenSSL decrypted already never make the socket readable: read them now
                if not (chunk and self._tls and not self.protocol.closed and self._tls_pending()):
                    break
        except KafkaClientError:
            pass  # the connection is closed (lost or timed out); its requests are reported below
        done.extend(self._take_failed())
        return done

    def _tls_pending(self) -> int:
        sock = self._sock
        return sock.pending() if isinstance(sock, ssl.SSLSocket) else 0

    def close(self, reason: BaseException | None = None) -> list[InFlightRequest]:
        """Close the socket; returns the requests still in flight (or failed earlier and not yet
        reported), failed with ``reason``."""
        failed = self.protocol.close(reason) if not self.protocol.closed else []
        try:
            self._sock.close()
        except OSError:
            pass
        return self._take_failed() + failed

    def _take_failed(self) -> list[InFlightRequest]:
        failed, self._failed = self._failed, []
        return failed

    # I/O -------------------------------------------------------------------------------------------
    def _flush(self) -> None:
        chunks = self.protocol.chunks_to_send()
        if not chunks:
            return
        try:
            self._sock.settimeout(None)
            if self._tls:
                self._send_tls(chunks)
            elif len(chunks) == 1:
                self._sock.sendall(chunks[0])
                self.bytes_sent += len(chunks[0])
            else:
                self._send_gathered(chunks)
        except OSError as e:
            self._lost(e)
            raise self.protocol.close_reason from None  # type: ignore[misc]

    def _send_tls(self, chunks: list[Any]) -> None:
        """Send over TLS: small buffers joined into writes of up to ``_TLS_WRITE`` bytes, large ones as they
        are (OpenSSL copies into its records anyway)."""
        pending: list[Any] = []
        size = 0
        for chunk in chunks:
            n = memoryview(chunk).nbytes
            if size and size + n > _TLS_WRITE:
                self._sock.sendall(b"".join(pending))
                pending, size = [], 0
            if n >= _TLS_WRITE:
                self._sock.sendall(chunk)
            else:
                pending.append(chunk)
                size += n
            self.bytes_sent += n
        if pending:
            self._sock.sendall(pending[0] if len(pending) == 1 else b"".join(pending))

    def _send_gathered(self, chunks: list[Any]) -> None:
        """Send every chunk in order with as few ``sendmsg`` calls as the kernel allows (at most
        ``_IOV_MAX`` buffers a call), resuming inside a chunk after a partial write."""
        views = [memoryview(c).cast("B") for c in chunks]
        i = 0
        while i < len(views):
            sent = self._sock.sendmsg(views[i : i + _IOV_MAX])
            self.bytes_sent += sent
            while i < len(views) and sent >= views[i].nbytes:
                sent -= views[i].nbytes
                i += 1
            if sent:
                views[i] = views[i][sent:]

    def _lost(self, error: OSError | None) -> None:
        reason: KafkaClientError
        if isinstance(error, ssl.SSLError) and not isinstance(error, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
            # e.g. TLS 1.3: the broker refuses our certificate with an alert after the handshake
            reason = KafkaSslError(f"TLS with broker {self.peer} failed: {tls_failure_reason(error)}", broker=self.peer)
        else:
            text = f"connection to broker {self.peer} lost" + (f": {error}" if error else " (closed by the broker)")
            reason = KafkaConnectionError(text, broker=self.peer)
        self._failed.extend(self.protocol.close(reason))
        try:
            self._sock.close()
        except OSError:
            pass

    def _recv_into_buffer(self, deadline: float, waiting_for: InFlightRequest | None) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            self._timed_out(waiting_for)
        self._sock.settimeout(remaining)
        try:
            chunk = self._sock.recv(_READ_AHEAD)
        except TimeoutError:
            self._timed_out(waiting_for)
        except OSError as e:
            self._lost(e)
            return
        if not chunk:
            self._lost(None)
            return
        self._rbuf += chunk
        self.bytes_received += len(chunk)

    def _timed_out(self, waiting_for: InFlightRequest | None) -> None:
        if waiting_for is None:
            text = f"no answer from broker {self.peer} in time"
        else:
            waited = time.monotonic() - waiting_for.sent_at
            text = (
                f"no answer to {api_name(waiting_for.api_key)} v{waiting_for.version} from broker {self.peer} "
                f"within {waited:.1f} s"
            )
        error = KafkaTimeoutError(text, broker=self.peer)
        self._failed.extend(self.protocol.close(error))
        try:
            self._sock.close()
        except OSError:
            pass
        raise error

    def _read_one(self, deadline: float, waiting_for: InFlightRequest | None) -> list[InFlightRequest]:
        """Read exactly one frame and hand it to the protocol; returns the requests it completed."""
        while len(self._rbuf) < 4:
            self._recv_into_buffer(deadline, waiting_for)
            if self.protocol.closed:
                return []
        size = _SIZE.unpack_from(self._rbuf, 0)[0]
        failed = self.protocol.check_frame_size(size)
        if self.protocol.closed:
            self._sock.close()
            return failed
        have = len(self._rbuf) - 4
        if have >= size:
            frame: bytearray | memoryview = self._rbuf[4 : 4 + size]
            del self._rbuf[: 4 + size]
        else:
            if size >= POOLED_FRAME_SIZE:
                frame = view = memoryview(self._pool.lend(size))[:size]
            else:
                frame = bytearray(size)
                view = memoryview(frame)
            view[:have] = memoryview(self._rbuf)[4:]
            self._rbuf.clear()
            pos = have
            while pos < size:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._timed_out(waiting_for)
                self._sock.settimeout(remaining)
                try:
                    n = self._sock.recv_into(view[pos:])
                except TimeoutError:
                    self._timed_out(waiting_for)
                except OSError as e:
                    self._lost(e)
                    return []
                if n == 0:
                    self._lost(None)
                    return []
                pos += n
                self.bytes_received += n
        done = self.protocol.receive_frame(frame)
        if self.protocol.closed:
            try:
                self._sock.close()
            except OSError:
                pass
        elif self.protocol.has_data_to_send:  # the next SASL token, or requests held during re-authentication
            self._flush()
        return done


def _wrap_tls(
    sock: socket.socket, context: ssl.SSLContext, host: str, peer: str, address: str, timeout: float
) -> ssl.SSLSocket:
    """The TLS handshake over a connected socket (within ``timeout``); raises ``KafkaSslError`` or, for a
    timeout or a lost connection, a retriable ``KafkaConnectionError``."""
    try:
        sock.settimeout(timeout)
        return context.wrap_socket(sock, server_hostname=host)
    except ssl.SSLError as e:
        sock.close()
        if isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
            reason = "the broker closed the connection during the TLS handshake"
            raise KafkaConnectionError(
                f"cannot connect to broker {peer}: {reason}", broker=peer, address=address, reason=reason
            ) from None
        raise KafkaSslError(
            f"TLS handshake with broker {peer} failed: {tls_failure_reason(e)}", broker=peer, address=address
        ) from None
    except OSError as e:
        sock.close()
        if isinstance(e, (socket.timeout, TimeoutError)):
            reason = f"TLS handshake timed out after {timeout:.1f} s (socket.connection.setup.timeout.ms)"
        else:
            reason = f"TLS handshake failed: {(e.strerror or str(e)).lower()}"
        raise KafkaConnectionError(
            f"cannot connect to broker {peer}: {reason}", broker=peer, address=address, reason=reason
        ) from None
