"""confluent-kafka 2.16's own SchemaRegistryClient, unchanged, against kafkalog's registry: registration, reads by
id/subject/version, lookups, compatibility levels and checks, a compatible evolution and a refused one (Confluent's
error code 409), soft and hard deletes, modes, references, JSON Schema / Protobuf registrations, and the same
client's asyncio flavour (AsyncSchemaRegistryClient).

Every call here is a call a confluent-kafka user makes; each assertion is what Confluent's registry answers.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka.schema_registry import (
    AsyncSchemaRegistryClient,
    RegisteredSchema,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from google.protobuf import descriptor_pb2

pytestmark = pytest.mark.integration

USER_V1 = {
    "type": "record",
    "name": "User",
    "namespace": "conformance",
    "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
}
USER_V2 = {**USER_V1, "fields": [*USER_V1["fields"], {"name": "email", "type": "string", "default": ""}]}
USER_REQUIRED_EMAIL = {**USER_V1, "fields": [*USER_V1["fields"], {"name": "email", "type": "string"}]}
USER_AGE_STRING = {**USER_V2, "fields": [USER_V1["fields"][0], {"name": "age", "type": "string"}, USER_V2["fields"][2]]}
"""V2 with ``age`` an Avro string: cannot read V2's int ages (TYPE_MISMATCH), under any level but NONE."""


def avro(doc: dict, **renames: str) -> Schema:
    """The schema as a string; ``renames`` replace the record's name (ids are per schema, so tests keep theirs apart)."""
    return Schema(json.dumps({**doc, **renames}), "AVRO")


@pytest.fixture
def fresh(registry_url: str) -> Iterator[Callable[[], SchemaRegistryClient]]:
    """A new client with empty caches, to see what the registry answers rather than what a cache kept."""
    made: list[SchemaRegistryClient] = []

    def make() -> SchemaRegistryClient:
        made.append(SchemaRegistryClient({"url": registry_url, "max.retries": 0}))
        return made[-1]

    yield make
    for c in made:
        c.close()


def sr_error(call: Callable[[], object]) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as info:
        call()
    return info.value


def test_register_then_read_it_back_every_way(sr, fresh, new_subject) -> None:
    subject = new_subject("user-value")
    schema = avro(USER_V1, name=f"User_{subject[-8:]}")
    schema_id = sr.register_schema(subject, schema)
    assert isinstance(schema_id, int) and schema_id > 0
    assert sr.register_schema(subject, schema) == schema_id

    reader = fresh()
    got = reader.get_schema(schema_id)
    assert got.schema_type == "AVRO"
    assert got.schema_str is not None and schema.schema_str is not None
    assert json.loads(got.schema_str) == json.loads(schema.schema_str)
    assert got.references == []

    looked_up = reader.lookup_schema(subject, schema)
    assert (looked_up.subject, looked_up.version, looked_up.schema_id) == (subject, 1, schema_id)

    assert reader.get_versions(subject) == [1]
    latest = reader.get_latest_version(subject)
    assert isinstance(latest, RegisteredSchema)
    assert (latest.subject, latest.version, latest.schema_id) == (subject, 1, schema_id)
    assert json.loads(latest.schema.schema_str or "null") == json.loads(schema.schema_str)
    v1 = reader.get_version(subject, 1)
    assert (v1.version, v1.schema_id) == (1, schema_id)

    assert subject in reader.get_subjects()
    assert reader.get_subjects(subject_prefix=subject) == [subject]
    assert reader.get_subjects_by_schema_id(schema_id) == [subject]
    pairs = reader.get_schema_versions(schema_id)
    assert [(p.subject, p.version) for p in pairs] == [(subject, 1)]
    assert set(reader.get_schema_types()) == {"AVRO", "JSON", "PROTOBUF"}


def test_the_same_schema_under_two_subjects_has_one_id(sr, new_subject) -> None:
    a, b = new_subject("a"), new_subject("b")
    schema = avro(USER_V1, name=f"User_{a[-8:]}")
    assert sr.register_schema(a, schema) == sr.register_schema(b, schema)
    assert sorted(sr.get_subjects_by_schema_id(sr.register_schema(a, schema))) == sorted([a, b])


def test_compatibility_levels_set_get_and_test(sr, fresh, new_subject) -> None:
    subject = new_subject("compat")
    name = f"User_{subject[-8:]}"
    sr.register_schema(subject, avro(USER_V1, name=name))

    assert sr.get_compatibility() == "BACKWARD"  # the global default
    assert sr_error(lambda: fresh().get_compatibility(subject)).error_code == 40408

    answer = sr.set_compatibility(subject, "full")
    assert answer == {"compatibility": "FULL"}
    assert fresh().get_compatibility(subject) == "FULL"
    config = fresh().get_config(subject)
    assert config.compatibility_level is not None and config.compatibility_level.value == "FULL"

    assert sr.test_compatibility(subject, avro(USER_V2, name=name)) is True
    assert sr.test_compatibility(subject, avro(USER_REQUIRED_EMAIL, name=name)) is False
    assert sr.test_compatibility(subject, avro(USER_V2, name=name), version=1, verbose=True) is True
    assert sr.test_compatibility_all_versions(subject, avro(USER_V2, name=name)) is True

    deleted = sr.delete_config(subject)
    assert deleted.compatibility_level is not None and deleted.compatibility_level.value == "FULL"
    assert sr_error(lambda: fresh().get_compatibility(subject)).error_code == 40408

    error = sr_error(lambda: sr.set_compatibility(subject, "sideways"))
    assert (error.http_status_code, error.error_code) == (422, 42203)


