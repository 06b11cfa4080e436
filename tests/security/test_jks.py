"""The JKS reader against keytool-made stores (JDK 17): entries, key recovery, integrity and password errors."""

from __future__ import annotations

import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafkalog.security import SecurityConfigError
from spark_kafkalog.security.certificates import LocalCA
from spark_kafkalog.security.jks import _decode_modified_utf8, load_jks
from tests.security.certs import PASSWORD
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)

SECRET = "not-the-password-42"


def der(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def test_keystore_private_key_entry_and_chain(tls_material):
    store = load_jks(tls_material.broker_keystore_jks.read_bytes(), PASSWORD)
    assert store.version == 2
    assert store.trusted_certificates == ()
    (entry,) = store.private_keys
    assert entry.alias == "localhost"
    assert entry.timestamp_ms > 1_600_000_000_000
    assert entry.certificate_chain_der == (der(tls_material.broker.certificate), der(tls_material.ca.certificate))
    key = serialization.load_der_private_key(entry.decrypt(PASSWORD), None)
    assert key.public_key() == tls_material.broker.certificate.public_key()
    assert "protected_key" not in repr(entry)


def test_truststore_trusted_cert_entry(tls_material):
    store = load_jks(tls_material.truststore_jks.read_bytes(), PASSWORD)
    assert store.private_keys == ()
    (entry,) = store.trusted_certificates
    assert entry.alias == "caroot"
    assert entry.certificate_der == der(tls_material.ca.certificate)


def test_no_store_password_skips_the_integrity_check(tls_material):
    store = load_jks(tls_material.truststore_jks.read_bytes(), None)
    assert [e.certificate_der for e in store.trusted_certificates] == [der(tls_material.ca.certificate)]


def test_wrong_store_password_names_the_store_not_the_password(tls_material):
    with pytest.raises(SecurityConfigError, match="truststore.jks.*password was incorrect") as info:
        load_jks(tls_material.truststore_jks.read_bytes(), SECRET, source=str(tls_material.truststore_jks))
    assert SECRET not in str(info.value)


def test_tampered_store_fails_the_integrity_check(tls_material):
    data = bytearray(tls_material.truststore_jks.read_bytes())
    data[40] ^= 0x01
    with pytest.raises(SecurityConfigError, match="tampered"):
        load_jks(bytes(data), PASSWORD)


def test_key_password_distinct_from_store_password(tls_material, tmp_path):
    path = tls_material.client.write_jks_keystore(tmp_path / "k.jks", PASSWORD, alias="alice", key_password="key-pw-1")
    (entry,) = load_jks(path.read_bytes(), PASSWORD).private_keys
    key = serialization.load_der_private_key(entry.decrypt("key-pw-1"), None)
    assert key.public_key() == tls_material.client.certificate.public_key()
    with pytest.raises(SecurityConfigError, match="key password was incorrect") as info:
        entry.decrypt(SECRET, source=str(path))
    assert SECRET not in str(info.value) and "alice" in str(info.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xce\xce\xce\xce" + bytes(40), "unsupported JKS version 0"),
        (b"PK\x03\x04" + bytes(40), "not a JKS keystore"),
        (b"\xfe\xed\xfe\xed\x00\x00\x00\x02", "truncated"),
        (b"\xfe\xed\xfe\xed\x00\x00\x00\x02\x00\x00\x00\x05" + bytes(20), "truncated or corrupt"),
        (b"\xfe\xed\xfe\xed\x00\x00\x00\x07\x00\x00\x00\x00" + bytes(20), "unsupported JKS version 7"),
    ],
)
def test_malformed_stores_are_refused(data, message):
    with pytest.raises(SecurityConfigError, match=message):
        load_jks(data, None, source="ssl.keystore.location=/x")


