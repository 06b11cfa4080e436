"""AvroCodec: Spark from_avro's Arrow types, decoding with schema resolution, encoding, and interop with
fastavro and confluent-kafka's AvroSerializer."""

from __future__ import annotations

import datetime
import decimal
import io
import json
import uuid

import fastavro
import pyarrow as pa
import pytest

from spark_kafkalog.schemas import InvalidSchemaError
from spark_kafkalog.schemas.avro import AvroCodec, AvroSchema, codec, parse
from spark_kafkalog.schemas.codec import DecodeError, EncodeError
from spark_kafkalog.schemas.providers import codec_for
from spark_kafkalog.schemas.wire_format import unframe

UTC = datetime.UTC


def avro(schema) -> AvroSchema:
    return parse(json.dumps(schema), (), {})


def record(*fields, name="R"):
    return {"type": "record", "name": name, "fields": [{"name": n, "type": t} for n, t in fields]}


def fastavro_bytes(schema: AvroSchema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema.fastavro_schema, datum)
    return out.getvalue()


# (avro type, arrow type, nullable)
ARROW_TYPES = [
    ("null", pa.null(), True),
    ("boolean", pa.bool_(), False),
    ("int", pa.int32(), False),
    ("long", pa.int64(), False),
    ("float", pa.float32(), False),
    ("double", pa.float64(), False),
    ("bytes", pa.binary(), False),
    ("string", pa.string(), False),
    ({"type": "int", "logicalType": "date"}, pa.date32(), False),
    ({"type": "long", "logicalType": "timestamp-millis"}, pa.timestamp("us", tz="UTC"), False),
    ({"type": "long", "logicalType": "timestamp-micros"}, pa.timestamp("us", tz="UTC"), False),
    ({"type": "long", "logicalType": "local-timestamp-millis"}, pa.timestamp("us"), False),
    ({"type": "long", "logicalType": "local-timestamp-micros"}, pa.timestamp("us"), False),
    ({"type": "int", "logicalType": "time-millis"}, pa.int32(), False),
    ({"type": "long", "logicalType": "time-micros"}, pa.int64(), False),
    ({"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 3}, pa.decimal128(9, 3), False),
    (
        {"type": "fixed", "name": "D", "size": 16, "logicalType": "decimal", "precision": 38},
        pa.decimal128(38, 0),
        False,
    ),
    ({"type": "string", "logicalType": "uuid"}, pa.string(), False),
    ({"type": "enum", "name": "E", "symbols": ["A"]}, pa.string(), False),
    ({"type": "fixed", "name": "F", "size": 3}, pa.binary(), False),
    ({"type": "array", "items": ["null", "int"]}, pa.list_(pa.field("element", pa.int32(), nullable=True)), False),
    ({"type": "array", "items": "int"}, pa.list_(pa.field("element", pa.int32(), nullable=False)), False),
    ({"type": "map", "values": "long"}, pa.map_(pa.string(), pa.field("value", pa.int64(), nullable=False)), False),
    (["null", "string"], pa.string(), True),
    (["string", "null"], pa.string(), True),
    (["string"], pa.string(), False),
    (["int", "long"], pa.int64(), False),
    (["null", "float", "double"], pa.float64(), True),
    (
        ["null", "int", "string"],
        pa.struct([pa.field("member0", pa.int32()), pa.field("member1", pa.string())]),
        True,
    ),
    (
        ["int", "string", {"type": "enum", "name": "E", "symbols": ["A"]}],
        pa.struct(
            [pa.field("member0", pa.int32()), pa.field("member1", pa.string()), pa.field("member2", pa.string())]
        ),
        False,  # Spark: a union without null is a struct that is never null
    ),
    (
        record(("a", "int"), ("b", ["null", "string"])),
        pa.struct([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string(), nullable=True)]),
        False,
    ),
]


@pytest.mark.parametrize(("avro_type", "arrow_type", "nullable"), ARROW_TYPES)
def test_arrow_type_follows_spark_from_avro(avro_type, arrow_type, nullable):
    c = codec(avro(avro_type))
    assert c.arrow_type == arrow_type
    assert c.nullable is nullable


def test_a_recursive_record_is_refused_by_name():
    with pytest.raises(InvalidSchemaError, match="recursive reference.*LinkedList"):
        codec(avro(record(("v", "int"), ("next", ["null", "LinkedList"]), name="LinkedList")))


SCHEMA = avro(
    {
        "type": "record",
        "name": "Row",
        "namespace": "t",
        "fields": [
            {"name": "i", "type": "int"},
            {"name": "s", "type": ["null", "string"]},
            {
                "name": "u",
                "type": [
                    "int",
                    "string",
                    {"type": "enum", "name": "E", "symbols": ["A", "B"]},
                    record(("x", "long"), name="S"),
                ],
            },
            {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "lts", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
            {
                "name": "dec",
                "type": {
                    "type": "fixed",
                    "name": "Dec",
                    "size": 8,
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            },
            {"name": "m", "type": {"type": "map", "values": ["null", "E"]}},
            {"name": "a", "type": {"type": "array", "items": "S"}},
            {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "n", "type": ["null", "int", "long"]},
        ],
    }
)
U = uuid.UUID("12345678-1234-5678-1234-567812345678")


def row(i, u, s=None, n=None):
    return {
        "i": i,
        "s": s,
        "u": u,
        "d": datetime.date(2024, 2, 29),
        "ts": datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
        "lts": datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
        "dec": decimal.Decimal("-12.34"),
        "m": [("k", "A"), ("z", None)],
        "a": [{"x": 1}, {"x": -2}],
        "tm": 3_723_004,
        "id": str(U),
        "n": n,
    }


def member(index, value):
    out = {f"member{i}": None for i in range(4)}
    out[f"member{index}"] = value
    return out


ROWS = [
    row(1, member(0, 7)),
    row(2, member(1, "seven"), s="x", n=5),
    row(3, member(2, "B")),
    row(4, member(3, {"x": 9})),
]


def test_values_round_trip_through_arrow():
    c = codec(SCHEMA)
    decoded = c.decode_many(c.encode_many(ROWS), SCHEMA)
    assert pa.array(decoded, type=c.arrow_type).to_pylist() == ROWS


def test_decode_reads_what_fastavro_writes_keeping_the_union_branch():
    datum = {
        "i": 1,
        "s": "s",
        "u": ("t.S", {"x": 3}),
        "d": datetime.date(2024, 2, 29),
        "ts": datetime.datetime(2024, 1, 2, tzinfo=UTC),
        "lts": datetime.datetime(2024, 1, 2),
        "dec": decimal.Decimal("1.50"),
        "m": {"k": "B"},
        "a": [],
        "tm": datetime.time(1, 2, 3, 4000),
        "id": U,
        "n": 2**40,
    }
    value = codec(SCHEMA).decode(fastavro_bytes(SCHEMA, datum), SCHEMA)
    assert value["u"] == member(3, {"x": 3})
    assert value["m"] == {"k": "B"}
    assert value["tm"] == 3_723_004
    assert value["id"] == str(U)
    assert value["n"] == 2**40
    assert value["dec"] == decimal.Decimal("1.50")


def test_encode_writes_what_fastavro_reads():
    c = codec(SCHEMA)
    for value in ROWS:
        datum = fastavro.schemaless_reader(io.BytesIO(c.encode(value)), SCHEMA.fastavro_schema, None)
        assert datum["i"] == value["i"]
        assert datum["m"] == dict(value["m"])
    assert fastavro.schemaless_reader(io.BytesIO(c.encode(ROWS[2])), SCHEMA.fastavro_schema, None)["u"] == "B"


def test_union_branches_are_told_apart_by_name_when_types_collide():
    schema = avro(["string", {"type": "enum", "name": "E", "symbols": ["A"]}])
    c = codec(schema)
    assert c.decode(fastavro_bytes(schema, ("E", "A")), schema) == {"member0": None, "member1": "A"}
    assert c.decode(fastavro_bytes(schema, "A"), schema) == {"member0": "A", "member1": None}
    assert c.encode({"member0": None, "member1": "A"}) == fastavro_bytes(schema, ("E", "A"))


def test_decode_resolves_the_writer_schema_against_the_reader():
    writer = avro({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"},
        {"name": "gone", "type": "string"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "NEW"]}},
    ]})  # fmt: skip
    reader = avro({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "long"},
        {"name": "added", "type": ["null", "string"], "default": None},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "OTHER"], "default": "OTHER"}},
        {"name": "u", "type": ["null", "int", "string"], "default": None},
    ]})  # fmt: skip
    c = codec(reader)
    payloads = [fastavro_bytes(writer, {"a": i, "gone": "g", "e": e}) for i, e in ((1, "X"), (2, "NEW"))]
    expected = [
        {"a": 1, "added": None, "e": "X", "u": None},
        {"a": 2, "added": None, "e": "OTHER", "u": None},
    ]
    assert c.decode_many(payloads, writer) == expected
    assert [c.decode(p, writer) for p in payloads] == expected
    assert pa.array(expected, type=c.arrow_type).type == c.arrow_type


