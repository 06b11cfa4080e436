"""Projection of writer datums onto a reader schema gives exactly what fastavro's resolution gives."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from spark_kafkalog.schemas.avro import codec, parse
from spark_kafkalog.schemas.avro.projection import IDENTITY, projection


def avro(schema):
    return parse(json.dumps(schema), (), {})


def rec(*fields, name="R", **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name, type_, **extra):
    return {"name": name, "type": type_, **extra}


E2 = {"type": "enum", "name": "E", "symbols": ["A", "B"]}
E3 = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}
E_DEFAULT = {"type": "enum", "name": "E", "symbols": ["A", "Z"], "default": "Z"}
INNER = rec(f("x", "int"), name="In")
INNER_WIDE = rec(f("x", "long"), f("y", ["null", "string"], default=None), name="In")

# (case, writer, reader, writer datums, projected by us (True) or left to fastavro (False))
CASES = [
    ("identical", rec(f("a", "int")), rec(f("a", "int", doc="docs do not matter")), [{"a": 1}], True),
    (
        "promotions",
        rec(f("i", "int"), f("l", "long"), f("fl", "float"), f("s", "string"), f("b", "bytes")),
        rec(f("i", "double"), f("l", "float"), f("fl", "double"), f("s", "bytes"), f("b", "string")),
        [{"i": 1, "l": 2**40, "fl": 1.5, "s": "é", "b": b"x"}],
        True,
    ),
    (
        "field dropped and added with defaults",
        rec(f("a", "int"), f("gone", "string")),
        rec(
            f("a", "int"),
            f("n", ["null", "int"], default=None),
            f("d", "double", default=1),
            f("s", "string", default="x"),
            f("t", "boolean", default=True),
        ),
        [{"a": 1, "gone": "g"}],
        True,
    ),
    (
        "fields reordered and renamed by alias",
        rec(f("a", "int"), f("b", "string")),
        rec(f("bb", "string", aliases=["b"]), f("a", "long")),
        [{"a": 1, "b": "x"}],
        True,
    ),
    (
        "nested record evolves",
        rec(f("in", INNER), f("arr", {"type": "array", "items": "In"}), f("m", {"type": "map", "values": "In"})),
        rec(f("in", INNER_WIDE), f("arr", {"type": "array", "items": "In"}), f("m", {"type": "map", "values": "In"})),
        [{"in": {"x": 1}, "arr": [{"x": 2}], "m": {"k": {"x": 3}}}],
        True,
    ),
    ("enum gains symbols", rec(f("e", E2)), rec(f("e", E3)), [{"e": "B"}], True),
    ("enum loses symbols to the default", rec(f("e", E3)), rec(f("e", E_DEFAULT)), [{"e": "A"}, {"e": "C"}], True),
    (
        "plain into a union",
        rec(f("u", "string"), f("r", INNER)),
        rec(f("u", ["null", "int", "string"]), f("r", ["null", INNER_WIDE])),
        [{"u": "x", "r": {"x": 5}}],
        True,
    ),
    ("int into a union of long", rec(f("u", "int")), rec(f("u", ["null", "string", "long"])), [{"u": 7}], True),
    (
        "identical unions of named types",
        rec(f("u", ["null", E2, INNER])),
        rec(f("u", ["null", E2, INNER])),
        [{"u": ("E", "A")}, {"u": ("In", {"x": 1})}, {"u": None}],
        True,
    ),
    (
        "unions that differ",
        rec(f("u", ["null", "int"])),
        rec(f("u", ["null", "long", "string"])),
        [{"u": 1}, {"u": None}],
        False,
    ),
    ("a bytes default", rec(f("a", "int")), rec(f("a", "int"), f("b", "bytes", default="\u00ff")), [{"a": 1}], False),
    ("a record default", rec(f("a", "int")), rec(f("a", "int"), f("r", INNER, default={"x": 1})), [{"a": 1}], False),
    ("a renamed record", rec(f("a", "int")), rec(f("a", "int"), name="S", aliases=["R"]), [{"a": 1}], False),
    (
        "a logical type added",
        rec(f("t", "long")),
        rec(f("t", {"type": "long", "logicalType": "timestamp-millis"})),
        [{"t": 1000}],
        False,
    ),
]


def payload(schema, datum):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema.fastavro_schema, datum)
    return out.getvalue()


@pytest.mark.parametrize(("writer", "reader", "datums", "projected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_projection_decodes_as_fastavro_resolution_does(writer, reader, datums, projected):
    writer, reader = avro(writer), avro(reader)
    assert (projection(writer, reader) is not None) is projected
    payloads = [payload(writer, d) for d in datums]
    fast, slow = codec(reader), codec(reader, project=False)
    expected = typed(slow.decode_many(payloads, writer))
    assert typed(fast.decode_many(payloads, writer)) == expected
    assert typed([fast.decode(p, writer) for p in payloads]) == expected


def typed(value):
    """Values compared with their types (1 and 1.0 differ), dicts by keys whatever their order."""
    if isinstance(value, dict):
        return sorted((k, typed(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, *(typed(v) for v in value)]
    return (type(value).__name__, value)


def test_identical_schemas_project_as_identity():
    assert projection(avro(rec(f("a", "int"))), avro(rec(f("a", "int"), doc="d"))) is IDENTITY
    assert projection(avro(rec(f("e", E2))), avro(rec(f("e", E3)))) is IDENTITY
