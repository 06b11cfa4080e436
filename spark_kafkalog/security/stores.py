"""Key and trust material from Kafka's and librdkafka's store settings: JKS, PKCS12 and PEM, files and inline.

Two results, both immutable:

* ``TrustMaterial``: the trusted CA certificates as DER (``certificates_der``), for
  ``SSLContext.load_verify_locations(cadata=...)``; or ``system_default=True`` (librdkafka's
  ``ssl.ca.location=probe``: the system's CA paths).
* ``KeyMaterial``: ``private_key_pem`` (unencrypted PKCS#8 PEM, hidden from ``repr``) and
  ``certificate_chain_pem`` (leaf first), for ``SSLContext.load_cert_chain``. The key is checked to match the
  leaf certificate.

Store files (``load_trust_store``, ``load_key_store``): the format comes from the bytes
(``sniff_store_format``), not from ``ssl.*store.type``: the JDK (``keystore.type.compat=true``, JDK 9+) reads a
PKCS12 file declared JKS and the other way round, and Kafka users rely on it; a PEM file declared PEM must not
have a store password (Kafka refuses one: ``DefaultSslEngineFactory``). What is read from each format:

* JKS and JCEKS (``jks.load_jks``): trust = every trusted-cert entry plus the leaf of every key entry (as the JDK's
  ``TrustStoreUtil`` does); key = the first private-key entry, decrypted with ``ssl.key.password`` or, when
  unset, the store password. A JKS truststore may have no password (integrity check skipped, as in the JDK).
* PKCS12 (``cryptography``): trust = every certificate in the file; key = the key bag and its chain. PKCS12 has
  one password: ``ssl.key.password`` is ignored for it (the JDK needs it equal to the store password).
* PEM: trust = every ``CERTIFICATE`` block; key store = a private key block and the chain in one file, the key
  decrypted with ``ssl.key.password``.

Private keys, by origin:

* Kafka's PEM (``ssl.keystore.key``, a PEM keystore file): PKCS#8 only, ``BEGIN PRIVATE KEY`` or ``BEGIN
  ENCRYPTED PRIVATE KEY`` + ``ssl.key.password``, as Kafka (``PKCS8EncodedKeySpec``) does; PKCS#1 ``BEGIN RSA
  PRIVATE KEY`` and traditional OpenSSL-encrypted PEM are **rejected** with a message saying to convert with
  ``openssl pkcs8 -topk8``.
* librdkafka's ``ssl.key.location`` / ``ssl.key.pem``: whatever OpenSSL reads (PKCS#8, PKCS#1, SEC1 EC,
  traditional encrypted PEM) is accepted, as librdkafka accepts it.
* A ``ssl.key.password`` given for an unencrypted key is ignored.

PEM text may have its base64 lines joined by spaces (Kafka ignores whitespace there too). Errors are
``SecurityConfigError`` naming the setting and the file, never a password or key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from .errors import SecurityConfigError
from .jks import JCEKS_MAGIC, JKS_MAGIC, load_jks

__all__ = [
    "KeyMaterial",
    "StoreFormat",
    "TrustMaterial",
    "key_from_files",
    "key_from_pem",
    "load_key_store",
    "load_trust_store",
    "sniff_store_format",
    "trust_from_ca_location",
    "trust_from_pem",
]

StoreFormat = Literal["JKS", "JCEKS", "PKCS12", "PEM"]

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", re.DOTALL)
_PEM_MARKER = b"-----BEGIN "


@dataclass(frozen=True)
class TrustMaterial:
    """Trusted CA certificates (DER), or the system defaults; ``source`` says where they came from."""

    certificates_der: tuple[bytes, ...]
    source: str
    system_default: bool = False

    @property
    def cadata(self) -> bytes:
        """All certificates concatenated as DER, what ``load_verify_locations(cadata=...)`` accepts."""
        return b"".join(self.certificates_der)


@dataclass(frozen=True)
class KeyMaterial:
    """A private key (unencrypted PKCS#8 PEM) with its certificate chain (PEM, leaf first)."""

    private_key_pem: bytes = field(repr=False)
    certificate_chain_pem: bytes
    source: str

    @property
    def leaf_certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificates(self.certificate_chain_pem)[0]


def sniff_store_format(data: bytes) -> StoreFormat | None:
    """The store format of ``data`` from its bytes: JKS/JCEKS magic, PEM markers, DER PKCS12 PFX; None otherwise.

    PKCS12 is recognised as a DER SEQUENCE whose first element is ``INTEGER 3`` (PFX version 3, RFC 7292).
    """
    if data[:4] == JKS_MAGIC:
        return "JKS"
    if data[:4] == JCEKS_MAGIC:
        return "JCEKS"
    if _PEM_MARKER in data[:65536] and _looks_like_text(data):
        return "PEM"
    if _is_pkcs12(data):
        return "PKCS12"
    return None


def _looks_like_text(data: bytes) -> bool:
    return b"\x00" not in data[:65536]


def _is_pkcs12(data: bytes) -> bool:
    if len(data) < 8 or data[0] != 0x30:
        return False
    first = data[1]
    pos = 2
    if first & 0x80:
        n = first & 0x7F
        if n == 0 or n > 4 or len(data) < pos + n:
            return False
        length = int.from_bytes(data[pos : pos + n], "big")
        pos += n
    else:
        length = first
    if pos + length > len(data):
        return False
    return data[pos : pos + 3] == b"\x02\x01\x03"


def _describe(setting: str, path: str | os.PathLike[str] | None) -> str:
    return f"{setting} ({os.fspath(path)})" if path is not None else setting


def _read_file(path: str | os.PathLike[str], setting: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise SecurityConfigError(f"{_describe(setting, path)}: is a directory, expected a store file") from None
    except OSError as e:
        raise SecurityConfigError(f"{_describe(setting, path)}: cannot read the file: {e.strerror}") from None


def _sniff_or_fail(data: bytes, where: str, declared_type: str | None) -> StoreFormat:
    found = sniff_store_format(data)
    if found is None:
        declared = f" (declared {declared_type})" if declared_type else ""
        raise SecurityConfigError(f"{where}: not a JKS, PKCS12 or PEM store{declared}")
    return found


def _pem_blocks(data: bytes, kinds: Iterable[str]) -> list[tuple[str, bytes]]:
    r"""(kind, normalised block) of each PEM block of the wanted kinds.

    As Kafka's PEM parser does, whitespace inside the base64 body is ignored, so a chain written on one line (a
    ``.properties`` value continued with ``\``) works; blocks with RFC 1421 headers (``Proc-Type:``) are kept.
    """
    wanted = set(kinds)
    blocks = []
    for match in _PEM_BLOCK.finditer(data):
        kind = match.group(1).decode("ascii")
        if kind not in wanted:
            continue
        block = match.group(0)
        body = block[len(f"-----BEGIN {kind}-----") : -len(f"-----END {kind}-----")]
        if b":" not in body:
            compact = re.sub(rb"\s+", b"", body)
            lines = [compact[i : i + 64] for i in range(0, len(compact), 64)]
            block = b"\n".join([f"-----BEGIN {kind}-----".encode(), *lines, f"-----END {kind}-----".encode(), b""])
        blocks.append((kind, block))
    return blocks


def _certificates_from_pem(data: bytes, where: str) -> list[x509.Certificate]:
    blocks = _pem_blocks(data, ("CERTIFICATE", "TRUSTED CERTIFICATE"))
    certs = []
    for kind, block in blocks:
        if kind == "TRUSTED CERTIFICATE":
            raise SecurityConfigError(
                f"{where}: OpenSSL 'TRUSTED CERTIFICATE' blocks are not supported; use CERTIFICATE"
            )
        try:
            certs.append(x509.load_pem_x509_certificate(block))
        except ValueError as e:
            raise SecurityConfigError(f"{where}: a CERTIFICATE block cannot be parsed ({e})") from None
    return certs


def _der(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _text(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


# ---------------------------------------------------------------- trust


def trust_from_pem(pem: str | bytes, *, setting: str = "ssl.truststore.certificates") -> TrustMaterial:
    """Inline PEM certificates (Kafka's ``ssl.truststore.certificates``, librdkafka's ``ssl.ca.pem``)."""
    certs = _certificates_from_pem(_text(pem), setting)
    if not certs:
        raise SecurityConfigError(f"{setting}: no PEM CERTIFICATE block found")
    return TrustMaterial(tuple(_der(c) for c in certs), setting)


def load_trust_store(
    path: str | os.PathLike[str],
    *,
    password: str | None = None,
    declared_type: str | None = None,
    setting: str = "ssl.truststore.location",
) -> TrustMaterial:
    """Trusted certificates from a JKS, PKCS12 or PEM file (format from the bytes; see the module docstring)."""
    where = _describe(setting, path)
    data = _read_file(path, setting)
    fmt = _sniff_or_fail(data, where, declared_type)
    if fmt == "PEM":
        if password and (declared_type or "").upper() == "PEM":
            raise SecurityConfigError(f"{where}: a PEM truststore takes no password (unset ssl.truststore.password)")
        certs = _certificates_from_pem(data, where)
        if not certs:
            raise SecurityConfigError(f"{where}: no PEM CERTIFICATE block found")
        return TrustMaterial(tuple(_der(c) for c in certs), where)
    if fmt in ("JKS", "JCEKS"):
        store = load_jks(data, password or None, source=where)
        ders = [e.certificate_der for e in store.trusted_certificates]
        ders += [e.certificate_chain_der[0] for e in store.private_keys if e.certificate_chain_der]
        if not ders:
            raise SecurityConfigError(f"{where}: the Java keystore holds no certificate")
        return TrustMaterial(tuple(ders), where)
    loaded = _load_pkcs12(data, password, where)
    certs = [c.certificate for c in loaded.additional_certs]
    if loaded.cert is not None:
        certs.insert(0, loaded.cert.certificate)
    if not certs:
        raise SecurityConfigError(f"{where}: the PKCS12 store holds no certificate")
    return TrustMaterial(tuple(_der(c) for c in certs), where)


def trust_from_ca_location(path: str | os.PathLike[str], *, setting: str = "ssl.ca.location") -> TrustMaterial:
    """librdkafka's ``ssl.ca.location``: a PEM file, a directory of PEM files, or ``probe`` (system defaults).

    A directory is read whole: every regular file's CERTIFICATE blocks (OpenSSL's hashed ``<hash>.0`` names
    included); files without one are skipped; duplicates are kept once.
    """
    if os.fspath(path) == "probe":
        return TrustMaterial((), f"{setting}=probe", system_default=True)
    where = _describe(setting, path)
    target = Path(path)
    if target.is_dir():
        ders: list[bytes] = []
        for child in sorted(target.iterdir()):
            if not child.is_file():
                continue
            data = _read_file(child, setting)
            if _PEM_MARKER not in data:
                continue
            for cert in _certificates_from_pem(data, _describe(setting, child)):
                der = _der(cert)
                if der not in ders:
                    ders.append(der)
        if not ders:
            raise SecurityConfigError(f"{where}: no PEM certificate in the directory")
        return TrustMaterial(tuple(ders), where)
    data = _read_file(target, setting)
    certs = _certificates_from_pem(data, where)
    if not certs:
        raise SecurityConfigError(f"{where}: no PEM CERTIFICATE block found")
    return TrustMaterial(tuple(_der(c) for c in certs), where)


# ---------------------------------------------------------------- keys


def _parse_private_key(
    data: bytes, password: str | None, where: str, *, password_setting: str, pkcs8_only: bool
) -> PrivateKeyTypes:
    kinds = ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY")
    blocks = _pem_blocks(data, kinds)
    if not blocks:
        raise SecurityConfigError(f"{where}: no PEM private key block found")
    if len(blocks) > 1:
        raise SecurityConfigError(f"{where}: {len(blocks)} private keys found, expected one")
    kind, block = blocks[0]
    if pkcs8_only and kind not in ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        raise SecurityConfigError(
            f"{where}: the key is a '{kind}' block; Kafka needs PKCS#8 ('PRIVATE KEY' or 'ENCRYPTED PRIVATE KEY'): "
            "convert it with: openssl pkcs8 -topk8 -in key.pem -out key.p8.pem"
        )
    encrypted = kind == "ENCRYPTED PRIVATE KEY" or b"Proc-Type: 4,ENCRYPTED" in block
    if encrypted and not password:
        raise SecurityConfigError(f"{where}: the private key is encrypted and {password_setting} is not set")
    try:
        return serialization.load_pem_private_key(block, password.encode("utf-8") if encrypted and password else None)
    except (ValueError, TypeError):
        if encrypted:
            raise SecurityConfigError(
                f"{where}: cannot decrypt the private key ({password_setting} is wrong or the cipher is unsupported)"
            ) from None
        raise SecurityConfigError(f"{where}: the private key cannot be parsed") from None
    except Exception as e:  # cryptography raises UnsupportedAlgorithm for unknown key types
        raise SecurityConfigError(f"{where}: the private key cannot be used ({type(e).__name__})") from None


def _make_key_material(key: PrivateKeyTypes, chain: list[x509.Certificate], where: str) -> KeyMaterial:
    if not chain:
        raise SecurityConfigError(f"{where}: no certificate for the private key")
    leaf_public = chain[0].public_key()
    if leaf_public != key.public_key():
        raise SecurityConfigError(f"{where}: the private key does not match the first certificate of the chain")
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return KeyMaterial(pem, b"".join(_pem(c) for c in chain), where)


def key_from_pem(
    certificate_chain: str | bytes,
    private_key: str | bytes,
    *,
    key_password: str | None = None,
    chain_setting: str = "ssl.keystore.certificate.chain",
    key_setting: str = "ssl.keystore.key",
    password_setting: str = "ssl.key.password",
    pkcs8_only: bool = True,
) -> KeyMaterial:
    """Inline PEM: Kafka's ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` (PKCS#8 only), or with
    ``pkcs8_only=False`` and librdkafka's names, ``ssl.certificate.pem`` + ``ssl.key.pem``."""
    chain = _certificates_from_pem(_text(certificate_chain), chain_setting)
    if not chain:
        raise SecurityConfigError(f"{chain_setting}: no PEM CERTIFICATE block found")
    key = _parse_private_key(
        _text(private_key), key_password, key_setting, password_setting=password_setting, pkcs8_only=pkcs8_only
    )
    return _make_key_material(key, chain, f"{chain_setting} + {key_setting}")


def key_from_files(
    certificate_location: str | os.PathLike[str],
    key_location: str | os.PathLike[str],
    *,
    key_password: str | None = None,
    certificate_setting: str = "ssl.certificate.location",
    key_setting: str = "ssl.key.location",
    password_setting: str = "ssl.key.password",
) -> KeyMaterial:
    """librdkafka's ``ssl.certificate.location`` (PEM chain) + ``ssl.key.location`` (any PEM key OpenSSL reads)."""
    cert_where = _describe(certificate_setting, certificate_location)
    key_where = _describe(key_setting, key_location)
    chain = _certificates_from_pem(_read_file(certificate_location, certificate_setting), cert_where)
    if not chain:
        raise SecurityConfigError(f"{cert_where}: no PEM CERTIFICATE block found")
    key = _parse_private_key(
        _read_file(key_location, key_setting),
        key_password,
        key_where,
        password_setting=password_setting,
        pkcs8_only=False,
    )
    return _make_key_material(key, chain, f"{cert_where} + {key_where}")


def _load_pkcs12(data: bytes, password: str | None, where: str) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode("utf-8") if password else None)
    except (ValueError, TypeError):
        if not password:
            raise SecurityConfigError(f"{where}: cannot read the PKCS12 store without a password") from None
        raise SecurityConfigError(
            f"{where}: the store password is incorrect (or the PKCS12 store is corrupt or uses an unsupported cipher)"
        ) from None
    except Exception as e:  # UnsupportedAlgorithm
        raise SecurityConfigError(f"{where}: the PKCS12 store cannot be read ({type(e).__name__})") from None


def load_key_store(
    path: str | os.PathLike[str],
    *,
    password: str | None = None,
    key_password: str | None = None,
    declared_type: str | None = None,
    setting: str = "ssl.keystore.location",
    password_setting: str = "ssl.key.password",
) -> KeyMaterial:
    """A private key and its chain from a JKS, PKCS12 or PEM key store file (see the module docstring)."""
    where = _describe(setting, path)
    data = _read_file(path, setting)
    fmt = _sniff_or_fail(data, where, declared_type)
    if fmt == "PEM":
        if password and (declared_type or "").upper() == "PEM":
            raise SecurityConfigError(
                f"{where}: a PEM keystore takes no store password (unset ssl.keystore.password; "
                "an encrypted key takes ssl.key.password)"
            )
        chain = _certificates_from_pem(data, where)
        key = _parse_private_key(data, key_password, where, password_setting=password_setting, pkcs8_only=True)
        return _make_key_material(key, chain, where)
    if fmt in ("JKS", "JCEKS"):
        if not password:
            raise SecurityConfigError(f"{where}: a JKS or JCEKS keystore needs ssl.keystore.password")
        store = load_jks(data, password, source=where)
        if not store.private_keys:
            raise SecurityConfigError(f"{where}: the Java keystore holds no private key entry")
        entry = store.private_keys[0]
        used = password_setting if key_password else "ssl.keystore.password, as ssl.key.password is not set"
        pkcs8 = entry.decrypt(key_password or password, source=f"{where} [key password from {used}]")
        try:
            key = serialization.load_der_private_key(pkcs8, None)
        except Exception:
            raise SecurityConfigError(f"{where}: the private key of alias {entry.alias!r} cannot be parsed") from None
        chain = [x509.load_der_x509_certificate(d) for d in entry.certificate_chain_der]
        return _make_key_material(key, chain, where)
    loaded = _load_pkcs12(data, password, where)
    if loaded.key is None or loaded.cert is None:
        raise SecurityConfigError(f"{where}: the PKCS12 store holds no private key with its certificate")
    chain = [loaded.cert.certificate, *(c.certificate for c in loaded.additional_certs)]
    return _make_key_material(loaded.key, chain, where)
