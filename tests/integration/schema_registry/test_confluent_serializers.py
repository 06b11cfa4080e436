"""confluent-kafka 2.16's Avro, JSON Schema and Protobuf serializers and deserializers, unchanged, with kafkalog's
registry and broker: records produced by SerializingProducer and read back by DeserializingConsumer, the bytes in
Confluent's wire format naming the id the registry gave, a compatible evolution read with the new reader schema,
and an incompatible one refused by the registry with Confluent's error code 409.

The Protobuf message class is built at test time from a FileDescriptorProto (google.protobuf's descriptor_pool and
message_factory), as grpcio-tools is not a dependency.
"""

from __future__ import annotations

import datetime
import decimal
import json
import struct
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, DeserializingConsumer, SerializingProducer
from confluent_kafka import TopicPartition as CKTP
from confluent_kafka.schema_registry import SchemaRegistryError, record_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, StringSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, NewTopic
from tests.schema_registry_support import confluent_consume

pytestmark = pytest.mark.integration


@pytest.fixture
def topic(registry_broker: EmbeddedBroker) -> str:
    name = f"sr-{uuid.uuid4().hex[:10]}"
    with AdminClient(registry_broker.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, 1, 1)])
    return name


def produce(bootstrap: str, topic: str, value_serializer: Any, values: list[Any]) -> None:
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": StringSerializer(),
            "value.serializer": value_serializer,
            "linger.ms": 0,
        }
    )
    for i, value in enumerate(values):
        producer.produce(topic, key=f"k{i}", value=value)
    assert producer.flush(20) == 0


def raw_values(bootstrap: str, topic: str, n: int) -> list[bytes]:
    return confluent_consume(bootstrap, topic, None, n)


def framed_id(data: bytes) -> int:
    """The schema id of a record in Confluent's wire format (magic byte 0, big-endian int32 id)."""
    assert data[0] == 0, f"magic byte {data[0]}"
    return int(struct.unpack(">i", data[1:5])[0])


USER = {
    "type": "record",
    "name": "User",
    "namespace": "conformance.serde",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "age", "type": "int"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "nickname", "type": ["null", "string"], "default": None},
    ],
}
USER_V2 = {**USER, "fields": [*USER["fields"], {"name": "email", "type": "string", "default": "none"}]}
USER_INCOMPATIBLE = {**USER, "fields": [*USER["fields"], {"name": "email", "type": "string"}]}


def test_avro_records_through_kafkalog_with_confluents_serializers(sr, registry_broker, topic) -> None:
    bootstrap = registry_broker.bootstrap_servers
    users = [
        {"name": "ada", "age": 36, "tags": ["math"], "nickname": None},
        {"name": "alan", "age": 41, "tags": [], "nickname": "prof"},
    ]
    produce(bootstrap, topic, AvroSerializer(sr, json.dumps(USER)), users)

    registered = sr.get_latest_version(f"{topic}-value")
    assert registered.version == 1
    assert [framed_id(v) for v in raw_values(bootstrap, topic, 2)] == [registered.schema_id] * 2
    assert confluent_consume(bootstrap, topic, AvroDeserializer(sr), 2) == users


def test_avro_compatible_evolution_read_with_the_new_reader_schema(sr, registry_broker, topic) -> None:
    bootstrap = registry_broker.bootstrap_servers
    old = {"name": "ada", "age": 36, "tags": [], "nickname": None}
    new = {"name": "alan", "age": 41, "tags": ["x"], "nickname": None, "email": "alan@example.com"}
    produce(bootstrap, topic, AvroSerializer(sr, json.dumps(USER)), [old])
    produce(bootstrap, topic, AvroSerializer(sr, json.dumps(USER_V2)), [new])
    assert sr.get_versions(f"{topic}-value") == [1, 2]

    ids = [framed_id(v) for v in raw_values(bootstrap, topic, 2)]
    assert ids[0] != ids[1]
    got = confluent_consume(bootstrap, topic, AvroDeserializer(sr, json.dumps(USER_V2)), 2)
    assert got == [{**old, "email": "none"}, new]


