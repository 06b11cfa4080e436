"""JsonSchemaCodec: the Arrow type of a schema, decoding into Arrow values, encoding with validation, and
payloads written by confluent-kafka's JSONSerializer."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry._sync.mock_schema_registry_client import MockSchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from spark_kafkalog.schemas import SchemaReference, parse_schema
from spark_kafkalog.schemas.codec import DecodeError, EncodeError
from spark_kafkalog.schemas.json_schema import JsonSchema, JsonSchemaCodec
from spark_kafkalog.schemas.providers import codec_for
from spark_kafkalog.schemas.wire_format import unframe

UTC = datetime.UTC


def js(document: Any, refs: dict[str, JsonSchema] | None = None) -> JsonSchema:
    refs = refs or {}
    schema = parse_schema("JSON", json.dumps(document), [SchemaReference(n, n, 1) for n in refs], refs)
    assert isinstance(schema, JsonSchema)
    return schema


def codec(document: Any, **options: Any) -> JsonSchemaCodec:
    c = codec_for(js(document), **options)
    assert isinstance(c, JsonSchemaCodec)
    return c


@pytest.mark.parametrize(
    ("document", "arrow_type"),
    [
        ({"type": "string"}, pa.string()),
        ({"type": "string", "format": "date"}, pa.date32()),
        ({"type": "string", "format": "date-time"}, pa.timestamp("us", tz="UTC")),
        ({"type": "string", "contentEncoding": "base64"}, pa.binary()),
        ({"type": "integer"}, pa.int64()),
        ({"type": "number"}, pa.float64()),
        ({"type": "boolean"}, pa.bool_()),
        ({"type": "array", "items": {"type": "integer"}}, pa.list_(pa.int64())),
        ({"type": "array"}, pa.string()),
        ({"type": "array", "items": [{"type": "integer"}]}, pa.string()),
        ({"type": "object", "additionalProperties": {"type": "number"}}, pa.map_(pa.string(), pa.float64())),
        ({"type": "object"}, pa.string()),
        (
            {"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": ["integer", "null"]}}},
            pa.struct([("z", pa.string()), ("a", pa.int64())]),
        ),
        ({"properties": {"a": {"type": "boolean"}}}, pa.struct([("a", pa.bool_())])),
        ({"type": ["string", "null"]}, pa.string()),
        ({"type": ["string", "integer"]}, pa.string()),
        ({"anyOf": [{"type": "null"}, {"type": "integer"}]}, pa.int64()),
        ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, pa.int64()),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, pa.string()),
        ({"allOf": [{"type": "integer"}]}, pa.int64()),
        ({"enum": ["a", "b"]}, pa.string()),
        ({"enum": ["a", 1]}, pa.string()),
        ({}, pa.string()),
        (True, pa.string()),
        (
            {
                "type": "object",
                "properties": {"d": {"$ref": "#/definitions/d"}},
                "definitions": {"d": {"type": "number"}},
            },
            pa.struct([("d", pa.float64())]),
        ),
        (
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {"d": {"$ref": "#/$defs/d"}},
                "$defs": {"d": {"type": "boolean"}},
            },
            pa.struct([("d", pa.bool_())]),
        ),
        (
            {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#"}}},
            pa.struct([("v", pa.int64()), ("next", pa.string())]),
        ),
    ],
)
def test_arrow_type_follows_the_json_schema_rules(document, arrow_type):
    assert codec(document).arrow_type == arrow_type


def test_arrow_type_follows_referenced_schemas():
    address = js({"type": "object", "properties": {"zip": {"type": "string"}}})
    person = js({"type": "object", "properties": {"home": {"$ref": "address.json"}}}, {"address.json": address})
    assert codec_for(person).arrow_type == pa.struct([("home", pa.struct([("zip", pa.string())]))])


PERSON = {
    "type": "object",
    "title": "Person",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "score": {"type": ["number", "null"]},
        "born": {"type": "string", "format": "date"},
        "seen": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "blob": {"type": "string", "contentEncoding": "base64"},
        "extra": {},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    "required": ["name"],
}


def test_decode_shapes_a_document_into_arrow_values():
    c = codec(PERSON)
    payload = json.dumps(
        {
            "name": "Ann",
            "age": 41.0,
            "score": None,
            "born": "1983-04-05",
            "seen": "2024-01-02T03:04:05.25+02:00",
            "tags": ["a", None],
            "attrs": {"x": 1},
            "blob": "AAE=",
            "extra": {"any": ["thing", 1]},
            "address": {"city": "Oslo", "zip": "0150"},
            "unknown": 1,
        }
    ).encode()
    value = c.decode(payload, c.reader)
    assert value == {
        "name": "Ann",
        "age": 41,
        "score": None,
        "born": datetime.date(1983, 4, 5),
        "seen": datetime.datetime(2024, 1, 2, 1, 4, 5, 250000, tzinfo=UTC),
        "tags": ["a", None],
        "attrs": [("x", 1)],
        "blob": b"\x00\x01",
        "extra": '{"any":["thing",1]}',
        "address": {"city": "Oslo"},
    }
    column = pa.array([value], type=c.arrow_type)
    assert column.to_pylist()[0]["attrs"] == [("x", 1)]


def test_absent_properties_and_null_documents_decode_to_none():
    c = codec(PERSON)
    value = c.decode(b'{"name": "x"}', c.reader)
    assert value["age"] is None and value["address"] is None and value["name"] == "x"
    assert c.decode(b"null", c.reader) is None


def test_a_timestamp_without_an_offset_is_utc():
    c = codec({"type": "string", "format": "date-time"})
    assert c.decode(b'"2024-01-02T03:04:05"', c.reader) == datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("document", "payload", "message"),
    [
        (PERSON, b'{"name": 5}', r"\$\.name: expected a string, got number"),
        (PERSON, b'{"age": 1.5}', r"\$\.age: expected an integer"),
        (PERSON, b'{"age": true}', r"\$\.age: expected an integer, got boolean"),
        (PERSON, b'{"born": "yesterday"}', r"\$\.born: expected a date"),
        (PERSON, b'{"seen": "noon"}', r"\$\.seen: expected an RFC 3339"),
        (PERSON, b'{"tags": ["a", 1]}', r"\$\.tags\[1\]: expected a string"),
        (PERSON, b'{"attrs": {"k": "v"}}', r"\$\.attrs\.k: expected an integer"),
        (PERSON, b'{"blob": "***"}', r"\$\.blob: expected a base64 string"),
        (PERSON, b"[1]", r"\$: expected an object, got array"),
        (PERSON, b"{no", "the payload is not JSON"),
    ],
)
def test_decode_errors_name_the_json_path(document, payload, message):
    c = codec(document)
    with pytest.raises(DecodeError, match=message):
        c.decode(payload, c.reader)


def test_decode_many_names_the_failing_payload():
    c = codec({"type": "integer"})
    assert c.decode_many([b"1", memoryview(b"2"), b"null"], c.reader) == [1, 2, None]
    with pytest.raises(DecodeError, match=r"payload 1: \$: expected an integer"):
        c.decode_many([b"1", b'"x"'], c.reader)


def test_encode_round_trips_through_decode_and_validates():
    c = codec(PERSON)
    value = {
        "name": "Ann",
        "age": 41,
        "score": None,
        "born": datetime.date(1983, 4, 5),
        "seen": datetime.datetime(2024, 1, 2, 1, 4, 5, 250000, tzinfo=UTC),
        "tags": ["a"],
        "attrs": [("x", 1)],
        "blob": b"\x00\x01",
        "extra": '{"any":[1]}',
        "address": None,
    }
    payload = c.encode(value)
    document = json.loads(payload)
    assert document["score"] is None  # the schema allows null
    assert "address" not in document  # it does not: left out
    assert document["seen"] == "2024-01-02T01:04:05.250000Z"
    assert payload == json.dumps(document, separators=(",", ":")).encode()
    assert c.decode(payload, c.reader) == value


@pytest.mark.parametrize(
    ("document", "value", "message"),
    [
        (PERSON, {"age": 3}, "'name' is a required property"),
        ({"type": "integer", "minimum": 0}, -1, r"\$: -1 is less than the minimum of 0"),
        (PERSON, {"name": "x", "age": "3"}, r"\$\.age: expected an int, got str"),
        (PERSON, {"name": "x", "extra": "{not json"}, r"\$\.extra: the string is not JSON text"),
        (PERSON, {"name": "x", "seen": "2024"}, r"\$\.seen: expected a datetime.datetime"),
        ({"type": "number"}, float("nan"), "has no JSON form"),
    ],
)
def test_encode_errors_name_the_failure(document, value, message):
    with pytest.raises(EncodeError, match=message):
        codec(document).encode(value)


def test_encode_without_validation_writes_what_it_is_given():
    c = codec({"type": "integer", "minimum": 0}, validate=False)
    assert c.encode(-1) == b"-1"


def test_decimals_encode_as_numbers():
    assert codec({"type": "number"}).encode(decimal.Decimal("1.5")) == b"1.5"


def test_confluent_json_serializer_output_decodes_with_our_codec():
    registry = MockSchemaRegistryClient({"url": "mock://json-codec"})
    schema_text = json.dumps(PERSON)
    serializer = JSONSerializer(schema_text, registry)
    record = {
        "name": "Bo",
        "age": 7,
        "score": 2.5,
        "born": "2017-01-31",
        "seen": "2024-06-01T12:00:00Z",
        "tags": ["x", "y"],
        "attrs": {"k": 2},
        "extra": [1, {"a": None}],
    }
    framed = serializer(record, SerializationContext("people", MessageField.VALUE))
    assert framed is not None
    schema_id, _, payload = unframe(framed)
    registered = registry.get_schema(schema_id)
    assert registered.schema_str is not None
    writer = parse_schema("JSON", registered.schema_str)
    c = codec_for(writer)
    assert c.decode(payload, writer) == {
        "name": "Bo",
        "age": 7,
        "score": 2.5,
        "born": datetime.date(2017, 1, 31),
        "seen": datetime.datetime(2024, 6, 1, 12, tzinfo=UTC),
        "tags": ["x", "y"],
        "attrs": [("k", 2)],
        "blob": None,
        "extra": '[1,{"a":null}]',
        "address": None,
    }


def test_codec_refuses_a_schema_of_another_type():
    from spark_kafkalog.schemas.json_schema import codec as json_codec

    with pytest.raises(TypeError, match="needs a JsonSchema reader"):
        json_codec(parse_schema("AVRO", '"string"'))


@pytest.mark.parametrize(
    ("document", "validates"),
    [
        (PERSON, False),
        ({"type": "object", "properties": {"a": {"oneOf": [{"type": "null"}, {"type": "string"}]}}}, False),
        (
            {
                "type": "object",
                "properties": {"a": {"$ref": "#/definitions/a"}},
                "definitions": {"a": {"type": "integer"}},
            },
            False,
        ),
        ({"type": "integer", "minimum": 0}, True),
        ({"type": "string", "format": "email"}, True),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, True),
        ({"type": "object", "properties": {"a": {"oneOf": [{"type": "null"}, {}]}}}, True),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, True),
        ({"type": "object", "properties": {"a": {"enum": ["x"]}}}, True),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "patternProperties": {"^b": {}}}, True),
        ({"type": "array", "items": [{"type": "string"}]}, True),
        (False, True),
    ],
)
def test_validation_runs_only_where_the_shapes_do_not_already_guarantee_validity(document, validates):
    assert codec(document).validates is validates
    assert codec(document, validate=False).validates is False


COVERED_VALUES = [
    {"name": "a"},
    {"name": "a", "age": 1, "score": None, "tags": [], "attrs": [], "extra": "null"},
    {"name": "", "born": datetime.date(1, 1, 1), "seen": datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)},
    {"name": "a", "address": {"city": None}, "blob": b"", "attrs": {"k": 0}, "tags": ["x", "y"]},
]


@pytest.mark.parametrize("value", COVERED_VALUES)
def test_documents_written_without_validation_are_valid_for_a_covered_schema(value):
    c = codec(PERSON)
    assert not c.validates
    js(PERSON).validate(json.loads(c.encode(value)))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"age": 1}, r"\$\.name: 'name' is a required property"),
        ({"name": "a", "tags": ["x", None]}, r"\$\.tags\[1\]: null is not valid"),
        ({"name": "a", "attrs": {"k": None}}, r"\$\.attrs\.k: null is not valid"),
        (None, r"\$: null is not valid"),
    ],
)
def test_a_covered_schema_still_refuses_what_it_does_not_allow(value, message):
    with pytest.raises(EncodeError, match=message):
        codec(PERSON).encode(value)


def test_our_encoded_payloads_are_read_by_confluent_json_deserializer():
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer

    from spark_kafkalog.schemas.wire_format import frame

    registry = MockSchemaRegistryClient({"url": "mock://json-codec-read"})
    schema_id = registry.register_schema("people-value", Schema(json.dumps(PERSON), "JSON"))
    c = codec(PERSON)
    value = {
        "name": "Cy",
        "age": 3,
        "born": datetime.date(2021, 3, 4),
        "seen": datetime.datetime(2024, 6, 1, 12, 30, tzinfo=UTC),
        "tags": ["t"],
        "attrs": [("a", 1)],
        "blob": b"hi",
        "extra": '{"x":[true]}',
    }
    framed = frame(schema_id, c.encode(value))
    deserializer = JSONDeserializer(None, schema_registry_client=registry)
    got = deserializer(framed, SerializationContext("people", MessageField.VALUE))
    assert got == {
        "name": "Cy",
        "age": 3,
        "score": None,  # nullable: written as null
        "born": "2021-03-04",
        "seen": "2024-06-01T12:30:00Z",
        "tags": ["t"],
        "attrs": {"a": 1},
        "blob": "aGk=",
        "extra": {"x": [True]},
    }
