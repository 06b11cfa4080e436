"""``schema_for_arrow``: the JSON Schema (draft-07) that writes the values of an Arrow (Spark) type.

==============================  ===============================================================
Arrow type                      JSON Schema
==============================  ===============================================================
struct                          ``{"type":"object","properties":{...},"required":[non-nullable
                                fields],"additionalProperties":false}``; the top level also has
                                ``"$schema"`` (draft-07) and ``"title": record_name``
string / large_string           ``{"type":"string"}``
binary / large_binary           ``{"type":"string","contentEncoding":"base64"}`` (base64 text)
int8 .. int64, uint8 .. uint32  ``{"type":"integer"}``
float16/32/64, decimal          ``{"type":"number"}``
bool                            ``{"type":"boolean"}``
date32 / date64                 ``{"type":"string","format":"date"}``
timestamp (any zone or none)    ``{"type":"string","format":"date-time"}``
list / large_list               ``{"type":"array","items":T}``
map<string, T>                  ``{"type":"object","additionalProperties":T}``
null                            ``{"type":"null"}``
==============================  ===============================================================

A nullable field (and a nullable list element or map value) is ``{"oneOf":[{"type":"null"},T]}``, the form
Confluent's converters write for optional fields; a non-nullable struct field is ``required``. Objects are
closed (``additionalProperties: false``) so that adding a nullable column later is a BACKWARD-compatible change
for Confluent's rules (an optional property added to a closed content model); removing one is not.

Other Arrow types (durations, intervals, maps with non-string keys, unions) raise ``ValueError`` naming them.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from spark_kafkalog.schemas.json_schema.schema import DEFAULT_DIALECT, JsonSchema


def _nullable(schema: dict[str, Any], nullable: bool) -> dict[str, Any]:
    return {"oneOf": [{"type": "null"}, schema]} if nullable else schema


def _schema_of(arrow_type: pa.DataType, where: str) -> dict[str, Any]:
    t = pa.types
    if t.is_struct(arrow_type):
        properties = {}
        required = []
        for index in range(arrow_type.num_fields):
            field = arrow_type.field(index)
            properties[field.name] = _nullable(_schema_of(field.type, f"{where}.{field.name}"), field.nullable)
            if not field.nullable:
                required.append(field.name)
        out: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        return out
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return {"type": "string"}
    if t.is_binary(arrow_type) or t.is_large_binary(arrow_type):
        return {"type": "string", "contentEncoding": "base64"}
    if t.is_integer(arrow_type) and not (t.is_uint64(arrow_type)):
        return {"type": "integer"}
    if t.is_floating(arrow_type) or t.is_decimal(arrow_type):
        return {"type": "number"}
    if t.is_boolean(arrow_type):
        return {"type": "boolean"}
    if t.is_date(arrow_type):
        return {"type": "string", "format": "date"}
    if t.is_timestamp(arrow_type):
        return {"type": "string", "format": "date-time"}
    if t.is_list(arrow_type) or t.is_large_list(arrow_type):
        item = arrow_type.value_field
        return {"type": "array", "items": _nullable(_schema_of(item.type, f"{where}[]"), item.nullable)}
    if t.is_map(arrow_type):
        if not (t.is_string(arrow_type.key_type) or t.is_large_string(arrow_type.key_type)):
            raise ValueError(
                f"{where}: JSON objects have string keys; a map with {arrow_type.key_type} keys has no JSON Schema"
            )
        item = arrow_type.item_field
        value = _nullable(_schema_of(item.type, f"{where}{{}}"), item.nullable)
        return {"type": "object", "additionalProperties": value}
    if t.is_null(arrow_type):
        return {"type": "null"}
    raise ValueError(f"{where}: the Arrow type {arrow_type} has no JSON Schema form")


def schema_for_arrow(
    arrow_type: pa.DataType, *, record_name: str = "topLevelRecord", namespace: str = ""
) -> JsonSchema:
    """The JSON Schema of ``arrow_type`` (the module's table); ``record_name`` becomes the top-level ``title``
    (``namespace`` is not used: JSON Schema has none)."""
    body = _schema_of(arrow_type, "$")
    document: dict[str, Any] = {"$schema": DEFAULT_DIALECT, "title": record_name}
    document.update(body)
    return JsonSchema(document)