def test_a_reader_union_reads_a_plain_writer_into_the_right_member():
    writer = avro(record(("u", "string")))
    reader = avro(record(("u", ["null", "int", "string"])))
    assert codec(reader).decode(fastavro_bytes(writer, {"u": "x"}), writer) == {"u": {"member0": None, "member1": "x"}}


@pytest.mark.parametrize(
    ("payload", "reason"),
    [(b"", "EOFError|payload of 0 bytes"), (b"\x02\x00\x00", "bytes left"), (b"\x80", "payload of 1 bytes")],
)
def test_a_bad_payload_raises_decode_error(payload, reason):
    schema = avro(record(("a", "int")))
    with pytest.raises(DecodeError, match=reason):
        codec(schema).decode(payload, schema)


def test_decode_many_names_the_failing_payload():
    schema = avro(record(("a", "int")))
    c = codec(schema)
    good = c.encode({"a": 1})
    with pytest.raises(DecodeError, match="payload 1"):
        c.decode_many([good, good + b"\x00", good], schema)


def test_decode_refuses_a_writer_of_another_type():
    class NotAvro(AvroSchema.__mro__[1]):  # a ParsedSchema of another type
        schema_type = "JSON"
        canonical = "{}"
        references = ()
        name = None

        def normalized(self):
            return self

        def is_backward_compatible(self, previous):
            return []

    schema = avro("int")
    with pytest.raises(DecodeError, match="Avro writer schema, not JSON"):
        codec(schema).decode(b"\x02", NotAvro())