def test_avro_incompatible_change_refused_by_the_registry_with_409(sr, topic) -> None:
    ctx = SerializationContext(topic, MessageField.VALUE)
    AvroSerializer(sr, json.dumps(USER))({"name": "a", "age": 1, "tags": [], "nickname": None}, ctx)
    refused = AvroSerializer(sr, json.dumps(USER_INCOMPATIBLE))
    with pytest.raises(SchemaRegistryError) as info:
        refused({"name": "a", "age": 1, "tags": [], "nickname": None, "email": "e"}, ctx)
    assert (info.value.http_status_code, info.value.error_code) == (409, 409)


def test_avro_use_latest_version_without_auto_register(sr, topic) -> None:
    ctx = SerializationContext(topic, MessageField.VALUE)
    AvroSerializer(sr, json.dumps(USER_V2))({"name": "a", "age": 1, "tags": [], "nickname": None}, ctx)
    latest = AvroSerializer(sr, json.dumps(USER), conf={"auto.register.schemas": False, "use.latest.version": True})
    data = latest({"name": "b", "age": 2, "tags": [], "nickname": None, "email": "b@x"}, ctx)
    assert framed_id(data) == sr.get_latest_version(f"{topic}-value").schema_id


ORDER_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "item": {"type": "string"},
        "price": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "item"],
}


def test_json_schema_records_through_kafkalog_with_confluents_serializers(sr, registry_broker, topic) -> None:
    bootstrap = registry_broker.bootstrap_servers
    orders = [{"id": 1, "item": "tea", "price": 2.5, "tags": ["hot"]}, {"id": 2, "item": "cake"}]
    produce(bootstrap, topic, JSONSerializer(json.dumps(ORDER_SCHEMA), sr), orders)

    registered = sr.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "JSON"
    assert [framed_id(v) for v in raw_values(bootstrap, topic, 2)] == [registered.schema_id] * 2
    got = confluent_consume(bootstrap, topic, JSONDeserializer(None, schema_registry_client=sr), 2)
    assert got == orders
    got = confluent_consume(bootstrap, topic, JSONDeserializer(json.dumps(ORDER_SCHEMA)), 2)
    assert got == orders


def order_message_class(package: str) -> Any:
    """A generated-like message class for ``<package>.Order`` (id, item, price, tags, and a nested Line)."""
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{package.replace('.', '/')}/order.proto", package=package)
    fdp.syntax = "proto3"
    line = fdp.message_type.add(name="Line")
    line.field.add(name="sku", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=1)
    line.field.add(name="qty", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32, label=1)
    order = fdp.message_type.add(name="Order")
    t, lab = descriptor_pb2.FieldDescriptorProto, descriptor_pb2.FieldDescriptorProto
    order.field.add(name="id", number=1, type=t.TYPE_INT64, label=lab.LABEL_OPTIONAL)
    order.field.add(name="item", number=2, type=t.TYPE_STRING, label=lab.LABEL_OPTIONAL)
    order.field.add(name="price", number=3, type=t.TYPE_DOUBLE, label=lab.LABEL_OPTIONAL)
    order.field.add(name="tags", number=4, type=t.TYPE_STRING, label=lab.LABEL_REPEATED)
    order.field.add(name="lines", number=5, type=t.TYPE_MESSAGE, label=lab.LABEL_REPEATED, type_name=f".{package}.Line")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order"))


def test_protobuf_records_through_kafkalog_with_confluents_serializers(sr, registry_broker, topic) -> None:
    bootstrap = registry_broker.bootstrap_servers
    order_cls = order_message_class(f"conformance.p{uuid.uuid4().hex[:8]}")
    orders = [order_cls(id=1, item="tea", price=2.5, tags=["hot"]), order_cls(id=2, item="cake")]
    orders[0].lines.add(sku="t-1", qty=2)
    produce(bootstrap, topic, ProtobufSerializer(order_cls, sr, {"use.deprecated.format": False}), orders)

    registered = sr.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "PROTOBUF"
    assert "message Order" in registered.schema.schema_str
    raws = raw_values(bootstrap, topic, 2)
    assert [framed_id(v) for v in raws] == [registered.schema_id] * 2
    # message indexes after the id: [1] (Order is the file's second message) as a zigzag count and index
    assert raws[0][5:7] == bytes([2, 2])

    deserializer = ProtobufDeserializer(order_cls, {"use.deprecated.format": False}, sr)
    got: list[Any] = confluent_consume(bootstrap, topic, deserializer, 2)
    assert [m.SerializeToString() for m in got] == [m.SerializeToString() for m in orders]


