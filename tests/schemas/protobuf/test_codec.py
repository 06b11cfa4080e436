"""ProtobufCodec: Spark's from_protobuf types and values, schema evolution by field name, encoding, and
payloads of confluent-kafka's ProtobufSerializer (and ours read by its ProtobufDeserializer)."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry._sync.mock_schema_registry_client import MockSchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2

from spark_kafkalog.schemas import InvalidSchemaError, SchemaReference, parse_schema
from spark_kafkalog.schemas.codec import DecodeError, EncodeError
from spark_kafkalog.schemas.protobuf import ProtobufCodec, ProtobufSchema
from spark_kafkalog.schemas.providers import codec_for
from spark_kafkalog.schemas.wire_format import frame, unframe

UTC = datetime.UTC


def proto(text: str) -> ProtobufSchema:
    schema = parse_schema("PROTOBUF", text)
    assert isinstance(schema, ProtobufSchema)
    return schema


SCALARS = proto(
    """syntax = "proto3"; package t;
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/duration.proto";
    message All {
      int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3; uint32 u32 = 4; fixed32 f32 = 5;
      int64 i64 = 6; sint64 s64 = 7; sfixed64 sf64 = 8; uint64 u64 = 9; fixed64 f64 = 10;
      float fl = 11; double db = 12; bool b = 13; string s = 14; bytes raw = 15;
      Color color = 16;
      Inner inner = 17;
      repeated int32 nums = 18;
      map<string, Inner> by_name = 19;
      google.protobuf.Timestamp at = 20;
      google.protobuf.Duration took = 21;
      optional int32 maybe = 22;
      oneof pick { string text = 23; int64 number = 24; }
      message Inner { string name = 1; repeated string tags = 2; }
      enum Color { RED = 0; GREEN = 1; }
    }"""
)

INNER = pa.struct([("name", pa.string()), ("tags", pa.list_(pa.string()))])
ALL_TYPE = pa.struct(
    [
        ("i32", pa.int32()),
        ("s32", pa.int32()),
        ("sf32", pa.int32()),
        ("u32", pa.int32()),
        ("f32", pa.int32()),
        ("i64", pa.int64()),
        ("s64", pa.int64()),
        ("sf64", pa.int64()),
        ("u64", pa.int64()),
        ("f64", pa.int64()),
        ("fl", pa.float32()),
        ("db", pa.float64()),
        ("b", pa.bool_()),
        ("s", pa.string()),
        ("raw", pa.binary()),
        ("color", pa.string()),
        ("inner", INNER),
        ("nums", pa.list_(pa.int32())),
        ("by_name", pa.map_(pa.string(), INNER)),
        ("at", pa.timestamp("us", tz="UTC")),
        ("took", pa.duration("us")),
        ("maybe", pa.int32()),
        ("text", pa.string()),
        ("number", pa.int64()),
    ]
)

FULL_VALUE = {
    "i32": -1,
    "s32": -2,
    "sf32": -3,
    "u32": 4,
    "f32": 5,
    "i64": -(2**40),
    "s64": -7,
    "sf64": -8,
    "u64": 2**40,
    "f64": 10,
    "fl": 1.5,
    "db": 2.25,
    "b": True,
    "s": "héllo",
    "raw": b"\x00\xff",
    "color": "GREEN",
    "inner": {"name": "n", "tags": ["a", "b"]},
    "nums": [1, 2, 3],
    "by_name": [("k", {"name": "v", "tags": []})],
    "at": datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
    "took": datetime.timedelta(seconds=90, microseconds=5),
    "maybe": 0,
    "text": None,
    "number": 42,
}


def test_arrow_type_follows_sparks_from_protobuf():
    assert codec_for(SCALARS).arrow_type == ALL_TYPE


def test_enums_as_ints_reads_enums_as_int32():
    codec = codec_for(SCALARS, enums_as_ints=True)
    assert codec.arrow_type.field("color").type == pa.int32()
    assert codec.decode(codec.encode({"color": 1}), SCALARS)["color"] == 1


def test_a_full_value_round_trips_and_builds_an_arrow_array():
    codec = codec_for(SCALARS)
    decoded = codec.decode(codec.encode(FULL_VALUE), SCALARS)
    assert decoded == FULL_VALUE
    array = pa.array([decoded], type=codec.arrow_type)
    assert array.to_pylist()[0]["by_name"] == [("k", {"name": "v", "tags": []})]


def test_unset_fields_read_as_spark_reads_them():
    empty = {name: None for name in ALL_TYPE.names} | {"nums": [], "by_name": []}
    codec = codec_for(SCALARS)
    assert codec.decode(codec.encode({}), SCALARS) == empty
    # zero values of fields without presence are indistinguishable from unset ones
    assert codec.decode(codec.encode({"i32": 0, "s": "", "nums": []}), SCALARS) == empty
    # fields with presence keep a set zero
    assert codec.decode(codec.encode({"maybe": 0, "inner": {}}), SCALARS) == empty | {
        "maybe": 0,
        "inner": {"name": None, "tags": []},
    }
    emitting = codec_for(SCALARS, emit_default_values=True)
    decoded = emitting.decode(emitting.encode({}), SCALARS)
    assert (decoded["i32"], decoded["s"], decoded["color"], decoded["nums"], decoded["by_name"]) == (
        0,
        "",
        "RED",
        [],
        [],
    )
    assert (decoded["maybe"], decoded["inner"], decoded["text"], decoded["at"]) == (None, None, None, None)


def test_proto2_explicit_defaults_read_when_unset():
    schema = proto(
        'syntax = "proto2"; message M { optional int32 n = 1 [default = 7]; optional E e = 2 [default = B];'
        " optional string s = 3; enum E { A = 1; B = 2; } }"
    )
    codec = codec_for(schema)
    assert codec.decode(b"", schema) == {"n": 7, "e": "B", "s": None}
    assert codec.decode(codec.encode({"n": 1, "s": ""}), schema) == {"n": 1, "e": "B", "s": ""}


def test_an_enum_number_the_writer_does_not_name_reads_as_javas_unknown_value():
    writer = proto('syntax = "proto3"; message M { E e = 1; enum E { A = 0; B = 1; C = 7; } }')
    reader = proto('syntax = "proto3"; message M { E e = 1; enum E { A = 0; B = 1; } }')
    payload = codec_for(writer).encode({"e": "C"})
    # the writer's schema names it
    assert codec_for(reader).decode(payload, writer) == {"e": "C"}
    # a writer schema without the name: Java's name of an unknown value
    assert codec_for(reader).decode(payload, reader) == {"e": "UNKNOWN_ENUM_VALUE_E_7"}


def test_decoding_converts_by_field_name_from_the_writers_message():
    writer = proto('syntax = "proto3"; package v1; message M { int32 n = 1; string gone = 2; bytes label = 3; }')
    reader = proto('syntax = "proto3"; package v2; message M { int64 n = 1; string label = 3; double added = 4; }')
    payload = codec_for(writer).encode({"n": -5, "gone": "x", "label": b"text"})
    assert codec_for(reader).decode(payload, writer) == {"n": -5, "label": "text", "added": None}


def test_decoding_refuses_a_field_of_another_kind():
    writer = proto('syntax = "proto3"; message M { repeated int32 n = 1; }')
    reader = proto('syntax = "proto3"; message M { int32 n = 1; }')
    with pytest.raises(DecodeError, match="field M.n"):
        codec_for(reader).decode(codec_for(writer).encode({"n": [1]}), writer)


def test_garbage_payloads_raise_decode_error_with_their_index():
    codec = codec_for(SCALARS)
    with pytest.raises(DecodeError, match="not a t.All message"):
        codec.decode(b"\xff\xff\xff", SCALARS)
    good = codec.encode({"i32": 1})
    with pytest.raises(DecodeError, match="payload 1: not a t.All message"):
        codec.decode_many([good, b"\x0a\xff"], SCALARS)
    assert codec.decode_many([good, good], SCALARS) == [codec.decode(good, SCALARS)] * 2


def test_writer_message_indexes_select_the_written_message():
    schema = proto('syntax = "proto3"; message A { string a = 1; } message B { string b = 1; string a = 2; }')
    b_codec = codec_for(schema, message="B")
    assert b_codec.message_indexes == (1,)
    payload = b_codec.encode({"b": "x", "a": "y"})
    # read B's bytes into A's shape: field a is number 2 in B
    assert codec_for(schema).decode(payload, schema, (1,)) == {"a": "y"}
    with pytest.raises(DecodeError, match="no message at indexes"):
        codec_for(schema).decode(payload, schema, (5,))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"nope": 1}, "t.All has no field 'nope'"),
        ({"i32": "1"}, "field t.All.i32: an integer field needs int, not str"),
        ({"i32": 2**40}, "field t.All.i32"),
        ({"color": "BLUE"}, "t.All.Color has no value 'BLUE'"),
        ({"nums": [1, None]}, r"field t.All.nums\[1\]: a repeated field cannot hold null"),
        ({"inner": "x"}, "a t.All.Inner message needs a dict, not str"),
        ({"at": 5}, "a Timestamp needs a datetime, not int"),
        ({"s": b"x"}, "a string field needs str, not bytes"),
        ("x", "a t.All message needs a dict"),
    ],
)
def test_encode_errors_name_the_field(value, message):
    with pytest.raises(EncodeError, match=message):
        codec_for(SCALARS).encode(value)


def test_unsigned_fields_read_and_write_as_sparks_signed_integers():
    schema = proto('syntax = "proto3"; message M { uint32 u = 1; fixed64 f = 2; repeated uint32 us = 3; }')
    codec = codec_for(schema)
    assert codec.arrow_type == pa.struct([("u", pa.int32()), ("f", pa.int64()), ("us", pa.list_(pa.int32()))])
    value = {"u": -1, "f": -(2**63), "us": [2**31 - 1, -(2**31)]}
    payload = codec.encode(value)
    assert codec.decode(payload, schema) == value
    # the wire holds the unsigned numbers
    wide = proto('syntax = "proto3"; message M { uint64 u = 1; }')
    assert codec_for(wide).decode(payload, schema) == {"u": 2**32 - 1}
    with pytest.raises(EncodeError, match="out of range for uint32"):
        codec.encode({"u": 2**32})


def test_a_closed_enum_refuses_a_number_it_does_not_name():
    schema = proto('syntax = "proto2"; message M { optional E e = 1; enum E { A = 1; } }')
    with pytest.raises(EncodeError, match="field M.e"):
        codec_for(schema).encode({"e": 9})


def test_codecs_and_schemas_survive_pickling_as_spark_ships_them():
    import pickle

    common = proto('syntax = "proto3"; package c; message Money { int64 units = 1; }')
    schema = parse_schema(
        "PROTOBUF",
        'syntax = "proto3"; import "c.proto"; message A {} message B { c.Money m = 1; repeated int32 n = 2; }',
        [SchemaReference("c.proto", "c-value", 1)],
        {"c.proto": common},
    )
    codec = codec_for(schema, message="B", enums_as_ints=True)
    copy = pickle.loads(pickle.dumps(codec))
    assert copy.reader == schema and copy.reader.dependencies == {"c.proto": common}
    assert (copy.message_indexes, copy.arrow_type, copy.enums_as_ints) == ((1,), codec.arrow_type, True)
    payload = codec.encode({"m": {"units": 5}, "n": [1]})
    assert copy.decode(payload, pickle.loads(pickle.dumps(schema)), (1,)) == {"m": {"units": 5}, "n": [1]}


def test_recursive_messages_have_no_spark_type():
    schema = proto(
        'syntax = "proto3"; package r; message Tree { repeated Node nodes = 1; } message Node { Tree sub = 1; }'
    )
    with pytest.raises(InvalidSchemaError, match=r"recursive Protobuf message r.Tree -> r.Node -> r.Tree"):
        codec_for(schema)


def test_a_codec_for_an_unknown_message_names_the_messages():
    with pytest.raises(InvalidSchemaError, match="no message 'Nope'.*t.All"):
        ProtobufCodec(SCALARS, message="Nope")


def _message_class(schema: ProtobufSchema, full_name: str, file_name: str) -> type:
    """A generated-like message class in its own pool, as an application would have it."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    fdp = descriptor_pb2.FileDescriptorProto()
    fdp.CopyFrom(schema.file_descriptor_proto)
    fdp.name = file_name
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))


