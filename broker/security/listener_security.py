"""What one listener requires of the connections it accepts: its security protocol, TLS context and SASL set-up.

Built once per listener at start-up from ``BrokerConfig`` (``listener_securities(config, scram_credential=...)``
-> ``{listener name: ListenerSecurity}``), with Kafka's listener-prefixed overrides
(``listener.name.<lower-name>.<key>``) applied; read by ``broker.network`` for every connection accepted on
that listener. Immutable; shared by the connections of the listener (one event loop).

How each part is built:

* TLS (SSL, SASL_SSL): ``server_context(SslSettings.from_config(config.listener_properties(name)))`` of
  ``spark_kafkalog.security.ssl_context``; key and trust stores are read here, once;
* PLAIN: the accepted users are the ``user_<name>`` entries of the listener's PLAIN JAAS config
  (``listener.name.<l>.plain.sasl.jaas.config``, else ``sasl.jaas.config``); PLAIN enabled without one is an
  error;
* SCRAM-SHA-256/512: ``scram_credential(mechanism, username)``, the broker's credential store (Kafka's
  ``/config/users``); without one every SCRAM login fails;
* OAUTHBEARER: with ``sasl.oauthbearer.jwks.endpoint.url`` a ``JwksValidator`` (expected audience and issuer,
  clock skew, claim names, refresh) fetching the key set from that URL or file, which must be listed in
  ``sasl.oauthbearer.allowed.urls`` (when that list is empty, the configured URL alone is allowed: the
  operator named it); without it Kafka's unsecured-JWS validator (development only, logged as a warning),
  honouring the JAAS ``unsecuredValidator*`` options.

Every problem raises ``ConfigError`` naming the listener and the key, never a secret.
"""

from __future__ import annotations

import functools
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from spark_kafkalog.security.errors import SecurityConfigError
from spark_kafkalog.security.sasl import SaslServerCallbacks

from ..config import SECURITY_PROTOCOLS, ConfigError, listener_prefix

if TYPE_CHECKING:
    from ..config import BrokerConfig

__all__ = ["SECURITY_PROTOCOLS", "ListenerSecurity", "listener_securities", "listener_security"]

log = logging.getLogger("kafkalog.security")


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


def listener_securities(
    config: BrokerConfig, *, scram_credential: Callable[[str, str], Any] | None = None
) -> dict[str, ListenerSecurity]:
    """``{listener name: ListenerSecurity}`` for every listener of ``config`` (see the module docstring)."""
    return {
        lst.name: listener_security(config, lst.name, scram_credential=scram_credential) for lst in config.listeners
    }


def listener_security(
    config: BrokerConfig, name: str, *, scram_credential: Callable[[str, str], Any] | None = None
) -> ListenerSecurity:
    """The security of listener ``name``; ``ConfigError`` naming the listener and the key when it cannot be built."""
    protocol = config.security_protocol(name)

    def value(key: str) -> Any:
        return config.listener_value(name, key)

    ssl_context = _server_ssl_context(config, name, protocol) if protocol in ("SSL", "SASL_SSL") else None
    mechanisms: tuple[str, ...] = ()
    callbacks = SaslServerCallbacks()
    if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        mechanisms = config.sasl_enabled_mechanisms(name)
        callbacks = _sasl_callbacks(config, name, mechanisms, scram_credential)
    return ListenerSecurity(
        name=name,
        protocol=protocol,
        ssl_context=ssl_context,
        ssl_principal_mapping_rules=value("ssl.principal.mapping.rules"),
        sasl_mechanisms=mechanisms,
        sasl_callbacks=callbacks,
        max_reauth_ms=value("connections.max.reauth.ms"),
        handshake_timeout_s=value("connection.authentication.timeout.ms") / 1000,
        sasl_max_receive_size=value("sasl.server.max.receive.size"),
        failed_authentication_delay_ms=value("connection.failed.authentication.delay.ms"),
        ktls=value("ssl.ktls.enable"),
    )


def _server_ssl_context(config: BrokerConfig, name: str, protocol: str) -> ssl.SSLContext:
    from spark_kafkalog.security.ssl_context import SslSettings, server_context

    try:
        return server_context(SslSettings.from_config(config.listener_properties(name)))
    except (SecurityConfigError, ValueError, OSError, ssl.SSLError) as e:
        raise ConfigError(
            f"listener {name} ({protocol}): cannot build its TLS context ({listener_prefix(name)}ssl.* or ssl.*): {e}"
        ) from None


