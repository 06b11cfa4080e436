"""The compiled Avro column decoder (``columnar``, ``_kernels.avro_decode``) against the Python path
(``pa.array(codec.decode_many(...), codec.arrow_type)``): equal arrays for random schemas and values, and
malformed payloads reported by index without a crash."""

from __future__ import annotations

import datetime
import io
import itertools
import json
import struct

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafkalog.schemas.avro import AvroSchema, codec, columnar, parse
from spark_kafkalog.schemas.codec import DecodeError

pytestmark = pytest.mark.skipif(
    not columnar.AVAILABLE, reason="spark_kafkalog._kernels is not built (no C compiler at install)"
)

UTC = datetime.UTC
LEAVES = [
    "null",
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "string",
    "bytes",
    {"type": "int", "logicalType": "date"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-micros"},
    {"type": "long", "logicalType": "local-timestamp-millis"},
    {"type": "long", "logicalType": "local-timestamp-micros"},
    {"type": "enum", "symbols": ["A", "B", "C"]},
    {"type": "fixed", "size": 3},
    {"type": "fixed", "size": 0},
]


def avro(schema) -> AvroSchema:
    return parse(json.dumps(schema), (), {})


def _name(schema, counter) -> object:
    """``schema`` with every enum, fixed and record named uniquely."""
    if isinstance(schema, list):
        return [_name(b, counter) for b in schema]
    if isinstance(schema, dict) and schema.get("type") in ("enum", "fixed", "record"):
        out = {**schema, "name": f"T{next(counter)}"}
        if schema["type"] == "record":
            out["fields"] = [{**f, "type": _name(f["type"], counter)} for f in schema["fields"]]
        return out
    if isinstance(schema, dict) and schema.get("type") == "array":
        return {**schema, "items": _name(schema["items"], counter)}
    return schema


def _nullable(t):
    return st.sampled_from([0, 1]).map(lambda i: ["null", t] if i == 0 else [t, "null"])


def _record(children):
    return st.lists(children, min_size=1, max_size=4).map(
        lambda types: {"type": "record", "fields": [{"name": f"f{i}", "type": t} for i, t in enumerate(types)]}
    )


non_null = st.recursive(
    st.sampled_from([leaf for leaf in LEAVES if leaf != "null"]),
    lambda children: (
        _record(children | children.flatmap(_nullable) | st.just("null"))
        | st.one_of(children, children.flatmap(_nullable), st.just("null")).map(lambda t: {"type": "array", "items": t})
    ),
    max_leaves=8,
)
schemas = st.one_of(non_null, non_null.flatmap(_nullable)).map(lambda s: _name(s, itertools.count()))

MIN_DT = datetime.datetime(1, 1, 1)
MAX_DT = datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)


def values(schema):
    """A strategy of fastavro datums of ``schema`` (JSON)."""
    if isinstance(schema, list):
        other = next(b for b in schema if b != "null")
        return st.none() | values(other)
    if isinstance(schema, str):
        return {
            "null": st.none(),
            "boolean": st.booleans(),
            "int": st.integers(-(2**31), 2**31 - 1),
            "long": st.integers(-(2**63), 2**63 - 1),
            "float": st.floats(width=32, allow_nan=False),
            "double": st.floats(allow_nan=False),
            "string": st.text(),
            "bytes": st.binary(),
        }[schema]
    kind, logical = schema["type"], schema.get("logicalType")
    if logical == "date":
        return st.dates()
    if logical is not None:
        millis = logical.endswith("millis")
        naive = st.datetimes(MIN_DT, MAX_DT)
        if millis:
            naive = naive.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
        return naive if logical.startswith("local") else naive.map(lambda d: d.replace(tzinfo=UTC))
    if kind == "enum":
        return st.sampled_from(schema["symbols"])
    if kind == "fixed":
        return st.binary(min_size=schema["size"], max_size=schema["size"])
    if kind == "array":
        return st.lists(values(schema["items"]), max_size=4)
    return st.fixed_dictionaries({f["name"]: values(f["type"]) for f in schema["fields"]})


def encode(schema: AvroSchema, datum) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema.fastavro_schema, datum)
    return out.getvalue()


def python_path(schema: AvroSchema, payloads: list[bytes | None]) -> pa.Array:
    c = codec(schema)
    present = [p for p in payloads if p is not None]
    decoded = iter(c.decode_many(present, schema))
    return pa.array([None if p is None else next(decoded) for p in payloads], c.arrow_type)


