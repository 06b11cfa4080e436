"""AvroSchema: what parses, the canonical text Avro Java's Schema.toString() prints, normalized and resolved
forms, names and references."""

from __future__ import annotations

import json

import pytest

from spark_kafkalog.schemas import InvalidSchemaError, ParsedSchema, SchemaReference, parse_schema
from spark_kafkalog.schemas.avro import AvroSchema, parse


def avro(text: str, references=(), resolved=None) -> AvroSchema:
    return parse(text, tuple(references), dict(resolved or {}))


# (given, canonical as Avro Java prints it)
CANONICAL = [
    ('"string"', '"string"'),
    ('  "int" ', '"int"'),
    ('{"type": "long"}', '"long"'),
    ('{"type": "string", "doc": "dropped: primitives keep no doc"}', '"string"'),
    ('{"logicalType": "date", "type": "int"}', '{"type":"int","logicalType":"date"}'),
    (
        '{"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}',
        '{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}',
    ),
    ('["null", {"type": "string"}]', '["null","string"]'),
    ('{"type": "array", "items": {"type": "int"}}', '{"type":"array","items":"int"}'),
    ('{"values": "long", "type": "map", "x": 1}', '{"type":"map","values":"long","x":1}'),
    # attribute order: type, name, namespace, doc, fields, props, aliases
    (
        '{"fields": [], "aliases": ["Old"], "doc": "d", "custom": [1], "namespace": "a.b", "name": "R", "type": "record"}',
        '{"type":"record","name":"R","namespace":"a.b","doc":"d","fields":[],"custom":[1],"aliases":["Old"]}',
    ),
    # a dotted name carries the namespace; field attributes: name, type, doc, default, order, aliases, props
    (
        '{"type": "record", "name": "a.R", "fields": [{"p": true, "aliases": ["g"], "order": "descending",'
        ' "default": 1, "doc": "fd", "type": "int", "name": "f"}, {"name": "h", "type": "int", "order": "ascending"}]}',
        '{"type":"record","name":"R","namespace":"a","fields":[{"name":"f","type":"int","doc":"fd","default":1,'
        '"order":"descending","aliases":["g"],"p":true},{"name":"h","type":"int"}]}',
    ),
    # nested named types inherit the namespace; the second use is a reference by short name
    (
        '{"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "e", "type": {"type": "enum",'
        ' "name": "E", "symbols": ["A", "B"], "default": "A", "doc": "ed"}}, {"name": "e2", "type": "n.E"},'
        ' {"name": "f", "type": {"type": "fixed", "size": 2, "name": "F", "namespace": "other"}}, {"name": "f2", "type": "other.F"}]}',
        '{"type":"record","name":"R","namespace":"n","fields":[{"name":"e","type":{"type":"enum","name":"E",'
        '"doc":"ed","symbols":["A","B"],"default":"A"}},{"name":"e2","type":"E"},{"name":"f","type":{"type":"fixed",'
        '"name":"F","namespace":"other","size":2}},{"name":"f2","type":"other.F"}]}',
    ),
    # leaving a namespace prints "namespace": ""
    (
        '{"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "s", "type": {"type": "record",'
        ' "name": "S", "namespace": "", "fields": []}}]}',
        '{"type":"record","name":"R","namespace":"n","fields":[{"name":"s","type":{"type":"record","name":"S",'
        '"namespace":"","fields":[]}}]}',
    ),
    # "namespace": null inherits the enclosing namespace, as in Avro Java
    (
        '{"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "s", "type": {"type": "record",'
        ' "name": "S", "namespace": null, "fields": []}}, {"name": "s2", "type": "n.S"}]}',
        '{"type":"record","name":"R","namespace":"n","fields":[{"name":"s","type":{"type":"record","name":"S",'
        '"fields":[]}},{"name":"s2","type":"S"}]}',
    ),
    # a field's primitive with a logical type stays an object
    (
        '{"type": "record", "name": "T", "fields": [{"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]}',
        '{"type":"record","name":"T","fields":[{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}',
    ),
    (
        '{"type": "record", "name": "U", "fields": [{"name": "v", "type": "string", "default": "é/ü"}]}',
        '{"type":"record","name":"U","fields":[{"name":"v","type":"string","default":"é/ü"}]}',
    ),
]


