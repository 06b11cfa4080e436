"""SASL mechanisms, client and server side, sans-IO (filled in by the mechanisms' modules).

Contract (used by ``broker.network`` and ``spark_kafkalog.client.network``):

* ``SaslServerCallbacks``: what a server checks credentials against;
* ``create_server(mechanism, callbacks) -> SaslServer``: one per exchange; ``evaluate_response(bytes) ->
  bytes`` (the next challenge, possibly empty) raises ``SaslAuthenticationFailed``; ``complete``,
  ``principal`` ("User:<name>"), ``credential_expiry_ms``, ``token_authenticated``;
* ``SaslClientSettings`` and ``create_client(settings) -> SaslClient``: ``initial_response()``,
  ``evaluate_challenge(bytes) -> bytes | None``, ``complete``, ``credential_expiry_ms``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SaslServerCallbacks"]


def _no_scram_credential(mechanism: str, username: str) -> Any:
    return None


@dataclass(frozen=True)
class SaslServerCallbacks:
    """What the server side of every mechanism checks against (one per listener).

    * ``plain_users``: PLAIN's accepted users, JAAS ``user_<name>="<password>"`` (repr hides them);
    * ``scram_credential(mechanism, username)``: the stored ``ScramCredential`` or None;
    * ``oauth_validator``: validates an OAUTHBEARER token (None: Kafka's unsecured JWS validator, for
      development only).
    """

    plain_users: Mapping[str, str] = field(default_factory=dict, repr=False)
    scram_credential: Callable[[str, str], Any] = _no_scram_credential
    oauth_validator: Any = None
