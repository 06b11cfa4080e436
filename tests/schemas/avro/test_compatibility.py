"""Avro reader/writer compatibility (Avro's SchemaCompatibility rules) and Confluent's verbose messages."""

from __future__ import annotations

import json

import pytest

from spark_kafkalog.schemas import compatibility_errors
from spark_kafkalog.schemas.avro import parse
from spark_kafkalog.schemas.avro.compatibility import incompatibilities


def avro(schema):
    return parse(json.dumps(schema), (), {})


def record(*fields, name="R", **extra):
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def field(name, type_, **extra):
    return {"name": name, "type": type_, **extra}


def enum(*symbols, name="E", **extra):
    return {"type": "enum", "name": name, "symbols": list(symbols), **extra}


# (case, reader, writer, [(errorType, path, additionalInfo)] for reader reading writer's data)
CASES = [
    ("same primitive", "int", "int", []),
    ("int promotes to long", "long", "int", []),
    ("int promotes to float", "float", "int", []),
    ("long promotes to double", "double", "long", []),
    ("float promotes to double", "double", "float", []),
    ("string reads bytes", "string", "bytes", []),
    ("bytes reads string", "bytes", "string", []),
    (
        "long does not narrow to int",
        "int",
        "long",
        [("TYPE_MISMATCH", "/", "reader type: INT not compatible with writer type: LONG")],
    ),
    (
        "double does not narrow to float",
        "float",
        "double",
        [("TYPE_MISMATCH", "/", "reader type: FLOAT not compatible with writer type: DOUBLE")],
    ),
    ("logical types play no part", {"type": "long", "logicalType": "timestamp-millis"}, "long", []),
    (
        "field type changed",
        record(field("a", "string")),
        record(field("a", "int")),
        [("TYPE_MISMATCH", "/fields/0/type", "reader type: STRING not compatible with writer type: INT")],
    ),
    (
        "reader field with a default",
        record(field("a", "int"), field("b", "int", default=0)),
        record(field("a", "int")),
        [],
    ),
    ("reader field with a null default", record(field("b", ["null", "int"], default=None)), record(), []),
    (
        "reader field without a default",
        record(field("a", "int"), field("b", "int")),
        record(field("a", "int")),
        [("READER_FIELD_MISSING_DEFAULT_VALUE", "/fields/1", "b")],
    ),
    ("writer field dropped", record(field("a", "int")), record(field("a", "int"), field("b", "int")), []),
    ("field renamed with an alias", record(field("b", "int", aliases=["a"])), record(field("a", "int")), []),
    ("record renamed", record(name="S"), record(name="R"), [("NAME_MISMATCH", "/name", "expected: R")]),
    ("record renamed with an alias", record(name="S", aliases=["R"]), record(name="R"), []),
    ("namespaces are not compared", record(name="a.R"), record(name="b.R"), []),
    ("enum symbols added", enum("A", "B", "C"), enum("A", "B"), []),
    ("enum symbols removed", enum("A"), enum("A", "C", "B"), [("MISSING_ENUM_SYMBOLS", "/symbols", "[B, C]")]),
    ("enum symbols removed with a reader default", enum("A", "U", default="U"), enum("A", "B"), []),
    ("enum renamed", enum("A", name="F"), enum("A"), [("NAME_MISMATCH", "/name", "expected: E")]),
    (
        "fixed size changed",
        {"type": "fixed", "name": "F", "size": 4},
        {"type": "fixed", "name": "F", "size": 8},
        [("FIXED_SIZE_MISMATCH", "/size", "expected: 8, found: 4")],
    ),
    ("array items promote", {"type": "array", "items": "long"}, {"type": "array", "items": "int"}, []),
    (
        "array items mismatch",
        {"type": "array", "items": "int"},
        {"type": "array", "items": "string"},
        [("TYPE_MISMATCH", "/items", "reader type: INT not compatible with writer type: STRING")],
    ),
    (
        "map values mismatch",
        {"type": "map", "values": "boolean"},
        {"type": "map", "values": "int"},
        [("TYPE_MISMATCH", "/values", "reader type: BOOLEAN not compatible with writer type: INT")],
    ),
    (
        "array vs map",
        {"type": "array", "items": "int"},
        {"type": "map", "values": "int"},
        [("TYPE_MISMATCH", "/", "reader type: ARRAY not compatible with writer type: MAP")],
    ),
    ("union gains a branch", ["null", "int", "string"], ["null", "int"], []),
    (
        "union loses a branch",
        record(field("u", ["null", "string"])),
        record(field("u", ["null", "string", "int"])),
        [("MISSING_UNION_BRANCH", "/fields/0/type/2", "reader union lacking writer type: INT")],
    ),
    ("union reads a promoted branch", ["null", "long"], ["null", "int"], []),
    ("reader union reads a plain writer", ["null", "string"], "string", []),
    (
        "reader union lacks the writer's type",
        ["null", "string"],
        "int",
        [("MISSING_UNION_BRANCH", "/", "reader union lacking writer type: INT")],
    ),
    ("plain reader reads a union of its type", "long", ["int", "long"], []),
    (
        "plain reader of a wider writer union",
        "string",
        ["null", "string"],
        [("TYPE_MISMATCH", "/", "reader type: STRING not compatible with writer type: NULL")],
    ),
    (
        "recursive records",
        record(field("v", "int"), field("next", ["null", "R"], default=None), field("w", "int", default=1)),
        record(field("v", "int"), field("next", ["null", "R"])),
        [],
    ),
    (
        "recursive records, incompatible inside",
        record(field("v", "string"), field("next", ["null", "R"])),
        record(field("v", "int"), field("next", ["null", "R"])),
        [("TYPE_MISMATCH", "/fields/0/type", "reader type: STRING not compatible with writer type: INT")],
    ),
]


