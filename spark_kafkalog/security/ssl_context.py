"""Kafka's and librdkafka's ``ssl.*`` settings to ``ssl.SSLContext`` objects, client and server side.

``SslSettings.from_config(config, prefix="")`` reads dotted keys only (the client maps its Python-style names
before calling); with ``prefix`` (e.g. ``"listener.name.client."``) a prefixed key wins over the bare one.

Kafka keys: ``ssl.keystore.location/password/type``, ``ssl.key.password``, ``ssl.keystore.certificate.chain``,
``ssl.keystore.key``, ``ssl.truststore.location/password/type/certificates``, ``ssl.enabled.protocols``
(default ``TLSv1.2,TLSv1.3``), ``ssl.protocol`` (default ``TLSv1.3``; ``TLSv1.2`` caps the version at 1.2 as
Kafka documents; ``TLS`` caps nothing), ``ssl.cipher.suites`` (see ``ciphers``),
``ssl.endpoint.identification.algorithm`` (default ``https``; empty or ``none`` turns off the host name check
only, certificates are still verified), ``ssl.client.auth`` (``none``/``requested``/``required``, server side).
librdkafka keys: ``ssl.ca.location`` (PEM file, directory, or ``probe``), ``ssl.ca.pem``,
``ssl.certificate.location``, ``ssl.certificate.pem``, ``ssl.key.location``, ``ssl.key.pem``
(``ssl.key.password`` shared), ``ssl.keystore.location`` (librdkafka reads PKCS12 there; we sniff any format),
``enable.ssl.certificate.verification`` (false: no verification at all, as librdkafka).

At most one trust source (truststore location, truststore certificates, CA location, CA PEM) and one key
source (keystore location, inline chain + key, certificate + key location, certificate + key PEM) may be set;
a second one is a ``SecurityConfigError``, as Kafka refuses both a location and inline certificates.

``client_context(settings)``: ``PROTOCOL_TLS_CLIENT``, ``CERT_REQUIRED``, ``check_hostname`` per
``settings.check_hostname`` (callers pass ``server_hostname=<advertised host>`` to ``wrap_socket``/
``wrap_bio``), the configured trust or the system defaults when none, a client certificate when a key source is
set. ``server_context(settings)``: a key source is required; ``verify_mode`` from ``ssl.client.auth``
(required: ``CERT_REQUIRED``, requested: ``CERT_OPTIONAL``, none: ``CERT_NONE``); client certificates are
checked against the configured trust, or the system defaults when none.

Key material reaches ``load_cert_chain`` through ``os.memfd_create`` files read as ``/proc/self/fd/N`` (closed
right after), or where that is missing a 0600 file in a fresh 0700 temporary directory removed at once; keys are
never written anywhere else. Contexts are built fresh per call; an ``SSLContext`` may be shared by threads.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import ssl
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .ciphers import CipherSelection, parse_cipher_suites
from .errors import SecurityConfigError
from .stores import (
    KeyMaterial,
    TrustMaterial,
    key_from_files,
    key_from_pem,
    load_key_store,
    load_trust_store,
    trust_from_ca_location,
    trust_from_pem,
)

__all__ = ["SslSettings", "client_context", "load_key_material", "load_trust_material", "server_context"]

_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_ORDER = list(_VERSIONS)
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def _list(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list | tuple):
        return tuple(str(v).strip() for v in value if str(v).strip())
    raise SecurityConfigError(f"{key}: expected a comma-separated string or a list, got {type(value).__name__}")


def _bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise SecurityConfigError(f"{key}: expected true or false, got {value!r}")


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text != "" else None


@dataclass(frozen=True)
class SslSettings:
    """The TLS settings of one client or listener (see the module docstring).

    ``repr`` hides passwords, keys and the settings Kafka types PASSWORD (inline chain and trusted certificates).
    """

    keystore_location: str | None = None
    keystore_password: str | None = field(default=None, repr=False)
    keystore_type: str | None = None
    key_password: str | None = field(default=None, repr=False)
    keystore_certificate_chain: str | None = field(default=None, repr=False)  # Kafka types it PASSWORD
    keystore_key: str | None = field(default=None, repr=False)
    truststore_location: str | None = None
    truststore_password: str | None = field(default=None, repr=False)
    truststore_type: str | None = None
    truststore_certificates: str | None = field(default=None, repr=False)  # Kafka types it PASSWORD
    enabled_protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")
    protocol: str = "TLSv1.3"
    cipher_suites: tuple[str, ...] = ()
    endpoint_identification_algorithm: str = "https"
    client_auth: str = "none"
    ca_location: str | None = None
    ca_pem: str | None = None
    certificate_location: str | None = None
    certificate_pem: str | None = None
    key_location: str | None = None
    key_pem: str | None = field(default=None, repr=False)
    enable_certificate_verification: bool = True

    @classmethod
    def from_config(cls, config: Mapping[str, Any], prefix: str = "") -> SslSettings:
        """Read the dotted ``ssl.*`` keys (``prefix + key`` first, then ``key``); unknown keys are ignored."""

        def get(key: str) -> Any:
            if prefix and prefix + key in config:
                return config[prefix + key]
            return config.get(key)

        def name(key: str) -> str:
            return prefix + key if prefix and prefix + key in config else key

        protocols = _list(get("ssl.enabled.protocols"), name("ssl.enabled.protocols")) or ("TLSv1.2", "TLSv1.3")
        algorithm = get("ssl.endpoint.identification.algorithm")
        client_auth = str(get("ssl.client.auth") or "none").strip().lower()
        verification = get("enable.ssl.certificate.verification")
        settings = cls(
            keystore_location=_opt_str(get("ssl.keystore.location")),
            keystore_password=_opt_str(get("ssl.keystore.password")),
            keystore_type=_opt_str(get("ssl.keystore.type")),
            key_password=_opt_str(get("ssl.key.password")),
            keystore_certificate_chain=_opt_str(get("ssl.keystore.certificate.chain")),
            keystore_key=_opt_str(get("ssl.keystore.key")),
            truststore_location=_opt_str(get("ssl.truststore.location")),
            truststore_password=_opt_str(get("ssl.truststore.password")),
            truststore_type=_opt_str(get("ssl.truststore.type")),
            truststore_certificates=_opt_str(get("ssl.truststore.certificates")),
            enabled_protocols=protocols,
            protocol=str(get("ssl.protocol") or "TLSv1.3"),
            cipher_suites=_list(get("ssl.cipher.suites"), name("ssl.cipher.suites")),
            endpoint_identification_algorithm="https" if algorithm is None else str(algorithm).strip(),
            client_auth=client_auth,
            ca_location=_opt_str(get("ssl.ca.location")),
            ca_pem=_opt_str(get("ssl.ca.pem")),
            certificate_location=_opt_str(get("ssl.certificate.location")),
            certificate_pem=_opt_str(get("ssl.certificate.pem")),
            key_location=_opt_str(get("ssl.key.location")),
            key_pem=_opt_str(get("ssl.key.pem")),
            enable_certificate_verification=(
                True if verification is None else _bool(verification, name("enable.ssl.certificate.verification"))
            ),
        )
        settings.validate()
        return settings

    @property
    def check_hostname(self) -> bool:
        """Whether clients check the server's host name (``ssl.endpoint.identification.algorithm``)."""
        if not self.enable_certificate_verification:
            return False
        return self.endpoint_identification_algorithm.lower() not in ("", "none")

    @property
    def verify_mode(self) -> ssl.VerifyMode:
        """The server side's verify mode from ``ssl.client.auth``."""
        return _CLIENT_AUTH[self.client_auth]

    @property
    def has_key_material(self) -> bool:
        return bool(self._key_sources())

    def _trust_sources(self) -> list[str]:
        names = [
            ("ssl.truststore.location", self.truststore_location),
            ("ssl.truststore.certificates", self.truststore_certificates),
            ("ssl.ca.location", self.ca_location),
            ("ssl.ca.pem", self.ca_pem),
        ]
        return [n for n, v in names if v]

    def _key_sources(self) -> list[str]:
        sources = []
        if self.keystore_location:
            sources.append("ssl.keystore.location")
        if self.keystore_certificate_chain or self.keystore_key:
            sources.append("ssl.keystore.certificate.chain + ssl.keystore.key")
        if self.certificate_location or self.key_location:
            sources.append("ssl.certificate.location + ssl.key.location")
        if self.certificate_pem or self.key_pem:
            sources.append("ssl.certificate.pem + ssl.key.pem")
        return sources

    def validate(self) -> None:
        """Check the settings are consistent (each problem a ``SecurityConfigError`` naming the keys)."""
        if self.client_auth not in _CLIENT_AUTH:
            raise SecurityConfigError(f"ssl.client.auth: {self.client_auth!r} is not one of none, requested, required")
        for proto in self.enabled_protocols:
            if proto not in _VERSIONS:
                raise SecurityConfigError(
                    f"ssl.enabled.protocols: unknown protocol {proto!r} (expected TLSv1.2 or TLSv1.3)"
                )
        if self.protocol not in ("TLS", *_VERSIONS):
            raise SecurityConfigError(f"ssl.protocol: unknown protocol {self.protocol!r}")
        algorithm = self.endpoint_identification_algorithm.lower()
        if algorithm not in ("", "none", "https"):
            raise SecurityConfigError(
                f"ssl.endpoint.identification.algorithm: {self.endpoint_identification_algorithm!r} is not https, "
                "none or empty"
            )
        trust = self._trust_sources()
        if len(trust) > 1:
            raise SecurityConfigError(f"only one trust source may be set, got {', '.join(trust)}")
        keys = self._key_sources()
        if len(keys) > 1:
            raise SecurityConfigError(f"only one key source may be set, got {', '.join(keys)}")
        pairs = [
            ("ssl.keystore.certificate.chain", self.keystore_certificate_chain, "ssl.keystore.key", self.keystore_key),
            ("ssl.certificate.location", self.certificate_location, "ssl.key.location", self.key_location),
            ("ssl.certificate.pem", self.certificate_pem, "ssl.key.pem", self.key_pem),
        ]
        for first, first_value, second, second_value in pairs:
            if bool(first_value) != bool(second_value):
                missing = second if first_value else first
                present = first if first_value else second
                raise SecurityConfigError(f"{present} is set but {missing} is not")
        self.cipher_selection()
        self.tls_versions()

    def cipher_selection(self) -> CipherSelection | None:
        return parse_cipher_suites(self.cipher_suites or None)

    def tls_versions(self) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
        """(minimum, maximum) TLS version from the enabled protocols, ``ssl.protocol`` and the cipher suites."""
        indexes = sorted(_ORDER.index(p) for p in self.enabled_protocols)
        low, high = indexes[0], indexes[-1]
        if self.protocol != "TLS":
            high = min(high, _ORDER.index(self.protocol))
        selection = self.cipher_selection()
        if selection is not None:
            tls13 = _ORDER.index("TLSv1.3")
            if not selection.allows_tls13:
                high = min(high, tls13 - 1)
            if not selection.allows_tls12:
                low = max(low, tls13)
        if low > high:
            raise SecurityConfigError(
                "ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites leave no TLS version enabled "
                f"(enabled {','.join(self.enabled_protocols)}, ssl.protocol {self.protocol})"
            )
        return _VERSIONS[_ORDER[low]], _VERSIONS[_ORDER[high]]


