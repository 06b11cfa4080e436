"""Walking a JSON Schema document through its ``$ref`` values (local pointers and referenced schemas).

A position is a subschema and the ``referencing`` resolver in scope there; ``deref`` follows ``$ref`` chains,
``descend`` enters a subschema (taking its ``$id`` into scope). Pure; used by the codec's type derivation and
the compatibility check.
"""

from __future__ import annotations

import json
from typing import Any

import referencing
import referencing.jsonschema
from referencing._core import Resolver
from referencing.exceptions import Unresolvable

from spark_kafkalog.schemas.parsed_schema import InvalidSchemaError

_SPEC = referencing.jsonschema.DRAFT202012


def compact_json(value: Any) -> str:
    """``value`` as compact JSON in its own key order, non-ASCII characters kept (Jackson's output)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class CircularReference(Exception):
    """A ``$ref`` chain that loops without reaching a schema."""


def descend(schema: Any, resolver: Resolver[Any]) -> Resolver[Any]:
    """The resolver in scope inside ``schema`` (a subschema of the one ``resolver`` is at)."""
    if isinstance(schema, dict) and isinstance(schema.get("$id"), str):
        return resolver.in_subresource(_SPEC.create_resource(schema))
    return resolver


def deref(schema: Any, resolver: Resolver[Any]) -> tuple[Any, Resolver[Any]]:
    """The schema a ``$ref`` chain starting at ``schema`` ends at, and the resolver in scope there. Keywords
    next to a ``$ref`` are ignored (draft-07's rule). An unresolvable ``$ref`` raises ``InvalidSchemaError``
    naming it; a loop of ``$ref`` values raises ``CircularReference``."""
    seen: set[int] = set()
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        if id(schema) in seen:
            raise CircularReference(schema["$ref"])
        seen.add(id(schema))
        try:
            found = resolver.lookup(schema["$ref"])
        except Unresolvable as e:
            raise InvalidSchemaError(f"unresolvable $ref {schema['$ref']!r}: {e}") from None
        schema, resolver = found.contents, found.resolver
        resolver = descend(schema, resolver)
    return schema, resolver
