"""Confluent's JSON Schema compatibility rules for combined schemas (``allOf``/``anyOf``/``oneOf``) and ``not``.

``allOf``/``oneOf`` -> ``anyOf`` and singleton changes are COMBINED_TYPE_EXTENDED, other criterion changes
COMBINED_TYPE_CHANGED; ``oneOf``/``anyOf`` members removed (SUM_TYPE_NARROWED) and ``allOf`` members added
(PRODUCT_TYPE_EXTENDED) break compatibility. The (distinct) members are matched pairwise: a maximum bipartite
matching of the compatible (old, new) pairs; an unmatched member of the smaller side is
COMBINED_TYPE_SUBSCHEMAS_CHANGED. ``not``: its subschemas compared the other way round (NOT_TYPE_NARROWED when
compatible so, else NOT_TYPE_EXTENDED). Pure.
"""

from __future__ import annotations

from typing import Any

from spark_kafkalog.schemas.json_schema.diff_context import DiffContext
from spark_kafkalog.schemas.json_schema.difference import Difference
from spark_kafkalog.schemas.json_schema.schema_node import SchemaNode, classify_at
from spark_kafkalog.schemas.json_schema.walk import compact_json


def compare_not(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    with ctx.at("not"):
        sub = ctx.sub()
        sub.compare(
            classify_at(update.schema["not"], update.resolver),
            classify_at(original.schema["not"], original.resolver),
        )
        ctx.add("NOT_TYPE_NARROWED" if sub.compatible else "NOT_TYPE_EXTENDED")


def _criterion_change(original: SchemaNode, update: SchemaNode) -> str | None:
    old, new = original.criterion, update.criterion
    if old == new:
        return None
    if new == "anyOf":
        return "COMBINED_TYPE_EXTENDED"
    if new == "oneOf":
        return "COMBINED_TYPE_EXTENDED" if len(original.members) == 1 else "COMBINED_TYPE_CHANGED"
    if new == "allOf" and len(original.members) == 1 and len(update.members) == 1:
        return "COMBINED_TYPE_EXTENDED"
    return "COMBINED_TYPE_CHANGED"


def _distinct(members: list[SchemaNode]) -> list[SchemaNode]:
    seen: dict[str, SchemaNode] = {}
    for member in members:
        seen.setdefault(compact_json(member.schema) + member.kind + member.criterion, member)
    return list(seen.values())


def compare_combined(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    change = _criterion_change(original, update)
    if change is not None:
        ctx.add(change)
        if change == "COMBINED_TYPE_CHANGED":
            return
    old_members, new_members = _distinct(original.members), _distinct(update.members)
    if len(old_members) < len(new_members):
        ctx.add("PRODUCT_TYPE_EXTENDED" if update.criterion == "allOf" else "SUM_TYPE_EXTENDED")
    elif len(old_members) > len(new_members):
        ctx.add("PRODUCT_TYPE_NARROWED" if update.criterion == "allOf" else "SUM_TYPE_NARROWED")
    edges: dict[int, dict[int, list[Difference]]] = {}
    for i, old in enumerate(old_members):
        with ctx.at(original.criterion, str(i)):
            for j, new in enumerate(new_members):
                sub = ctx.sub()
                sub.compare(old, new)
                if sub.compatible:
                    edges.setdefault(i, {})[j] = sub.differences
    matching = _maximum_matching(edges)
    for i, j in sorted(matching.items()):
        ctx.differences.extend(edges[i][j])
    if len(matching) < min(len(old_members), len(new_members)):
        ctx.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")


def _maximum_matching(edges: dict[int, dict[int, Any]]) -> dict[int, int]:
    """A maximum bipartite matching (left -> right) of ``edges`` by augmenting paths."""
    match_right: dict[int, int] = {}

    def augment(left: int, visited: set[int]) -> bool:
        for right in edges.get(left, {}):
            if right in visited:
                continue
            visited.add(right)
            if right not in match_right or augment(match_right[right], visited):
                match_right[right] = left
                return True
        return False

    for left in sorted(edges):
        augment(left, set())
    return {left: right for right, left in match_right.items()}
