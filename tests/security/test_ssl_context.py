"""SslSettings from Kafka/librdkafka keys, cipher-name mapping, and real TLS handshakes between server_context and
client_context over a socketpair with every store format, client auth modes and host name checks."""

from __future__ import annotations

import os
import ssl
import subprocess
import tempfile

import pytest
from cryptography.hazmat.primitives import serialization

from spark_kafkalog.security import SecurityConfigError
from spark_kafkalog.security import ssl_context as ssl_context_module
from spark_kafkalog.security.certificates import LocalCA
from spark_kafkalog.security.ciphers import IANA_TO_OPENSSL, TLS13_SUITES, openssl_cipher_name, parse_cipher_suites
from spark_kafkalog.security.ssl_context import SslSettings, client_context, server_context
from tests.security.certs import PASSWORD, tls_handshake
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)


def der(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


def broker_config(tls, store: str = "jks", **extra) -> dict[str, object]:
    config: dict[str, object]
    if store == "jks":
        config = {
            "ssl.keystore.location": str(tls.broker_keystore_jks),
            "ssl.keystore.password": PASSWORD,
            "ssl.key.password": PASSWORD,
            "ssl.keystore.type": "JKS",
        }
    elif store == "p12":
        config = {
            "ssl.keystore.location": str(tls.broker_keystore_p12),
            "ssl.keystore.password": PASSWORD,
            "ssl.keystore.type": "PKCS12",
        }
    elif store == "pem-file":
        config = {
            "ssl.keystore.location": str(tls.broker_keystore_pem),
            "ssl.key.password": PASSWORD,
            "ssl.keystore.type": "PEM",
        }
    elif store == "pem-inline":
        config = {
            "ssl.keystore.certificate.chain": tls.broker.chain_pem.decode(),
            "ssl.keystore.key": tls.broker.private_key_pem_pkcs8(PASSWORD).decode(),
            "ssl.key.password": PASSWORD,
            "ssl.keystore.type": "PEM",
        }
    else:
        raise AssertionError(store)
    config.update(extra)
    return config


def client_trust(tls, store: str = "jks") -> dict[str, object]:
    return {
        "jks": {"ssl.truststore.location": str(tls.truststore_jks), "ssl.truststore.password": PASSWORD},
        "jks-no-password": {"ssl.truststore.location": str(tls.truststore_jks)},
        "p12": {
            "ssl.truststore.location": str(tls.truststore_p12),
            "ssl.truststore.password": PASSWORD,
            "ssl.truststore.type": "PKCS12",
        },
        "p12-declared-jks": {
            "ssl.truststore.location": str(tls.truststore_p12),
            "ssl.truststore.password": PASSWORD,
            "ssl.truststore.type": "JKS",
        },
        "pem-file": {"ssl.truststore.location": str(tls.truststore_pem), "ssl.truststore.type": "PEM"},
        "pem-inline": {"ssl.truststore.certificates": tls.ca.certificate_pem.decode(), "ssl.truststore.type": "PEM"},
        "ca-location": {"ssl.ca.location": str(tls.ca_pem)},
        "ca-pem": {"ssl.ca.pem": tls.ca.certificate_pem.decode()},
    }[store]


def client_keys(tls, store: str) -> dict[str, object]:
    return {
        "jks": {"ssl.keystore.location": str(tls.client_keystore_jks), "ssl.keystore.password": PASSWORD},
        "p12": {"ssl.keystore.location": str(tls.client_keystore_p12), "ssl.keystore.password": PASSWORD},
        "librdkafka-files": {
            "ssl.certificate.location": str(tls.client_chain_pem),
            "ssl.key.location": str(tls.client_key_encrypted_pem),
            "ssl.key.password": PASSWORD,
        },
        "librdkafka-pem": {
            "ssl.certificate.pem": tls.client.chain_pem.decode(),
            "ssl.key.pem": tls.client.private_key_pem.decode(),
        },
        "kafka-inline": {
            "ssl.keystore.certificate.chain": tls.client.chain_pem.decode(),
            "ssl.keystore.key": tls.client.private_key_pem.decode(),
        },
    }[store]


def contexts(server_cfg, client_cfg):
    return server_context(SslSettings.from_config(server_cfg)), client_context(SslSettings.from_config(client_cfg))


# ------------------------------------------------------------------ settings


def test_defaults():
    settings = SslSettings.from_config({})
    assert settings.enabled_protocols == ("TLSv1.2", "TLSv1.3")
    assert settings.endpoint_identification_algorithm == "https"
    assert settings.check_hostname is True
    assert settings.client_auth == "none"
    assert settings.verify_mode == ssl.CERT_NONE
    assert settings.tls_versions() == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)


