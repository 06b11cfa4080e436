"""HTTP basic authentication of the registry's REST listeners against the broker's own users
(``schema.registry.authentication.method=BASIC``).

``BasicAuthenticator(plain_users, scram_credential)``: ``authenticate(header) -> principal | None`` checks an
``Authorization: Basic base64(user:password)`` header (RFC 7617, UTF-8) against

* the broker's SCRAM credentials (Kafka's ``/config/users``, SCRAM-SHA-512 then SCRAM-SHA-256, as the broker's
  SASL servers look them up): the password is salted with the stored salt and iterations (PBKDF2-HMAC), the
  StoredKey ``H(HMAC(SaltedPassword, "Client Key"))`` recomputed and compared in constant time;
* the ``user_<name>="<password>"`` entries of the broker listeners' PLAIN JAAS configs (constant-time compare).

A user found in both is accepted by either. The principal is ``User:<name>``. Because PBKDF2 is slow on purpose,
a successful check is remembered per user as a SHA-256 of the password with the credential it matched (a
credential change invalidates it); nothing else about passwords is kept. Failures are logged with the user
name and the peer only, never the password.

``challenge()``: the 401 answer, with ``WWW-Authenticate: Basic realm="SchemaRegistry"`` and Confluent's body
``{"error_code": 401, "message": "Unauthorized"}``.

Concurrency: used on the registry's event loop; the lookups it is given must be thread-safe (the broker's
``ScramCredentialCache.lookup`` is).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
from collections.abc import Callable, Mapping
from typing import Any

from spark_kafkalog.security.sasl.scram import ScramMechanism

from .http_server import HttpResponse

__all__ = ["REALM", "BasicAuthenticator", "parse_basic_header"]

log = logging.getLogger("kafkalog.schema_registry.auth")

REALM = "SchemaRegistry"
_MECHANISMS = (ScramMechanism.from_name("SCRAM-SHA-512"), ScramMechanism.from_name("SCRAM-SHA-256"))


def parse_basic_header(header: str | None) -> tuple[str, str] | None:
    """``(user, password)`` of an ``Authorization: Basic ...`` value, or None when absent or malformed."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "basic" or not token.strip():
        return None
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, sep, password = decoded.partition(":")
    if not sep or not user:
        return None
    return user, password


class BasicAuthenticator:
    """Checks basic credentials against SCRAM credentials and PLAIN JAAS users (see the module docstring)."""

    def __init__(
        self,
        plain_users: Mapping[str, str],
        scram_credential: Callable[[str, str], Any] | None = None,
    ) -> None:
        self._plain = dict(plain_users)
        self._scram = scram_credential
        self._verified: dict[str, tuple[bytes, Any]] = {}

    def __repr__(self) -> str:
        return f"BasicAuthenticator(plain_users={len(self._plain)}, scram={self._scram is not None})"

    def authenticate(self, header: str | None, *, peer: str = "") -> str | None:
        """The principal ``User:<name>`` when ``header`` carries valid credentials, else None (logged)."""
        parsed = parse_basic_header(header)
        if parsed is None:
            log.info("schema registry: request from %s without valid basic credentials", peer or "?")
            return None
        user, password = parsed
        if self._check(user, password):
            return f"User:{user}"
        log.warning("schema registry: authentication failed for user %r from %s", user, peer or "?")
        return None

    def _check(self, user: str, password: str) -> bool:
        expected = self._plain.get(user)
        if expected is not None and hmac.compare_digest(expected.encode(), password.encode()):
            return True
        if self._scram is None:
            return False
        digest = hashlib.sha256(password.encode()).digest()
        for mechanism in _MECHANISMS:
            credential = self._scram(mechanism.mechanism_name, user)
            if credential is None:
                continue
            cached = self._verified.get(user)
            if cached is not None and cached[1] is credential and hmac.compare_digest(cached[0], digest):
                return True
            salted = mechanism.salted_password(password, credential.salt, credential.iterations)
            stored = mechanism.hash(mechanism.hmac(salted, b"Client Key"))
            if hmac.compare_digest(stored, credential.stored_key):
                self._verified[user] = (digest, credential)
                return True
        return False

    @staticmethod
    def challenge() -> HttpResponse:
        """The 401 answer asking for basic credentials."""
        return HttpResponse.error(401, 401, "Unauthorized", [("WWW-Authenticate", f'Basic realm="{REALM}"')])
