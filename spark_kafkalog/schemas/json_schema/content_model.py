"""The content-model rules objects' properties (``object_rules``) and arrays' tuple items (``array_rules``)
share: a member (``PROPERTY``/``ITEM``) removed from an open, partially open or closed model, a member
checked against the schema of a partially open model that covers it, and the extra-members keyword
(``additionalProperties``, ``additionalItems``/``items``) added, removed, narrowed or extended. The kinds
added are Confluent's difference names with the member's noun in front (``PROPERTY_REMOVED_FROM_OPEN_
CONTENT_MODEL``). Pure.
"""

from __future__ import annotations

from spark_kafkalog.schemas.json_schema.diff_context import DiffContext
from spark_kafkalog.schemas.json_schema.schema_node import SchemaNode, additional_schema, permits_additional


def compare_covered(ctx: DiffContext, old: SchemaNode, new: SchemaNode, change: str) -> None:
    """Adds the differences from ``old`` to ``new``, then ``<change>_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL``
    when they are all compatible, else ``<change>_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL`` (``change``:
    e.g. ``PROPERTY_ADDED``; the covering schema is ``new`` for a removed member, ``old`` for an added one)."""
    sub = ctx.sub()
    sub.compare(old, new)
    ctx.differences.extend(sub.differences)
    ctx.add(
        f"{change}_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
        if sub.compatible
        else f"{change}_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
    )


def compare_removed(
    ctx: DiffContext, old_schema: SchemaNode, *, open_model: bool, covering: SchemaNode | None, noun: str
) -> None:
    """A member whose old schema is ``old_schema`` is gone from the new model: compatible from an open one
    (``open_model``), checked against the schema of a partially open one that covers it (``covering``),
    incompatible from a closed one unless its schema was ``false``."""
    if open_model:
        ctx.add(f"{noun}_REMOVED_FROM_OPEN_CONTENT_MODEL")
    elif covering is not None:
        compare_covered(ctx, old_schema, covering, f"{noun}_REMOVED")
    elif old_schema.kind == "false":
        ctx.add(f"{noun}_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
    else:
        ctx.add(f"{noun}_REMOVED_FROM_CLOSED_CONTENT_MODEL")


def add_to_open_model(ctx: DiffContext, new_schema: SchemaNode, noun: str) -> None:
    """A member added to an open old model: incompatible (old data may hold anything there) unless its
    schema is ``{}``."""
    ctx.add(
        f"{noun}_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
        if new_schema.kind == "empty"
        else f"{noun}_ADDED_TO_OPEN_CONTENT_MODEL"
    )


def compare_additional(
    ctx: DiffContext, original: SchemaNode, update: SchemaNode, old_keyword: str, new_keyword: str, prefix: str
) -> None:
    """The extra-members keyword (``old_keyword`` in ``original``, ``new_keyword`` in ``update``): permitted
    in one only -> ``<prefix>_ADDED``/``_REMOVED``; a schema given in the new only -> ``_NARROWED``, in the old
    only -> ``_EXTENDED``; else the two schemas are compared."""
    old_permits, new_permits = permits_additional(original, old_keyword), permits_additional(update, new_keyword)
    old_schema, new_schema = additional_schema(original, old_keyword), additional_schema(update, new_keyword)
    if old_permits != new_permits:
        ctx.add(f"{prefix}_ADDED" if new_permits else f"{prefix}_REMOVED")
    elif old_schema is None and new_schema is not None:
        ctx.add(f"{prefix}_NARROWED")
    elif new_schema is None and old_schema is not None:
        ctx.add(f"{prefix}_EXTENDED")
    else:
        ctx.compare(old_schema, new_schema)
