"""A reader for Java KeyStore files (JKS, and JCEKS): trusted certificates and password-protected private keys.

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

JCEKS (magic 0xCECECECE, same layout and trailer) is read too: its private keys use Sun's
PBEWithMD5AndTripleDES (OID 1.3.6.1.4.1.42.2.19.1, parameters ``SEQUENCE {salt OCTET STRING (8), iterations
INTEGER}``; ``com.sun.crypto.provider.PBES1Core``): the salt's halves (the first reversed when both are equal)
are each hashed ``iterations`` times as ``h = MD5(h || pw)`` from ``h = half`` (``pw`` = the low byte of each
password char; at most 5,000,000 iterations, the JDK's limit); the 32 bytes give the DESede key (24) and the
CBC IV (8); the plain text is PKCS#5-padded. Its secret-key entries (tag 3, Java-serialized) are refused.

A store password of None skips the integrity check (as the JDK does for trust stores loaded without one).
Unknown entry tags are refused with ``SecurityConfigError``. Errors name the store (``source``, typically the
setting and the file) and never contain a password.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, modes

from .errors import SecurityConfigError

__all__ = ["JKS_MAGIC", "JCEKS_MAGIC", "JksKeyStore", "JksPrivateKeyEntry", "JksTrustedCertEntry", "load_jks"]

JKS_MAGIC = b"\xfe\xed\xfe\xed"
JCEKS_MAGIC = b"\xce\xce\xce\xce"
_SUN_KEY_PROTECTOR_OID = "1.3.6.1.4.1.42.2.17.1.1"
_PBE_MD5_TRIPLE_DES_OID = "1.3.6.1.4.1.42.2.19.1"
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
    store_type: str  # "JKS" or "JCEKS"
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
        at = self.pos
        try:
            return _decode_modified_utf8(self.take(self.u16()))
        except UnicodeError:
            raise SecurityConfigError(f"{self.source}: corrupt JKS data (bad modified UTF-8 at byte {at})") from None

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
    """Parse a JKS or JCEKS file; with a store password, verify its integrity trailer first (module docstring)."""
    if data[:4] not in (JKS_MAGIC, JCEKS_MAGIC):
        raise SecurityConfigError(f"{source}: not a JKS keystore (no FEEDFEED or CECECECE magic)")
    store_type = "JKS" if data[:4] == JKS_MAGIC else "JCEKS"
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
        elif tag == 3 and store_type == "JCEKS":
            raise SecurityConfigError(
                f"{source}: entry {alias!r} is a JCEKS secret-key entry, which is not supported; "
                "keep only certificates and private keys in the store"
            )
        else:
            raise SecurityConfigError(f"{source}: entry {alias!r} has unknown JKS tag {tag}")
    if reader.pos != len(body):
        raise SecurityConfigError(f"{source}: {len(body) - reader.pos} unexpected bytes after the JKS entries")
    return JksKeyStore(version, store_type, tuple(trusted), tuple(keys))


def _read_certificate(reader: _Reader, version: int, alias: str) -> bytes:
    if version == 2:
        cert_type = reader.utf()
        if cert_type != "X.509":
            raise SecurityConfigError(f"{reader.source}: entry {alias!r} holds a {cert_type!r} certificate, not X.509")
    return reader.blob()


def _unprotect_key(encrypted_private_key_info: bytes, key_password: str, source: str) -> bytes:
    algorithm, parameters, protected = _parse_encrypted_private_key_info(encrypted_private_key_info, source)
    if algorithm == _SUN_KEY_PROTECTOR_OID:
        return _sun_key_protector(protected, key_password, source)
    if algorithm == _PBE_MD5_TRIPLE_DES_OID:
        return _pbe_md5_triple_des(protected, parameters, key_password, source)
    raise SecurityConfigError(f"{source}: key protected with unsupported algorithm {algorithm}")


def _wrong_key_password(source: str) -> SecurityConfigError:
    return SecurityConfigError(f"{source}: key password was incorrect (cannot recover the private key)")


def _sun_key_protector(protected: bytes, key_password: str, source: str) -> bytes:
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
        raise _wrong_key_password(source)
    return plaintext


def _pbe_md5_triple_des(protected: bytes, parameters: bytes, key_password: str, source: str) -> bytes:
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES

    salt, iterations = _parse_pbe_parameters(parameters, source)
    if len(salt) != 8 or not 0 < iterations <= 5_000_000:
        raise SecurityConfigError(f"{source}: bad PBEWithMD5AndTripleDES parameters")
    if len(protected) == 0 or len(protected) % 8:
        raise SecurityConfigError(f"{source}: protected key is not a whole number of DES blocks")
    pw = bytes(ord(c) & 0xFF for c in key_password)
    halves = [salt[:4], salt[4:]]
    if halves[0] == halves[1]:
        halves[0] = halves[0][::-1]
    derived = b""
    for half in halves:
        digest = half
        for _ in range(iterations):
            digest = hashlib.md5(digest + pw, usedforsecurity=False).digest()
        derived += digest
    decryptor = Cipher(TripleDES(derived[:24]), modes.CBC(derived[24:32])).decryptor()
    padded = decryptor.update(protected) + decryptor.finalize()
    unpadder = padding.PKCS7(64).unpadder()
    try:
        plaintext = unpadder.update(padded) + unpadder.finalize()
    except ValueError:
        raise _wrong_key_password(source) from None
    # A wrong password can still end in valid padding by chance: the result must be a DER SEQUENCE.
    try:
        tag, _start, end = _der_element(plaintext, 0, source)
    except SecurityConfigError:
        raise _wrong_key_password(source) from None
    if tag != 0x30 or end != len(plaintext):
        raise _wrong_key_password(source)
    return plaintext


def _parse_pbe_parameters(parameters: bytes, source: str) -> tuple[bytes, int]:
    tag, start, end = _der_element(parameters, 0, source)
    if tag != 0x30:
        raise SecurityConfigError(f"{source}: PBE parameters are not a DER SEQUENCE")
    tag, salt_start, salt_end = _der_element(parameters, start, source)
    if tag != 0x04:
        raise SecurityConfigError(f"{source}: PBE parameters have no salt")
    tag, count_start, count_end = _der_element(parameters, salt_end, source)
    if tag != 0x02 or count_end > end:
        raise SecurityConfigError(f"{source}: PBE parameters have no iteration count")
    return parameters[salt_start:salt_end], int.from_bytes(parameters[count_start:count_end], "big")


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


def _parse_encrypted_private_key_info(data: bytes, source: str) -> tuple[str, bytes, bytes]:
    """(algorithm OID, algorithm parameters DER or b"", encrypted data) of an EncryptedPrivateKeyInfo."""
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
    parameters = data[oid_end:alg_end]
    tag, octets_start, octets_end = _der_element(data, alg_end, source)
    if tag != 0x04 or octets_end > end:
        raise SecurityConfigError(f"{source}: protected key has no encrypted data")
    return algorithm, parameters, data[octets_start:octets_end]
