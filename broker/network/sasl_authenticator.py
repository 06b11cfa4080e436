"""The server side of SASL on one connection of a SASL_PLAINTEXT or SASL_SSL listener (Kafka's
``SaslServerAuthenticator``), as a state machine over frames; the connection does the I/O.

States and what each accepts (anything else fails the connection; "close" below is always after
``failed_authentication_delay_ms``, KIP-306, except a frame over the pre-authentication size, which the
connection refuses at once from its size prefix):

=================  =====================================================================================
INITIAL            ApiVersions (handled by its handler; a version we do not serve gets the v0 error body and
                   leaves the state unchanged) -> HANDSHAKE; SaslHandshake as below; any other request: close
                   without a response
HANDSHAKE          SaslHandshake only (a second ApiVersions, or anything else: close without a response)
SaslHandshake      mechanism not in ``sasl_mechanisms``: error 33 UNSUPPORTED_SASL_MECHANISM with the enabled
                   list, then close; else error 0 with the list and v0 -> AUTHENTICATE_RAW, v1 -> AUTHENTICATE
AUTHENTICATE_RAW   frames are raw SASL tokens (4-byte length + token, no Kafka header), each answered with a
                   raw token (possibly empty); a failure closes without a response
AUTHENTICATE       SaslAuthenticate v0-2 only, each answered; a failure answers error 58
                   SASL_AUTHENTICATION_FAILED with the mechanism's generic message, then close; any other
                   request: its API's error response with ILLEGAL_SASL_STATE (34) when it has a top-level
                   ``error_code``, then close
COMPLETE           ordinary requests, as ``principal``; see re-authentication
=================  =====================================================================================

Re-authentication (KIP-368): when the session has a lifetime (``max_reauth_ms`` > 0, or the credential expires,
e.g. an OAUTHBEARER token), SaslAuthenticate v1+ returns ``SessionLifetimeMs`` = min(max_reauth_ms, credential
expiry - now) and the session expires that much later. A SaslHandshake on a COMPLETE connection starts a
re-authentication when the session has a lifetime, the client authenticated with SaslAuthenticate v1+, and the
previous re-authentication began at least a second ago; it must use the same mechanism (else error 33, close)
and end with the same principal (else error 58 "Cannot change principals during re-authentication", close).
Otherwise the SaslHandshake goes to its handler (ILLEGAL_SASL_STATE). After the session expires, any request
other than SaslHandshake closes the connection at once. Requests read before the SaslHandshake are answered
before it (the connection keeps responses in request order).

Every failed authentication logs one line naming the peer, the listener, the mechanism and the server's
``detail`` (never a password or token); ``on_result(mechanism, success)`` counts each end of an exchange.
Not thread-safe: one per connection, on its event loop.
"""

from __future__ import annotations

import enum
import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_kafkalog.protocol import (
    API_BY_KEY,
    ApiKey,
    DecodeError,
    ErrorCode,
    UnsupportedVersionError,
    decode_request,
    encode_response,
)
from spark_kafkalog.security.errors import SaslAuthenticationFailed
from spark_kafkalog.security.sasl import create_server

if TYPE_CHECKING:
    from broker.security.listener_security import ListenerSecurity

__all__ = ["AuthStep", "SaslAuthenticator", "SaslState", "create_sasl_server"]

log = logging.getLogger("kafkalog.network.auth")

_MIN_REAUTH_INTERVAL_S = 1.0
_SIZE = struct.Struct(">i")  # a raw token's length prefix
_HANDSHAKE = API_BY_KEY[ApiKey.SASL_HANDSHAKE]
_AUTHENTICATE = API_BY_KEY[ApiKey.SASL_AUTHENTICATE]


def create_sasl_server(mechanism: str, callbacks: Any) -> Any:
    """A new ``SaslServer`` for ``mechanism`` (module-level so tests can substitute fakes)."""
    return create_server(mechanism, callbacks)


class SaslState(enum.Enum):
    INITIAL = "INITIAL"
    HANDSHAKE = "HANDSHAKE"
    AUTHENTICATE_RAW = "AUTHENTICATE_RAW"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


@dataclass
class AuthStep:
    """What the connection does with one frame.

    ``dispatch``: hand the frame to the handlers as a normal request; ``reply``: a framed response (or raw
    token) to send in order; ``close``: close after ``reply`` (reason for the log; ``delayed``: after
    ``failed_authentication_delay_ms``, else at once, without the reply); ``logged``: the authenticator
    already logged the failure.
    """

    dispatch: bool = False
    reply: bytes | None = None
    close: str | None = None
    delayed: bool = True
    logged: bool = False


