"""Signed-JWT validation for OAUTHBEARER against a JSON Web Key Set (Kafka's KIP-768 validator), failing closed.

``JwksValidator.validate(token, now_ms)`` accepts a compact JWS only when all of this holds, and raises
``OAuthTokenInvalid`` otherwise:

* three parts, header and claims base64url JSON objects, no ``crit`` header;
* header ``alg`` in ``allowed_algorithms`` (RS256/384/512, PS256/384/512, ES256/384/512 are the ones this
  module can verify; ``none`` and the HMAC algorithms can never be allowed: a public key set cannot verify
  them, and accepting them is the CVE-2026-33557 class of bug);
* the key: with a ``kid`` header, a key of that ``kid``; without one, the set must hold exactly one key
  usable for the algorithm. A usable key has the right ``kty`` (and ``crv`` for EC), ``use`` absent or
  ``sig``, ``alg`` absent or equal to the header's. Keys of other types (``oct``...) are ignored;
* the signature verifies (``cryptography``);
* claims: the principal claim (``sub``) is a non-empty string, ``exp`` present and not past, ``iat``/``nbf``
  (optional) not in the future, each within ``clock_skew_s``; ``iss`` equal to ``expected_issuer`` and ``aud``
  (string or list) containing one of ``expected_audience`` when those are configured; the required scope.

The key set is a parsed dict, or a loader (``functools.partial(load_jwks, url, allowed_urls)``) called on
first use, after ``refresh_ms`` and, at most every ``min_refresh_interval_ms``, when a ``kid`` is unknown
(key rotation). A loader failure makes tokens invalid (never valid). Thread-safety: one validator may be
shared by a listener's connections on one event loop; it is not locked.

``load_jwks(source, allowed_urls)`` reads a JWKS from a file path or an ``http(s)://``/``file:`` URL only if
the source is on the allow-list (Kafka 4's ``org.apache.kafka.sasl.oauthbearer.allowed.urls``): any URL a
config names is an SSRF / file-read vector otherwise (CVE-2025-27817).
"""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from ..errors import SecurityConfigError
from .oauthbearer import OAuthBearerToken, OAuthTokenInvalid, b64url_decode, check_claims, decode_jwt_part

__all__ = ["DEFAULT_ALGORITHMS", "JwksValidator", "SUPPORTED_ALGORITHMS", "load_jwks"]

_HASHES: dict[str, type[hashes.HashAlgorithm]] = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
_EC_CURVES: dict[str, tuple[str, type[ec.EllipticCurve], int]] = {
    "ES256": ("P-256", ec.SECP256R1, 32),
    "ES384": ("P-384", ec.SECP384R1, 48),
    "ES512": ("P-521", ec.SECP521R1, 66),
}
SUPPORTED_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"})
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "PS256")
_MAX_JWKS_BYTES = 1 << 20
_B64URL = re.compile(r"[-_A-Za-z0-9]*")


def _b64url_int(value: Any, what: str) -> int:
    if not isinstance(value, str):
        raise ValueError(f"JWK member {what!r} missing")
    return int.from_bytes(b64url_decode(value), "big")


def _public_key(jwk: Mapping[str, Any]) -> Any:
    """The ``cryptography`` public key of an RSA or EC JWK; None for other key types."""
    kty = jwk.get("kty")
    if kty == "RSA":
        return rsa.RSAPublicNumbers(_b64url_int(jwk.get("e"), "e"), _b64url_int(jwk.get("n"), "n")).public_key()
    if kty == "EC":
        for _alg, (crv, curve, _size) in _EC_CURVES.items():
            if jwk.get("crv") == crv:
                x, y = _b64url_int(jwk.get("x"), "x"), _b64url_int(jwk.get("y"), "y")
                return ec.EllipticCurvePublicNumbers(x, y, curve()).public_key()
    return None


def _usable(jwk: Mapping[str, Any], key: Any, alg: str) -> bool:
    if jwk.get("use", "sig") != "sig" or jwk.get("alg", alg) != alg:
        return False
    if alg[:2] in ("RS", "PS"):
        return isinstance(key, rsa.RSAPublicKey)
    if alg in _EC_CURVES:
        return isinstance(key, ec.EllipticCurvePublicKey) and jwk.get("crv") == _EC_CURVES[alg][0]
    return False


