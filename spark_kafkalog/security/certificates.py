"""A local certificate authority: issues broker and client certificates and writes them as PEM, PKCS12 or JKS.

Used by ``kafkalog cluster up --security`` (product) and by the TLS tests (``tests/security/certs.py``).

* ``LocalCA.create(common_name=...)`` makes a self-signed CA (X.509 v3, ``basicConstraints CA:TRUE,
  pathlen:0``, ``keyUsage keyCertSign,cRLSign``); ``LocalCA.from_pem`` reloads one written with
  ``certificate_pem`` + ``private_key_pem_pkcs8(password)``.
* ``ca.issue(common_name, hosts=..., server=..., client=..., organizational_unit=..., ...)`` returns an
  ``IssuedCertificate``: the leaf's subject is ``C, ST, L, O, OU, CN`` in that ASN.1 order, so Java's
  ``X500Principal.getName()`` (and ``cryptography``'s RFC 4514 string) print it most specific first, e.g.
  ``CN=alice,OU=Eng,O=Org,L=City,ST=State,C=US``; ``hosts`` become subjectAltName DNS names or IP addresses;
  extendedKeyUsage carries serverAuth and/or clientAuth.
* Keys are RSA 2048 (default: every JSSE/OpenSSL cipher suite Kafka users name, ``TLS_ECDHE_RSA_...``,
  works with them) or EC P-256 (``key_type="ec"``).
* Formats written:

  - PEM: ``certificate_pem`` (the leaf), ``chain_pem`` (leaf then CA, what Kafka's
    ``ssl.keystore.certificate.chain`` and ``load_cert_chain`` expect), ``private_key_pem`` (unencrypted
    PKCS#8, ``BEGIN PRIVATE KEY``), ``private_key_pem_pkcs8(password)`` (``BEGIN ENCRYPTED PRIVATE KEY``,
    PBES2: PBKDF2-HMAC-SHA256 and AES-256-CBC, as OpenSSL 3 writes it; or with ``cipher="3des"`` RFC 7292's
    pbeWithSHAAnd3-KeyTripleDES-CBC, 10,000 iterations, the only form Kafka's PEM code decrypts on JDK 17,
    whose ``EncryptedPrivateKeyInfo.getAlgName()`` answers "PBES2" for PBES2 keys, an algorithm
    ``SecretKeyFactory`` does not know), ``keystore_pem(password)`` (Kafka's PEM keystore file: the key
    encrypted for Java, then the chain, read with ``ssl.keystore.type=PEM`` + ``ssl.key.password``);
  - PKCS12 (``to_pkcs12``): one key entry with the chain, AES-256/PBKDF2 as ``cryptography`` writes it (JDK
    11.0.12+ and OpenSSL 1.1.1+ read it); ``write_keystore(..., store_type="PKCS12", tool="keytool")`` lets
    the JDK write it instead;
  - JKS: only through the JDK's ``keytool`` (``-importkeystore`` from a PKCS12 in a private temporary
    directory); trust stores through ``keytool -importcert``. Passwords reach keytool through environment
    variables (``-storepass:env``), never its command line. Without keytool, ``KeytoolError`` says so.

Objects are immutable and safe to share between threads; private keys never appear in ``repr``.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["IssuedCertificate", "KeytoolError", "LocalCA", "PemFiles", "find_keytool"]

KeyType = Literal["rsa", "ec"]
PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey

_CLOCK_SKEW = datetime.timedelta(minutes=5)


class KeytoolError(RuntimeError):
    """The JDK's keytool is missing or failed (its message says which; it never contains a password)."""