@pytest.mark.parametrize(("given", "canonical"), CANONICAL)
def test_canonical_is_avro_javas_compact_tostring(given, canonical):
    schema = avro(given)
    assert schema.canonical == canonical
    assert avro(schema.canonical).canonical == canonical  # a fixed point


def test_schemas_written_differently_but_alike_are_equal():
    a = avro('{"type":"record","name":"x.R","fields":[{"name":"f","type":{"type":"string"}}]}')
    b = avro('{"namespace": "x", "name": "R", "type": "record", "fields": [{"type": "string", "name": "f"}]}')
    assert a == b and hash(a) == hash(b)
    assert a != avro('{"type":"record","name":"x.R","fields":[{"name":"f","type":"bytes"}]}')


INVALID = [
    ("not json", "not JSON"),
    ('{"type": "strin"}', "strin"),
    ('{"type": "record", "fields": []}', "needs a name"),
    ('{"type": "record", "name": "R"}', "list of fields"),
    (
        '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]}',
        "duplicate field a",
    ),
    ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "Missing"}]}', "Missing"),
    ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "x"}]}', "Default value"),
    ('{"type": "record", "name": "1R", "fields": []}', "illegal record name"),
    ('{"type": "enum", "name": "E", "symbols": ["A", "A"]}', "duplicate enum symbol"),
    ('{"type": "enum", "name": "E", "symbols": ["A-B"]}', "illegal enum symbol"),
    ('{"type": "fixed", "name": "F", "size": "2"}', "size"),
    ('["int", ["string"]]', "union"),
    ('["int", "string", {"type": "int"}]', "duplicate in union: int"),
    ('["null", {"type": "array", "items": "int"}, {"type": "array", "items": "long"}]', "duplicate in union: array"),
    ('{"type": "record", "name": "n.R", "fields": [{"name": "u", "type": ["R", "n.R"]}]}', "duplicate in union: n.R"),
    (
        '{"type": "record", "name": "R", "fields": [{"name": "a", "type": {"type": "enum", "name": "R", "symbols": ["A"]}}]}',
        "redefine",
    ),
]


@pytest.mark.parametrize(("text", "reason"), INVALID)
def test_invalid_schemas_raise_invalid_schema_error_naming_the_problem(text, reason):
    with pytest.raises(InvalidSchemaError, match="Invalid Avro schema") as e:
        avro(text)
    assert reason in str(e.value)


def test_name_is_a_records_full_name_only():
    assert avro('{"type":"record","name":"R","namespace":"a.b","fields":[]}').name == "a.b.R"
    assert avro('{"type":"enum","name":"E","symbols":["A"]}').name is None
    assert avro('"string"').name is None


REF = '{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"},{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["HOME","WORK"]}}]}'
MAIN = '{"type":"record","name":"Customer","namespace":"com.acme","fields":[{"name":"home","type":"Address"},{"name":"work","type":["null","com.acme.Address"]},{"name":"k","type":"Kind"}]}'


def test_references_make_named_types_visible_and_stay_references_in_canonical():
    address = avro(REF)
    customer = avro(MAIN, [SchemaReference("com.acme.Address", "address", 1)], {"com.acme.Address": address})
    assert customer.canonical == (
        '{"type":"record","name":"Customer","namespace":"com.acme","fields":[{"name":"home","type":"Address"},'
        '{"name":"work","type":["null","Address"]},{"name":"k","type":"Kind"}]}'
    )
    assert customer.references == (SchemaReference("com.acme.Address", "address", 1),)
    assert set(customer.named_types) == {"com.acme.Address", "com.acme.Kind", "com.acme.Customer"}
    assert customer.defined_names == ["com.acme.Customer"]