@pytest.mark.parametrize(
    ("config", "check_hostname"),
    [
        ({}, True),
        ({"ssl.endpoint.identification.algorithm": "https"}, True),
        ({"ssl.endpoint.identification.algorithm": "HTTPS"}, True),
        ({"ssl.endpoint.identification.algorithm": ""}, False),
        ({"ssl.endpoint.identification.algorithm": "none"}, False),
        ({"enable.ssl.certificate.verification": "false"}, False),
        ({"enable.ssl.certificate.verification": True}, True),
    ],
)
def test_check_hostname_table(config, check_hostname):
    assert SslSettings.from_config(config).check_hostname is check_hostname


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        ("none", ssl.CERT_NONE),
        ("requested", ssl.CERT_OPTIONAL),
        ("required", ssl.CERT_REQUIRED),
        ("REQUIRED", ssl.CERT_REQUIRED),
    ],
)
def test_client_auth_table(value, mode):
    assert SslSettings.from_config({"ssl.client.auth": value}).verify_mode == mode


@pytest.mark.parametrize(
    ("config", "versions"),
    [
        ({"ssl.enabled.protocols": "TLSv1.2"}, ("TLSv1_2", "TLSv1_2")),
        ({"ssl.enabled.protocols": "TLSv1.3"}, ("TLSv1_3", "TLSv1_3")),
        ({"ssl.enabled.protocols": ["TLSv1.3", "TLSv1.2"]}, ("TLSv1_2", "TLSv1_3")),
        ({"ssl.protocol": "TLSv1.2"}, ("TLSv1_2", "TLSv1_2")),
        ({"ssl.protocol": "TLS"}, ("TLSv1_2", "TLSv1_3")),
        ({"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}, ("TLSv1_3", "TLSv1_3")),
        ({"ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, ("TLSv1_2", "TLSv1_2")),
        ({"ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"}, ("TLSv1_2", "TLSv1_3")),
        ({"ssl.cipher.suites": "HIGH:!aNULL"}, ("TLSv1_2", "TLSv1_3")),  # librdkafka syntax leaves TLS 1.3 alone
        ({"ssl.cipher.suites": "ECDHE-RSA-AES128-GCM-SHA256"}, ("TLSv1_2", "TLSv1_3")),
    ],
)
def test_tls_versions_table(config, versions):
    low, high = SslSettings.from_config(config).tls_versions()
    assert (low.name, high.name) == versions


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"ssl.client.auth": "sometimes"}, "ssl.client.auth: 'sometimes'"),
        ({"ssl.enabled.protocols": "SSLv3"}, "unknown protocol 'SSLv3'"),
        ({"ssl.protocol": "TLSv9"}, "ssl.protocol: unknown protocol"),
        ({"ssl.endpoint.identification.algorithm": "ldaps"}, "ssl.endpoint.identification.algorithm"),
        ({"ssl.truststore.location": "/a", "ssl.ca.location": "/b"}, "only one trust source"),
        ({"ssl.truststore.location": "/a", "ssl.truststore.certificates": "x"}, "only one trust source"),
        (
            {"ssl.keystore.location": "/a", "ssl.certificate.location": "/b", "ssl.key.location": "/c"},
            "only one key source",
        ),
        ({"ssl.keystore.certificate.chain": "x"}, "ssl.keystore.certificate.chain is set but ssl.keystore.key"),
        ({"ssl.key.location": "/k"}, "ssl.key.location is set but ssl.certificate.location"),
        ({"ssl.cipher.suites": "TLS_FOO_WITH_BAR"}, "unknown cipher suite 'TLS_FOO_WITH_BAR'"),
        (
            {"ssl.enabled.protocols": "TLSv1.3", "ssl.cipher.suites": "TLS_RSA_WITH_AES_128_GCM_SHA256"},
            "leave no TLS version enabled",
        ),
        ({"enable.ssl.certificate.verification": "maybe"}, "enable.ssl.certificate.verification"),
    ],
)
def test_invalid_settings(config, message):
    with pytest.raises(SecurityConfigError, match=message):
        SslSettings.from_config(config)