def test_protobuf_incompatible_change_refused_by_the_registry_with_409(sr, topic) -> None:
    package = f"conformance.p{uuid.uuid4().hex[:8]}"
    ctx = SerializationContext(topic, MessageField.VALUE)
    order_cls = order_message_class(package)
    ProtobufSerializer(order_cls, sr, {"use.deprecated.format": False})(order_cls(id=1), ctx)

    fdp = descriptor_pb2.FileDescriptorProto()
    order_cls.DESCRIPTOR.file.CopyToProto(fdp)
    fdp.message_type[1].field[1].type = descriptor_pb2.FieldDescriptorProto.TYPE_INT32  # item: string -> int32
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    retyped: Callable[..., Any] = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order"))
    with pytest.raises(SchemaRegistryError) as info:
        ProtobufSerializer(retyped, sr, {"use.deprecated.format": False})(retyped(id=1, item=3), ctx)
    assert (info.value.http_status_code, info.value.error_code) == (409, 409)


def test_avro_record_name_strategy_registers_under_the_records_full_name(sr, registry_broker, topic) -> None:
    name = f"User{uuid.uuid4().hex[:8]}"
    schema = json.dumps({**USER, "name": name})
    serializer = AvroSerializer(sr, schema, conf={"subject.name.strategy": record_subject_name_strategy})
    data = serializer(
        {"name": "a", "age": 1, "tags": [], "nickname": None}, SerializationContext(topic, MessageField.VALUE)
    )
    registered = sr.get_latest_version(f"conformance.serde.{name}")
    assert framed_id(data) == registered.schema_id
    assert sr.get_subjects(subject_prefix=topic) == []


def money_and_order_classes(package: str) -> tuple[Any, Any]:
    """``<package>/money.proto`` (message Money) and ``<package>/order.proto`` importing it (Order.total is a Money)."""
    path = package.replace(".", "/")
    t = descriptor_pb2.FieldDescriptorProto
    money = descriptor_pb2.FileDescriptorProto(name=f"{path}/money.proto", package=package, syntax="proto3")
    m = money.message_type.add(name="Money")
    m.field.add(name="currency", number=1, type=t.TYPE_STRING, label=t.LABEL_OPTIONAL)
    m.field.add(name="units", number=2, type=t.TYPE_INT64, label=t.LABEL_OPTIONAL)
    order = descriptor_pb2.FileDescriptorProto(name=f"{path}/order.proto", package=package, syntax="proto3")
    order.dependency.append(money.name)
    o = order.message_type.add(name="Order")
    o.field.add(name="id", number=1, type=t.TYPE_INT64, label=t.LABEL_OPTIONAL)
    o.field.add(name="total", number=2, type=t.TYPE_MESSAGE, label=t.LABEL_OPTIONAL, type_name=f".{package}.Money")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(money)
    pool.Add(order)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Money")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order")),
    )


def test_protobuf_imports_become_references_registered_under_the_file_name(sr, registry_broker, topic) -> None:
    bootstrap = registry_broker.bootstrap_servers
    package = f"conformance.r{uuid.uuid4().hex[:8]}"
    money_cls, order_cls = money_and_order_classes(package)
    orders = [order_cls(id=1, total=money_cls(currency="EUR", units=12)), order_cls(id=2)]
    produce(bootstrap, topic, ProtobufSerializer(order_cls, sr, {"use.deprecated.format": False}), orders)

    money_subject = f"{package.replace('.', '/')}/money.proto"  # reference_subject_name_strategy: the import path
    registered = sr.get_latest_version(f"{topic}-value")
    assert [(r.name, r.subject, r.version) for r in registered.schema.references] == [(money_subject, money_subject, 1)]
    assert sr.get_referenced_by(money_subject, 1) == [registered.schema_id]

    deserializer = ProtobufDeserializer(order_cls, {"use.deprecated.format": False}, sr)
    got: list[Any] = confluent_consume(bootstrap, topic, deserializer, 2)
    assert [m.SerializeToString() for m in got] == [m.SerializeToString() for m in orders]


