"""Avro's primitive type names and full-name splitting, shared by the schema and its compatibility check."""

from __future__ import annotations

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def split_name(full: str) -> tuple[str, str]:
    """``"a.b.C"`` -> ``("a.b", "C")``; no namespace -> ``("", name)``."""
    space, _, short = full.rpartition(".")
    return space, short
