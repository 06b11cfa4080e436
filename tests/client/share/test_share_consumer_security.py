"""kafkalog's ShareConsumer over SASL_SSL (PLAIN) to an in-process kafkalog broker: the security settings are the
Consumer's; heartbeats, ShareFetch and ShareAcknowledge all go through the secured listener (re-authenticating every
1.5 s, KIP-368), and a wrong password is the client's authentication error."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AcknowledgeType, ShareConsumer
from spark_kafkalog.client.errors import KafkaAuthenticationError
from tests.security.certs import PASSWORD, TlsMaterial, build_tls_material
from tests.share_scenarios import share_group, topic_maker
from tests.waiting import stays_true

from . import scenarios

USER, USER_PASSWORD = "alice", "alice-secret"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="admin" password="admin-secret" user_{USER}="{USER_PASSWORD}";'
)


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def ports(tls, tmp_path_factory):
    config: dict[str, Any] = {
        "listeners": "SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.connections.max.reauth.ms": "1500",
        "ssl.keystore.location": str(tls.broker_keystore_p12),
        "ssl.keystore.password": PASSWORD,
        "ssl.keystore.type": "PKCS12",
        "ssl.truststore.location": str(tls.truststore_jks),
        "ssl.truststore.password": PASSWORD,
        "offsets.topic.num.partitions": "2",
        "share.coordinator.state.topic.num.partitions": "2",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
    }
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:share-sec-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b"), **config
    ).start()
    assert broker.broker is not None
    try:
        yield broker.broker.bound_ports
    finally:
        broker.stop()


def sasl_ssl(ports, tls, password: str = USER_PASSWORD) -> dict[str, Any]:
    return {
        "bootstrap.servers": f"localhost:{ports['SASL_SSL']}",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{USER}" password="{password}";'
        ),
        "ssl.truststore.location": str(tls.truststore_p12),
        "ssl.truststore.password": PASSWORD,
        "request.timeout.ms": 10000,
    }


def test_a_share_consumer_reads_and_acknowledges_over_sasl_ssl_across_reauthentications(ports, tls):
    internal = f"127.0.0.1:{ports['INTERNAL']}"
    topic = topic_maker(internal)(1)
    group = share_group(internal)
    scenarios.produce(internal, topic, [b"a", b"b"])
    with ShareConsumer(sasl_ssl(ports, tls), group, acknowledgement_mode="explicit") as consumer:
        consumer.subscribe([topic])
        first = scenarios.poll_until(consumer, 2)
        assert [(r.value, r.delivery_count) for r in first] == [(b"a", 1), (b"b", 1)]
        scenarios.acknowledge(consumer, first, AcknowledgeType.RELEASE)
        stays_true(lambda: consumer._member.in_group, 2.0, "the member stays in the group over a reauthentication")
        second = scenarios.poll_until(consumer, 2)
        assert [r.delivery_count for r in second] == [2, 2]
        scenarios.acknowledge(consumer, second, AcknowledgeType.ACCEPT)


def test_a_wrong_password_is_an_authentication_error(ports, tls):
    with ShareConsumer(sasl_ssl(ports, tls, password="wrong"), "g-" + uuid.uuid4().hex[:6]) as consumer:
        consumer.subscribe(["anything"])
        with pytest.raises(KafkaAuthenticationError):
            consumer.poll(5000)
