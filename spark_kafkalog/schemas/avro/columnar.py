"""Avro payloads of one writer schema straight into an Arrow column, compiled (``spark_kafkalog._kernels``).

``compile_program(writer, reader)`` turns the writer schema into the flat op list the C kernel
(``_kernels_src/avro.c`` ``avro_decode``) runs per payload, or None when the compiled path does not cover it:
a writer other than the reader (resolution stays with fastavro and ``projection``), or a shape outside

==========================================  ==============================================================
Avro                                        column (Arrow, as ``arrow.Compiler`` types it)
==========================================  ==============================================================
null / boolean / int / long                 null / bool / int32 / int64
float / double / string / bytes / fixed     float32 / float64 / string (strict UTF-8) / binary / binary
enum                                        the symbol's index, then ``take`` from the symbols: string
int date                                    date32
long timestamp-millis / -micros             timestamp("us", tz="UTC"), millis times 1000
long local-timestamp-millis / -micros       timestamp("us")
record                                      struct of its fields (nested records too)
array                                       list (int32 offsets over its items' column)
union [null, T] / [T, null]                 T, nullable (a validity bitmap)
==========================================  ==============================================================

Anything else (other logical types, other unions, maps: fastavro keeps a map's last duplicate key) -> None. ``decode_column(program, array,
skip)`` decodes every non-null value of a binary array (each payload after ``skip`` prefix bytes) and
wraps the kernel's buffers into one pyarrow array of ``program.arrow_type`` (a null value -> null); None
when some payload is not decoded (truncated, trailing bytes, a value Python's datetime or the column's
type cannot hold ...): the caller then takes the Python path, which names the error. The result equals
``pa.array(codec.decode_many(payloads, writer), codec.arrow_type)`` (tests/schemas/avro/test_columnar.py).

Without the compiled extension ``AVAILABLE`` is False and ``compile_program`` answers None. Programs are
immutable; ``decode_column`` is thread-safe (the kernel releases the GIL while it decodes).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from spark_kafkalog.schemas.avro.names import PRIMITIVES
from spark_kafkalog.schemas.avro.schema import AvroSchema

_kernels: Any
try:  # the extension has no stubs: mypy may or may not see the built module
    from spark_kafkalog import _kernels  # type: ignore[attr-defined,no-redef,unused-ignore]

    if not hasattr(_kernels, "avro_decode"):  # an extension built before the Avro kernel was added
        _kernels = None
except ImportError:  # built without a C compiler: the Python path
    _kernels = None

__all__ = ["AVAILABLE", "Program", "compile_program", "decode_column"]

AVAILABLE = _kernels is not None

# opcodes of _kernels_src/avro.c
(
    NULL,
    BOOLEAN,
    INT,
    LONG,
    FLOAT,
    DOUBLE,
    STRING,
    BYTES,
    FIXED,
    ENUM,
    DATE,
    TS_MILLIS,
    TS_MICROS,
    RECORD,
    UNION_NULL,
    ARRAY,
) = range(16)

_PRIMITIVE_OPS = {
    "null": (NULL, pa.null()),
    "boolean": (BOOLEAN, pa.bool_()),
    "int": (INT, pa.int32()),
    "long": (LONG, pa.int64()),
    "float": (FLOAT, pa.float32()),
    "double": (DOUBLE, pa.float64()),
    "string": (STRING, pa.string()),
    "bytes": (BYTES, pa.binary()),
}
_LOGICAL_OPS = {
    ("int", "date"): (DATE, pa.date32()),
    ("long", "timestamp-millis"): (TS_MILLIS, pa.timestamp("us", tz="UTC")),
    ("long", "timestamp-micros"): (TS_MICROS, pa.timestamp("us", tz="UTC")),
    ("long", "local-timestamp-millis"): (TS_MILLIS, pa.timestamp("us")),
    ("long", "local-timestamp-micros"): (TS_MICROS, pa.timestamp("us")),
}


class Unsupported(Exception):
    """A schema shape the compiled path leaves to the Python path."""


@dataclass(frozen=True)
class _Column:
    """One output column: its op, Arrow type, children (a struct's fields) and enum symbols."""

    op: int
    index: int
    arrow_type: pa.DataType
    children: tuple[_Column, ...] = ()
    names: tuple[str, ...] = ()
    nullables: tuple[bool, ...] = ()
    symbols: pa.Array | None = None


@dataclass(frozen=True)
class Program:
    """A compiled writer schema: the kernel's ops (int32, 4 per op) and the column tree they fill."""

    ops: bytes = field(repr=False)
    columns: int
    root: _Column
    arrow_type: pa.DataType


class _Builder:
    def __init__(self, schema: AvroSchema) -> None:
        self._schema = schema
        self.ops: list[list[int]] = []
        self.columns = 0

    def _op(self, code: int, argument: int = 0, column: bool = True) -> tuple[int, int]:
        index = self.columns if column else -1
        if column:
            self.columns += 1
        self.ops.append([code, max(index, 0), argument, 0])
        return len(self.ops) - 1, index

    def _end(self, at: int) -> None:
        self.ops[at][3] = len(self.ops)

    def node(self, node: Any) -> tuple[_Column, bool]:
        """The column of ``node`` and whether it is nullable (as ``arrow.Compiler`` says)."""
        node = self._schema.definition(node)
        if isinstance(node, list):
            return self._union(node)
        if isinstance(node, str):
            if node not in PRIMITIVES:
                raise Unsupported(node)
            return self._leaf(*_PRIMITIVE_OPS[node]), node == "null"
        kind = node["type"]
        logical = node.get("logicalType")
        if kind in PRIMITIVES:
            if logical is None:
                return self._leaf(*_PRIMITIVE_OPS[kind]), kind == "null"
            if (kind, logical) not in _LOGICAL_OPS:
                raise Unsupported(f"{kind} {logical}")
            return self._leaf(*_LOGICAL_OPS[(kind, logical)]), False
        if not isinstance(kind, str):
            return self.node(kind)
        if logical is not None:
            raise Unsupported(f"{kind} {logical}")
        if kind in ("record", "error"):
            at, index = self._op(RECORD, len(node["fields"]))
            children, nullables = [], []
            for f in node["fields"]:
                child, nullable = self.node(f["type"])
                children.append(child)
                nullables.append(nullable)
            self._end(at)
            names = tuple(f["name"] for f in node["fields"])
            arrow = pa.struct([pa.field(n, c.arrow_type, nullable=b) for n, c, b in zip(names, children, nullables)])
            return _Column(RECORD, index, arrow, tuple(children), names, tuple(nullables)), False
        if kind == "enum":
            symbols = list(node["symbols"])
            column = self._leaf(ENUM, pa.string(), len(symbols))
            return _Column(ENUM, column.index, pa.string(), symbols=pa.array(symbols, pa.string())), False
        if kind == "fixed":
            return self._leaf(FIXED, pa.binary(), int(node["size"])), False
        if kind == "array":
            at, index = self._op(ARRAY)
            item, nullable = self.node(node["items"])
            self._end(at)
            arrow = pa.list_(pa.field("element", item.arrow_type, nullable=nullable))
            return _Column(ARRAY, index, arrow, (item,)), False
        raise Unsupported(kind)

    def _leaf(self, code: int, arrow_type: pa.DataType, argument: int = 0) -> _Column:
        at, index = self._op(code, argument)
        self._end(at)
        return _Column(code, index, arrow_type)

    def _union(self, branches: list[Any]) -> tuple[_Column, bool]:
        plain = [self._schema.definition(b) for b in branches]
        nulls = [i for i, b in enumerate(plain) if b == "null" or (isinstance(b, dict) and b.get("type") == "null")]
        if len(branches) != 2 or len(nulls) != 1 or isinstance(plain[1 - nulls[0]], list):
            raise Unsupported("union")
        at, _ = self._op(UNION_NULL, nulls[0], column=False)
        column, _ = self.node(branches[1 - nulls[0]])
        self._end(at)
        return column, True


def compile_program(writer: AvroSchema, reader: AvroSchema) -> Program | None:
    """The program decoding payloads of ``writer`` into ``reader``'s Arrow type; None when the compiled path
    does not cover it (no kernel, a writer other than the reader, a shape outside the module's table)."""
    if _kernels is None or not (writer is reader or writer == reader):
        return None
    builder = _Builder(writer)
    try:
        root, _ = builder.node(writer.fastavro_schema)
    except Unsupported:
        return None
    ops = b"".join(struct.pack("<4i", *op) for op in builder.ops)
    return Program(ops, builder.columns, root, root.arrow_type)


def decode_column(program: Program, array: pa.Array, skip: int = 0) -> pa.Array | None:
    """The values of binary (or large binary) ``array``, each an Avro payload of the program's writer after
    ``skip`` prefix bytes, as one array of ``program.arrow_type`` (null for a null value); None when a
    payload is not decoded here (the caller uses the Python path, which explains)."""
    if _kernels is None:
        return None
    if pa.types.is_large_binary(array.type):
        width = 8
    elif pa.types.is_binary(array.type):
        width = 4
    else:
        raise TypeError(f"decode_column needs a binary array, not {array.type}")
    validity, offsets, data = array.buffers()
    if offsets is None:  # an empty array may come without buffers
        return None if len(array) else pa.array([], program.arrow_type)
    bad, columns = _kernels.avro_decode(
        program.ops,
        program.columns,
        data if data is not None else b"",
        offsets,
        width,
        validity if array.null_count else None,
        array.offset,
        len(array),
        skip,
    )
    if bad >= 0:
        return None
    return _build(program.root, columns)


def _build(column: _Column, buffers: list[tuple[Any, int, bytes, bytes, int]]) -> pa.Array:
    validity, nulls, values, data, length = buffers[column.index]
    bitmap = pa.py_buffer(validity) if validity is not None else None
    op = column.op
    if op == NULL:
        return pa.nulls(length)
    if op == RECORD:
        children = [_build(child, buffers) for child in column.children]
        return pa.Array.from_buffers(column.arrow_type, length, [bitmap], nulls, children=children)
    if op == ARRAY:
        items = _build(column.children[0], buffers)
        return pa.Array.from_buffers(column.arrow_type, length, [bitmap, pa.py_buffer(values)], nulls, children=[items])
    if op in (STRING, BYTES, FIXED):
        return pa.Array.from_buffers(
            column.arrow_type, length, [bitmap, pa.py_buffer(values), pa.py_buffer(data)], nulls
        )
    if op == ENUM:
        assert column.symbols is not None
        indexes = pa.Array.from_buffers(pa.int32(), length, [bitmap, pa.py_buffer(values)], nulls)
        return column.symbols.take(indexes)
    return pa.Array.from_buffers(column.arrow_type, length, [bitmap, pa.py_buffer(values)], nulls)
