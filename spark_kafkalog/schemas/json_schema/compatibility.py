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

The parts: ``schema_node`` (the schema classified: ``SchemaNode``, ``classify_at``), ``difference`` (the kinds,
``COMPATIBLE_CHANGES`` and the messages: ``Difference``), ``diff_context`` (the walk's path, findings and
recursion guard), the keyword rules ``scalar_rules``, ``object_rules``, ``array_rules`` and
``combined_rules``, and this module: the dispatch by kind (``_compare``, which the rules reach through
``DiffContext.compare``), ``differences`` and ``backward_errors``. Pure.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from referencing._core import Resolver

from spark_kafkalog.schemas.json_schema.array_rules import compare_array
from spark_kafkalog.schemas.json_schema.combined_rules import compare_combined, compare_not
from spark_kafkalog.schemas.json_schema.diff_context import DiffContext
from spark_kafkalog.schemas.json_schema.difference import Difference
from spark_kafkalog.schemas.json_schema.object_rules import compare_object
from spark_kafkalog.schemas.json_schema.scalar_rules import compare_const, compare_enum, compare_number, compare_string
from spark_kafkalog.schemas.json_schema.schema_node import SchemaNode, classify_at
from spark_kafkalog.schemas.parsed_schema import JSON, ParsedSchema


@runtime_checkable
class _Document(Protocol):
    """What the check needs of a ``JsonSchema`` (this module does not import it: ``JsonSchema`` calls it)."""

    @property
    def document(self) -> dict[str, Any] | bool: ...

    def resolver(self) -> Resolver[Any]: ...


def _compare(ctx: DiffContext, original: SchemaNode | None, update: SchemaNode | None) -> None:
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


def _compare_nothing(ctx: DiffContext, original: SchemaNode, update: SchemaNode) -> None:
    return


_COMPARERS = {
    "string": compare_string,
    "number": compare_number,
    "enum": compare_enum,
    "const": compare_const,
    "combined": compare_combined,
    "not": compare_not,
    "object": compare_object,
    "array": compare_array,
}


def differences(old: _Document, new: _Document) -> list[Difference]:
    """Every difference (compatible or not) from ``old`` to ``new``, in document order."""
    ctx = DiffContext(_compare)
    _compare(ctx, classify_at(old.document, old.resolver()), classify_at(new.document, new.resolver()))
    return ctx.differences


def backward_errors(new: _Document, previous: ParsedSchema) -> list[str]:
    """Why data written with ``previous`` cannot be read with ``new`` (Confluent's messages); empty when it can."""
    if previous.schema_type != JSON or not isinstance(previous, _Document):
        return [
            f'{{errorType:"TYPE_CHANGED", description:"Incompatible because of different schema type: {previous.schema_type} and JSON"}}'
        ]
    found = differences(previous, new)
    return list(dict.fromkeys(d.message() for d in found if not d.compatible))