def test_compatible_evolution_is_registered_and_an_incompatible_change_refused_with_409(sr, new_subject) -> None:
    subject = new_subject("evolve")
    name = f"User_{subject[-8:]}"
    id1 = sr.register_schema(subject, avro(USER_V1, name=name))
    id2 = sr.register_schema(subject, avro(USER_V2, name=name))
    assert id2 != id1
    assert sr.get_versions(subject) == [1, 2]
    assert sr.get_latest_version(subject).schema_id == id2

    # BACKWARD checks the latest version only: V2 has email, so a required email reads it; age as a string does not.
    error = sr_error(lambda: sr.register_schema(subject, avro(USER_AGE_STRING, name=name)))
    assert (error.http_status_code, error.error_code) == (409, 409)
    assert subject in error.error_message
    assert sr.get_versions(subject) == [1, 2]

    sr.set_compatibility(subject, "NONE")
    assert sr.register_schema(subject, avro(USER_AGE_STRING, name=name)) not in (id1, id2)
    assert sr.get_versions(subject) == [1, 2, 3]


def test_soft_then_hard_delete_of_versions_and_subjects(sr, fresh, new_subject) -> None:
    subject = new_subject("deletes")
    name = f"User_{subject[-8:]}"
    id1 = sr.register_schema(subject, avro(USER_V1, name=name))
    sr.register_schema(subject, avro(USER_V2, name=name))

    error = sr_error(lambda: sr.delete_version(subject, 1, permanent=True))
    assert (error.http_status_code, error.error_code) == (404, 40407)
    assert sr.delete_version(subject, 1) == 1
    assert sr_error(lambda: sr.delete_version(subject, 1)).error_code == 40406
    assert fresh().get_versions(subject) == [2]
    assert fresh().get_version(subject, 1, deleted=True).schema_id == id1
    assert fresh().get_schema(id1).schema_type == "AVRO"  # a soft-deleted version's id still decodes
    assert sr.delete_version(subject, 1, permanent=True) == 1

    error = sr_error(lambda: sr.delete_subject(subject, permanent=True))
    assert (error.http_status_code, error.error_code) == (404, 40405)
    assert sr.delete_subject(subject) == [2]
    assert subject not in fresh().get_subjects()
    assert subject in fresh().get_subjects(deleted=True)
    # (confluent-kafka 2.16's get_subjects(deleted_only=True) sends ``deleted_only``; Confluent's registry reads
    # ``deletedOnly`` and ignores it, as kafkalog's does; test_confluent_rest_examples covers deletedOnly.)
    assert sr_error(lambda: sr.delete_subject(subject)).error_code == 40404
    assert sr_error(lambda: fresh().get_versions(subject)).error_code == 40401

    assert sr.delete_subject(subject, permanent=True) == [2]
    assert subject not in fresh().get_subjects(deleted=True)
    error = sr_error(lambda: fresh().get_schema(id1))
    assert (error.http_status_code, error.error_code) == (404, 40403)


def test_modes_global_and_per_subject(sr, fresh, new_subject) -> None:
    subject = new_subject("modes")
    name = f"User_{subject[-8:]}"
    sr.register_schema(subject, avro(USER_V1, name=name))
    assert sr.get_global_mode() == "READWRITE"
    assert sr_error(lambda: sr.get_mode(subject)).error_code == 40409

    assert sr.update_mode(subject, "READONLY") == "READONLY"
    assert fresh().get_mode(subject) == "READONLY"
    error = sr_error(lambda: fresh().register_schema(subject, avro(USER_V2, name=name)))
    assert (error.http_status_code, error.error_code) == (422, 42205)

    error = sr_error(lambda: sr.update_mode(subject, "SOMETIMES"))
    assert (error.http_status_code, error.error_code) == (422, 42204)
    assert sr.delete_mode(subject) == "READONLY"
    assert sr_error(lambda: sr.get_mode(subject)).error_code == 40409
    assert fresh().register_schema(subject, avro(USER_V2, name=name)) > 0


def test_errors_carry_confluents_status_and_code(fresh, new_subject) -> None:
    c = fresh()
    cases = [
        (lambda: c.get_schema(987654321), 404, 40403),
        (lambda: c.get_version(new_subject("nope"), 1), 404, 40401),
        (lambda: c.get_versions(new_subject("nope")), 404, 40401),
        (lambda: c.register_schema(new_subject("bad"), Schema('{"type": "nosuchtype"}', "AVRO")), 422, 42201),
        (lambda: c.lookup_schema(new_subject("nope"), Schema('"string"', "AVRO")), 404, 40401),
    ]
    for call, status, code in cases:
        error = sr_error(call)
        assert (error.http_status_code, error.error_code) == (status, code), error
        assert error.error_message


