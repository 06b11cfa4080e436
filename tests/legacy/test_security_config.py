"""The 0.8 clients' security settings (issue 26): the keys ``ProducerConfig``, ``ConsumerConfig`` and
``SimpleConsumer`` accept, what their ``repr`` hides, and which endpoint of ``/brokers/ids/<id>`` the
ZooKeeper consumer picks for a security protocol. Pure: no broker, no ZooKeeper."""

from __future__ import annotations

from typing import Any

import pytest

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.network.security import IGNORED_SECURITY_KEYS, SASL_KEYS, SSL_KEYS
from spark_kafkalog.legacy import SECURITY_KEYS, BrokerEndPointNotAvailableException, ConsumerConfig, ProducerConfig
from spark_kafkalog.legacy.broker_endpoints import select_endpoint
from spark_kafkalog.legacy.simple_consumer import SimpleConsumer

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
SECRET = "Zq9-not-shown-Zq9"

PRODUCER_BASE = {"metadata.broker.list": "localhost:9092"}
CONSUMER_BASE = {"zookeeper.connect": "localhost:2181", "group.id": "g"}


def producer_of(props: dict[str, Any]) -> ProducerConfig:
    return ProducerConfig({**PRODUCER_BASE, **props})


def consumer_of(props: dict[str, Any]) -> ConsumerConfig:
    return ConsumerConfig({**CONSUMER_BASE, **props})


CONFIGS = {"ProducerConfig": producer_of, "ConsumerConfig": consumer_of}


def test_the_accepted_keys_are_the_modern_clients():
    assert SECURITY_KEYS == {"security.protocol"} | SSL_KEYS | SASL_KEYS | IGNORED_SECURITY_KEYS


# -- accepted settings: (props, protocol, mechanism) ---------------------------------------------------------------
ACCEPTED = [
    ({}, "PLAINTEXT", None),
    ({"security.protocol": "plaintext"}, "PLAINTEXT", None),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/x/ts.jks", "ssl.truststore.password": SECRET}, "SSL", None),
    ({"security.protocol": "ssl", "ssl.ca.location": "/x/ca.pem", "ssl.endpoint.identification.algorithm": ""}, "SSL", None),
    (
        {"security.protocol": "SSL", "ssl.keystore.location": "/x/k.p12", "ssl.keystore.password": SECRET,
         "ssl.key.password": SECRET, "ssl.keystore.type": "PKCS12"},
        "SSL", None,
    ),
    (
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
         "sasl.jaas.config": f'{PLAIN} required username="alice" password="{SECRET}";'},
        "SASL_PLAINTEXT", "PLAIN",
    ),
    (
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": "alice",
         "sasl.password": SECRET},
        "SASL_PLAINTEXT", "SCRAM-SHA-256",
    ),
    (
        {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "ssl.ca.location": "/x/ca.pem",
         "sasl.jaas.config": f'{SCRAM} required username="alice" password="{SECRET}";'},
        "SASL_SSL", "SCRAM-SHA-512",
    ),
]  # fmt: skip


@pytest.mark.parametrize("which", CONFIGS)
@pytest.mark.parametrize(("props", "protocol", "mechanism"), ACCEPTED)
def test_security_settings_are_accepted(which, props, protocol, mechanism):
    cfg = CONFIGS[which](props)
    assert cfg.security_settings.protocol == protocol
    assert cfg.security_settings.keys == frozenset(props)
    client = cfg.client_config({"bootstrap.servers": "h:1"}) if which == "ConsumerConfig" else cfg.client_config()
    assert client.security_protocol == protocol
    assert client.security_config() == {
        "security.protocol": protocol,
        **{k: v for k, v in props.items() if k != "security.protocol"},
    }
    if protocol == "SASL_PLAINTEXT":  # no store to read: the ClientSecurity can be built here
        assert client.security().mechanism == mechanism


@pytest.mark.parametrize(
    "kwargs",
    [
        {
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_username": "u",
            "sasl_password": SECRET,
        },
        {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "OAUTHBEARER", "oauth_cb": lambda _cfg: ("t", 1e12)},
    ],
    ids=["underscores", "oauth_cb"],
)
@pytest.mark.parametrize("which", ["ProducerConfig", "ConsumerConfig"])
def test_keyword_spellings(which, kwargs):
    base = PRODUCER_BASE if which == "ProducerConfig" else CONSUMER_BASE
    cls = ProducerConfig if which == "ProducerConfig" else ConsumerConfig
    cfg = cls(base, **kwargs)
    assert cfg.security_settings.protocol == "SASL_PLAINTEXT"
    assert "oauth.cb" not in cfg.security_settings.keys
    assert {k if k == "oauth_cb" else k.replace("_", ".") for k in kwargs} == cfg.security_settings.keys


