"""Store loading: format sniffing, every store format and origin round-trips to the same certificates and key, and
wrong passwords or unusable files fail naming the setting and file, never the password."""

from __future__ import annotations

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from hypothesis import given
from hypothesis import strategies as st

from spark_kafkalog.security import SecurityConfigError
from spark_kafkalog.security.stores import (
    KeyMaterial,
    key_from_files,
    key_from_pem,
    load_key_store,
    load_trust_store,
    sniff_store_format,
    trust_from_ca_location,
    trust_from_pem,
)
from tests.security.certs import PASSWORD
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)

SECRET = "Wr0ng-Pass-Phrase"


def der(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def assert_key_of(material: KeyMaterial, issued) -> None:
    key = serialization.load_pem_private_key(material.private_key_pem, None)
    assert material.private_key_pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    assert key.public_key() == issued.certificate.public_key()
    chain = x509.load_pem_x509_certificates(material.certificate_chain_pem)
    assert chain[0] == issued.certificate
    assert issued.ca_certificate in chain
    assert "PRIVATE" not in repr(material)


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("broker_keystore_jks", "JKS"),
        ("truststore_jks", "JKS"),
        ("broker_keystore_p12", "PKCS12"),  # keytool
        ("client_keystore_p12", "PKCS12"),  # cryptography
        ("truststore_p12", "PKCS12"),
        ("broker_keystore_pem", "PEM"),
        ("ca_pem", "PEM"),
        ("client_key_pem", "PEM"),
    ],
)
def test_sniff_store_files(tls_material, attribute, expected):
    assert sniff_store_format(getattr(tls_material, attribute).read_bytes()) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xce\xce\xce\xce\x00\x00\x00\x02", "JCEKS"),
        (b"\n\n  -----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "PEM"),
        (b"", None),
        (b"hello world", None),
        (b"\x30\x03\x02\x01\x03", None),  # too short to be a PFX
        (b"\x30\x82\x00\x05\x02\x01\x03\x30\x00", "PKCS12"),
        (b"\x30\x82\x00\x05\x02\x01\x02\x30\x00", None),  # SEQUENCE, but version 2: not a PFX
        (b"\x30\x82\x7f\xff\x02\x01\x03\x30\x00", None),  # length beyond the data
        (b"\x00-----BEGIN CERTIFICATE-----", None),  # binary, not PEM
    ],
)
def test_sniff_table(data, expected):
    assert sniff_store_format(data) == expected


@given(st.binary(max_size=64))
def test_sniff_never_raises(data):
    assert sniff_store_format(data) in (None, "JKS", "JCEKS", "PKCS12", "PEM")


def test_sniff_a_der_certificate_is_not_pkcs12(tls_material):
    assert sniff_store_format(der(tls_material.ca.certificate)) is None


@pytest.mark.parametrize(
    ("attribute", "declared", "password"),
    [
        ("truststore_pem", "PEM", None),
        ("truststore_p12", "PKCS12", PASSWORD),
        ("truststore_jks", "JKS", PASSWORD),
        ("truststore_jks", "JKS", None),  # JKS without password: integrity not checked
        ("truststore_p12", "JKS", PASSWORD),  # keystore.type.compat: the bytes win
        ("truststore_jks", "PKCS12", PASSWORD),
    ],
)
def test_trust_store_formats(tls_material, attribute, declared, password):
    path = getattr(tls_material, attribute)
    trust = load_trust_store(path, password=password, declared_type=declared)
    assert trust.certificates_der == (der(tls_material.ca.certificate),)
    assert str(path) in trust.source


def test_trust_from_jks_keystore_includes_the_key_entry_leaf(tls_material):
    trust = load_trust_store(tls_material.broker_keystore_jks, password=PASSWORD)
    assert der(tls_material.broker.certificate) in trust.certificates_der


@pytest.mark.parametrize(
    ("attribute", "declared", "password", "key_password"),
    [
        ("broker_keystore_jks", "JKS", PASSWORD, None),
        ("broker_keystore_jks", "JKS", PASSWORD, PASSWORD),
        ("broker_keystore_p12", "PKCS12", PASSWORD, None),
        ("broker_keystore_p12", "JKS", PASSWORD, None),
        ("broker_keystore_jks", "PKCS12", PASSWORD, None),
        ("broker_keystore_pem", "PEM", None, PASSWORD),
    ],
)
def test_key_store_formats(tls_material, attribute, declared, password, key_password):
    material = load_key_store(
        getattr(tls_material, attribute), password=password, key_password=key_password, declared_type=declared
    )
    assert_key_of(material, tls_material.broker)


