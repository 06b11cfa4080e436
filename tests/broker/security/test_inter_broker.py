"""The client side of inter-broker connections: built from the broker's config of the inter-broker listener."""

import pytest

from broker.cluster.registry import BrokerInfo
from broker.config import BrokerConfig, ConfigError
from broker.security.inter_broker import InterBrokerClient, inter_broker_client_properties
from spark_kafkalog.client.errors import KafkaConnectionError
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)

BASE = {"broker.id": "1", "zookeeper.connect": "localhost:2181"}
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="broker" password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";'
)


def secured(m, **extra):
    return BrokerConfig.from_properties(
        {
            **BASE,
            "listeners": "CLIENT://:0,REPL://:0",
            "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,REPL:SASL_SSL",
            "inter.broker.listener.name": "REPL",
            "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.repl.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.client.plain.sasl.jaas.config": PLAIN_JAAS.replace("broker-secret", "other"),
            "listener.name.repl.ssl.keystore.location": str(m.broker_keystore_p12),
            "listener.name.repl.ssl.keystore.password": m.password,
            "listener.name.repl.ssl.truststore.location": str(m.truststore_jks),
            "listener.name.repl.ssl.truststore.password": m.password,
            **extra,
        }
    )


def test_plaintext_inter_broker_needs_no_security():
    cfg = BrokerConfig.from_properties(BASE)
    assert inter_broker_client_properties(cfg) == {"security.protocol": "PLAINTEXT"}
    client = InterBrokerClient.from_config(cfg)
    assert (client.listener, client.protocol, client.security) == ("PLAINTEXT", "PLAINTEXT", None)


def test_sasl_ssl_inter_broker_takes_the_listeners_stores_and_its_jaas_identity(tls_material):
    m = tls_material
    props = inter_broker_client_properties(secured(m))
    assert props["security.protocol"] == "SASL_SSL" and props["sasl.mechanism"] == "PLAIN"
    assert (props["sasl.username"], props["sasl.password"]) == ("broker", "broker-secret")
    assert props["ssl.truststore.location"] == str(m.truststore_jks)
    assert props["ssl.keystore.location"] == str(m.broker_keystore_p12)
    assert "sasl.jaas.config" not in props  # the server's user_ entries stay on the server side
    client = InterBrokerClient.from_config(secured(m))
    assert client.security.uses_tls and client.security.mechanism == "PLAIN"
    assert "broker-secret" not in repr(client)


def test_the_peer_endpoint_is_its_inter_broker_listener():
    client = InterBrokerClient("REPL")
    info = BrokerInfo(2, "h", 9092, endpoints=("CLIENT://h:9092", "REPL://10.0.0.2:9094"))
    assert client.address(info) == ("10.0.0.2", 9094)
    with pytest.raises(
        KafkaConnectionError, match="broker 3 advertises no endpoint for the inter-broker listener REPL"
    ):
        client.address(BrokerInfo(3, "h", 9092))


def test_an_inter_broker_jaas_without_an_identity_is_named(tls_material):
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
    with pytest.raises(ConfigError) as e:
        inter_broker_client_properties(secured(tls_material, **{"listener.name.repl.plain.sasl.jaas.config": jaas}))
    assert "inter-broker listener REPL" in str(e.value) and "no username and password" in str(e.value)
    assert "alice-secret" not in str(e.value)
