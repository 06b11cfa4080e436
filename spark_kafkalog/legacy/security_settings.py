"""The TLS and SASL settings of the seeds' 0.8 clients (issue 26): ``ProducerConfig``, ``ConsumerConfig`` and
``SimpleConsumer`` take the modern client's keys, parsed by the modern client.

Keys (``SECURITY_KEYS``): ``security.protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) and every TLS and
SASL key of ``spark_kafkalog.client.network.security`` (``SSL_KEYS``, ``SASL_KEYS``: Kafka's ``ssl.*`` and
``sasl.*`` names and librdkafka's ``sasl.username``, ``ssl.ca.location``, ...); the Java-only keys of
``IGNORED_SECURITY_KEYS`` are accepted with a ``UserWarning``. Kafka 0.8 had none of them: its clients
spoke PLAINTEXT only.

``LegacySecurity(settings)`` (or ``LegacySecurity.from_props(props)``, which picks the security keys out of
a config's properties) keeps those settings in a ``ClientConfig`` (so the syntax - the
protocol, the JAAS line, the mechanism - is checked at once by ``ClientConfig``, which raises
``ConfigError`` naming the key) and builds the ``ClientSecurity`` (``ClientSecurity.from_config``, key and
trust stores read then) on first use, once per legacy config: every connection of a producer, a connector
and its fetcher shares it. ``client_config(settings)`` extends that ``ClientConfig`` with a client's other
settings, sharing the built security.

Secrets: ``describe()`` (used by the configs' ``repr``) shows the values of ``PUBLIC_KEYS`` only, every
other security key as ``'<hidden>'``; error messages come from ``ClientConfig`` and never hold a value.
Immutable; thread-safe (``ClientConfig.security`` builds under a lock).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.network.security import (
    IGNORED_SECURITY_KEYS,
    SASL_KEYS,
    SSL_KEYS,
    ClientSecurity,
)

__all__ = ["PUBLIC_KEYS", "SECURITY_KEYS", "LegacySecurity", "is_security_key", "security_key"]

SECURITY_KEYS: frozenset[str] = frozenset(("security.protocol",)) | SSL_KEYS | SASL_KEYS | IGNORED_SECURITY_KEYS
"""Every key a legacy config hands to the client's security (the ignored ones warn there)."""

PUBLIC_KEYS: frozenset[str] = frozenset(
    (
        "security.protocol",
        "sasl.mechanism",
        "sasl.mechanisms",
        "sasl.username",
        "ssl.endpoint.identification.algorithm",
        "ssl.keystore.type",
        "ssl.truststore.type",
        "ssl.keystore.location",
        "ssl.truststore.location",
        "ssl.ca.location",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.enabled.protocols",
        "ssl.protocol",
        "ssl.cipher.suites",
        "enable.ssl.certificate.verification",
    )
)
"""Security keys whose values ``describe`` shows (names, paths, algorithms); the rest (passwords, JAAS lines,
inline keys, OAuth secrets and callables) are hidden."""

HIDDEN = "<hidden>"


def security_key(raw_key: Any) -> str | None:
    """The security key ``raw_key`` names (dotted, or a keyword with underscores such as ``security_protocol``),
    or None when it is no security key. ``oauth_cb`` keeps its underscore (librdkafka's name)."""
    if not isinstance(raw_key, str):
        return None
    key = raw_key.strip()
    if key in SECURITY_KEYS:
        return key
    dotted = key.replace("_", ".")
    return dotted if dotted in SECURITY_KEYS else None


def is_security_key(raw_key: Any) -> bool:
    return security_key(raw_key) is not None


class LegacySecurity:
    """The security settings of one legacy config (see the module docstring)."""

    __slots__ = ("_config", "_given")

    def __init__(self, given: Mapping[str, Any]) -> None:
        self._given = dict(given)
        # ClientConfig checks the protocol and the SASL syntax now (ConfigError naming the key)
        self._config = ClientConfig.create(self._given)

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> LegacySecurity:
        """The security keys of ``props`` (other keys are left to the caller)."""
        given = {}
        for raw_key, value in props.items():
            key = security_key(raw_key)
            if key is not None and value is not None:
                given[key] = value
        return cls(given)

    @property
    def protocol(self) -> str:
        """``security.protocol``, upper-cased (PLAINTEXT when not given)."""
        return self._config.security_protocol

    @property
    def keys(self) -> frozenset[str]:
        """The security keys given."""
        return frozenset(self._given)

    def security(self) -> ClientSecurity:
        """The ``ClientSecurity`` (built on first use, stores read then; ``ConfigError`` naming the setting)."""
        security: ClientSecurity = self._config.security()
        return security

    def client_config(self, settings: Mapping[str, Any]) -> ClientConfig:
        """A ``ClientConfig`` of ``settings`` (dotted names) with these security settings, sharing the built
        ``ClientSecurity``."""
        return ClientConfig.create(self._config, **dict(settings))

    def describe(self) -> dict[str, Any]:
        """``{key: value}`` of the given security keys, values of keys outside ``PUBLIC_KEYS`` hidden."""
        return {key: (self._given[key] if key in PUBLIC_KEYS else HIDDEN) for key in sorted(self._given)}

    def __repr__(self) -> str:
        return f"LegacySecurity({self.describe()!r})"
