"""A small asyncio HTTP/1.1 server for the Schema Registry's REST API (``HttpServer``), on the broker's event loop.

What it speaks (RFC 9112, the part REST clients use):

* request line ``METHOD SP request-target SP HTTP/1.x``; header fields ``name: value`` (names case-insensitive,
  repeated fields joined with ``", "``); the head (request line + fields) at most ``max_head_bytes``;
* bodies by ``Content-Length`` or ``Transfer-Encoding: chunked`` (chunk extensions ignored, trailers read and
  dropped), at most ``max_body_bytes`` (larger: 413 and the connection closes); both at once, a bad length or
  an unknown transfer coding: 400 and close;
* keep-alive: HTTP/1.1 keeps the connection unless ``Connection: close``; HTTP/1.0 closes unless
  ``Connection: keep-alive``; ``Expect: 100-continue`` is answered with ``100 Continue`` before the body is read;
* HEAD is answered as GET without the body; an ``OPTIONS`` request is the handler's to answer (routes answer
  ``Allow``); a malformed request is answered 400 (``{"error_code": 400, "message": ...}``) and only that
  connection closes;
* timeouts: ``idle_timeout_s`` between requests on a kept-alive connection (closed silently),
  ``request_timeout_s`` for reading one whole request (408 and close).

TLS: pass an ``ssl.SSLContext`` (server side); asyncio performs the handshake (``handshake_timeout_s``).

Concurrency: one task per connection, requests on a connection answered in order (no pipelining beyond what
the stream holds); the handler is a coroutine run on the server's loop and must not block it. ``stop()`` stops
accepting, lets requests in flight finish for up to ``grace_s``, then closes every connection; idempotent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["HttpError", "HttpRequest", "HttpResponse", "HttpServer", "read_request", "render_response"]

log = logging.getLogger("kafkalog.schema_registry.http")

JSON_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class HttpError(Exception):
    """A request that cannot be read: answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class HttpRequest:
    """One request. ``path`` is the target's path, not yet percent-decoded, split into ``segments`` (decoded);
    ``query`` maps each parameter to its values (decoded, in order); ``headers`` by lower-case name."""

    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes = b""
    peer: str = ""
    principal: str = "User:ANONYMOUS"
    """Who sent it (``auth``: ``User:<name>`` after basic authentication)."""

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def segments(self) -> list[str]:
        """The path's segments, each percent-decoded (``/subjects/a%2Fb`` -> ``["subjects", "a/b"]``)."""
        return [unquote(s) for s in self.path.split("/") if s != ""]

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query, keep_blank_values=True)

    def param(self, name: str, default: str | None = None) -> str | None:
        """The last value of query parameter ``name``, or ``default``."""
        values = self.query.get(name)
        return values[-1] if values else default

    @property
    def keep_alive(self) -> bool:
        tokens = {t.strip().lower() for t in self.headers.get("connection", "").split(",")}
        if self.version == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens


@dataclass
class HttpResponse:
    """One answer: status, body bytes and extra header fields (Content-Length and Connection are added)."""

    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def json(cls, status: int, value: object, headers: list[tuple[str, str]] | None = None) -> HttpResponse:
        body = json.dumps(value, separators=(",", ":")).encode()
        return cls(status, body, [("Content-Type", JSON_CONTENT_TYPE), *(headers or [])])

    @classmethod
    def error(cls, status: int, code: int, message: str, headers: list[tuple[str, str]] | None = None) -> HttpResponse:
        """Confluent's error body ``{"error_code": code, "message": message}``."""
        return cls.json(status, {"error_code": code, "message": message}, headers)


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


@dataclass(frozen=True)
class Limits:
    max_head_bytes: int = 64 * 1024
    max_body_bytes: int = 16 * 1024 * 1024


DEFAULT_LIMITS = Limits()


async def _read_line(reader: asyncio.StreamReader, budget: list[int]) -> bytes:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise HttpError(431, "Request header fields too large") from None
    budget[0] -= len(line)
    if budget[0] < 0:
        raise HttpError(431, "Request header fields too large")
    return line


