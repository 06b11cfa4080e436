"""The Schema Registry serializers against a scripted in-memory registry: byte-for-byte interop with
confluent-kafka's serializers both ways (ours write, theirs read; theirs write, ours read) for Avro, JSON
Schema and Protobuf, subject name strategies, the configuration, and failures named by field and topic."""

from __future__ import annotations

import datetime
import decimal

import pytest
from confluent_kafka import schema_registry as confluent
from confluent_kafka.schema_registry.avro import AvroDeserializer as TheirAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as TheirAvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as TheirJSONDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as TheirJSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as TheirProtobufDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as TheirProtobufSerializer
from confluent_kafka.serialization import MessageField as TheirField
from confluent_kafka.serialization import SerializationContext as TheirContext

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.schema_registry import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.avro import AvroDeserializer, AvroSerializer
from spark_kafkalog.client.schema_registry.json_schema import JSONSchemaDeserializer, JSONSchemaSerializer
from spark_kafkalog.client.schema_registry.protobuf import (
    ProtobufDeserializer,
    ProtobufSerializer,
    message_indexes,
)
from spark_kafkalog.client.schema_registry.strategies import (
    record_subject_name_strategy,
    subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from spark_kafkalog.client.serialization import MessageField, SerializationContext, SerializationError
from spark_kafkalog.schemas.wire_format import unframe
from tests.client.schema_registry import messages
from tests.client.schema_registry.fake_registry import FakeRegistry

USER_AVRO = """{"type": "record", "name": "User", "namespace": "example.avro", "fields": [
  {"name": "id", "type": "long"},
  {"name": "name", "type": ["null", "string"], "default": null},
  {"name": "score", "type": "double"},
  {"name": "tags", "type": {"type": "array", "items": "string"}},
  {"name": "attrs", "type": {"type": "map", "values": "int"}},
  {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
  {"name": "born", "type": {"type": "int", "logicalType": "date"}},
  {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
  {"name": "raw", "type": "bytes"}
]}"""
USER_VALUE = {
    "id": 42,
    "name": "Zoë",
    "score": 0.5,
    "tags": ["a", "b"],
    "attrs": {"x": 1},
    "kind": "B",
    "born": datetime.date(2000, 1, 2),
    "at": datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.UTC),
    "amount": decimal.Decimal("12.34"),
    "raw": b"\x00\xff",
}
USER_JSON = """{"title": "User", "type": "object", "properties": {
  "id": {"type": "integer"}, "name": {"type": ["string", "null"]}, "tags": {"type": "array", "items": {"type": "string"}}
}, "required": ["id"]}"""
JSON_VALUE = {"id": 7, "name": "Zoë ☃", "tags": ["x"]}

OURS = SerializationContext("orders", MessageField.VALUE)
THEIRS = TheirContext("orders", TheirField.VALUE)


def written(data: bytes | None) -> bytes:
    """A serializer's output for a value that is not None."""
    assert data is not None
    return data


@pytest.fixture
def fake():
    with FakeRegistry() as registry:
        yield registry


@pytest.fixture
def ours(fake):
    with SchemaRegistryClient(fake.url) as client:
        yield client


@pytest.fixture
def theirs(fake):
    return confluent.SchemaRegistryClient({"url": fake.url})


def test_avro_written_by_us_is_the_bytes_confluent_writes_and_each_reads_the_others(ours, theirs):
    mine = written(AvroSerializer(ours, USER_AVRO)(USER_VALUE, OURS))
    their = TheirAvroSerializer(theirs, USER_AVRO)(USER_VALUE, THEIRS)
    assert mine == their
    assert mine[:5] == b"\x00\x00\x00\x00\x01"
    assert TheirAvroDeserializer(theirs)(mine, THEIRS) == USER_VALUE
    assert AvroDeserializer(ours)(their, OURS) == USER_VALUE


@pytest.mark.parametrize(("schema", "value"), [('"string"', "héllo"), ('"long"', -5), ('"bytes"', b"\x01\x02")])
def test_avro_primitives_interoperate_including_confluents_raw_bytes_payload(ours, theirs, schema, value):
    mine = written(AvroSerializer(ours, schema)(value, OURS))
    their = written(TheirAvroSerializer(theirs, schema)(value, THEIRS))
    assert mine[5:] == their[5:]
    assert TheirAvroDeserializer(theirs)(mine, THEIRS) == value
    assert AvroDeserializer(ours)(their, OURS) == value


