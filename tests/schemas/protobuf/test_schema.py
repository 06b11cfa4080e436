"""ProtobufSchema: text and serialized forms, references and well-known imports, message indexes, normalization."""

from __future__ import annotations

import base64

import pytest
from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas import InvalidSchemaError, SchemaReference, parse_schema
from spark_kafkalog.schemas.protobuf import ProtobufSchema

ORDER = """
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Order {
  string id = 1;
  map<string, int32> tags = 2;
  Line first = 3;
  message Line { string sku = 1; }
  google.protobuf.Timestamp at = 4;
}
message Refund { string order_id = 1; }
"""


def parse(text: str, refs: dict[str, ProtobufSchema] | None = None) -> ProtobufSchema:
    refs = refs or {}
    references = [SchemaReference(name, f"{name}-subject", 1) for name in refs]
    schema = parse_schema("PROTOBUF", text, references, refs)
    assert isinstance(schema, ProtobufSchema)
    return schema


def test_text_and_its_serialized_descriptor_are_one_schema():
    from_text = parse(ORDER)
    serialized = from_text.formatted("serialized")
    from_descriptor = parse(serialized)
    assert from_descriptor == from_text
    assert from_descriptor.canonical == from_text.canonical
    assert hash(from_descriptor) == hash(from_text)


def test_serialized_format_is_base64_of_the_file_descriptor():
    schema = parse(ORDER)
    decoded = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(schema.formatted("serialized")))
    assert decoded == schema.file_descriptor_proto
    assert decoded.dependency == ["google/protobuf/timestamp.proto"]
    assert schema.formatted(None) == schema.canonical
    assert schema.formatted("resolved") == schema.canonical


def test_canonical_text_parses_back_to_the_same_schema():
    schema = parse(ORDER)
    assert parse(schema.canonical) == schema
    assert parse(schema.canonical).file_descriptor_proto == schema.file_descriptor_proto


def test_name_is_the_first_messages_full_name():
    assert parse(ORDER).name == "shop.Order"
    assert parse('syntax = "proto3"; message M {}').name == "M"
    assert parse('syntax = "proto3"; enum E { A = 0; }').name is None


def test_message_names_and_indexes_follow_the_descriptor():
    schema = parse(ORDER)
    # nested_type of Order: TagsEntry (map entry, counted), Line
    assert schema.message_names() == ["shop.Order", "shop.Order.Line", "shop.Refund"]
    assert schema.message_indexes("shop.Order") == (0,)
    assert schema.message_indexes("shop.Order.Line") == (0, 1)
    assert schema.message_indexes("Refund") == (1,)
    assert schema.message_descriptor((0, 1)).full_name == "shop.Order.Line"
    assert schema.message_descriptor(()).full_name == "shop.Order"
    assert schema.message_descriptor([1]).full_name == "shop.Refund"
    with pytest.raises(KeyError, match="no message 'Nope'"):
        schema.message_indexes("Nope")
    with pytest.raises(KeyError, match="out of range"):
        schema.message_descriptor((0, 5))


def test_pool_holds_the_file_and_its_imports():
    schema = parse(ORDER)
    descriptor = schema.pool.FindMessageTypeByName("shop.Order")
    assert descriptor.fields_by_name["at"].message_type.full_name == "google.protobuf.Timestamp"


def test_imports_resolve_to_references_by_import_path():
    common = parse('syntax = "proto3"; package common; message Money { int64 units = 1; string currency = 2; }')
    text = """syntax = "proto3"; package shop; import "common/money.proto";
    message Price { common.Money amount = 1; }"""
    schema = parse(text, {"common/money.proto": common})
    assert schema.references == (SchemaReference("common/money.proto", "common/money.proto-subject", 1),)
    field = schema.message_descriptor((0,)).fields_by_name["amount"]
    assert field.message_type.full_name == "common.Money"
    assert schema.dependencies == {"common/money.proto": common}
    # the serialized form names the import as the reference does (as confluent-kafka resolves it)
    again = parse(schema.formatted("serialized"), {"common/money.proto": common})
    assert again == schema


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('syntax = "proto3"; import "other.proto"; message M {}', "unresolved imports other.proto"),
        ('syntax = "proto3";\nmessage M { Other o = 1; }', "line 2, column 13: unknown type 'Other'"),
        ('syntax = "proto3"; message M { int32 a = 1; int32 b = 1; }', "invalid Protobuf schema"),
        ("message {", "invalid .proto schema"),
    ],
)
def test_invalid_schemas_raise_naming_the_problem(text, message):
    with pytest.raises(InvalidSchemaError, match=message):
        parse(text)


def test_a_reference_of_another_type_is_refused():
    from spark_kafkalog.schemas.protobuf.schema import ProtobufSchema as PS

    class NotProtobuf:
        schema_type = "AVRO"

    with pytest.raises(InvalidSchemaError, match="AVRO schema, not PROTOBUF"):
        PS.parse('syntax = "proto3"; import "x.proto"; message M {}', (), {"x.proto": NotProtobuf()})  # type: ignore[dict-item]


def test_normalized_sorts_imports_fields_oneofs_and_enum_values_but_not_messages():
    text = """syntax = "proto3";
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/duration.proto";
    message B {
      int32 z = 3;
      oneof second { string s = 9; }
      oneof first { string f = 4; }
      int32 a = 1;
      google.protobuf.Timestamp t = 2;
      google.protobuf.Duration d = 5;
      reserved 20, 10;
      reserved "y", "x";
    }
    message A { }
    enum E { Y = 0; Z = 2; X = 1; }
    """
    normalized = parse(text).normalized()
    fdp = normalized.file_descriptor_proto
    assert list(fdp.dependency) == ["google/protobuf/duration.proto", "google/protobuf/timestamp.proto"]
    assert [m.name for m in fdp.message_type] == ["B", "A"]
    b = fdp.message_type[0]
    assert [f.number for f in b.field] == [1, 2, 3, 4, 5, 9]
    assert [o.name for o in b.oneof_decl] == ["first", "second"]
    assert {f.name: f.oneof_index for f in b.field if f.HasField("oneof_index")} == {"f": 0, "s": 1}
    assert [(r.start, r.end) for r in b.reserved_range] == [(10, 11), (20, 21)]
    assert list(b.reserved_name) == ["x", "y"]
    assert [v.name for v in fdp.enum_type[0].value] == ["Y", "X", "Z"]
    assert normalized.normalized() == normalized
    # the same schema written in another order normalizes to the same thing
    reordered = text.replace("int32 z = 3;", "").replace("int32 a = 1;", "int32 a = 1; int32 z = 3;")
    assert parse(reordered).normalized() == normalized
    assert parse(reordered) != parse(text)