def test_prefixed_keys_win_and_only_dotted_names_are_read():
    config = {
        "ssl.client.auth": "none",
        "listener.name.client.ssl.client.auth": "required",
        "ssl_keystore_location": "/ignored",
    }
    assert SslSettings.from_config(config, prefix="listener.name.client.").client_auth == "required"
    assert SslSettings.from_config(config).client_auth == "none"
    assert SslSettings.from_config(config).keystore_location is None


def test_repr_hides_every_secret(tls_material):
    secrets = {
        "ssl.keystore.password": "ks-secret-1",
        "ssl.key.password": "key-secret-2",
        "ssl.truststore.password": "ts-secret-3",
    }
    settings = SslSettings.from_config({**secrets, "ssl.keystore.location": "/k", "ssl.truststore.location": "/t"})
    inline = SslSettings.from_config(
        {"ssl.keystore.certificate.chain": "chain", "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----kkk"}
    )
    assert not any(s in repr(settings) for s in secrets.values())
    assert "BEGIN PRIVATE KEY" not in repr(inline) and "chain" not in repr(inline).split("(", 1)[1]
    assert "/k" in repr(settings)


def test_server_context_needs_a_key_store():
    with pytest.raises(SecurityConfigError, match="SSL listener needs a key store"):
        server_context(SslSettings.from_config({}))


def test_wrong_keystore_password_error_has_setting_not_password(tls_material):
    with pytest.raises(SecurityConfigError, match="ssl.keystore.location") as info:
        server_context(
            SslSettings.from_config(broker_config(tls_material, "jks", **{"ssl.keystore.password": "Bad-Pw-77"}))
        )
    assert "Bad-Pw-77" not in str(info.value)


# ------------------------------------------------------------------ ciphers


def openssl_stdnames() -> dict[str, str]:
    out = subprocess.run(
        ["openssl", "ciphers", "-stdname", "ALL:@SECLEVEL=0"], capture_output=True, text=True, check=True
    ).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "-":
            table[parts[0]] = parts[2]
    return table


def test_cipher_table_agrees_with_openssl():
    stdnames = openssl_stdnames()
    for iana, openssl_name in IANA_TO_OPENSSL.items():
        assert stdnames.get(iana) == openssl_name, iana
    for suite in ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"):
        assert suite in TLS13_SUITES and stdnames.get(suite) == suite


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"),
        ("TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"),
        ("TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", "DHE-RSA-AES256-SHA256"),
    ],
)
def test_openssl_cipher_name_table(name, expected):
    assert openssl_cipher_name(name) == expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256", "static ECDH"),
        ("SSL_RSA_WITH_3DES_EDE_CBC_SHA", "legacy or insecure"),
        ("TLS_RSA_WITH_NULL_SHA256", "legacy or insecure"),
        ("TLS_AES_128_GCM_SHA256", "TLS 1.3 suite"),
        ("TLS_NOPE", "unknown cipher suite 'TLS_NOPE'"),
    ],
)
def test_openssl_cipher_name_errors(name, message):
    with pytest.raises(SecurityConfigError, match=message):
        openssl_cipher_name(name)


def test_parse_cipher_suites():
    selection = parse_cipher_suites(
        " TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_AES_256_GCM_SHA384,TLS_EMPTY_RENEGOTIATION_INFO_SCSV,"
        "ECDHE-RSA-AES128-GCM-SHA256"
    )
    assert selection is not None
    assert selection.tls12 == ("ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256")
    assert selection.tls13 == ("TLS_AES_256_GCM_SHA384",)
    assert parse_cipher_suites("") is None and parse_cipher_suites(None) is None
    with pytest.raises(SecurityConfigError, match="OpenSSL does not know the cipher 'NOT-A-CIPHER'"):
        parse_cipher_suites("NOT-A-CIPHER")
    with pytest.raises(SecurityConfigError, match="does not know the cipher 'BOGUS'"):
        parse_cipher_suites("ECDHE-RSA-AES128-GCM-SHA256:BOGUS")
    with pytest.raises(SecurityConfigError, match="OpenSSL accepts none"):
        parse_cipher_suites("!ALL")
    librdkafka_style = parse_cipher_suites("HIGH:!aNULL:!MD5")
    assert librdkafka_style is not None and librdkafka_style.openssl_cipher_string == "HIGH:!aNULL:!MD5"