def test_avro_references_and_referenced_by(sr, fresh, new_subject) -> None:
    base_subject, user_subject = new_subject("address"), new_subject("user-ref")
    address = f"conformance.Address_{base_subject[-8:]}"
    address_schema = {
        "type": "record",
        "name": address.split(".")[1],
        "namespace": "conformance",
        "fields": [{"name": "city", "type": "string"}],
    }
    address_id = sr.register_schema(base_subject, avro(address_schema))
    user = Schema(
        json.dumps(
            {
                "type": "record",
                "name": f"UserWithAddress_{base_subject[-8:]}",
                "namespace": "conformance",
                "fields": [{"name": "address", "type": address}],
            }
        ),
        "AVRO",
        [SchemaReference(address, base_subject, 1)],
    )
    user_id = sr.register_schema(user_subject, user)
    assert user_id != address_id

    got = fresh().get_schema(user_id)
    assert [(r.name, r.subject, r.version) for r in got.references] == [(address, base_subject, 1)]
    latest = fresh().get_latest_version(user_subject)
    assert [(r.name, r.subject, r.version) for r in latest.schema.references] == [(address, base_subject, 1)]
    assert sr.get_referenced_by(base_subject, 1) == [user_id]
    error = sr_error(lambda: sr.delete_version(base_subject, 1))
    assert (error.http_status_code, error.error_code) == (422, 42206)


def test_json_schema_registration(sr, fresh, new_subject) -> None:
    subject = new_subject("json")
    doc = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": f"Order_{subject[-8:]}",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
        "required": ["id"],
    }
    schema_id = sr.register_schema(subject, Schema(json.dumps(doc), "JSON"))
    got = fresh().get_schema(schema_id)
    assert got.schema_type == "JSON"
    assert json.loads(got.schema_str) == doc
    assert fresh().lookup_schema(subject, Schema(json.dumps(doc), "JSON")).schema_id == schema_id
    # BACKWARD for JSON Schema: a new required property without a default cannot read the old data.
    stricter = {**doc, "required": ["id", "item"]}
    assert sr.test_compatibility(subject, Schema(json.dumps(stricter), "JSON")) is False
    error = sr_error(lambda: sr.register_schema(subject, Schema('{"type": 12}', "JSON")))
    assert (error.http_status_code, error.error_code) == (422, 42201)


PROTO = """syntax = "proto3";
package conformance;

message Order {
  int64 id = 1;
  string item = 2;
  repeated string tags = 3;
}
"""


def test_protobuf_registration_text_and_serialized_format(sr, fresh, new_subject) -> None:
    subject = new_subject("proto")
    proto = PROTO.replace("Order", f"Order{subject[-8:]}")
    schema_id = sr.register_schema(subject, Schema(proto, "PROTOBUF"))
    got = fresh().get_schema(schema_id)
    assert got.schema_type == "PROTOBUF"
    assert f"message Order{subject[-8:]}" in got.schema_str
    assert fresh().lookup_schema(subject, Schema(proto, "PROTOBUF")).schema_id == schema_id

    serialized = fresh().get_schema(schema_id, fmt="serialized")
    fdp = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized.schema_str))
    assert fdp.package == "conformance"
    assert [m.name for m in fdp.message_type] == [f"Order{subject[-8:]}"]
    assert [(f.name, f.number) for f in fdp.message_type[0].field] == [("id", 1), ("item", 2), ("tags", 3)]

    # BACKWARD for Protobuf: changing a field's type is incompatible; adding a field is not.
    added = proto.replace("repeated string tags = 3;", "repeated string tags = 3;\n  double price = 4;")
    assert sr.test_compatibility(subject, Schema(added, "PROTOBUF")) is True
    retyped = proto.replace("string item = 2;", "int32 item = 2;")
    assert sr.test_compatibility(subject, Schema(retyped, "PROTOBUF")) is False
    error = sr_error(lambda: sr.register_schema(subject, Schema("message {", "PROTOBUF")))
    assert (error.http_status_code, error.error_code) == (422, 42201)


def test_confluents_asyncio_client_too(registry_url, new_subject) -> None:
    subject = new_subject("aio")
    schema = avro(USER_V1, name=f"User_{subject[-8:]}")

    async def run() -> tuple[int, int | None, list[int]]:
        client = AsyncSchemaRegistryClient({"url": registry_url, "max.retries": 0})
        try:
            schema_id = await client.register_schema(subject, schema)
            latest = await client.get_latest_version(subject)
            return schema_id, latest.schema_id, await client.get_versions(subject)
        finally:
            await client.aclose()

    schema_id, latest_id, versions = asyncio.run(run())
    assert schema_id == latest_id and versions == [1]
