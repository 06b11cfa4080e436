"""``JsonSchemaCodec``: JSON payloads to and from the Arrow values of a JSON Schema's Spark type.

The Arrow type of a schema (following ``$ref``; Spark's types in brackets):

=====================================================  ==================================================
schema                                                 Arrow type
=====================================================  ==================================================
``object`` with ``properties``                         ``struct`` of the properties in document order
``object`` with only an ``additionalProperties``       ``map<string, T>``
schema
``string`` (``format: date`` / ``date-time``)          ``string`` (``date32`` / ``timestamp(us, UTC)``)
``string`` with ``contentEncoding: base64``            ``binary`` (the base64 text decoded)
``integer`` / ``number`` / ``boolean``                 ``int64`` / ``float64`` / ``bool``
``array`` with an ``items`` schema                     ``list<T>``
``[T, "null"]``, ``anyOf``/``oneOf`` of T and null,    ``T`` (every Arrow field is nullable)
a single-member ``allOf``/``anyOf``/``oneOf``
``enum``/``const`` of strings without ``type``         ``string``
anything else (``{}``, ``true``, mixed types,          ``string`` holding the compact JSON text of the value
tuples, recursion, open objects without properties)
=====================================================  ==================================================

Decoding: ``json.loads`` of the payload, then each value shaped into its Arrow type: integers from JSON
integers (or integral numbers), floats from any number, dates from ``YYYY-MM-DD``, timestamps from RFC 3339
(no offset: UTC) as UTC-aware datetimes, maps as lists of ``(key, value)`` pairs; the JSON-text columns hold
the compact JSON of their part (a string value keeps its quotes). A value of the wrong JSON type raises
``DecodeError`` naming its JSON path. Properties the reader does not declare are dropped; absent ones are None.
The writer schema is not needed (JSON carries its own structure).

Encoding: the inverse (dates as ISO dates, timestamps as RFC 3339 in UTC with ``Z``, JSON-text columns parsed
back), properties whose value is None left out unless their schema allows null (a required one that does
not: ``EncodeError``); the document is written as compact JSON in UTF-8. Validation against the reader schema
(``EncodeError`` naming the JSON path and the rule broken) runs with ``jsonschema`` only where the conversion
does not already guarantee validity: a schema using nothing but ``type``, ``properties``, ``items`` (a schema),
``required``, ``additionalProperties``, ``format`` date/date-time, ``contentEncoding`` base64, null unions,
``$ref`` and annotations is valid by construction (``codec.validates`` is then False; jsonschema validates some
2k documents/s, the conversion 10k+).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from referencing._core import Resolver

from spark_kafkalog.schemas.codec import DecodeError, EncodeError, ValueCodec
from spark_kafkalog.schemas.json_schema.schema import JsonSchema
from spark_kafkalog.schemas.json_schema.walk import CircularReference, compact_json, deref, descend
from spark_kafkalog.schemas.parsed_schema import ParsedSchema

_UTC = datetime.UTC


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class _Mismatch(Exception):
    """A value that does not fit its shape; ``path`` collects the JSON path segments while the error unwinds
    (innermost first), so that paths cost nothing unless something fails."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []

    def at(self, segment: str) -> _Mismatch:
        self.path.append(segment)
        return self

    def where(self) -> str:
        return "$" + "".join(reversed(self.path))


class _Shape:
    """One node of the Arrow shape: converts between JSON values and Arrow-shaped Python values."""

    arrow_type: pa.DataType = pa.string()
    nullable = False
    """Whether the schema accepts JSON null here (encode then writes null rather than leaving it out)."""

    def to_arrow(self, value: Any) -> Any:
        raise NotImplementedError

    def to_json(self, value: Any) -> Any:
        raise NotImplementedError