# ------------------------------------------------------------------ handshakes


@pytest.mark.parametrize("keystore", ["jks", "p12", "pem-file", "pem-inline"])
@pytest.mark.parametrize(
    "truststore",
    ["jks", "jks-no-password", "p12", "p12-declared-jks", "pem-file", "pem-inline", "ca-location", "ca-pem"],
)
def test_handshake_with_every_store_format(tls_material, keystore, truststore):
    server, client = contexts(broker_config(tls_material, keystore), client_trust(tls_material, truststore))
    result = tls_handshake(server, client)
    assert result.ok, (result.client_error, result.server_error)
    assert result.client_peer_der == der(tls_material.broker.certificate)
    assert result.server_peer_der is None
    assert result.version == "TLSv1.3"


@pytest.mark.parametrize("client_store", ["jks", "p12", "librdkafka-files", "librdkafka-pem", "kafka-inline"])
def test_client_auth_required_with_a_client_certificate(tls_material, client_store):
    server, client = contexts(
        broker_config(tls_material, "p12", **client_trust(tls_material, "jks"), **{"ssl.client.auth": "required"}),
        {**client_trust(tls_material, "pem-file"), **client_keys(tls_material, client_store)},
    )
    result = tls_handshake(server, client)
    assert result.ok, (result.client_error, result.server_error)
    assert result.server_peer_der == der(tls_material.client.certificate)


def test_client_auth_required_rejects_a_client_without_certificate(tls_material):
    server, client = contexts(
        broker_config(tls_material, "p12", **client_trust(tls_material, "jks"), **{"ssl.client.auth": "required"}),
        client_trust(tls_material, "pem-file"),
    )
    result = tls_handshake(server, client)
    assert isinstance(result.server_error, ssl.SSLError)
    assert "certificate" in str(result.server_error).lower()
    assert result.client_error is not None


def test_client_auth_requested_accepts_with_and_without_certificate(tls_material):
    server_cfg = broker_config(
        tls_material, "p12", **client_trust(tls_material, "jks"), **{"ssl.client.auth": "requested"}
    )
    server, client = contexts(server_cfg, client_trust(tls_material, "pem-file"))
    without = tls_handshake(server, client)
    assert without.ok and without.server_peer_der is None
    server, client = contexts(
        server_cfg, {**client_trust(tls_material, "pem-file"), **client_keys(tls_material, "p12")}
    )
    with_cert = tls_handshake(server, client)
    assert with_cert.ok and with_cert.server_peer_der == der(tls_material.client.certificate)


def test_client_auth_none_ignores_the_client_certificate(tls_material):
    server, client = contexts(
        broker_config(tls_material, "p12"),
        {**client_trust(tls_material, "pem-file"), **client_keys(tls_material, "p12")},
    )
    result = tls_handshake(server, client)
    assert result.ok and result.server_peer_der is None


def wrong_host_server(tls) -> dict[str, object]:
    return {"ssl.keystore.location": str(tls.wrong_host_keystore_p12), "ssl.keystore.password": PASSWORD}


def test_wrong_host_rejected_with_https(tls_material):
    server, client = contexts(wrong_host_server(tls_material), client_trust(tls_material, "pem-file"))
    result = tls_handshake(server, client, server_hostname="localhost")
    assert isinstance(result.client_error, ssl.SSLCertVerificationError)
    assert "localhost" in str(result.client_error) or "match" in str(result.client_error)


@pytest.mark.parametrize("algorithm", ["", "none"])
def test_wrong_host_accepted_without_endpoint_identification(tls_material, algorithm):
    server, client = contexts(
        wrong_host_server(tls_material),
        {**client_trust(tls_material, "pem-file"), "ssl.endpoint.identification.algorithm": algorithm},
    )
    result = tls_handshake(server, client, server_hostname="localhost")
    assert result.ok, result.client_error
    assert result.client_peer_der == der(tls_material.wrong_host.certificate)


