"""Confluent's JSON Schema compatibility rules: the differences between an old (writer) and a new (reader)
schema, and which of them break BACKWARD compatibility.

``backward_errors(new, old)`` is ``JsonSchema.is_backward_compatible``: it walks both documents together
(following ``$ref`` into definitions and referenced schemas; a pair met again while being compared, i.e.
recursion, counts as compatible) and lists each incompatible difference as Confluent's JSON provider prints
it::

    {errorType:"TYPE_CHANGED", description:"A type at path '#/properties/age' is different between the new
    schema and the old schema"}

(one line). The difference kinds and the compatible ones are those of Confluent's ``Difference.Type`` and
``SchemaDiff.COMPATIBLE_CHANGES``; the main rules:

- A schema is classified as Confluent's parser (everit) does: by ``type`` (``integer`` and ``number`` are one
  kind, ``integer`` -> ``number`` is TYPE_EXTENDED, the reverse TYPE_NARROWED), or by the keywords present;
  ``enum``, ``const``, ``not``, ``{}``/``true`` and ``false`` are kinds of their own; a ``type`` list is an
  ``anyOf`` of one schema per type; ``enum`` or a combiner next to ``type`` make an ``allOf``. Kinds that
  differ are TYPE_CHANGED unless the old schema is ``false`` or the new one accepts anything. A non-union old
  schema against a ``oneOf``/``anyOf`` new one that contains a compatible member is SUM_TYPE_EXTENDED.
- Objects (content model: *open* = no ``additionalProperties`` schema, not ``false``, no
  ``patternProperties``; *closed* = ``additionalProperties: false``; *partially open* otherwise): a property
  added to an open model is PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (incompatible: old data may hold anything under
  that name) unless its schema is ``{}``; added to a closed model it is compatible when optional
  (OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL), incompatible when required without a default
  (REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL); added to a partially open model it must be compatible
  with the schema that covered it. A property removed is compatible from an open new model, incompatible from
  a closed one (PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL), and must be covered by a partially open one.
  ``required`` added without a default, ``additionalProperties`` narrowed or removed, min/maxProperties
  tightened and dependencies added or extended break compatibility.
- Strings, numbers and arrays: a bound added or tightened (maxLength decreased, minimum increased, a
  ``pattern`` added or changed, ``multipleOf`` added or not dividing the old one, maxItems decreased,
  ``uniqueItems`` added, ...) breaks compatibility; removing or loosening one does not. Tuple items follow
  the content-model rules of ``additionalItems``.
- ``enum``: values added (ENUM_ARRAY_EXTENDED) are compatible, removed or changed are not; ``const`` changed
  is ENUM_ARRAY_CHANGED.
- Combined schemas (``allOf``/``anyOf``/``oneOf``): ``allOf``/``oneOf`` -> ``anyOf`` and singleton changes
  are COMBINED_TYPE_EXTENDED, other criterion changes COMBINED_TYPE_CHANGED; ``oneOf``/``anyOf`` members
  removed (SUM_TYPE_NARROWED) and ``allOf`` members added (PRODUCT_TYPE_EXTENDED) break compatibility; the
  members are matched pairwise (a maximum matching of compatible pairs) and an unmatched member of the smaller
  side is COMBINED_TYPE_SUBSCHEMAS_CHANGED. ``not``: compared reversed.

Not covered: ``unevaluatedProperties``/``unevaluatedItems``, ``contains``/``min/maxContains``, ``if``/
``then``/``else`` and Confluent's metadata (reserved properties) rules.

The description's two roles are filled with "new" (this schema, the reader) and "old" (``previous``); the
registry adds Confluent's ``{oldSchemaVersion: n}`` and ``{oldSchema: '...'}`` lines itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol, runtime_checkable

from referencing._core import Resolver

from spark_kafkalog.schemas.json_schema.walk import CircularReference, compact_json, deref, descend
from spark_kafkalog.schemas.parsed_schema import JSON, InvalidSchemaError, ParsedSchema


@runtime_checkable
class _Document(Protocol):
    """What the check needs of a ``JsonSchema`` (this module does not import it: ``JsonSchema`` calls it)."""

    @property
    def document(self) -> dict[str, Any] | bool: ...

    def resolver(self) -> Resolver[Any]: ...


COMPATIBLE_CHANGES = frozenset(
    """
    ID_CHANGED DESCRIPTION_CHANGED TITLE_CHANGED DEFAULT_CHANGED SCHEMA_REMOVED TYPE_EXTENDED
    MAX_LENGTH_INCREASED MAX_LENGTH_REMOVED MIN_LENGTH_DECREASED MIN_LENGTH_REMOVED PATTERN_REMOVED
    MAXIMUM_INCREASED MAXIMUM_REMOVED MINIMUM_DECREASED MINIMUM_REMOVED EXCLUSIVE_MAXIMUM_INCREASED
    EXCLUSIVE_MAXIMUM_REMOVED EXCLUSIVE_MINIMUM_DECREASED EXCLUSIVE_MINIMUM_REMOVED MULTIPLE_OF_REDUCED
    MULTIPLE_OF_REMOVED
    REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED REQUIRED_ATTRIBUTE_REMOVED DEPENDENCY_ARRAY_NARROWED
    DEPENDENCY_ARRAY_REMOVED DEPENDENCY_SCHEMA_REMOVED MAX_PROPERTIES_INCREASED MAX_PROPERTIES_REMOVED
    MIN_PROPERTIES_DECREASED MIN_PROPERTIES_REMOVED ADDITIONAL_PROPERTIES_ADDED ADDITIONAL_PROPERTIES_EXTENDED
    PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
    OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    MAX_ITEMS_INCREASED MAX_ITEMS_REMOVED MIN_ITEMS_DECREASED MIN_ITEMS_REMOVED UNIQUE_ITEMS_REMOVED
    ADDITIONAL_ITEMS_ADDED ADDITIONAL_ITEMS_EXTENDED ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
    ITEM_ADDED_TO_CLOSED_CONTENT_MODEL ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
    ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
    ENUM_ARRAY_EXTENDED COMBINED_TYPE_EXTENDED PRODUCT_TYPE_NARROWED SUM_TYPE_EXTENDED NOT_TYPE_NARROWED
    """.split()
)
"""Confluent's ``SchemaDiff.COMPATIBLE_CHANGES``: the differences that keep BACKWARD compatibility."""

