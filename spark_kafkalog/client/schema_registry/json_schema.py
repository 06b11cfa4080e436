"""``JSONSchemaSerializer`` / ``JSONSchemaDeserializer``: JSON values in Confluent's wire format, described by
a JSON Schema registered in a Schema Registry (confluent-kafka's ``JSONSerializer``/``JSONDeserializer``).

Payload: the value as compact UTF-8 JSON (no spaces, non-ASCII characters as themselves), byte for byte what
confluent-kafka writes. With ``validate`` (default True) the value is checked against the schema before it
is written, and after it is read (against ``schema_str`` when given, else the writer's registered schema); a
value that breaks the schema raises ``SerializationError`` naming the JSON path. The record name of the
record strategies is the schema's ``title``.

Extra configuration key besides ``serde``'s: ``validate`` (bool).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from spark_kafkalog.client.schema_registry.client import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.model import Schema
from spark_kafkalog.client.schema_registry.serde import SerializerConfig, SubjectSchemaIds, read_frame, serde_error
from spark_kafkalog.client.serialization import Deserializer, SerializationContext, Serializer
from spark_kafkalog.schemas import parse_schema
from spark_kafkalog.schemas.json_schema import JsonSchema
from spark_kafkalog.schemas.parsed_schema import JSON, ParsedSchema
from spark_kafkalog.schemas.wire_format import frame

__all__ = ["JSONSchemaDeserializer", "JSONSchemaSerializer"]

ToDict = Callable[[Any, "SerializationContext | None"], Any]
FromDict = Callable[[Any, "SerializationContext | None"], Any]

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _schema_of(schema_str: str | Schema | None) -> Schema | None:
    if schema_str is None or isinstance(schema_str, Schema):
        return schema_str
    return Schema(schema_str, JSON)


def _json(parsed: ParsedSchema, owner: str) -> JsonSchema:
    if not isinstance(parsed, JsonSchema):
        raise ValueError(f"{owner} needs a JSON schema, not a {parsed.schema_type} one")
    return parsed


def _validate_flag(conf: Mapping[str, Any] | None, owner: str) -> tuple[Mapping[str, Any], bool]:
    conf = dict(conf or {})
    validate = conf.pop("validate", True)
    if not isinstance(validate, bool):
        raise ValueError(f"{owner} setting 'validate' must be a bool, not {validate!r}")
    return conf, validate


class JSONSchemaSerializer(Serializer[Any]):
    """Writes values (after ``to_dict(obj, ctx)`` when given) as JSON described by ``schema_str`` (JSON Schema
    text or a ``Schema`` with references), registered under the strategy's subject."""

    __slots__ = ("_ids", "_parsed", "_registry", "_schema", "_to_dict", "_validate")

    def __init__(
        self,
        schema_str: str | Schema | None,
        registry: SchemaRegistryClient,
        to_dict: ToDict | None = None,
        conf: Mapping[str, Any] | None = None,
    ) -> None:
        if to_dict is not None and not callable(to_dict):
            raise ValueError("to_dict must be callable as to_dict(obj, ctx) -> dict")
        conf, self._validate = _validate_flag(conf, "JSONSchemaSerializer")
        self._registry = registry
        self._schema = _schema_of(schema_str)
        self._to_dict = to_dict
        self._ids = SubjectSchemaIds(registry, SerializerConfig(conf, "JSONSchemaSerializer"))
        self._parsed = None if self._schema is None else _json(registry.parse(self._schema), "JSONSchemaSerializer")

    def __repr__(self) -> str:
        return f"JSONSchemaSerializer(title={self._parsed.name if self._parsed else None!r})"

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        parsed = self._parsed
        schema_id, latest = self._ids.writer(ctx, parsed.name if parsed is not None else None, self._schema)
        if latest is not None:
            parsed = _json(self._registry.parse(latest.schema), "JSONSchemaSerializer")
        value = self._to_dict(obj, ctx) if self._to_dict is not None else obj
        if self._validate and parsed is not None:
            try:
                parsed.validate(value)
            except ValueError as e:
                raise serde_error(ctx, "JSONSchemaSerializer", f"the value breaks the schema: {e}") from e
        try:
            payload = _dumps(value).encode("utf-8")
        except (TypeError, ValueError) as e:
            raise serde_error(ctx, "JSONSchemaSerializer", f"cannot write a {type(value).__name__}: {e}") from e
        return frame(schema_id, payload)


class JSONSchemaDeserializer(Deserializer[Any]):
    """Reads Confluent-framed JSON, validated against ``schema_str`` (when given) or the writer's registered
    schema (fetched through ``registry``), then ``from_dict(data, ctx)`` when given. Without ``validate``
    neither schema is needed (``schema_str`` and ``registry`` may both be None)."""

    __slots__ = ("_from_dict", "_ids", "_reader", "_registry", "_validate")

    def __init__(
        self,
        schema_str: str | Schema | None = None,
        from_dict: FromDict | None = None,
        registry: SchemaRegistryClient | None = None,
        conf: Mapping[str, Any] | None = None,
    ) -> None:
        if from_dict is not None and not callable(from_dict):
            raise ValueError("from_dict must be callable as from_dict(data, ctx) -> object")
        conf, self._validate = _validate_flag(conf, "JSONSchemaDeserializer")
        config = SerializerConfig(conf, "JSONSchemaDeserializer", deserializer=True)
        schema = _schema_of(schema_str)
        if schema is not None and schema.references and registry is None:
            raise ValueError("JSONSchemaDeserializer: a schema with references needs a registry to resolve them")
        if self._validate and schema is None and registry is None:
            raise ValueError("JSONSchemaDeserializer needs schema_str or a registry (or validate=False)")
        self._registry = registry
        self._from_dict = from_dict
        self._ids = SubjectSchemaIds(registry, config)
        self._reader: JsonSchema | None = None
        if schema is not None:
            parsed = registry.parse(schema) if registry is not None else _parse_alone(schema)
            self._reader = _json(parsed, "JSONSchemaDeserializer")

    def __repr__(self) -> str:
        return f"JSONSchemaDeserializer(title={self._reader.name if self._reader else None!r})"

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        schema_id, _, payload = read_frame(data, ctx, "JSONSchemaDeserializer")
        try:
            value = json.loads(bytes(payload))
        except ValueError as e:
            raise serde_error(
                ctx, "JSONSchemaDeserializer", f"the payload of schema id {schema_id} is not JSON: {e}"
            ) from e
        if self._validate:
            reader = self._reader
            if reader is None and self._registry is not None:
                latest = self._ids.latest(ctx, None)
                schema = latest.schema if latest is not None else None
                reader = _json(
                    self._registry.parse(schema) if schema is not None else self._registry.parsed(schema_id),
                    "JSONSchemaDeserializer",
                )
            if reader is not None:
                try:
                    reader.validate(value)
                except ValueError as e:
                    raise serde_error(ctx, "JSONSchemaDeserializer", f"the value breaks the schema: {e}") from e
        return self._from_dict(value, ctx) if self._from_dict is not None else value


def _parse_alone(schema: Schema) -> ParsedSchema:
    return parse_schema(schema.schema_type, schema.schema_str)