# -- refused settings: (props, words the ConfigError names) ---------------------------------------------------------
REFUSED = [
    ({"security.protocol": "TLS"}, ["security.protocol", "SASL_SSL"]),
    ({"security.protocol": "SASL_SSL", "ssl.ca.location": "/x"}, ["sasl.mechanism"]),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, ["PLAIN", "sasl.password"]),
    (
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
         "sasl.jaas.config": f'com.sun.security.auth.module.JndiLoginModule required password="{SECRET}";'},
        ["JndiLoginModule"],
    ),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.username": "u", "sasl.password": SECRET},
     ["GSSAPI"]),
    ({"ssl.truststore.passwd": SECRET}, ["ssl.truststore.passwd"]),
]  # fmt: skip


@pytest.mark.parametrize("which", CONFIGS)
@pytest.mark.parametrize(("props", "named"), REFUSED)
def test_bad_security_settings_fail_naming_the_setting_never_the_secret(which, props, named):
    with pytest.raises(ConfigError) as info:
        CONFIGS[which](props)
    for word in named:
        assert word in str(info.value)
    assert SECRET not in str(info.value)


def test_a_security_key_given_twice_differently_fails_without_the_values():
    with pytest.raises(ConfigError, match="sasl.password") as info:
        ProducerConfig(PRODUCER_BASE | {"sasl.password": SECRET}, sasl_password=SECRET + "x")
    assert SECRET not in str(info.value)


# -- repr: (key, secret value) that must not show -------------------------------------------------------------------
SECRET_SETTINGS = [
    ("sasl.jaas.config", f'{SCRAM} required username="alice" password="{SECRET}";'),
    ("sasl.password", SECRET),
    ("ssl.keystore.password", SECRET),
    ("ssl.key.password", SECRET),
    ("ssl.truststore.password", SECRET),
    ("ssl.keystore.key", f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{SECRET}\n-----END ENCRYPTED PRIVATE KEY-----"),
    ("ssl.key.pem", f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n-----END PRIVATE KEY-----"),
    ("sasl.oauthbearer.client.secret", SECRET),
]


@pytest.mark.parametrize("which", CONFIGS)
@pytest.mark.parametrize(("key", "value"), SECRET_SETTINGS)
def test_repr_hides_secrets(which, key, value):
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
             "sasl.password": "other", "ssl.truststore.location": "/x/ts.jks", key: value}  # fmt: skip
    text = repr(CONFIGS[which](props))
    assert SECRET not in text
    assert shows(text, key, "<hidden>")
    # what helps debugging stays visible
    for name, shown in (("security.protocol", "SASL_SSL"), ("sasl.mechanism", "SCRAM-SHA-512"),
                        ("sasl.username", "alice"), ("ssl.truststore.location", "/x/ts.jks")):  # fmt: skip
        assert shows(text, name, shown)


def shows(text: str, key: str, value: str) -> bool:
    """ProducerConfig's repr spells ``key='value'``, ConsumerConfig's ``'key': 'value'``."""
    return f"{key}={value!r}" in text or f"{key!r}: {value!r}" in text


def test_the_built_security_is_shared_by_every_client_config_of_a_legacy_config():
    cfg = producer_of({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u",
                       "sasl.password": SECRET})  # fmt: skip
    assert cfg.client_config().security() is cfg.client_config().security()
    c = consumer_of({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u",
                     "sasl.password": SECRET})  # fmt: skip
    a = c.client_config({"bootstrap.servers": "h:1"})
    b = c.client_config({"bootstrap.servers": "h:1", "default.api.timeout.ms": 10000})
    assert a.security() is b.security()
    assert SECRET not in repr(a.security())


def test_consumer_listener_name_and_unknown_keys():
    assert consumer_of({"listener.name": "CLIENT"}).listener_name == "CLIENT"
    assert consumer_of({}).listener_name is None
    with pytest.raises(ConfigError, match="'ssl.truststore.locaton'"):
        consumer_of({"ssl.truststore.locaton": "/x"})


def test_simple_consumer_takes_security_settings_as_a_mapping():
    props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u",
             "sasl.password": SECRET}  # fmt: skip
    c = SimpleConsumer("localhost", 9092, security=props)
    security = c._security()
    assert security.protocol == "SASL_PLAINTEXT" and security.mechanism == "PLAIN"
    assert c._security() is security
    with pytest.raises(ConfigError, match="'group.id'"):
        SimpleConsumer("localhost", 9092, security={**props, "group.id": "g"})
    with pytest.raises(ConfigError, match="security.protocol"):
        SimpleConsumer("localhost", 9092, security={"security.protocol": "SASL"})


