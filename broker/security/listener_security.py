"""What one listener requires of the connections it accepts: its security protocol, TLS context and SASL set-up.

Built once per listener from ``BrokerConfig`` (``listener_security``), with Kafka's listener-prefixed
overrides (``listener.name.<lower-name>.<key>``) applied; read by ``broker.network`` for every connection
accepted on that listener. Immutable; shared by the connections of the listener (one event loop).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field

from spark_kafkalog.security.sasl import SaslServerCallbacks

__all__ = ["SECURITY_PROTOCOLS", "ListenerSecurity"]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class ListenerSecurity:
    """One listener's security. ``protocol`` is one of ``SECURITY_PROTOCOLS``.

    * ``ssl_context``: the server context for SSL and SASL_SSL (its ``verify_mode`` already follows
      ``ssl.client.auth``: CERT_NONE / CERT_OPTIONAL / CERT_REQUIRED), else None;
    * ``ssl_principal_mapping_rules``: Kafka's ``ssl.principal.mapping.rules`` for an SSL listener's client
      certificate (see ``spark_kafkalog.security.principal``);
    * ``sasl_mechanisms``: ``sasl.enabled.mechanisms`` for SASL_* listeners (empty otherwise);
    * ``sasl_callbacks``: what the SASL servers check credentials against (PLAIN's JAAS ``user_<name>``
      entries, the SCRAM credential lookup, the OAUTHBEARER validator);
    * ``max_reauth_ms``: ``connections.max.reauth.ms`` (0: sessions never expire, KIP-368 off);
    * ``handshake_timeout_s``: the longest a TLS handshake, and the whole SASL exchange, may take;
    * ``sasl_max_receive_size``: ``sasl.server.max.receive.size``, the largest frame before authentication;
    * ``failed_authentication_delay_ms``: ``connection.failed.authentication.delay.ms``;
    * ``ktls``: try kernel TLS for Fetch's file regions (falls back to read-and-encrypt when the kernel
      or OpenSSL does not offer it).
    """

    name: str
    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    ssl_principal_mapping_rules: str = "DEFAULT"
    sasl_mechanisms: tuple[str, ...] = ()
    sasl_callbacks: SaslServerCallbacks = field(default_factory=SaslServerCallbacks)
    max_reauth_ms: int = 0
    handshake_timeout_s: float = 10.0
    sasl_max_receive_size: int = 524288
    failed_authentication_delay_ms: int = 100
    ktls: bool = True

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")
