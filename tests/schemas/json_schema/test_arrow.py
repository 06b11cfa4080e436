"""schema_for_arrow: the JSON Schema that writes a Spark (Arrow) type, and its round trip through the codec."""

from __future__ import annotations

import datetime
import json

import pyarrow as pa
import pytest

from spark_kafkalog.schemas import compatibility_errors, parse_schema
from spark_kafkalog.schemas.json_schema import JsonSchema
from spark_kafkalog.schemas.providers import codec_for, schema_for_arrow


def document_of(arrow_type: pa.DataType, **kwargs: str) -> dict:
    schema = schema_for_arrow("JSON", arrow_type, **kwargs)
    assert isinstance(schema, JsonSchema)
    return json.loads(schema.canonical)


NULL = {"type": "null"}


@pytest.mark.parametrize(
    ("arrow_type", "expected"),
    [
        (pa.string(), {"type": "string"}),
        (pa.large_string(), {"type": "string"}),
        (pa.binary(), {"type": "string", "contentEncoding": "base64"}),
        (pa.int8(), {"type": "integer"}),
        (pa.int64(), {"type": "integer"}),
        (pa.float32(), {"type": "number"}),
        (pa.decimal128(10, 2), {"type": "number"}),
        (pa.bool_(), {"type": "boolean"}),
        (pa.date32(), {"type": "string", "format": "date"}),
        (pa.timestamp("us", tz="UTC"), {"type": "string", "format": "date-time"}),
        (pa.timestamp("us"), {"type": "string", "format": "date-time"}),
        (
            pa.list_(pa.int32()),
            {"type": "array", "items": {"oneOf": [NULL, {"type": "integer"}]}},
        ),
        (
            pa.list_(pa.field("item", pa.int32(), nullable=False)),
            {"type": "array", "items": {"type": "integer"}},
        ),
        (
            pa.map_(pa.string(), pa.float64()),
            {"type": "object", "additionalProperties": {"oneOf": [NULL, {"type": "number"}]}},
        ),
    ],
)
def test_each_arrow_type_maps_to_its_json_schema(arrow_type, expected):
    document = document_of(arrow_type)
    assert document.pop("$schema") == "http://json-schema.org/draft-07/schema#"
    assert document.pop("title") == "topLevelRecord"
    assert document == expected


def test_a_struct_becomes_a_closed_object_with_nullable_fields_as_oneof_null():
    arrow_type = pa.struct(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("inner", pa.struct([pa.field("x", pa.float64(), nullable=False)])),
        ]
    )
    assert document_of(arrow_type, record_name="Person") == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Person",
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "name": {"oneOf": [NULL, {"type": "string"}]},
            "inner": {
                "oneOf": [
                    NULL,
                    {
                        "type": "object",
                        "properties": {"x": {"type": "number"}},
                        "required": ["x"],
                        "additionalProperties": False,
                    },
                ]
            },
        },
        "required": ["id"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    "arrow_type",
    [pa.duration("us"), pa.map_(pa.int32(), pa.string()), pa.month_day_nano_interval(), pa.uint64()],
)
def test_types_without_a_json_form_are_refused_by_name(arrow_type):
    with pytest.raises(ValueError, match="JSON"):
        schema_for_arrow("JSON", arrow_type)


def test_derived_schema_round_trips_spark_values_through_the_codec():
    arrow_type = pa.struct(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("day", pa.date32()),
            pa.field("at", pa.timestamp("us", tz="UTC")),
            pa.field("raw", pa.binary()),
            pa.field("scores", pa.list_(pa.float64())),
            pa.field("attrs", pa.map_(pa.string(), pa.int64())),
        ]
    )
    schema = schema_for_arrow("JSON", arrow_type)
    codec = codec_for(schema)
    nullable = pa.struct([pa.field(f.name, f.type) for f in arrow_type])  # decoded fields are all nullable
    assert codec.arrow_type == nullable
    rows = pa.array(
        [
            {
                "id": 1,
                "name": "a",
                "day": datetime.date(2020, 2, 29),
                "at": datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC),
                "raw": b"\xff",
                "scores": [1.5, None],
                "attrs": [("k", 3)],
            },
            {"id": 2, "name": None, "day": None, "at": None, "raw": None, "scores": None, "attrs": None},
        ],
        type=arrow_type,
    ).to_pylist()
    payloads = codec.encode_many(rows)
    assert codec.decode_many(payloads, schema) == rows


def test_adding_a_nullable_column_is_backward_compatible_and_removing_one_is_not():
    v1 = schema_for_arrow("JSON", pa.struct([pa.field("a", pa.string())]))
    v2 = schema_for_arrow("JSON", pa.struct([pa.field("a", pa.string()), pa.field("b", pa.int64())]))
    assert compatibility_errors(v2, [v1], "BACKWARD") == []
    assert compatibility_errors(v1, [v2], "BACKWARD") != []
    assert parse_schema("JSON", v2.canonical) == v2