def load_trust_material(settings: SslSettings) -> TrustMaterial | None:
    """The configured trust material, or None when no trust source is set."""
    if settings.truststore_location:
        return load_trust_store(
            settings.truststore_location,
            password=settings.truststore_password,
            declared_type=settings.truststore_type,
        )
    if settings.truststore_certificates:
        return trust_from_pem(settings.truststore_certificates)
    if settings.ca_location:
        return trust_from_ca_location(settings.ca_location)
    if settings.ca_pem:
        return trust_from_pem(settings.ca_pem, setting="ssl.ca.pem")
    return None


def load_key_material(settings: SslSettings) -> KeyMaterial | None:
    """The configured key and chain, or None when no key source is set."""
    if settings.keystore_location:
        return load_key_store(
            settings.keystore_location,
            password=settings.keystore_password,
            key_password=settings.key_password,
            declared_type=settings.keystore_type,
        )
    if settings.keystore_certificate_chain and settings.keystore_key:
        return key_from_pem(
            settings.keystore_certificate_chain, settings.keystore_key, key_password=settings.key_password
        )
    if settings.certificate_location and settings.key_location:
        return key_from_files(settings.certificate_location, settings.key_location, key_password=settings.key_password)
    if settings.certificate_pem and settings.key_pem:
        return key_from_pem(
            settings.certificate_pem,
            settings.key_pem,
            key_password=settings.key_password,
            chain_setting="ssl.certificate.pem",
            key_setting="ssl.key.pem",
            pkcs8_only=False,
        )
    return None