def find_keytool() -> str | None:
    """The keytool to run: ``$JAVA_HOME/bin/keytool`` when it exists, else the one on ``PATH``, else None."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "keytool"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("keytool")


def _run_keytool(args: Sequence[str], secrets: dict[str, str], what: str) -> None:
    keytool = find_keytool()
    if keytool is None:
        raise KeytoolError(
            f"cannot write {what}: the JDK's keytool is not installed (not in $JAVA_HOME/bin nor on PATH); "
            "install a JDK or use PKCS12 or PEM stores"
        )
    env = dict(os.environ)
    env.update(secrets)
    proc = subprocess.run([keytool, *args], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip()
        for secret in secrets.values():
            if secret:
                output = output.replace(secret, "[hidden]")
        raise KeytoolError(f"keytool failed writing {what} (exit {proc.returncode}): {output}")


def _generate_key(key_type: KeyType) -> PrivateKey:
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    if key_type == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    raise ValueError(f"unknown key_type {key_type!r} (expected 'rsa' or 'ec')")


KeyCipher = Literal["aes-256", "3des"]

# PKCS#12 PBE of RFC 7292 (pbeWithSHAAnd3-KeyTripleDES-CBC), the one encrypted-PKCS#8 algorithm JDK 17 can
# decrypt the way Kafka does (``EncryptedPrivateKeyInfo.getAlgName()`` is "PBES2" for PBES2 keys there, and
# ``SecretKeyFactory.getInstance("PBES2")`` fails).
_PBE_SHA1_3DES_OID = bytes.fromhex("2a864886f70d010c0103")  # 1.2.840.113549.1.12.1.3
_PBE_ITERATIONS = 10_000


def _der(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + content


def _pkcs12_kdf(password: str, salt: bytes, iterations: int, purpose: int, size: int) -> bytes:
    """RFC 7292 appendix B.2 with SHA-1 (u = 20, v = 64); purpose 1 = key, 2 = IV."""
    pw = password.encode("utf-16-be") + b"\x00\x00"
    d = bytes([purpose]) * 64

    def fill(data: bytes) -> bytes:
        """``data`` repeated to the next multiple of 64 bytes (empty stays empty)."""
        if not data:
            return b""
        target = 64 * -(-len(data) // 64)
        return (data * (target // len(data) + 1))[:target]

    i = fill(salt) + fill(pw)
    out = b""
    while len(out) < size:
        a = hashlib.sha1(d + i, usedforsecurity=False).digest()
        for _ in range(iterations - 1):
            a = hashlib.sha1(a, usedforsecurity=False).digest()
        out += a
        b = int.from_bytes((a * 4)[:64], "big")
        i = b"".join(
            ((int.from_bytes(i[j : j + 64], "big") + b + 1) % (1 << 512)).to_bytes(64, "big")
            for j in range(0, len(i), 64)
        )
    return out[:size]


def _java_pkcs8_pem(key: PrivateKey, password: str) -> bytes:
    """PKCS#8 encrypted with pbeWithSHAAnd3-KeyTripleDES-CBC (what the JDK's ``PBEWithSHA1AndDESede`` reads)."""
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, modes

    if not password:
        raise ValueError("an encrypted key needs a non-empty password")
    if not password.isascii():
        raise ValueError("the JDK's PBEWithSHA1AndDESede takes ASCII passwords only; use cipher='aes-256'")
    plain = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    salt = os.urandom(8)
    des_key = _pkcs12_kdf(password, salt, _PBE_ITERATIONS, 1, 24)
    iv = _pkcs12_kdf(password, salt, _PBE_ITERATIONS, 2, 8)
    padder = padding.PKCS7(64).padder()
    encryptor = Cipher(TripleDES(des_key), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padder.update(plain) + padder.finalize()) + encryptor.finalize()
    parameters = _der(0x30, _der(0x04, salt) + _der(0x02, _PBE_ITERATIONS.to_bytes(2, "big")))
    algorithm = _der(0x30, _der(0x06, _PBE_SHA1_3DES_OID) + parameters)
    der = _der(0x30, algorithm + _der(0x04, ciphertext))
    body = base64.encodebytes(der).replace(b"\n", b"")
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return b"\n".join([b"-----BEGIN ENCRYPTED PRIVATE KEY-----", *lines, b"-----END ENCRYPTED PRIVATE KEY-----", b""])


def _key_pem(key: PrivateKey, password: str | None, cipher: KeyCipher = "aes-256") -> bytes:
    if password is not None and cipher == "3des":
        return _java_pkcs8_pem(key, password)
    if cipher not in ("aes-256", "3des"):
        raise ValueError(f"unknown key cipher {cipher!r} (expected 'aes-256' or '3des')")
    encryption: serialization.KeySerializationEncryption
    if password is None:
        encryption = serialization.NoEncryption()
    else:
        encryption = serialization.BestAvailableEncryption(password.encode("utf-8"))
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _pkcs12_encryption(password: str) -> serialization.KeySerializationEncryption:
    if not password:
        raise ValueError("a PKCS12 store needs a non-empty password")
    return serialization.BestAvailableEncryption(password.encode("utf-8"))


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by the owner only (0600 from creation on)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
    finally:
        os.close(fd)


