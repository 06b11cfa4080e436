"""``SchemaRegistry`` on ``MemorySchemaStore``: Confluent's semantics and every error code.

Uses the field-list schema type of ``fake_schemas`` (compatibility: a new field needs a default), so the
tests state the registry's behaviour independently of the real types; one test runs real Avro."""

from __future__ import annotations

import asyncio
import json

import pytest

from broker.schema_registry.errors import RegistryError
from broker.schema_registry.records import SchemaKey, SchemaValue, encode_key, encode_value
from broker.schema_registry.registry import SchemaRegistry
from broker.schema_registry.registry_base import parse_version
from broker.schema_registry.store import MemoryLog, MemorySchemaStore, StoreError
from spark_kafkalog.schemas import SchemaReference
from tests.broker.schema_registry.fake_schemas import parse_fields


def run(coro):
    return asyncio.run(coro)


def make(log=None, **kwargs):
    registry = SchemaRegistry(MemorySchemaStore(log), parser=parse_fields, **kwargs)
    run(registry.start())
    return registry


def fields(*names):
    return json.dumps(list(names))


def register(registry, subject, text, **kwargs):
    refs = kwargs.pop("references", [])
    return run(registry.register(subject, None, text, refs, **kwargs))


def code_of(coro):
    with pytest.raises(RegistryError) as info:
        run(coro)
    return info.value.error_code


@pytest.mark.parametrize(
    ("text", "expected"),
    [("latest", None), ("-1", None), (-1, None), ("1", 1), (7, 7), (2**31 - 1, 2**31 - 1)],
)
def test_parse_version_accepts(text, expected):
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["0", 0, "x", "1.5", 2**31, -2, True])
def test_parse_version_refuses_with_42202(text):
    with pytest.raises(RegistryError) as info:
        parse_version(text)
    assert info.value.error_code == 42202


def test_register_assigns_ids_and_versions():
    r = make()
    a = register(r, "s", fields("a"))
    assert (a.subject, a.version, a.id) == ("s", 1, 1)
    b = register(r, "s", fields("a", "b="))
    assert (b.version, b.id) == (2, 2)
    assert run(r.versions("s")) == [1, 2]
    assert run(r.get_version("s", "latest")).id == 2


def test_registering_again_answers_the_existing_version():
    r = make()
    register(r, "s", fields("a"))
    register(r, "s", fields("a", "b="))
    again = register(r, "s", fields("a"))
    assert (again.version, again.id) == (1, 1)
    assert run(r.versions("s")) == [1, 2]


def test_the_same_schema_in_another_subject_gets_the_same_id():
    r = make()
    register(r, "s", fields("a"))
    t = register(r, "t", fields("a"))
    assert (t.subject, t.version, t.id) == ("t", 1, 1)
    assert run(r.subject_versions_by_id(1)) == [("s", 1), ("t", 1)]


def test_incompatible_registration_is_409_with_confluents_context_lines():
    r = make()
    register(r, "s", fields("a"))
    with pytest.raises(RegistryError) as info:
        register(r, "s", fields("a", "b"))
    assert (info.value.http_status, info.value.error_code) == (409, 409)
    assert "READER_FIELD_MISSING_DEFAULT_VALUE: b" in info.value.message
    assert "{oldSchemaVersion: 1}" in info.value.message
    assert "compatibility: 'BACKWARD'" in info.value.message


def test_test_compatibility_against_latest_a_version_and_the_level():
    r = make()
    register(r, "s", fields("a"))
    register(r, "s", fields("a", "b="))
    assert run(r.test_compatibility("s", "latest", None, fields("a", "b", "c="), [])) == []
    msgs = run(r.test_compatibility("s", 1, None, fields("a", "b", "c="), []))
    assert msgs[0] == "READER_FIELD_MISSING_DEFAULT_VALUE: b"
    assert msgs[-1] == "{validateFields: 'false', compatibility: 'BACKWARD'}"
    assert run(r.test_compatibility("new", "latest", None, fields("x"), [])) == []
    assert code_of(r.test_compatibility("new", 1, None, fields("x"), [])) == 40401
    assert code_of(r.test_compatibility("s", 9, None, fields("x"), [])) == 40402
    run(r.set_config("s", {"compatibility": "BACKWARD_TRANSITIVE"}))
    assert run(r.test_compatibility("s", None, None, fields("b", "c="), []))


