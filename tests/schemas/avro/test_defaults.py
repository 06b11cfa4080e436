"""Field defaults as datums: what fastavro's resolution fills in for a field the writer lacks, as Avro Java
(Spark's ``from_avro``) reads the default, and the codec's decoding through that path."""

from __future__ import annotations

import datetime as dt
import decimal
import io

import fastavro
import pytest

from spark_kafkalog.schemas.avro import codec
from spark_kafkalog.schemas.avro.defaults import datum, with_datum_defaults
from spark_kafkalog.schemas.avro.schema import AvroSchema

DEFAULTS = [
    ("bytes", "\u00ff\u0000", b"\xff\x00"),
    ({"type": "fixed", "name": "F", "size": 2}, "ab", b"ab"),
    ({"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}, "\u0001", decimal.Decimal("0.01")),
    ({"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}, "\u00ff", decimal.Decimal("-0.01")),
    (
        {"type": "fixed", "name": "M", "size": 2, "logicalType": "decimal", "precision": 4, "scale": 1},
        "\u0001\u0000",
        decimal.Decimal("25.6"),
    ),
    ({"type": "int", "logicalType": "date"}, 1, dt.date(1970, 1, 2)),
    ({"type": "long", "logicalType": "timestamp-millis"}, 1500, dt.datetime(1970, 1, 1, 0, 0, 1, 500000, dt.UTC)),
    ({"type": "long", "logicalType": "timestamp-micros"}, -1, dt.datetime(1969, 12, 31, 23, 59, 59, 999999, dt.UTC)),
    ({"type": "long", "logicalType": "local-timestamp-micros"}, 7, dt.datetime(1970, 1, 1, 0, 0, 0, 7)),
    ({"type": "int", "logicalType": "time-millis"}, 61001, dt.time(0, 1, 1, 1000)),
    ("double", 1, 1),  # numbers as the JSON has them: float64 in Arrow either way
    ("string", "x", "x"),
    (["null", "bytes"], None, None),
    (["bytes", "null"], "\u0002", b"\x02"),
    ({"type": "array", "items": "bytes"}, ["a", "\u00e9"], [b"a", b"\xe9"]),
    ({"type": "map", "values": {"type": "int", "logicalType": "date"}}, {"k": 0}, {"k": dt.date(1970, 1, 1)}),
    (
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "b", "type": "bytes"}, {"name": "n", "type": "int", "default": 3}],
        },
        {"b": "z"},
        {"b": b"z", "n": 3},
    ),
    ({"type": "int", "logicalType": "date"}, "not a number", "not a number"),  # does not fit: left as it was
]


@pytest.mark.parametrize(("avro_type", "default", "expected"), DEFAULTS)
def test_a_default_is_the_datum_avro_java_reads(avro_type, default, expected):
    got = datum(default, fastavro.parse_schema(avro_type) if isinstance(avro_type, dict) else avro_type, {})
    assert got == expected and type(got) is type(expected)


WRITER = {"type": "record", "name": "A", "namespace": "n", "fields": [{"name": "id", "type": "long"}]}
READER = {
    "type": "record",
    "name": "A",
    "namespace": "n",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}, "default": "\u0000\u0064"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}, "default": 2},
        {"name": "in", "type": {"type": "record", "name": "In", "fields": [{"name": "raw", "type": "bytes", "default": "\u0001"}]}, "default": {}},
        {"name": "again", "type": "In", "default": {"raw": "\u0002"}},
    ],
}  # fmt: skip


def test_the_copy_converts_every_field_default_once_and_leaves_the_parsed_schema_alone():
    reader = AvroSchema(READER)
    before = repr(reader.fastavro_schema)
    copy = with_datum_defaults(reader.fastavro_schema)
    assert repr(reader.fastavro_schema) == before
    named = copy["__named_schemas"]
    assert named["n.In"]["fields"][0]["default"] == b"\x01"  # converted once, not latin-1 of bytes again
    assert [f["default"] for f in copy["fields"][1:]] == [
        decimal.Decimal("1.00"),
        dt.date(1970, 1, 3),
        {"raw": b"\x01"},
        {"raw": b"\x02"},
    ]


def test_fastavros_resolution_in_the_codec_fills_defaults_as_datums():
    stream = io.BytesIO()
    fastavro.schemaless_writer(stream, fastavro.parse_schema(WRITER), {"id": 5})
    for project in (True, False):  # the projection leaves these defaults to fastavro's resolution either way
        got = codec(AvroSchema(READER), project=project).decode(stream.getvalue(), AvroSchema(WRITER))
        assert got == {
            "id": 5,
            "amount": decimal.Decimal("1.00"),
            "day": dt.date(1970, 1, 3),
            "in": {"raw": b"\x01"},
            "again": {"raw": b"\x02"},
        }