class SaslAuthenticator:
    def __init__(
        self,
        security: ListenerSecurity,
        peer: str,
        *,
        on_result: Callable[[str, bool], None] = lambda mechanism, success: None,
        monotonic: Callable[[], float] = time.monotonic,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.security = security
        self.peer = peer
        self.state = SaslState.INITIAL
        self.principal = "User:ANONYMOUS"
        self.mechanism: str | None = None
        self.session_expiry: float | None = None  # monotonic seconds; None: the session never expires
        self._on_result = on_result
        self._monotonic = monotonic
        self._wall_ms = wall_ms
        self._server: Any = None
        self._reauthenticating = False
        self._client_reauth_capable = False  # the client used SaslAuthenticate v1+
        self._last_reauth_start: float | None = None

    # -- what the connection asks ------------------------------------------------------------------
    @property
    def authenticated(self) -> bool:
        """A principal is established (true during a re-authentication too)."""
        return self.state is SaslState.COMPLETE or self._reauthenticating

    @property
    def intercepts(self) -> bool:
        """Frames go to ``on_frame`` (an exchange is under way), not to the handlers."""
        return self.state is not SaslState.COMPLETE

    def on_frame(self, frame: Any) -> AuthStep:
        """One frame read while ``intercepts``: a request, or a raw token after SaslHandshake v0."""
        if self.state is SaslState.AUTHENTICATE_RAW:
            return self._raw_token(bytes(frame))
        try:
            request = decode_request(frame)
        except UnsupportedVersionError as e:
            if e.header.api_key == ApiKey.API_VERSIONS and self.state is SaslState.INITIAL:  # type: ignore[attr-defined]
                return AuthStep(dispatch=True)  # the v0 error body; the client retries with a version we serve
            return self._illegal(f"unsupported request before authentication: {e}")
        except DecodeError as e:
            return self._illegal(f"undecodable request before authentication: {e}")
        key = request.header.api_key
        if self.state is SaslState.INITIAL and key == ApiKey.API_VERSIONS:
            self.state = SaslState.HANDSHAKE
            return AuthStep(dispatch=True)
        if self.state in (SaslState.INITIAL, SaslState.HANDSHAKE):
            if key == ApiKey.SASL_HANDSHAKE:
                return self._handshake(request)
            return self._illegal(f"unexpected {request.api.name} request during the SASL handshake")
        if self.state is SaslState.AUTHENTICATE:
            if key == ApiKey.SASL_AUTHENTICATE:
                return self._authenticate(request)
            return self._illegal(
                f"unexpected {request.api.name} request during SASL authentication",
                reply=_error_response(request, ErrorCode.ILLEGAL_SASL_STATE),
            )
        return self._illegal(f"{request.api.name} request after a failed authentication")

    def on_request(self, request: Any) -> AuthStep | None:
        """A request decoded on a COMPLETE connection: None to handle it as usual, else what to do instead."""
        now = self._monotonic()
        key = request.header.api_key
        if key == ApiKey.SASL_HANDSHAKE and self._may_reauthenticate(now):
            self._last_reauth_start = now
            self._reauthenticating = True
            self.state = SaslState.HANDSHAKE
            return self._handshake(request)
        if self.session_expiry is not None and now > self.session_expiry and key != ApiKey.SASL_HANDSHAKE:
            return AuthStep(
                close=f"SASL session of {self.principal} expired; {request.api.name} received", delayed=False
            )
        return None

    # -- the exchange --------------------------------------------------------------------------------
    def _may_reauthenticate(self, now: float) -> bool:
        return (
            self.session_expiry is not None
            and self._client_reauth_capable
            and (self._last_reauth_start is None or now - self._last_reauth_start >= _MIN_REAUTH_INTERVAL_S)
        )

    def _handshake(self, request: Any) -> AuthStep:
        mechanism = request.body.mechanism
        enabled = list(self.security.sasl_mechanisms)
        header = request.header
        if self._reauthenticating and mechanism != self.mechanism:
            return self._fail(
                self.mechanism or "",
                f"mechanism {mechanism[:64]!r} requested for re-authentication of {self.mechanism}",
                reply=_handshake_response(header, ErrorCode.UNSUPPORTED_SASL_MECHANISM, enabled),
            )
        if mechanism not in enabled:  # the client's string: shortened in the log, not a metric label
            return self._fail(
                "(unsupported)",
                f"unsupported mechanism {mechanism[:64]!r} (enabled: {', '.join(enabled) or 'none'})",
                reply=_handshake_response(header, ErrorCode.UNSUPPORTED_SASL_MECHANISM, enabled),
            )
        try:
            self._server = create_sasl_server(mechanism, self.security.sasl_callbacks)
        except Exception as e:  # a mechanism we list but cannot serve: as unsupported, never a crash
            return self._fail(
                mechanism,
                f"no SASL server for {mechanism}: {_detail(e)}",
                reply=_handshake_response(header, ErrorCode.UNSUPPORTED_SASL_MECHANISM, enabled),
            )
        self.mechanism = mechanism
        self.state = SaslState.AUTHENTICATE if header.api_version >= 1 else SaslState.AUTHENTICATE_RAW
        return AuthStep(reply=_handshake_response(header, ErrorCode.NONE, enabled))

    def _authenticate(self, request: Any) -> AuthStep:
        header = request.header
        mechanism = self.mechanism or ""
        try:
            challenge = self._server.evaluate_response(bytes(request.body.auth_bytes))
            principal = self._server.principal if self._server.complete else None
        except Exception as e:
            message = str(e) if isinstance(e, SaslAuthenticationFailed) else _generic(mechanism)
            return self._fail(
                mechanism,
                _detail(e),
                reply=_authenticate_response(header, ErrorCode.SASL_AUTHENTICATION_FAILED, message),
            )
        if principal is None:
            return AuthStep(reply=_authenticate_response(header, ErrorCode.NONE, None, challenge))
        if self._reauthenticating and principal != self.principal:
            message = f"Cannot change principals during re-authentication from {self.principal}: {principal}"
            return self._fail(
                mechanism,
                message,
                reply=_authenticate_response(header, ErrorCode.SASL_AUTHENTICATION_FAILED, message),
            )
        lifetime_ms = self._complete(principal)
        if header.api_version >= 1:
            self._client_reauth_capable = True
        return AuthStep(reply=_authenticate_response(header, ErrorCode.NONE, None, challenge, lifetime_ms))

    def _raw_token(self, token: bytes) -> AuthStep:
        mechanism = self.mechanism or ""
        try:
            challenge = self._server.evaluate_response(token)
            principal = self._server.principal if self._server.complete else None
        except Exception as e:
            return self._fail(mechanism, _detail(e))
        reply = _SIZE.pack(len(challenge)) + challenge
        if principal is not None:
            self._complete(principal)
        return AuthStep(reply=reply)

    def _complete(self, principal: str) -> int:
        """The exchange succeeded: set the principal and the session; return SessionLifetimeMs (0: none)."""
        self.principal = principal
        self.state = SaslState.COMPLETE
        self._reauthenticating = False
        expiry_ms = getattr(self._server, "credential_expiry_ms", None)
        max_reauth = self.security.max_reauth_ms
        lifetime_ms = 0
        self.session_expiry = None
        if expiry_ms is not None or max_reauth > 0:
            candidates = [max_reauth] if max_reauth > 0 else []
            if expiry_ms is not None:
                candidates.append(expiry_ms - self._wall_ms())
            lifetime_ms = max(0, min(candidates))
            self.session_expiry = self._monotonic() + lifetime_ms / 1000
        self._server = None
        self._on_result(self.mechanism or "", True)
        return lifetime_ms

    def _fail(self, mechanism: str, detail: str, *, reply: bytes | None = None) -> AuthStep:
        """The exchange failed: one log line, counted, reply (if any) then close after the delay."""
        self.state = SaslState.FAILED
        self._server = None
        log.warning(
            "failed authentication from %s on listener %s with SASL mechanism %s: %s",
            self.peer,
            self.security.name,
            mechanism or "-",
            detail,
        )
        self._on_result(mechanism, False)
        return AuthStep(reply=reply, close=f"SASL authentication failed ({mechanism})", logged=True)

    def _illegal(self, reason: str, *, reply: bytes | None = None) -> AuthStep:
        self.state = SaslState.FAILED
        self._server = None
        return AuthStep(reply=reply, close=reason)


def _generic(mechanism: str) -> str:
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


def _detail(e: BaseException) -> str:
    detail = getattr(e, "detail", None)
    return str(detail) if detail else type(e).__name__


def _handshake_response(header: Any, error: int, mechanisms: list[str]) -> bytes:
    body = _HANDSHAKE.Response(error_code=error, mechanisms=mechanisms)
    return encode_response(ApiKey.SASL_HANDSHAKE, header.api_version, header.correlation_id, body, framed=True)


def _authenticate_response(
    header: Any, error: int, message: str | None, auth_bytes: bytes = b"", lifetime_ms: int = 0
) -> bytes:
    body = _AUTHENTICATE.Response(
        error_code=error, error_message=message, auth_bytes=auth_bytes, session_lifetime_ms=lifetime_ms
    )
    return encode_response(ApiKey.SASL_AUTHENTICATE, header.api_version, header.correlation_id, body, framed=True)


def _error_response(request: Any, error: int) -> bytes | None:
    """``request``'s API response carrying ``error`` in its top-level ``error_code``; None when it has none."""
    header = request.header
    try:
        body = request.api.Response(error_code=error)
        return encode_response(header.api_key, header.api_version, header.correlation_id, body, framed=True)
    except Exception:
        return None