def test_transitive_levels_check_every_live_version():
    r = make()
    register(r, "s", fields("a"))
    register(r, "s", fields("a", "b="))
    assert register(r, "s", fields("b", "c=")).version == 3  # BACKWARD: only against version 2
    run(r.set_config("s", {"compatibility": "BACKWARD_TRANSITIVE"}))
    assert code_of(r.register("s", None, fields("b", "c=", "d="), [])) == 409
    run(r.set_config("s", {"compatibility": "NONE"}))
    assert register(r, "s", fields("z")).version == 4


def test_invalid_schema_is_42201():
    r = make()
    assert code_of(r.register("s", None, "{not json", [])) == 42201
    assert code_of(r.register("s", "XML", "[]", [])) == 42201
    missing = [SchemaReference("n", "nowhere", 1)]
    assert code_of(r.register("s", None, fields("a"), missing)) == 42201


def test_references_resolve_and_block_deletes_with_42206():
    r = make()
    register(r, "base", fields("a"))
    ref = SchemaReference("base", "base", 1)
    user = register(r, "user", fields("u"), references=[ref])
    assert user.schema.references == (ref,)
    assert run(r.referenced_by("base", 1)) == [user.id]
    assert code_of(r.delete_version("base", 1)) == 42206
    assert code_of(r.delete_subject("base")) == 42206
    run(r.delete_subject("user"))
    assert run(r.referenced_by("base", 1)) == []
    assert code_of(r.delete_version("base", 1, permanent=True)) == 42206  # a soft-deleted referrer still counts
    run(r.delete_subject("user", permanent=True))
    assert run(r.delete_version("base", 1)) == 1


def test_soft_then_permanent_subject_delete():
    r = make()
    register(r, "s", fields("a"))
    register(r, "s", fields("a", "b="))
    assert code_of(r.delete_subject("s", permanent=True)) == 40405
    assert run(r.delete_subject("s")) == [1, 2]
    assert code_of(r.delete_subject("s")) == 40404
    assert run(r.subjects()) == []
    assert run(r.subjects(deleted=True)) == ["s"]
    assert run(r.subjects(deleted_only=True)) == ["s"]
    assert code_of(r.versions("s")) == 40401
    assert run(r.versions("s", deleted=True)) == [1, 2]
    assert code_of(r.get_version("s", 1)) == 40401
    assert code_of(r.get_version("s", "latest")) == 40401
    assert code_of(r.get_version("s", "latest", deleted=True)) == 40402  # no live latest; the subject exists
    assert run(r.get_version("s", 1, deleted=True)).deleted
    assert run(r.schema_by_id(1)).id == 1  # ids still answer for soft-deleted versions
    assert run(r.lookup("s", None, fields("a"), [], deleted=True)).version == 1
    assert code_of(r.lookup("s", None, fields("a"), [])) == 40401
    assert run(r.delete_subject("s", permanent=True)) == [1, 2]
    assert code_of(r.delete_subject("s")) == 40401
    assert code_of(r.schema_by_id(1)) == 40403


def test_versions_continue_after_soft_delete_and_restart_after_permanent_delete():
    r = make()
    register(r, "s", fields("a"))
    run(r.delete_subject("s"))
    again = register(r, "s", fields("a"))
    assert (again.version, again.id) == (2, 1)
    # re-registering the same id tombstoned the soft-deleted version 1, as Confluent does
    assert run(r.versions("s", deleted=True)) == [2]
    run(r.delete_subject("s"))
    run(r.delete_subject("s", permanent=True))
    fresh = register(r, "s", fields("q"))
    assert (fresh.version, fresh.id) == (1, 2)
    back = register(r, "t", fields("a"))  # a schema permanently deleted gets its old id back
    assert back.id == 1