def compiled(schema: AvroSchema, payloads: list[bytes | None], prefix: bytes = b"", large: bool = False):
    program = columnar.compile_program(schema, schema)
    assert program is not None, f"not compiled: {schema.canonical}"
    array = pa.array([None if p is None else prefix + p for p in payloads], pa.large_binary() if large else pa.binary())
    return columnar.decode_column(program, array, len(prefix))


def first_bad(schema: AvroSchema, payloads: list[bytes]) -> int:
    program = columnar.compile_program(schema, schema)
    assert program is not None
    array = pa.array(payloads, pa.binary())
    _, offsets, data = array.buffers()
    bad, buffers = columnar._kernels.avro_decode(
        program.ops, program.columns, data or b"", offsets, 4, None, 0, len(array), 0
    )
    assert (buffers is None) == (bad >= 0)
    return bad


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), schemas)
def test_compiled_column_equals_the_python_path(data, schema_json):
    schema = avro(schema_json)
    datums = data.draw(st.lists(st.none() | values(schema_json).map(lambda v: [v]), max_size=12))
    payloads = [None if d is None else encode(schema, d[0]) for d in datums]
    expected = python_path(schema, payloads)
    for prefix, large in ((b"", False), (b"\x00\x00\x00\x00\x07", False), (b"\x01", True)):
        got = compiled(schema, payloads, prefix, large)
        assert got is not None
        got.validate(full=True)
        assert got.type == expected.type
        assert got.equals(expected), (got.to_pylist(), expected.to_pylist())
    # every strict prefix of a payload is truncated, a byte more is trailing: both reported by index
    for index, payload in enumerate(p for p in payloads if p is not None):
        for cut in range(len(payload)):
            assert first_bad(schema, [b for b in payloads if b is not None][:index] + [payload[:cut]]) == index
        assert first_bad(schema, [payload, payload + b"\x00"]) == 1


@settings(max_examples=300, deadline=None)
@given(schemas, st.lists(st.binary(max_size=24), min_size=1, max_size=6))
def test_random_bytes_decode_as_the_python_path_does_or_are_reported(schema_json, payloads):
    schema = avro(schema_json)
    got = compiled(schema, list(payloads))
    if got is None:
        return  # the kernel may leave more to the Python path than it refuses (never the other way)
    try:
        expected = python_path(schema, list(payloads))
    except (DecodeError, pa.ArrowInvalid, OverflowError):
        expected = None  # the Python path refuses them: so must the kernel
    assert expected is not None, f"compiled path accepted what the Python path refuses: {payloads}"
    assert got.equals(expected)


def test_sliced_input_and_nan_bits():
    schema = avro({"type": "record", "name": "R", "fields": [{"name": "x", "type": ["null", "double"]}]})
    nan = struct.pack("<d", float("nan"))
    payloads = [b"\x02" + struct.pack("<d", 1.5), b"\x00", b"\x02" + nan, b"\x02" + struct.pack("<d", -0.0)]
    array = pa.array([b"junk", *payloads], pa.binary()).slice(1)
    program = columnar.compile_program(schema, schema)
    assert program is not None
    got = columnar.decode_column(program, array)
    expected = python_path(schema, payloads)
    assert got is not None and got.type == expected.type
    assert got.field(0).buffers()[1].to_pybytes() == expected.field(0).buffers()[1].to_pybytes()
    assert got.field(0).is_null().to_pylist() == [False, True, False, False]


