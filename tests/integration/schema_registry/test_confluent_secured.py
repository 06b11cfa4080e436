"""confluent-kafka 2.16's SchemaRegistryClient and AvroSerializer against kafkalog's registry with security on: an
https listener (``ssl.ca.location``) and HTTP basic auth checked against the broker's SCRAM users
(``basic.auth.user.info``, or the user info in the URL), records produced
over SASL/SCRAM and read back; wrong credentials refused with Confluent's 401 answer."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, DeserializingConsumer, SerializingProducer
from confluent_kafka import TopicPartition as CKTP
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.client.admin.admin_scram import UserScramCredentialUpsertion
from tests.security.certs import TlsMaterial
from tests.security.certs import tls_material as _tls_material

pytestmark = pytest.mark.integration

tls_material = pytest.fixture(scope="module")(_tls_material)

ADMIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret";'
)
ADMIN = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.username": "admin",
    "sasl.password": "admin-secret",
}
ALICE_KAFKA = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.username": "alice",
    "sasl.password": "alice-pw",
}
PAYMENT = json.dumps(
    {
        "type": "record",
        "name": "Payment",
        "namespace": "conformance.secured",
        "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}],
    }
)


@pytest.fixture(scope="module")
def secured(tmp_path_factory, tls_material: TlsMaterial) -> Iterator[tuple[EmbeddedBroker, str]]:
    """A SASL broker (PLAIN admin, SCRAM users) with the registry on https and basic auth; user alice created."""
    registry_tls: dict[str, Any] = {
        "schema.registry.ssl.keystore.location": str(tls_material.broker_keystore_p12),
        "schema.registry.ssl.keystore.password": tls_material.password,
        "schema.registry.ssl.key.password": tls_material.password,
    }
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:sr-sec-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("sr-secured"),
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        security_inter_broker_protocol="SASL_PLAINTEXT",
        sasl_enabled_mechanisms="PLAIN,SCRAM-SHA-512",
        sasl_mechanism_inter_broker_protocol="PLAIN",
        sasl_jaas_config=ADMIN_JAAS,
        schema_registry_listeners="https://127.0.0.1:0",
        **registry_tls,
    )
    with broker:
        url = broker.wait_schema_registry().replace("127.0.0.1", "localhost")
        with AdminClient(broker.bootstrap_servers, ADMIN) as admin:
            admin.alter_user_scram_credentials([UserScramCredentialUpsertion("alice", "SCRAM-SHA-512", "alice-pw")])
        probe = SchemaRegistryClient(
            {"url": url, "ssl.ca.location": str(tls_material.ca_pem), "basic.auth.user.info": "alice:alice-pw"}
        )
        deadline = time.monotonic() + 20
        while True:  # the registry learns of a new SCRAM user through ZooKeeper: wait for it
            try:
                probe.get_schema_types()
                break
            except SchemaRegistryError as e:
                assert e.http_status_code == 401 and time.monotonic() < deadline, e
                time.sleep(0.1)
        probe.close()
        yield broker, url


def sr_conf(url: str, tls: TlsMaterial, **extra: Any) -> dict[str, Any]:
    return {"url": url, "ssl.ca.location": str(tls.ca_pem), "max.retries": 0, **extra}


def test_confluents_client_over_https_with_basic_auth(secured, tls_material) -> None:
    _, url = secured
    client = SchemaRegistryClient(sr_conf(url, tls_material, **{"basic.auth.user.info": "alice:alice-pw"}))
    subject = f"pay-{uuid.uuid4().hex[:8]}"
    schema_id = client.register_schema(subject, Schema(PAYMENT, "AVRO"))
    assert client.get_latest_version(subject).schema_id == schema_id

    in_url = url.replace("https://", "https://alice:alice-pw@")
    by_url = SchemaRegistryClient(sr_conf(in_url, tls_material))  # the client takes user info from the URL
    assert by_url.get_versions(subject) == [1]

    for user_info in ("alice:wrong", "nobody:alice-pw"):
        refused = SchemaRegistryClient(sr_conf(url, tls_material, **{"basic.auth.user.info": user_info}))
        with pytest.raises(SchemaRegistryError) as info:
            refused.get_subjects()
        assert (info.value.http_status_code, info.value.error_code) == (401, 401)
        assert "wrong" not in str(info.value) and "alice-pw" not in str(info.value)

    anonymous = SchemaRegistryClient(sr_conf(url, tls_material))
    with pytest.raises(SchemaRegistryError) as info:
        anonymous.get_subjects()
    assert (info.value.http_status_code, info.value.error_code) == (401, 401)


def test_confluents_avro_serde_with_a_secured_registry_and_broker(secured, tls_material) -> None:
    broker, url = secured
    topic = f"pay-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers, ADMIN) as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])
    client = SchemaRegistryClient(sr_conf(url, tls_material, **{"basic.auth.user.info": "alice:alice-pw"}))
    payments = [{"id": "p1", "amount": 12.5}, {"id": "p2", "amount": 0.25}]

    producer = SerializingProducer(
        {"bootstrap.servers": broker.bootstrap_servers, "value.serializer": AvroSerializer(client, PAYMENT)}
        | ALICE_KAFKA
    )
    for p in payments:
        producer.produce(topic, value=p)
    assert producer.flush(20) == 0

    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "value.deserializer": AvroDeserializer(client),
            "enable.auto.commit": False,
        }
        | ALICE_KAFKA
    )
    try:
        consumer.assign([CKTP(topic, 0, OFFSET_BEGINNING)])
        got: list[Any] = []
        for _ in range(200):
            msg = consumer.poll(0.2)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(msg.value())
            if len(got) == len(payments):
                break
    finally:
        consumer.close()
    assert got == payments
    assert client.get_latest_version(f"{topic}-value").version == 1
