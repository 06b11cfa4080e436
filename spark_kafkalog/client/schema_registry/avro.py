"""``AvroSerializer`` / ``AvroDeserializer``: Avro values in Confluent's wire format, through a Schema Registry.

Values are natural Python (fastavro's): dicts for records, lists, str, bytes, numbers, ``decimal.Decimal``,
``datetime`` for logical types; ``to_dict(obj, ctx)`` / ``from_dict(data, ctx)`` convert the user's objects.
Payload: Avro binary (fastavro's ``schemaless_writer``/``schemaless_reader``), except a schema that is the
primitive ``bytes``, whose payload is the bytes themselves (as Confluent's serializers write it).

The deserializer reads with the writer's schema (fetched by the frame's id) and, given ``schema_str``, resolves
into that reader schema (Avro's schema resolution: defaults filled, fields dropped, types promoted); with
``use.latest.version`` the subject's latest version is the reader.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

import fastavro

from spark_kafkalog.client.schema_registry.client import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.model import Schema
from spark_kafkalog.client.schema_registry.serde import SerializerConfig, SubjectSchemaIds, read_frame, serde_error
from spark_kafkalog.client.serialization import Deserializer, SerializationContext, Serializer
from spark_kafkalog.schemas.avro import AvroSchema
from spark_kafkalog.schemas.parsed_schema import AVRO, ParsedSchema
from spark_kafkalog.schemas.wire_format import frame

__all__ = ["AvroDeserializer", "AvroSerializer"]

ToDict = Callable[[Any, "SerializationContext | None"], Any]
FromDict = Callable[[Any, "SerializationContext | None"], Any]


def _schema_of(schema_str: str | Schema | None) -> Schema | None:
    if schema_str is None or isinstance(schema_str, Schema):
        return schema_str
    return Schema(schema_str, AVRO)


def _avro(parsed: ParsedSchema, owner: str) -> AvroSchema:
    if not isinstance(parsed, AvroSchema):
        raise ValueError(f"{owner} needs an Avro schema, not a {parsed.schema_type} one")
    return parsed


def _record_name(parsed: AvroSchema) -> str | None:
    """The name the record strategies use: a record's full name, else the type's name (as confluent-kafka)."""
    if parsed.name is not None:
        return parsed.name
    top = parsed.schema_json
    if isinstance(top, str):
        return top
    if isinstance(top, dict) and isinstance(top.get("type"), str):
        return str(top.get("name", top["type"]))
    return None


def _is_bytes(parsed: AvroSchema) -> bool:
    top = parsed.fastavro_schema
    return top == "bytes" or (isinstance(top, dict) and top.get("type") == "bytes" and "logicalType" not in top)


class AvroSerializer(Serializer[Any]):
    """Writes values with ``schema_str`` (Avro JSON text or a ``Schema`` with references), registered under
    the subject the strategy names (``serde``'s configuration); ``to_dict(obj, ctx)`` first, when given."""

    __slots__ = ("_ids", "_parsed", "_registry", "_schema", "_to_dict")

    def __init__(
        self,
        registry: SchemaRegistryClient,
        schema_str: str | Schema | None = None,
        to_dict: ToDict | None = None,
        conf: Mapping[str, Any] | None = None,
    ) -> None:
        if to_dict is not None and not callable(to_dict):
            raise ValueError("to_dict must be callable as to_dict(obj, ctx) -> dict")
        config = SerializerConfig(conf, "AvroSerializer")
        self._registry = registry
        self._schema = _schema_of(schema_str)
        self._to_dict = to_dict
        self._ids = SubjectSchemaIds(registry, config)
        self._parsed = None if self._schema is None else _avro(registry.parse(self._schema), "AvroSerializer")

    def __repr__(self) -> str:
        return f"AvroSerializer(subject_name={self._parsed.name if self._parsed else None!r})"

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        parsed = self._parsed
        schema_id, latest = self._ids.writer(ctx, _record_name(parsed) if parsed is not None else None, self._schema)
        if latest is not None:
            parsed = _avro(self._registry.parse(latest.schema), "AvroSerializer")
        if parsed is None:
            raise ValueError("AvroSerializer has no schema to write with: pass schema_str or set use.latest.version")
        value = self._to_dict(obj, ctx) if self._to_dict is not None else obj
        try:
            if _is_bytes(parsed):
                payload = bytes(value)
            else:
                out = io.BytesIO()
                fastavro.schemaless_writer(out, parsed.fastavro_schema, value)
                payload = out.getvalue()
        except Exception as e:  # fastavro raises ValueError, TypeError, AttributeError, KeyError ...
            raise serde_error(
                ctx, "AvroSerializer", f"cannot write a {type(value).__name__}: {type(e).__name__}: {e}"
            ) from e
        return frame(schema_id, payload)


class AvroDeserializer(Deserializer[Any]):
    """Reads Confluent-framed Avro with the writer's registered schema, into ``schema_str`` when given (the
    reader schema), then ``from_dict(data, ctx)`` when given. ``return_record_name``: unions of records come back
    as ``(name, value)`` tuples (fastavro's option)."""

    __slots__ = ("_config", "_from_dict", "_ids", "_reader", "_registry", "_return_record_name")

    def __init__(
        self,
        registry: SchemaRegistryClient,
        schema_str: str | Schema | None = None,
        from_dict: FromDict | None = None,
        return_record_name: bool = False,
        conf: Mapping[str, Any] | None = None,
    ) -> None:
        if from_dict is not None and not callable(from_dict):
            raise ValueError("from_dict must be callable as from_dict(data, ctx) -> object")
        config = SerializerConfig(conf, "AvroDeserializer", deserializer=True)
        self._registry = registry
        self._from_dict = from_dict
        self._return_record_name = return_record_name
        self._ids = SubjectSchemaIds(registry, config)
        schema = _schema_of(schema_str)
        self._reader = None if schema is None else _avro(registry.parse(schema), "AvroDeserializer")

    def __repr__(self) -> str:
        return f"AvroDeserializer(reader={self._reader.name if self._reader else None!r})"

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        schema_id, _, payload = read_frame(data, ctx, "AvroDeserializer")
        writer = _avro(self._registry.parsed(schema_id), "AvroDeserializer")
        reader = self._reader
        latest = self._ids.latest(ctx, writer.name) if reader is None else None
        if latest is not None:
            reader = _avro(self._registry.parse(latest.schema), "AvroDeserializer")
        reader = reader or writer
        try:
            if _is_bytes(writer) and _is_bytes(reader):
                value: Any = bytes(payload)
            else:
                value = fastavro.schemaless_reader(
                    io.BytesIO(payload),
                    writer.fastavro_schema,
                    reader.fastavro_schema,
                    return_record_name=self._return_record_name,
                )
        except Exception as e:  # fastavro raises EOFError, SchemaResolutionError, ValueError ...
            raise serde_error(
                ctx, "AvroDeserializer", f"cannot read {len(payload)} bytes with schema id {schema_id}: {e}"
            ) from e
        return self._from_dict(value, ctx) if self._from_dict is not None else value