def test_resolved_format_inlines_the_referenced_types_where_first_used():
    address = avro(REF)
    customer = avro(MAIN, [SchemaReference("com.acme.Address", "address", 1)], {"com.acme.Address": address})
    resolved = customer.formatted("resolved")
    assert resolved == (
        '{"type":"record","name":"Customer","namespace":"com.acme","fields":[{"name":"home","type":'
        '{"type":"record","name":"Address","fields":[{"name":"city","type":"string"},{"name":"kind","type":'
        '{"type":"enum","name":"Kind","symbols":["HOME","WORK"]}}]}},{"name":"work","type":["null","Address"]},'
        '{"name":"k","type":"Kind"}]}'
    )
    assert avro(resolved).canonical == resolved  # stands alone
    assert customer.formatted(None) == customer.formatted("serialized") == customer.canonical


def test_a_referenced_type_may_not_be_redefined():
    address = avro(REF)
    with pytest.raises(InvalidSchemaError, match="redefine: com.acme.Address"):
        avro(
            '{"type":"record","name":"com.acme.Address","fields":[]}',
            [SchemaReference("com.acme.Address", "address", 1)],
            {"com.acme.Address": address},
        )


def test_a_reference_that_is_missing_or_not_avro_is_refused():
    with pytest.raises(InvalidSchemaError, match="unresolved schema references: com.acme.Address"):
        parse_schema("AVRO", MAIN, [SchemaReference("com.acme.Address", "address", 1)], {})
    with pytest.raises(InvalidSchemaError, match="Address"):
        avro(MAIN)  # without the reference the name is unknown


def test_normalized_uses_full_names_sorted_aliases_and_props():
    schema = avro(
        '{"type":"record","name":"R","namespace":"n","zz":1,"aa":2,"aliases":["Z","b.B"],"fields":['
        '{"name":"e","type":{"type":"enum","name":"E","symbols":["A"]},"aliases":["y","x"],"q":1,"p":2},'
        '{"name":"e2","type":"E"}]}'
    )
    normalized = schema.normalized()
    assert normalized.canonical == (
        '{"type":"record","name":"n.R","fields":[{"name":"e","type":{"type":"enum","name":"n.E","symbols":["A"]},'
        '"aliases":["x","y"],"p":2,"q":1},{"name":"e2","type":"n.E"}],"aa":2,"zz":1,"aliases":["b.B","n.Z"]}'
    )
    assert normalized.normalized() is normalized
    # two spellings of one schema normalize alike
    other = avro(
        '{"type":"record","name":"n.R","aa":2,"zz":1,"aliases":["n.Z","b.B"],"fields":['
        '{"name":"e","type":{"type":"enum","name":"n.E","symbols":["A"]},"aliases":["x","y"],"p":2,"q":1},'
        '{"name":"e2","type":"n.E"}]}'
    )
    assert other.normalized() == normalized
    assert other != schema


def test_schema_json_and_fastavro_schema_are_exposed():
    schema = avro('{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int"}]}')
    assert schema.schema_json == json.loads(
        '{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"int"}]}'
    )
    assert schema.fastavro_schema["name"] == "n.R"
    assert parse_schema(None, schema.canonical) == schema


def test_a_reference_to_a_schema_of_another_type_is_refused():
    class JsonLike(ParsedSchema):
        schema_type = "JSON"
        canonical = "{}"
        references = ()
        name = None

        def normalized(self):
            return self

        def is_backward_compatible(self, previous):
            return []

    with pytest.raises(InvalidSchemaError, match="Avro reference 'com.acme.Address' \\(address\\) is a JSON schema"):
        avro(MAIN, [SchemaReference("com.acme.Address", "address", 1)], {"com.acme.Address": JsonLike()})