def test_version_deletes_and_their_errors():
    r = make()
    register(r, "s", fields("a"))
    register(r, "s", fields("a", "b="))
    assert code_of(r.delete_version("nope", 1)) == 40401
    assert code_of(r.delete_version("s", 5)) == 40402
    assert code_of(r.delete_version("s", "x")) == 42202
    assert code_of(r.delete_version("s", 2, permanent=True)) == 40407
    assert run(r.delete_version("s", "latest")) == 2
    assert code_of(r.delete_version("s", 2)) == 40406
    assert run(r.get_version("s", "latest")).version == 1
    assert code_of(r.get_version("s", 2)) == 40402
    assert run(r.versions("s", deleted_only=True)) == [2]
    assert run(r.delete_version("s", 2, permanent=True)) == 2
    assert run(r.versions("s", deleted=True)) == [1]
    assert register(r, "s", fields("a", "c=")).version == 2


def test_lookup():
    r = make()
    register(r, "s", fields("b", "a"))
    assert run(r.lookup("s", None, fields("b", "a"), [])).version == 1
    assert code_of(r.lookup("s", None, fields("a", "b"), [])) == 40403
    assert run(r.lookup("s", None, fields("a", "b"), [], normalize=True)).version == 1
    assert code_of(r.lookup("t", None, fields("a"), [])) == 40401
    assert code_of(r.lookup("s", None, "nope", [])) == 42201
    assert code_of(r.lookup("t", None, "nope", [])) == 42201  # parsed before the subject is looked up, as Confluent


def test_normalize_registers_the_normalized_text():
    r = make()
    a = register(r, "s", fields("b", "a"), normalize=True)
    assert a.schema.canonical == '["a","b"]'
    run(r.set_config("t", {"normalize": True}))
    assert register(r, "t", fields("b", "a")).id == a.id


def test_reads_by_id_and_listing():
    r = make()
    register(r, "a-value", fields("x"))
    register(r, "a-value", fields("x", "y="))
    register(r, "b-value", fields("z"))
    assert code_of(r.schema_by_id(99)) == 40403
    assert code_of(r.subject_versions_by_id(99)) == 40403
    assert run(r.schema_by_id(3, subject="b-value")).subject == "b-value"
    assert [(s.subject, s.version) for s in run(r.schemas())] == [("a-value", 1), ("a-value", 2), ("b-value", 1)]
    assert [(s.subject, s.version) for s in run(r.schemas(latest_only=True))] == [("a-value", 2), ("b-value", 1)]
    assert [s.version for s in run(r.schemas(subject_prefix="a-", offset=1, limit=1))] == [2]
    assert run(r.subjects(prefix="b")) == ["b-value"]
    assert run(r.schema_types()) == ["AVRO", "JSON", "PROTOBUF"]
    assert code_of(r.get_version("a-value", "0")) == 42202


def test_config_get_set_delete_and_errors():
    r = make(default_compatibility="full")
    assert run(r.get_config()) == {"compatibilityLevel": "FULL"}
    assert code_of(r.get_config("s")) == 40408
    assert run(r.get_config("s", default_to_global=True)) == {"compatibilityLevel": "FULL"}
    assert run(r.set_config(None, {"compatibility": "none"})) == {"compatibility": "NONE"}
    assert run(r.set_config("s", {"compatibility": "FORWARD", "normalize": True})) == {
        "compatibility": "FORWARD",
        "normalize": True,
    }
    assert run(r.get_config("s")) == {"compatibilityLevel": "FORWARD", "normalize": True}
    assert code_of(r.set_config("s", {"compatibility": "SIDEWAYS"})) == 42203
    assert code_of(r.set_config("s", {})) == 42203
    assert run(r.delete_config("s")) == {"compatibilityLevel": "FORWARD", "normalize": True}
    assert code_of(r.delete_config("s")) == 40401
    assert run(r.delete_config(None)) == {"compatibilityLevel": "NONE"}
    assert run(r.get_config()) == {"compatibilityLevel": "FULL"}