# -- endpoint selection: (registration, protocol, listener.name, expected "host:port" or error words) ---------------
V5 = {
    "version": 5,
    "host": "10.0.0.1",
    "port": 9092,
    "endpoints": [
        "INTERNAL://10.0.0.1:9092",
        "CLIENT://pub.example:9093",
        "CLIENT2://pub.example:9094",
        "MTLS://pub.example:9095",
    ],
    "listener_security_protocol_map": {
        "INTERNAL": "PLAINTEXT",
        "CLIENT": "SASL_SSL",
        "CLIENT2": "SASL_SSL",
        "MTLS": "SSL",
    },
}
V5_SECURED_ONLY = {
    "version": 5,
    "host": None,
    "port": -1,
    "endpoints": ["CLIENT://h:9093"],
    "listener_security_protocol_map": {"CLIENT": "SASL_SSL"},
}
V2 = {"version": 2, "host": "h", "port": 9092, "endpoints": ["PLAINTEXT://h:9092", "SSL://h:9093"]}
V1 = {"version": 1, "host": "h", "port": 9092}

SELECTIONS = [
    (V5, "PLAINTEXT", None, "10.0.0.1:9092"),
    (V5, "SASL_SSL", None, "pub.example:9093"),  # the first SASL_SSL listener
    (V5, "sasl_ssl", None, "pub.example:9093"),
    (V5, "SASL_SSL", "CLIENT2", "pub.example:9094"),
    (V5, "SASL_SSL", "client2", "pub.example:9094"),
    (V5, "SSL", None, "pub.example:9095"),
    (V5, "SASL_PLAINTEXT", None, ["broker 7", "SASL_PLAINTEXT", "INTERNAL (PLAINTEXT)", "CLIENT (SASL_SSL)"]),
    (V5, "SSL", "CLIENT", ["broker 7", "CLIENT", "SASL_SSL", "not security.protocol SSL"]),
    (V5, "SASL_SSL", "EXTERNAL", ["broker 7", "EXTERNAL", "listener.name"]),
    (V5_SECURED_ONLY, "SASL_SSL", None, "h:9093"),
    (V5_SECURED_ONLY, "PLAINTEXT", None, ["broker 7", "PLAINTEXT", "CLIENT (SASL_SSL)"]),  # never endpoints[0]
    (V2, "PLAINTEXT", None, "h:9092"),
    (V2, "SSL", None, "h:9093"),  # versions 2-3: the listener's name is its protocol
    (V1, "PLAINTEXT", None, "h:9092"),
    (V1, "SSL", None, ["broker 7", "SSL", "none but host/port"]),
]  # fmt: skip


@pytest.mark.parametrize(("registration", "protocol", "listener", "expected"), SELECTIONS)
def test_select_endpoint(registration, protocol, listener, expected):
    if isinstance(expected, str):
        assert select_endpoint(7, registration, protocol, listener) == expected
        return
    with pytest.raises(BrokerEndPointNotAvailableException) as info:
        select_endpoint(7, registration, protocol, listener)
    for word in expected:
        assert word in str(info.value)
    assert not info.value.retriable


@pytest.mark.parametrize(
    "registration",
    [
        {"version": 5, "endpoints": ["CLIENT:/h:1"], "listener_security_protocol_map": {"CLIENT": "SSL"}},
        {"version": 5, "endpoints": ["CLIENT://h:1"], "listener_security_protocol_map": ["CLIENT"]},
        {"version": 1, "port": 9092},
    ],
)
def test_a_malformed_registration_is_a_value_error(registration):
    with pytest.raises(ValueError, match="broker 7"):
        select_endpoint(7, registration, "SSL")