S = '{"type":"record","name":"R","fields":[{"name":"s","type":"string"}]}'
MALFORMED = [
    # (schema, payload, why[, whether fastavro refuses it too: else the kernel leaves it to the Python path,
    # which reads an 11-byte varint, a negative index from the end, an int beyond 32 bits for pa.array to refuse)]
    (S, b"", "no length"),
    (S, b"\x06ab", "truncated string"),
    (S, b"\x02a\x00", "trailing byte"),
    (S, b"\x01", "negative length"),
    (S, b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f", "2^62-byte string"),
    (S, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "length -2^63"),
    (S, b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", "11-byte varint", False),
    (S, b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02", "varint wider than 64 bits", False),
    (S, b"\x02\xff", "invalid UTF-8"),
    (S, b"\x06\xed\xa0\x80", "a surrogate in UTF-8"),
    (S, b"\x04\xc0\x80", "overlong UTF-8"),
    ('"int"', b"\x80\x80\x80\x80\x10", "int beyond 32 bits", False),
    ('"boolean"', b"", "no boolean byte"),
    ('"double"', b"\x00" * 7, "7-byte double"),
    ('{"type":"int","logicalType":"date"}', encode(avro("int"), 2932897), "date after 9999"),
    ('{"type":"long","logicalType":"timestamp-millis"}', encode(avro("long"), 253402300800000), "after 9999"),
    ('{"type":"long","logicalType":"timestamp-micros"}', encode(avro("long"), -62135596800000001), "before 1"),
    ('{"type":"enum","name":"E","symbols":["A"]}', b"\x02", "enum index 1 of 1"),
    ('{"type":"enum","name":"E","symbols":["A"]}', b"\x01", "enum index -1", False),
    ('["null","int"]', b"\x04\x00", "union index 2"),
    ('["null","int"]', b"\x01\x00", "union index -1", False),
    ('{"type":"fixed","name":"F","size":4}', b"abc", "short fixed"),
    ('{"type":"array","items":"int"}', b"\x06\x02\x04\x00", "array of 3 ints with 2"),
    ('{"type":"array","items":"int"}', b"\x03\x01\x02\x04\x00", "block of -2 items, size -1", False),
    ('{"type":"array","items":"null"}', b"\x80\x80\x80\x80\x80\x80\x80\x01\x00", "2^48 nulls", False),
]


@pytest.mark.parametrize("case", MALFORMED, ids=[m[2] for m in MALFORMED])
def test_malformed_payloads_are_reported_by_index(case):
    schema_text, payload, _, python_refuses = (*case, True)[:4]
    schema = parse(schema_text, (), {})
    good = encode(schema, fastavro.schemaless_reader(io.BytesIO(_valid(schema_text)), schema.fastavro_schema))
    assert first_bad(schema, [good, good, payload, good]) == 2
    assert compiled(schema, [good, payload]) is None
    if python_refuses:  # (fastavro would loop over a forged count of nulls: not asked)
        with pytest.raises(DecodeError):  # the Python path the caller falls back to names it
            codec(schema).decode(payload, schema)


def _valid(schema_text: str) -> bytes:
    return {
        S: b"\x02a",
        '"int"': b"\x02",
        '"boolean"': b"\x01",
        '"double"': b"\x00" * 8,
        '["null","int"]': b"\x02\x02",
        '{"type":"fixed","name":"F","size":4}': b"abcd",
    }.get(schema_text, b"\x00")


@pytest.mark.parametrize(
    ("writer", "reader", "why"),
    [
        ('{"type":"map","values":"int"}', None, "maps stay on the Python path"),
        ('["int","string"]', None, "a union of two types"),
        ('["int","long"]', None, "a promoting union"),
        ('{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}', None, "decimal"),
        ('{"type":"string","logicalType":"uuid"}', None, "uuid"),
        ('{"type":"int","logicalType":"time-millis"}', None, "time-millis"),
        (
            S,
            '{"type":"record","name":"R","fields":[{"name":"s","type":"string"},{"name":"t","type":"int","default":0}]}',
            "a writer other than the reader",
        ),
    ],
)
def test_shapes_left_to_the_python_path(writer, reader, why):
    w = parse(writer, (), {})
    r = parse(reader, (), {}) if reader else w
    assert columnar.compile_program(w, r) is None, why
    assert codec(r).decode_arrow(pa.array([b"\x00"], pa.binary()), w) is None


def test_codec_decode_arrow_and_without_the_kernel(monkeypatch):
    schema = avro(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "k", "type": {"type": "enum", "name": "K", "symbols": ["X", "Y"]}}],
        }
    )
    c = codec(schema)
    array = pa.array([b"\x02", None, b"\x00"], pa.binary())
    got = c.decode_arrow(array, schema)
    assert got is not None and got.to_pylist() == [{"k": "Y"}, None, {"k": "X"}]
    assert got.equals(python_path(schema, [b"\x02", None, b"\x00"]))
    assert c.decode_arrow(pa.array([b"\x02", b"\x04"], pa.binary()), schema) is None  # index 2 of 2 symbols
    monkeypatch.setattr(columnar, "_kernels", None)
    assert columnar.compile_program(schema, schema) is None
    assert codec(schema).decode_arrow(array, schema) is None