def test_jks_key_password_differs_from_store_password(tls_material, tmp_path):
    path = tls_material.client.write_jks_keystore(tmp_path / "c.jks", PASSWORD, alias="alice", key_password="key-pw-2")
    assert_key_of(load_key_store(path, password=PASSWORD, key_password="key-pw-2"), tls_material.client)
    with pytest.raises(
        SecurityConfigError, match=r"key password from ssl.keystore.password.*key password was incorrect"
    ):
        load_key_store(path, password=PASSWORD)
    with pytest.raises(SecurityConfigError, match=r"key password from ssl.key.password\].*incorrect") as info:
        load_key_store(path, password=PASSWORD, key_password=SECRET)
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    ("loader", "attribute", "match"),
    [
        ("trust", "truststore_jks", "password was incorrect"),
        ("trust", "truststore_p12", "password is incorrect"),
        ("key", "broker_keystore_jks", "password was incorrect"),
        ("key", "broker_keystore_p12", "password is incorrect"),
    ],
)
def test_wrong_store_password_names_setting_and_file(tls_material, loader, attribute, match):
    path = getattr(tls_material, attribute)
    with pytest.raises(SecurityConfigError, match=match) as info:
        if loader == "trust":
            load_trust_store(path, password=SECRET)
        else:
            load_key_store(path, password=SECRET)
    message = str(info.value)
    assert SECRET not in message
    assert str(path) in message
    assert ("ssl.truststore.location" if loader == "trust" else "ssl.keystore.location") in message


def test_wrong_key_password_for_pem_keystore(tls_material):
    with pytest.raises(SecurityConfigError, match="ssl.key.password is wrong") as info:
        load_key_store(tls_material.broker_keystore_pem, key_password=SECRET)
    assert SECRET not in str(info.value)
    with pytest.raises(SecurityConfigError, match="encrypted and ssl.key.password is not set"):
        load_key_store(tls_material.broker_keystore_pem)


def test_pem_store_declared_pem_refuses_a_store_password(tls_material):
    with pytest.raises(SecurityConfigError, match="PEM truststore takes no password"):
        load_trust_store(tls_material.truststore_pem, password=SECRET, declared_type="PEM")
    with pytest.raises(SecurityConfigError, match="PEM keystore takes no store password"):
        load_key_store(tls_material.broker_keystore_pem, password=SECRET, key_password=PASSWORD, declared_type="PEM")


def test_unreadable_and_unknown_files(tmp_path):
    with pytest.raises(SecurityConfigError, match=r"ssl.truststore.location \(.*missing.jks\): cannot read"):
        load_trust_store(tmp_path / "missing.jks")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"junk data")
    with pytest.raises(SecurityConfigError, match=r"not a JKS, PKCS12 or PEM store \(declared JKS\)"):
        load_key_store(junk, password="x", declared_type="JKS")
    with pytest.raises(SecurityConfigError, match="is a directory"):
        load_key_store(tmp_path)


def test_jceks_stores(tls_material, tmp_path):
    keystore = tls_material.broker.write_keystore(tmp_path / "b.jceks", PASSWORD, store_type="JCEKS", alias="b")
    assert sniff_store_format(keystore.read_bytes()) == "JCEKS"
    assert_key_of(load_key_store(keystore, password=PASSWORD, declared_type="JCEKS"), tls_material.broker)
    truststore = tls_material.ca.write_truststore(tmp_path / "t.jceks", PASSWORD, store_type="JCEKS")
    trust = load_trust_store(truststore, password=PASSWORD, declared_type="JKS")
    assert trust.certificates_der == (der(tls_material.ca.certificate),)


