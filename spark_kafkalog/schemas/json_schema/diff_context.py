"""``DiffContext``: the state of one compatibility check while it walks two JSON Schemas together.

It holds the JSON path being compared (``#/properties/a/items``), the differences found there, and the
pairs of nodes being compared (a pair met again is recursion and counts as compatible). The keyword rules
(``scalar_rules``, ``object_rules``, ``array_rules``, ``combined_rules``) compare subschemas through
``compare``, which calls the check's dispatcher (``compatibility``): the rules do not import it.

One context per check, used by one thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from spark_kafkalog.schemas.json_schema.difference import Difference
from spark_kafkalog.schemas.json_schema.schema_node import SchemaNode

Comparer = Callable[["DiffContext", SchemaNode | None, SchemaNode | None], None]
"""``compare(ctx, original, update)``: adds to ``ctx`` the differences from ``original`` to ``update``."""


class DiffContext:
    """Differences found so far at a JSON path, the pairs being compared (recursion guard), and the
    comparison the keyword rules call for subschemas (``compare``)."""

    def __init__(
        self,
        comparer: Comparer,
        path: list[str] | None = None,
        in_progress: set[tuple[int, str, int, str]] | None = None,
    ) -> None:
        self._comparer = comparer
        self.path = list(path or [])
        self.in_progress = in_progress if in_progress is not None else set()
        self.differences: list[Difference] = []

    def sub(self) -> DiffContext:
        """A context at the same path sharing the recursion guard, collecting its own differences (to
        decide whether a pair is compatible before keeping them)."""
        return DiffContext(self._comparer, self.path, self.in_progress)

    def compare(self, original: SchemaNode | None, update: SchemaNode | None) -> None:
        """Add the differences from ``original`` (old) to ``update`` (new), at the current path."""
        self._comparer(self, original, update)

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
