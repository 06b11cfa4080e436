"""schema_for_arrow: the Avro schema Spark's to_avro derives for a column's type."""

from __future__ import annotations

import datetime
import decimal
import json

import pyarrow as pa
import pytest

from spark_kafkalog.schemas.avro import AvroSchema, codec, schema_for_arrow
from spark_kafkalog.schemas.avro.to_avro import avro_type
from spark_kafkalog.schemas.providers import schema_for_arrow as provider_schema_for_arrow

# (arrow type, Avro JSON for a non-nullable column named "col" in record "topLevelRecord")
SCALARS = [
    (pa.bool_(), "boolean"),
    (pa.int8(), "int"),
    (pa.int16(), "int"),
    (pa.int32(), "int"),
    (pa.int64(), "long"),
    (pa.float32(), "float"),
    (pa.float64(), "double"),
    (pa.string(), "string"),
    (pa.binary(), "bytes"),
    (pa.date32(), {"type": "int", "logicalType": "date"}),
    (pa.timestamp("us", tz="UTC"), {"type": "long", "logicalType": "timestamp-micros"}),
    (pa.timestamp("us"), {"type": "long", "logicalType": "local-timestamp-micros"}),
    (pa.duration("us"), "long"),
    (
        pa.decimal128(10, 2),
        {
            "type": "fixed",
            "name": "fixed",
            "namespace": "topLevelRecord.col",
            "size": 5,
            "logicalType": "decimal",
            "precision": 10,
            "scale": 2,
        },
    ),
    (
        pa.decimal128(38, 18),
        {
            "type": "fixed",
            "name": "fixed",
            "namespace": "topLevelRecord.col",
            "size": 16,
            "logicalType": "decimal",
            "precision": 38,
            "scale": 18,
        },
    ),
    (pa.list_(pa.field("element", pa.int32(), nullable=False)), {"type": "array", "items": "int"}),
    (pa.list_(pa.int32()), {"type": "array", "items": ["int", "null"]}),
    (pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=True)), {"type": "map", "values": ["long", "null"]}),
]


@pytest.mark.parametrize(("arrow_type", "expected"), SCALARS)
def test_field_types_follow_spark_to_avro(arrow_type, expected):
    schema = schema_for_arrow(pa.struct([pa.field("col", arrow_type, nullable=False)]))
    assert schema.schema_json == {
        "type": "record",
        "name": "topLevelRecord",
        "fields": [{"name": "col", "type": expected}],
    }


def test_nullable_fields_become_unions_with_null_last():
    schema = schema_for_arrow(pa.struct([pa.field("a", pa.int32(), nullable=True), pa.field("n", pa.null())]))
    assert schema.canonical == (
        '{"type":"record","name":"topLevelRecord","fields":[{"name":"a","type":["int","null"]},{"name":"n","type":"null"}]}'
    )


def test_nested_records_are_named_after_their_field_in_the_parent_namespace():
    inner = pa.struct([pa.field("x", pa.int64(), nullable=False)])
    arrow_type = pa.struct(
        [
            pa.field("s", pa.struct([pa.field("t", inner, nullable=False)]), nullable=False),
            pa.field("l", pa.list_(pa.field("element", inner, nullable=False)), nullable=False),
        ]
    )
    schema = schema_for_arrow(arrow_type, record_name="Top", namespace="com.acme")
    assert schema.canonical == (
        '{"type":"record","name":"Top","namespace":"com.acme","fields":['
        '{"name":"s","type":{"type":"record","name":"s","namespace":"com.acme.Top","fields":['
        '{"name":"t","type":{"type":"record","name":"t","namespace":"com.acme.Top.s","fields":[{"name":"x","type":"long"}]}}]}},'
        '{"name":"l","type":{"type":"array","items":{"type":"record","name":"l","namespace":"com.acme.Top","fields":[{"name":"x","type":"long"}]}}}]}'
    )
    assert schema.name == "com.acme.Top"


def test_a_top_level_non_struct_column_is_a_plain_type():
    assert schema_for_arrow(pa.string()).canonical == '"string"'
    assert avro_type(pa.string(), True, "r", "") == ["string", "null"]


def test_types_without_an_avro_form_are_refused():
    with pytest.raises(TypeError, match="map with int32 keys"):
        schema_for_arrow(pa.map_(pa.int32(), pa.int32()))
    with pytest.raises(TypeError, match="no Avro type for the Arrow type time64"):
        schema_for_arrow(pa.time64("us"))


def test_the_provider_dispatches_avro():
    schema = provider_schema_for_arrow("AVRO", pa.struct([pa.field("a", pa.int64())]), record_name="R", namespace="n")
    assert isinstance(schema, AvroSchema)
    assert json.loads(schema.canonical)["name"] == "R"


def test_values_of_the_arrow_type_write_and_read_back_with_the_derived_schema():
    arrow_type = pa.struct(
        [
            pa.field("i", pa.int32()),
            pa.field("s", pa.string()),
            pa.field("d", pa.date32()),
            pa.field("ts", pa.timestamp("us", tz="UTC")),
            pa.field("ntz", pa.timestamp("us")),
            pa.field("dec", pa.decimal128(12, 3)),
            pa.field("l", pa.list_(pa.int64())),
            pa.field("m", pa.map_(pa.string(), pa.float64())),
            pa.field("st", pa.struct([pa.field("x", pa.bool_())])),
        ]
    )
    values = pa.array(
        [
            {
                "i": 1,
                "s": "a",
                "d": datetime.date(2020, 1, 1),
                "ts": datetime.datetime(2020, 1, 1, 1, 1, 1, 1, tzinfo=datetime.UTC),
                "ntz": datetime.datetime(2020, 1, 1, 2, 2, 2, 2),
                "dec": decimal.Decimal("-123456789.123"),
                "l": [1, None],
                "m": [("k", 1.5), ("n", None)],
                "st": {"x": True},
            },
            {"i": None, "s": None, "d": None, "ts": None, "ntz": None, "dec": None, "l": None, "m": None, "st": None},
        ],
        type=arrow_type,
    ).to_pylist()
    c = codec(schema_for_arrow(arrow_type))
    assert c.arrow_type == arrow_type
    decoded = c.decode_many(c.encode_many(values), c.reader)
    assert pa.array(decoded, type=c.arrow_type).to_pylist() == values
