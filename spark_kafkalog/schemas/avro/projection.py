"""Schema resolution without fastavro's per-datum resolution: read with the writer's schema alone, then
project the datum onto the reader's schema with converters compiled once per (writer, reader) pair.

fastavro resolves a writer against a reader anew for every datum, about halving the decode rate; reading
with the writer alone and reshaping in Python is cheaper for the common evolutions. ``projection`` covers:

- identical types (same structure, names and logical types): the datum as it is;
- primitive promotions int -> long, float, double; long -> float, double; float -> double;
  string <-> bytes (no logical types);
- records of the same full name: reader fields found by name or alias (projected), writer fields the reader
  lacks dropped, reader fields the writer lacks filled with their default when the default is a plain
  primitive (null, boolean, int, long, float, double, string) or null for a union starting with null;
- enums of the same full name: the writer's symbols the reader lacks become the reader's default;
- arrays and maps of projectable items; a plain writer type read by a reader union (the first branch that
  matches, as Avro picks it).

Anything else (differing unions, renamed named types, other defaults, logical-type changes) answers None
and the codec lets fastavro resolve: the result is the same either way (tests compare both paths).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spark_kafkalog.schemas.avro.names import PRIMITIVES
from spark_kafkalog.schemas.avro.schema import AvroSchema

Convert = Callable[[Any], Any]


class _Unsupported(Exception):
    """This pair is left to fastavro."""


IDENTITY: Convert = lambda value: value  # noqa: E731 - a marker as much as a function

_PROMOTE: dict[tuple[str, str], Convert] = {
    ("int", "long"): IDENTITY,
    ("int", "float"): float,
    ("int", "double"): float,
    ("long", "float"): float,
    ("long", "double"): float,
    ("float", "double"): IDENTITY,
    ("string", "bytes"): lambda v: v.encode(),
    ("bytes", "string"): lambda v: v.decode(),
}
_PLAIN_DEFAULTS = {"null", "boolean", "int", "long", "float", "double", "string"}
_LOGICAL_KEYS = ("logicalType", "precision", "scale")


def projection(writer: AvroSchema, reader: AvroSchema) -> Convert | None:
    """The converter from ``writer``'s datums to ``reader``'s (``IDENTITY`` when nothing changes), or None
    when fastavro must resolve the pair."""
    try:
        return _Projector(writer, reader).project(writer.fastavro_schema, reader.fastavro_schema)
    except _Unsupported:
        return None


class _Projector:
    def __init__(self, writer: AvroSchema, reader: AvroSchema) -> None:
        self._writer = writer
        self._reader = reader
        self._records: set[tuple[str, str]] = set()

    @staticmethod
    def _resolve(schema: AvroSchema, node: Any) -> Any:
        node = schema.definition(node)
        if isinstance(node, dict) and node.get("type") in ("record", "error", "enum", "fixed"):
            return schema.definition(node["name"])
        return node

    def _key(self, schema: AvroSchema, node: Any, seen: frozenset[str]) -> Any:
        """What makes two types read alike: structure, names and logical types."""
        node = self._resolve(schema, node)
        if isinstance(node, str):
            return node
        if isinstance(node, list):
            return ("union", tuple(self._key(schema, b, seen) for b in node))
        kind = node["type"]
        logical = tuple(node.get(k) for k in _LOGICAL_KEYS)
        if kind in PRIMITIVES:
            return (kind, logical) if any(logical) else kind
        if kind == "array":
            return ("array", self._key(schema, node["items"], seen))
        if kind == "map":
            return ("map", self._key(schema, node["values"], seen))
        name = node["name"]
        if kind == "enum":
            return ("enum", name, tuple(node["symbols"]))
        if kind == "fixed":
            return ("fixed", name, node["size"], logical)
        if name in seen:
            return ("record", name)
        inner = seen | {name}
        return ("record", name, tuple((f["name"], self._key(schema, f["type"], inner)) for f in node["fields"]))

    def project(self, writer: Any, reader: Any) -> Convert:
        if self._key(self._writer, writer, frozenset()) == self._key(self._reader, reader, frozenset()):
            return IDENTITY
        w = self._resolve(self._writer, writer)
        r = self._resolve(self._reader, reader)
        wkind = w if isinstance(w, str) else "union" if isinstance(w, list) else w["type"]
        rkind = r if isinstance(r, str) else "union" if isinstance(r, list) else r["type"]
        if isinstance(w, dict) and any(w.get(k) for k in _LOGICAL_KEYS):
            raise _Unsupported
        if isinstance(r, dict) and any(r.get(k) for k in _LOGICAL_KEYS):
            raise _Unsupported
        if wkind == "union":
            raise _Unsupported
        if rkind == "union":
            return self._into_union(writer, r)
        if (wkind, rkind) in _PROMOTE:
            return _PROMOTE[(wkind, rkind)]
        if wkind != rkind or wkind in PRIMITIVES:
            raise _Unsupported
        if wkind == "array":
            return _each(self.project(w["items"], r["items"]))
        if wkind == "map":
            return _values(self.project(w["values"], r["values"]))
        if w["name"] != r["name"]:
            raise _Unsupported
        if wkind == "enum":
            return self._enum(w, r)
        if wkind in ("record", "error"):
            return self._record(w, r)
        raise _Unsupported  # fixed of another size

    def _into_union(self, writer: Any, union: list[Any]) -> Convert:
        wkey = self._key(self._writer, writer, frozenset())
        w = self._resolve(self._writer, writer)
        wkind = w if isinstance(w, str) else w["type"]
        for branch in union:
            b = self._resolve(self._reader, branch)
            bkind = b if isinstance(b, str) else "union" if isinstance(b, list) else b["type"]
            same_named = (
                isinstance(w, dict)
                and isinstance(b, dict)
                and w.get("name") is not None
                and w.get("name") == b.get("name")
            )
            if wkey == self._key(self._reader, branch, frozenset()) or same_named or (wkind, bkind) in _PROMOTE:
                return self.project(writer, branch)
            if wkind == bkind and wkind in ("array", "map"):
                return self.project(writer, branch)
        raise _Unsupported

    @staticmethod
    def _enum(w: dict[str, Any], r: dict[str, Any]) -> Convert:
        symbols = set(r["symbols"])
        if set(w["symbols"]) <= symbols:
            return IDENTITY
        default = r.get("default")
        if default is None or default not in symbols:
            raise _Unsupported
        return lambda v: v if v in symbols else default

    def _record(self, w: dict[str, Any], r: dict[str, Any]) -> Convert:
        pair = (w["name"], r["name"])
        if pair in self._records:
            raise _Unsupported  # recursive types that differ: fastavro's
        self._records.add(pair)
        writer_fields = {f["name"]: f for f in w["fields"]}
        plan: list[tuple[str, str | None, Convert | None, Any]] = []
        for field in r["fields"]:
            names = [n for n in (field["name"], *(field.get("aliases") or ())) if n in writer_fields]
            if names:
                source = writer_fields[names[0]]
                convert = self.project(source["type"], field["type"])
                plan.append((field["name"], source["name"], None if convert is IDENTITY else convert, None))
            elif "default" in field:
                plan.append((field["name"], None, None, self._default(field)))
            else:
                raise _Unsupported
        self._records.discard(pair)
        if all(source == name and convert is None for name, source, convert, _ in plan) and len(plan) == len(
            w["fields"]
        ):
            if [name for name, *_ in plan] == [f["name"] for f in w["fields"]]:
                return IDENTITY

        def convert_record(value: Any) -> Any:
            out = {}
            for name, source, convert, default in plan:
                if source is None:
                    out[name] = default
                else:
                    v = value[source]
                    out[name] = convert(v) if convert is not None and v is not None else v
            return out

        return convert_record

    def _default(self, field: dict[str, Any]) -> Any:
        value = field["default"]
        node = self._resolve(self._reader, field["type"])
        if isinstance(node, list):
            first = self._resolve(self._reader, node[0]) if node else None
            if first == "null" and value is None:
                return None
            raise _Unsupported
        kind = node if isinstance(node, str) else node["type"] if not any(node.get(k) for k in _LOGICAL_KEYS) else None
        if kind not in _PLAIN_DEFAULTS:
            raise _Unsupported
        return value  # as fastavro gives it (an integer default of a double stays an int)


def _each(convert: Convert) -> Convert:
    if convert is IDENTITY:
        return IDENTITY
    return lambda values: [convert(v) if v is not None else v for v in values]


def _values(convert: Convert) -> Convert:
    if convert is IDENTITY:
        return IDENTITY
    return lambda values: {k: (convert(v) if v is not None else v) for k, v in values.items()}
