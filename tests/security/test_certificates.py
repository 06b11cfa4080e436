"""The local CA: issued certificates chain to it, carry the asked subject, SANs and usages, and every writer's output
can be read back (PEM, PKCS12 by cryptography and keytool, JKS listed by keytool)."""

from __future__ import annotations

import ipaddress
import stat
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID

from spark_kafkalog.security import certificates
from spark_kafkalog.security.certificates import KeytoolError, LocalCA
from tests.security.certs import CLIENT_DN, PASSWORD
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)


@pytest.fixture(scope="module")
def ca() -> LocalCA:
    return LocalCA.create("test CA")


def test_issued_certificate_is_signed_by_the_ca_with_sans_and_usages(ca):
    issued = ca.issue("broker-1", hosts=("localhost", "127.0.0.1", "::1"), server=True, client=False)
    issued.certificate.verify_directly_issued_by(ca.certificate)
    san = issued.certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
    eku = issued.certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    basic = issued.certificate.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert basic.ca is False
    assert ca.certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True


def test_subject_prints_most_specific_first_like_java(ca):
    issued = ca.issue(
        "alice",
        hosts=(),
        server=False,
        organizational_unit="Eng",
        organization="Org",
        locality="City",
        state="State",
        country="US",
    )
    assert issued.subject_dn == CLIENT_DN


def test_private_key_is_pkcs8_and_encrypts_with_a_password(ca):
    issued = ca.issue("k")
    assert issued.private_key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    encrypted = issued.private_key_pem_pkcs8("s3cret")
    assert encrypted.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    key = serialization.load_pem_private_key(encrypted, b"s3cret")
    assert key.public_key() == issued.certificate.public_key()
    with pytest.raises((ValueError, TypeError)):
        serialization.load_pem_private_key(encrypted, b"wrong")
    assert "PRIVATE" not in repr(issued) and "private_key=" not in repr(issued)


def test_ec_keys(ca):
    issued = ca.issue("ec-host", key_type="ec")
    assert isinstance(issued.private_key, ec.EllipticCurvePrivateKey)
    issued.certificate.verify_directly_issued_by(ca.certificate)
    assert isinstance(ca.private_key, rsa.RSAPrivateKey)


def test_ca_reloads_from_pem(ca):
    reloaded = LocalCA.from_pem(ca.certificate_pem, ca.private_key_pem_pkcs8("pw"), "pw")
    issued = reloaded.issue("again")
    issued.certificate.verify_directly_issued_by(ca.certificate)


def test_write_pem_files_keys_are_owner_only(ca, tmp_path):
    files = ca.issue("files").write_pem_files(tmp_path, key_password="pw")
    assert stat.S_IMODE(files.private_key.stat().st_mode) == 0o600
    assert files.encrypted_private_key is not None
    assert stat.S_IMODE(files.encrypted_private_key.stat().st_mode) == 0o600
    chain = x509.load_pem_x509_certificates(files.chain.read_bytes())
    assert [c.subject.rfc4514_string() for c in chain] == ["CN=files", "CN=test CA"]
    assert files.ca.read_bytes() == ca.certificate_pem


def test_pkcs12_round_trip(ca):
    issued = ca.issue("p12")
    key, cert, extra = pkcs12.load_key_and_certificates(issued.to_pkcs12("pw"), b"pw")
    assert cert == issued.certificate
    assert extra == [ca.certificate]
    assert key is not None


