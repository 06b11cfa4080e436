"""Confluent's JSON Schema compatibility rules for arrays: ``items`` (one schema, or tuple items: draft-07's
``items``/``additionalItems``, 2020-12's ``prefixItems``/``items``), min/maxItems and ``uniqueItems``.

Tuple items follow the content-model rules of the objects' properties (``content_model``), the extra-items
keyword in the role of ``additionalProperties``: an item added to an open model is incompatible unless its
schema is ``{}``, added to a closed one compatible; an item removed is compatible from an open new model,
incompatible from a closed one (unless it was ``false``); a partially open model must cover the item with its
schema. Extra items removed or narrowed, maxItems decreased, minItems increased and ``uniqueItems`` added
break compatibility. Pure.
"""

from __future__ import annotations

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


def _items(node: SchemaNode) -> tuple[Any, list[Any], str]:
    """``(schema for all items or None, tuple item schemas, keyword of the extra items)``: draft-07's
    ``items``/``additionalItems`` or 2020-12's ``prefixItems``/``items``."""
    schema = node.schema
    if isinstance(schema.get("prefixItems"), list):
        return None, schema["prefixItems"], "items"
    items = schema.get("items")
    if isinstance(items, list):
        return None, items, "additionalItems"
    return items, [], "additionalItems"


def _open_array(node: SchemaNode, extra: str) -> bool:
    return permits_additional(node, extra) and additional_schema(node, extra) is None


def compare_array(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    old_all, old_tuple, old_extra = _items(original)
    new_all, new_tuple, new_extra = _items(update)
    with ctx.at("items"):
        ctx.compare(
            None if old_all is None else classify_at(old_all, original.resolver),
            None if new_all is None else classify_at(new_all, update.resolver),
        )
    for index in range(max(len(old_tuple), len(new_tuple))):
        with ctx.at("items", str(index)):
            _compare_item(ctx, original, update, index, old_tuple, new_tuple, old_extra, new_extra)
    if old_tuple or new_tuple:
        with ctx.at("additionalItems"):
            compare_additional(ctx, original, update, old_extra, new_extra, "ADDITIONAL_ITEMS")
    o, u = original.schema, update.schema
    bound(ctx, "maxItems", o.get("maxItems"), u.get("maxItems"), "MAX_ITEMS")
    bound(ctx, "minItems", o.get("minItems"), u.get("minItems"), "MIN_ITEMS")
    old_unique, new_unique = bool(o.get("uniqueItems")), bool(u.get("uniqueItems"))
    if old_unique != new_unique:
        ctx.add("UNIQUE_ITEMS_REMOVED" if old_unique else "UNIQUE_ITEMS_ADDED", "uniqueItems")


def _compare_item(
    ctx: DiffContext,
    original: SchemaNode,
    update: SchemaNode,
    index: int,
    old_tuple: list[Any],
    new_tuple: list[Any],
    old_extra: str,
    new_extra: str,
) -> None:
    if index < len(old_tuple) and index < len(new_tuple):
        ctx.compare(classify_at(old_tuple[index], original.resolver), classify_at(new_tuple[index], update.resolver))
    elif index < len(old_tuple):
        compare_removed(
            ctx,
            classify_at(old_tuple[index], original.resolver),
            open_model=_open_array(update, new_extra),
            covering=additional_schema(update, new_extra),
            noun="ITEM",
        )
    else:
        new_schema = classify_at(new_tuple[index], update.resolver)
        covering = additional_schema(original, old_extra)
        if _open_array(original, old_extra):
            add_to_open_model(ctx, new_schema, "ITEM")
        elif covering is not None:
            compare_covered(ctx, covering, new_schema, "ITEM_ADDED")
        else:
            ctx.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")
