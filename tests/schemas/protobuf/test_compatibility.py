"""Confluent's Protobuf compatibility rules: each difference type, both directions, and the levels."""

from __future__ import annotations

import pytest

from spark_kafkalog.schemas import SchemaReference, compatibility_errors, parse_schema
from spark_kafkalog.schemas.protobuf import ProtobufSchema
from spark_kafkalog.schemas.protobuf.compatibility import differences


def proto(body: str, *, syntax: str = "proto3", package: str = "p") -> ProtobufSchema:
    schema = parse_schema("PROTOBUF", f'syntax = "{syntax}"; package {package}; {body}')
    assert isinstance(schema, ProtobufSchema)
    return schema


def diff(path: str, kind: str) -> str:
    return f"Difference{{fullPath='{path}', type={kind}}}"


# (old, new, errors of new.is_backward_compatible(old))
CASES = {
    "a field added": ("message M { int32 a = 1; }", "message M { int32 a = 1; string b = 2; }", []),
    "a field removed": ("message M { int32 a = 1; string b = 2; }", "message M { int32 a = 1; }", []),
    "a field renamed": ("message M { int32 a = 1; }", "message M { int32 renamed = 1; }", []),
    "int32 to int64 (one group)": ("message M { int32 a = 1; }", "message M { int64 a = 1; }", []),
    "uint64 to bool (one group)": ("message M { uint64 a = 1; }", "message M { bool a = 1; }", []),
    "enum to int32 (enums are general numbers)": (
        "message M { E a = 1; } enum E { Z = 0; }",
        "message M { int32 a = 1; } enum E { Z = 0; }",
        [],
    ),
    "string to bytes": ("message M { string a = 1; }", "message M { bytes a = 1; }", []),
    "fixed32 to sfixed32": ("message M { fixed32 a = 1; }", "message M { sfixed32 a = 1; }", []),
    "sint32 to sint64": ("message M { sint32 a = 1; }", "message M { sint64 a = 1; }", []),
    "int32 to sint32": (
        "message M { int32 a = 1; }",
        "message M { sint32 a = 1; }",
        [diff("#/M/1", "FIELD_SCALAR_KIND_CHANGED")],
    ),
    "float to double": (
        "message M { float a = 1; }",
        "message M { double a = 1; }",
        [diff("#/M/1", "FIELD_SCALAR_KIND_CHANGED")],
    ),
    "scalar to message": (
        "message M { int32 a = 1; } message N {}",
        "message M { N a = 1; } message N {}",
        [diff("#/M/1", "FIELD_KIND_CHANGED")],
    ),
    "scalar to map": (
        "message M { string a = 1; }",
        "message M { map<string, string> a = 1; }",
        [diff("#/M/1", "FIELD_KIND_CHANGED")],
    ),
    "a map's value scalar kind": (
        "message M { map<string, string> a = 1; }",
        "message M { map<string, double> a = 1; }",
        [diff("#/M/1", "FIELD_SCALAR_KIND_CHANGED")],
    ),
    "a message field's type renamed": (
        "message M { A a = 1; } message A {} message B {}",
        "message M { B a = 1; } message A {} message B {}",
        [diff("#/M/1", "FIELD_NAMED_TYPE_CHANGED")],
    ),
    "a referenced message changed incompatibly": (
        "message M { Line first = 3; message Line { string sku = 1; } }",
        "message M { Line first = 3; message Line { double sku = 1; } }",
        [diff("#/M/Line/1", "FIELD_SCALAR_KIND_CHANGED"), diff("#/M/3", "FIELD_NAMED_TYPE_CHANGED")],
    ),
    "a message added and the messages reordered": (
        "message A {} message B {}",
        "message C {} message B {} message A {}",
        [],
    ),
    "a message removed": ("message A {} message B {}", "message A {}", [diff("#/B", "MESSAGE_REMOVED")]),
    "an enum removed and an enum value removed": (
        "message A {} enum E { X = 0; Y = 1; } enum F { Z = 0; }",
        "message A {} enum E { X = 0; }",
        [],
    ),
    "a oneof added with a new field, a field moved into a new oneof": (
        "message M { int32 a = 1; }",
        "message M { oneof u { int32 a = 1; string s = 2; } }",
        [],
    ),
    "a oneof field removed": (
        "message M { oneof choice { int32 a = 1; string s = 3; } }",
        "message M { oneof choice { int32 a = 1; } }",
        [diff("#/M/choice/3", "ONEOF_FIELD_REMOVED")],
    ),
    "a whole oneof removed": ("message M { oneof u { int32 a = 1; string s = 3; } }", "message M { }", []),
    "a oneof field moved out of its oneof": (
        "message M { oneof choice { int32 a = 1; string s = 3; } }",
        "message M { oneof choice { int32 a = 1; } string s = 3; }",
        [],
    ),
    "two fields moved into one oneof": (
        "message M { int32 a = 1; string b = 2; }",
        "message M { oneof u { int32 a = 1; string b = 2; } }",
        [diff("#/M/u", "MULTIPLE_FIELDS_MOVED_TO_ONEOF")],
    ),
    "a field moved into an existing oneof": (
        "message M { int32 a = 1; oneof u { string b = 2; } }",
        "message M { oneof u { int32 a = 1; string b = 2; } }",
        [diff("#/M/u", "FIELD_MOVED_TO_EXISTING_ONEOF")],
    ),
    "a oneof field's type changed under a renamed oneof": (
        "message M { oneof u { int32 a = 1; } }",
        "message M { oneof v { float a = 1; } }",
        [diff("#/M/v/1", "FIELD_SCALAR_KIND_CHANGED")],
    ),
    "nested message fields": (
        "message M { message N { int32 a = 1; } }",
        "message M { message N { string a = 1; } }",
        [diff("#/M/N/1", "FIELD_SCALAR_KIND_CHANGED")],
    ),
    "a recursive message changed compatibly": (
        "message Tree { repeated Tree children = 1; string label = 2; }",
        "message Tree { repeated Tree children = 1; string label = 2; int32 size = 3; }",
        [],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_backward_compatibility_of_each_change(case):
    old, new, errors = CASES[case]
    assert proto(new).is_backward_compatible(proto(old)) == errors


PROTO2_CASES = {
    "a required field added": (
        "message M { optional int32 a = 1; }",
        "message M { optional int32 a = 1; required string b = 2; }",
        [diff("#/M/2", "REQUIRED_FIELD_ADDED")],
    ),
    "a required field removed": (
        "message M { optional int32 a = 1; required string b = 2; }",
        "message M { optional int32 a = 1; }",
        [diff("#/M/2", "REQUIRED_FIELD_REMOVED")],
    ),
    "an optional field added": ("message M { }", "message M { optional int32 a = 1; }", []),
    "a number field made repeated": (
        "message M { optional int32 a = 1; }",
        "message M { repeated int32 a = 1; }",
        [diff("#/M/1", "FIELD_NUMERIC_LABEL_CHANGED")],
    ),
    "an enum field made repeated": (
        "message M { optional E a = 1; } enum E { X = 1; }",
        "message M { repeated E a = 1; } enum E { X = 1; }",
        [diff("#/M/1", "FIELD_NUMERIC_LABEL_CHANGED")],
    ),
    "a string field made repeated": (
        "message M { optional string a = 1; }",
        "message M { repeated string a = 1; }",
        [],
    ),
    "a plain field moved into a oneof (oneof members have no label)": (
        "message M { optional int32 a = 1; }",
        "message M { oneof u { int32 a = 1; } }",
        [],
    ),
}


@pytest.mark.parametrize("case", sorted(PROTO2_CASES))
def test_backward_compatibility_of_proto2_labels(case):
    old, new, errors = PROTO2_CASES[case]
    assert proto(new, syntax="proto2").is_backward_compatible(proto(old, syntax="proto2")) == errors


def test_package_change_is_incompatible():
    old, new = proto("message M {}", package="a"), proto("message M {}", package="b")
    assert new.is_backward_compatible(old) == [diff("#/", "PACKAGE_CHANGED")]


def test_compatible_differences_are_found_but_not_reported():
    old = proto("message M { int32 a = 1; oneof u { string s = 3; } } message A {} enum E { X = 0; Y = 1; }")
    new = proto("message A {} message M { int64 renamed = 1; string b = 2; string s = 3; } enum E { X = 0; Z = 1; }")
    found = sorted(f"{d.type} {d.full_path}" for d in differences(old, new))
    assert found == [
        "ENUM_CONST_CHANGED #/E/1",
        "FIELD_ADDED #/M/2",
        "FIELD_NAME_CHANGED #/M/1",
        "MESSAGE_MOVED #/A",
        "MESSAGE_MOVED #/M",
        "ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/3",
        "ONEOF_REMOVED #/M/u",
    ]
    assert new.is_backward_compatible(old) == []


def test_another_schema_type_is_incompatible():
    other = parse_schema("JSON", '{"type": "string"}')
    assert proto("message M {}").is_backward_compatible(other) == ["Incompatible because of different schema type"]


V1 = proto("message M { oneof u { string s = 2; int32 n = 3; } }")
V2 = proto("message M { oneof u { string s = 2; } }")  # drops a oneof member: backward incompatible
V3 = proto("message M { oneof u { string s = 2; int32 n = 3; } }")  # adds it back: forward incompatible


@pytest.mark.parametrize(
    ("new", "previous", "level", "expect"),
    [
        (V2, [V1], "BACKWARD", [diff("#/M/u/3", "ONEOF_FIELD_REMOVED")]),
        (V2, [V1], "FORWARD", []),
        (V2, [V1], "FULL", [diff("#/M/u/3", "ONEOF_FIELD_REMOVED")]),
        (V2, [V1], "NONE", []),
        (V3, [V1, V2], "BACKWARD", []),
        (V3, [V1, V2], "FORWARD", [diff("#/M/u/3", "ONEOF_FIELD_REMOVED")]),
        (V3, [V1, V2], "BACKWARD_TRANSITIVE", []),
        (V3, [V1, V2], "FORWARD_TRANSITIVE", [diff("#/M/u/3", "ONEOF_FIELD_REMOVED")]),
        (V3, [V1, V2], "FULL_TRANSITIVE", [diff("#/M/u/3", "ONEOF_FIELD_REMOVED")]),
    ],
)
def test_levels_over_protobuf_versions(new, previous, level, expect):
    assert compatibility_errors(new, previous, level) == expect


def test_referenced_messages_are_compared_unless_both_sides_use_the_same_registered_version():
    money_v1 = proto("message Money { int64 units = 1; }", package="c")
    money_v2 = proto("message Money { string units = 1; }", package="c")
    text = 'syntax = "proto3"; package p; import "c.proto"; message Order { c.Money total = 1; }'

    def order(money: ProtobufSchema, version: int) -> ProtobufSchema:
        schema = parse_schema("PROTOBUF", text, [SchemaReference("c.proto", "c-value", version)], {"c.proto": money})
        assert isinstance(schema, ProtobufSchema)
        return schema

    assert order(money_v2, 2).is_backward_compatible(order(money_v1, 1)) == [
        diff("#/Money/1", "FIELD_SCALAR_KIND_CHANGED"),
        diff("#/Order/1", "FIELD_NAMED_TYPE_CHANGED"),
    ]
    # the same subject and version on both sides: one registered file, nothing to compare
    assert order(money_v2, 1).is_backward_compatible(order(money_v1, 1)) == []
