"""A JSON Schema classified as Confluent's parser (everit) does, for the compatibility check: ``SchemaNode``.

``classify_at(schema, resolver)`` follows the ``$ref`` chain (a loop counts as ``{}``) and gives the node:
its ``kind`` is the ``type`` (``integer`` counts as ``number``), else the kind the keywords
present imply (object, array, string, number keywords), or ``enum``, ``const``, ``not``, ``empty`` (``{}``/
``true``), ``false`` or ``combined`` (``allOf``/``anyOf``/``oneOf``: ``members`` and ``criterion``). A ``type``
list is an ``anyOf`` of one node per type; several of these parts in one schema make an ``allOf``.

Also the questions the object and array rules both ask of a node: does it permit additional properties/items,
and under which schema. Pure; nodes are built per check and not shared between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referencing._core import Resolver

from spark_kafkalog.schemas.json_schema.walk import CircularReference, compact_json, deref, descend
from spark_kafkalog.schemas.parsed_schema import InvalidSchemaError


@dataclass
class SchemaNode:
    """A schema classified as Confluent's parser does (``kind``), with the resolver in scope at it."""

    kind: str
    schema: dict[str, Any]
    resolver: Resolver[Any] = field(repr=False)
    members: list[SchemaNode] = field(default_factory=list)  # combined: the subschemas
    criterion: str = ""  # combined: allOf | anyOf | oneOf
    origin: int = 0  # id() of the document object the node was classified from (the recursion guard's key)

    def __post_init__(self) -> None:
        if not self.origin:
            self.origin = id(self.schema)


_OBJECT_KEYWORDS = ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
                    "maxProperties", "dependencies", "dependentRequired", "dependentSchemas")  # fmt: skip
_ARRAY_KEYWORDS = ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems")
_STRING_KEYWORDS = ("minLength", "maxLength", "pattern")
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COMBINERS = ("allOf", "anyOf", "oneOf")


def _classify(schema: Any, resolver: Resolver[Any]) -> SchemaNode:
    """The node of a (dereferenced) schema."""
    if schema is True or (isinstance(schema, dict) and not schema):
        return SchemaNode("empty", {}, resolver)
    if schema is False:
        return SchemaNode("false", {}, resolver)
    if not isinstance(schema, dict):
        raise InvalidSchemaError(f"a subschema must be an object or a boolean, not {compact_json(schema)[:40]}")
    resolver = descend(schema, resolver)
    parts: list[SchemaNode] = []
    typed = _typed_node(schema, resolver)
    if typed is not None:
        parts.append(typed)
    if "enum" in schema:
        parts.append(SchemaNode("enum", schema, resolver))
    if "const" in schema:
        parts.append(SchemaNode("const", schema, resolver))
    if "not" in schema:
        parts.append(SchemaNode("not", schema, resolver))
    for combiner in _COMBINERS:
        if isinstance(schema.get(combiner), list):
            members = [classify_at(m, resolver) for m in schema[combiner]]
            parts.append(SchemaNode("combined", schema, resolver, members, combiner))
    if not parts:
        return SchemaNode("empty", schema, resolver)
    if len(parts) == 1:
        return parts[0]
    return SchemaNode("combined", schema, resolver, parts, "allOf")


def _typed_node(schema: dict[str, Any], resolver: Resolver[Any]) -> SchemaNode | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        if len(kind) == 1:
            kind = kind[0]
        else:
            variants = [SchemaNode(_kind_of(k), {**schema, "type": k}, resolver, origin=id(schema)) for k in kind]
            return SchemaNode("combined", schema, resolver, variants, "anyOf")
    if isinstance(kind, str):
        return SchemaNode(_kind_of(kind), schema, resolver)
    for keywords, implied in (
        (_OBJECT_KEYWORDS, "object"),
        (_ARRAY_KEYWORDS, "array"),
        (_STRING_KEYWORDS, "string"),
        (_NUMBER_KEYWORDS, "number"),
    ):
        if any(k in schema for k in keywords):
            return SchemaNode(implied, schema, resolver)
    return None


def _kind_of(json_type: str) -> str:
    return "number" if json_type == "integer" else json_type


def classify_at(schema: Any, resolver: Resolver[Any]) -> SchemaNode:
    """The node of ``schema`` after following its ``$ref`` chain."""
    try:
        schema, resolver = deref(schema, resolver)
    except CircularReference:
        return SchemaNode("empty", {}, resolver)
    return _classify(schema, resolver)


def permits_additional(node: SchemaNode, keyword: str) -> bool:
    return node.schema.get(keyword, True) is not False


def additional_schema(node: SchemaNode, keyword: str) -> SchemaNode | None:
    """The schema of ``additionalProperties``/``additionalItems`` when it is one (``{}`` included; not a
    boolean)."""
    value = node.schema.get(keyword)
    return classify_at(value, node.resolver) if isinstance(value, dict) else None
