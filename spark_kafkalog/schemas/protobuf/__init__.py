"""Protobuf schemas for the registry: a ``.proto`` parser and printer, ``ProtobufSchema``, Confluent's
compatibility rules and the codec converting messages to and from Arrow values as Spark's ``from_protobuf``.

The provider interface (``spark_kafkalog.schemas.providers``): ``parse``, ``codec``, ``schema_for_arrow``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_kafkalog.schemas.parsed_schema import InvalidSchemaError, ParsedSchema, SchemaReference
from spark_kafkalog.schemas.protobuf.arrow_schema import schema_for_arrow
from spark_kafkalog.schemas.protobuf.codec import ProtobufCodec
from spark_kafkalog.schemas.protobuf.proto_parser import ProtoSyntaxError, parse_proto
from spark_kafkalog.schemas.protobuf.proto_printer import print_proto
from spark_kafkalog.schemas.protobuf.schema import ProtobufSchema


def parse(text: str, references: tuple[SchemaReference, ...], resolved: Mapping[str, ParsedSchema]) -> ProtobufSchema:
    """``ProtobufSchema.parse``: ``.proto`` text or base64 of a serialized FileDescriptorProto."""
    return ProtobufSchema.parse(text, references, resolved)


def codec(reader: ParsedSchema, **options: Any) -> ProtobufCodec:
    """The codec of ``reader`` (options: ``message``, ``enums_as_ints``, ``emit_default_values``)."""
    if not isinstance(reader, ProtobufSchema):
        raise InvalidSchemaError(f"a Protobuf codec needs a PROTOBUF schema, not {reader.schema_type}")
    return ProtobufCodec(reader, **options)


__all__ = [
    "ProtoSyntaxError",
    "ProtobufCodec",
    "ProtobufSchema",
    "codec",
    "parse",
    "parse_proto",
    "print_proto",
    "schema_for_arrow",
]
