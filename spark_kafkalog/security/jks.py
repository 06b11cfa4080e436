"""A reader for Java KeyStore (JKS) files: trusted certificates and Sun-key-protector private keys.

Format (big-endian; ``UTF`` = Java's modified UTF-8: u16 length then bytes)::

    u32 magic 0xFEEDFEED | u32 version (1 or 2) | u32 entry count
    entry*:  u32 tag | UTF alias | u64 creation time (ms since the epoch)
      tag 1 (private key):  u32 length | EncryptedPrivateKeyInfo DER (algorithm 1.3.6.1.4.1.42.2.17.1.1)
                            u32 chain length | chain length x ([v2: UTF cert type "X.509"] u32 length | DER)
      tag 2 (trusted cert): [v2: UTF cert type "X.509"] u32 length | DER
    trailer: SHA-1( UTF-16BE(store password) || b"Mighty Aphrodite" || every byte before the trailer )

Sun's key protector (``sun.security.provider.KeyProtector``): the EncryptedPrivateKeyInfo's octet string is
``salt(20) || ciphertext || check(20)``; the key stream is ``d_1 = SHA-1(pw || salt)``, ``d_i = SHA-1(pw ||
d_{i-1})`` (``pw`` = UTF-16BE of the key password), concatenated and cut to the ciphertext's length; the plain
text (a PKCS#8 PrivateKeyInfo DER) is ``ciphertext XOR stream`` and must satisfy ``check == SHA-1(pw ||
plaintext)`` (a wrong key password fails this check).

A store password of None skips the integrity check (as the JDK does for trust stores loaded without one).
JCEKS stores (magic 0xCECECECE) and unknown entry tags are refused with ``SecurityConfigError``. Errors name the
store (``source``, typically the setting and the file) and never contain a password.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

from .errors import SecurityConfigError

__all__ = ["JKS_MAGIC", "JCEKS_MAGIC", "JksKeyStore", "JksPrivateKeyEntry", "JksTrustedCertEntry", "load_jks"]

JKS_MAGIC = b"\xfe\xed\xfe\xed"
JCEKS_MAGIC = b"\xce\xce\xce\xce"
_SUN_KEY_PROTECTOR_OID = "1.3.6.1.4.1.42.2.17.1.1"
_WHITENER = b"Mighty Aphrodite"
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")


@dataclass(frozen=True)
class JksTrustedCertEntry:
    """A ``trustedCertEntry``: one DER certificate."""

    alias: str
    timestamp_ms: int
    certificate_der: bytes


@dataclass(frozen=True)
class JksPrivateKeyEntry:
    """A ``PrivateKeyEntry``: the still protected key and its chain (leaf first, DER)."""

    alias: str
    timestamp_ms: int
    protected_key: bytes = field(repr=False)
    certificate_chain_der: tuple[bytes, ...]

    def decrypt(self, key_password: str, *, source: str = "JKS keystore") -> bytes:
        """The PKCS#8 PrivateKeyInfo DER of this entry; ``SecurityConfigError`` when the key password is wrong."""
        return _unprotect_key(self.protected_key, key_password, f"{source} (alias {self.alias!r})")


@dataclass(frozen=True)
class JksKeyStore:
    """The entries of a JKS file in file order."""

    version: int
    trusted_certificates: tuple[JksTrustedCertEntry, ...]
    private_keys: tuple[JksPrivateKeyEntry, ...]


class _Reader:
    def __init__(self, data: bytes, source: str) -> None:
        self.data = data
        self.pos = 0
        self.source = source

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise SecurityConfigError(f"{self.source}: truncated or corrupt JKS data at byte {self.pos}")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def u16(self) -> int:
        return int(_U16.unpack(self.take(2))[0])

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def u64(self) -> int:
        return int(_U64.unpack(self.take(8))[0])

    def utf(self) -> str:
        return _decode_modified_utf8(self.take(self.u16()))

    def blob(self) -> bytes:
        return self.take(self.u32())


def _decode_modified_utf8(raw: bytes) -> str:
    """Java's modified UTF-8: NUL is C0 80 and characters above U+FFFF are CESU-8 surrogate pairs."""
    text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    return text.encode("utf-16-be", "surrogatepass").decode("utf-16-be")


def _password_bytes(password: str) -> bytes:
    """Java ``char[]`` as bytes, two per UTF-16 code unit, big-endian (what the JDK hashes)."""
    return password.encode("utf-16-be")


