"""TLS and SASL building blocks shared by the broker and the client (no sockets, no pyspark, no kazoo).

See the modules: ``errors``, ``stores`` and ``jks`` (key and trust stores), ``ssl_context`` (Kafka's
``ssl.*`` settings to ``ssl.SSLContext``), ``principal`` (mTLS principals), ``certificates`` (a local CA),
``redaction``, ``jaas`` and ``sasl`` (the mechanisms, client and server side, sans-IO).
"""

from typing import TYPE_CHECKING, Any

from .errors import SaslAuthenticationFailed, SecurityConfigError
from .redaction import HIDDEN, is_secret_key, redact, redact_jaas

if TYPE_CHECKING:
    from .certificates import LocalCA
    from .principal import SslPrincipalMapper, ssl_principal
    from .ssl_context import SslSettings, client_context, server_context

__all__ = [
    "HIDDEN",
    "LocalCA",
    "SaslAuthenticationFailed",
    "SecurityConfigError",
    "SslPrincipalMapper",
    "SslSettings",
    "client_context",
    "is_secret_key",
    "redact",
    "redact_jaas",
    "server_context",
    "ssl_principal",
]

# TLS names load on first use (PEP 562): they import ``cryptography`` (~0.15 s), which PLAINTEXT-only users skip.
_LAZY = {
    "LocalCA": "certificates",
    "SslPrincipalMapper": "principal",
    "ssl_principal": "principal",
    "SslSettings": "ssl_context",
    "client_context": "ssl_context",
    "server_context": "ssl_context",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