_KEYWORD_ADDED = {
    "MAXIMUM_ADDED", "MINIMUM_ADDED", "EXCLUSIVE_MAXIMUM_ADDED", "EXCLUSIVE_MINIMUM_ADDED", "MULTIPLE_OF_ADDED",
    "MAX_LENGTH_ADDED", "MIN_LENGTH_ADDED", "PATTERN_ADDED", "REQUIRED_ATTRIBUTE_ADDED", "MAX_PROPERTIES_ADDED",
    "MIN_PROPERTIES_ADDED", "DEPENDENCY_ARRAY_ADDED", "DEPENDENCY_SCHEMA_ADDED", "MAX_ITEMS_ADDED",
    "MIN_ITEMS_ADDED", "UNIQUE_ITEMS_ADDED", "ADDITIONAL_ITEMS_REMOVED", "ADDITIONAL_PROPERTIES_REMOVED",
}  # fmt: skip
_VALUE_INCREASED = {
    "MIN_LENGTH_INCREASED", "MINIMUM_INCREASED", "EXCLUSIVE_MINIMUM_INCREASED", "MIN_PROPERTIES_INCREASED",
    "MULTIPLE_OF_EXPANDED", "MIN_ITEMS_INCREASED",
}  # fmt: skip
_VALUE_DECREASED = {
    "MAX_LENGTH_DECREASED", "MAXIMUM_DECREASED", "MAX_ITEMS_DECREASED", "EXCLUSIVE_MAXIMUM_DECREASED",
    "MAX_PROPERTIES_DECREASED",
}  # fmt: skip
_TYPE_NARROWED = {
    "ADDITIONAL_ITEMS_NARROWED",
    "ENUM_ARRAY_NARROWED",
    "SUM_TYPE_NARROWED",
    "ADDITIONAL_PROPERTIES_NARROWED",
}
_VALUE_CHANGED = {"PATTERN_CHANGED", "MULTIPLE_OF_CHANGED", "DEPENDENCY_ARRAY_CHANGED"}
_TYPE_CHANGED = {
    "TYPE_CHANGED",
    "TYPE_NARROWED",
    "COMBINED_TYPE_CHANGED",
    "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
    "ENUM_ARRAY_CHANGED",
}
_TYPE_EXTENDED = {"DEPENDENCY_ARRAY_EXTENDED", "PRODUCT_TYPE_EXTENDED", "SUM_TYPE_EXTENDED", "NOT_TYPE_EXTENDED"}
_ADDED_TO_OPEN = {"PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"}