def test_protobuf_compatible_evolution_and_avro_keys(sr, registry_broker, topic) -> None:
    """A field added to the message registers version 2 (BACKWARD); the old class reads the new records; Avro keys
    register under ``<topic>-key``."""
    bootstrap = registry_broker.bootstrap_servers
    package = f"conformance.e{uuid.uuid4().hex[:8]}"
    v1_cls = order_message_class(package)
    fdp = descriptor_pb2.FileDescriptorProto()
    v1_cls.DESCRIPTOR.file.CopyToProto(fdp)
    t = descriptor_pb2.FieldDescriptorProto
    fdp.message_type[1].field.add(name="note", number=6, type=t.TYPE_STRING, label=t.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    v2_cls: Any = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Order"))

    key_schema = json.dumps({"type": "string"})
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": AvroSerializer(sr, key_schema),
            "value.serializer": ProtobufSerializer(v1_cls, sr, {"use.deprecated.format": False}),
            "linger.ms": 0,
        }
    )
    producer.produce(topic, key="k1", value=v1_cls(id=1, item="tea"))
    assert producer.flush(20) == 0
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": AvroSerializer(sr, key_schema),
            "value.serializer": ProtobufSerializer(v2_cls, sr, {"use.deprecated.format": False}),
            "linger.ms": 0,
        }
    )
    producer.produce(topic, key="k2", value=v2_cls(id=2, item="cake", note="fresh"))
    assert producer.flush(20) == 0

    assert sr.get_versions(f"{topic}-value") == [1, 2]
    assert sr.get_versions(f"{topic}-key") == [1]
    assert json.loads(sr.get_latest_version(f"{topic}-key").schema.schema_str or "null") == "string"

    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "key.deserializer": AvroDeserializer(sr),
            "value.deserializer": ProtobufDeserializer(v1_cls, {"use.deprecated.format": False}, sr),
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([CKTP(topic, 0, OFFSET_BEGINNING)])
        got: list[tuple[Any, Any]] = []
        for _ in range(200):
            msg = consumer.poll(0.2)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append((msg.key(), msg.value()))
            if len(got) == 2:
                break
    finally:
        consumer.close()
    assert [(k, m.id, m.item) for k, m in got] == [("k1", 1, "tea"), ("k2", 2, "cake")]


EVENT = {
    "type": "record",
    "name": "Event",
    "namespace": "conformance.logical",
    "doc": "logical types survive the registry's canonical form",
    "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}, "default": "A"},
        {"name": "raw", "type": {"type": "fixed", "name": "Raw", "size": 2}},
        {"name": "extra", "type": {"type": "map", "values": ["null", "double"]}},
    ],
}


def test_avro_logical_types_read_back_through_the_registrys_schema(sr, registry_broker, topic) -> None:
    """The deserializer parses the writer schema the registry answers: logical types, enums, fixed, docs kept."""
    bootstrap = registry_broker.bootstrap_servers
    event = {
        "at": datetime.datetime(2026, 12, 6, 9, 30, 15, 123000, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 12, 6),
        "amount": decimal.Decimal("1234.50"),
        "ref": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "kind": "B",
        "raw": b"\x01\x02",
        "extra": {"x": 1.5, "y": None},
    }
    produce(bootstrap, topic, AvroSerializer(sr, json.dumps(EVENT)), [event])
    (got,) = confluent_consume(bootstrap, topic, AvroDeserializer(sr), 1)
    assert {**got, "ref": uuid.UUID(str(got["ref"]))} == event
    answered = json.loads(sr.get_latest_version(f"{topic}-value").schema.schema_str or "null")
    assert answered["doc"] == EVENT["doc"]
    assert answered["fields"][2]["type"] == {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}