ORDERS = proto(
    """syntax = "proto3"; package shop;
    import "google/protobuf/timestamp.proto";
    message Other { int32 x = 1; }
    message Order {
      string id = 1;
      int64 amount = 2;
      map<string, int32> tags = 3;
      google.protobuf.Timestamp at = 4;
      message Line { string sku = 1; int32 qty = 2; }
      repeated Line lines = 5;
    }"""
)


def test_confluent_serializer_payloads_decode_with_our_codec():
    order_class = _message_class(ORDERS, "shop.Order", "shop/order.proto")
    registry = MockSchemaRegistryClient({"url": "mock://protobuf-codec"})
    serializer = ProtobufSerializer(order_class, registry, {"use.deprecated.format": False})
    message = order_class(id="o-1", amount=7, tags={"k": 3})
    message.at.FromSeconds(100)
    message.lines.add(sku="s", qty=2)
    data = serializer(message, SerializationContext("orders", MessageField.VALUE))
    schema_id, indexes, payload = unframe(data, protobuf=True)
    assert indexes == (1,)
    registered = registry.get_schema(schema_id)
    writer = parse_schema("PROTOBUF", registered.schema_str)  # confluent registers a base64 descriptor
    assert writer == ORDERS
    codec = codec_for(ORDERS, message="shop.Order")
    assert codec.decode(payload, writer, indexes) == {
        "id": "o-1",
        "amount": 7,
        "tags": [("k", 3)],
        "at": datetime.datetime(1970, 1, 1, 0, 1, 40, tzinfo=UTC),
        "lines": [{"sku": "s", "qty": 2}],
    }


def test_our_payloads_decode_with_confluents_deserializer():
    order_class = _message_class(ORDERS, "shop.Order", "shop/order.proto")
    registry = MockSchemaRegistryClient({"url": "mock://protobuf-codec-2"})
    from confluent_kafka.schema_registry import Schema

    schema_id = registry.register_schema("orders-value", Schema(ORDERS.formatted("serialized"), "PROTOBUF"))
    codec = codec_for(ORDERS, message="shop.Order")
    value = {"id": "b", "amount": 9, "tags": {"z": 1}, "at": None, "lines": [{"sku": "q", "qty": 1}]}
    data = frame(schema_id, codec.encode(value), codec.message_indexes)
    deserializer = ProtobufDeserializer(order_class, {"use.deprecated.format": False}, registry)
    message = deserializer(data, SerializationContext("orders", MessageField.VALUE))
    assert (message.id, message.amount, dict(message.tags)) == ("b", 9, {"z": 1})
    assert [(line.sku, line.qty) for line in message.lines] == [("q", 1)]
    assert not message.HasField("at")
