"""What every SASL mechanism shares: the server and client protocols, the server's callbacks, the failure.

Both sides are sans-IO state machines over whole SASL tokens (the bytes of one SaslAuthenticate
``AuthBytes``, or one raw v0 frame): the broker feeds a server ``evaluate_response`` and sends back what it
returns; the client sends ``initial_response()`` and feeds every answer to ``evaluate_challenge``. Objects are
used by one connection at a time (no locking).

Failures on the server side raise ``SaslAuthenticationFailed`` whose ``str`` is the one message Kafka sends
for every mechanism ("Authentication failed during authentication due to invalid credentials with SASL
mechanism X"), so a peer can never tell an unknown user from a wrong password or a malformed message; the
reason goes to ``detail`` (server log only, never a secret).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import SaslAuthenticationFailed

__all__ = [
    "MECHANISMS",
    "SaslClient",
    "SaslServer",
    "SaslServerCallbacks",
    "authentication_failed",
    "generic_failure_message",
]

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


def generic_failure_message(mechanism: str) -> str:
    """The message Kafka's ``SaslServerAuthenticator`` answers (error 58) whatever went wrong."""
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


def authentication_failed(mechanism: str, detail: str) -> SaslAuthenticationFailed:
    """A server-side failure: the generic message for the peer, ``detail`` for the local log."""
    return SaslAuthenticationFailed(generic_failure_message(mechanism), detail=detail)


def _no_scram_credential(mechanism: str, username: str) -> Any:
    return None


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class SaslServerCallbacks:
    """What the server side of every mechanism checks against (one per listener).

    * ``plain_users``: PLAIN's accepted users, JAAS ``user_<name>="<password>"`` (repr hides them);
    * ``scram_credential(mechanism, username)``: the stored ``ScramCredential`` or None (mechanism is the
      SASL name, "SCRAM-SHA-256" or "SCRAM-SHA-512");
    * ``oauth_validator``: validates an OAUTHBEARER token, an object with
      ``validate(token: str, now_ms: int) -> OAuthBearerToken`` raising ``OAuthTokenInvalid``
      (``spark_kafkalog.security.sasl.oauthbearer``); None: Kafka's unsecured JWS validator with its
      defaults (alg ``none`` accepted: for development only);
    * ``scram_token_credential(mechanism, token_id)``: for SCRAM logins with ``tokenauth=true`` (delegation
      tokens), ``(ScramCredential, owner_name[, expiry_ms])`` or None (unknown or expired token); the
      principal is ``User:<owner_name>`` and ``expiry_ms`` becomes ``credential_expiry_ms`` (Kafka's token
      expiry bounds the session); when not set, every token login fails;
    * ``clock_ms``: wall-clock milliseconds (token expiry checks; injected by tests).
    """

    plain_users: Mapping[str, str] = field(default_factory=dict, repr=False)
    scram_credential: Callable[[str, str], Any] = _no_scram_credential
    oauth_validator: Any = None
    scram_token_credential: Callable[[str, str], Any] | None = None
    clock_ms: Callable[[], int] = _wall_clock_ms


class SaslServer(Protocol):
    """The server side of one exchange (a new one per authentication, re-authentication included)."""

    mechanism: str

    def evaluate_response(self, response: bytes) -> bytes:
        """Consume the client's next token; return the next challenge (possibly ``b""``).

        Raises ``SaslAuthenticationFailed`` (generic message) when the exchange failed.
        """
        ...

    @property
    def complete(self) -> bool:
        """True once the exchange succeeded."""
        ...

    @property
    def principal(self) -> str:
        """``"User:<name>"`` once complete (raises ``RuntimeError`` before)."""
        ...

    @property
    def credential_expiry_ms(self) -> int | None:
        """Wall-clock ms at which the credential expires (OAUTHBEARER ``exp``), else None."""
        ...

    @property
    def token_authenticated(self) -> bool:
        """True for a SCRAM login with ``tokenauth=true`` (a delegation token)."""
        ...


class SaslClient(Protocol):
    """The client side of one exchange."""

    mechanism: str

    def initial_response(self) -> bytes:
        """The first token the client sends (PLAIN, SCRAM client-first, OAUTHBEARER's bearer message)."""
        ...

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        """The next token to send, or None when there is nothing more to send.

        Raises ``SaslAuthenticationFailed`` when the server's answer is wrong (SCRAM's server signature,
        iterations out of bounds, a nonce that does not extend ours).
        """
        ...

    @property
    def complete(self) -> bool:
        """True once the server's last message was accepted."""
        ...

    @property
    def credential_expiry_ms(self) -> int | None:
        """Wall-clock ms at which the credential expires (OAUTHBEARER), else None."""
        ...