def test_modes_and_their_errors():
    r = make()
    assert run(r.get_mode()) == "READWRITE"
    assert code_of(r.get_mode("s")) == 40409
    assert code_of(r.set_mode("s", "SIDEWAYS")) == 42204
    register(r, "s", fields("a"))
    assert run(r.set_mode("s", "readonly")) == "READONLY"
    assert run(r.get_mode("s")) == "READONLY"
    assert code_of(r.register("s", None, fields("a", "b="), [])) == 42205
    assert code_of(r.delete_subject("s")) == 42205
    assert code_of(r.delete_version("s", 1)) == 42205
    assert register(r, "t", fields("a")).id == 1  # other subjects stay writable
    assert run(r.delete_mode("s")) == "READONLY"
    assert code_of(r.delete_mode("s")) == 40401
    assert code_of(r.set_mode(None, "IMPORT")) == 42205  # schemas exist
    assert code_of(r.register("s", None, fields("q"), [], schema_id=50)) == 42205  # not in import mode
    assert run(r.set_mode(None, "IMPORT", force=True)) == "IMPORT"
    assert code_of(r.register("s", None, fields("q"), [])) == 42205  # import needs an id
    imported = register(r, "imp", fields("q"), schema_id=50, version=3)
    assert (imported.id, imported.version) == (50, 3)
    assert code_of(r.register("imp2", None, fields("other"), [], schema_id=50, version=1)) == 42205
    assert run(r.set_mode(None, "READWRITE")) == "READWRITE"
    assert register(r, "n", fields("new")).id == 51


def test_immutable_modes_refuse_changes():
    r = make(mode_mutability=False)
    assert code_of(r.set_mode(None, "READONLY")) == 42205


def test_two_registries_on_one_log_agree():
    log = MemoryLog()
    a, b = make(log), make(log)
    register(a, "s", fields("a"))
    got = register(b, "t", fields("b"))
    assert got.id == 2
    assert run(a.get_version("t", 1)).id == 2
    assert run(b.schema_by_id(1)).subject == "s"
    c = make(log)  # a restart replays the log
    assert [(s.subject, s.id) for s in run(c.schemas())] == [("s", 1), ("t", 2)]


def test_a_registry_losing_a_race_for_an_id_repairs_and_retries():
    log = MemoryLog()
    a = make(log)
    register(a, "s", fields("a"))
    # Another instance binds id 2 and version s/2 just before our append lands.
    rival = SchemaValue("s", 2, 2, fields("a", "r="))
    log.inject_before_next.append((encode_key(SchemaKey("s", 2)), encode_value(rival)))
    mine = register(a, "s", fields("a", "m="))
    assert (mine.version, mine.id) == (3, 3)
    assert run(a.get_version("s", 2)).schema.canonical == fields("a", "r=").replace(" ", "")
    # The repair re-appended the winner's record after ours for the same key, so compaction keeps it.
    last_for_key = [v for k, v in log.records if k == encode_key(SchemaKey("s", 2))][-1]
    assert last_for_key == encode_value(rival)
    # A fresh replay agrees.
    assert [(s.version, s.id) for s in run(make(log).schemas())] == [(1, 1), (2, 2), (3, 3)]


def test_a_loser_on_another_key_is_superseded_by_the_retry():
    log = MemoryLog()
    a = make(log)
    register(a, "s", fields("a"))
    # A rival takes id 2 for another subject: our record s/2 with id 2 is ignored on replay.
    rival = SchemaValue("t", 1, 2, fields("t"))
    log.inject_before_next.append((encode_key(SchemaKey("t", 1)), encode_value(rival)))
    mine = register(a, "s", fields("a", "m="))
    assert (mine.version, mine.id) == (2, 3)
    s2 = encode_key(SchemaKey("s", 2))
    # ours (ignored), then the retry on the same key: the last record of s/2 is the registration
    assert [json.loads(v or b"null")["id"] for k, v in log.records if k == s2] == [2, 3]