class _JsonText(_Shape):
    def to_arrow(self, value: Any) -> Any:
        return compact_json(value)

    def to_json(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise _Mismatch(f"expected a JSON text (str), got {type(value).__name__}")
        try:
            return json.loads(value)
        except ValueError as e:
            raise _Mismatch(f"the string is not JSON text: {e}") from None


class _String(_Shape):
    arrow_type = pa.string()

    def to_arrow(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise _Mismatch(f"expected a string, got {_type_name(value)}")
        return value

    def to_json(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise _Mismatch(f"expected a str, got {type(value).__name__}")
        return value


class _Base64(_Shape):
    arrow_type = pa.binary()

    def to_arrow(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except ValueError:
                pass
        raise _Mismatch(f"expected a base64 string, got {compact_json(value)[:40]}")

    def to_json(self, value: Any) -> Any:
        if isinstance(value, bytes | bytearray | memoryview):
            return base64.b64encode(value).decode("ascii")
        raise _Mismatch(f"expected bytes, got {type(value).__name__}")


class _Integer(_Shape):
    arrow_type = pa.int64()

    def to_arrow(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _Mismatch(f"expected an integer, got {_type_name(value)} {compact_json(value)[:40]}")

    def to_json(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _Mismatch(f"expected an int, got {type(value).__name__}")


class _Number(_Shape):
    arrow_type = pa.float64()

    def to_arrow(self, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise _Mismatch(f"expected a number, got {_type_name(value)}")

    def to_json(self, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise _Mismatch(f"{value} has no JSON form")
            return value
        if isinstance(value, decimal.Decimal) and value.is_finite():
            return float(value)
        raise _Mismatch(f"expected a float, got {type(value).__name__}")


class _Boolean(_Shape):
    arrow_type = pa.bool_()

    def to_arrow(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        raise _Mismatch(f"expected a boolean, got {_type_name(value)}")

    def to_json(self, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        raise _Mismatch(f"expected a bool, got {type(value).__name__}")


class _Date(_Shape):
    arrow_type = pa.date32()

    def to_arrow(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return datetime.date.fromisoformat(value)
            except ValueError:
                pass
        raise _Mismatch(f"expected a date string YYYY-MM-DD, got {compact_json(value)[:40]}")

    def to_json(self, value: Any) -> Any:
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            return value.isoformat()
        raise _Mismatch(f"expected a datetime.date, got {type(value).__name__}")


class _Timestamp(_Shape):
    arrow_type = pa.timestamp("us", tz="UTC")

    def to_arrow(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                parsed = datetime.datetime.fromisoformat(value)
            except ValueError:
                pass
            else:
                if parsed.tzinfo is None:
                    return parsed.replace(tzinfo=_UTC)
                return parsed.astimezone(_UTC)
        raise _Mismatch(f"expected an RFC 3339 date-time string, got {compact_json(value)[:40]}")

    def to_json(self, value: Any) -> Any:
        if not isinstance(value, datetime.datetime):
            raise _Mismatch(f"expected a datetime.datetime, got {type(value).__name__}")
        utc = value.replace(tzinfo=_UTC) if value.tzinfo is None else value.astimezone(_UTC)
        return utc.replace(tzinfo=None).isoformat() + "Z"


class _List(_Shape):
    def __init__(self, item: _Shape) -> None:
        self.item = item
        self.arrow_type = pa.list_(item.arrow_type)

    def to_arrow(self, value: Any) -> Any:
        if not isinstance(value, list):
            raise _Mismatch(f"expected an array, got {_type_name(value)}")
        to_arrow, out = self.item.to_arrow, []
        for index, v in enumerate(value):
            try:
                out.append(None if v is None else to_arrow(v))
            except _Mismatch as e:
                raise e.at(f"[{index}]") from None
        return out

    def to_json(self, value: Any) -> Any:
        if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence):
            raise _Mismatch(f"expected a list, got {type(value).__name__}")
        out = []
        for index, v in enumerate(value):
            if v is None and not _accepts_null(self.item):
                raise _Mismatch("null is not valid for the items' schema").at(f"[{index}]")
            try:
                out.append(None if v is None else self.item.to_json(v))
            except _Mismatch as e:
                raise e.at(f"[{index}]") from None
        return out


class _Map(_Shape):
    def __init__(self, value: _Shape) -> None:
        self.value = value
        self.arrow_type = pa.map_(pa.string(), value.arrow_type)

    def to_arrow(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Mismatch(f"expected an object, got {_type_name(value)}")
        shape, out = self.value, []
        for k, v in value.items():
            try:
                out.append((k, None if v is None else shape.to_arrow(v)))
            except _Mismatch as e:
                raise e.at(f".{k}") from None
        return out

    def to_json(self, value: Any) -> Any:
        pairs = value.items() if isinstance(value, dict) else value
        out: dict[str, Any] = {}
        try:
            for k, v in pairs:
                if not isinstance(k, str):
                    raise _Mismatch(f"map keys must be str, got {type(k).__name__}")
                if v is None and not _accepts_null(self.value):
                    raise _Mismatch("null is not valid for the values' schema").at(f".{k}")
                try:
                    out[k] = None if v is None else self.value.to_json(v)
                except _Mismatch as e:
                    raise e.at(f".{k}") from None
        except (TypeError, ValueError):
            raise _Mismatch(f"expected a dict or (key, value) pairs, got {type(value).__name__}") from None
        return out


class _Struct(_Shape):
    def __init__(self, fields: list[tuple[str, _Shape]], required: set[str] | None = None) -> None:
        self.fields = fields
        self.required = required or set()
        self.arrow_type = pa.struct([pa.field(name, shape.arrow_type) for name, shape in fields])

    def to_arrow(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Mismatch(f"expected an object, got {_type_name(value)}")
        out: dict[str, Any] = {}
        for name, shape in self.fields:
            v = value.get(name)
            if v is None:
                out[name] = None
                continue
            try:
                out[name] = shape.to_arrow(v)
            except _Mismatch as e:
                raise e.at(f".{name}") from None
        return out

    def to_json(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Mismatch(f"expected a dict for the struct, got {type(value).__name__}")
        out: dict[str, Any] = {}
        for name, shape in self.fields:
            v = value.get(name)
            if v is None:
                if shape.nullable:
                    out[name] = None
                elif name in self.required:
                    raise _Mismatch(f"'{name}' is a required property and may not be null").at(f".{name}")
                continue
            try:
                out[name] = shape.to_json(v)
            except _Mismatch as e:
                raise e.at(f".{name}") from None
        return out


def _accepts_null(shape: _Shape) -> bool:
    return shape.nullable or type(shape) is _JsonText


_ANNOTATIONS = frozenset(
    ("title", "description", "$comment", "default", "examples", "readOnly", "writeOnly", "deprecated", "$schema",
     "$id", "definitions", "$defs", "contentMediaType")
)  # fmt: skip
_COVERED_KEYWORDS = _ANNOTATIONS | {
    "type", "properties", "items", "required", "additionalProperties", "format", "contentEncoding", "$ref",
    "oneOf", "anyOf", "allOf",
}  # fmt: skip
"""The keywords whose every constraint the shapes' ``to_json`` already enforces (given the shape the builder
chose for them); a schema using only these needs no jsonschema validation when encoding."""


_SCALARS: dict[str, type[_Shape]] = {
    "string": _String,
    "integer": _Integer,
    "number": _Number,
    "boolean": _Boolean,
}


def _is_null_schema(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get("type") == "null" or schema.get("const", 0) is None)


class _ShapeBuilder:
    """Derives the ``_Shape`` tree of a schema (the table in the module's docstring)."""

    def __init__(self) -> None:
        self._stack: list[int] = []
        self.covered = True
        """Whether every value the shapes write is valid for the schema (see ``_COVERED_KEYWORDS``)."""

    def _uncovered(self, shape: _Shape) -> _Shape:
        self.covered = False
        return shape

    def build(self, schema: Any, resolver: Resolver[Any]) -> _Shape:
        try:
            schema, resolver = deref(schema, resolver)
        except CircularReference:
            return self._uncovered(_JsonText())
        if schema is True:
            return _JsonText()  # anything goes
        if not isinstance(schema, dict) or id(schema) in self._stack:
            return self._uncovered(_JsonText())  # false, or a recursive schema: JSON text
        if not _COVERED_KEYWORDS.issuperset(schema):
            self.covered = False
        self._stack.append(id(schema))
        try:
            return self._build(schema, descend(schema, resolver))
        finally:
            self._stack.pop()

    def _nullable(self, shape: _Shape) -> _Shape:
        shape.nullable = True
        return shape

    def _build(self, schema: dict[str, Any], resolver: Resolver[Any]) -> _Shape:
        for combiner in ("anyOf", "oneOf", "allOf"):
            members = schema.get(combiner)
            if isinstance(members, list) and "type" not in schema and "properties" not in schema:
                rest = [m for m in members if not _is_null_schema(deref(m, resolver)[0])]
                if len(rest) == 1 and (len(members) == 1 or combiner != "allOf"):
                    shape = self.build(rest[0], resolver)
                    if combiner == "oneOf" and len(rest) < len(members) and _accepts_null(shape):
                        self.covered = False  # a null would match both members
                    return self._nullable(shape) if len(rest) < len(members) else shape
                return self._uncovered(_JsonText())
        kind = schema.get("type")
        nullable = False
        if isinstance(kind, list):
            others = [k for k in kind if k != "null"]
            nullable = len(others) < len(kind)
            if len(others) != 1:
                return self._uncovered(_JsonText())
            kind = others[0]
        if kind is None:
            kind = self._implied_type(schema)
            if kind is None:
                return _JsonText() if _ANNOTATIONS.issuperset(schema) else self._uncovered(_JsonText())
        shape = self._typed(kind, schema, resolver)
        return self._nullable(shape) if nullable else shape

    @staticmethod
    def _implied_type(schema: dict[str, Any]) -> str | None:
        if "properties" in schema:
            return "object"
        if isinstance(schema.get("items"), dict):
            return "array"
        values = schema["enum"] if isinstance(schema.get("enum"), list) else None
        if "const" in schema:
            values = [schema["const"]]
        if values and all(isinstance(v, str) for v in values):
            return "string"
        return None

    def _typed(self, kind: Any, schema: dict[str, Any], resolver: Resolver[Any]) -> _Shape:
        if kind == "string":
            fmt = schema.get("format")
            if fmt == "date":
                return _Date()
            if fmt == "date-time":
                return _Timestamp()
            if fmt is not None:
                self.covered = False  # other formats are checked by validation only
            if schema.get("contentEncoding") == "base64":
                return _Base64()
            if schema.get("contentEncoding") is not None:
                self.covered = False
            return _String()
        if kind in _SCALARS:
            return _SCALARS[kind]()
        if kind == "array":
            items = schema.get("items")
            if isinstance(items, dict | bool) and "prefixItems" not in schema:
                return _List(self.build(items, resolver))
            return self._uncovered(_JsonText())
        if kind == "object":
            properties = schema.get("properties")
            if isinstance(properties, dict) and properties:
                required = schema.get("required")
                if isinstance(required, list) and not set(required) <= set(properties):
                    self.covered = False  # a required property the struct never writes
                return _Struct(
                    [(name, self.build(sub, resolver)) for name, sub in properties.items()],
                    set(required) if isinstance(required, list) else set(),
                )
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and not schema.get("patternProperties"):
                return _Map(self.build(extra, resolver))
        return self._uncovered(_JsonText())


def shape_of(schema: JsonSchema) -> tuple[_Shape, bool]:
    """The shape of ``schema``'s document (its ``arrow_type`` is the schema's Arrow type), and whether the
    documents it writes are valid for the schema by construction."""
    builder = _ShapeBuilder()
    shape = builder.build(schema.document, schema.resolver())
    return shape, builder.covered


def arrow_type_of(schema: JsonSchema) -> pa.DataType:
    """The Arrow type a JSON Schema's values decode to (the module's table)."""
    return shape_of(schema)[0].arrow_type


class JsonSchemaCodec(ValueCodec):
    """Reads JSON payloads into ``arrow_type`` values and writes such values as JSON valid for ``reader``.

    ``validate`` (default True) checks each encoded document against the reader schema."""

    def __init__(self, reader: JsonSchema, *, validate: bool = True) -> None:
        if not isinstance(reader, JsonSchema):
            raise TypeError(f"a JSON Schema codec needs a JsonSchema reader, not {type(reader).__name__}")
        self.reader = reader
        self._schema = reader
        self._shape, covered = shape_of(reader)
        self.arrow_type = self._shape.arrow_type
        self.validates = validate and not covered
        """Whether ``encode`` runs jsonschema's validation (False when it was turned off or is not needed)."""

    def decode(self, payload: bytes | memoryview, writer: ParsedSchema, message_indexes: tuple[int, ...] = ()) -> Any:
        try:
            document = json.loads(bytes(payload))
        except ValueError as e:
            raise DecodeError(f"the payload is not JSON: {e}") from None
        if document is None:
            return None
        try:
            return self._shape.to_arrow(document)
        except _Mismatch as e:
            raise DecodeError(f"{e.where()}: {e.message}") from None

    def decode_many(
        self, payloads: Sequence[bytes | memoryview], writer: ParsedSchema, message_indexes: tuple[int, ...] = ()
    ) -> list[Any]:
        loads, to_arrow, out = json.loads, self._shape.to_arrow, []
        for index, payload in enumerate(payloads):
            try:
                document = loads(bytes(payload))
            except ValueError as e:
                raise DecodeError(f"payload {index}: the payload is not JSON: {e}") from None
            try:
                out.append(None if document is None else to_arrow(document))
            except _Mismatch as e:
                raise DecodeError(f"payload {index}: {e.where()}: {e.message}") from None
        return out

    def to_document(self, value: Any) -> Any:
        """The JSON document of one Arrow-shaped value (not validated)."""
        try:
            return None if value is None else self._shape.to_json(value)
        except _Mismatch as e:
            raise EncodeError(f"{e.where()}: {e.message}") from None

    def encode(self, value: Any) -> bytes:
        document = self.to_document(value)
        if document is None and not self._shape.nullable and not self.validates:
            raise EncodeError("$: null is not valid for the schema")
        if self.validates:
            try:
                self._schema.validate(document)
            except ValueError as e:
                raise EncodeError(f"the value does not match the JSON Schema: {e}") from None
        try:
            return compact_json(document).encode()
        except ValueError as e:
            raise EncodeError(f"the value has no JSON form: {e}") from None


def codec(reader: ParsedSchema, **options: Any) -> JsonSchemaCodec:
    """The codec of a JSON Schema reader (option ``validate``: check encoded documents, default True)."""
    if not isinstance(reader, JsonSchema):
        raise TypeError(f"a JSON Schema codec needs a JsonSchema reader, not {type(reader).__name__}")
    return JsonSchemaCodec(reader, **options)
