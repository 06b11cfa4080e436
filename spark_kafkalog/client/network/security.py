"""``ClientSecurity``: how a client connection is secured (TLS and/or SASL), built once per client.

``ClientSecurity.from_config(config)`` reads Kafka's and librdkafka's dotted names (the table below,
``security.md`` §8) from a mapping of settings, as ``ClientConfig`` keeps them or as a ``.properties`` file
or Spark's ``kafka.*`` options (prefix stripped) give them:

=====================  =========================================================================
``security.protocol``  PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL; case-insensitive
TLS (SSL, SASL_SSL)    ``ssl.truststore.*``, ``ssl.keystore.*``, ``ssl.key.password``, PEM inline keys,
                       ``ssl.endpoint.identification.algorithm``, protocols and cipher suites (Kafka);
                       ``ssl.ca.location``/``.pem``, ``ssl.certificate.location``/``.pem``,
                       ``ssl.key.location``/``.pem``, ``enable.ssl.certificate.verification`` (librdkafka):
                       read by ``spark_kafkalog.security.ssl_context.SslSettings`` into one ``SSLContext``
SASL (SASL_*)          ``sasl.mechanism`` (``sasl.mechanisms``), ``sasl.jaas.config``,
                       ``sasl.username``/``sasl.password``, OAUTHBEARER/OIDC settings, ``oauth_cb``:
                       read by ``spark_kafkalog.security.sasl.SaslClientSettings``
=====================  =========================================================================

Key and trust store files are read when ``from_config`` runs, on the machine that builds the client (each
Spark executor builds its own), and never again for that client. Errors are
``spark_kafkalog.security.errors.SecurityConfigError`` naming the setting, never its secret value.

A ``ClientSecurity`` is immutable and shared by every connection of a client (``SSLContext`` is
thread-safe once configured; each connection creates its own ``SaslClient`` from ``sasl``). Its ``repr``
shows the protocol, whether TLS is on and the mechanism, nothing secret.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.security.errors import SecurityConfigError

__all__ = [
    "IGNORED_SECURITY_KEYS",
    "PROTOCOLS",
    "SASL_KEYS",
    "SSL_KEYS",
    "ClientSecurity",
    "PLAINTEXT",
    "is_security_key",
    "parse_protocol",
]

PLAINTEXT = "PLAINTEXT"
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

SSL_KEYS = frozenset(
    (
        # Kafka (Java) names
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "ssl.endpoint.identification.algorithm",
        "ssl.enabled.protocols",
        "ssl.protocol",
        "ssl.cipher.suites",
        # librdkafka names
        "ssl.ca.location",
        "ssl.ca.pem",
        "ssl.certificate.location",
        "ssl.certificate.pem",
        "ssl.key.location",
        "ssl.key.pem",
        "enable.ssl.certificate.verification",
    )
)
"""TLS settings handed to ``SslSettings.from_config``."""

SASL_KEYS = frozenset(
    (
        "sasl.mechanism",
        "sasl.mechanisms",
        "sasl.jaas.config",
        "sasl.username",
        "sasl.password",
        "sasl.scram.max.iterations",
        "sasl.login.callback.handler.class",
        "sasl.oauthbearer.token.endpoint.url",
        "sasl.oauthbearer.method",
        "sasl.oauthbearer.client.id",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.scope",
        "sasl.oauthbearer.extensions",
        "sasl.oauthbearer.config",
        "oauth_cb",
    )
)
"""SASL settings handed to ``SaslClientSettings.from_config``."""

IGNORED_SECURITY_KEYS = frozenset(
    (
        # JSSE/JVM plumbing with no meaning for OpenSSL
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.provider",
        # the Java login refresh thread and its timeouts (tokens are fetched per authentication here)
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
        "sasl.login.retry.backoff.ms",
        "sasl.login.retry.backoff.max.ms",
        "sasl.kerberos.service.name",  # set by Spark's token provider even for SCRAM logins
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
    )
)
"""Security keys of the Java client accepted with a warning: they mean nothing to this client."""


def is_security_key(key: str) -> bool:
    """True for a TLS or SASL setting this client reads (``SSL_KEYS`` or ``SASL_KEYS``)."""
    return key in SSL_KEYS or key in SASL_KEYS


def parse_protocol(value: Any, key: str = "security.protocol") -> str:
    """``security.protocol`` upper-cased; raises ``SecurityConfigError`` for anything but the four."""
    text = str(value).strip().upper()
    if text not in PROTOCOLS:
        raise SecurityConfigError(f"setting {key!r} must be one of {', '.join(PROTOCOLS)}; got {value!r}")
    return text


@dataclass(frozen=True)
class ClientSecurity:
    """The security of a client's connections (see the module docstring).

    * ``protocol``: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL;
    * ``ssl_context``: the client ``SSLContext`` for SSL and SASL_SSL (None otherwise); the transports
      wrap the TCP socket with ``server_hostname=<broker host>`` (SNI) whether or not the host name is
      checked;
    * ``check_hostname``: ``ssl.endpoint.identification.algorithm=https`` (the default); empty: the
      broker's certificate must still chain to a trusted CA, but may name any host;
    * ``sasl``: ``SaslClientSettings`` for SASL_PLAINTEXT and SASL_SSL (None otherwise); hidden from repr.
    """

    protocol: str = PLAINTEXT
    ssl_context: ssl.SSLContext | None = None
    check_hostname: bool = True
    sasl: Any = field(default=None, repr=False)  # SaslClientSettings | None

    def __post_init__(self) -> None:
        protocol = parse_protocol(self.protocol)
        object.__setattr__(self, "protocol", protocol)
        if protocol in ("SSL", "SASL_SSL") and self.ssl_context is None:
            raise SecurityConfigError(f"security.protocol={protocol} needs an SSL context")
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL") and self.sasl is None:
            raise SecurityConfigError(
                f"security.protocol={protocol} needs SASL settings: sasl.mechanism and credentials "
                "(sasl.jaas.config, or sasl.username and sasl.password)"
            )

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def mechanism(self) -> str | None:
        """The SASL mechanism (``PLAIN``, ``SCRAM-SHA-512``, ...), or None without SASL."""
        if self.sasl is None:
            return None
        return str(getattr(self.sasl, "mechanism", "?"))

    def __repr__(self) -> str:
        parts = [f"protocol={self.protocol!r}"]
        if self.uses_tls:
            parts.append(f"check_hostname={self.check_hostname}")
        if self.uses_sasl:
            parts.append(f"mechanism={self.mechanism!r}")
        return f"ClientSecurity({', '.join(parts)})"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ClientSecurity:
        """The security described by ``config`` (dotted Kafka/librdkafka names, see the module docstring).

        Reads key and trust stores now. Raises ``SecurityConfigError`` naming the setting at fault.
        """
        protocol = parse_protocol(config.get("security.protocol", PLAINTEXT))
        ssl_context = None
        check_hostname = True
        sasl = None
        if protocol in ("SSL", "SASL_SSL"):
            from spark_kafkalog.security.ssl_context import SslSettings, client_context

            settings = SslSettings.from_config(config)
            ssl_context = client_context(settings)
            check_hostname = bool(settings.check_hostname)
            if ssl_context.check_hostname != check_hostname:
                ssl_context.check_hostname = check_hostname
        if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
            from spark_kafkalog.security.sasl import SaslClientSettings

            sasl = SaslClientSettings.from_config(config)
        return cls(protocol, ssl_context, check_hostname, sasl)