def load_jks(data: bytes, store_password: str | None, *, source: str = "JKS keystore") -> JksKeyStore:
    """Parse a JKS file; with a store password, verify its integrity trailer first (see the module docstring)."""
    if data[:4] == JCEKS_MAGIC:
        raise SecurityConfigError(
            f"{source}: JCEKS keystores are not supported; convert it with keytool -importkeystore "
            "-deststoretype PKCS12"
        )
    if data[:4] != JKS_MAGIC:
        raise SecurityConfigError(f"{source}: not a JKS keystore (no FEEDFEED magic)")
    if len(data) < 12 + 20:
        raise SecurityConfigError(f"{source}: truncated JKS keystore ({len(data)} bytes)")
    body, trailer = data[:-20], data[-20:]
    if store_password is not None:
        digest = hashlib.sha1(_password_bytes(store_password) + _WHITENER + body, usedforsecurity=False).digest()
        if not hmac.compare_digest(digest, trailer):
            raise SecurityConfigError(
                f"{source}: keystore was tampered with, or its password was incorrect (JKS integrity check failed)"
            )
    reader = _Reader(body, source)
    reader.take(4)
    version = reader.u32()
    if version not in (1, 2):
        raise SecurityConfigError(f"{source}: unsupported JKS version {version}")
    count = reader.u32()
    trusted: list[JksTrustedCertEntry] = []
    keys: list[JksPrivateKeyEntry] = []
    for _ in range(count):
        tag = reader.u32()
        alias = reader.utf()
        timestamp = reader.u64()
        if tag == 1:
            protected = reader.blob()
            chain_length = reader.u32()
            chain = []
            for _ in range(chain_length):
                chain.append(_read_certificate(reader, version, alias))
            keys.append(JksPrivateKeyEntry(alias, timestamp, protected, tuple(chain)))
        elif tag == 2:
            trusted.append(JksTrustedCertEntry(alias, timestamp, _read_certificate(reader, version, alias)))
        else:
            raise SecurityConfigError(f"{source}: entry {alias!r} has unknown JKS tag {tag}")
    if reader.pos != len(body):
        raise SecurityConfigError(f"{source}: {len(body) - reader.pos} unexpected bytes after the JKS entries")
    return JksKeyStore(version, tuple(trusted), tuple(keys))


def _read_certificate(reader: _Reader, version: int, alias: str) -> bytes:
    if version == 2:
        cert_type = reader.utf()
        if cert_type != "X.509":
            raise SecurityConfigError(f"{reader.source}: entry {alias!r} holds a {cert_type!r} certificate, not X.509")
    return reader.blob()


def _unprotect_key(encrypted_private_key_info: bytes, key_password: str, source: str) -> bytes:
    algorithm, protected = _parse_encrypted_private_key_info(encrypted_private_key_info, source)
    if algorithm != _SUN_KEY_PROTECTOR_OID:
        raise SecurityConfigError(f"{source}: key protected with unsupported algorithm {algorithm}")
    if len(protected) < 40:
        raise SecurityConfigError(f"{source}: protected key too short")
    salt, ciphertext, check = protected[:20], protected[20:-20], protected[-20:]
    pw = _password_bytes(key_password)
    stream = bytearray()
    digest = salt
    while len(stream) < len(ciphertext):
        digest = hashlib.sha1(pw + digest, usedforsecurity=False).digest()
        stream += digest
    plaintext = bytes(c ^ k for c, k in zip(ciphertext, stream, strict=False))
    if not hmac.compare_digest(hashlib.sha1(pw + plaintext, usedforsecurity=False).digest(), check):
        raise SecurityConfigError(f"{source}: key password was incorrect (cannot recover the private key)")
    return plaintext


# --- minimal DER, enough for EncryptedPrivateKeyInfo ::= SEQUENCE { AlgorithmIdentifier, OCTET STRING } ---


def _der_element(data: bytes, pos: int, source: str) -> tuple[int, int, int]:
    """(tag, content start, content end) of the DER element at ``pos``."""
    if pos + 2 > len(data):
        raise SecurityConfigError(f"{source}: corrupt DER (truncated header)")
    tag = data[pos]
    first = data[pos + 1]
    pos += 2
    if first < 0x80:
        length = first
    else:
        n = first & 0x7F
        if n == 0 or n > 4 or pos + n > len(data):
            raise SecurityConfigError(f"{source}: corrupt DER (bad length)")
        length = int.from_bytes(data[pos : pos + n], "big")
        pos += n
    if pos + length > len(data):
        raise SecurityConfigError(f"{source}: corrupt DER (length beyond the data)")
    return tag, pos, pos + length


def _decode_oid(raw: bytes) -> str:
    if not raw:
        return ""
    parts = [raw[0] // 40, raw[0] % 40] if raw[0] < 80 else [2, raw[0] - 80]
    value = 0
    for byte in raw[1:]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(value)
            value = 0
    return ".".join(str(p) for p in parts)


def _parse_encrypted_private_key_info(data: bytes, source: str) -> tuple[str, bytes]:
    tag, start, end = _der_element(data, 0, source)
    if tag != 0x30:
        raise SecurityConfigError(f"{source}: protected key is not a DER SEQUENCE")
    tag, alg_start, alg_end = _der_element(data, start, source)
    if tag != 0x30:
        raise SecurityConfigError(f"{source}: protected key has no AlgorithmIdentifier")
    tag, oid_start, oid_end = _der_element(data, alg_start, source)
    if tag != 0x06:
        raise SecurityConfigError(f"{source}: protected key's algorithm is not an OID")
    algorithm = _decode_oid(data[oid_start:oid_end])
    tag, octets_start, octets_end = _der_element(data, alg_end, source)
    if tag != 0x04 or octets_end > end:
        raise SecurityConfigError(f"{source}: protected key has no encrypted data")
    return algorithm, data[octets_start:octets_end]
