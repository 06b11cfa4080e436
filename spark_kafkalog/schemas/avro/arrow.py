"""Avro types as Spark sees them: the Arrow type of a reader schema (Spark's ``from_avro``) and the value
conversions between fastavro's datums and the Python values pyarrow builds.

Spark's ``SchemaConverters.toSqlType``, with the Arrow types ``spark_kafkalog.schemas.codec`` assigns:

==================================  =============================================================
Avro                                Arrow (Spark)
==================================  =============================================================
null / boolean / int / long         null / bool / int32 / int64
float / double / string / bytes     float32 / float64 / string / binary
int date                            date32 (DateType)
long timestamp-millis, -micros      timestamp("us", tz="UTC") (TimestampType)
long local-timestamp-millis, -mic.  timestamp("us") (TimestampNTZType)
bytes / fixed decimal(p, s)         decimal128(p, s) (decimal256 above 38 digits)
other logical types                 their base type (time-millis: int32 of millis, uuid: string)
enum / fixed                        string / binary
record                              struct of its fields (nullable only when the field's Avro
                                    type admits null)
array / map                         list / map<string, T>
union [null, T] / [T]               T, nullable
union [int, long] / [float, double] int64 / float64 (null allowed too)
any other union                     struct<member0, member1, ...> of the non-null branches, all
                                    nullable; exactly one set (or all null for a null datum); the
                                    struct is nullable only when the union has null
==================================  =============================================================

A record that contains itself cannot be a Spark type: ``InvalidSchemaError`` names it.

The converters are compiled once per reader schema: a node whose datum already is the Arrow value (most
primitives, and records of them) converts with no per-value work at all.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from spark_kafkalog.schemas.avro.names import PRIMITIVES
from spark_kafkalog.schemas.avro.schema import AvroSchema
from spark_kafkalog.schemas.codec import EncodeError
from spark_kafkalog.schemas.parsed_schema import InvalidSchemaError

Convert = Callable[[Any], Any]

_PRIMITIVE_ARROW = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
_COMPLEX = frozenset({"record", "error", "enum", "fixed", "array", "map"})


@dataclass
class Node:
    """One reader schema node compiled: its Arrow type, whether Spark's type is nullable, the conversions
    (None: the value passes as it is) and how a union branch recognizes a value of it."""

    arrow_type: pa.DataType
    nullable: bool = False
    to_arrow: Convert | None = None
    to_avro: Convert | None = None
    avro_name: str = ""  # the full name of a named type; the primitive's name for a plain primitive
    accepts: Callable[[Any], bool] = field(default=lambda value: False)


def _time_to_int(unit: int) -> Convert:
    def convert(value: Any) -> Any:
        if isinstance(value, datetime.time):
            return ((value.hour * 60 + value.minute) * 60 + value.second) * unit + value.microsecond * unit // 1_000_000
        return value

    return convert


def _is(*types: type) -> Callable[[Any], bool]:
    def accepts(value: Any) -> bool:
        return isinstance(value, types) and not (bool not in types and isinstance(value, bool))

    return accepts


class Compiler:
    """Compiles the nodes of one reader ``AvroSchema``."""

    def __init__(self, schema: AvroSchema) -> None:
        self._schema = schema
        self._records: list[str] = []

    def compile(self, node: Any) -> Node:
        node = self._schema.definition(node)
        if isinstance(node, list):
            return self._union(node)
        if isinstance(node, str):
            if node not in PRIMITIVES:
                raise InvalidSchemaError(f"Avro schema: unknown type {node!r}")
            return self._primitive(node, None)
        kind = node["type"]
        if kind in PRIMITIVES:
            return self._primitive(kind, node.get("logicalType"), node)
        if not isinstance(kind, str) or kind not in _COMPLEX:
            return self.compile(kind)
        if kind in ("record", "error"):
            return self._record(node)
        if kind == "enum":
            return Node(pa.string(), avro_name=node["name"], accepts=_is(str))
        if kind == "fixed":
            if node.get("logicalType") == "decimal":
                return self._decimal(node, node["name"])
            return Node(pa.binary(), avro_name=node["name"], accepts=_is(bytes))
        if kind == "array":
            return self._array(node)
        return self._map(node)

    def _primitive(self, kind: str, logical: Any, node: dict[str, Any] | None = None) -> Node:
        if kind == "int" and logical == "date":
            return Node(
                pa.date32(), accepts=lambda v: isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
            )
        if kind == "int" and logical == "time-millis":
            return Node(pa.int32(), to_arrow=_time_to_int(1000), accepts=_is(datetime.time))
        if kind == "long" and logical in ("timestamp-millis", "timestamp-micros"):
            return Node(
                pa.timestamp("us", tz="UTC"),
                accepts=lambda v: isinstance(v, datetime.datetime) and v.tzinfo is not None,
            )
        if kind == "long" and logical in ("local-timestamp-millis", "local-timestamp-micros"):
            return Node(pa.timestamp("us"), accepts=lambda v: isinstance(v, datetime.datetime) and v.tzinfo is None)
        if kind == "long" and logical == "time-micros":
            return Node(pa.int64(), to_arrow=_time_to_int(1_000_000), accepts=_is(datetime.time))
        if kind == "bytes" and logical == "decimal" and node is not None:
            return self._decimal(node, "")
        if kind == "string" and logical == "uuid":
            return Node(
                pa.string(), to_arrow=lambda v: str(v) if isinstance(v, uuid.UUID) else v, accepts=_is(uuid.UUID, str)
            )
        accepts = {
            "null": lambda v: v is None,
            "boolean": _is(bool),
            "int": _is(int),
            "long": _is(int),
            "float": _is(float, int),
            "double": _is(float, int),
            "bytes": _is(bytes),
            "string": _is(str),
        }[kind]
        return Node(_PRIMITIVE_ARROW[kind], nullable=kind == "null", avro_name="" if logical else kind, accepts=accepts)

    def _decimal(self, node: dict[str, Any], name: str) -> Node:
        precision, scale = node.get("precision"), node.get("scale", 0)
        if not isinstance(precision, int) or not isinstance(scale, int) or not 0 <= scale <= precision:
            base = Node(pa.binary(), avro_name=name, accepts=_is(bytes))
            return base  # an invalid decimal is its base type, as Avro ignores invalid logical types
        arrow = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
        return Node(arrow, avro_name=name, accepts=_is(decimal.Decimal))

    def _record(self, node: dict[str, Any]) -> Node:
        name = node["name"]
        if name in self._records:
            raise InvalidSchemaError(
                f"Found recursive reference in Avro schema, which can not be processed by Spark: {name} "
                f"(via {' -> '.join(self._records)})"
            )
        self._records.append(name)
        try:
            fields = [(f["name"], self.compile(f["type"])) for f in node["fields"]]
        finally:
            self._records.pop()
        arrow = pa.struct([pa.field(n, c.arrow_type, nullable=c.nullable) for n, c in fields])
        converting = [(n, c.to_arrow) for n, c in fields if c.to_arrow is not None]
        to_arrow: Convert | None = None
        if converting:

            def to_arrow(value: Any) -> Any:
                out = dict(value)
                for n, convert in converting:
                    v = out[n]
                    if v is not None:
                        out[n] = convert(v)
                return out

        encoders = [(n, c.to_avro) for n, c in fields]
        names = [n for n, _ in fields]

        def to_avro(value: Any) -> Any:
            if not isinstance(value, dict):
                raise EncodeError(f"record {name}: expected a dict, got {type(value).__name__}")
            out = {}
            for n, convert in encoders:
                v = value.get(n)
                out[n] = convert(v) if convert is not None and v is not None else v
            return out

        return Node(
            arrow,
            to_arrow=to_arrow,
            to_avro=to_avro if any(c is not None for _, c in encoders) else None,
            avro_name=name,
            accepts=lambda v: isinstance(v, dict) and set(v) <= set(names),
        )

    def _array(self, node: dict[str, Any]) -> Node:
        item = self.compile(node["items"])
        arrow = pa.list_(pa.field("element", item.arrow_type, nullable=item.nullable))
        to_arrow = _each(item.to_arrow)
        to_avro = _each(item.to_avro)
        return Node(arrow, to_arrow=to_arrow, to_avro=to_avro, accepts=_is(list))

    def _map(self, node: dict[str, Any]) -> Node:
        value = self.compile(node["values"])
        arrow = pa.map_(pa.string(), pa.field("value", value.arrow_type, nullable=value.nullable))
        to_arrow = value.to_arrow
        to_avro = value.to_avro

        def map_to_arrow(datum: Any) -> Any:
            return {k: (to_arrow(v) if to_arrow is not None and v is not None else v) for k, v in datum.items()}

        def map_to_avro(datum: Any) -> Any:
            items = datum.items() if isinstance(datum, dict) else datum
            return {k: (to_avro(v) if to_avro is not None and v is not None else v) for k, v in items}

        return Node(arrow, to_arrow=map_to_arrow if to_arrow else None, to_avro=map_to_avro, accepts=_is(dict))

    def _union(self, branches: list[Any]) -> Node:
        compiled = [self.compile(b) for b in branches]
        has_null = any(pa.types.is_null(c.arrow_type) for c in compiled)
        others = [c for c in compiled if not pa.types.is_null(c.arrow_type)]
        named = {c.avro_name for c in others if c.avro_name and c.avro_name not in PRIMITIVES}
        unwrap = _unwrap_named(named)
        if not others:
            return Node(pa.null(), nullable=True, accepts=lambda v: v is None)
        if len(others) == 1:
            only = others[0]
            inner = only.to_arrow
            to_arrow = _chain(unwrap, inner)
            return Node(
                only.arrow_type,
                nullable=has_null,
                to_arrow=to_arrow,
                to_avro=only.to_avro,
                avro_name=only.avro_name,
                accepts=only.accepts,
            )
        plain = [self._schema.definition(b) for b in branches]
        kinds = {p if isinstance(p, str) else p.get("type") for p in plain if p != "null"}
        if kinds == {"int", "long"}:
            return Node(pa.int64(), nullable=has_null, accepts=_is(int))
        if kinds == {"float", "double"}:
            return Node(pa.float64(), nullable=has_null, accepts=_is(float, int))
        members = [pa.field(f"member{i}", c.arrow_type, nullable=True) for i, c in enumerate(others)]
        return _union_as_struct(others, members, has_null)


def _each(convert: Convert | None) -> Convert | None:
    if convert is None:
        return None
    return lambda values: [convert(v) if v is not None else None for v in values]


def _chain(first: Convert | None, second: Convert | None) -> Convert | None:
    if first is None:
        return second
    if second is None:
        return first
    return lambda v: second(first(v))


def _unwrap_named(names: set[str]) -> Convert | None:
    """fastavro's ``return_named_type`` gives ``(name, value)`` for a named branch of a union."""
    if not names:
        return None

    def unwrap(value: Any) -> Any:
        if isinstance(value, tuple) and len(value) == 2 and value[0] in names:
            return value[1]
        return value

    return unwrap


