"""Named listeners and their security keys: Kafka's validation rules, listener-prefixed overrides, secrets."""

import pytest

from broker.config import HIDDEN, BrokerConfig, ConfigError

BASE = {"broker.id": "1", "zookeeper.connect": "localhost:2181"}
KEYSTORE = {"ssl.keystore.location": "/etc/kafka/broker.p12", "ssl.keystore.password": "ks-secret"}
SASL = {"sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN"}


def config(**props: str) -> BrokerConfig:
    return BrokerConfig.from_properties({**BASE, **{k.replace("__", "."): v for k, v in props.items()}})


@pytest.mark.parametrize(
    "props,listeners,inter,protocols",
    [
        ({}, ["PLAINTEXT"], "PLAINTEXT", {"PLAINTEXT": "PLAINTEXT"}),
        (
            {
                "listeners": "CLIENT://:9093,INTERNAL://127.0.0.1:0",
                "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT",
                "inter.broker.listener.name": "INTERNAL",
            },
            ["CLIENT", "INTERNAL"],
            "INTERNAL",
            {"CLIENT": "PLAINTEXT", "INTERNAL": "PLAINTEXT"},
        ),
        (
            {"listeners": "PLAINTEXT://:9092,SSL://:9093", **KEYSTORE},
            ["PLAINTEXT", "SSL"],
            "PLAINTEXT",
            {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
        ),
        (
            {"listeners": "plaintext://:9092,SSL://:9093", "security.inter.broker.protocol": "SSL", **KEYSTORE},
            ["PLAINTEXT", "SSL"],
            "SSL",
            {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
        ),
        (
            {
                "listeners": "EXTERNAL://:9094,REPL://:9095",
                "listener.security.protocol.map": "external:SASL_SSL,REPL:sasl_plaintext",
                "inter.broker.listener.name": "repl",
                **KEYSTORE,
                **SASL,
            },
            ["EXTERNAL", "REPL"],
            "REPL",
            {"EXTERNAL": "SASL_SSL", "REPL": "SASL_PLAINTEXT"},
        ),
    ],
)
def test_valid_listener_sets(props, listeners, inter, protocols):
    cfg = BrokerConfig.from_properties({**BASE, **props})
    assert [lst.name for lst in cfg.listeners] == listeners
    assert cfg.inter_broker_listener_name == inter
    assert {name: cfg.security_protocol(name) for name in listeners} == protocols
    assert cfg.inter_broker_security_protocol == protocols[inter]


@pytest.mark.parametrize(
    "props,fragments",
    [
        ({"listeners": "CLIENT://:9093"}, ["listener CLIENT", "listener.security.protocol.map"]),
        ({"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"}, ["PLAINTEXT", "more than once"]),
        ({"listeners": "PLAINTEXT://h:9092,SSL://h:9092", **KEYSTORE}, ["port 9092"]),
        ({"listener.security.protocol.map": "PLAINTEXT:TLS"}, ["PLAINTEXT:TLS", "PROTOCOL one of"]),
        ({"listener.security.protocol.map": "PLAINTEXT"}, ["'PLAINTEXT'", "NAME:PROTOCOL"]),
        ({"advertised.listeners": "OTHER://h:1"}, ["advertised.listeners", "OTHER", "not in listeners"]),
        (
            {"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
            ["Only one of inter.broker.listener.name and security.inter.broker.protocol"],
        ),
        ({"inter.broker.listener.name": "REPL"}, ["inter-broker listener REPL", "advertised.listeners"]),
        (
            {
                "listeners": "CLIENT://:1,INTERNAL://:2",
                "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT",
            },
            ["inter-broker listener PLAINTEXT (the default)", "advertised.listeners", "CLIENT, INTERNAL"],
        ),
        (
            {
                "listeners": "CLIENT://:1,INTERNAL://:2",
                "advertised.listeners": "CLIENT://h:1",
                "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT",
                "inter.broker.listener.name": "INTERNAL",
            },
            ["inter-broker listener INTERNAL", "advertised.listeners"],
        ),
        ({"security.inter.broker.protocol": "TLS"}, ["security.inter.broker.protocol", "must be one of"]),
        ({"listeners": "SSL://:9093", "security.inter.broker.protocol": "SSL"}, ["listener SSL (SSL): no keystore"]),
        (
            {"listeners": "SASL_SSL://:9093", "security.inter.broker.protocol": "SASL_SSL", **SASL},
            ["listener SASL_SSL (SASL_SSL): no keystore", "listener.name.sasl_ssl.ssl.keystore.location"],
        ),
        (
            {"listeners": "PLAINTEXT://:1,SASL_PLAINTEXT://:2"},
            ["listener SASL_PLAINTEXT", "sasl.enabled.mechanisms is not set", "GSSAPI"],
        ),
        ({"sasl.enabled.mechanisms": "GSSAPI"}, ["sasl.enabled.mechanisms", "must be one of"]),
        (
            {"listeners": "SASL_PLAINTEXT://:2", "security.inter.broker.protocol": "SASL_PLAINTEXT", **SASL}
            | {"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"},
            ["sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512", "inter-broker listener SASL_PLAINTEXT", "PLAIN"],
        ),
        (
            {
                "listeners": "SASL_PLAINTEXT://:2",
                "security.inter.broker.protocol": "SASL_PLAINTEXT",
                "sasl.enabled.mechanisms": "PLAIN",
            },
            ["sasl.mechanism.inter.broker.protocol is not set", "SASL_PLAINTEXT"],
        ),
        (
            {"listeners": "PLAINTEXT://:1,SSL://:2", **KEYSTORE, "listener.name.ssl.ssl.client.auth": "always"},
            ["listener.name.ssl.ssl.client.auth", "must be one of"],
        ),
    ],
)
def test_invalid_listener_sets_name_what_is_wrong(props, fragments):
    with pytest.raises(ConfigError) as e:
        BrokerConfig.from_properties({**BASE, **props})
    for fragment in fragments:
        assert fragment in str(e.value)


def test_listener_prefixed_keys_win_over_plain_ones_for_their_listener_only():
    cfg = BrokerConfig.from_properties(
        {
            **BASE,
            "listeners": "PLAINTEXT://:1,CLIENT://:2,INTERNAL://:3",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:SSL,INTERNAL:SSL",
            **KEYSTORE,
            "ssl.client.auth": "requested",
            "listener.name.internal.ssl.client.auth": "required",
            "listener.name.internal.ssl.keystore.location": "/etc/kafka/internal.jks",
            "sasl.server.max.receive.size": "1000",
            "listener.name.client.sasl.server.max.receive.size": "2000",
        }
    )
    assert cfg.listener_value("CLIENT", "ssl.client.auth") == "requested"
    assert cfg.listener_value("INTERNAL", "ssl.client.auth") == "required"
    assert cfg.listener_value("CLIENT", "sasl.server.max.receive.size") == 2000
    assert cfg.listener_value("INTERNAL", "sasl.server.max.receive.size") == 1000
    internal = cfg.listener_properties("INTERNAL")
    assert internal["ssl.keystore.location"] == "/etc/kafka/internal.jks"
    assert internal["ssl.keystore.password"] == "ks-secret"
    assert cfg.listener_properties("CLIENT")["ssl.keystore.location"] == "/etc/kafka/broker.p12"
    assert not any(k.startswith("listener.name.") for k in internal)
    assert cfg.unknown_keys == ()


def test_ssl_client_auth_counts_on_a_sasl_ssl_listener_only_prefixed():
    props = {
        **BASE,
        "listeners": "SASL_SSL://:1,OTHER://:2",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,OTHER:SASL_SSL",
        "security.inter.broker.protocol": "SASL_SSL",
        **KEYSTORE,
        **SASL,
        "ssl.client.auth": "required",
        "listener.name.other.ssl.client.auth": "requested",
    }
    cfg = BrokerConfig.from_properties(props)
    assert cfg.listener_value("SASL_SSL", "ssl.client.auth") == "none"
    assert "ssl.client.auth" not in cfg.listener_properties("SASL_SSL")
    assert cfg.listener_value("OTHER", "ssl.client.auth") == "requested"
    assert cfg.listener_properties("OTHER")["ssl.client.auth"] == "requested"


def test_jaas_configs_per_listener_and_mechanism_with_the_plain_key_as_fallback():
    plain = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";'
    scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="s" password="t";'
    cfg = BrokerConfig.from_properties(
        {
            **BASE,
            "listeners": "SASL_PLAINTEXT://:1",
            "security.inter.broker.protocol": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": scram,
            "sasl.jaas.config": plain,
        }
    )
    assert cfg.sasl_enabled_mechanisms("SASL_PLAINTEXT") == ("PLAIN", "SCRAM-SHA-256")
    assert cfg.sasl_jaas_config("SASL_PLAINTEXT", "SCRAM-SHA-256") == scram
    assert cfg.sasl_jaas_config("SASL_PLAINTEXT", "PLAIN") == plain
    assert cfg.unknown_keys == ()


def test_secrets_never_show_in_repr_or_the_redacted_view():
    secrets = {
        "ssl.keystore.password": "ks-secret-1",
        "ssl.key.password": "key-secret-2",
        "listener.name.ssl.ssl.truststore.password": "ts-secret-3",
        "listener.name.ssl.plain.sasl.jaas.config": 'x required password="jaas-secret-4";',
        "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----secret-5",
    }
    cfg = BrokerConfig.from_properties(
        {**BASE, "listeners": "PLAINTEXT://:1,SSL://:2", "ssl.keystore.location": "/k", **secrets}
    )
    text = repr(cfg) + str(cfg.redacted())
    for value in secrets.values():
        assert value not in text
    assert cfg.redacted()["ssl.keystore.password"] == HIDDEN
    assert cfg.redacted()["ssl.keystore.location"] == "/k"
