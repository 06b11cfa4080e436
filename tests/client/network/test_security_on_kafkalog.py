"""kafkalog's client against a secured kafkalog broker (in process): SASL_SSL with KIP-368 sessions of 1.5 s,
SASL_PLAINTEXT, SSL requiring a client certificate; errors for wrong passwords and refused certificates."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.errors import KafkaAuthenticationError, KafkaSslError
from tests.security.certs import PASSWORD, TlsMaterial, build_tls_material

pytestmark = pytest.mark.integration

REAUTH_MS = 1500
USER, USER_PASSWORD = "alice", "alice-secret"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="admin" password="admin-secret" user_{USER}="{USER_PASSWORD}";'
)


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def secured(tls, tmp_path_factory):
    config: dict[str, Any] = {
        "listeners": "SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,MTLS://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,MTLS:SSL,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.connections.max.reauth.ms": str(REAUTH_MS),
        "ssl.keystore.location": str(tls.broker_keystore_p12),
        "ssl.keystore.password": PASSWORD,
        "ssl.keystore.type": "PKCS12",
        "ssl.truststore.location": str(tls.truststore_jks),
        "ssl.truststore.password": PASSWORD,
        "listener.name.mtls.ssl.client.auth": "required",
        "auto.create.topics.enable": "true",
        "num.partitions": "1",
    }
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:client-sec-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b"), **config
    ).start()
    assert broker.broker is not None
    try:
        yield broker.broker.bound_ports
    finally:
        broker.stop()


def sasl_ssl(ports, tls, password: str = USER_PASSWORD) -> dict[str, str]:
    return {
        "bootstrap.servers": f"localhost:{ports['SASL_SSL']}",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{USER}" password="{password}";'
        ),
        "ssl.truststore.location": str(tls.truststore_p12),
        "ssl.truststore.password": PASSWORD,
    }


def test_produce_consume_admin_over_sasl_ssl_across_reauthentications(secured, tls):
    config = sasl_ssl(secured, tls)
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    with AdminClient(config) as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])
    with KafkaClient(config) as client:
        client.refresh_metadata_once([topic])
        conn = client._pool.live()[0]
        assert conn.protocol.session_lifetime_ms == REAUTH_MS
        end = time.monotonic() + 2.5 * REAUTH_MS / 1000
        while time.monotonic() < end:
            client.refresh_metadata_once([topic])
            time.sleep(0.05)
        assert not conn.closed and conn.protocol.reauthentications >= 2
    sent = 0
    with Producer(config, linger_ms=0) as producer:
        end = time.monotonic() + 2 * REAUTH_MS / 1000
        while time.monotonic() < end:
            producer.send(topic, b"r-%d" % sent).result(30)
            sent += 1
    with Consumer(config, auto_offset_reset="earliest", fetch_max_wait_ms=100) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        records: list = []
        deadline = time.monotonic() + 30
        while len(records) < sent and time.monotonic() < deadline:
            records.extend(consumer.poll(300))
    assert [r.value for r in records] == [b"r-%d" % i for i in range(sent)]


def test_sasl_plaintext_with_librdkafka_names(secured):
    config = {
        "bootstrap.servers": f"127.0.0.1:{secured['SASL_PLAINTEXT']}",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": USER,
        "sasl.password": USER_PASSWORD,
    }
    topic = f"plain-{uuid.uuid4().hex[:8]}"
    with Producer(config) as producer:
        producer.send(topic, b"hello").result(30)
    with Consumer(config, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        records: list = []
        deadline = time.monotonic() + 30
        while not records and time.monotonic() < deadline:
            records.extend(consumer.poll(300))
    assert [r.value for r in records] == [b"hello"]


def test_a_wrong_password_fails_at_once_naming_broker_and_mechanism(secured, tls):
    config = sasl_ssl(secured, tls, "wrong-password")
    started = time.monotonic()
    with pytest.raises(KafkaAuthenticationError) as caught:
        with KafkaClient(config) as client:
            client.refresh_metadata(None)
    assert time.monotonic() - started < 5
    assert caught.value.error_code == 58 and caught.value.mechanism == "PLAIN"
    assert f"localhost:{secured['SASL_SSL']}" in str(caught.value)
    assert "wrong-password" not in str(caught.value)


def test_ssl_client_certificate_required(secured, tls):
    base = {
        "bootstrap.servers": f"localhost:{secured['MTLS']}",
        "security.protocol": "SSL",
        "ssl.ca.location": str(tls.ca_pem),
    }
    with_cert = {**base, "ssl.keystore.location": str(tls.client_keystore_p12), "ssl.keystore.password": PASSWORD}
    with KafkaClient(with_cert) as client:
        client.refresh_metadata(None)
        assert client.broker_address(0) is not None
    with pytest.raises(KafkaSslError):
        with KafkaClient(base, default_api_timeout_ms=10000) as client:
            client.refresh_metadata(None)