def test_avro_deserializer_resolves_old_records_into_a_reader_schema(ours):
    old = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'
    new = (
        '{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":"d"}]}'
    )
    data = AvroSerializer(ours, old)({"a": 1}, OURS)
    assert AvroDeserializer(ours, new)(data, OURS) == {"a": 1, "b": "d"}
    assert AvroDeserializer(ours)(data, OURS) == {"a": 1}


def test_avro_to_dict_and_from_dict_hooks_convert_user_objects(ours):
    schema = '{"type":"record","name":"P","fields":[{"name":"x","type":"int"}]}'

    class Point:
        def __init__(self, x):
            self.x = x

    data = AvroSerializer(ours, schema, to_dict=lambda p, ctx: {"x": p.x})(Point(3), OURS)
    point = AvroDeserializer(ours, from_dict=lambda d, ctx: Point(d["x"]))(data, OURS)
    assert isinstance(point, Point) and point.x == 3


def test_json_schema_written_by_us_is_the_bytes_confluent_writes_and_each_reads_the_others(ours, theirs):
    mine = JSONSchemaSerializer(USER_JSON, ours)(JSON_VALUE, OURS)
    their = TheirJSONSerializer(USER_JSON, theirs)(JSON_VALUE, THEIRS)
    assert mine == their
    assert TheirJSONDeserializer(None, schema_registry_client=theirs)(mine, THEIRS) == JSON_VALUE
    assert JSONSchemaDeserializer(registry=ours)(their, OURS) == JSON_VALUE
    assert JSONSchemaDeserializer(USER_JSON)(their, OURS) == JSON_VALUE


def test_json_schema_values_breaking_the_schema_are_refused_both_ways_naming_the_path(ours):
    with pytest.raises(SerializationError) as written:
        JSONSchemaSerializer(USER_JSON, ours)({"id": "seven"}, OURS)
    assert "id" in str(written.value) and "orders" in str(written.value)
    data = JSONSchemaSerializer(USER_JSON, ours, conf={"validate": False})({"name": 1}, OURS)
    with pytest.raises(SerializationError) as read:
        JSONSchemaDeserializer(registry=ours)(data, OURS)
    assert "required" in str(read.value)
    assert JSONSchemaDeserializer(conf={"validate": False})(data, OURS) == {"name": 1}


def test_protobuf_written_by_us_is_the_bytes_confluent_writes_and_each_reads_the_others(ours, theirs):
    user_class, inner_class, _ = messages.build()
    user = user_class(id=7)
    user.addr.city = "Paris"
    user.at.seconds = 1_700_000_000
    mine = written(ProtobufSerializer(user_class, ours)(user, OURS))
    their = TheirProtobufSerializer(user_class, theirs, {"use.deprecated.format": False})(user, THEIRS)
    assert mine == their
    assert unframe(mine, protobuf=True)[1] == (1,)
    assert TheirProtobufDeserializer(user_class, {"use.deprecated.format": False})(mine, THEIRS) == user
    assert ProtobufDeserializer(user_class)(their, OURS) == user
    inner = inner_class(x=3)
    nested = written(ProtobufSerializer(inner_class, ours)(inner, OURS))
    assert nested == TheirProtobufSerializer(inner_class, theirs, {"use.deprecated.format": False})(inner, THEIRS)
    assert unframe(nested, protobuf=True)[1] == (1, 0)


def test_protobuf_imports_are_registered_first_and_referenced_well_known_types_skipped(fake, ours):
    user_class, _, _ = messages.build()
    ProtobufSerializer(user_class, ours)(user_class(id=1), OURS)
    registered = [r for r in fake.requests if r.method == "POST" and r.path.endswith("/versions")]
    assert [r.path for r in registered] == ["/subjects/common%2Faddr.proto/versions", "/subjects/orders-value/versions"]
    assert registered[1].body["references"] == [
        {"name": "common/addr.proto", "subject": "common/addr.proto", "version": 1}
    ]
    assert registered[1].body["schemaType"] == "PROTOBUF"


def test_message_indexes_are_the_path_of_the_message_in_its_file():
    user_class, inner_class, addr_class = messages.build()
    assert [message_indexes(c.DESCRIPTOR) for c in (user_class, inner_class, addr_class)] == [(1,), (1, 0), (0,)]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (topic_subject_name_strategy, "orders-value"),
        (record_subject_name_strategy, "example.avro.User"),
        (topic_record_subject_name_strategy, "orders-example.avro.User"),
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", "example.avro.User"),
        ("TopicRecordNameStrategy", "orders-example.avro.User"),
        (confluent.topic_record_subject_name_strategy, "orders-example.avro.User"),
    ],
)
def test_subject_name_strategies_choose_the_subject_registered_under(fake, ours, strategy, expected):
    AvroSerializer(ours, USER_AVRO, conf={"subject.name.strategy": strategy})(USER_VALUE, OURS)
    assert fake.requests[0].path == f"/subjects/{expected}/versions"