async def read_request(
    reader: asyncio.StreamReader, limits: Limits = DEFAULT_LIMITS, *, peer: str = ""
) -> HttpRequest | None:
    """Read one request from ``reader``; None at a clean end of stream before a request starts.

    Raises ``HttpError`` for a malformed or too large request, ``asyncio.IncompleteReadError`` when the
    stream ends inside one. Empty lines before the request line are skipped (RFC 9112 2.2)."""
    budget = [limits.max_head_bytes]
    while True:
        try:
            line = await _read_line(reader, budget)
        except asyncio.IncompleteReadError as e:
            if not e.partial.strip():
                return None
            raise
        if line.strip():
            break
    try:
        text = line.decode("ascii").rstrip("\r\n")
    except UnicodeDecodeError:
        raise HttpError(400, "Bad request line: not ASCII") from None
    parts = text.split(" ")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise HttpError(400, f"Bad request line {text[:100]!r}")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(505 if version.startswith("HTTP/") else 400, f"Unsupported protocol version {version[:20]!r}")
    if not method.isalpha() or not method.isupper():
        raise HttpError(400, f"Bad method {method[:20]!r}")
    if not target.startswith("/"):
        raise HttpError(400, f"Bad request target {target[:100]!r}: expected an absolute path")
    headers = await _read_fields(reader, budget)
    request = HttpRequest(method, target, version, headers, peer=peer)
    return request


async def _read_fields(reader: asyncio.StreamReader, budget: list[int]) -> dict[str, str]:
    headers: dict[str, str] = {}
    while True:
        line = await _read_line(reader, budget)
        if line in (b"\r\n", b"\n"):
            return headers
        try:
            text = line.decode("latin-1").rstrip("\r\n")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes everything
            raise HttpError(400, "Bad header field") from None
        name, sep, value = text.partition(":")
        if not sep or not name or name != name.strip() or " " in name:
            raise HttpError(400, f"Bad header field {text[:100]!r}")
        key = name.lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value


