"""The 0.8 clients over SASL_SSL (issue 26), against an in-process kafkalog broker registered in the session's
real ZooKeeper: the legacy ``Producer`` sends, the ZooKeeper-coordinated ``ConsumerConnector`` and the
``SimpleConsumer`` read it back, with SCRAM-SHA-512 over TLS; the connector finds the SASL_SSL endpoint in
``/brokers/ids/0`` although the PLAINTEXT listener is registered first; a wrong password fails every client
with ``KafkaAuthenticationError`` within seconds; a protocol the broker has no listener for fails naming it.

The broker's listeners: INTERNAL (PLAINTEXT, first), CLIENT and CLIENT2 (SASL_SSL)."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient
from spark_kafkalog.client.admin import UserScramCredentialUpsertion
from spark_kafkalog.client.errors import KafkaAuthenticationError
from spark_kafkalog.legacy import (
    BrokerEndPointNotAvailableException,
    ConsumerConnector,
    ConsumerTimeoutException,
    FetchRequest,
    Producer,
    ProducerData,
    SimpleConsumer,
)
from tests.security.certs import PASSWORD, TlsMaterial
from tests.security.certs import tls_material as _tls_material

from .embedded import create_topic

tls_material = pytest.fixture(scope="session")(_tls_material)

USER = "legacy-alice"
USER_PASSWORD = "legacy-alice-secret"
WRONG_PASSWORD = "not-the-password-77"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PARTITIONS = 2
N = 20
FAILS_WITHIN_S = 15


@pytest.fixture(scope="module")
def secured(zookeeper, tls_material: TlsMaterial, tmp_path_factory):
    """``(broker, chroot connect string, ports)`` of a broker whose SCRAM user can log in on CLIENT/CLIENT2."""
    m = tls_material
    connect = f"{zookeeper.connect_string}/legacy-sec-{uuid.uuid4().hex[:8]}"
    config: dict[str, Any] = {
        "listeners": "INTERNAL://127.0.0.1:0,CLIENT://127.0.0.1:0,CLIENT2://127.0.0.1:0",
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,CLIENT:SASL_SSL,CLIENT2:SASL_SSL",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "ssl.keystore.location": str(m.broker_keystore_jks),
        "ssl.keystore.password": PASSWORD,
        "ssl.key.password": PASSWORD,
        "num.partitions": "1",
    }
    broker = EmbeddedBroker(
        0, zookeeper_connect=connect, log_dir=tmp_path_factory.mktemp("legacy-secured"), **config
    ).start()
    try:
        assert broker.broker is not None and broker.broker.metadata_sync is not None
        ports = broker.broker.bound_ports
        with AdminClient(f"127.0.0.1:{ports['INTERNAL']}") as admin:
            admin.alter_user_scram_credentials([UserScramCredentialUpsertion(USER, "SCRAM-SHA-512", USER_PASSWORD)])
        cache = broker.broker.metadata_sync.scram_credentials
        deadline = time.monotonic() + 15
        while cache.lookup("SCRAM-SHA-512", USER) is None:
            assert time.monotonic() < deadline, "the SCRAM credential never reached the broker"
            time.sleep(0.05)
        yield broker, connect, ports
    finally:
        broker.stop()


def sasl_ssl(m: TlsMaterial, password: str = USER_PASSWORD) -> dict[str, Any]:
    """Kafka's names: a JAAS line and a JKS truststore."""
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'{SCRAM} required username="{USER}" password="{password}";',
        "ssl.truststore.location": str(m.truststore_jks),
        "ssl.truststore.password": PASSWORD,
    }


def sasl_ssl_librdkafka(m: TlsMaterial, password: str = USER_PASSWORD) -> dict[str, Any]:
    """librdkafka's names: user and password, a PEM CA file."""
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": USER,
        "sasl.password": password,
        "ssl.ca.location": str(m.ca_pem),
    }


def connector(connect: str, **props: Any) -> ConsumerConnector:
    return ConsumerConnector(
        {
            "zookeeper.connect": connect,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "smallest",
            "auto.commit.enable": "false",
            "consumer.timeout.ms": 200,
            "fetch.wait.max.ms": 50,
            "zookeeper.session.timeout.ms": 4000,
            **props,
        }
    )


def read(streams, want: int, limit_s: float = 30) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + limit_s
    while len(got) < want and time.monotonic() < deadline:
        for s in streams:
            try:
                m = next(s)
            except ConsumerTimeoutException:
                continue
            assert m.message is not None
            got.append(m.message)
    return got