def test_a_loser_left_unbound_by_a_failed_retry_is_tombstoned():
    from broker.schema_registry.records import ModeKey, ModeValue

    log = MemoryLog()
    a = make(log)
    register(a, "s", fields("a"))
    rival = SchemaValue("t", 1, 2, fields("t"))
    log.inject_before_next.append((encode_key(SchemaKey("t", 1)), encode_value(rival)))
    log.inject_before_next.append((encode_key(ModeKey("s")), encode_value(ModeValue("s", "READONLY"))))
    assert code_of(a.register("s", None, fields("a", "m="), [])) == 42205
    s2 = encode_key(SchemaKey("s", 2))
    assert [v is None for k, v in log.records if k == s2] == [False, True]
    assert [(e.subject, e.version, e.id) for e in make(log).state.entries()] == [("s", 1, 1), ("t", 1, 2)]


def test_real_avro_schemas_register_and_evolve():
    r = SchemaRegistry(MemorySchemaStore())
    run(r.start())
    v1 = '{"type":"record","name":"User","fields":[{"name":"a","type":"int"}]}'
    v2 = '{"type":"record","name":"User","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":"x"}]}'
    bad = '{"type":"record","name":"User","fields":[{"name":"a","type":"int"},{"name":"c","type":"string"}]}'
    assert run(r.register("u", None, v1, [])).id == 1
    assert run(r.register("u", "AVRO", v2, [])).version == 2
    with pytest.raises(RegistryError) as info:
        run(r.register("u", None, bad, []))
    assert info.value.error_code == 409
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in info.value.message
    assert run(r.lookup("u", None, v1, [])).version == 1


def test_transitive_checks_answer_the_first_incompatible_version_newest_first():
    r = make()
    register(r, "s", fields("a"))
    register(r, "s", fields("a", "b="))
    run(r.set_config("s", {"compatibility": "BACKWARD_TRANSITIVE"}))
    messages = run(r.test_compatibility("s", None, None, fields("b", "c="), []))
    assert messages == [
        "READER_FIELD_MISSING_DEFAULT_VALUE: b",
        "{oldSchemaVersion: 1}",
        """{oldSchema: '["a"]'}""",
        "{validateFields: 'false', compatibility: 'BACKWARD_TRANSITIVE'}",
    ]


def test_a_schema_of_another_type_is_incompatible():
    r = SchemaRegistry(MemorySchemaStore())
    run(r.start())
    run(r.register("s", None, '{"type":"record","name":"R","fields":[]}', []))
    messages = run(r.test_compatibility("s", "latest", "JSON", '{"type":"object"}', []))
    assert messages[0] == "Incompatible because of different schema type"
    assert code_of(r.register("s", "JSON", '{"type":"object"}', [])) == 409


class BrokenStore(MemorySchemaStore):
    """A store whose writes fail (``fail``) or never complete (``hang``)."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    async def append(self, key, value):
        if self.how == "fail":
            raise StoreError("the topic is gone")
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


@pytest.mark.parametrize(("how", "status", "code"), [("fail", 500, 50001), ("hang", 500, 50002)])
def test_store_failures_are_50001_and_timeouts_50002(how, status, code):
    r = SchemaRegistry(BrokenStore(how), parser=parse_fields, timeout_s=0.2)
    run(r.start())
    with pytest.raises(RegistryError) as info:
        register(r, "s", fields("a"))
    assert (info.value.http_status, info.value.error_code) == (status, code)
    with pytest.raises(RegistryError) as info:
        run(r.set_mode(None, "READONLY"))
    assert info.value.error_code == code


def test_switching_to_import_drops_soft_deleted_versions_so_imports_may_reuse_them():
    r = make()
    register(r, "s", fields("a"))
    run(r.delete_subject("s"))
    assert run(r.set_mode("s", "IMPORT")) == "IMPORT"
    assert run(r.subjects(deleted=True)) == []
    imported = register(r, "s", fields("b"), schema_id=7, version=1)
    assert (imported.id, imported.version) == (7, 1)