def test_jceks_keystore_and_truststore(tls_material, tmp_path):
    keystore = tls_material.client.write_keystore(
        tmp_path / "c.jceks", PASSWORD, store_type="JCEKS", alias="alice", key_password="jceks-key-pw"
    )
    store = load_jks(keystore.read_bytes(), PASSWORD)
    assert store.store_type == "JCEKS"
    (entry,) = store.private_keys
    assert entry.certificate_chain_der[0] == der(tls_material.client.certificate)
    key = serialization.load_der_private_key(entry.decrypt("jceks-key-pw"), None)
    assert key.public_key() == tls_material.client.certificate.public_key()
    with pytest.raises(SecurityConfigError, match="key password was incorrect") as info:
        entry.decrypt(SECRET)
    assert SECRET not in str(info.value)
    with pytest.raises(SecurityConfigError, match="password was incorrect"):
        load_jks(keystore.read_bytes(), SECRET)
    truststore = tls_material.ca.write_truststore(tmp_path / "t.jceks", PASSWORD, store_type="JCEKS")
    trusted = load_jks(truststore.read_bytes(), PASSWORD)
    assert [e.certificate_der for e in trusted.trusted_certificates] == [der(tls_material.ca.certificate)]


def test_jceks_secret_key_entries_are_refused(tmp_path):
    path = tmp_path / "secret.jceks"
    subprocess.run(
        [
            "keytool",
            "-genseckey",
            "-alias",
            "aes",
            "-keyalg",
            "AES",
            "-keysize",
            "128",
            "-storetype",
            "JCEKS",
            "-keystore",
            str(path),
            "-storepass",
            PASSWORD,
            "-keypass",
            PASSWORD,
        ],
        capture_output=True,
        check=True,
    )
    with pytest.raises(SecurityConfigError, match="'aes' is a JCEKS secret-key entry"):
        load_jks(path.read_bytes(), PASSWORD)


def test_modified_utf8_aliases():
    assert _decode_modified_utf8(b"a\xc0\x80b") == "a\x00b"
    assert _decode_modified_utf8("é".encode()) == "é"
    # U+1F600 as a CESU-8 surrogate pair
    assert _decode_modified_utf8(b"\xed\xa0\xbd\xed\xb8\x80") == "\U0001f600"


@given(st.sampled_from([b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce"]), st.binary(max_size=400))
def test_arbitrary_bytes_after_the_magic_raise_only_security_config_error(magic, tail):
    try:
        load_jks(magic + tail, None)
    except SecurityConfigError:
        pass


@settings(max_examples=150)
@given(data=st.data())
def test_corrupted_real_stores_raise_only_security_config_error(tls_material, data):
    original = bytearray(tls_material.broker_keystore_jks.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(original) - 1))
        original[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(12, len(original)))
    try:
        store = load_jks(bytes(original[:cut]), None)
        for entry in store.private_keys:
            entry.decrypt(PASSWORD)
    except SecurityConfigError:
        pass


def test_several_entries_and_ec_keys(tls_material, tmp_path):
    other_ca = LocalCA.create("second CA", key_type="ec")
    truststore = tls_material.ca.write_truststore(tmp_path / "multi.jks", PASSWORD, alias="first")
    subprocess.run(
        [
            "keytool",
            "-importcert",
            "-noprompt",
            "-alias",
            "second",
            "-file",
            str(other_ca.write_pem(tmp_path / "second.crt")),
            "-keystore",
            str(truststore),
            "-storetype",
            "JKS",
            "-storepass",
            PASSWORD,
        ],
        capture_output=True,
        check=True,
    )
    store = load_jks(truststore.read_bytes(), PASSWORD)
    assert {e.alias: e.certificate_der for e in store.trusted_certificates} == {
        "first": der(tls_material.ca.certificate),
        "second": der(other_ca.certificate),
    }
    ec_leaf = other_ca.issue("ec-broker")
    keystore = ec_leaf.write_jks_keystore(tmp_path / "ec.jks", PASSWORD, alias="ec")
    (entry,) = load_jks(keystore.read_bytes(), PASSWORD).private_keys
    key = serialization.load_der_private_key(entry.decrypt(PASSWORD), None)
    assert key.public_key() == ec_leaf.certificate.public_key()