def _verify(alg: str, key: Any, signing_input: bytes, signature: bytes) -> bool:
    digest = _HASHES[alg[2:]]()
    try:
        if alg.startswith("RS"):
            key.verify(signature, signing_input, padding.PKCS1v15(), digest)
        elif alg.startswith("PS"):
            key.verify(signature, signing_input, padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
        else:
            size = _EC_CURVES[alg][2]
            if len(signature) != 2 * size:
                return False
            r, s = int.from_bytes(signature[:size], "big"), int.from_bytes(signature[size:], "big")
            key.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(digest))
    except InvalidSignature:
        return False
    return True


class JwksValidator:
    """Validates signed JWTs against a JWKS (see the module docstring for every check)."""

    def __init__(
        self,
        jwks: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
        expected_audience: str | Sequence[str] | None = None,
        expected_issuer: str | None = None,
        clock_skew_s: int = 30,
        sub_claim: str = "sub",
        scope_claim: str = "scope",
        allowed_algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        required_scope: Sequence[str] = (),
        refresh_ms: int = 3_600_000,
        min_refresh_interval_ms: int = 10_000,
    ) -> None:
        unknown = set(allowed_algorithms) - SUPPORTED_ALGORITHMS
        if unknown or not allowed_algorithms:
            raise SecurityConfigError(
                f"OAUTHBEARER JWKS validator: algorithms {sorted(unknown)} cannot be allowed "
                f"(supported: {', '.join(sorted(SUPPORTED_ALGORITHMS))})"
            )
        self._allowed = frozenset(allowed_algorithms)
        self._audience = (expected_audience,) if isinstance(expected_audience, str) else expected_audience
        self._issuer = expected_issuer
        self._skew_ms = clock_skew_s * 1000
        self._sub_claim = sub_claim
        self._scope_claim = scope_claim
        self._required_scope = tuple(required_scope)
        self._refresh_ms = refresh_ms
        self._min_refresh_ms = min_refresh_interval_ms
        self._loader = jwks if callable(jwks) else None
        self._keys: list[tuple[Mapping[str, Any], Any]] | None = None
        self._loaded_ms: int | None = None
        if not callable(jwks):
            self._keys = self._parse(jwks)

    def __repr__(self) -> str:
        return (
            f"JwksValidator(issuer={self._issuer!r}, audience={self._audience!r}, algorithms={sorted(self._allowed)})"
        )

    @staticmethod
    def _parse(jwks: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Any]]:
        keys = jwks.get("keys") if isinstance(jwks, Mapping) else None
        if not isinstance(keys, list):
            raise SecurityConfigError("OAUTHBEARER JWKS: expected a JSON object with a 'keys' list")
        out = []
        for jwk in keys:
            if not isinstance(jwk, Mapping):
                continue
            try:
                key = _public_key(jwk)
            except ValueError:
                continue  # a malformed key is never usable; the others still are
            if key is not None:
                out.append((jwk, key))
        return out

    def _load(self, now_ms: int) -> None:
        assert self._loader is not None
        self._loaded_ms = now_ms
        try:
            self._keys = self._parse(self._loader())
        except (SecurityConfigError, OSError, ValueError) as e:
            self._keys = None
            raise OAuthTokenInvalid(f"JWKS could not be loaded: {e}") from None

    def _candidates(self, kid: Any, alg: str, now_ms: int) -> list[Any]:
        if self._loader is not None:
            # first use, a periodic refresh, or a retry (rate-limited) after a failed load
            wait_ms = self._refresh_ms if self._keys is not None else self._min_refresh_ms
            if self._loaded_ms is None or now_ms - self._loaded_ms >= wait_ms:
                self._load(now_ms)
        keys = self._keys or []
        if kid is not None:
            found = [key for jwk, key in keys if jwk.get("kid") == kid and _usable(jwk, key, alg)]
            if not found and self._loader is not None and now_ms - (self._loaded_ms or 0) >= self._min_refresh_ms:
                self._load(now_ms)
                found = [key for jwk, key in self._keys or [] if jwk.get("kid") == kid and _usable(jwk, key, alg)]
            if not found:
                raise OAuthTokenInvalid(f"no key with kid {kid!r} usable for {alg} in the JWKS")
            return found
        found = [key for jwk, key in keys if _usable(jwk, key, alg)]
        if len(found) != 1:
            raise OAuthTokenInvalid(f"token has no 'kid' and the JWKS holds {len(found)} keys usable for {alg}")
        return found

    def validate(self, token: str, now_ms: int) -> OAuthBearerToken:
        parts = token.split(".")
        if len(parts) != 3 or not all(_B64URL.fullmatch(part) for part in parts):
            raise OAuthTokenInvalid("token is not a compact JWS (three '.'-separated base64url parts)")
        header = decode_jwt_part(parts[0], "header")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self._allowed:
            raise OAuthTokenInvalid(f"token algorithm {alg!r} is not allowed")
        if "crit" in header:
            raise OAuthTokenInvalid("token has critical header parameters this validator does not understand")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise OAuthTokenInvalid("token 'kid' is not a string")
        try:
            signature = b64url_decode(parts[2])
        except ValueError:
            raise OAuthTokenInvalid("token signature is not base64url") from None
        signing_input = f"{parts[0]}.{parts[1]}".encode("ascii")
        if not any(_verify(alg, key, signing_input, signature) for key in self._candidates(kid, alg, now_ms)):
            raise OAuthTokenInvalid("token signature does not verify")
        claims = decode_jwt_part(parts[1], "claims")
        if self._issuer is not None and claims.get("iss") != self._issuer:
            raise OAuthTokenInvalid("token issuer ('iss') is not the expected issuer")
        if self._audience is not None:
            aud = claims.get("aud")
            auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
            if not any(a in self._audience for a in auds if isinstance(a, str)):
                raise OAuthTokenInvalid("token audience ('aud') does not contain an expected audience")
        return check_claims(
            token,
            claims,
            now_ms,
            principal_claim=self._sub_claim,
            scope_claim=self._scope_claim,
            required_scope=self._required_scope,
            clock_skew_ms=self._skew_ms,
        )


