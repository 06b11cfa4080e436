"""Avro's reader/writer compatibility (Avro Java's ``SchemaCompatibility``) with Confluent's messages.

A reader can read data written with a writer when, walking both schemas together:

- the same primitive, or a promotion: int -> long, float, double; long -> float, double; float -> double;
  string <-> bytes (logical types play no part);
- records: names match (short names, or the writer's full name among the reader's aliases); every reader
  field is found in the writer by name or by one of its aliases and is compatible, or has a default;
- enums: names match; the writer's symbols are all the reader's, unless the reader has a default symbol;
- fixed: names match and sizes are equal; arrays: items; maps: values;
- a writer union: every branch is readable; a reader union (writer not a union): some branch reads it.

Recursive schemas are safe: a pair of types met again while being checked counts as compatible.

Each ``Incompatibility`` prints as Confluent's verbose message, e.g.
``{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'x' at path '/fields/1' in the new
schema has no default value and is missing in the old schema', additionalInfo:'x'}``; the path is a JSON
pointer into the reader schema (Avro's ``Incompatibility.getLocation``). The reader is called "new" and the
writer "old" (``is_backward_compatible``); ``labels`` swaps them for a FORWARD check's wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from spark_kafkalog.schemas.avro.names import PRIMITIVES, split_name


class AvroSchema(Protocol):
    """What the check reads of ``schema.AvroSchema`` (not imported: ``AvroSchema`` calls this module)."""

    @property
    def fastavro_schema(self) -> Any: ...

    def definition(self, node: Any) -> Any: ...


NAME_MISMATCH = "NAME_MISMATCH"
FIXED_SIZE_MISMATCH = "FIXED_SIZE_MISMATCH"
MISSING_ENUM_SYMBOLS = "MISSING_ENUM_SYMBOLS"
READER_FIELD_MISSING_DEFAULT_VALUE = "READER_FIELD_MISSING_DEFAULT_VALUE"
TYPE_MISMATCH = "TYPE_MISMATCH"
MISSING_UNION_BRANCH = "MISSING_UNION_BRANCH"

_PROMOTIONS = {
    "long": ("int",),
    "float": ("int", "long"),
    "double": ("int", "long", "float"),
    "bytes": ("string",),
    "string": ("bytes",),
}


@dataclass(frozen=True)
class Incompatibility:
    """One reason a reader cannot read a writer's data: Avro's ``SchemaIncompatibilityType`` name, the JSON
    pointer into the reader schema, and Avro's message (the ``additionalInfo``)."""

    error_type: str
    path: str
    info: str
    reader_label: str = "new"
    writer_label: str = "old"

    def description(self) -> str:
        r, w, p = self.reader_label, self.writer_label, self.path
        return {
            NAME_MISMATCH: f"The name of the schema has changed (path '{p}')",
            FIXED_SIZE_MISMATCH: f"The size of FIXED type field at path '{p}' in the {r} schema does not match with the {w} schema",
            MISSING_ENUM_SYMBOLS: f"The {r} schema is missing enum symbols '{self.info}' at path '{p}' in the {w} schema",
            READER_FIELD_MISSING_DEFAULT_VALUE: f"The field '{self.info}' at path '{p}' in the {r} schema has no default value and is missing in the {w} schema",
            TYPE_MISMATCH: f"The type (path '{p}') of a field in the {r} schema does not match with the {w} schema",
            MISSING_UNION_BRANCH: f"The {r} schema is missing a type inside a union field at path '{p}' in the {w} schema",
        }[self.error_type]

    def __str__(self) -> str:
        return f"{{errorType:'{self.error_type}', description:'{self.description()}', additionalInfo:'{self.info}'}}"


def incompatibilities(
    reader: AvroSchema, writer: AvroSchema, labels: tuple[str, str] = ("new", "old")
) -> list[Incompatibility]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can), in Avro's order."""
    found = _Checker(reader, writer).check(reader.fastavro_schema, writer.fastavro_schema)
    return [Incompatibility(i.error_type, i.path, i.info, *labels) for i in found]


def java_type(schema: Any) -> str:
    """Avro Java's ``Schema.Type`` name of a resolved schema node (``RECORD``, ``INT``, ``UNION`` ...)."""
    if isinstance(schema, list):
        return "UNION"
    kind = schema if isinstance(schema, str) else schema["type"]
    return "RECORD" if kind == "error" else str(kind).upper()


_COMPLEX = frozenset({"record", "error", "enum", "fixed", "array", "map"})
_IN_PROGRESS: list[Incompatibility] = []


