"""Confluent's JSON Schema compatibility rules for strings, numbers, ``enum`` and ``const``, and the
numeric bounds (``bound``) the object and array rules share.

A bound added or tightened (maxLength decreased, minimum increased, ...), a ``pattern`` added or changed and
a ``multipleOf`` added or not dividing the old one break compatibility; removing or loosening one does not.
``integer`` -> ``number`` is TYPE_EXTENDED, the reverse TYPE_NARROWED. ``enum`` values added
(ENUM_ARRAY_EXTENDED) are compatible, removed or changed are not; ``const`` changed is ENUM_ARRAY_CHANGED.
Pure.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from spark_kafkalog.schemas.json_schema.diff_context import DiffContext
from spark_kafkalog.schemas.json_schema.schema_node import SchemaNode
from spark_kafkalog.schemas.json_schema.walk import compact_json


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def bound(ctx: DiffContext, name: str, old: Any, new: Any, prefix: str) -> None:
    """ADDED / REMOVED / INCREASED / DECREASED of a numeric keyword ``name`` (kinds ``<prefix>_*``)."""
    old_n, new_n = _number(old), _number(new)
    if old_n == new_n:
        return
    if old_n is None:
        ctx.add(f"{prefix}_ADDED", name)
    elif new_n is None:
        ctx.add(f"{prefix}_REMOVED", name)
    elif old_n < new_n:
        ctx.add(f"{prefix}_INCREASED", name)
    else:
        ctx.add(f"{prefix}_DECREASED", name)


def compare_string(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    o, u = original.schema, update.schema
    bound(ctx, "maxLength", o.get("maxLength"), u.get("maxLength"), "MAX_LENGTH")
    bound(ctx, "minLength", o.get("minLength"), u.get("minLength"), "MIN_LENGTH")
    old_pattern, new_pattern = o.get("pattern"), u.get("pattern")
    if old_pattern is None and new_pattern is not None:
        ctx.add("PATTERN_ADDED", "pattern")
    elif old_pattern is not None and new_pattern is None:
        ctx.add("PATTERN_REMOVED", "pattern")
    elif old_pattern != new_pattern:
        ctx.add("PATTERN_CHANGED", "pattern")


def compare_number(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    o, u = original.schema, update.schema
    bound(ctx, "maximum", o.get("maximum"), u.get("maximum"), "MAXIMUM")
    bound(ctx, "minimum", o.get("minimum"), u.get("minimum"), "MINIMUM")
    bound(ctx, "exclusiveMaximum", o.get("exclusiveMaximum"), u.get("exclusiveMaximum"), "EXCLUSIVE_MAXIMUM")
    bound(ctx, "exclusiveMinimum", o.get("exclusiveMinimum"), u.get("exclusiveMinimum"), "EXCLUSIVE_MINIMUM")
    old_m, new_m = _number(o.get("multipleOf")), _number(u.get("multipleOf"))
    if old_m != new_m:
        if old_m is None:
            ctx.add("MULTIPLE_OF_ADDED", "multipleOf")
        elif new_m is None:
            ctx.add("MULTIPLE_OF_REMOVED", "multipleOf")
        elif new_m % old_m == 0:
            ctx.add("MULTIPLE_OF_EXPANDED", "multipleOf")
        elif old_m % new_m == 0:
            ctx.add("MULTIPLE_OF_REDUCED", "multipleOf")
        else:
            ctx.add("MULTIPLE_OF_CHANGED", "multipleOf")
    old_int, new_int = _requires_integer(o), _requires_integer(u)
    if old_int and not new_int:
        ctx.add("TYPE_EXTENDED")
    elif new_int and not old_int:
        ctx.add("TYPE_NARROWED")


def _requires_integer(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "integer" or schema.get("type") == ["integer"]


def _values(values: list[Any]) -> set[str]:
    return {compact_json(v) for v in values}


def compare_enum(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    old, new = _values(original.schema.get("enum") or []), _values(update.schema.get("enum") or [])
    if old == new:
        return
    if new >= old:
        ctx.add("ENUM_ARRAY_EXTENDED", "enum")
    elif old >= new:
        ctx.add("ENUM_ARRAY_NARROWED", "enum")
    else:
        ctx.add("ENUM_ARRAY_CHANGED", "enum")


def compare_const(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    if compact_json(original.schema.get("const")) != compact_json(update.schema.get("const")):
        ctx.add("ENUM_ARRAY_CHANGED", "const")