def _allowed_source(source: str, allowed_urls: Collection[str]) -> tuple[str, str]:
    """``("url", url)`` or ``("file", path)`` when ``source`` is on the allow-list, else SecurityConfigError."""
    allowed = {u.strip() for u in allowed_urls if u.strip()}
    scheme = urllib.parse.urlsplit(source).scheme.lower()
    if scheme in ("http", "https"):
        if source in allowed:
            return "url", source
    elif scheme == "file" or not scheme or len(scheme) == 1:  # a path (``C:`` style drive letters too)
        path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(source).path) if scheme == "file" else source)
        resolved = path.resolve()
        if allowed & {source, str(resolved), resolved.as_uri(), "file:" + str(resolved)}:
            return "file", str(resolved)
    else:
        raise SecurityConfigError(f"OAUTHBEARER JWKS source {source!r}: only http(s) URLs and files can be read")
    raise SecurityConfigError(
        f"OAUTHBEARER JWKS source {source!r} is not in the allowed URLs "
        "(org.apache.kafka.sasl.oauthbearer.allowed.urls); refused to read it (CVE-2025-27817)"
    )


def load_jwks(
    source: str,
    allowed_urls: Collection[str],
    *,
    timeout_s: float = 10.0,
    urlopen: Callable[..., Any] = urllib.request.urlopen,
) -> dict[str, Any]:
    """Read and parse a JWKS (at most 1 MiB) from an allow-listed file or http(s) URL.

    Raises ``SecurityConfigError`` for a source not on the list or not JSON, ``OSError`` when it cannot be read.
    """
    kind, where = _allowed_source(source, allowed_urls)
    if kind == "file":
        with open(where, "rb") as f:
            data = f.read(_MAX_JWKS_BYTES + 1)
    else:
        request = urllib.request.Request(where, headers={"Accept": "application/json"})
        with urlopen(request, timeout=timeout_s) as response:
            data = response.read(_MAX_JWKS_BYTES + 1)
    if len(data) > _MAX_JWKS_BYTES:
        raise SecurityConfigError(f"OAUTHBEARER JWKS from {source!r} is larger than {_MAX_JWKS_BYTES} bytes")
    try:
        jwks = json.loads(data)
    except (ValueError, RecursionError):
        raise SecurityConfigError(f"OAUTHBEARER JWKS from {source!r} is not JSON") from None
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
        raise SecurityConfigError(f"OAUTHBEARER JWKS from {source!r} is not an object with a 'keys' list")
    return jwks
