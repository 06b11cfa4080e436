""".proto parser and printer: protoc's descriptors of the well-known types, hand-built descriptors of each
construct, round trips, and errors naming line and column."""

from __future__ import annotations

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, text_format

from spark_kafkalog.schemas.protobuf import ProtoSyntaxError, parse_proto, print_proto
from spark_kafkalog.schemas.protobuf.well_known import PROTOBUF_MODULES, compiled_files

WELL_KNOWN = compiled_files(PROTOBUF_MODULES)  # protoc's descriptors of protobuf's own files, dependencies first


@pytest.mark.parametrize("name", sorted(WELL_KNOWN))
def test_printed_well_known_types_parse_back_to_protocs_descriptors(name):
    # the descriptors compiled by protoc into protobuf's own modules are the reference
    compiled = WELL_KNOWN[name]
    text = print_proto(compiled)
    assert parse_proto(text, name, WELL_KNOWN) == compiled


def expected(text: str) -> descriptor_pb2.FileDescriptorProto:
    return text_format.Parse(text, descriptor_pb2.FileDescriptorProto())


CASES = {
    "proto3 scalars, implicit label": (
        """syntax = "proto3"; package a.b;
        message M { int32 x_value = 1; repeated string names = 2; bytes raw = 3; }""",
        """name: "t.proto" package: "a.b" syntax: "proto3"
        message_type { name: "M"
          field { name: "x_value" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "xValue" }
          field { name: "names" number: 2 label: LABEL_REPEATED type: TYPE_STRING json_name: "names" }
          field { name: "raw" number: 3 label: LABEL_OPTIONAL type: TYPE_BYTES json_name: "raw" } }""",
    ),
    "proto3 optional gets a synthetic oneof after the declared ones": (
        """syntax = "proto3";
        message M { optional int32 a = 1; oneof choice { string s = 2; int64 n = 3; } }""",
        """name: "t.proto" syntax: "proto3"
        message_type { name: "M"
          field { name: "a" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 oneof_index: 1 json_name: "a" proto3_optional: true }
          field { name: "s" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 0 json_name: "s" }
          field { name: "n" number: 3 label: LABEL_OPTIONAL type: TYPE_INT64 oneof_index: 0 json_name: "n" }
          oneof_decl { name: "choice" } oneof_decl { name: "_a" } }""",
    ),
    "map fields become nested entries where they appear": (
        """syntax = "proto3"; package p;
        message M { message Before {} map<string, Before> by_key = 1; enum E { Z = 0; } map<int64, E> codes = 2; }""",
        """name: "t.proto" package: "p" syntax: "proto3"
        message_type { name: "M"
          field { name: "by_key" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".p.M.ByKeyEntry" json_name: "byKey" }
          field { name: "codes" number: 2 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".p.M.CodesEntry" json_name: "codes" }
          nested_type { name: "Before" }
          nested_type { name: "ByKeyEntry"
            field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "key" }
            field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".p.M.Before" json_name: "value" }
            options { map_entry: true } }
          nested_type { name: "CodesEntry"
            field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_INT64 json_name: "key" }
            field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: ".p.M.E" json_name: "value" }
            options { map_entry: true } }
          enum_type { name: "E" value { name: "Z" number: 0 } } }""",
    ),
    "reserved and extension ranges (message ends exclusive, enum ends inclusive)": (
        """syntax = "proto2";
        message M { reserved 2, 9 to 11, 100 to max; reserved "old", "older"; extensions 1000 to max; }
        enum E { option allow_alias = true; A = 0; B = 0; reserved 5 to 7, 10 to max; reserved "C"; }""",
        """name: "t.proto"
        message_type { name: "M"
          extension_range { start: 1000 end: 536870912 }
          reserved_range { start: 2 end: 3 } reserved_range { start: 9 end: 12 }
          reserved_range { start: 100 end: 536870912 }
          reserved_name: "old" reserved_name: "older" }
        enum_type { name: "E" value { name: "A" number: 0 } value { name: "B" number: 0 }
          options { allow_alias: true }
          reserved_range { start: 5 end: 7 } reserved_range { start: 10 end: 2147483647 } reserved_name: "C" }""",
    ),
    "proto2 labels, defaults, groups and extensions": (
        """syntax = "proto2"; package q;
        message M {
          required int32 id = 1 [default = -5];
          optional string s = 2 [default = "a\\"b\\n"];
          optional bytes b = 3 [default = "\\001x"];
          optional double d = 4 [default = 1.5];
          optional float f = 5 [default = 2];
          optional E e = 6 [default = TWO];
          optional bool flag = 7 [default = true, deprecated = true];
          repeated group Item = 8 { optional int32 n = 1; }
          extensions 100 to 199;
        }
        enum E { ONE = 1; TWO = 2; }
        extend M { optional string note = 100 [json_name = "theNote"]; }""",
        r"""name: "t.proto" package: "q"
        message_type { name: "M"
          field { name: "id" number: 1 label: LABEL_REQUIRED type: TYPE_INT32 default_value: "-5" json_name: "id" }
          field { name: "s" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING default_value: "a\"b\n" json_name: "s" }
          field { name: "b" number: 3 label: LABEL_OPTIONAL type: TYPE_BYTES default_value: "\\001x" json_name: "b" }
          field { name: "d" number: 4 label: LABEL_OPTIONAL type: TYPE_DOUBLE default_value: "1.5" json_name: "d" }
          field { name: "f" number: 5 label: LABEL_OPTIONAL type: TYPE_FLOAT default_value: "2" json_name: "f" }
          field { name: "e" number: 6 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: ".q.E" default_value: "TWO" json_name: "e" }
          field { name: "flag" number: 7 label: LABEL_OPTIONAL type: TYPE_BOOL default_value: "true" options { deprecated: true } json_name: "flag" }
          field { name: "item" number: 8 label: LABEL_REPEATED type: TYPE_GROUP type_name: ".q.M.Item" json_name: "item" }
          nested_type { name: "Item" field { name: "n" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "n" } }
          extension_range { start: 100 end: 200 } }
        enum_type { name: "E" value { name: "ONE" number: 1 } value { name: "TWO" number: 2 } }
        extension { name: "note" number: 100 label: LABEL_OPTIONAL type: TYPE_STRING extendee: ".q.M" json_name: "theNote" }""",
    ),
    "names resolve from the innermost scope outwards": (
        """syntax = "proto3"; package x.y;
        message Inner {}
        message Outer {
          message Inner { message Deep {} }
          Inner a = 1;
          .x.y.Inner b = 2;
          y.Inner c = 3;
          Inner.Deep d = 4;
          Outer.Inner e = 5;
        }""",
        """name: "t.proto" package: "x.y" syntax: "proto3"
        message_type { name: "Inner" }
        message_type { name: "Outer"
          field { name: "a" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".x.y.Outer.Inner" json_name: "a" }
          field { name: "b" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".x.y.Inner" json_name: "b" }
          field { name: "c" number: 3 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".x.y.Inner" json_name: "c" }
          field { name: "d" number: 4 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".x.y.Outer.Inner.Deep" json_name: "d" }
          field { name: "e" number: 5 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".x.y.Outer.Inner" json_name: "e" }
          nested_type { name: "Inner" nested_type { name: "Deep" } } }""",
    ),
    "imports (public, weak), file options, services and streaming rpcs": (
        """// a comment
        syntax = "proto3";
        /* block
           comment */
        package svc;
        import "google/protobuf/empty.proto";
        import public "google/protobuf/timestamp.proto";
        import weak "google/protobuf/duration.proto";
        option java_package = "com.example";
        option optimize_for = SPEED;
        option java_multiple_files = true;
        service S {
          option deprecated = true;
          rpc Ping(google.protobuf.Empty) returns (google.protobuf.Timestamp);
          rpc Watch(stream google.protobuf.Empty) returns (stream .google.protobuf.Duration) { option deprecated = true; }
        }""",
        """name: "t.proto" package: "svc" syntax: "proto3"
        dependency: "google/protobuf/empty.proto" dependency: "google/protobuf/timestamp.proto"
        dependency: "google/protobuf/duration.proto" public_dependency: 1 weak_dependency: 2
        options { java_package: "com.example" optimize_for: SPEED java_multiple_files: true }
        service { name: "S"
          method { name: "Ping" input_type: ".google.protobuf.Empty" output_type: ".google.protobuf.Timestamp" }
          method { name: "Watch" input_type: ".google.protobuf.Empty" output_type: ".google.protobuf.Duration"
                   options { deprecated: true } client_streaming: true server_streaming: true }
          options { deprecated: true } }""",
    ),
    "custom options are kept uninterpreted": (
        """syntax = "proto3";
        option (my.file_opt) = "v";
        message M { option (my.msg).size = 3; int32 a = 1 [(my.field) = -2, (my.agg) = { a: 1 b: "x" }]; }""",
        """name: "t.proto" syntax: "proto3"
        options { uninterpreted_option { name { name_part: "my.file_opt" is_extension: true } string_value: "v" } }
        message_type { name: "M"
          field { name: "a" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "a"
            options {
              uninterpreted_option { name { name_part: "my.field" is_extension: true } negative_int_value: -2 }
              uninterpreted_option { name { name_part: "my.agg" is_extension: true } aggregate_value: "a : 1 b : \\"x\\"" } } }
          options { uninterpreted_option { name { name_part: "my.msg" is_extension: true } name { name_part: "size" is_extension: false } positive_int_value: 3 } } }""",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_parser_builds_protocs_descriptor(case):
    text, want = CASES[case]
    got = parse_proto(text, "t.proto", WELL_KNOWN)
    assert got == expected(want), text_format.MessageToString(got)


@pytest.mark.parametrize("case", sorted(CASES))
def test_printed_text_parses_back_to_the_same_descriptor(case):
    parsed = parse_proto(CASES[case][0], "t.proto", WELL_KNOWN)
    assert parse_proto(print_proto(parsed), "t.proto", WELL_KNOWN) == parsed


@pytest.mark.parametrize("case", sorted(c for c in CASES if "custom options" not in c))
def test_parsed_descriptors_are_valid_for_protobufs_descriptor_pool(case):
    pool = descriptor_pool.DescriptorPool()
    for dep in WELL_KNOWN.values():
        pool.Add(dep)
    parsed = parse_proto(CASES[case][0], "t.proto", WELL_KNOWN)
    pool.Add(parsed)
    assert pool.FindFileByName("t.proto").name == "t.proto"


def test_printer_writes_maps_oneofs_and_optional_as_written():
    text = """syntax = "proto3";
package p;

message M {
  map<string, int32> counts = 1;
  optional string note = 2;
  oneof kind {
    string s = 3;
    .p.M.Sub sub = 4;
  }
  message Sub {
    repeated double xs = 1 [packed = false];
  }
}
"""
    assert print_proto(parse_proto(text, "t.proto")) == text


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ('syntax = "proto4";', "line 1, column 10", "unknown syntax"),
        ('syntax = "proto3";\nmessage M {\n  int32 a = ;\n}', "line 3, column 13", "expected a field number"),
        ('syntax = "proto3";\nmessage M { Missing a = 1; }', "line 2, column 13", "unknown type 'Missing'"),
        ('syntax = "proto2";\nmessage M { int32 a = 1; }', "line 2, column 13", "expected a field label"),
        (
            'syntax = "proto3";\nmessage M { required int32 a = 1; }',
            "line 2, column 13",
            "required fields are not allowed",
        ),
        ('syntax = "proto3";\nmessage M { int32 a = 1 }', "line 2, column 25", "expected ';'"),
        ('syntax = "proto3";\nmessage M {\n  int32 a = 1;\n', "line 4, column 1", "expected '}' closing message M"),
        ('syntax = "proto3";\nmessage M { map<double, string> m = 1; }', "line 2, column 17", "map key"),
        ('syntax = "proto3";\noption no_such_option = 1;', "line 2, column 8", "unknown option 'no_such_option'"),
        ('syntax = "proto3";\nmessage M { string s = 1; } $', "line 2, column 29", "unexpected character '$'"),
        ('edition = "2023";', "line 1, column 1", "editions are not supported"),
    ],
)
def test_errors_name_line_and_column(text, where, what):
    with pytest.raises(ProtoSyntaxError) as e:
        parse_proto(text, "t.proto")
    assert where in str(e.value)
    assert what in str(e.value)
