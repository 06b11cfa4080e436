"""SASL PLAIN (RFC 4616), client and server, as Kafka's ``PlainSaslServer`` speaks it.

One message, client to server: ``[authzid] NUL authcid NUL passwd`` in UTF-8; the server answers an empty
challenge on success. Kafka's rules: exactly three parts; empty user or password fail; the authzid must be
empty or equal to the user (CVE-2017-12610 was impersonation through it); the password is compared in
constant time (CVE-2021-38153). Every failure is the same ``SaslAuthenticationFailed``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from .base import authentication_failed

__all__ = ["PlainClient", "PlainServer"]

MECHANISM = "PLAIN"
_UNKNOWN_USER = secrets.token_bytes(32)


def _digest(password: str) -> bytes:
    return hashlib.sha256(password.encode("utf-8")).digest()


class PlainServer:
    """Server side: checks one PLAIN message against ``users`` (user -> password)."""

    mechanism = MECHANISM

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self._user: str | None = None

    def __repr__(self) -> str:
        return f"PlainServer(complete={self.complete})"

    def evaluate_response(self, response: bytes) -> bytes:
        if self._user is not None:
            raise authentication_failed(MECHANISM, "PLAIN: a second message after a successful exchange")
        try:
            text = bytes(response).decode("utf-8")
        except UnicodeDecodeError:
            raise authentication_failed(MECHANISM, "PLAIN: message is not UTF-8") from None
        parts = text.split("\0")
        if len(parts) != 3:
            raise authentication_failed(MECHANISM, f"PLAIN: expected 3 NUL-separated parts, got {len(parts)}")
        authzid, user, password = parts
        if not user:
            raise authentication_failed(MECHANISM, "PLAIN: empty username")
        if not password:
            raise authentication_failed(MECHANISM, f"PLAIN: empty password for user {user!r}")
        if authzid and authzid != user:
            raise authentication_failed(MECHANISM, f"PLAIN: authorization id differs from user {user!r}")
        expected = self._users.get(user)
        # compare fixed-length digests (no length leak), against a random stand-in for an unknown user
        ok = hmac.compare_digest(_digest(password), _digest(expected) if expected is not None else _UNKNOWN_USER)
        if expected is None or not ok:
            raise authentication_failed(MECHANISM, f"PLAIN: invalid username or password for user {user!r}")
        self._user = user
        return b""

    @property
    def complete(self) -> bool:
        return self._user is not None

    @property
    def principal(self) -> str:
        if self._user is None:
            raise RuntimeError("PLAIN exchange not complete")
        return f"User:{self._user}"

    @property
    def credential_expiry_ms(self) -> int | None:
        return None

    @property
    def token_authenticated(self) -> bool:
        return False


@dataclass
class PlainClient:
    """Client side: sends ``NUL user NUL password`` (no authzid, as Kafka's client), then expects b""."""

    username: str
    password: str = field(repr=False)
    mechanism: str = field(default=MECHANISM, init=False)
    complete: bool = field(default=False, init=False)
    credential_expiry_ms: int | None = field(default=None, init=False)

    def initial_response(self) -> bytes:
        return b"\0" + self.username.encode("utf-8") + b"\0" + self.password.encode("utf-8")

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        self.complete = True
        return None