def _san_entry(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


@dataclass(frozen=True)
class PemFiles:
    """Paths written by ``IssuedCertificate.write_pem_files``."""

    certificate: Path  # the leaf certificate
    chain: Path  # leaf then CA (ssl.certificate.location / load_cert_chain)
    private_key: Path  # unencrypted PKCS#8, mode 0600
    encrypted_private_key: Path | None  # PKCS#8 encrypted with key_password, mode 0600 (None without one)
    ca: Path  # the issuing CA's certificate (ssl.ca.location / a PEM truststore)


@dataclass(frozen=True)
class IssuedCertificate:
    """A certificate issued by a ``LocalCA`` with its private key (PEM bytes; see the module docstring)."""

    common_name: str
    certificate: x509.Certificate
    ca_certificate: x509.Certificate
    private_key: PrivateKey = field(repr=False)

    @property
    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def ca_certificate_pem(self) -> bytes:
        return self.ca_certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def chain_pem(self) -> bytes:
        """The leaf then the CA certificate, PEM."""
        return self.certificate_pem + self.ca_certificate_pem

    @property
    def private_key_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (``BEGIN PRIVATE KEY``)."""
        return _key_pem(self.private_key, None)

    @property
    def subject_dn(self) -> str:
        """The subject as RFC 2253 / Java ``X500Principal.getName()`` prints it, e.g. ``CN=alice,OU=Eng,...``."""
        return self.certificate.subject.rfc4514_string()

    def private_key_pem_pkcs8(self, password: str | None = None, *, cipher: KeyCipher = "aes-256") -> bytes:
        """The private key as PKCS#8 PEM, encrypted with ``password`` when given (``BEGIN ENCRYPTED PRIVATE KEY``).

        ``cipher="aes-256"``: PBES2 (OpenSSL, librdkafka, Python read it); ``"3des"``: PKCS#12 PBE with SHA-1
        and 3DES, the form Kafka's own PEM code can decrypt on JDK 17 (see the module docstring).
        """
        return _key_pem(self.private_key, password, cipher)

    def keystore_pem(self, key_password: str | None = None, *, cipher: KeyCipher = "3des") -> bytes:
        """Kafka's PEM keystore file (``ssl.keystore.type=PEM``): the PKCS#8 key, then the chain.

        The key is encrypted for Java by default (``cipher="3des"``), as Kafka brokers and clients read this file.
        """
        return self.private_key_pem_pkcs8(key_password, cipher=cipher) + self.chain_pem

    def write_pem_files(
        self, directory: str | os.PathLike[str], *, stem: str | None = None, key_password: str | None = None
    ) -> PemFiles:
        """Write ``<stem>.crt``, ``<stem>-chain.pem``, ``<stem>.key`` (+ ``<stem>.enc.key``) and ``ca.crt``.

        ``stem`` defaults to the common name with characters unsafe in file names replaced by ``_``. Key files
        are created with mode 0600.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        name = stem or "".join(c if c.isalnum() or c in "-_." else "_" for c in self.common_name)
        cert_path = out / f"{name}.crt"
        chain_path = out / f"{name}-chain.pem"
        key_path = out / f"{name}.key"
        ca_path = out / "ca.crt"
        cert_path.write_bytes(self.certificate_pem)
        chain_path.write_bytes(self.chain_pem)
        _write_private(key_path, self.private_key_pem)
        ca_path.write_bytes(self.ca_certificate_pem)
        encrypted_path = None
        if key_password is not None:
            encrypted_path = out / f"{name}.enc.key"
            _write_private(encrypted_path, self.private_key_pem_pkcs8(key_password))
        return PemFiles(cert_path, chain_path, key_path, encrypted_path, ca_path)

    def to_pkcs12(self, password: str, *, alias: str | None = None) -> bytes:
        """A PKCS12 keystore (one private-key entry named ``alias``, default the common name, with the chain)."""
        return pkcs12.serialize_key_and_certificates(
            (alias or self.common_name).encode("utf-8"),
            self.private_key,
            self.certificate,
            [self.ca_certificate],
            _pkcs12_encryption(password),
        )

    def write_keystore(
        self,
        path: str | os.PathLike[str],
        password: str,
        *,
        store_type: Literal["PKCS12", "JKS", "JCEKS"] = "PKCS12",
        alias: str | None = None,
        key_password: str | None = None,
        tool: Literal["cryptography", "keytool"] = "cryptography",
    ) -> Path:
        """Write a keystore file (mode 0600) holding this key and chain under ``alias``.

        PKCS12 is written by ``cryptography`` unless ``tool="keytool"``; JKS (and JCEKS) always by keytool. ``key_password``
        (Kafka's ``ssl.key.password``) differs from the store password only in JKS (PKCS12 from keytool
        requires them equal; default: the store password).
        """
        target = Path(path)
        name = alias or self.common_name
        if store_type == "PKCS12" and tool == "cryptography":
            if key_password not in (None, password):
                raise ValueError("a PKCS12 keystore has one password: key_password must equal the store password")
            _write_private(target, self.to_pkcs12(password, alias=name))
            return target
        if store_type not in ("PKCS12", "JKS", "JCEKS"):
            raise ValueError(f"unknown keystore type {store_type!r} (expected PKCS12, JKS or JCEKS)")
        if store_type == "PKCS12" and key_password not in (None, password):
            raise ValueError("a PKCS12 keystore has one password: key_password must equal the store password")
        with tempfile.TemporaryDirectory(prefix="kafkalog-ks-") as tmp:
            source = Path(tmp) / "source.p12"
            _write_private(source, self.to_pkcs12(password, alias=name))
            if target.exists():
                target.unlink()
            _run_keytool(
                [
                    "-importkeystore",
                    "-noprompt",
                    "-srckeystore",
                    str(source),
                    "-srcstoretype",
                    "PKCS12",
                    "-srcstorepass:env",
                    "KAFKALOG_SRC_PW",
                    "-srcalias",
                    name,
                    "-destkeystore",
                    str(target),
                    "-deststoretype",
                    store_type,
                    "-deststorepass:env",
                    "KAFKALOG_DEST_PW",
                    "-destkeypass:env",
                    "KAFKALOG_KEY_PW",
                    "-destalias",
                    name,
                ],
                {
                    "KAFKALOG_SRC_PW": password,
                    "KAFKALOG_DEST_PW": password,
                    "KAFKALOG_KEY_PW": key_password or password,
                },
                f"{store_type} keystore {target}",
            )
        os.chmod(target, 0o600)
        return target

    def write_jks_keystore(
        self, path: str | os.PathLike[str], password: str, *, alias: str | None = None, key_password: str | None = None
    ) -> Path:
        """A JKS keystore through keytool (see ``write_keystore``)."""
        return self.write_keystore(path, password, store_type="JKS", alias=alias, key_password=key_password)


@dataclass(frozen=True)
class LocalCA:
    """A self-signed certificate authority whose key stays in memory (see the module docstring)."""

    certificate: x509.Certificate
    private_key: PrivateKey = field(repr=False)
    key_type: KeyType = "rsa"

    @classmethod
    def create(
        cls,
        common_name: str = "kafkalog local CA",
        *,
        key_type: KeyType = "rsa",
        valid_days: int = 3650,
        organization: str | None = None,
    ) -> LocalCA:
        key = _generate_key(key_type)
        attributes = []
        if organization:
            attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        name = x509.Name(attributes)
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _CLOCK_SKEW)
            .not_valid_after(now + datetime.timedelta(days=valid_days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(cert, key, key_type)

    @classmethod
    def from_pem(cls, certificate_pem: bytes, private_key_pem: bytes, password: str | None = None) -> LocalCA:
        """Reload a CA from its certificate and PKCS#8 key (encrypted with ``password`` when given)."""
        cert = x509.load_pem_x509_certificate(certificate_pem)
        key = serialization.load_pem_private_key(
            private_key_pem, password.encode("utf-8") if password is not None else None
        )
        if isinstance(key, rsa.RSAPrivateKey):
            return cls(cert, key, "rsa")
        if isinstance(key, ec.EllipticCurvePrivateKey):
            return cls(cert, key, "ec")
        raise ValueError("the CA key must be RSA or EC")

    @property
    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def certificate_der(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.DER)

    def private_key_pem_pkcs8(self, password: str | None = None) -> bytes:
        """The CA's key as PKCS#8 PEM, encrypted with ``password`` when given."""
        return _key_pem(self.private_key, password)

    def issue(
        self,
        common_name: str,
        *,
        hosts: Sequence[str] = ("localhost", "127.0.0.1"),
        server: bool = True,
        client: bool = True,
        organizational_unit: str | None = None,
        organization: str | None = None,
        locality: str | None = None,
        state: str | None = None,
        country: str | None = None,
        key_type: KeyType | None = None,
        valid_days: int = 825,
    ) -> IssuedCertificate:
        """Issue a leaf certificate (see the module docstring for its subject order and extensions)."""
        if not (server or client):
            raise ValueError("a certificate must be for a server, a client or both")
        key = _generate_key(key_type or self.key_type)
        attributes = []
        for oid, value in (
            (NameOID.COUNTRY_NAME, country),
            (NameOID.STATE_OR_PROVINCE_NAME, state),
            (NameOID.LOCALITY_NAME, locality),
            (NameOID.ORGANIZATION_NAME, organization),
            (NameOID.ORGANIZATIONAL_UNIT_NAME, organizational_unit),
            (NameOID.COMMON_NAME, common_name),
        ):
            if value:
                attributes.append(x509.NameAttribute(oid, value))
        usages = []
        if server:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(attributes))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _CLOCK_SKEW)
            .not_valid_after(now + datetime.timedelta(days=valid_days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=isinstance(key, rsa.RSAPrivateKey),
                    data_encipherment=False,
                    key_agreement=isinstance(key, ec.EllipticCurvePrivateKey),
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.private_key.public_key()), critical=False
            )
        )
        if hosts:
            builder = builder.add_extension(x509.SubjectAlternativeName([_san_entry(h) for h in hosts]), critical=False)
        cert = builder.sign(self.private_key, hashes.SHA256())
        return IssuedCertificate(common_name, cert, self.certificate, key)

    def write_pem(self, path: str | os.PathLike[str]) -> Path:
        """Write the CA certificate as PEM (a PEM truststore, librdkafka's ``ssl.ca.location``)."""
        target = Path(path)
        target.write_bytes(self.certificate_pem)
        return target

    def to_pkcs12_truststore(self, password: str, *, alias: str = "caroot") -> bytes:
        """A PKCS12 holding only the CA certificate, written by ``cryptography``.

        OpenSSL and ``cryptography`` read it; the JDK ignores certificate-only PKCS12 entries that lack its
        trusted-key-usage attribute, so write truststores for Java with ``write_truststore(tool="keytool")``.
        """
        return pkcs12.serialize_key_and_certificates(
            alias.encode("utf-8"), None, None, [self.certificate], _pkcs12_encryption(password)
        )

    def write_truststore(
        self,
        path: str | os.PathLike[str],
        password: str,
        *,
        store_type: Literal["PKCS12", "JKS", "JCEKS"] = "JKS",
        alias: str = "caroot",
        tool: Literal["cryptography", "keytool"] = "keytool",
    ) -> Path:
        """Write a truststore with the CA certificate as a trusted entry (keytool ``-importcert``)."""
        target = Path(path)
        if store_type == "PKCS12" and tool == "cryptography":
            target.write_bytes(self.to_pkcs12_truststore(password, alias=alias))
            return target
        if store_type not in ("PKCS12", "JKS", "JCEKS"):
            raise ValueError(f"unknown truststore type {store_type!r} (expected PKCS12, JKS or JCEKS)")
        with tempfile.TemporaryDirectory(prefix="kafkalog-ts-") as tmp:
            ca_file = self.write_pem(Path(tmp) / "ca.crt")
            if target.exists():
                target.unlink()
            _run_keytool(
                [
                    "-importcert",
                    "-noprompt",
                    "-alias",
                    alias,
                    "-file",
                    str(ca_file),
                    "-keystore",
                    str(target),
                    "-storetype",
                    store_type,
                    "-storepass:env",
                    "KAFKALOG_STORE_PW",
                ],
                {"KAFKALOG_STORE_PW": password},
                f"{store_type} truststore {target}",
            )
        return target

    def write_jks_truststore(self, path: str | os.PathLike[str], password: str, *, alias: str = "caroot") -> Path:
        """A JKS truststore with the CA certificate (keytool ``-importcert``)."""
        return self.write_truststore(path, password, store_type="JKS", alias=alias)
