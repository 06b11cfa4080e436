"""JsonSchema: parsing per draft, references, canonical and normalized forms, validation."""

from __future__ import annotations

import json

import pytest

from spark_kafkalog.schemas import InvalidSchemaError, SchemaReference, parse_schema
from spark_kafkalog.schemas.json_schema import JsonSchema


def parse(text: str, refs: dict[str, JsonSchema] | None = None) -> JsonSchema:
    refs = refs or {}
    references = [SchemaReference(name, f"{name}-subject", 1) for name in refs]
    schema = parse_schema("JSON", text, references, refs)
    assert isinstance(schema, JsonSchema)
    return schema


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "object", "properties": {"a": {"type": "string"}}}',
        "true",
        "false",
        "{}",
        '{"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{"type": "string"}]}',
        '{"$schema": "https://json-schema.org/draft/2019-09/schema", "$defs": {"x": {"type": "integer"}}}',
        '{"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "exclusiveMinimum": true, "minimum": 0}',
    ],
)
def test_valid_schemas_of_each_draft_parse(text):
    schema = parse(text)
    assert schema.document == json.loads(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "must be JSON"),
        ("[1, 2]", "an object or a boolean"),
        ('"string"', "an object or a boolean"),
        ('{"type": "strng"}', "#/type"),
        ('{"type": "object", "properties": {"a": {"minLength": -1}}}', "#/properties/a/minLength"),
        ('{"$schema": "http://json-schema.org/draft-07/schema#", "exclusiveMinimum": true}', "#/exclusiveMinimum"),
        ('{"$schema": "https://example.com/my-draft"}', "unknown JSON Schema draft"),
        ('{"$schema": 7}', "$schema must be a string"),
    ],
)
def test_invalid_schemas_raise_naming_the_problem(text, message):
    with pytest.raises(InvalidSchemaError, match=None) as raised:
        parse(text)
    assert message in str(raised.value)


def test_canonical_is_compact_json_in_document_order_keeping_non_ascii():
    schema = parse('{ "type" : "object",\n  "title": "Prénom", "properties": {"b": {"type": "number"}, "a": {}} }')
    assert schema.canonical == '{"type":"object","title":"Prénom","properties":{"b":{"type":"number"},"a":{}}}'
    assert schema.name == "Prénom"
    assert parse('{"type": "string"}').name is None


def test_normalized_sorts_keys_recursively_and_references():
    ref = parse('{"type": "string"}')
    text = '{"type": "object", "properties": {"b": {"$ref": "b.json"}, "a": {"$ref": "a.json"}}}'
    refs = (SchemaReference("b.json", "b", 2), SchemaReference("a.json", "a", 1), SchemaReference("b.json", "b", 2))
    schema = parse_schema("JSON", text, refs, {"a.json": ref, "b.json": ref})
    normalized = schema.normalized()
    assert normalized.canonical == ('{"properties":{"a":{"$ref":"a.json"},"b":{"$ref":"b.json"}},"type":"object"}')
    assert normalized.references == (SchemaReference("a.json", "a", 1), SchemaReference("b.json", "b", 2))
    assert normalized != schema
    assert normalized.normalized() == normalized


def test_equality_is_by_canonical_text_and_references():
    assert parse('{"type":"string"}') == parse('{ "type": "string" }')
    assert hash(parse('{"type":"string"}')) == hash(parse('{ "type": "string" }'))
    assert parse('{"type":"string"}') != parse('{"type":"integer"}')


def test_references_are_followed_by_validation():
    address = parse(
        '{"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["zip"]}'
    )
    person = parse(
        '{"type": "object", "properties": {"home": {"$ref": "address.json"}, "age": {"$ref": "#/definitions/age"}},'
        ' "definitions": {"age": {"type": "integer", "minimum": 0}}}',
        {"address.json": address},
    )
    person.validate({"home": {"zip": "12345"}, "age": 3})
    with pytest.raises(ValueError, match=r"\$\.home\.zip: 'abc' does not match"):
        person.validate({"home": {"zip": "abc"}})
    with pytest.raises(ValueError, match=r"\$\.age: -1 is less than the minimum of 0"):
        person.validate({"age": -1})


def test_references_of_references_are_resolved():
    leaf = parse('{"type": "integer"}')
    middle = parse('{"type": "object", "properties": {"n": {"$ref": "leaf.json"}}}', {"leaf.json": leaf})
    top = parse('{"type": "array", "items": {"$ref": "middle.json"}}', {"middle.json": middle})
    top.validate([{"n": 1}])
    with pytest.raises(ValueError, match=r"\$\[0\]\.n"):
        top.validate([{"n": "x"}])


def test_references_resolve_against_the_documents_id():
    address = parse('{"type": "string"}')
    schema = parse(
        '{"$id": "https://example.com/schemas/person.json", "properties": {"a": {"$ref": "address.json"}}}',
        {"address.json": address},
    )
    schema.validate({"a": "x"})
    with pytest.raises(ValueError, match="is not of type 'string'"):
        schema.validate({"a": 1})


def test_a_reference_missing_or_of_another_type_is_refused():
    with pytest.raises(InvalidSchemaError, match="unresolved schema references: other.json"):
        parse_schema("JSON", '{"$ref": "other.json"}', [SchemaReference("other.json", "o", 1)], {})

    avro = parse_schema("AVRO", '"string"')
    with pytest.raises(InvalidSchemaError, match="is a AVRO schema"):
        parse_schema("JSON", '{"$ref": "other.json"}', [SchemaReference("other.json", "o", 1)], {"other.json": avro})


def test_boolean_schemas_validate_everything_or_nothing():
    parse("true").validate({"anything": [1]})
    with pytest.raises(ValueError, match="False schema does not allow"):
        parse("false").validate(1)


def test_formats_are_checked_by_validation():
    schema = parse('{"type": "string", "format": "date"}')
    schema.validate("2024-02-29")
    with pytest.raises(ValueError, match="is not a 'date'"):
        schema.validate("2024-02-30")
