"""ClientConfig's security settings: protocols, Kafka's/librdkafka's/Spark's names, policy for unknown keys,
secrets kept out of repr, pickling and errors, and ``security()`` built once per config."""

from __future__ import annotations

import pickle
import warnings

import pytest

from spark_kafkalog.client import ClientConfig, ConfigError
from spark_kafkalog.client.network import security as security_module
from spark_kafkalog.client.network.security import ClientSecurity

SECRET = "pa55-w0rd-secret"
SCRAM_JAAS = f'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="{SECRET}";'
PLAIN_JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="{SECRET}";'


@pytest.mark.parametrize(
    ("given", "expected"),
    [("PLAINTEXT", "PLAINTEXT"), ("ssl", "SSL"), ("Sasl_Plaintext", "SASL_PLAINTEXT"), (" SASL_SSL ", "SASL_SSL")],
)
def test_security_protocol_is_case_insensitive(given, expected):
    props = {"security.protocol": given}
    if "SASL" in expected:
        props.update({"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_JAAS})
    assert ClientConfig.create(props).security_protocol == expected


@pytest.mark.parametrize(
    "props",
    [
        # Java / Kafka names
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": SCRAM_JAAS,
            "ssl.truststore.location": "/etc/kafka/truststore.jks",
            "ssl.truststore.password": SECRET,
            "ssl.truststore.type": "JKS",
            "ssl.keystore.location": "/etc/kafka/keystore.p12",
            "ssl.keystore.password": SECRET,
            "ssl.key.password": SECRET,
            "ssl.endpoint.identification.algorithm": "",
            "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
        },
        # librdkafka / confluent-kafka names
        {
            "security.protocol": "sasl_ssl",
            "sasl.mechanisms": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": SECRET,
            "ssl.ca.location": "/etc/ssl/ca.pem",
            "ssl.certificate.location": "/etc/ssl/client.pem",
            "ssl.key.location": "/etc/ssl/client.key",
            "ssl.key.password": SECRET,
            "enable.ssl.certificate.verification": "true",
        },
        # python keyword spelling of the same names
        {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_jaas_config": PLAIN_JAAS},
    ],
    ids=["kafka", "librdkafka", "keywords"],
)
def test_tls_and_sasl_settings_are_kept_under_their_dotted_names(props):
    cfg = ClientConfig.create(props)
    kept = cfg.security_config()
    for key, value in props.items():
        name = key.replace("_", ".")
        if name == "security.protocol":
            assert kept[name] == str(value).strip().upper()
        else:
            assert kept[name] == value
    assert set(cfg.to_kafka_properties()) >= {k.replace("_", ".") for k in props}


def test_spark_options_with_the_kafka_prefix_stripped_are_client_settings():
    spark_options = {
        "kafka.bootstrap.servers": "b:9093",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": SCRAM_JAAS,
        "kafka.ssl.truststore.location": "truststore.jks",
        "kafka.ssl.truststore.password": SECRET,
    }
    cfg = ClientConfig.from_kafka_properties({k[len("kafka.") :]: v for k, v in spark_options.items()})
    assert cfg.security_protocol == "SASL_SSL"
    assert cfg.security_config()["ssl.truststore.location"] == "truststore.jks"


def test_an_unknown_tls_setting_is_an_error_with_the_closest_name():
    with pytest.raises(
        ConfigError, match=r"unknown client setting 'ssl.truststore.pasword' \(did you mean 'ssl.truststore.password'"
    ):
        ClientConfig.create({"ssl.truststore.pasword": "x"})


def test_jvm_only_security_settings_warn():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ClientConfig.create({"ssl.trustmanager.algorithm": "PKIX", "sasl.login.refresh.window.factor": "0.8"})
    texts = " ".join(str(w.message) for w in caught)
    assert "'ssl.trustmanager.algorithm' is ignored" in texts
    assert "'sasl.login.refresh.window.factor' is ignored" in texts


def test_sasl_protocol_without_credentials_fails_when_the_config_is_built():
    with pytest.raises(ConfigError, match="sasl.mechanism=SCRAM-SHA-512 needs a username and a password"):
        ClientConfig.create({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512"})


def test_a_refused_login_module_fails_without_showing_the_password():
    jaas = f'com.sun.security.auth.module.JndiLoginModule required user.provider.url="ldap://x" password="{SECRET}";'
    with pytest.raises(ConfigError) as caught:
        ClientConfig.create(
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas}
        )
    assert "JndiLoginModule" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_repr_and_pickle_never_show_secrets_and_do_not_carry_the_built_security():
    cfg = ClientConfig.create(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": SECRET,
            "ssl.truststore.password": SECRET,
        }
    )
    assert SECRET not in repr(cfg) and SECRET not in str(cfg)
    security = cfg.security()
    assert SECRET not in repr(security)
    assert "mechanism='PLAIN'" in repr(security)
    copy = pickle.loads(pickle.dumps(cfg))
    assert copy == cfg
    assert copy._security_cell == []
    assert copy.security().mechanism == "PLAIN"


def test_security_is_built_once_for_a_config_and_its_derived_copies(monkeypatch):
    calls = []
    real = ClientSecurity.from_config.__func__  # type: ignore[attr-defined]

    def counting(cls, config):
        calls.append(dict(config))
        return real(cls, config)

    monkeypatch.setattr(security_module.ClientSecurity, "from_config", classmethod(counting))
    cfg = ClientConfig.create(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_JAAS}
    )
    derived = cfg.with_overrides(client_id="etl")  # as a Producer's KafkaClient derives its config
    first = cfg.security()
    assert cfg.security() is first
    assert derived.security() is first
    assert ClientConfig.create(cfg).security() is first
    assert len(calls) == 1
    other = cfg.with_overrides(sasl_username="bob", sasl_password="x", sasl_jaas_config=None)
    assert other.security() is not first
    assert len(calls) == 2


def test_plaintext_security_reads_nothing():
    security = ClientConfig.create().security()
    assert security == ClientSecurity()
    assert (security.protocol, security.ssl_context, security.sasl) == ("PLAINTEXT", None, None)