@pytest.mark.parametrize(
    ("value", "reason"),
    [({"a": "x"}, "a dict .* with R"), ("not a dict", "a str .* with R"), (None, "NoneType")],
)
def test_a_value_that_does_not_fit_raises_encode_error(value, reason):
    with pytest.raises(EncodeError, match=reason):
        codec(avro(record(("a", "int")))).encode(value)


def test_a_union_struct_without_a_member_set_and_no_null_is_refused():
    with pytest.raises(EncodeError, match="member0, member1"):
        codec(avro(["int", "string"])).encode({"member0": None, "member1": None})


def test_codec_for_dispatches_to_avro_and_refuses_unknown_options():
    schema = avro("string")
    assert isinstance(codec_for(schema), AvroCodec)
    with pytest.raises(TypeError, match="unknown Avro codec options: bogus"):
        codec_for(schema, bogus=1)


def test_confluent_kafka_avro_serializer_output_decodes_with_our_codec():
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    registry = SchemaRegistryClient.new_client({"url": "mock://"})
    schema_str = json.dumps(
        {
            "type": "record",
            "name": "Order",
            "namespace": "shop",
            "fields": [
                {"name": "id", "type": "long"},
                {"name": "item", "type": "string"},
                {"name": "qty", "type": ["null", "int"], "default": None},
                {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
                {"name": "tags", "type": {"type": "array", "items": "string"}},
            ],
        }
    )
    serializer = AvroSerializer(registry, schema_str)
    context = SerializationContext("orders", MessageField.VALUE)
    at = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    values = [
        {"id": i, "item": f"item-{i}", "qty": i if i % 2 else None, "at": at, "tags": ["a"] * i} for i in range(4)
    ]
    framed = [serializer(v, context) for v in values]
    schema_id, indexes, _ = unframe(framed[0])
    writer = parse(registry.get_schema(schema_id).schema_str, (), {})
    assert indexes == ()
    assert writer.canonical == json.dumps(json.loads(schema_str), separators=(",", ":"))
    c = codec(writer)
    assert c.decode_many([unframe(f)[2] for f in framed], writer) == values
    assert pa.array(c.decode_many([unframe(f)[2] for f in framed], writer), type=c.arrow_type).to_pylist() == values
