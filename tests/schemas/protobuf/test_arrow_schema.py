"""schema_for_arrow: the proto3 schema derived from a Spark (Arrow) struct, and values of the struct written
with it and read back."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pytest

from spark_kafkalog.schemas import InvalidSchemaError, parse_schema
from spark_kafkalog.schemas.providers import codec_for, schema_for_arrow

ROW = pa.struct(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("name", pa.string()),
        ("small", pa.int16()),
        ("score", pa.float32()),
        ("ratio", pa.float64()),
        ("ok", pa.bool_()),
        ("raw", pa.binary()),
        ("price", pa.decimal128(10, 2)),
        ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("local", pa.timestamp("us")),
        ("took", pa.duration("us")),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
        ("address", pa.struct([("city", pa.string()), ("zip_code", pa.string())])),
        ("lines", pa.list_(pa.struct([("sku", pa.string())]))),
        ("by_id", pa.map_(pa.int64(), pa.struct([("n", pa.int32())]))),
    ]
)

# nested messages declared before a map field's entry print before the field (message indexes count the
# entries, so the text keeps the descriptor's nested order)
EXPECTED = """syntax = "proto3";
package com.example;

import "google/protobuf/duration.proto";
import "google/protobuf/timestamp.proto";

message Row {
  int64 id = 1;
  optional string name = 2;
  optional int32 small = 3;
  optional float score = 4;
  optional double ratio = 5;
  optional bool ok = 6;
  optional bytes raw = 7;
  optional string price = 8;
  optional int32 day = 9;
  .google.protobuf.Timestamp at = 10;
  .google.protobuf.Timestamp local = 11;
  .google.protobuf.Duration took = 12;
  repeated string tags = 13;
  map<string, int32> attrs = 14;
  .com.example.Row.Address address = 15;
  repeated .com.example.Row.Lines lines = 16;
  message Address {
    optional string city = 1;
    optional string zip_code = 2;
  }
  message Lines {
    optional string sku = 1;
  }
  map<int64, .com.example.Row.ByIdValue> by_id = 17;
  message ByIdValue {
    optional int32 n = 1;
  }
}
"""


def test_the_derived_schema_is_a_proto3_message_per_struct():
    schema = schema_for_arrow("PROTOBUF", ROW, record_name="Row", namespace="com.example")
    assert schema.canonical == EXPECTED
    assert schema.name == "com.example.Row"
    # the text is a schema of its own, parsing to the same descriptor
    assert parse_schema("PROTOBUF", schema.canonical) == schema


def test_values_of_the_struct_are_written_and_read_back():
    schema = schema_for_arrow("PROTOBUF", ROW, record_name="Row", namespace="com.example")
    codec = codec_for(schema)
    value = {
        "id": 1,
        "name": "n",
        "small": -3,
        "score": 0.5,
        "ratio": 0.25,
        "ok": False,
        "raw": b"\x01",
        "price": decimal.Decimal("12.34"),
        "day": datetime.date(2024, 2, 29),
        "at": datetime.datetime(2024, 1, 1, 12, 0, tzinfo=datetime.UTC),
        "local": datetime.datetime(2024, 1, 1, 12, 0),
        "took": datetime.timedelta(minutes=2),
        "tags": ["a"],
        "attrs": [("k", 1)],
        "address": {"city": "c", "zip_code": None},
        "lines": [{"sku": "s"}],
        "by_id": [(7, {"n": 1})],
    }
    decoded = codec.decode(codec.encode(value), schema)
    assert decoded == value | {
        "price": "12.34",
        "day": (datetime.date(2024, 2, 29) - datetime.date(1970, 1, 1)).days,
        "local": datetime.datetime(2024, 1, 1, 12, 0, tzinfo=datetime.UTC),
    }
    # nulls stay null where Protobuf has presence; a null list or map reads back empty (it has none)
    nulls = {name: None for name in ROW.names} | {"id": 0}
    assert codec.decode(codec.encode(nulls), schema) == {name: None for name in ROW.names} | {
        "tags": [],
        "attrs": [],
        "lines": [],
        "by_id": [],
    }


def test_default_names_follow_to_avro():
    schema = schema_for_arrow("PROTOBUF", pa.struct([("a", pa.int32())]))
    assert schema.name == "topLevelRecord"
    assert "package" not in schema.canonical


@pytest.mark.parametrize(
    ("arrow_type", "message"),
    [
        (pa.string(), "derived from a struct type, not string"),
        (
            pa.struct([("m", pa.list_(pa.list_(pa.int32())))]),
            "field topLevelRecord.m: Protobuf has no repeated field of lists",
        ),
        (pa.struct([("m", pa.map_(pa.float64(), pa.int32()))]), "map key must be integral or string, not double"),
        (pa.struct([("m", pa.map_(pa.string(), pa.list_(pa.int32())))]), "map value cannot be a list or map"),
        (pa.struct([("bad name", pa.int32())]), "'bad name' is not a Protobuf identifier"),
        (pa.struct([("n", pa.null())]), "field topLevelRecord.n: no Protobuf type for null"),
    ],
)
def test_unmappable_types_are_refused_naming_the_field(arrow_type, message):
    with pytest.raises(InvalidSchemaError, match=message):
        schema_for_arrow("PROTOBUF", arrow_type)