@pytest.mark.parametrize(("reader", "writer", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reader_writer_compatibility_follows_avro(reader, writer, expected):
    found = incompatibilities(avro(reader), avro(writer))
    assert [(i.error_type, i.path, i.info) for i in found] == expected


DESCRIPTIONS = [
    (
        record(field("a", "int"), field("x", "int")),
        record(field("a", "int")),
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'x' at path '/fields/1' in the new "
        "schema has no default value and is missing in the old schema', additionalInfo:'x'}",
    ),
    (
        record(field("a", "string")),
        record(field("a", "int")),
        "{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the new schema does "
        "not match with the old schema', additionalInfo:'reader type: STRING not compatible with writer type: INT'}",
    ),
    (
        record(name="S"),
        record(),
        "{errorType:'NAME_MISMATCH', description:'The name of the schema has changed (path '/name')', additionalInfo:'expected: R'}",
    ),
    (
        record(field("e", enum("A"))),
        record(field("e", enum("A", "B"))),
        "{errorType:'MISSING_ENUM_SYMBOLS', description:'The new schema is missing enum symbols '[B]' at path "
        "'/fields/0/type/symbols' in the old schema', additionalInfo:'[B]'}",
    ),
    (
        record(field("u", ["null", "string"])),
        record(field("u", ["null", "string", record(name="S")])),
        "{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a type inside a union field at path "
        "'/fields/0/type/2' in the old schema', additionalInfo:'reader union lacking writer type: RECORD'}",
    ),
    (
        {"type": "fixed", "name": "F", "size": 2},
        {"type": "fixed", "name": "F", "size": 3},
        "{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at path '/size' in the new schema "
        "does not match with the old schema', additionalInfo:'expected: 3, found: 2'}",
    ),
]


@pytest.mark.parametrize(("new", "old", "message"), DESCRIPTIONS)
def test_is_backward_compatible_answers_confluents_verbose_messages(new, old, message):
    assert avro(new).is_backward_compatible(avro(old)) == [message]


def test_forward_wording_swaps_new_and_old():
    (found,) = incompatibilities(
        avro(record(field("a", "int"), field("x", "int"))), avro(record(field("a", "int"))), ("old", "new")
    )
    assert "in the old schema has no default value and is missing in the new schema" in str(found)


def test_another_schema_type_is_incompatible():
    class Other:
        schema_type = "JSON"

    assert avro("int").is_backward_compatible(Other()) == [
        "Incompatible because of different schema type: JSON -> AVRO"
    ]  # type: ignore[arg-type]


V1 = avro(record(field("a", "int")))
V2 = avro(record(field("a", "int"), field("b", "int", default=0)))  # adds b with a default
V3 = avro(record(field("b", "int", default=0)))  # drops a (no default in V1 and V2)
V_ADD_REQUIRED = avro(record(field("a", "int"), field("c", "int")))


# (level, history oldest first, new, compatible)
LEVELS = [
    ("NONE", [V1], V_ADD_REQUIRED, True),
    ("BACKWARD", [V1], V2, True),
    ("BACKWARD", [V1], V_ADD_REQUIRED, False),
    ("BACKWARD", [V1, V2], V3, True),
    ("BACKWARD_TRANSITIVE", [V1, V2], V3, True),
    ("FORWARD", [V1], V_ADD_REQUIRED, True),
    ("FORWARD", [V2], V3, False),  # V2 needs a (no default) missing from V3's data
    ("FORWARD_TRANSITIVE", [V1, V2], V2, True),
    ("FULL", [V1], V2, True),
    ("FULL", [V1], V_ADD_REQUIRED, False),
    ("FULL_TRANSITIVE", [V1, V2], V3, False),
    ("FULL_TRANSITIVE", [V2], V2, True),
]


@pytest.mark.parametrize(("level", "history", "new", "compatible"), LEVELS)
def test_levels_over_avro_schemas(level, history, new, compatible):
    errors = compatibility_errors(new, history, level)
    assert (errors == []) is compatible, errors
    assert all(e.startswith("{errorType:'") for e in errors)
