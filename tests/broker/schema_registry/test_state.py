"""The registry's state replayed from ``_schemas`` records: deterministic, first in the log wins."""

from __future__ import annotations

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
    NoopValue,
    SchemaKey,
    SchemaValue,
    encode_key,
    encode_value,
)
from broker.schema_registry.state import RegistryState


def sv(subject, version, schema_id, text="A", deleted=False):
    return SchemaValue(subject, version, schema_id, text, deleted=deleted)


def replay(records):
    state = RegistryState()
    for key, value in records:
        state.apply(key, value)
    return state


def summary(state):
    return {(e.subject, e.version): (e.id, e.schema, e.deleted) for e in state.entries()}


CASES = [
    ("one registration", [(SchemaKey("s", 1), sv("s", 1, 1))], {("s", 1): (1, "A", False)}, 1),
    (
        "same schema in two subjects shares the id",
        [(SchemaKey("s", 1), sv("s", 1, 1)), (SchemaKey("t", 1), sv("t", 1, 1))],
        {("s", 1): (1, "A", False), ("t", 1): (1, "A", False)},
        1,
    ),
    (
        "an id already bound to another schema is ignored",
        [(SchemaKey("s", 1), sv("s", 1, 1, "A")), (SchemaKey("t", 1), sv("t", 1, 1, "B"))],
        {("s", 1): (1, "A", False)},
        1,
    ),
    (
        "a version already bound to another schema is ignored",
        [(SchemaKey("s", 1), sv("s", 1, 1, "A")), (SchemaKey("s", 1), sv("s", 1, 2, "B"))],
        {("s", 1): (1, "A", False)},
        1,
    ),
    (
        "the same schema again soft-deletes and restores",
        [(SchemaKey("s", 1), sv("s", 1, 1)), (SchemaKey("s", 1), sv("s", 1, 1, deleted=True))],
        {("s", 1): (1, "A", True)},
        1,
    ),
    (
        "an id no stored version holds binds again (a compacted replay agrees)",
        [(SchemaKey("s", 1), sv("s", 1, 5)), (SchemaKey("s", 1), None), (SchemaKey("t", 1), sv("t", 1, 5, "B"))],
        {("t", 1): (5, "B", False)},
        5,
    ),
    (
        "a version freed by a tombstone can be bound again",
        [(SchemaKey("s", 1), sv("s", 1, 1)), (SchemaKey("s", 1), None), (SchemaKey("s", 1), sv("s", 1, 2, "B"))],
        {("s", 1): (2, "B", False)},
        2,
    ),
    (
        "delete subject marks versions up to its watermark",
        [
            (SchemaKey("s", 1), sv("s", 1, 1, "A")),
            (SchemaKey("s", 2), sv("s", 2, 2, "B")),
            (SchemaKey("s", 3), sv("s", 3, 3, "C")),
            (DeleteSubjectKey("s"), DeleteSubjectValue("s", 2)),
        ],
        {("s", 1): (1, "A", True), ("s", 2): (2, "B", True), ("s", 3): (3, "C", False)},
        3,
    ),
    (
        "clear subject drops its versions",
        [(SchemaKey("s", 1), sv("s", 1, 1)), (ClearSubjectKey("s"), ClearSubjectValue("s"))],
        {},
        1,
    ),
    ("noop changes nothing", [(NoopKey(), NoopValue())], {}, 0),
]


@pytest.mark.parametrize(("records", "expected", "max_id"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_replay(records, expected, max_id):
    state = replay(records)
    assert summary(state) == expected
    assert state.max_id == max_id


def test_replay_of_the_same_bytes_agrees_and_skips_junk():
    records = [
        (encode_key(SchemaKey("s", 1)), encode_value(sv("s", 1, 1, "A"))),
        (b"junk", b"junk"),
        (encode_key(SchemaKey("t", 1)), encode_value(sv("t", 1, 1, "B"))),
        (encode_key(SchemaKey("t", 1)), encode_value(sv("t", 1, 2, "B"))),
    ]
    a, b = RegistryState(), RegistryState()
    for key, value in records:
        a.apply_bytes(key, value)
        b.apply_bytes(key, value)
    assert summary(a) == summary(b) == {("s", 1): (1, "A", False), ("t", 1): (2, "B", False)}
    assert a.applied == 4
    assert a.ignored == 1


def test_configs_and_modes_last_write_wins_and_tombstones_remove():
    state = replay(
        [
            (ConfigKey(None), ConfigValue(None, "FULL")),
            (ConfigKey("s"), ConfigValue("s", "NONE")),
            (ConfigKey("s"), ConfigValue("s", "FORWARD", True)),
            (ModeKey("s"), ModeValue("s", "READONLY")),
            (ModeKey(None), ModeValue(None, "IMPORT")),
            (ModeKey("s"), None),
        ]
    )
    assert state.configs[None].compatibility_level == "FULL"
    assert state.configs["s"] == ConfigValue("s", "FORWARD", True)
    assert state.modes == {None: "IMPORT"}
    state.apply(ConfigKey("s"), None)
    assert "s" not in state.configs


def test_referenced_by_and_value_of():
    from spark_kafkalog.schemas import SchemaReference

    ref = SchemaReference("n", "base", 1)
    state = replay(
        [
            (SchemaKey("base", 1), sv("base", 1, 1, "A")),
            (SchemaKey("user", 1), SchemaValue("user", 1, 2, "B", references=(ref,))),
        ]
    )
    assert [e.subject for e in state.referenced_by("base", 1)] == ["user"]
    assert state.referenced_by("base", 2) == []
    assert state.value_of(SchemaKey("base", 1)) == sv("base", 1, 1, "A")
    assert state.value_of(SchemaKey("base", 9)) is None


def test_ids_freed_by_permanent_deletes_steer_proposals():
    state = replay([(SchemaKey("s", 1), sv("s", 1, 5, "A")), (SchemaKey("s", 1), None)])
    assert state.entries_with_id(5) == []
    assert state.id_of(("AVRO", "A", ())) == 5  # the same schema gets its id back
    assert state.id_of(("AVRO", "B", ())) is None
    assert state.known_ids == {5: ("AVRO", "A", ())}
    assert state.id_is_free_for(5, ("AVRO", "B", ()))
    state.apply(SchemaKey("t", 1), sv("t", 1, 5, "A"))
    assert not state.id_is_free_for(5, ("AVRO", "B", ()))