def _union_as_struct(branches: list[Node], members: list[pa.Field], has_null: bool) -> Node:
    by_name = {b.avro_name: i for i, b in enumerate(branches) if b.avro_name and b.avro_name not in PRIMITIVES}
    count = len(branches)
    keys = [m.name for m in members]

    def to_arrow(value: Any) -> Any:
        index = None
        if isinstance(value, tuple) and len(value) == 2 and value[0] in by_name:
            index, value = by_name[value[0]], value[1]
        else:
            for i, branch in enumerate(branches):
                if branch.accepts(value):
                    index = i
                    break
        out: dict[str, Any] = dict.fromkeys(keys)
        if index is None:
            raise ValueError(f"no branch of the union takes a {type(value).__name__}")
        convert = branches[index].to_arrow
        out[keys[index]] = convert(value) if convert is not None else value
        return out

    def to_avro(value: Any) -> Any:
        if not isinstance(value, dict):
            raise EncodeError(f"a union is written from a dict of {', '.join(keys)}, not {type(value).__name__}")
        for i in range(count):
            v = value.get(keys[i])
            if v is not None:
                branch = branches[i]
                datum = branch.to_avro(v) if branch.to_avro is not None else v
                return (branch.avro_name, datum) if branch.avro_name else datum
        if has_null:
            return None
        raise EncodeError(f"a union without null needs one of {', '.join(keys)} set")

    # Spark: a union with null is a nullable struct; without null the struct is never null (not nullable)
    return Node(pa.struct(members), nullable=has_null, to_arrow=to_arrow, to_avro=to_avro, accepts=lambda v: True)