def _jaas(config: BrokerConfig, name: str, mechanism: str) -> Any:
    """The parsed JAAS config of ``mechanism`` on listener ``name``, or None when none is configured."""
    from spark_kafkalog.security.jaas import parse_jaas_config

    text = config.sasl_jaas_config(name, mechanism)
    if text is None:
        return None
    key = f"{listener_prefix(name)}{mechanism.lower()}.sasl.jaas.config"
    try:
        jaas = parse_jaas_config(text)
    except SecurityConfigError as e:
        raise ConfigError(f"listener {name}: {key} (or sasl.jaas.config): {e}") from None
    expected = "SCRAM" if mechanism.startswith("SCRAM-") else mechanism
    if jaas.kind != expected:
        raise ConfigError(
            f"listener {name}: {key} (or sasl.jaas.config) names the {jaas.kind} login module, not {expected}'s"
        )
    return jaas


def _sasl_callbacks(
    config: BrokerConfig,
    name: str,
    mechanisms: tuple[str, ...],
    scram_credential: Callable[[str, str], Any] | None,
) -> SaslServerCallbacks:
    from spark_kafkalog.security.jaas import plain_users

    users: dict[str, str] = {}
    if "PLAIN" in mechanisms:
        jaas = _jaas(config, name, "PLAIN")
        if jaas is None:
            raise ConfigError(
                f"listener {name}: PLAIN is enabled but {listener_prefix(name)}plain.sasl.jaas.config is not set "
                '(PlainLoginModule with user_<name>="<password>" entries for the accepted users)'
            )
        users = plain_users(jaas)
        if not users:
            log.warning("listener %s: the PLAIN JAAS config accepts no user (no user_<name> entries)", name)
    if any(m.startswith("SCRAM-") for m in mechanisms) and scram_credential is None:
        log.warning("listener %s: SCRAM is enabled but no credential store is given; every SCRAM login fails", name)
    oauth = _oauth_validator(config, name) if "OAUTHBEARER" in mechanisms else None
    if scram_credential is None:
        return SaslServerCallbacks(plain_users=users, oauth_validator=oauth)
    return SaslServerCallbacks(plain_users=users, scram_credential=scram_credential, oauth_validator=oauth)


def _oauth_validator(config: BrokerConfig, name: str) -> Any:
    """A ``JwksValidator`` when the listener names a JWKS, else Kafka's unsecured-JWS validator."""

    def value(key: str) -> Any:
        return config.listener_value(name, key)

    url = value("sasl.oauthbearer.jwks.endpoint.url")
    if url is None:
        from spark_kafkalog.security.sasl.oauthbearer import UnsecuredJwsValidator

        log.warning(
            "listener %s: OAUTHBEARER without sasl.oauthbearer.jwks.endpoint.url accepts unsigned tokens "
            "(Kafka's unsecured validator): for development only",
            name,
        )
        jaas = _jaas(config, name, "OAUTHBEARER")
        options = {} if jaas is None else jaas.options
        try:
            return UnsecuredJwsValidator(
                principal_claim=options.get("unsecuredValidatorPrincipalClaimName", "sub"),
                scope_claim=options.get("unsecuredValidatorScopeClaimName", "scope"),
                required_scope=tuple(s for s in options.get("unsecuredValidatorRequiredScope", "").split() if s),
                clock_skew_ms=int(options.get("unsecuredValidatorAllowableClockSkewMs", "0")),
            )
        except ValueError:
            raise ConfigError(
                f"listener {name}: unsecuredValidatorAllowableClockSkewMs in the OAUTHBEARER JAAS config is not an "
                "integer"
            ) from None
    from spark_kafkalog.security.sasl.jwks import JwksValidator, load_jwks

    allowed = config["sasl.oauthbearer.allowed.urls"] or (url,)
    try:
        return JwksValidator(
            functools.partial(load_jwks, url, allowed),
            expected_audience=value("sasl.oauthbearer.expected.audience"),
            expected_issuer=value("sasl.oauthbearer.expected.issuer"),
            clock_skew_s=value("sasl.oauthbearer.clock.skew.seconds"),
            sub_claim=value("sasl.oauthbearer.sub.claim.name"),
            scope_claim=value("sasl.oauthbearer.scope.claim.name"),
            refresh_ms=value("sasl.oauthbearer.jwks.endpoint.refresh.ms"),
        )
    except SecurityConfigError as e:
        raise ConfigError(f"listener {name}: OAUTHBEARER validator: {e}") from None
