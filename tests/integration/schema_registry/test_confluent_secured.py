"""confluent-kafka 2.16's SchemaRegistryClient and AvroSerializer against kafkalog's registry with security on: an
https listener (``ssl.ca.location``) and HTTP basic auth checked against the broker's SCRAM users
(``basic.auth.user.info``, or the user info in the URL), records produced
over SASL/SCRAM and read back; wrong credentials refused with Confluent's 401 answer."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import SerializingProducer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, NewTopic
from tests.schema_registry_support import ADMIN, confluent_consume, registry_conf, scram_client, secured_registry
from tests.security.certs import TlsMaterial
from tests.security.certs import tls_material as _tls_material

pytestmark = pytest.mark.integration

tls_material = pytest.fixture(scope="module")(_tls_material)

ALICE_KAFKA = scram_client("alice", "alice-pw", "SCRAM-SHA-512")
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
    log_dir = tmp_path_factory.mktemp("sr-secured")
    with secured_registry(
        "sr-sec", log_dir, tls_material, user="alice", password="alice-pw", scram_mechanism="SCRAM-SHA-512"
    ) as (broker, url):
        yield broker, url


def test_confluents_client_over_https_with_basic_auth(secured, tls_material) -> None:
    _, url = secured
    client = SchemaRegistryClient(registry_conf(url, tls_material, **{"basic.auth.user.info": "alice:alice-pw"}))
    subject = f"pay-{uuid.uuid4().hex[:8]}"
    schema_id = client.register_schema(subject, Schema(PAYMENT, "AVRO"))
    assert client.get_latest_version(subject).schema_id == schema_id

    in_url = url.replace("https://", "https://alice:alice-pw@")
    by_url = SchemaRegistryClient(registry_conf(in_url, tls_material))  # the client takes user info from the URL
    assert by_url.get_versions(subject) == [1]

    for user_info in ("alice:wrong", "nobody:alice-pw"):
        refused = SchemaRegistryClient(registry_conf(url, tls_material, **{"basic.auth.user.info": user_info}))
        with pytest.raises(SchemaRegistryError) as info:
            refused.get_subjects()
        assert (info.value.http_status_code, info.value.error_code) == (401, 401)
        assert "wrong" not in str(info.value) and "alice-pw" not in str(info.value)

    anonymous = SchemaRegistryClient(registry_conf(url, tls_material))
    with pytest.raises(SchemaRegistryError) as info:
        anonymous.get_subjects()
    assert (info.value.http_status_code, info.value.error_code) == (401, 401)


def test_confluents_avro_serde_with_a_secured_registry_and_broker(secured, tls_material) -> None:
    broker, url = secured
    topic = f"pay-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers, ADMIN) as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])
    client = SchemaRegistryClient(registry_conf(url, tls_material, **{"basic.auth.user.info": "alice:alice-pw"}))
    payments = [{"id": "p1", "amount": 12.5}, {"id": "p2", "amount": 0.25}]

    producer = SerializingProducer(
        {"bootstrap.servers": broker.bootstrap_servers, "value.serializer": AvroSerializer(client, PAYMENT)}
        | ALICE_KAFKA
    )
    for p in payments:
        producer.produce(topic, value=p)
    assert producer.flush(20) == 0

    got = confluent_consume(broker.bootstrap_servers, topic, AvroDeserializer(client), len(payments), ALICE_KAFKA)
    assert got == payments
    assert client.get_latest_version(f"{topic}-value").version == 1
