"""``create_server`` and ``create_client``: one SASL exchange of the named mechanism, server or client side."""

from __future__ import annotations

from ..errors import SecurityConfigError
from .base import MECHANISMS, SaslClient, SaslServer, SaslServerCallbacks
from .oauthbearer import OAuthBearerClient, OAuthBearerServer
from .plain import PlainClient, PlainServer
from .scram import ScramClient, ScramMechanism, ScramServer
from .settings import SaslClientSettings

__all__ = ["create_client", "create_server"]


def _unsupported(mechanism: str) -> SecurityConfigError:
    what = "GSSAPI (Kerberos) is" if mechanism.upper() == "GSSAPI" else f"{mechanism!r} is"
    return SecurityConfigError(f"SASL mechanism {what} not supported (supported: {', '.join(MECHANISMS)})")


def create_server(mechanism: str, callbacks: SaslServerCallbacks) -> SaslServer:
    """A new server-side exchange; ``SecurityConfigError`` for a mechanism not in ``MECHANISMS``."""
    if mechanism == "PLAIN":
        return PlainServer(callbacks.plain_users)
    if mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        return ScramServer(
            ScramMechanism.from_name(mechanism), callbacks.scram_credential, callbacks.scram_token_credential
        )
    if mechanism == "OAUTHBEARER":
        return OAuthBearerServer(callbacks.oauth_validator, callbacks.clock_ms)
    raise _unsupported(mechanism)


def create_client(settings: SaslClientSettings) -> SaslClient:
    """A new client-side exchange; ``SecurityConfigError`` when the settings lack what the mechanism needs."""
    mechanism = settings.mechanism
    if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        if not settings.username or not settings.password:
            raise SecurityConfigError(f"SASL mechanism {mechanism} needs a username and a password")
        if mechanism == "PLAIN":
            return PlainClient(settings.username, settings.password)
        return ScramClient(
            ScramMechanism.from_name(mechanism),
            settings.username,
            settings.password,
            token_auth=settings.token_auth,
            max_iterations=settings.max_scram_iterations,
        )
    if mechanism == "OAUTHBEARER":
        if settings.token_provider is None:
            raise SecurityConfigError("SASL mechanism OAUTHBEARER needs a token provider")
        return OAuthBearerClient(settings.token_provider, settings.extensions)
    raise _unsupported(mechanism)
