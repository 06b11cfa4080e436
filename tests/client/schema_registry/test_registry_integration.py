"""SchemaRegistryClient and the serializers against kafkalog's own registry (an EmbeddedBroker with
``schema_registry_listeners``), and records crossing the broker between our Producer/Consumer with our
serializers and confluent-kafka's producer/consumer with its serializers, both ways, in the three formats."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING
from confluent_kafka import Consumer as TheirConsumer
from confluent_kafka import Producer as TheirProducer
from confluent_kafka import TopicPartition as TheirTopicPartition
from confluent_kafka import schema_registry as confluent
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirAvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as TheirJSONDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as TheirJSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as TheirProtobufDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as TheirProtobufSerializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.schema_registry import (
    AvroDeserializer,
    AvroSerializer,
    JSONSchemaDeserializer,
    JSONSchemaSerializer,
    ProtobufDeserializer,
    ProtobufSerializer,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from spark_kafkalog.schemas.avro import AvroSchema
from tests import schema_registry_support as support
from tests.client.schema_registry import messages

pytestmark = pytest.mark.integration

ADDR = '{"type":"record","name":"Addr","namespace":"ex","fields":[{"name":"city","type":"string"}]}'
USER = '{"type":"record","name":"User","namespace":"ex","fields":[{"name":"id","type":"long"},{"name":"addr","type":"ex.Addr"}]}'
AVRO = '{"type":"record","name":"Order","namespace":"ex","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}'
JSON_SCHEMA = '{"title":"Order","type":"object","properties":{"id":{"type":"integer"},"item":{"type":"string"}},"required":["id"]}'


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> Iterator[EmbeddedBroker]:
    with support.registry_broker("client-sr", tmp_path_factory.mktemp("client-sr")) as server:
        yield server


@pytest.fixture(scope="module")
def registry_url(broker: EmbeddedBroker) -> str:
    return support.registry_url(broker)


@pytest.fixture
def client(registry_url: str) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient(registry_url) as registry:
        yield registry


def unique(stem: str) -> str:
    return f"{stem}-{uuid.uuid4().hex[:8]}"


def test_register_get_lookup_and_versions_with_an_avro_reference(client):
    addr, user = unique("addr"), unique("user")
    addr_id = client.register_schema(addr, Schema(ADDR))
    reference = SchemaReference("ex.Addr", addr, 1)
    user_id = client.register_schema(user, Schema(USER, "AVRO", [reference]))
    assert user_id != addr_id
    assert client.register_schema(user, Schema(USER, "AVRO", [reference])) == user_id
    fetched = client.get_schema(user_id)
    assert fetched.references == (reference,) and fetched.schema_type == "AVRO"
    parsed = client.parsed(user_id)
    assert isinstance(parsed, AvroSchema) and parsed.name == "ex.User"
    found = client.lookup_schema(user, Schema(USER, "AVRO", [reference]))
    assert (found.schema_id, found.version, found.subject) == (user_id, 1, user)
    assert {addr, user} <= set(client.get_subjects())
    assert client.get_versions(user) == [1]
    latest = client.get_latest_version(user)
    assert (latest.schema_id, latest.version, latest.subject) == (user_id, 1, user)
    assert client.get_version(user, 1).schema_id == user_id


def test_compatibility_refuses_an_incompatible_version_with_409_and_accepts_a_compatible_one(client):
    subject = unique("compat")
    client.register_schema(subject, Schema(AVRO))
    assert client.set_compatibility(subject, "BACKWARD") == "BACKWARD"
    assert client.get_compatibility(subject) == "BACKWARD"
    missing_default = AVRO.replace("]}", ',{"name":"qty","type":"int"}]}')
    with_default = AVRO.replace("]}", ',{"name":"qty","type":"int","default":1}]}')
    assert client.test_compatibility(subject, Schema(missing_default)) is False
    ok, messages_ = client.compatibility_messages(subject, Schema(missing_default))
    assert not ok and any("READER_FIELD_MISSING_DEFAULT_VALUE" in m for m in messages_)
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, Schema(missing_default))
    assert (refused.value.http_status, refused.value.error_code) == (409, 409)
    assert client.test_compatibility(subject, Schema(with_default)) is True
    assert client.register_schema(subject, Schema(with_default)) > 0
    assert client.get_versions(subject) == [1, 2]


def test_soft_then_hard_deletes_and_the_errors_of_what_is_gone(client):
    subject = unique("deleted")
    client.register_schema(subject, Schema(AVRO))
    client.get_latest_version(subject)
    with pytest.raises(SchemaRegistryError) as not_soft_deleted:
        client.delete_subject(subject, permanent=True)
    assert not_soft_deleted.value.error_code == 40405
    assert client.delete_subject(subject) == [1]
    with pytest.raises(SchemaRegistryError) as gone:
        client.get_latest_version(subject)  # the client forgot its cached latest version
    assert gone.value.error_code == 40401
    assert subject in client.get_subjects(deleted=True)
    assert client.delete_subject(subject, permanent=True) == [1]
    assert subject not in client.get_subjects(deleted=True)


def test_modes_per_subject(client):
    subject = unique("mode")
    assert client.get_mode() == "READWRITE"
    assert client.set_mode("READONLY", subject) == "READONLY"
    assert client.get_mode(subject) == "READONLY"
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(subject, Schema(AVRO))
    assert refused.value.error_code == 42205
    assert client.delete_mode(subject) == "READONLY"
    assert client.register_schema(subject, Schema(AVRO)) > 0


def test_an_unknown_schema_id_is_40403(client):
    with pytest.raises(SchemaRegistryError) as error:
        client.get_schema(999_999)
    assert (error.value.http_status, error.value.error_code) == (404, 40403)


# --- records across the broker ------------------------------------------------------------------------


def _order_message() -> tuple[type, Any]:
    user_class, _, _ = messages.build()
    user = user_class(id=9)
    user.addr.city = "Lyon"
    return user_class, user


def _formats(ours: SchemaRegistryClient, theirs: Any) -> dict[str, tuple[Any, Any, Any, Any, Any]]:
    """format -> (value, our serializer, our deserializer, their serializer, their deserializer)."""
    user_class, user = _order_message()
    deprecated = {"use.deprecated.format": False}
    return {
        "avro": (
            {"id": 1, "item": "book"},
            AvroSerializer(ours, AVRO),
            AvroDeserializer(ours),
            TheirAvroSerializer(theirs, AVRO),
            TheirAvroDeserializer(theirs),
        ),
        "json": (
            {"id": 2, "item": "pen"},
            JSONSchemaSerializer(JSON_SCHEMA, ours),
            JSONSchemaDeserializer(registry=ours),
            TheirJSONSerializer(JSON_SCHEMA, theirs),
            TheirJSONDeserializer(None, schema_registry_client=theirs),
        ),
        "protobuf": (
            user,
            ProtobufSerializer(user_class, ours),
            ProtobufDeserializer(user_class),
            TheirProtobufSerializer(user_class, theirs, deprecated),
            TheirProtobufDeserializer(user_class, deprecated),
        ),
    }


def _new_topic(bootstrap: str) -> str:
    name = unique("sr-topic")
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, 1, 1)])
    return name


def _their_values(bootstrap: str, topic: str, deserializer: Callable[..., Any], count: int) -> list[Any]:
    consumer = TheirConsumer({"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False})
    try:
        consumer.assign([TheirTopicPartition(topic, 0, OFFSET_BEGINNING)])
        values: list[Any] = []
        for _ in range(40):
            for message in consumer.consume(10, timeout=0.5):
                assert message.error() is None, message.error()
                values.append(deserializer(message.value(), TheirContext(topic, TheirField.VALUE)))
            if len(values) >= count:
                break
        return values
    finally:
        consumer.close()


@pytest.mark.parametrize("fmt", ["avro", "json", "protobuf"])
def test_our_producer_writes_what_confluents_consumer_reads_and_theirs_what_ours_reads(broker, registry_url, fmt):
    bootstrap = broker.bootstrap_servers
    with SchemaRegistryClient(registry_url) as ours:
        theirs = confluent.SchemaRegistryClient({"url": registry_url})
        value, serializer, deserializer, their_serializer, their_deserializer = _formats(ours, theirs)[fmt]
        topic = _new_topic(bootstrap)
        with Producer(bootstrap, value_serializer=serializer) as producer:
            producer.send(topic, value).result(30)
        producer_of_theirs = TheirProducer({"bootstrap.servers": bootstrap})
        producer_of_theirs.produce(topic, value=their_serializer(value, TheirContext(topic, TheirField.VALUE)))
        assert producer_of_theirs.flush(30) == 0
        assert _their_values(bootstrap, topic, their_deserializer, 2) == [value, value]
        with Consumer(bootstrap, auto_offset_reset="earliest", value_deserializer=deserializer) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            records: list[Any] = []
            for _ in range(40):
                records.extend(consumer.poll(500))
                if len(records) >= 2:
                    break
        assert [r.value for r in records] == [value, value]
        assert len(set(_their_values(bootstrap, topic, lambda data, ctx: data, 2))) == 1  # the same bytes


def test_a_protobuf_schema_registered_by_the_serializer_is_parsed_with_its_import_resolved(client):
    from spark_kafkalog.client.serialization import MessageField, SerializationContext
    from spark_kafkalog.schemas.protobuf import ProtobufSchema
    from spark_kafkalog.schemas.wire_format import unframe

    user_class, _, _ = messages.build()
    topic = unique("proto")
    data = ProtobufSerializer(user_class, client)(user_class(id=1), SerializationContext(topic, MessageField.VALUE))
    assert data is not None
    schema_id = unframe(data, protobuf=True)[0]
    client.clear_caches()
    schema = client.get_schema(schema_id)
    assert schema.schema_type == "PROTOBUF" and [r.name for r in schema.references] == ["common/addr.proto"]
    parsed = client.parsed(schema_id)
    assert isinstance(parsed, ProtobufSchema) and "ex.Addr" in parsed.canonical


def test_the_asyncio_producer_and_consumer_take_the_serializers(broker, client):
    import asyncio

    from spark_kafkalog.client import AIOConsumer, AIOProducer

    topic = _new_topic(broker.bootstrap_servers)

    async def main() -> list[Any]:
        async with AIOProducer(broker.bootstrap_servers, value_serializer=AvroSerializer(client, AVRO)) as producer:
            await (await producer.send(topic, {"id": 3, "item": "cup"}))
        async with AIOConsumer(
            broker.bootstrap_servers, auto_offset_reset="earliest", value_deserializer=AvroDeserializer(client)
        ) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            for _ in range(40):
                records = await consumer.poll(500)
                if records:
                    return [r.value for r in records]
        return []

    assert asyncio.run(main()) == [{"id": 3, "item": "cup"}]