def test_keytool_stores_list_the_expected_entries(tls_material):
    def listing(path, store_type):
        out = subprocess.run(
            ["keytool", "-list", "-keystore", str(path), "-storetype", store_type, "-storepass", PASSWORD],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return out

    assert "PrivateKeyEntry" in listing(tls_material.broker_keystore_jks, "JKS")
    assert "localhost," in listing(tls_material.broker_keystore_jks, "JKS")
    assert "PrivateKeyEntry" in listing(tls_material.broker_keystore_p12, "PKCS12")
    assert "trustedCertEntry" in listing(tls_material.truststore_jks, "JKS")
    assert "trustedCertEntry" in listing(tls_material.truststore_p12, "PKCS12")
    # the JDK reads the PKCS12 keystores cryptography writes (librdkafka-style client stores, cluster up)
    assert "PrivateKeyEntry" in listing(tls_material.client_keystore_p12, "PKCS12")
    assert "alice," in listing(tls_material.client_keystore_p12, "PKCS12")
    assert tls_material.broker_keystore_jks.read_bytes()[:4] == bytes.fromhex("feedfeed")
    _, cert, _ = pkcs12.load_key_and_certificates(tls_material.broker_keystore_p12.read_bytes(), PASSWORD.encode())
    assert cert == tls_material.broker.certificate


def test_missing_keytool_is_a_clear_error(ca, tmp_path, monkeypatch):
    monkeypatch.setattr(certificates, "find_keytool", lambda: None)
    with pytest.raises(KeytoolError, match="keytool is not installed") as info:
        ca.issue("x").write_jks_keystore(tmp_path / "x.jks", "hunter2-pw")
    assert "hunter2-pw" not in str(info.value)


def test_keytool_failure_hides_the_password(ca, tmp_path):
    # keytool cannot create a store in a missing directory; its message must not echo the password.
    bad = tmp_path / "missing" / "x.jks"
    with pytest.raises(KeytoolError) as info:
        ca.write_truststore(bad, "hunter2-pw")
    assert "hunter2-pw" not in str(info.value)


# Kafka's PEM key decryption (DefaultSslEngineFactory.PemStore): the algorithm name from the key itself.
KAFKA_PEM_DECRYPT_JAVA = """
import java.nio.file.*; import java.util.*; import javax.crypto.*; import javax.crypto.spec.*;
import java.security.*; import java.security.spec.*;
public class KafkaPemKey { public static void main(String[] a) throws Exception {
  String pem = new String(Files.readAllBytes(Paths.get(a[0])));
  byte[] der = Base64.getDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\\\s", ""));
  EncryptedPrivateKeyInfo info = new EncryptedPrivateKeyInfo(der);
  String algorithm = info.getAlgName();
  SecretKey pbeKey = SecretKeyFactory.getInstance(algorithm).generateSecret(new PBEKeySpec(a[1].toCharArray()));
  Cipher cipher = Cipher.getInstance(algorithm);
  cipher.init(Cipher.DECRYPT_MODE, pbeKey, info.getAlgParameters());
  PrivateKey key = KeyFactory.getInstance(a[2]).generatePrivate(info.getKeySpec(cipher));
  System.out.println(algorithm + " " + key.getAlgorithm());
}}
"""


@pytest.mark.parametrize(("key_type", "java_name"), [("rsa", "RSA"), ("ec", "EC")])
def test_keystore_pem_key_decrypts_as_kafka_does_on_the_jdk(ca, tmp_path, key_type, java_name):
    issued = ca.issue("pem-broker", key_type=key_type)
    password = "a-long-ascii-password-over-thirty-two-characters-1234"
    pem = issued.keystore_pem(password)
    assert pem.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    key = serialization.load_pem_private_key(pem, password.encode())  # cryptography/OpenSSL read it too
    assert key.public_key() == issued.certificate.public_key()
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(issued.private_key_pem_pkcs8(password, cipher="3des"))
    source = tmp_path / "KafkaPemKey.java"
    source.write_text(KAFKA_PEM_DECRYPT_JAVA)
    out = subprocess.run(
        ["java", str(source), str(key_file), password, java_name], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["PBEWithSHA1AndDESede", java_name]


def test_3des_key_encryption_refuses_passwords_the_jdk_cannot_use(ca):
    issued = ca.issue("x")
    with pytest.raises(ValueError, match="ASCII passwords only"):
        issued.private_key_pem_pkcs8("pässwörd", cipher="3des")
    with pytest.raises(ValueError, match="non-empty password"):
        issued.keystore_pem("")