class _Checker:
    """Avro's ``ReaderWriterCompatibilityChecker``: memoized per (reader node, writer node) pair."""

    def __init__(self, reader: AvroSchema, writer: AvroSchema) -> None:
        self._reader = reader
        self._writer = writer
        self._memo: dict[tuple[int, int], list[Incompatibility]] = {}

    @staticmethod
    def _resolve(schema: AvroSchema, node: Any) -> Any:
        """A primitive's name, or the dict/list of a complex type (name references and ``{"type": ...}``
        wrappers followed)."""
        while True:
            if isinstance(node, str):
                if node in PRIMITIVES:
                    return node
                definition = schema.definition(node)
                if definition is node:
                    return node
                node = definition
            elif isinstance(node, dict):
                kind = node["type"]
                if kind in PRIMITIVES:
                    return kind
                if kind in ("record", "error", "enum", "fixed"):
                    return schema.definition(node["name"])  # one object per named type, as in Avro Java
                if isinstance(kind, str) and kind in _COMPLEX:
                    return node
                node = kind
            else:
                return node

    def check(self, reader: Any, writer: Any) -> list[Incompatibility]:
        return self._get("", reader, writer, [])

    def _get(self, token: str, reader: Any, writer: Any, location: list[str]) -> list[Incompatibility]:
        location.append(token)
        reader = self._resolve(self._reader, reader)
        writer = self._resolve(self._writer, writer)
        key = (id(reader), id(writer))
        if isinstance(reader, (dict, list)) and isinstance(writer, (dict, list)):
            memo = self._memo.get(key)
            if memo is None:
                self._memo[key] = _IN_PROGRESS
                result = self._calculate(reader, writer, location)
                self._memo[key] = result
            else:
                result = memo  # _IN_PROGRESS is empty: compatible unless proven otherwise
        else:
            result = self._calculate(reader, writer, location)
        location.pop()
        return result

    @staticmethod
    def _at(location: list[str], error_type: str, info: str) -> Incompatibility:
        path = "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in location[1:])
        return Incompatibility(error_type, path, info)

    def _type_mismatch(self, reader: Any, writer: Any, location: list[str]) -> list[Incompatibility]:
        info = f"reader type: {java_type(reader)} not compatible with writer type: {java_type(writer)}"
        return [self._at(location, TYPE_MISMATCH, info)]

    def _calculate(self, reader: Any, writer: Any, location: list[str]) -> list[Incompatibility]:
        rtype, wtype = java_type(reader), java_type(writer)
        if rtype == wtype:
            if isinstance(reader, str):
                return []
            if rtype == "ARRAY":
                return self._get("items", reader["items"], writer["items"], location)
            if rtype == "MAP":
                return self._get("values", reader["values"], writer["values"], location)
            if rtype == "FIXED":
                out = self._names(reader, writer, location)
                if reader["size"] != writer["size"]:
                    location.append("size")
                    out.append(
                        self._at(location, FIXED_SIZE_MISMATCH, f"expected: {writer['size']}, found: {reader['size']}")
                    )
                    location.pop()
                return out
            if rtype == "ENUM":
                out = self._names(reader, writer, location)
                missing = sorted(set(writer["symbols"]) - set(reader["symbols"]))
                default = reader.get("default")
                if missing and not (default is not None and default in reader["symbols"]):
                    location.append("symbols")
                    out.append(self._at(location, MISSING_ENUM_SYMBOLS, "[" + ", ".join(missing) + "]"))
                    location.pop()
                return out
            if rtype == "RECORD":
                return self._names(reader, writer, location) + self._fields(reader, writer, location)
            # both unions: each writer branch must be readable by the reader union
            out = []
            for index, branch in enumerate(writer):
                location.append(str(index))
                if self._get("", reader, branch, []):
                    info = f"reader union lacking writer type: {java_type(self._resolve(self._writer, branch))}"
                    out.append(self._at(location, MISSING_UNION_BRANCH, info))
                location.pop()
            return out
        if wtype == "UNION":  # every writer branch must be readable (each checked from a fresh location)
            out = []
            for branch in writer:
                out.extend(self._get("", reader, branch, []))
            return out
        if rtype == "UNION":
            for branch in reader:
                if not self._get("", branch, writer, []):
                    return []
            return [self._at(location, MISSING_UNION_BRANCH, f"reader union lacking writer type: {wtype}")]
        if isinstance(reader, str) and isinstance(writer, str) and writer in _PROMOTIONS.get(reader, ()):
            return []
        return self._type_mismatch(reader, writer, location)

    def _names(self, reader: dict[str, Any], writer: dict[str, Any], location: list[str]) -> list[Incompatibility]:
        writer_full = writer["name"]
        if split_name(reader["name"])[1] == split_name(writer_full)[1]:
            return []
        space = split_name(reader["name"])[0]
        aliases = {a if "." in a or not space else f"{space}.{a}" for a in reader.get("aliases") or ()}
        if writer_full in aliases:
            return []
        location.append("name")
        out = [self._at(location, NAME_MISMATCH, f"expected: {writer_full}")]
        location.pop()
        return out

    def _fields(self, reader: dict[str, Any], writer: dict[str, Any], location: list[str]) -> list[Incompatibility]:
        out: list[Incompatibility] = []
        writer_fields = {f["name"]: f for f in writer["fields"]}
        location.append("fields")
        for position, field in enumerate(reader["fields"]):
            location.append(str(position))
            matches = [writer_fields[n] for n in (field["name"], *(field.get("aliases") or ())) if n in writer_fields]
            if not matches:
                if "default" not in field:
                    out.append(self._at(location, READER_FIELD_MISSING_DEFAULT_VALUE, field["name"]))
            else:
                out.extend(self._get("type", field["type"], matches[0]["type"], location))
            location.pop()
        location.pop()
        return out
