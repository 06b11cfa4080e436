"""The sans-IO client side of one broker connection: handshake, correlation ids, in-flight queue, framing.

No sockets here: a transport feeds received bytes to ``receive_data`` and writes what ``data_to_send``
returns (``socket_transport`` does it with blocking sockets, ``asyncio_transport`` with asyncio).

Lifecycle::

    NEW --start_handshake()--> HANDSHAKE --ApiVersions answered [--SASL authenticated]--> READY --close()/error--> CLOSED

* Handshake: ApiVersions at the highest version we declare (v4). A broker that does not know it answers
  UNSUPPORTED_VERSION with a v0 body listing its ApiVersions range; we retry at the highest version it
  advertises (lower than the one tried), down to v0, as the Java and Python clients do.
* SASL (``security`` with SASL_PLAINTEXT or SASL_SSL; KIP-43, KIP-152): after ApiVersions, SaslHandshake v1
  with the mechanism, then SaslAuthenticate rounds (v0-2, the highest both sides speak) carrying the
  tokens of a ``SaslClient`` (``spark_kafkalog.security.sasl.create_client``): its ``initial_response()``,
  then ``evaluate_challenge(answer)`` until it returns None with ``complete`` set. A broker that does not
  list SaslAuthenticate gets SaslHandshake v0 and raw tokens (a 4-byte size and the token, no header,
  both ways). The connection becomes READY only once authenticated. Failures close the connection with a
  ``KafkaAuthenticationError`` (never retriable) naming the broker, the mechanism and the broker's message:
  UNSUPPORTED_SASL_MECHANISM (33, with the broker's mechanisms), ILLEGAL_SASL_STATE (34),
  SASL_AUTHENTICATION_FAILED (58), our ``SaslClient`` rejecting the broker's answer, and a v0 broker
  closing the connection during the exchange.
* Re-authentication (KIP-368): the last SaslAuthenticate answer's ``SessionLifetimeMs`` (v1+), capped by
  the credential's expiry (OAUTHBEARER), sets ``reauth_at`` at a random 85-95 % of it (as Java's
  client). Once it has passed, the next ``send`` (or ``maybe_reauthenticate``) first queues SaslHandshake
  and then the SaslAuthenticate rounds on the live connection, behind the requests already sent; requests
  sent meanwhile are encoded but held back, in order, and queued when re-authentication succeeds (the
  broker reads a SaslHandshake and its SaslAuthenticates with nothing in between). The clock
  (``clock``, monotonic seconds) and the fraction (``reauth_fraction``) are injectable for tests.
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

import random
import struct
import time
from collections import deque
from collections.abc import Callable
from enum import Enum
from typing import Any

from spark_kafkalog import __version__
from spark_kafkalog.client.errors import KafkaAuthenticationError, KafkaClientError, KafkaConnectionError
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
_SASL_HANDSHAKE = int(ApiKey.SASL_HANDSHAKE)
_SASL_AUTHENTICATE = int(ApiKey.SASL_AUTHENTICATE)
_RAW_TOKEN = -1  # the correlation id of a v0 raw SASL token in flight (it has no header)
_SIZE = struct.Struct(">i")


def _reauth_fraction() -> float:
    return random.uniform(0.85, 0.95)


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


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
        security: Any = None,
        sasl_client_factory: Callable[[Any], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock_ms: Callable[[], int] = _wall_clock_ms,
        reauth_fraction: Callable[[], float] = _reauth_fraction,
    ) -> None:
        """``security``: a ``ClientSecurity`` (only its SASL part matters here; TLS is the transport's).
        ``sasl_client_factory(settings) -> SaslClient`` defaults to ``security.sasl.create_client``."""
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
        self._control: InFlightRequest | None = None  # the handshake or SASL request in flight, if any
        # SASL
        self._sasl_settings = getattr(security, "sasl", None) if getattr(security, "uses_sasl", False) else None
        self.mechanism: str | None = (
            str(getattr(self._sasl_settings, "mechanism", "?")) if self._sasl_settings is not None else None
        )
        self._sasl_client_factory = sasl_client_factory
        self._sasl_client: Any = None
        self._sasl_raw = False  # SaslHandshake v0: raw tokens
        self._clock = clock
        self._wall_clock_ms = wall_clock_ms
        self._reauth_fraction = reauth_fraction
        self.authenticated = False
        self.session_lifetime_ms: int | None = None
        self.reauth_at: float | None = None  # clock() time at which to re-authenticate
        self.reauthentications = 0
        self._reauthenticating = False
        self._held: list[tuple[InFlightRequest | None, list[Any]]] = []  # sent during a re-authentication
        self._held_count = 0

    # state -------------------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.state is ConnectionState.READY

    @property
    def closed(self) -> bool:
        return self.state is ConnectionState.CLOSED

    @property
    def in_flight(self) -> int:
        """User requests awaiting a response (the handshake and SASL requests not included; requests held
        back during a re-authentication included)."""
        return len(self._in_flight) - (1 if self._control is not None else 0) + self._held_count

    @property
    def reauthenticating(self) -> bool:
        return self._reauthenticating

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
        self._control = self._queue(_API_VERSIONS, version, body, None, expect_response=True, control=True)

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
        if self.maybe_reauthenticate() and self.closed:
            raise self.close_reason or KafkaConnectionError(f"connection to {self.peer} closed", broker=self.peer)
        return self._queue(api_key, version, body, context, expect_response=expect_response)

    def _queue(
        self, api_key: int, version: int, body: Any, context: Any, *, expect_response: bool, control: bool = False
    ) -> InFlightRequest | None:
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (correlation_id + 1) % _CORRELATION_ID_LIMIT
        chunks = encode_request_chunks(api_key, version, correlation_id, body, client_id=self.client_id)
        request = None
        if expect_response:
            request = InFlightRequest(api_key, version, correlation_id, context, time.monotonic())
        if self._reauthenticating and not control:
            self._held.append((request, chunks))
            self._held_count += request is not None
            return request
        self._outbox.extend(chunks)
        if request is not None:
            self._in_flight.append(request)
        return request

    # SASL --------------------------------------------------------------------------------------
    def maybe_reauthenticate(self, now: float | None = None) -> bool:
        """Start a KIP-368 re-authentication when ``reauth_at`` has passed; True when one was started."""
        if self.reauth_at is None or self._reauthenticating or self.state is not ConnectionState.READY:
            return False
        if (self._clock() if now is None else now) < self.reauth_at:
            return False
        self._reauthenticating = True
        self.reauth_at = None
        self.reauthentications += 1
        self._begin_sasl()
        return True

    def _begin_sasl(self) -> list[InFlightRequest]:
        assert self.versions is not None
        mechanism = self.mechanism or "?"
        if not self.versions.supports(_SASL_HANDSHAKE):
            return self._auth_failed(
                f"broker {self.peer} does not offer SaslHandshake: it is not a SASL listener (check "
                f"security.protocol; SASL mechanism {mechanism})",
                error_code=None,
            )
        version = 1 if self.versions.supports(_SASL_AUTHENTICATE) and self.versions.supports(_SASL_HANDSHAKE, 1) else 0
        self._sasl_raw = version == 0
        body = API_BY_KEY[_SASL_HANDSHAKE].Request(mechanism=mechanism)
        self._control = self._queue(_SASL_HANDSHAKE, version, body, None, expect_response=True, control=True)
        return []

    def _auth_failed(
        self, text: str, *, error_code: int | None = ErrorCode.SASL_AUTHENTICATION_FAILED, enabled: tuple = ()
    ) -> list[InFlightRequest]:
        return self._fail(
            KafkaAuthenticationError(
                text, broker=self.peer, mechanism=self.mechanism, error_code=error_code, enabled_mechanisms=enabled
            )
        )

    def _on_sasl_handshake(self, request: InFlightRequest, frame: Any) -> list[InFlightRequest]:
        try:
            _, body = decode_response(_SASL_HANDSHAKE, request.version, frame)
        except ProtocolError as e:
            return self._fail(
                KafkaConnectionError(
                    f"broker {self.peer} sent a SaslHandshake response that does not decode: {e}", broker=self.peer
                )
            )
        mechanism = self.mechanism
        if body.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
            enabled = tuple(body.mechanisms)
            return self._auth_failed(
                f"broker {self.peer} does not enable SASL mechanism {mechanism}: UNSUPPORTED_SASL_MECHANISM (33); "
                f"it enables {', '.join(enabled) or 'none'} (set sasl.mechanism to one of them)",
                error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                enabled=enabled,
            )
        if body.error_code != ErrorCode.NONE:
            code = ErrorCode(body.error_code)
            hint = " (is it a SASL listener? check security.protocol)" if code == ErrorCode.ILLEGAL_SASL_STATE else ""
            return self._auth_failed(
                f"broker {self.peer} refused SaslHandshake for SASL mechanism {mechanism}: {code.name} ({int(code)})"
                f"{hint}",
                error_code=code,
            )
        try:
            factory: Callable[[Any], Any] | None = self._sasl_client_factory
            if factory is None:
                from spark_kafkalog.security.sasl import create_client

                factory = create_client
            settings: Any = self._sasl_settings
            self._sasl_client = factory(settings)
            token = self._sasl_client.initial_response()
        except Exception as e:  # SaslAuthenticationFailed, SecurityConfigError (their messages hold no secret)
            return self._auth_failed(
                f"SASL mechanism {mechanism} could not start for broker {self.peer}: {e}", error_code=None
            )
        self._send_token(token)
        return []

    def _send_token(self, token: bytes) -> None:
        if self._sasl_raw:
            self._outbox.append(_SIZE.pack(len(token)) + bytes(token))
            self._control = InFlightRequest(_SASL_AUTHENTICATE, 0, _RAW_TOKEN, None, time.monotonic())
            self._in_flight.append(self._control)
            return
        assert self.versions is not None
        version = self.versions.pick(_SASL_AUTHENTICATE, 0, 2)
        body = API_BY_KEY[_SASL_AUTHENTICATE].Request(auth_bytes=bytes(token))
        self._control = self._queue(_SASL_AUTHENTICATE, version, body, None, expect_response=True, control=True)

    def _on_sasl_authenticate(self, request: InFlightRequest, frame: Any) -> list[InFlightRequest]:
        if request.correlation_id == _RAW_TOKEN and self._sasl_raw:
            return self._on_challenge(bytes(frame), 0)
        try:
            _, body = decode_response(_SASL_AUTHENTICATE, request.version, frame)
        except ProtocolError as e:
            return self._fail(
                KafkaConnectionError(
                    f"broker {self.peer} sent a SaslAuthenticate response that does not decode: {e}", broker=self.peer
                )
            )
        if body.error_code != ErrorCode.NONE:
            code = ErrorCode(body.error_code)
            message = body.error_message or code.description
            return self._auth_failed(
                f"SASL authentication with broker {self.peer} failed (mechanism {self.mechanism}): "
                f"{code.name} ({int(code)}): {message}",
                error_code=code,
            )
        lifetime = body.session_lifetime_ms if request.version >= 1 else 0
        return self._on_challenge(bytes(body.auth_bytes), lifetime)

    def _on_challenge(self, challenge: bytes, lifetime_ms: int) -> list[InFlightRequest]:
        client = self._sasl_client
        try:
            reply = None if client.complete and not challenge else client.evaluate_challenge(challenge)
        except Exception as e:  # SaslAuthenticationFailed: the broker's answer is wrong for the mechanism
            return self._auth_failed(
                f"SASL authentication with broker {self.peer} failed (mechanism {self.mechanism}): "
                f"the broker's answer was rejected: {e}",
                error_code=None,
            )
        if reply is not None:
            self._send_token(reply)
            return []
        if not client.complete:
            return self._auth_failed(
                f"SASL authentication with broker {self.peer} failed (mechanism {self.mechanism}): the exchange "
                "ended before the mechanism completed",
                error_code=None,
            )
        return self._authenticated(lifetime_ms, client.credential_expiry_ms)

    def _authenticated(self, lifetime_ms: int, credential_expiry_ms: int | None) -> list[InFlightRequest]:
        self._sasl_client = None
        lifetimes = [lifetime_ms] if lifetime_ms and lifetime_ms > 0 else []
        if credential_expiry_ms is not None:
            lifetimes.append(max(credential_expiry_ms - self._wall_clock_ms(), 0))
        if lifetimes:
            self.session_lifetime_ms = min(lifetimes)
            self.reauth_at = self._clock() + self.session_lifetime_ms / 1000.0 * self._reauth_fraction()
        else:
            self.session_lifetime_ms = None
            self.reauth_at = None
        self.authenticated = True
        self.state = ConnectionState.READY
        if self._reauthenticating:
            self._reauthenticating = False
            held, self._held, self._held_count = self._held, [], 0
            for request, chunks in held:
                self._outbox.extend(chunks)
                if request is not None:
                    self._in_flight.append(request)
        return []

    @property
    def has_data_to_send(self) -> bool:
        return bool(self._outbox)

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
        if request.correlation_id == _RAW_TOKEN and request is self._control:  # a raw v0 SASL token
            self._in_flight.popleft()
            self._control = None
            return self._on_sasl_authenticate(request, frame)
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
        if request is self._control:
            self._control = None
            if request.api_key == _SASL_HANDSHAKE:
                return self._on_sasl_handshake(request, frame)
            if request.api_key == _SASL_AUTHENTICATE:
                return self._on_sasl_authenticate(request, frame)
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
        if getattr(body, "finalized_features_epoch", -1) >= 0:  # v3+: KIP-584 feature levels
            self.versions.finalized_features = {f.name: f.max_version_level for f in body.finalized_features}
            self.versions.features_epoch = body.finalized_features_epoch
        if self._sasl_settings is not None:
            return self._begin_sasl()
        self.state = ConnectionState.READY
        return []

    # closing -----------------------------------------------------------------------------------
    def close(self, reason: BaseException | None = None) -> list[InFlightRequest]:
        """Close the connection; returns the in-flight requests, failed with ``reason``."""
        if reason is None:
            reason = KafkaConnectionError(f"connection to broker {self.peer} closed", broker=self.peer)
        control = self._control
        if (
            isinstance(reason, KafkaConnectionError)
            and control is not None
            and control.correlation_id == _RAW_TOKEN
            and self.state is not ConnectionState.CLOSED
        ):
            # SaslHandshake v0 has no error response: the broker closes the connection on a failure
            reason = KafkaAuthenticationError(
                f"SASL authentication with broker {self.peer} failed (mechanism {self.mechanism}): the broker "
                f"closed the connection during the exchange (SaslHandshake v0 reports no error): {reason}",
                broker=self.peer,
                mechanism=self.mechanism,
            )
        return self._fail(reason)

    def _fail(self, reason: BaseException) -> list[InFlightRequest]:
        if self.close_reason is None:
            self.close_reason = reason
        self.state = ConnectionState.CLOSED
        failed = []
        control = self._control
        while self._in_flight:
            request = self._in_flight.popleft()
            request.error = reason
            request.done = True
            if request is not control:
                failed.append(request)
        for held, _ in self._held:
            if held is not None:
                held.error = reason
                held.done = True
                failed.append(held)
        self._held.clear()
        self._held_count = 0
        self._reauthenticating = False
        self._control = None
        self._sasl_client = None
        self._outbox.clear()
        return failed