def test_ip_address_san_is_checked(tls_material):
    server, client = contexts(broker_config(tls_material, "p12"), client_trust(tls_material, "pem-file"))
    assert tls_handshake(server, client, server_hostname="127.0.0.1").ok
    result = tls_handshake(server, client, server_hostname="127.0.0.2")
    assert isinstance(result.client_error, ssl.SSLCertVerificationError)


def test_untrusted_ca_is_rejected_even_without_hostname_check(tls_material, tmp_path):
    other = LocalCA.create("some other CA")
    server, client = contexts(
        broker_config(tls_material, "p12"),
        {"ssl.ca.pem": other.certificate_pem.decode(), "ssl.endpoint.identification.algorithm": ""},
    )
    result = tls_handshake(server, client)
    assert isinstance(result.client_error, ssl.SSLCertVerificationError)


def test_no_trust_configured_uses_system_defaults(tls_material):
    server, client = contexts(broker_config(tls_material, "p12"), {})
    assert client.verify_mode == ssl.CERT_REQUIRED
    result = tls_handshake(server, client)
    assert isinstance(result.client_error, ssl.SSLCertVerificationError)  # our test CA is not a system CA


def test_certificate_verification_disabled_librdkafka(tls_material):
    server, client = contexts(broker_config(tls_material, "p12"), {"enable.ssl.certificate.verification": "false"})
    assert client.verify_mode == ssl.CERT_NONE
    assert tls_handshake(server, client, server_hostname="elsewhere").ok


@pytest.mark.parametrize(
    ("server_extra", "client_extra", "version", "cipher"),
    [
        ({}, {"ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        (
            {"ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"},
            {},
            "TLSv1.2",
            "ECDHE-RSA-CHACHA20-POLY1305",
        ),
        ({}, {"ssl.enabled.protocols": "TLSv1.2"}, "TLSv1.2", None),
        ({}, {"ssl.protocol": "TLSv1.2"}, "TLSv1.2", None),
        ({"ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"}, {}, "TLSv1.3", None),
    ],
)
def test_negotiated_version_and_cipher(tls_material, server_extra, client_extra, version, cipher):
    server, client = contexts(
        broker_config(tls_material, "p12", **server_extra), {**client_trust(tls_material, "pem-file"), **client_extra}
    )
    result = tls_handshake(server, client)
    assert result.ok, (result.client_error, result.server_error)
    assert result.version == version
    if cipher is not None:
        assert result.cipher == cipher


def test_disjoint_versions_fail(tls_material):
    server, client = contexts(
        broker_config(tls_material, "p12", **{"ssl.enabled.protocols": "TLSv1.3"}),
        {**client_trust(tls_material, "pem-file"), "ssl.enabled.protocols": "TLSv1.2"},
    )
    result = tls_handshake(server, client)
    assert result.client_error is not None and result.server_error is not None


def test_key_material_without_memfd_uses_a_private_temp_dir_removed_at_once(tls_material, monkeypatch):
    monkeypatch.delattr(os, "memfd_create", raising=False)
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(*args, **kwargs):
        path = real_mkdtemp(*args, **kwargs)
        made.append(path)
        assert oct(os.stat(path).st_mode & 0o777) == "0o700"
        return path

    monkeypatch.setattr(ssl_context_module.tempfile, "mkdtemp", recording_mkdtemp)
    server, client = contexts(broker_config(tls_material, "jks"), client_trust(tls_material, "pem-file"))
    assert made and not any(os.path.exists(p) for p in made)
    assert tls_handshake(server, client).ok


def test_key_material_goes_through_memfd(tls_material, monkeypatch):
    if not hasattr(os, "memfd_create"):
        pytest.fail("os.memfd_create is expected on this Linux machine")
    calls: list[str] = []
    real = os.memfd_create

    def recording(name, flags=0):
        calls.append(name)
        return real(name, flags)

    monkeypatch.setattr(os, "memfd_create", recording)
    monkeypatch.setattr(ssl_context_module.tempfile, "mkdtemp", lambda *a, **k: pytest.fail("temp dir used"))
    server_context(SslSettings.from_config(broker_config(tls_material, "pem-inline")))
    assert calls == ["kafkalog-chain", "kafkalog-key"]