def test_the_key_strategy_uses_the_key_subject():
    assert topic_subject_name_strategy(SerializationContext("t", MessageField.KEY), None) == "t-key"
    with pytest.raises(ValueError, match="SerializationContext"):
        topic_subject_name_strategy(None, "r")
    with pytest.raises(ConfigError, match="subject.name.strategy"):
        subject_name_strategy("NoSuchStrategy")


def test_without_auto_register_the_schema_is_looked_up_and_a_missing_one_is_the_registrys_error(fake, ours):
    serializer = AvroSerializer(ours, USER_AVRO, conf={"auto.register.schemas": False})
    with pytest.raises(Exception) as error:
        serializer(USER_VALUE, OURS)
    assert getattr(error.value, "error_code", None) == 40401
    AvroSerializer(ours, USER_AVRO)(USER_VALUE, OURS)
    assert written(serializer(USER_VALUE, OURS))[:5] == b"\x00\x00\x00\x00\x01"


def test_use_latest_version_writes_with_the_subjects_latest_schema_and_id(fake, ours):
    old = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'
    new = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int","default":0}]}'
    AvroSerializer(ours, old)({"a": 1}, OURS)
    AvroSerializer(ours, new)({"a": 1, "b": 2}, OURS)
    latest = AvroSerializer(ours, conf={"use.latest.version": True, "auto.register.schemas": False})
    data = written(latest({"a": 5, "b": 6}, OURS))
    assert data[:5] == b"\x00\x00\x00\x00\x02"
    assert AvroDeserializer(ours)(data, OURS) == {"a": 5, "b": 6}


@pytest.mark.parametrize(
    ("conf", "complaint"),
    [
        ({"auto.register.schemas": "yes"}, "auto.register.schemas"),
        ({"use.latest.version": True}, "cannot both be on"),
        ({"no.such.key": 1}, "no.such.key"),
        ({"use.schema.id": "1"}, "use.schema.id"),
        ({"subject.name.strategy": 3}, "subject.name.strategy"),
    ],
)
def test_serializer_configuration_is_checked(ours, conf, complaint):
    with pytest.raises(ConfigError, match=complaint):
        AvroSerializer(ours, USER_AVRO, conf=conf)


@pytest.mark.parametrize(
    "deserializer",
    [
        lambda client: AvroDeserializer(client),
        lambda client: JSONSchemaDeserializer(registry=client),
        lambda client: ProtobufDeserializer(messages.build()[0]),
    ],
)
@pytest.mark.parametrize("data", [b"\x01\x00\x00\x00\x01abc", b"\x00\x00"])
def test_bytes_not_in_confluents_wire_format_are_a_serialization_error_naming_topic_and_field(ours, deserializer, data):
    with pytest.raises(SerializationError) as error:
        deserializer(ours)(data, OURS)
    assert "wire format" in str(error.value) and "'orders'" in str(error.value)
    assert (error.value.topic, error.value.field) == ("orders", MessageField.VALUE)


def test_a_value_avro_cannot_write_names_the_serializer_and_topic(ours):
    with pytest.raises(SerializationError) as error:
        AvroSerializer(ours, USER_AVRO)({"id": "x"}, OURS)
    assert "AvroSerializer" in str(error.value) and "orders" in str(error.value)


def test_none_passes_as_none_both_ways(ours):
    assert AvroSerializer(ours, USER_AVRO)(None, OURS) is None
    assert AvroDeserializer(ours)(None, OURS) is None
    assert JSONSchemaDeserializer(registry=ours)(None, OURS) is None


def test_protobuf_with_use_latest_version_writes_the_latest_id_without_registering_anything(fake, ours):
    user_class, _, _ = messages.build()
    first = written(ProtobufSerializer(user_class, ours)(user_class(id=1), OURS))
    posts = len([r for r in fake.requests if r.method == "POST"])
    latest = ProtobufSerializer(user_class, ours, {"use.latest.version": True, "auto.register.schemas": False})
    assert written(latest(user_class(id=1), OURS)) == first
    assert len([r for r in fake.requests if r.method == "POST"]) == posts
    assert fake.requests[-1].path == "/subjects/orders-value/versions/latest"
    assert fake.requests[-1].query == {"format": "serialized"}