def describe(kind: str, path: str, new: str = "new", old: str = "old") -> str:
    """Confluent's description of a difference of ``kind`` at ``path`` (``new``/``old`` name the two roles)."""
    if kind in _KEYWORD_ADDED:
        return f"The keyword at path '{path}' in the {new} schema is not present in the {old} schema"
    if kind in _VALUE_INCREASED:
        return f"The value at path '{path}' in the {new} schema is more than its value in the {old} schema"
    if kind in _VALUE_DECREASED:
        return f"The value at path '{path}' in the {new} schema is less than its value in the {old} schema"
    if kind in _VALUE_CHANGED:
        return f"The value at path '{path}' is different between the {new} and {old} schema"
    if kind in _TYPE_NARROWED:
        return (
            f"An array or combined type at path '{path}' has fewer elements in the {new} schema than the {old} schema"
        )
    if kind in _TYPE_EXTENDED:
        return f"An array or combined type at path '{path}' has more elements in the {new} schema than the {old} schema"
    if kind in _TYPE_CHANGED:
        return f"A type at path '{path}' is different between the {new} schema and the {old} schema"
    if kind in _ADDED_TO_OPEN:
        return (
            f"The {new} schema has an open content model and has a property or item at path '{path}' "
            f"which is missing in the {old} schema"
        )
    if kind == "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL":
        return (
            f"The {new} schema has an unopen content model and has a required property at path '{path}' "
            f"which is missing in the {old} schema"
        )
    if kind in ("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"):
        return (
            f"The {new} schema has a closed content model and is missing a property or item present "
            f"at path '{path}' in the {old} schema"
        )
    if kind in (
        "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    ):
        return (
            f"A property or item is missing in the {new} schema but present at path '{path}' in the {old} schema "
            "and is not covered by its partially open content model"
        )
    if kind in (
        "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    ):
        return (
            f"The {new} schema has a property or item at path '{path}' which is missing in the {old} schema "
            "and is not covered by its partially open content model"
        )
    if kind == "SCHEMA_ADDED":
        return f"A schema at path '{path}' is present in the {new} schema but not in the {old} schema"
    return f"A difference {kind} at path '{path}' between the {new} and {old} schema"


@dataclass(frozen=True)
class Difference:
    kind: str
    path: str

    @property
    def compatible(self) -> bool:
        return self.kind in COMPATIBLE_CHANGES

    def message(self, new: str = "new", old: str = "old") -> str:
        """Confluent's printed form: ``{errorType:"KIND", description:"..."}``."""
        return f'{{errorType:"{self.kind}", description:"{describe(self.kind, self.path, new, old)}"}}'


@dataclass
class _Node:
    """A schema classified as Confluent's parser does (``kind``), with the resolver in scope at it."""

    kind: str
    schema: dict[str, Any]
    resolver: Resolver[Any] = field(repr=False)
    members: list[_Node] = field(default_factory=list)  # combined: the subschemas
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


def _classify(schema: Any, resolver: Resolver[Any]) -> _Node:
    """The node of a (dereferenced) schema."""
    if schema is True or (isinstance(schema, dict) and not schema):
        return _Node("empty", {}, resolver)
    if schema is False:
        return _Node("false", {}, resolver)
    if not isinstance(schema, dict):
        raise InvalidSchemaError(f"a subschema must be an object or a boolean, not {compact_json(schema)[:40]}")
    resolver = descend(schema, resolver)
    parts: list[_Node] = []
    typed = _typed_node(schema, resolver)
    if typed is not None:
        parts.append(typed)
    if "enum" in schema:
        parts.append(_Node("enum", schema, resolver))
    if "const" in schema:
        parts.append(_Node("const", schema, resolver))
    if "not" in schema:
        parts.append(_Node("not", schema, resolver))
    for combiner in _COMBINERS:
        if isinstance(schema.get(combiner), list):
            members = [_classify_at(m, resolver) for m in schema[combiner]]
            parts.append(_Node("combined", schema, resolver, members, combiner))
    if not parts:
        return _Node("empty", schema, resolver)
    if len(parts) == 1:
        return parts[0]
    return _Node("combined", schema, resolver, parts, "allOf")


def _typed_node(schema: dict[str, Any], resolver: Resolver[Any]) -> _Node | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        if len(kind) == 1:
            kind = kind[0]
        else:
            variants = [_Node(_kind_of(k), {**schema, "type": k}, resolver, origin=id(schema)) for k in kind]
            return _Node("combined", schema, resolver, variants, "anyOf")
    if isinstance(kind, str):
        return _Node(_kind_of(kind), schema, resolver)
    for keywords, implied in (
        (_OBJECT_KEYWORDS, "object"),
        (_ARRAY_KEYWORDS, "array"),
        (_STRING_KEYWORDS, "string"),
        (_NUMBER_KEYWORDS, "number"),
    ):
        if any(k in schema for k in keywords):
            return _Node(implied, schema, resolver)
    return None


def _kind_of(json_type: str) -> str:
    return "number" if json_type == "integer" else json_type


def _classify_at(schema: Any, resolver: Resolver[Any]) -> _Node:
    """The node of ``schema`` after following its ``$ref`` chain."""
    try:
        schema, resolver = deref(schema, resolver)
    except CircularReference:
        return _Node("empty", {}, resolver)
    return _classify(schema, resolver)


class _Context:
    """Differences found so far at a JSON path, and the pairs being compared (recursion guard)."""

    def __init__(
        self, path: list[str] | None = None, in_progress: set[tuple[int, str, int, str]] | None = None
    ) -> None:
        self.path = list(path or [])
        self.in_progress = in_progress if in_progress is not None else set()
        self.differences: list[Difference] = []

    def sub(self) -> _Context:
        return _Context(self.path, self.in_progress)

    @contextmanager
    def at(self, *segments: str) -> Iterator[None]:
        self.path.extend(segments)
        try:
            yield
        finally:
            del self.path[len(self.path) - len(segments) :]

    def add(self, kind: str, *attribute: str) -> None:
        self.differences.append(Difference(kind, "#/" + "/".join([*self.path, *attribute])))

    @property
    def compatible(self) -> bool:
        return all(d.compatible for d in self.differences)


def _compare(ctx: _Context, original: _Node | None, update: _Node | None) -> None:
    if original is None and update is None:
        return
    if original is None:
        ctx.add("SCHEMA_ADDED")
        return
    if update is None:
        ctx.add("SCHEMA_REMOVED")
        return
    if original.kind != "combined" and update.kind == "combined":
        if len(update.members) == 1:
            sub = ctx.sub()
            _compare(sub, original, update.members[0])
            if sub.compatible:
                ctx.differences.extend(sub.differences)
                return
        elif update.criterion in ("anyOf", "oneOf"):
            for member in update.members:
                sub = ctx.sub()
                _compare(sub, original, member)
                if sub.compatible:
                    ctx.differences.extend(sub.differences)
                    ctx.add("SUM_TYPE_EXTENDED")
                    return
    elif original.kind == "combined" and update.kind != "combined" and len(original.members) == 1:
        sub = ctx.sub()
        _compare(sub, original.members[0], update)
        if sub.compatible:
            ctx.differences.extend(sub.differences)
            return
    if original.kind != update.kind:
        if original.kind != "false" and update.kind != "empty":
            ctx.add("TYPE_CHANGED")
        return
    key = (original.origin, original.kind, update.origin, update.kind)
    if key in ctx.in_progress:
        return  # recursion: compatible
    ctx.in_progress.add(key)
    try:
        _COMPARERS.get(original.kind, _compare_nothing)(ctx, original, update)
    finally:
        ctx.in_progress.discard(key)


def _compare_nothing(ctx: _Context, original: _Node, update: _Node) -> None:
    return


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _bound(ctx: _Context, name: str, old: Any, new: Any, prefix: str) -> None:
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


def _compare_string(ctx: _Context, original: _Node, update: _Node) -> None:
    o, u = original.schema, update.schema
    _bound(ctx, "maxLength", o.get("maxLength"), u.get("maxLength"), "MAX_LENGTH")
    _bound(ctx, "minLength", o.get("minLength"), u.get("minLength"), "MIN_LENGTH")
    old_pattern, new_pattern = o.get("pattern"), u.get("pattern")
    if old_pattern is None and new_pattern is not None:
        ctx.add("PATTERN_ADDED", "pattern")
    elif old_pattern is not None and new_pattern is None:
        ctx.add("PATTERN_REMOVED", "pattern")
    elif old_pattern != new_pattern:
        ctx.add("PATTERN_CHANGED", "pattern")


def _compare_number(ctx: _Context, original: _Node, update: _Node) -> None:
    o, u = original.schema, update.schema
    _bound(ctx, "maximum", o.get("maximum"), u.get("maximum"), "MAXIMUM")
    _bound(ctx, "minimum", o.get("minimum"), u.get("minimum"), "MINIMUM")
    _bound(ctx, "exclusiveMaximum", o.get("exclusiveMaximum"), u.get("exclusiveMaximum"), "EXCLUSIVE_MAXIMUM")
    _bound(ctx, "exclusiveMinimum", o.get("exclusiveMinimum"), u.get("exclusiveMinimum"), "EXCLUSIVE_MINIMUM")
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


def _compare_enum(ctx: _Context, original: _Node, update: _Node) -> None:
    old, new = _values(original.schema.get("enum") or []), _values(update.schema.get("enum") or [])
    if old == new:
        return
    if new >= old:
        ctx.add("ENUM_ARRAY_EXTENDED", "enum")
    elif old >= new:
        ctx.add("ENUM_ARRAY_NARROWED", "enum")
    else:
        ctx.add("ENUM_ARRAY_CHANGED", "enum")


def _compare_const(ctx: _Context, original: _Node, update: _Node) -> None:
    if compact_json(original.schema.get("const")) != compact_json(update.schema.get("const")):
        ctx.add("ENUM_ARRAY_CHANGED", "const")


def _compare_not(ctx: _Context, original: _Node, update: _Node) -> None:
    with ctx.at("not"):
        sub = ctx.sub()
        _compare(
            sub,
            _classify_at(update.schema["not"], update.resolver),
            _classify_at(original.schema["not"], original.resolver),
        )
        ctx.add("NOT_TYPE_NARROWED" if sub.compatible else "NOT_TYPE_EXTENDED")


def _subschema(node: _Node, keyword: str, *keys: str | int) -> _Node | None:
    value: Any = node.schema.get(keyword)
    for key in keys:
        if isinstance(value, dict) and isinstance(key, str):
            value = value.get(key)
        elif isinstance(value, list) and isinstance(key, int) and key < len(value):
            value = value[key]
        else:
            return None
    if value is None:
        return None
    return _classify_at(value, node.resolver)


# objects


def _properties(node: _Node) -> dict[str, Any]:
    properties = node.schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _required(node: _Node) -> set[str]:
    required = node.schema.get("required")
    return set(required) if isinstance(required, list) else set()


def _permits_additional(node: _Node, keyword: str) -> bool:
    return node.schema.get(keyword, True) is not False


def _additional_schema(node: _Node, keyword: str) -> _Node | None:
    """The schema of ``additionalProperties``/``additionalItems`` when it is one (``{}`` included; not a
    boolean)."""
    value = node.schema.get(keyword)
    return _classify_at(value, node.resolver) if isinstance(value, dict) else None


def _open_object(node: _Node) -> bool:
    return (
        not node.schema.get("patternProperties")
        and _additional_schema(node, "additionalProperties") is None
        and _permits_additional(node, "additionalProperties")
    )


def _covering_schema(node: _Node, name: str) -> _Node | None:
    patterns = node.schema.get("patternProperties")
    if isinstance(patterns, dict):
        for pattern, schema in patterns.items():
            try:
                if re.search(pattern, name):
                    return _classify_at(schema, node.resolver)
            except re.error:
                continue
    return _additional_schema(node, "additionalProperties")


def _has_default(schema: Any) -> bool:
    return isinstance(schema, dict) and "default" in schema


def _compare_object(ctx: _Context, original: _Node, update: _Node) -> None:
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
        _compare_additional(ctx, original, update, "additionalProperties", "ADDITIONAL_PROPERTIES")
    _bound(
        ctx, "maxProperties", original.schema.get("maxProperties"), update.schema.get("maxProperties"), "MAX_PROPERTIES"
    )
    _bound(
        ctx, "minProperties", original.schema.get("minProperties"), update.schema.get("minProperties"), "MIN_PROPERTIES"
    )


def _compare_property(
    ctx: _Context,
    original: _Node,
    update: _Node,
    name: str,
    old_props: dict[str, Any],
    new_props: dict[str, Any],
    new_required: set[str],
) -> None:
    if name not in new_props:
        old_schema = _classify_at(old_props[name], original.resolver)
        if _open_object(update):
            ctx.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
            return
        covering = _covering_schema(update, name)
        if covering is not None:
            sub = ctx.sub()
            _compare(sub, old_schema, covering)
            ctx.differences.extend(sub.differences)
            ctx.add(
                "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if sub.compatible
                else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        elif old_schema.kind == "false":
            ctx.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        else:
            ctx.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        return
    new_schema = _classify_at(new_props[name], update.resolver)
    if name not in old_props:
        if _open_object(original):
            ctx.add(
                "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                if new_schema.kind == "empty"
                else "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
            )
            return
        covering = _covering_schema(original, name)
        if covering is not None:
            sub = ctx.sub()
            _compare(sub, covering, new_schema)
            ctx.differences.extend(sub.differences)
            ctx.add(
                "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if sub.compatible
                else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        if name in new_required:
            ctx.add(
                "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
                if _has_default(new_props[name])
                else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
            )
        else:
            ctx.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
        return
    _compare(ctx, _classify_at(old_props[name], original.resolver), new_schema)


def _dependencies(node: _Node) -> tuple[dict[str, set[str]], dict[str, Any]]:
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


def _compare_dependencies(ctx: _Context, original: _Node, update: _Node) -> None:
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
                    _compare(
                        ctx,
                        _classify_at(old_schemas[name], original.resolver),
                        _classify_at(new_schemas[name], update.resolver),
                    )


def _compare_additional(ctx: _Context, original: _Node, update: _Node, keyword: str, prefix: str) -> None:
    old_permits, new_permits = _permits_additional(original, keyword), _permits_additional(update, keyword)
    old_schema, new_schema = _additional_schema(original, keyword), _additional_schema(update, keyword)
    if old_permits != new_permits:
        ctx.add(f"{prefix}_ADDED" if new_permits else f"{prefix}_REMOVED")
    elif old_schema is None and new_schema is not None:
        ctx.add(f"{prefix}_NARROWED")
    elif new_schema is None and old_schema is not None:
        ctx.add(f"{prefix}_EXTENDED")
    else:
        _compare(ctx, old_schema, new_schema)


# arrays


def _items(node: _Node) -> tuple[Any, list[Any], str]:
    """``(schema for all items or None, tuple item schemas, keyword of the extra items)``: draft-07's
    ``items``/``additionalItems`` or 2020-12's ``prefixItems``/``items``."""
    schema = node.schema
    if isinstance(schema.get("prefixItems"), list):
        return None, schema["prefixItems"], "items"
    items = schema.get("items")
    if isinstance(items, list):
        return None, items, "additionalItems"
    return items, [], "additionalItems"


def _open_array(node: _Node, extra: str) -> bool:
    return _permits_additional(node, extra) and _additional_schema(node, extra) is None


def _compare_array(ctx: _Context, original: _Node, update: _Node) -> None:
    old_all, old_tuple, old_extra = _items(original)
    new_all, new_tuple, new_extra = _items(update)
    with ctx.at("items"):
        _compare(
            ctx,
            None if old_all is None else _classify_at(old_all, original.resolver),
            None if new_all is None else _classify_at(new_all, update.resolver),
        )
    for index in range(max(len(old_tuple), len(new_tuple))):
        with ctx.at("items", str(index)):
            _compare_item(ctx, original, update, index, old_tuple, new_tuple, old_extra, new_extra)
    with ctx.at("additionalItems"):
        old_permits, new_permits = _permits_additional(original, old_extra), _permits_additional(update, new_extra)
        old_schema, new_schema = _additional_schema(original, old_extra), _additional_schema(update, new_extra)
        if old_tuple or new_tuple:
            if old_permits != new_permits:
                ctx.add("ADDITIONAL_ITEMS_ADDED" if new_permits else "ADDITIONAL_ITEMS_REMOVED")
            elif old_schema is None and new_schema is not None:
                ctx.add("ADDITIONAL_ITEMS_NARROWED")
            elif new_schema is None and old_schema is not None:
                ctx.add("ADDITIONAL_ITEMS_EXTENDED")
            else:
                _compare(ctx, old_schema, new_schema)
    o, u = original.schema, update.schema
    _bound(ctx, "maxItems", o.get("maxItems"), u.get("maxItems"), "MAX_ITEMS")
    _bound(ctx, "minItems", o.get("minItems"), u.get("minItems"), "MIN_ITEMS")
    old_unique, new_unique = bool(o.get("uniqueItems")), bool(u.get("uniqueItems"))
    if old_unique != new_unique:
        ctx.add("UNIQUE_ITEMS_REMOVED" if old_unique else "UNIQUE_ITEMS_ADDED", "uniqueItems")


def _compare_item(
    ctx: _Context,
    original: _Node,
    update: _Node,
    index: int,
    old_tuple: list[Any],
    new_tuple: list[Any],
    old_extra: str,
    new_extra: str,
) -> None:
    if index < len(old_tuple) and index < len(new_tuple):
        _compare(
            ctx, _classify_at(old_tuple[index], original.resolver), _classify_at(new_tuple[index], update.resolver)
        )
    elif index < len(old_tuple):
        old_schema = _classify_at(old_tuple[index], original.resolver)
        covering = _additional_schema(update, new_extra)
        if _open_array(update, new_extra):
            ctx.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
        elif covering is not None:
            sub = ctx.sub()
            _compare(sub, old_schema, covering)
            ctx.differences.extend(sub.differences)
            ctx.add(
                "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if sub.compatible
                else "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        elif old_schema.kind == "false":
            ctx.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        else:
            ctx.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")
    else:
        new_schema = _classify_at(new_tuple[index], update.resolver)
        covering = _additional_schema(original, old_extra)
        if _open_array(original, old_extra):
            ctx.add(
                "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                if new_schema.kind == "empty"
                else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"
            )
        elif covering is not None:
            sub = ctx.sub()
            _compare(sub, covering, new_schema)
            ctx.differences.extend(sub.differences)
            ctx.add(
                "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                if sub.compatible
                else "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            )
        else:
            ctx.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")


# combined


def _criterion_change(original: _Node, update: _Node) -> str | None:
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


def _distinct(members: list[_Node]) -> list[_Node]:
    seen: dict[str, _Node] = {}
    for member in members:
        seen.setdefault(compact_json(member.schema) + member.kind + member.criterion, member)
    return list(seen.values())


def _compare_combined(ctx: _Context, original: _Node, update: _Node) -> None:
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
                _compare(sub, old, new)
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


_COMPARERS = {
    "string": _compare_string,
    "number": _compare_number,
    "enum": _compare_enum,
    "const": _compare_const,
    "combined": _compare_combined,
    "not": _compare_not,
    "object": _compare_object,
    "array": _compare_array,
}


def differences(old: _Document, new: _Document) -> list[Difference]:
    """Every difference (compatible or not) from ``old`` to ``new``, in document order."""
    ctx = _Context()
    _compare(ctx, _classify_at(old.document, old.resolver()), _classify_at(new.document, new.resolver()))
    return ctx.differences


def backward_errors(new: _Document, previous: ParsedSchema) -> list[str]:
    """Why data written with ``previous`` cannot be read with ``new`` (Confluent's messages); empty when it can."""
    if previous.schema_type != JSON or not isinstance(previous, _Document):
        return [
            f'{{errorType:"TYPE_CHANGED", description:"Incompatible because of different schema type: {previous.schema_type} and JSON"}}'
        ]
    found = differences(previous, new)
    return list(dict.fromkeys(d.message() for d in found if not d.compatible))
