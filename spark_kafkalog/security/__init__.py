"""TLS and SASL building blocks shared by the broker and the client (no sockets, no pyspark, no kazoo).

See the modules: ``errors``, ``stores`` and ``jks`` (key and trust stores), ``ssl_context`` (Kafka's
``ssl.*`` settings to ``ssl.SSLContext``), ``principal`` (mTLS principals), ``certificates`` (a local CA),
``redaction``, ``jaas`` and ``sasl`` (the mechanisms, client and server side, sans-IO).
"""

from .errors import SaslAuthenticationFailed, SecurityConfigError

__all__ = ["SaslAuthenticationFailed", "SecurityConfigError"]