def test_the_registration_lists_the_plaintext_listener_first(secured):
    _broker, connect, ports = secured
    zk = KazooClient(hosts=connect)
    zk.start(10)
    try:
        registration = json.loads(zk.get("/brokers/ids/0")[0])
    finally:
        zk.stop()
        zk.close()
    assert registration["endpoints"] == [
        f"INTERNAL://127.0.0.1:{ports['INTERNAL']}",
        f"CLIENT://127.0.0.1:{ports['CLIENT']}",
        f"CLIENT2://127.0.0.1:{ports['CLIENT2']}",
    ]
    assert registration["listener_security_protocol_map"]["CLIENT"] == "SASL_SSL"


def test_producer_sends_and_the_connector_and_simple_consumer_read_back_over_sasl_ssl(secured, tls_material):
    broker, connect, ports = secured
    topic = create_topic([broker], partitions=PARTITIONS)
    sent = {f"v{i}".encode() for i in range(N)}
    with Producer(
        {
            "metadata.broker.list": f"127.0.0.1:{ports['CLIENT']}",
            "request.required.acks": "-1",
            **sasl_ssl(tls_material),
        }
    ) as producer:
        producer.send([ProducerData(topic, b"k%d" % i, [b"v%d" % i]) for i in range(N)])
        producer_client = producer.event_handler.client  # DefaultEventHandler's
        assert producer_client.config.security().protocol == "SASL_SSL"

    c = connector(connect, **sasl_ssl(tls_material))
    try:
        streams = c.create_message_streams({topic: 1})[topic]
        # the SASL_SSL endpoint of /brokers/ids/0, not the PLAINTEXT listener registered before it
        assert c._client is not None and c._fetch_client is not None
        assert c._client.config.bootstrap_servers == (f"127.0.0.1:{ports['CLIENT']}",)
        assert c._client.config.security() is c._fetch_client.config.security()
        got = read(streams, N)
        assert sorted(got) == sorted(sent)
    finally:
        c.shutdown()

    fetched: set[bytes] = set()
    with SimpleConsumer("127.0.0.1", ports["CLIENT"], security=sasl_ssl_librdkafka(tls_material)) as simple:
        for p in range(PARTITIONS):
            for entry in simple.fetch(FetchRequest(topic, p, 0, 1024 * 1024)):
                assert entry.message.value is not None
                fetched.add(entry.message.value)
    assert fetched == sent


def test_listener_name_picks_the_named_listener_and_plaintext_keeps_the_plaintext_one(secured, tls_material):
    broker, connect, ports = secured
    topic = create_topic([broker], partitions=1)
    with Producer({"metadata.broker.list": f"127.0.0.1:{ports['INTERNAL']}"}) as producer:
        producer.send(ProducerData(topic, None, [b"x"]))
    for props, listener in (
        ({**sasl_ssl(tls_material), "listener.name": "client2"}, "CLIENT2"),
        ({}, "INTERNAL"),
    ):
        c = connector(connect, **props)
        try:
            streams = c.create_message_streams({topic: 1})[topic]
            assert c._client is not None
            assert c._client.config.bootstrap_servers == (f"127.0.0.1:{ports[listener]}",)
            assert read(streams, 1) == [b"x"]
        finally:
            c.shutdown()


def test_a_protocol_without_a_listener_fails_naming_the_broker(secured, tls_material):
    _broker, connect, _ports = secured
    props = {"security.protocol": "SSL", "ssl.truststore.location": str(tls_material.truststore_jks),
             "ssl.truststore.password": PASSWORD}  # fmt: skip
    c = connector(connect, **props)
    try:
        with pytest.raises(BrokerEndPointNotAvailableException, match=r"broker 0 has no endpoint for .*SSL") as info:
            c.create_message_streams({"any": 1})
        assert "CLIENT (SASL_SSL)" in str(info.value)
    finally:
        c.shutdown()


@pytest.mark.parametrize("client", ["Producer", "ConsumerConnector", "SimpleConsumer"])
def test_a_wrong_password_fails_quickly_with_an_authentication_error(secured, tls_material, client):
    broker, connect, ports = secured
    started = time.monotonic()
    with pytest.raises(KafkaAuthenticationError) as info:
        if client == "Producer":
            with Producer(
                {"metadata.broker.list": f"127.0.0.1:{ports['CLIENT']}", **sasl_ssl(tls_material, WRONG_PASSWORD)}
            ) as producer:
                producer.send(ProducerData("never-created", None, [b"x"]))
        elif client == "ConsumerConnector":
            c = connector(connect, **sasl_ssl(tls_material, WRONG_PASSWORD))
            try:
                c.create_message_streams({"never-created": 1})
            finally:
                c.shutdown()
        else:
            with SimpleConsumer(
                "127.0.0.1", ports["CLIENT"], security=sasl_ssl_librdkafka(tls_material, WRONG_PASSWORD)
            ) as simple:
                simple.fetch(FetchRequest("never-created", 0, 0))
    assert time.monotonic() - started < FAILS_WITHIN_S
    message = str(info.value)
    assert "SCRAM-SHA-512" in message
    assert WRONG_PASSWORD not in message and USER_PASSWORD not in message
