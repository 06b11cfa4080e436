"""The built-in files: protobuf's well-known types and the files Confluent treats as built in, importable
without references."""

from __future__ import annotations

import importlib

import pytest
from confluent_kafka.schema_registry.confluent import meta_pb2
from confluent_kafka.schema_registry.confluent.type import decimal_pb2, variant_pb2
from google.protobuf import descriptor_pb2

from spark_kafkalog.schemas import parse_schema
from spark_kafkalog.schemas.protobuf import ProtobufSchema
from spark_kafkalog.schemas.protobuf.builtin_files import BUILTIN_FILES
from spark_kafkalog.schemas.protobuf.proto_parser import json_name
from spark_kafkalog.schemas.protobuf.well_known import WELL_KNOWN, compiled_files

GOOGLE_TYPES = (
    "calendar_period",
    "color",
    "date",
    "datetime",
    "dayofweek",
    "expr",
    "fraction",
    "latlng",
    "money",
    "month",
    "postal_address",
    "quaternion",
    "timeofday",
)
PUBLISHED = compiled_files(
    [importlib.import_module(f"google.type.{name}_pb2") for name in GOOGLE_TYPES] + [meta_pb2, decimal_pb2, variant_pb2]
)


def test_every_builtin_text_is_a_published_file():
    assert set(BUILTIN_FILES) == set(PUBLISHED)


def without_default_json_names(fdp: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """``fdp`` without the json_names protoc derives (older protocs left them out of generated modules)."""
    out = descriptor_pb2.FileDescriptorProto()
    out.CopyFrom(fdp)

    def strip(fields: object) -> None:
        for f in fields:  # type: ignore[attr-defined]
            if f.json_name == json_name(f.name):
                f.ClearField("json_name")

    def walk(messages: object) -> None:
        for m in messages:  # type: ignore[attr-defined]
            strip(m.field)
            strip(m.extension)
            walk(m.nested_type)

    walk(out.message_type)
    strip(out.extension)
    return out


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_builtin_texts_parse_to_the_published_descriptors(name):
    # google-common-protos' and confluent-kafka's generated modules carry protoc's descriptors
    assert without_default_json_names(WELL_KNOWN[name]) == without_default_json_names(PUBLISHED[name])


@pytest.mark.parametrize(
    ("import_path", "type_name"),
    [
        ("google/protobuf/wrappers.proto", "google.protobuf.StringValue"),
        ("google/type/date.proto", "google.type.Date"),
        ("google/type/money.proto", "google.type.Money"),
        ("confluent/type/decimal.proto", "confluent.type.Decimal"),
    ],
)
def test_schemas_import_builtin_files_without_references(import_path, type_name):
    schema = parse_schema("PROTOBUF", f'syntax = "proto3"; import "{import_path}"; message M {{ {type_name} v = 1; }}')
    assert isinstance(schema, ProtobufSchema)
    assert schema.message_descriptor().fields_by_name["v"].message_type.full_name == type_name


def test_confluent_field_metadata_options_are_kept():
    text = """syntax = "proto3";
import "confluent/meta.proto";
message M {
  string ssn = 1 [(confluent.field_meta) = { tags: "PII" }];
}
"""
    schema = parse_schema("PROTOBUF", text)
    assert '[(confluent.field_meta) = { tags : "PII" }]' in schema.canonical
    assert parse_schema("PROTOBUF", schema.canonical) == schema