def test_inline_pem_kafka_names(tls_material):
    trust = trust_from_pem(tls_material.ca.certificate_pem.decode())
    assert trust.certificates_der == (der(tls_material.ca.certificate),)
    broker = tls_material.broker
    assert_key_of(key_from_pem(broker.chain_pem.decode(), broker.private_key_pem.decode()), broker)
    encrypted = broker.private_key_pem_pkcs8(PASSWORD).decode()
    assert_key_of(key_from_pem(broker.chain_pem, encrypted, key_password=PASSWORD), broker)
    with pytest.raises(SecurityConfigError, match="ssl.keystore.key: cannot decrypt") as info:
        key_from_pem(broker.chain_pem, encrypted, key_password=SECRET)
    assert SECRET not in str(info.value)
    with pytest.raises(SecurityConfigError, match="ssl.truststore.certificates: no PEM CERTIFICATE"):
        trust_from_pem("not pem")


def test_inline_pem_on_one_line_as_in_a_properties_file(tls_material):
    def one_line(pem: bytes) -> str:
        return " ".join(pem.decode().split())

    broker = tls_material.broker
    trust = trust_from_pem(one_line(tls_material.ca.certificate_pem))
    assert trust.certificates_der == (der(tls_material.ca.certificate),)
    material = key_from_pem(
        one_line(broker.chain_pem), one_line(broker.private_key_pem_pkcs8(PASSWORD)), key_password=PASSWORD
    )
    assert_key_of(material, broker)


def pkcs1(issued) -> bytes:
    return issued.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )


def test_pkcs1_key_is_rejected_for_kafka_names_and_accepted_for_librdkafka_names(tls_material, tmp_path):
    broker = tls_material.broker
    assert pkcs1(broker).startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    with pytest.raises(SecurityConfigError, match="ssl.keystore.key: .*RSA PRIVATE KEY.*openssl pkcs8 -topk8"):
        key_from_pem(broker.chain_pem, pkcs1(broker))
    assert_key_of(
        key_from_pem(
            broker.chain_pem,
            pkcs1(broker),
            chain_setting="ssl.certificate.pem",
            key_setting="ssl.key.pem",
            pkcs8_only=False,
        ),
        broker,
    )
    key_file = tmp_path / "rsa.key"
    key_file.write_bytes(pkcs1(broker))
    assert_key_of(key_from_files(tls_material.broker_chain_pem, key_file), broker)


def test_key_not_matching_the_certificate(tls_material):
    with pytest.raises(SecurityConfigError, match="does not match the first certificate"):
        key_from_pem(tls_material.broker.chain_pem, tls_material.client.private_key_pem)


def test_librdkafka_certificate_and_key_locations(tls_material):
    assert_key_of(key_from_files(tls_material.client_chain_pem, tls_material.client_key_pem), tls_material.client)
    assert_key_of(
        key_from_files(tls_material.client_chain_pem, tls_material.client_key_encrypted_pem, key_password=PASSWORD),
        tls_material.client,
    )
    with pytest.raises(SecurityConfigError, match=r"ssl.key.location \(.*client.enc.key\): cannot decrypt") as info:
        key_from_files(tls_material.client_chain_pem, tls_material.client_key_encrypted_pem, key_password=SECRET)
    assert SECRET not in str(info.value)


def test_librdkafka_ca_location_file_directory_and_probe(tls_material, tmp_path):
    assert trust_from_ca_location(tls_material.ca_pem).certificates_der == (der(tls_material.ca.certificate),)
    directory = tmp_path / "cas"
    directory.mkdir()
    (directory / "a1b2c3d4.0").write_bytes(tls_material.ca.certificate_pem)
    (directory / "copy.pem").write_bytes(tls_material.ca.certificate_pem)
    (directory / "other.crt").write_bytes(tls_material.broker.certificate_pem)
    (directory / "README").write_text("not a certificate")
    trust = trust_from_ca_location(directory)
    assert set(trust.certificates_der) == {der(tls_material.ca.certificate), der(tls_material.broker.certificate)}
    assert len(trust.certificates_der) == 2
    probe = trust_from_ca_location("probe")
    assert probe.system_default and probe.certificates_der == ()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SecurityConfigError, match=r"ssl.ca.location \(.*empty\): no PEM certificate"):
        trust_from_ca_location(empty)


def test_librdkafka_pkcs12_keystore_location(tls_material):
    material = load_key_store(tls_material.client_keystore_p12, password=PASSWORD)
    assert_key_of(material, tls_material.client)
