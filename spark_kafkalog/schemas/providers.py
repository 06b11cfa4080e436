"""Dispatch by schema type: parse a schema, get the codec of a reader schema, derive a schema from an Arrow type.

The per-type packages (``avro``, ``json_schema``, ``protobuf``) are imported on first use, so the registry
and clients load only the libraries of the types they meet.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spark_kafkalog.schemas.parsed_schema import (
    AVRO,
    JSON,
    PROTOBUF,
    SCHEMA_TYPES,
    InvalidSchemaError,
    ParsedSchema,
    SchemaReference,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from spark_kafkalog.schemas.codec import ValueCodec

_PACKAGES = {AVRO: "avro", JSON: "json_schema", PROTOBUF: "protobuf"}


def schema_type_of(schema_type: str | None) -> str:
    """The registry's name for a ``schemaType`` value (absent means AVRO); an unknown type raises
    ``InvalidSchemaError`` naming it."""
    if schema_type is None or schema_type == "":
        return AVRO
    upper = schema_type.upper()
    if upper not in SCHEMA_TYPES:
        raise InvalidSchemaError(f"unknown schema type {schema_type!r}: one of {', '.join(SCHEMA_TYPES)}")
    return upper


def _package(schema_type: str | None) -> Any:
    return importlib.import_module(f"spark_kafkalog.schemas.{_PACKAGES[schema_type_of(schema_type)]}")


def parse_schema(
    schema_type: str | None,
    schema: str,
    references: Sequence[SchemaReference] = (),
    resolved: Mapping[str, ParsedSchema] | None = None,
) -> ParsedSchema:
    """Parse ``schema`` of ``schema_type`` (None: AVRO). ``resolved`` maps each reference's ``name`` to the
    referenced schema, already parsed with its own references; a reference missing from it, or a schema that
    does not parse, raises ``InvalidSchemaError`` naming the problem."""
    resolved = dict(resolved or {})
    missing = [r.name for r in references if r.name not in resolved]
    if missing:
        raise InvalidSchemaError(f"unresolved schema references: {', '.join(missing)}")
    return _package(schema_type).parse(schema, tuple(references), resolved)


def codec_for(reader: ParsedSchema, **options: Any) -> ValueCodec:
    """The codec reading payloads into ``reader``'s Arrow type and writing values with ``reader``
    (options per type; see each package's ``codec`` module)."""
    return _package(reader.schema_type).codec(reader, **options)


def schema_for_arrow(
    schema_type: str | None, arrow_type: pa.DataType, *, record_name: str = "topLevelRecord", namespace: str = ""
) -> ParsedSchema:
    """A schema of ``schema_type`` that writes values of ``arrow_type`` (what Spark's ``to_avro`` derives
    for Avro: records named ``record_name`` in ``namespace``, nullable columns as unions with null)."""
    return _package(schema_type).schema_for_arrow(arrow_type, record_name=record_name, namespace=namespace)
