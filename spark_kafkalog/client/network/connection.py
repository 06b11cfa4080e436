"""The sans-IO client side of one broker connection: handshake, correlation ids, in-flight queue, framing.

No sockets here: a transport feeds received bytes to ``receive_data`` and writes what ``data_to_send``
returns (``socket_transport`` does it with blocking sockets, ``asyncio_transport`` with asyncio).

Lifecycle::

    NEW --start_handshake()--> HANDSHAKE --ApiVersions answered--> READY --close()/error--> CLOSED

* Handshake: ApiVersions at the highest version we declare (v4). A broker that does not know it answers
  UNSUPPORTED_VERSION with a v0 body listing its ApiVersions range; we retry at the highest version it
  advertises (lower than the one tried), down to v0, as the Java and Python clients do.
* Requests: ``send`` picks the highest version both sides support within the request's own bounds
  (``versions.ApiVersionTable``), assigns the next correlation id (int32, wrapping to 0) and queues the
  framed request. Requests that expect no response (Produce with acks=0) are not queued as in flight.
* Responses arrive in request order (Kafka guarantees it per connection); each frame's correlation id
  must match the oldest in-flight request, otherwise the connection is unusable and is closed.
* A frame larger than ``max_frame_size`` or a response that does not decode closes the connection too.

``receive_data`` returns the requests it completed, oldest first, each with ``response`` or ``error``
set; once the connection is closed, the requests still in flight are returned failed with the close
reason, so every request is completed exactly once. Not thread-safe: one transport drives it.
"""

from __future__ import annotations

import time
from collections import deque
from enum import Enum
from typing import Any

from spark_kafkalog import __version__
from spark_kafkalog.client.errors import KafkaClientError, KafkaConnectionError
from spark_kafkalog.client.network.versions import CLIENT_VERSIONS, ApiVersionTable, api_name
from spark_kafkalog.protocol import (
    API_BY_KEY,
    DEFAULT_MAX_FRAME_SIZE,
    ApiKey,
    ErrorCode,
    FrameDecoder,
    ProtocolError,
    decode_response,
    encode_request_chunks,
    peek_correlation_id,
)

__all__ = ["ConnectionState", "InFlightRequest", "KafkaConnection"]

_CORRELATION_ID_LIMIT = 1 << 31
_API_VERSIONS = int(ApiKey.API_VERSIONS)


class ConnectionState(Enum):
    NEW = "new"
    HANDSHAKE = "handshake"
    READY = "ready"
    CLOSED = "closed"


class InFlightRequest:
    """A request sent on a connection; completed with ``response`` (the decoded body) or ``error``.

    ``context`` is whatever the transport attached (an asyncio future, a produce batch list, ...).
    """

    __slots__ = ("api_key", "version", "correlation_id", "context", "sent_at", "response", "error", "done")

    def __init__(self, api_key: int, version: int, correlation_id: int, context: Any, sent_at: float) -> None:
        self.api_key = api_key
        self.version = version
        self.correlation_id = correlation_id
        self.context = context
        self.sent_at = sent_at
        self.response: Any = None
        self.error: BaseException | None = None
        self.done = False

    def result(self) -> Any:
        """The response body, or raise the request's error."""
        if self.error is not None:
            raise self.error
        return self.response

    def __repr__(self) -> str:
        return f"InFlightRequest({api_name(self.api_key)} v{self.version}, correlation_id={self.correlation_id})"


