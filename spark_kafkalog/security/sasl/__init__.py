"""SASL mechanisms, client and server side, sans-IO: PLAIN, SCRAM-SHA-256/512, OAUTHBEARER.

Contract (used by ``broker.network`` and ``spark_kafkalog.client.network``):

* ``SaslServerCallbacks``: what a server checks credentials against;
* ``create_server(mechanism, callbacks) -> SaslServer``: one per exchange; ``evaluate_response(bytes) ->
  bytes`` (the next challenge, possibly empty) raises ``SaslAuthenticationFailed``; ``complete``,
  ``principal`` ("User:<name>"), ``credential_expiry_ms``, ``token_authenticated``;
* ``SaslClientSettings`` and ``create_client(settings) -> SaslClient``: ``initial_response()``,
  ``evaluate_challenge(bytes) -> bytes | None``, ``complete``, ``credential_expiry_ms``.

Modules: ``base`` (protocols, callbacks, the generic failure), ``plain``, ``scram``, ``oauthbearer``
(+ ``jwks`` for signed tokens, ``oidc`` for client-credentials tokens), ``settings`` (client config),
``factory``.
"""

from __future__ import annotations

from .base import MECHANISMS, SaslClient, SaslServer, SaslServerCallbacks, generic_failure_message
from .factory import create_client, create_server
from .jwks import JwksValidator, load_jwks
from .oauthbearer import OAuthBearerToken, OAuthTokenInvalid, UnsecuredJwsValidator
from .oidc import ClientCredentialsTokenProvider
from .scram import ScramCredential, ScramMechanism
from .settings import SaslClientSettings

__all__ = [
    "MECHANISMS",
    "ClientCredentialsTokenProvider",
    "JwksValidator",
    "OAuthBearerToken",
    "OAuthTokenInvalid",
    "SaslClient",
    "SaslClientSettings",
    "SaslServer",
    "SaslServerCallbacks",
    "ScramCredential",
    "ScramMechanism",
    "UnsecuredJwsValidator",
    "create_client",
    "create_server",
    "generic_failure_message",
    "load_jwks",
]
