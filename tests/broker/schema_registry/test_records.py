"""The ``_schemas`` records in Confluent's JSON formats: exact key bytes, values, tolerant decoding."""

from __future__ import annotations

import json

import pytest

from broker.schema_registry.records import (
    ClearSubjectKey,
    ClearSubjectValue,
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    ModeKey,
    ModeValue,
    NoopKey,
    SchemaKey,
    SchemaValue,
    decode_key,
    decode_record,
    decode_value,
    encode_key,
    encode_value,
)
from spark_kafkalog.schemas import SchemaReference

KEYS = [
    (SchemaKey("orders-value", 3), b'{"keytype":"SCHEMA","subject":"orders-value","version":3,"magic":1}'),
    (ConfigKey("s"), b'{"keytype":"CONFIG","subject":"s","magic":0}'),
    (ConfigKey(None), b'{"keytype":"CONFIG","magic":0}'),
    (ModeKey("s"), b'{"keytype":"MODE","subject":"s","magic":0}'),
    (ModeKey(None), b'{"keytype":"MODE","magic":0}'),
    (DeleteSubjectKey("s"), b'{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}'),
    (ClearSubjectKey("s"), b'{"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}'),
    (NoopKey(), b'{"keytype":"NOOP","magic":0}'),
]


@pytest.mark.parametrize(("key", "data"), KEYS)
def test_keys_are_confluents_bytes_and_decode_back(key, data):
    assert encode_key(key) == data
    assert decode_key(data) == key


def test_a_null_subject_in_a_legacy_config_key_is_the_global_config():
    assert decode_key(b'{"keytype":"CONFIG","subject":null,"magic":0}') == ConfigKey(None)


@pytest.mark.parametrize(
    "data",
    [b"not json", b"[1]", b'{"keytype":"CONTEXT","tenant":"t","context":"c","magic":0}', b'{"keytype":"SCHEMA"}'],
)
def test_keys_this_registry_does_not_know_decode_to_none(data):
    assert decode_key(data) is None
    assert decode_record(data, b"{}") is None


REF = SchemaReference("com.acme.Other", "other-value", 2)
VALUES = [
    (
        SchemaKey("s", 1),
        SchemaValue("s", 1, 7, '"string"'),
        {"subject": "s", "version": 1, "id": 7, "schema": '"string"', "deleted": False},
    ),
    (
        SchemaKey("s", 2),
        SchemaValue("s", 2, 8, "{}", "JSON", (REF,), True),
        {
            "subject": "s",
            "version": 2,
            "id": 8,
            "schemaType": "JSON",
            "references": [{"name": "com.acme.Other", "subject": "other-value", "version": 2}],
            "schema": "{}",
            "deleted": True,
        },
    ),
    (ConfigKey(None), ConfigValue(None, "FULL"), {"compatibilityLevel": "FULL"}),
    (
        ConfigKey("s"),
        ConfigValue("s", "NONE", True),
        {"subject": "s", "compatibilityLevel": "NONE", "normalize": True},
    ),
    (ModeKey("s"), ModeValue("s", "READONLY"), {"subject": "s", "mode": "READONLY"}),
    (DeleteSubjectKey("s"), DeleteSubjectValue("s", 4), {"subject": "s", "version": 4}),
    (ClearSubjectKey("s"), ClearSubjectValue("s"), {"subject": "s"}),
]


@pytest.mark.parametrize(("key", "value", "body"), VALUES)
def test_values_are_confluents_json_in_field_order_and_decode_back(key, value, body):
    data = encode_value(value)
    assert data is not None
    assert list(json.loads(data).items()) == list(body.items())
    assert decode_value(key, data) == value


def test_a_tombstone_is_none_both_ways():
    assert encode_value(None) is None
    assert decode_value(SchemaKey("s", 1), None) is None
    assert decode_record(encode_key(SchemaKey("s", 1)), None) == (SchemaKey("s", 1), None)


def test_confluent_values_with_extra_fields_decode():
    data = b'{"subject":"s","version":1,"id":3,"schemaType":"AVRO","schema":"\\"int\\"","deleted":false,"md5":"x"}'
    assert decode_value(SchemaKey("s", 1), data) == SchemaValue("s", 1, 3, '"int"')


@pytest.mark.parametrize(
    "data",
    [
        b'{"subject":"s","version":1,"schema":"x"}',
        b'{"id":"1","schema":"x"}',
        b"[]",
        b'{"id":1,"schema":"x","references":[{"name":"n"}]}',
    ],
)
def test_malformed_schema_values_are_skipped_records(data):
    assert decode_record(encode_key(SchemaKey("s", 1)), data) is None
