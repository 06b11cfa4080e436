"""Confluent's JSON Schema compatibility rules: each change, both directions, and the levels."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from spark_kafkalog.schemas import SchemaReference, compatibility_errors, parse_schema
from spark_kafkalog.schemas.json_schema import JsonSchema
from spark_kafkalog.schemas.json_schema.compatibility import differences
from spark_kafkalog.schemas.json_schema.difference import COMPATIBLE_CHANGES


def js(document: Any, refs: dict[str, JsonSchema] | None = None) -> JsonSchema:
    refs = refs or {}
    schema = parse_schema("JSON", json.dumps(document), [SchemaReference(n, n, 1) for n in refs], refs)
    assert isinstance(schema, JsonSchema)
    return schema


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


def error_types(new: JsonSchema, old: JsonSchema) -> list[tuple[str, str]]:
    """(errorType, path) of each message of new.is_backward_compatible(old)."""
    out = []
    for message in new.is_backward_compatible(old):
        kind = re.match(r'\{errorType:"([A-Z_]+)"', message)
        path = re.search(r"path '([^']*)'", message)
        assert kind, message
        out.append((kind.group(1), path.group(1) if path else ""))
    return out


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}

# (case, old, new, errors of new reading old (BACKWARD), errors of old reading new (FORWARD))
CASES: list[tuple[str, Any, Any, list[tuple[str, str]], list[tuple[str, str]]]] = [
    ("identical", obj({"a": S}), obj({"a": S}), [], []),
    ("integer to number", I, N, [], [("TYPE_NARROWED", "#/")]),
    ("type changed", S, I, [("TYPE_CHANGED", "#/")], [("TYPE_CHANGED", "#/")]),
    ("any schema reads everything", S, {}, [], [("TYPE_CHANGED", "#/")]),
    (
        "property added to an open content model",
        obj({"a": S}),
        obj({"a": S, "b": I}),
        [("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "#/properties/b")],
        [],
    ),
    ("property with an empty schema added to an open model", obj({"a": S}), obj({"a": S, "b": {}}), [], []),
    (
        "optional property added to a closed content model",
        obj({"a": S}, additionalProperties=False),
        obj({"a": S, "b": I}, additionalProperties=False),
        [],
        [("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", "#/properties/b")],
    ),
    (
        "required property added to a closed content model",
        obj({"a": S}, additionalProperties=False),
        obj({"a": S, "b": I}, additionalProperties=False, required=["b"]),
        [("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", "#/properties/b")],
        [("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", "#/properties/b")],
    ),
    (
        "required property with a default added to a closed model",
        obj({"a": S}, additionalProperties=False),
        obj({"a": S, "b": {**I, "default": 0}}, additionalProperties=False, required=["b"]),
        [],
        [("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", "#/properties/b")],
    ),
    (
        "property added to a partially open model, covered by additionalProperties",
        obj({"a": S}, additionalProperties=I),
        obj({"a": S, "b": I}, additionalProperties=I),
        [],
        [],
    ),
    (
        "property added to a partially open model, not covered",
        obj({"a": S}, additionalProperties=I),
        obj({"a": S, "b": S}, additionalProperties=I),
        [
            ("TYPE_CHANGED", "#/properties/b"),
            ("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "#/properties/b"),
        ],
        [
            ("TYPE_CHANGED", "#/properties/b"),
            ("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "#/properties/b"),
        ],
    ),
    (
        "property added covered by patternProperties",
        obj({}, patternProperties={"^n_": N}),
        obj({"n_1": I}, patternProperties={"^n_": N}),
        [
            ("TYPE_NARROWED", "#/properties/n_1"),
            ("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", "#/properties/n_1"),
        ],
        [],
    ),
    (
        "required attribute added",
        obj({"a": S}),
        obj({"a": S}, required=["a"]),
        [("REQUIRED_ATTRIBUTE_ADDED", "#/required/a")],
        [],
    ),
    (
        "required attribute with a default added",
        obj({"a": S}),
        obj({"a": {**S, "default": "x"}}, required=["a"]),
        [],
        [],
    ),
    (
        "additionalProperties false added",
        obj({"a": S}),
        obj({"a": S}, additionalProperties=False),
        [("ADDITIONAL_PROPERTIES_REMOVED", "#/additionalProperties")],
        [],
    ),
    (
        "additionalProperties narrowed to a schema",
        obj({"a": S}),
        obj({"a": S}, additionalProperties=S),
        [("ADDITIONAL_PROPERTIES_NARROWED", "#/additionalProperties")],
        [],
    ),
    (
        "additionalProperties schema changed",
        {"type": "object", "additionalProperties": S},
        {"type": "object", "additionalProperties": I},
        [("TYPE_CHANGED", "#/additionalProperties")],
        [("TYPE_CHANGED", "#/additionalProperties")],
    ),
    (
        "maxLength decreased",
        {**S, "maxLength": 10},
        {**S, "maxLength": 5},
        [("MAX_LENGTH_DECREASED", "#/maxLength")],
        [],
    ),
    ("minLength added", S, {**S, "minLength": 1}, [("MIN_LENGTH_ADDED", "#/minLength")], []),
    ("pattern added", S, {**S, "pattern": "^a"}, [("PATTERN_ADDED", "#/pattern")], []),
    (
        "pattern changed",
        {**S, "pattern": "^a"},
        {**S, "pattern": "^b"},
        [("PATTERN_CHANGED", "#/pattern")],
        [("PATTERN_CHANGED", "#/pattern")],
    ),
    ("maximum decreased", {**N, "maximum": 10}, {**N, "maximum": 5}, [("MAXIMUM_DECREASED", "#/maximum")], []),
    ("minimum increased", {**N, "minimum": 0}, {**N, "minimum": 1}, [("MINIMUM_INCREASED", "#/minimum")], []),
    (
        "exclusiveMaximum added",
        N,
        {**N, "exclusiveMaximum": 3},
        [("EXCLUSIVE_MAXIMUM_ADDED", "#/exclusiveMaximum")],
        [],
    ),
    (
        "multipleOf expanded",
        {**I, "multipleOf": 2},
        {**I, "multipleOf": 4},
        [("MULTIPLE_OF_EXPANDED", "#/multipleOf")],
        [],
    ),
    (
        "multipleOf changed",
        {**I, "multipleOf": 2},
        {**I, "multipleOf": 3},
        [("MULTIPLE_OF_CHANGED", "#/multipleOf")],
        [("MULTIPLE_OF_CHANGED", "#/multipleOf")],
    ),
    ("enum extended", {"enum": ["a"]}, {"enum": ["a", "b"]}, [], [("ENUM_ARRAY_NARROWED", "#/enum")]),
    (
        "enum changed",
        {"enum": ["a", "b"]},
        {"enum": ["a", "c"]},
        [("ENUM_ARRAY_CHANGED", "#/enum")],
        [("ENUM_ARRAY_CHANGED", "#/enum")],
    ),
    (
        "const changed",
        {"const": 1},
        {"const": 2},
        [("ENUM_ARRAY_CHANGED", "#/const")],
        [("ENUM_ARRAY_CHANGED", "#/const")],
    ),
    (
        "array items changed",
        {"type": "array", "items": S},
        {"type": "array", "items": I},
        [("TYPE_CHANGED", "#/items")],
        [("TYPE_CHANGED", "#/items")],
    ),
    (
        "maxItems decreased and uniqueItems added",
        {"type": "array", "maxItems": 3},
        {"type": "array", "maxItems": 2, "uniqueItems": True},
        [("MAX_ITEMS_DECREASED", "#/maxItems"), ("UNIQUE_ITEMS_ADDED", "#/uniqueItems")],
        [],
    ),
    (
        "tuple item added to an open content model",
        {"type": "array", "items": [S]},
        {"type": "array", "items": [S, I]},
        [("ITEM_ADDED_TO_OPEN_CONTENT_MODEL", "#/items/1")],
        [],
    ),
    (
        "tuple item added to a closed content model",
        {"type": "array", "items": [S], "additionalItems": False},
        {"type": "array", "items": [S, I], "additionalItems": False},
        [],
        [("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", "#/items/1")],
    ),
    (
        "oneOf member added",
        {"oneOf": [S, I]},
        {"oneOf": [S, I, {"type": "boolean"}]},
        [],
        [("SUM_TYPE_NARROWED", "#/")],
    ),
    ("allOf member added", {"allOf": [S]}, {"allOf": [S, {"maxLength": 3}]}, [("PRODUCT_TYPE_EXTENDED", "#/")], []),
    (
        "oneOf member changed",
        {"oneOf": [S, I]},
        {"oneOf": [S, {"type": "boolean"}]},
        [("COMBINED_TYPE_SUBSCHEMAS_CHANGED", "#/")],
        [("COMBINED_TYPE_SUBSCHEMAS_CHANGED", "#/")],
    ),
    ("oneOf to anyOf", {"oneOf": [S, I]}, {"anyOf": [S, I]}, [], [("COMBINED_TYPE_CHANGED", "#/")]),
    ("a type made a union with null", S, {"type": ["string", "null"]}, [], [("TYPE_CHANGED", "#/")]),
    ("a type made a oneOf with null", S, {"oneOf": [{"type": "null"}, S]}, [], [("TYPE_CHANGED", "#/")]),
    (
        "a nested change has the property's path",
        obj({"o": obj({"x": S})}),
        obj({"o": obj({"x": I})}),
        [("TYPE_CHANGED", "#/properties/o/properties/x")],
        [("TYPE_CHANGED", "#/properties/o/properties/x")],
    ),
    (
        "dependencies added",
        obj({"a": S, "b": S}),
        obj({"a": S, "b": S}, dependencies={"a": ["b"]}),
        [("DEPENDENCY_ARRAY_ADDED", "#/dependencies/a")],
        [],
    ),
    ("not narrowed", {"not": S}, {"not": {"type": ["string", "integer"]}}, [("NOT_TYPE_EXTENDED", "#/not")], []),
    (
        "typed enum extended",
        {**S, "enum": ["a"]},
        {**S, "enum": ["a", "b"]},
        [],
        [("COMBINED_TYPE_SUBSCHEMAS_CHANGED", "#/")],
    ),
    # everit reads type + enum as an allOf of both (a "synthetic" combined schema), so both ways differ in kind
    ("enum added to a type", S, {**S, "enum": ["a"]}, [("TYPE_CHANGED", "#/")], [("TYPE_CHANGED", "#/")]),
    ("nothing was valid before", False, S, [], [("TYPE_CHANGED", "#/")]),
    (
        "2020-12 prefixItems item added to a closed model",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "prefixItems": [S],
            "items": False,
        },
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "prefixItems": [S, I],
            "items": False,
        },
        [],
        [("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL", "#/items/1")],
    ),
    (
        "maxProperties decreased",
        obj({}, maxProperties=3),
        obj({}, maxProperties=2),
        [("MAX_PROPERTIES_DECREASED", "#/maxProperties")],
        [],
    ),
]


@pytest.mark.parametrize(("case", "old", "new", "backward", "forward"), CASES, ids=[c[0] for c in CASES])
def test_confluents_rules_in_both_directions(case, old, new, backward, forward):
    old_schema, new_schema = js(old), js(new)
    assert error_types(new_schema, old_schema) == backward
    assert error_types(old_schema, new_schema) == forward


def test_messages_are_printed_as_confluents_json_provider_prints_them():
    [message] = js(obj({"a": S, "b": I})).is_backward_compatible(js(obj({"a": S})))
    assert message == (
        '{errorType:"PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", description:"The new schema has an open content model '
        "and has a property or item at path '#/properties/b' which is missing in the old schema\"}"
    )
    [message] = js(I).is_backward_compatible(js(S))
    assert message == (
        '{errorType:"TYPE_CHANGED", description:"A type at path \'#/\' is different between the new schema and the old schema"}'
    )


def test_compatible_differences_are_found_but_not_reported():
    found = differences(js(obj({"a": S}, required=["a"])), js(obj({"a": S})))
    assert [(d.kind, d.path) for d in found] == [("REQUIRED_ATTRIBUTE_REMOVED", "#/required/a")]
    assert all(d.kind in COMPATIBLE_CHANGES for d in found)


def test_references_are_followed_into_definitions_and_referenced_schemas():
    v1 = js({"type": "integer"})
    v2 = js({"type": "string"})
    old = js(obj({"a": {"$ref": "#/definitions/t"}, "b": {"$ref": "b.json"}}, definitions={"t": S}), {"b.json": v1})
    new = js(obj({"a": {"$ref": "#/definitions/t"}, "b": {"$ref": "b.json"}}, definitions={"t": I}), {"b.json": v2})
    assert error_types(new, old) == [("TYPE_CHANGED", "#/properties/a"), ("TYPE_CHANGED", "#/properties/b")]


def test_recursive_schemas_terminate_and_still_find_changes():
    def tree(leaf: dict[str, Any]) -> dict[str, Any]:
        return {"type": ["object", "null"], "properties": {"next": {"$ref": "#"}, "v": leaf}}

    assert error_types(js(tree(I)), js(tree(I))) == []
    assert error_types(js(tree(N)), js(tree(I))) == []
    assert error_types(js(tree(I)), js(tree(N))) != []


def test_another_schema_type_is_incompatible():
    avro = parse_schema("AVRO", '"string"')
    [message] = js(S).is_backward_compatible(avro)
    assert "different schema type" in message


LEVEL_OLD = obj({"a": S}, additionalProperties=False)
LEVEL_MID = obj({"a": S, "b": I}, additionalProperties=False)
LEVEL_NEW = obj({"a": S, "b": I, "c": S}, additionalProperties=False)


@pytest.mark.parametrize(
    ("level", "history", "new", "compatible"),
    [
        ("NONE", [S], I, True),
        ("BACKWARD", [LEVEL_OLD], LEVEL_MID, True),
        ("FORWARD", [LEVEL_OLD], LEVEL_MID, False),
        ("FORWARD", [LEVEL_MID], LEVEL_OLD, True),
        ("FULL", [LEVEL_OLD], LEVEL_MID, False),
        ("FULL", [obj({"a": S})], obj({"a": S, "b": {}}), True),
        ("BACKWARD", [S, I], I, True),
        ("BACKWARD_TRANSITIVE", [S, I], I, False),
        ("BACKWARD_TRANSITIVE", [LEVEL_OLD, LEVEL_MID], LEVEL_NEW, True),
        ("FORWARD_TRANSITIVE", [LEVEL_NEW, LEVEL_MID], LEVEL_OLD, True),
        ("FULL_TRANSITIVE", [I, N], N, False),
    ],
)
def test_each_level_through_compatibility_errors(level, history, new, compatible):
    errors = compatibility_errors(js(new), [js(h) for h in history], level)
    assert (errors == []) is compatible, errors
