"""SASL OAUTHBEARER (RFC 7628, Kafka's KIP-255), client and server, and Kafka's unsecured JWS tokens.

Client initial response (``OAuthBearerClientInitialResponse``)::

    n,[a=<saslname>],  \\x01  auth=Bearer <token>  \\x01  (<key>=<value> \\x01)*  \\x01

keys are letters only (``auth`` is reserved), values printable ASCII plus space, tab, CR, LF; the token is
an RFC 6750 b64token ``[-_~+/.a-zA-Z0-9]+=*`` (a compact JWS in practice; Kafka 3.x accepted only
``[-_.a-zA-Z0-9]+``). Server: an empty challenge on success. On an invalid token it answers
the JSON challenge ``{"status":"invalid_token"}`` (``"insufficient_scope"`` + ``"scope"`` for a missing
scope); the client must answer ``\\x01`` and the server then fails the exchange (error 58). A malformed
message, or an authzid other than the token's principal, fails at once. Every failure reaching the peer
carries the generic message of ``base.generic_failure_message``.

Validators implement ``validate(token: str, now_ms: int) -> OAuthBearerToken`` and raise
``OAuthTokenInvalid``: ``UnsecuredJwsValidator`` here (Kafka's default, alg ``none``, development only) and
``jwks.JwksValidator`` (signed JWTs against a JWKS). Unsecured tokens are
``base64url({"alg":"none"}) "." base64url(claims) "."``; times are seconds since the epoch (fractions
allowed).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import SaslAuthenticationFailed, SecurityConfigError
from .base import authentication_failed
from .scram import unescape_saslname

__all__ = [
    "OAuthBearerClient",
    "OAuthBearerServer",
    "OAuthBearerToken",
    "OAuthTokenInvalid",
    "OAuthTokenValidator",
    "UnsecuredJwsValidator",
    "b64url_decode",
    "b64url_encode",
    "client_initial_response",
    "decode_jwt_part",
    "parse_client_initial_response",
    "unsecured_jws",
    "unsecured_login_token",
]

MECHANISM = "OAUTHBEARER"
_EXTENSION_KEY = re.compile(r"[A-Za-z]+\Z")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7e \t\r\n]+\Z")
_AUTH = re.compile(r"(\w+) +([-_~+/.a-zA-Z0-9]+=*)\Z", re.ASCII)


@dataclass(frozen=True)
class OAuthBearerToken:
    """A validated token: its principal, scope, and times in wall-clock ms (``value`` hidden from repr)."""

    value: str = field(repr=False)
    principal: str
    expiry_ms: int
    scope: frozenset[str] = frozenset()
    issued_at_ms: int | None = None


class OAuthTokenInvalid(Exception):
    """A token failed validation. ``status`` and ``scope`` go into the JSON challenge, ``str`` to the log."""

    def __init__(self, message: str, *, status: str = "invalid_token", scope: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.scope = scope


class OAuthTokenValidator(Protocol):
    def validate(self, token: str, now_ms: int) -> OAuthBearerToken: ...


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """base64url without padding (RFC 7515 §2); raises ``ValueError`` on anything else."""
    if not re.fullmatch(r"[-_A-Za-z0-9]*", text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error:
        raise ValueError("not base64url") from None


def decode_jwt_part(part: str, what: str) -> dict[str, Any]:
    """One JSON object part of a compact JWS; raises ``OAuthTokenInvalid``."""
    try:
        value = json.loads(b64url_decode(part))
    except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than the parser goes
        raise OAuthTokenInvalid(f"token {what} is not base64url JSON") from None
    if not isinstance(value, dict):
        raise OAuthTokenInvalid(f"token {what} is not a JSON object")
    return value


def _seconds_claim(claims: Mapping[str, Any], name: str, required: bool) -> int | None:
    value = claims.get(name)
    if value is None:
        if required:
            raise OAuthTokenInvalid(f"token has no {name!r} claim")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise OAuthTokenInvalid(f"token claim {name!r} is not a finite number")
    return int(value * 1000)


def _scope_of(claims: Mapping[str, Any], scope_claim: str) -> frozenset[str]:
    value = claims.get(scope_claim)
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    raise OAuthTokenInvalid(f"token claim {scope_claim!r} is neither a string nor a list of strings")


def check_claims(
    token: str,
    claims: Mapping[str, Any],
    now_ms: int,
    *,
    principal_claim: str,
    scope_claim: str,
    required_scope: Sequence[str],
    clock_skew_ms: int,
) -> OAuthBearerToken:
    """Kafka's ``OAuthBearerValidationUtils`` checks on decoded claims: principal present, ``exp`` present and
    not past (with skew), ``iat`` (optional) not in the future and before ``exp``, ``nbf`` (optional) reached,
    required scope held."""
    principal = claims.get(principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise OAuthTokenInvalid(f"token has no string {principal_claim!r} claim")
    expiry_ms = _seconds_claim(claims, "exp", required=True)
    assert expiry_ms is not None
    issued_ms = _seconds_claim(claims, "iat", required=False)
    not_before_ms = _seconds_claim(claims, "nbf", required=False)
    if now_ms - clock_skew_ms >= expiry_ms:
        raise OAuthTokenInvalid("token has expired")
    if issued_ms is not None and issued_ms > now_ms + clock_skew_ms:
        raise OAuthTokenInvalid("token 'iat' is in the future")
    if issued_ms is not None and issued_ms >= expiry_ms:
        raise OAuthTokenInvalid("token 'iat' is not before 'exp'")
    if not_before_ms is not None and not_before_ms > now_ms + clock_skew_ms:
        raise OAuthTokenInvalid("token is not valid yet ('nbf')")
    scope = _scope_of(claims, scope_claim)
    missing = [s for s in required_scope if s not in scope]
    if missing:
        raise OAuthTokenInvalid(
            f"token lacks the required scope {' '.join(missing)!r}",
            status="insufficient_scope",
            scope=" ".join(required_scope),
        )
    return OAuthBearerToken(token, principal, expiry_ms, scope, issued_ms)


@dataclass(frozen=True)
class UnsecuredJwsValidator:
    """Kafka's default server validator (``OAuthBearerUnsecuredValidatorCallbackHandler``): accepts only
    unsigned tokens (``alg`` ``none``, empty signature), for development. Options as Kafka's JAAS
    ``unsecuredValidatorPrincipalClaimName``, ``...ScopeClaimName``, ``...RequiredScope``,
    ``...AllowableClockSkewMs``."""

    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: tuple[str, ...] = ()
    clock_skew_ms: int = 0

    def validate(self, token: str, now_ms: int) -> OAuthBearerToken:
        parts = token.split(".")
        if len(parts) != 3:
            raise OAuthTokenInvalid("token is not a compact JWS (three '.'-separated parts)")
        header = decode_jwt_part(parts[0], "header")
        if header.get("alg") != "none" or parts[2]:
            raise OAuthTokenInvalid("the unsecured validator accepts only unsigned tokens (alg 'none')")
        claims = decode_jwt_part(parts[1], "claims")
        return check_claims(
            token,
            claims,
            now_ms,
            principal_claim=self.principal_claim,
            scope_claim=self.scope_claim,
            required_scope=self.required_scope,
            clock_skew_ms=self.clock_skew_ms,
        )


def unsecured_jws(claims: Mapping[str, Any]) -> str:
    """An unsigned compact JWS carrying ``claims``."""
    header = b64url_encode(b'{"alg":"none"}')
    return f"{header}.{b64url_encode(json.dumps(dict(claims), separators=(',', ':')).encode())}."


def unsecured_login_token(options: Mapping[str, str], now_s: float | None = None) -> tuple[str, float]:
    """A token as Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` builds it from JAAS options:
    ``unsecuredLoginStringClaim_<name>``, ``unsecuredLoginNumberClaim_<name>``,
    ``unsecuredLoginListClaim_<name>`` (first character is the separator: ``",a,b"``),
    ``unsecuredLoginPrincipalClaimName`` (default ``sub``, must be set), ``unsecuredLoginLifetimeSeconds``
    (default 3600). Returns ``(token, expiry in epoch seconds)``; ``iat``/``exp`` are set here."""
    now = time.time() if now_s is None else now_s
    try:
        lifetime = float(options.get("unsecuredLoginLifetimeSeconds", "3600"))
    except ValueError:
        raise SecurityConfigError("sasl.jaas.config: unsecuredLoginLifetimeSeconds is not a number") from None
    claims: dict[str, Any] = {}
    for key, value in options.items():
        name = key.partition("_")[2]
        if key.startswith("unsecuredLoginStringClaim_"):
            claims[name] = value
        elif key.startswith("unsecuredLoginNumberClaim_"):
            try:
                claims[name] = float(value) if "." in value else int(value)
            except ValueError:
                raise SecurityConfigError(f"sasl.jaas.config: {key} is not a number") from None
        elif key.startswith("unsecuredLoginListClaim_"):
            claims[name] = [v for v in value[1:].split(value[:1])] if value else []
    principal_claim = options.get("unsecuredLoginPrincipalClaimName", "sub")
    if not isinstance(claims.get(principal_claim), str) or not claims[principal_claim]:
        raise SecurityConfigError(
            f"sasl.jaas.config: unsecured OAUTHBEARER login needs unsecuredLoginStringClaim_{principal_claim}"
        )
    claims["iat"] = now
    claims["exp"] = now + lifetime
    return unsecured_jws(claims), now + lifetime


def client_initial_response(token: str, extensions: Mapping[str, str] = {}, authzid: str = "") -> bytes:
    """The client's message; raises ``SecurityConfigError`` for an extension name/value Kafka refuses."""
    if not _AUTH.fullmatch(f"Bearer {token}"):
        raise SecurityConfigError("OAUTHBEARER token must be an RFC 6750 b64token ([-_~+/.a-zA-Z0-9]+=*)")
    kvs = ""
    for key, value in extensions.items():
        if key == "auth" or not _EXTENSION_KEY.match(key) or not _EXTENSION_VALUE.match(value):
            raise SecurityConfigError(
                f"OAUTHBEARER extension {key!r}: names are letters only and not 'auth', values printable ASCII"
            )
        kvs += f"{key}={value}\x01"
    gs2 = f"n,a={authzid.replace('=', '=3D').replace(',', '=2C')}," if authzid else "n,,"
    return f"{gs2}\x01auth=Bearer {token}\x01{kvs}\x01".encode()


def parse_client_initial_response(response: bytes) -> tuple[str, str, dict[str, str]]:
    """``(authzid, token, extensions)``; raises ``ValueError`` naming what is malformed (never the token)."""
    try:
        text = bytes(response).decode("ascii")
    except UnicodeDecodeError:
        raise ValueError("message is not ASCII") from None
    if not text.startswith("n,"):
        raise ValueError("message must start with gs2 header 'n,'")
    authzid_part, sep, rest = text[2:].partition(",")
    if not sep:
        raise ValueError("malformed gs2 header")
    authzid = ""
    if authzid_part:
        if not authzid_part.startswith("a="):
            raise ValueError("malformed gs2 header")
        authzid = unescape_saslname(authzid_part[2:])
    if not rest.startswith("\x01") or not rest.endswith("\x01\x01"):
        raise ValueError("key/value pairs must be framed by \\x01 ... \\x01\\x01")
    pairs: dict[str, str] = {}
    for kv in rest[1:-2].split("\x01") if rest[1:-2] else []:
        key, eq, value = kv.partition("=")
        if not eq or not _EXTENSION_KEY.match(key) or not _EXTENSION_VALUE.match(value):
            raise ValueError("malformed key=value pair")
        if key in pairs:
            raise ValueError(f"key {key!r} given twice")
        pairs[key] = value
    auth = pairs.pop("auth", None)
    if auth is None:
        raise ValueError("no 'auth' key")
    match = _AUTH.fullmatch(auth)
    if match is None or match.group(1).lower() != "bearer":
        raise ValueError("'auth' is not 'Bearer <token>'")
    return authzid, match.group(2), pairs


class OAuthBearerServer:
    """Server side of one OAUTHBEARER exchange (see the module docstring for the error dance)."""

    mechanism = MECHANISM

    def __init__(self, validator: OAuthTokenValidator | None, clock_ms: Callable[[], int]) -> None:
        self._validator: OAuthTokenValidator = validator if validator is not None else UnsecuredJwsValidator()
        self._clock_ms = clock_ms
        self._token: OAuthBearerToken | None = None
        self._pending_error: str | None = None
        self._failed = False
        self.extensions: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"OAuthBearerServer(complete={self.complete})"

    def _fail(self, detail: str) -> SaslAuthenticationFailed:
        self._failed = True
        return authentication_failed(MECHANISM, f"OAUTHBEARER: {detail}")

    def evaluate_response(self, response: bytes) -> bytes:
        if self._failed or self._token is not None:
            raise self._fail("message received after the exchange ended")
        if self._pending_error is not None:
            detail, self._pending_error = self._pending_error, None
            if bytes(response) != b"\x01":
                raise self._fail(f"client did not acknowledge the error challenge; {detail}")
            raise self._fail(detail)
        try:
            authzid, token, extensions = parse_client_initial_response(response)
        except ValueError as e:
            raise self._fail(f"malformed client message: {e}") from None
        try:
            validated = self._validator.validate(token, self._clock_ms())
        except OAuthTokenInvalid as e:
            self._pending_error = f"invalid token: {e}"
            challenge: dict[str, str] = {"status": e.status}
            if e.scope is not None:
                challenge["scope"] = e.scope
            return json.dumps(challenge, separators=(",", ":")).encode()
        except Exception as e:  # a validator's own bug must not let anyone in, nor escape as another error
            raise self._fail(f"token validator failed: {type(e).__name__}") from None
        if authzid and authzid != validated.principal:
            raise self._fail(f"authorization id differs from the token's principal {validated.principal!r}")
        self.extensions = extensions
        self._token = validated
        return b""

    @property
    def complete(self) -> bool:
        return self._token is not None

    @property
    def principal(self) -> str:
        if self._token is None:
            raise RuntimeError("OAUTHBEARER exchange not complete")
        return f"User:{self._token.principal}"

    @property
    def credential_expiry_ms(self) -> int | None:
        return None if self._token is None else self._token.expiry_ms

    @property
    def token_authenticated(self) -> bool:
        return False


class OAuthBearerClient:
    """Client side: ``token_provider()`` -> ``(token, expiry epoch seconds)`` (librdkafka's ``oauth_cb``
    shape), called by ``initial_response`` (it may do I/O: an OIDC provider POSTs to its token endpoint)."""

    mechanism = MECHANISM

    def __init__(self, token_provider: Callable[[], tuple[str, float]], extensions: Mapping[str, str] = {}) -> None:
        self._provider = token_provider
        self._extensions = dict(extensions)
        self._error: str | None = None
        self.complete = False
        self.credential_expiry_ms: int | None = None

    def __repr__(self) -> str:
        return f"OAuthBearerClient(complete={self.complete})"

    def initial_response(self) -> bytes:
        """Calls the provider; a 4-tuple's fourth item (a mapping) adds extensions, as confluent-kafka's
        ``oauth_cb`` may return ``(token, expiry, principal, extensions)``."""
        result: tuple[Any, ...] = self._provider()
        token, expiry_s = result[0], result[1]
        if not isinstance(token, str) or isinstance(expiry_s, bool) or not isinstance(expiry_s, int | float):
            raise SecurityConfigError("OAUTHBEARER token provider must return (token: str, expiry epoch seconds)")
        extensions = dict(self._extensions)
        if len(result) >= 4 and isinstance(result[3], Mapping):
            extensions.update({str(k): str(v) for k, v in result[3].items()})
        self.credential_expiry_ms = int(expiry_s * 1000)
        return client_initial_response(token, extensions)

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        if self._error is not None or self.complete:
            raise SaslAuthenticationFailed(f"OAUTHBEARER authentication failed: {self._error or 'unexpected message'}")
        if not challenge:
            self.complete = True
            return None
        try:
            status = str(json.loads(bytes(challenge)).get("status", "unknown"))
        except (ValueError, AttributeError, RecursionError):
            status = "unparseable error challenge"
        self._error = f"server rejected the token ({status})"
        return b"\x01"
