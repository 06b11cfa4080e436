"""ClientSecurity.from_config: protocols and TLS/SASL settings under Kafka's, librdkafka's and Spark's names."""

from __future__ import annotations

import ssl

import pytest

from spark_kafkalog.client import ClientConfig, ConfigError
from spark_kafkalog.client.network.security import ClientSecurity
from spark_kafkalog.security.errors import SecurityConfigError
from tests.security.certs import PASSWORD, TlsMaterial, build_tls_material, tls_handshake

SECRET = "user-secret-pw"
SCRAM_JAAS = f'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="{SECRET}";'


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


def trust(tls: TlsMaterial, style: str) -> dict[str, str]:
    return {
        "kafka-jks": {"ssl.truststore.location": str(tls.truststore_jks), "ssl.truststore.password": PASSWORD},
        "kafka-pkcs12": {
            "ssl.truststore.location": str(tls.truststore_p12),
            "ssl.truststore.password": PASSWORD,
            "ssl.truststore.type": "PKCS12",
        },
        "kafka-pem-inline": {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": tls.ca_pem.read_text()},
        "librdkafka-ca-location": {"ssl.ca.location": str(tls.ca_pem)},
    }[style]


@pytest.mark.parametrize("style", ["kafka-jks", "kafka-pkcs12", "kafka-pem-inline", "librdkafka-ca-location"])
def test_ssl_trust_from_every_kind_of_store(tls, style):
    security = ClientSecurity.from_config({"security.protocol": "SSL", **trust(tls, style)})
    assert security.protocol == "SSL" and security.uses_tls and not security.uses_sasl
    context = security.ssl_context
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True and security.check_hostname is True
    subjects = [str(cert["subject"]) for cert in context.get_ca_certs()]
    assert any("'commonName', 'kafkalog test CA'" in subject for subject in subjects), subjects


@pytest.mark.parametrize(
    "keys",
    [
        lambda t: {"ssl.keystore.location": str(t.client_keystore_jks), "ssl.keystore.password": PASSWORD},
        lambda t: {
            "ssl.keystore.location": str(t.client_keystore_p12),
            "ssl.keystore.password": PASSWORD,
            "ssl.keystore.type": "PKCS12",
        },
        lambda t: {"ssl.certificate.location": str(t.client_chain_pem), "ssl.key.location": str(t.client_key_pem)},
    ],
    ids=["kafka-jks-keystore", "kafka-pkcs12-keystore", "librdkafka-pem-files"],
)
def test_a_client_certificate_from_kafka_and_librdkafka_settings(tls, keys):
    security = ClientSecurity.from_config({"security.protocol": "ssl", "ssl.ca.location": str(tls.ca_pem), **keys(tls)})
    assert security.ssl_context is not None
    # a server requiring a client certificate accepts the context's
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tls.broker_chain_pem, tls.broker_key_pem)
    server.verify_mode = ssl.CERT_REQUIRED
    server.load_verify_locations(tls.ca_pem)
    result = tls_handshake(server, security.ssl_context, server_hostname="localhost")
    assert result.ok, result


@pytest.mark.parametrize(("value", "checked"), [("https", True), ("HTTPS", True), ("", False)])
def test_endpoint_identification_controls_only_the_host_name_check(tls, value, checked):
    security = ClientSecurity.from_config(
        {"security.protocol": "SSL", "ssl.ca.location": str(tls.ca_pem), "ssl.endpoint.identification.algorithm": value}
    )
    context = security.ssl_context
    assert context is not None
    assert security.check_hostname is checked
    assert context.check_hostname is checked
    assert context.verify_mode == ssl.CERT_REQUIRED  # the chain is still verified


@pytest.mark.parametrize(
    "config",
    [
        {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM_JAAS},
        {
            "security.protocol": "sasl_ssl",
            "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": "alice",
            "sasl.password": SECRET,
        },
    ],
    ids=["kafka", "librdkafka"],
)
def test_sasl_ssl_carries_both_the_context_and_the_mechanism(tls, config):
    security = ClientSecurity.from_config({**config, "ssl.ca.location": str(tls.ca_pem)})
    assert security.protocol == "SASL_SSL" and security.uses_tls and security.uses_sasl
    assert security.mechanism == "SCRAM-SHA-512"
    assert security.sasl.username == "alice"
    assert SECRET not in repr(security)
    assert repr(security) == "ClientSecurity(protocol='SASL_SSL', check_hostname=True, mechanism='SCRAM-SHA-512')"


def test_sasl_plaintext_has_no_tls_and_ssl_keys_are_not_read():
    security = ClientSecurity.from_config(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": SECRET,
            "ssl.truststore.location": "/does/not/exist.jks",  # ignored: no TLS on this protocol, as in Kafka
        }
    )
    assert security.ssl_context is None and security.mechanism == "PLAIN"


def test_plaintext_is_the_default():
    assert ClientSecurity.from_config({}) == ClientSecurity()
    assert repr(ClientSecurity()) == "ClientSecurity(protocol='PLAINTEXT')"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"security.protocol": "TLS"}, "must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
        (
            {
                "security.protocol": "SSL",
                "ssl.truststore.location": "/nope/truststore.jks",
                "ssl.truststore.password": SECRET,
            },
            "ssl.truststore.location",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "GSSAPI",
                "sasl.username": "u",
                "sasl.password": SECRET,
            },
            "GSSAPI",
        ),
    ],
)
def test_errors_name_the_setting_and_never_the_secret(config, message):
    with pytest.raises(SecurityConfigError) as caught:
        ClientSecurity.from_config(config)
    assert message in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_wrong_truststore_password_is_reported_when_the_client_needs_its_security(tls):
    cfg = ClientConfig.create(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(tls.truststore_jks),
            "ssl.truststore.password": "wrong-" + PASSWORD,
        }
    )  # the driver of a Spark query validates options without reading the store ...
    with pytest.raises(ConfigError) as caught:  # ... the executor's client reads it
        cfg.security()
    assert "ssl.truststore" in str(caught.value)
    assert PASSWORD not in str(caught.value)
