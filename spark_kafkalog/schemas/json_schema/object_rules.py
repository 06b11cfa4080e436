"""Confluent's JSON Schema compatibility rules for objects: properties, ``required``, dependencies,
``additionalProperties`` and min/maxProperties.

Content models: *open* = no ``additionalProperties`` schema, not ``false``, no ``patternProperties``;
*closed* = ``additionalProperties: false``; *partially open* otherwise. A property added to an open model is
PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (incompatible: old data may hold anything under that name) unless its
schema is ``{}``; added to a closed model it is compatible when optional, incompatible when required without
a default; added to a partially open model it must be compatible with the schema that covered it. A property
removed is compatible from an open new model, incompatible from a closed one, and must be covered by a
partially open one. ``required`` added without a default, ``additionalProperties`` narrowed or removed,
min/maxProperties tightened and dependencies added or extended break compatibility. Pure.
"""

from __future__ import annotations

import re
from typing import Any

from spark_kafkalog.schemas.json_schema.content_model import (
    add_to_open_model,
    compare_additional,
    compare_covered,
    compare_removed,
)
from spark_kafkalog.schemas.json_schema.diff_context import DiffContext
from spark_kafkalog.schemas.json_schema.scalar_rules import bound
from spark_kafkalog.schemas.json_schema.schema_node import (
    SchemaNode,
    additional_schema,
    classify_at,
    permits_additional,
)


def _properties(node: SchemaNode) -> dict[str, Any]:
    properties = node.schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _required(node: SchemaNode) -> set[str]:
    required = node.schema.get("required")
    return set(required) if isinstance(required, list) else set()


def _open_object(node: SchemaNode) -> bool:
    return (
        not node.schema.get("patternProperties")
        and additional_schema(node, "additionalProperties") is None
        and permits_additional(node, "additionalProperties")
    )


def _covering_schema(node: SchemaNode, name: str) -> SchemaNode | None:
    patterns = node.schema.get("patternProperties")
    if isinstance(patterns, dict):
        for pattern, schema in patterns.items():
            try:
                if re.search(pattern, name):
                    return classify_at(schema, node.resolver)
            except re.error:
                continue
    return additional_schema(node, "additionalProperties")


def _has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema


def compare_object(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    old_props, new_props = _properties(original), _properties(update)
    old_required, new_required = _required(original), _required(update)
    with ctx.at("required"):
        for name in old_props:
            if name not in new_props:
                continue
            if name in old_required and name not in new_required:
                ctx.add("REQUIRED_ATTRIBUTE_REMOVED", name)
            elif name in new_required and name not in old_required:
                default = _has_default(new_props[name])
                ctx.add("REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED" if default else "REQUIRED_ATTRIBUTE_ADDED", name)
    with ctx.at("properties"):
        for name in [*old_props, *(n for n in new_props if n not in old_props)]:
            with ctx.at(name):
                _compare_property(ctx, original, update, name, old_props, new_props, new_required)
    _compare_dependencies(ctx, original, update)
    with ctx.at("additionalProperties"):
        compare_additional(
            ctx, original, update, "additionalProperties", "additionalProperties", "ADDITIONAL_PROPERTIES"
        )
    bound(
        ctx, "maxProperties", original.schema.get("maxProperties"), update.schema.get("maxProperties"), "MAX_PROPERTIES"
    )
    bound(
        ctx, "minProperties", original.schema.get("minProperties"), update.schema.get("minProperties"), "MIN_PROPERTIES"
    )


def _compare_property(
    ctx: DiffContext,
    original: SchemaNode,
    update: SchemaNode,
    name: str,
    old_props: dict[str, Any],
    new_props: dict[str, Any],
    new_required: set[str],
) -> None:
    if name not in new_props:
        open_model = _open_object(update)
        compare_removed(
            ctx,
            classify_at(old_props[name], original.resolver),
            open_model=open_model,
            covering=None if open_model else _covering_schema(update, name),
            noun="PROPERTY",
        )
        return
    new_schema = classify_at(new_props[name], update.resolver)
    if name not in old_props:
        if _open_object(original):
            add_to_open_model(ctx, new_schema, "PROPERTY")
            return
        covering = _covering_schema(original, name)
        if covering is not None:
            compare_covered(ctx, covering, new_schema, "PROPERTY_ADDED")
        if name in new_required:
            ctx.add(
                "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
                if _has_default(new_props[name])
                else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
            )
        else:
            ctx.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
        return
    ctx.compare(classify_at(old_props[name], original.resolver), new_schema)


def _dependencies(node: SchemaNode) -> tuple[dict[str, set[str]], dict[str, Any]]:
    arrays: dict[str, set[str]] = {}
    schemas: dict[str, Any] = {}
    for keyword in ("dependencies", "dependentRequired", "dependentSchemas"):
        value = node.schema.get(keyword)
        if not isinstance(value, dict):
            continue
        for name, dependency in value.items():
            if isinstance(dependency, list):
                arrays[name] = set(dependency)
            else:
                schemas[name] = dependency
    return arrays, schemas


def _compare_dependencies(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    old_arrays, old_schemas = _dependencies(original)
    new_arrays, new_schemas = _dependencies(update)
    with ctx.at("dependencies"):
        for name in [*old_arrays, *(n for n in new_arrays if n not in old_arrays)]:
            with ctx.at(name):
                old, new = old_arrays.get(name), new_arrays.get(name)
                if new is None:
                    ctx.add("DEPENDENCY_ARRAY_REMOVED")
                elif old is None:
                    ctx.add("DEPENDENCY_ARRAY_ADDED")
                elif old != new:
                    if new >= old:
                        ctx.add("DEPENDENCY_ARRAY_EXTENDED")
                    elif old >= new:
                        ctx.add("DEPENDENCY_ARRAY_NARROWED")
                    else:
                        ctx.add("DEPENDENCY_ARRAY_CHANGED")
        for name in [*old_schemas, *(n for n in new_schemas if n not in old_schemas)]:
            with ctx.at(name):
                if name not in new_schemas:
                    ctx.add("DEPENDENCY_SCHEMA_REMOVED")
                elif name not in old_schemas:
                    ctx.add("DEPENDENCY_SCHEMA_ADDED")
                else:
                    ctx.compare(
                        classify_at(old_schemas[name], original.resolver),
                        classify_at(new_schemas[name], update.resolver),
                    )