@contextlib.contextmanager
def _key_files(material: KeyMaterial) -> Iterator[tuple[str, str]]:
    """Paths to the chain and key PEM that exist only for the ``with`` block (memfd, else a private temp dir)."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None and os.path.isdir("/proc/self/fd"):
        fds: list[int] = []
        try:
            for name, data in (
                ("kafkalog-chain", material.certificate_chain_pem),
                ("kafkalog-key", material.private_key_pem),
            ):
                fd = memfd_create(name, getattr(os, "MFD_CLOEXEC", 0))
                fds.append(fd)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            yield f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}"
        finally:
            for fd in fds:
                os.close(fd)
        return
    directory = tempfile.mkdtemp(prefix="kafkalog-tls-")  # mode 0700
    try:
        paths = []
        for name, data in (("chain.pem", material.certificate_chain_pem), ("key.pem", material.private_key_pem)):
            path = os.path.join(directory, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            paths.append(path)
        yield paths[0], paths[1]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _load_key_into(context: ssl.SSLContext, material: KeyMaterial) -> None:
    with _key_files(material) as (chain_path, key_path):
        try:
            context.load_cert_chain(chain_path, key_path)
        except ssl.SSLError as e:
            raise SecurityConfigError(
                f"{material.source}: OpenSSL refused the key or certificate ({e.reason})"
            ) from None


def _load_trust_into(context: ssl.SSLContext, trust: TrustMaterial | None, purpose: ssl.Purpose) -> None:
    if trust is None or trust.system_default:
        context.load_default_certs(purpose)
        return
    try:
        context.load_verify_locations(cadata=trust.cadata)
    except ssl.SSLError as e:
        raise SecurityConfigError(f"{trust.source}: OpenSSL refused the trusted certificates ({e.reason})") from None


def _apply_common(context: ssl.SSLContext, settings: SslSettings) -> None:
    context.minimum_version, context.maximum_version = settings.tls_versions()
    selection = settings.cipher_selection()
    if selection is not None and selection.tls12:
        context.set_ciphers(selection.openssl_cipher_string)


def client_context(settings: SslSettings) -> ssl.SSLContext:
    """A client ``SSLContext`` for ``settings`` (see the module docstring)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _apply_common(context, settings)
    if settings.enable_certificate_verification:
        context.check_hostname = settings.check_hostname
        context.verify_mode = ssl.CERT_REQUIRED
        _load_trust_into(context, load_trust_material(settings), ssl.Purpose.SERVER_AUTH)
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    key = load_key_material(settings)
    if key is not None:
        _load_key_into(context, key)
    return context


def server_context(settings: SslSettings) -> ssl.SSLContext:
    """A server ``SSLContext`` for ``settings``; a key store is required (see the module docstring)."""
    key = load_key_material(settings)
    if key is None:
        raise SecurityConfigError(
            "an SSL listener needs a key store: set ssl.keystore.location (JKS, PKCS12 or PEM) or "
            "ssl.keystore.certificate.chain + ssl.keystore.key"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _apply_common(context, settings)
    _load_key_into(context, key)
    context.verify_mode = settings.verify_mode
    if settings.verify_mode != ssl.CERT_NONE:
        _load_trust_into(context, load_trust_material(settings), ssl.Purpose.CLIENT_AUTH)
    return context