class KafkaConnection:
    """Protocol state of one client-to-broker connection (see the module docstring)."""

    def __init__(
        self,
        peer: str,
        *,
        client_id: str | None = "kafkalog",
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        client_software_name: str = "spark-kafkalog",
        client_software_version: str = __version__,
        node_id: int | None = None,
    ) -> None:
        self.peer = peer
        self.node_id = node_id
        self.client_id = client_id
        self.max_frame_size = max_frame_size
        self.state = ConnectionState.NEW
        self.versions: ApiVersionTable | None = None
        self.close_reason: BaseException | None = None
        self._software = (client_software_name, client_software_version)
        self._decoder = FrameDecoder(max_frame_size)
        self._outbox: list[Any] = []  # bytes-likes: the first chunk of every request is bytes/bytearray
        self._in_flight: deque[InFlightRequest] = deque()
        self._next_correlation_id = 0
        self._handshake: InFlightRequest | None = None

    # state -------------------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.state is ConnectionState.READY

    @property
    def closed(self) -> bool:
        return self.state is ConnectionState.CLOSED

    @property
    def in_flight(self) -> int:
        """User requests awaiting a response (the handshake not included)."""
        return len(self._in_flight) - (1 if self._handshake is not None else 0)

    def oldest_in_flight(self) -> InFlightRequest | None:
        return self._in_flight[0] if self._in_flight else None

    # sending -----------------------------------------------------------------------------------
    def start_handshake(self, version: int | None = None) -> None:
        """Queue the ApiVersions request that opens the connection."""
        if self.state is not ConnectionState.NEW:
            raise RuntimeError(f"handshake already started on the connection to {self.peer}")
        self.state = ConnectionState.HANDSHAKE
        self._send_api_versions(CLIENT_VERSIONS[_API_VERSIONS].hi if version is None else version)

    def _send_api_versions(self, version: int) -> None:
        spec = API_BY_KEY[_API_VERSIONS]
        body = spec.Request(client_software_name=self._software[0], client_software_version=self._software[1])
        self._handshake = self._queue(_API_VERSIONS, version, body, None, expect_response=True)

    def send(
        self,
        api_key: int,
        body: Any,
        *,
        version: int | None = None,
        min_version: int = 0,
        max_version: int | None = None,
        expect_response: bool = True,
        context: Any = None,
        why: str = "",
    ) -> InFlightRequest | None:
        """Queue a request; returns its in-flight record (``None`` when no response is expected).

        ``version`` forces a version (it must be usable); otherwise the highest usable one within
        ``[min_version, max_version]`` is chosen. Raises ``NoCommonVersionError`` when there is none,
        ``KafkaConnectionError`` when the connection is not ready.
        """
        if self.state is not ConnectionState.READY:
            raise KafkaConnectionError(
                f"connection to broker {self.peer} is {self.state.value}, cannot send {api_name(api_key)}",
                broker=self.peer,
            )
        assert self.versions is not None
        if version is None:
            version = self.versions.pick(api_key, min_version, max_version, why=why)
        else:
            version = self.versions.pick(api_key, version, version, why=why)
        return self._queue(api_key, version, body, context, expect_response=expect_response)

    def _queue(
        self, api_key: int, version: int, body: Any, context: Any, *, expect_response: bool
    ) -> InFlightRequest | None:
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (correlation_id + 1) % _CORRELATION_ID_LIMIT
        self._outbox.extend(encode_request_chunks(api_key, version, correlation_id, body, client_id=self.client_id))
        if not expect_response:
            return None
        request = InFlightRequest(api_key, version, correlation_id, context, time.monotonic())
        self._in_flight.append(request)
        return request

    def data_to_send(self) -> bytes | bytearray:
        """Bytes queued since the last call (framed requests, in order), joined into one buffer."""
        if not self._outbox:
            return b""
        data = self._outbox[0] if len(self._outbox) == 1 else b"".join(self._outbox)
        self._outbox.clear()
        return data

    def chunks_to_send(self) -> list[Any]:
        """The buffers queued since the last call, in order, for a gathering write (``socket.sendmsg``):
        encoded request bytes and the caller-owned ``SendBuffer`` memory of produce requests, uncopied."""
        chunks, self._outbox = self._outbox, []
        return chunks

    # receiving ---------------------------------------------------------------------------------
    def check_frame_size(self, size: int) -> list[InFlightRequest]:
        """For transports that read frames themselves: close like ``receive_data`` on a bad size;
        returns the requests failed by that (none when the size is fine)."""
        if size < 0 or size > self.max_frame_size:
            return self._fail(
                KafkaConnectionError(
                    f"broker {self.peer} sent a frame of {size} bytes; the limit is {self.max_frame_size} "
                    "(socket.request.max.bytes)",
                    broker=self.peer,
                )
            )
        return []

    def receive_data(self, data: Any) -> list[InFlightRequest]:
        """Feed received bytes; returns the requests completed by them (see the module docstring)."""
        if self.state is ConnectionState.CLOSED:
            return []
        try:
            frames = self._decoder.feed(data)
        except ProtocolError as e:
            return self._fail(KafkaConnectionError(f"broker {self.peer} sent a bad frame: {e}", broker=self.peer))
        done: list[InFlightRequest] = []
        for frame in frames:
            done.extend(self.receive_frame(frame))
            if self.state is ConnectionState.CLOSED:
                break
        return done

    def receive_frame(self, frame: Any) -> list[InFlightRequest]:
        """Handle one complete response frame payload (without its size prefix)."""
        if self.state is ConnectionState.CLOSED:
            return []
        if not self._in_flight:
            return self._fail(
                KafkaConnectionError(f"broker {self.peer} sent a response with no request in flight", broker=self.peer)
            )
        request = self._in_flight[0]
        try:
            correlation_id = peek_correlation_id(frame)
        except ProtocolError as e:
            return self._fail(KafkaConnectionError(f"broker {self.peer}: {e}", broker=self.peer))
        if correlation_id != request.correlation_id:
            return self._fail(
                KafkaConnectionError(
                    f"broker {self.peer} answered correlation id {correlation_id} where "
                    f"{request.correlation_id} ({api_name(request.api_key)}) was expected",
                    broker=self.peer,
                )
            )
        self._in_flight.popleft()
        if request is self._handshake:
            return self._finish_handshake(request, frame)
        try:
            _, body = decode_response(request.api_key, request.version, frame)
        except ProtocolError as e:
            request.error = KafkaConnectionError(
                f"cannot decode the {api_name(request.api_key)} v{request.version} response of broker {self.peer}: {e}",
                broker=self.peer,
            )
            request.done = True
            return [request] + self._fail(request.error)
        request.response = body
        request.done = True
        return [request]

    def _finish_handshake(self, request: InFlightRequest, frame: Any) -> list[InFlightRequest]:
        self._handshake = None
        body = None
        for version in dict.fromkeys((request.version, 0)):
            try:
                _, body = decode_response(_API_VERSIONS, version, frame)
                break
            except ProtocolError:
                continue
        if body is None:
            return self._fail(
                KafkaConnectionError(
                    f"broker {self.peer} sent an ApiVersions response that does not decode", broker=self.peer
                )
            )
        if body.error_code == ErrorCode.UNSUPPORTED_VERSION and request.version > 0:
            advertised = [k.max_version for k in body.api_keys if k.api_key == _API_VERSIONS]
            retry = min(advertised[0], request.version - 1) if advertised else 0
            self._send_api_versions(max(retry, 0))
            return []
        if body.error_code != ErrorCode.NONE:
            code = ErrorCode(body.error_code)
            return self._fail(
                KafkaClientError(
                    f"broker {self.peer} refused ApiVersions v{request.version}: {code.name} ({int(code)})",
                    error_code=code,
                    broker=self.peer,
                )
            )
        self.versions = ApiVersionTable.from_api_keys(body.api_keys, peer=self.peer)
        self.state = ConnectionState.READY
        return []

    # closing -----------------------------------------------------------------------------------
    def close(self, reason: BaseException | None = None) -> list[InFlightRequest]:
        """Close the connection; returns the in-flight requests, failed with ``reason``."""
        if reason is None:
            reason = KafkaConnectionError(f"connection to broker {self.peer} closed", broker=self.peer)
        return self._fail(reason)

    def _fail(self, reason: BaseException) -> list[InFlightRequest]:
        if self.close_reason is None:
            self.close_reason = reason
        self.state = ConnectionState.CLOSED
        failed = []
        handshake = self._handshake
        while self._in_flight:
            request = self._in_flight.popleft()
            request.error = reason
            request.done = True
            if request is not handshake:
                failed.append(request)
        self._handshake = None
        self._outbox.clear()
        return failed