async def read_body(reader: asyncio.StreamReader, request: HttpRequest, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Read ``request``'s body (Content-Length or chunked) from ``reader``; ``HttpError`` 400/413/501."""
    headers = request.headers
    coding = headers.get("transfer-encoding")
    length = headers.get("content-length")
    if coding is not None:
        if length is not None:
            raise HttpError(400, "Both Transfer-Encoding and Content-Length")
        if [c.strip().lower() for c in coding.split(",")] != ["chunked"]:
            raise HttpError(501, f"Unsupported transfer coding {coding[:50]!r}")
        return await _read_chunked(reader, limits)
    if length is None:
        return b""
    if not length.isdigit() or len(length) > 18 or len({v.strip() for v in length.split(",")}) != 1:
        raise HttpError(400, f"Bad Content-Length {length[:30]!r}")
    size = int(length)
    if size > limits.max_body_bytes:
        raise HttpError(413, f"Request body of {size} bytes is larger than the {limits.max_body_bytes} allowed")
    return await reader.readexactly(size)


async def _read_chunked(reader: asyncio.StreamReader, limits: Limits) -> bytes:
    out = bytearray()
    budget = [limits.max_head_bytes]
    while True:
        line = await _read_line(reader, budget)
        size_text = line.split(b";", 1)[0].strip()
        try:
            if not size_text or len(size_text) > 16:
                raise ValueError
            size = int(size_text, 16)
        except ValueError:
            raise HttpError(400, f"Bad chunk size {size_text[:20]!r}") from None
        if size == 0:
            await _read_fields(reader, budget)  # trailers: dropped
            return bytes(out)
        if len(out) + size > limits.max_body_bytes:
            raise HttpError(413, f"Request body is larger than the {limits.max_body_bytes} bytes allowed")
        out += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise HttpError(400, "Chunk not followed by CRLF")


def render_response(response: HttpResponse, *, keep_alive: bool, head: bool = False) -> bytes:
    """The response's bytes: status line, fields (Content-Length, Connection added), body (none for HEAD)."""
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {response.status} {reason}"]
    names = {n.lower() for n, _ in response.headers}
    lines += [f"{n}: {v}" for n, v in response.headers]
    if "content-length" not in names:
        lines.append(f"Content-Length: {len(response.body)}")
    lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
    head_bytes = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head_bytes if head else head_bytes + response.body


class HttpServer:
    """Serves ``handler`` on ``host:port`` (port 0: any free port; ``port`` is the bound one once started).

    ``ssl_context``: serve https. See the module docstring for limits, timeouts and the stop order."""

    def __init__(
        self,
        handler: Handler,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        limits: Limits = DEFAULT_LIMITS,
        idle_timeout_s: float = 60.0,
        request_timeout_s: float = 30.0,
        handshake_timeout_s: float = 10.0,
        name: str = "schema-registry",
    ) -> None:
        self.handler = handler
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.limits = limits
        self.idle_timeout_s = idle_timeout_s
        self.request_timeout_s = request_timeout_s
        self.handshake_timeout_s = handshake_timeout_s
        self.name = name
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task, asyncio.StreamWriter] = {}
        self._busy: set[asyncio.Task] = set()

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_context is not None else "http"

    @property
    def url(self) -> str:
        """``scheme://host:port`` with the bound port (an IPv6 host in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    async def start(self) -> None:
        kwargs = {}
        if self.ssl_context is not None:
            kwargs["ssl_handshake_timeout"] = self.handshake_timeout_s
        self._server = await asyncio.start_server(
            self._serve,
            self.host or None,
            self.port,
            ssl=self.ssl_context,
            limit=self.limits.max_head_bytes + 1024,
            **kwargs,  # ssl_handshake_timeout only with ssl
        )
        sock = self._server.sockets[0]
        self.port = sock.getsockname()[1]
        log.info("%s: listening on %s", self.name, self.url)

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop accepting, wait up to ``grace_s`` for requests in flight, close every connection. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        busy = list(self._busy)
        if busy:
            await asyncio.wait(busy, timeout=grace_s)
        for task, writer in list(self._connections.items()):
            writer.close()
            task.cancel()
        tasks = list(self._connections)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        peername = writer.get_extra_info("peername")
        peer = f"{peername[0]}:{peername[1]}" if isinstance(peername, tuple) else str(peername)
        try:
            await self._connection(reader, writer, peer, task)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, TimeoutError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:  # a bug must not kill the server: the connection goes
            log.exception("%s: connection from %s failed", self.name, peer)
        finally:
            self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: str, task: asyncio.Task
    ) -> None:
        while self._server is not None:
            try:
                request = await asyncio.wait_for(read_request(reader, self.limits, peer=peer), self.idle_timeout_s)
            except TimeoutError:
                return
            except HttpError as e:
                await self._send_error(writer, e)
                return
            if request is None:
                return
            self._busy.add(task)
            try:
                try:
                    if request.headers.get("expect", "").lower() == "100-continue":
                        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    request.body = await asyncio.wait_for(
                        read_body(reader, request, self.limits), self.request_timeout_s
                    )
                except HttpError as e:
                    await self._send_error(writer, e)
                    return
                except TimeoutError:
                    await self._send_error(writer, HttpError(408, "Request timeout"))
                    return
                response = await self._answer(request)
                keep_alive = request.keep_alive and self._server is not None
                writer.write(render_response(response, keep_alive=keep_alive, head=request.method == "HEAD"))
                await writer.drain()
            finally:
                self._busy.discard(task)
            if not keep_alive:
                return

    async def _answer(self, request: HttpRequest) -> HttpResponse:
        if request.method == "HEAD":
            request.method = "GET"
            try:
                return await self._call(request)
            finally:
                request.method = "HEAD"
        return await self._call(request)

    async def _call(self, request: HttpRequest) -> HttpResponse:
        try:
            return await self.handler(request)
        except Exception:
            log.exception("%s: %s %s failed", self.name, request.method, request.path)
            return HttpResponse.error(500, 500, "Internal Server Error")

    async def _send_error(self, writer: asyncio.StreamWriter, error: HttpError) -> None:
        response = HttpResponse.error(error.status, error.status, error.message)
        with contextlib.suppress(Exception):
            writer.write(render_response(response, keep_alive=False))
            await writer.drain()
