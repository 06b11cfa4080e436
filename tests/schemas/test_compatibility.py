"""Compatibility levels over a subject's versions: which versions are checked, in which direction."""

from __future__ import annotations

import pytest

from spark_kafkalog.schemas import COMPATIBILITY_LEVELS, ParsedSchema, compatibility_errors


class Fields(ParsedSchema):
    """A toy schema: a set of required field names; a reader needs every field it requires in the writer."""

    schema_type = "TOY"

    def __init__(self, *fields: str) -> None:
        self.fields = frozenset(fields)

    @property
    def canonical(self) -> str:
        return ",".join(sorted(self.fields))

    @property
    def references(self):
        return ()

    @property
    def name(self):
        return None

    def normalized(self):
        return self

    def is_backward_compatible(self, previous):
        missing = sorted(self.fields - previous.fields)
        return [f"reader {self.canonical!r} needs {m!r} missing from writer {previous.canonical!r}" for m in missing]


V1, V2, V3 = Fields("a"), Fields("a", "b"), Fields("b")

# (level, history, new, compatible)
CASES = [
    ("NONE", [V2], Fields("z"), True),
    ("BACKWARD", [V1], V2, False),  # the new reader needs b, which v1 data lacks
    ("BACKWARD", [V2], V1, True),
    ("BACKWARD", [V2, V3], Fields("b"), True),  # only the latest counts
    ("BACKWARD_TRANSITIVE", [V1, V3], Fields("b"), False),  # v1 lacks b
    ("FORWARD", [V1], V2, True),  # the old reader (needs a) reads new data (a, b)
    ("FORWARD", [V2], V1, False),
    ("FORWARD_TRANSITIVE", [V2, V1], Fields("a"), False),  # v2 needs b
    ("FORWARD_TRANSITIVE", [V1, V1], Fields("a", "c"), True),
    ("FULL", [V1], V2, False),
    ("FULL", [V1], Fields("a"), True),
    ("FULL_TRANSITIVE", [V2, V1], Fields("a"), False),
    ("FULL_TRANSITIVE", [V1, V1], Fields("a"), True),
    ("BACKWARD", [], V2, True),  # a first version is always accepted
]


@pytest.mark.parametrize(("level", "history", "new", "compatible"), CASES)
def test_levels(level, history, new, compatible):
    errors = compatibility_errors(new, history, level)
    assert (errors == []) is compatible, errors


def test_every_level_is_covered_and_lower_case_is_accepted():
    assert {c[0] for c in CASES} == set(COMPATIBILITY_LEVELS)
    assert compatibility_errors(V2, [V1], "backward") != []


def test_errors_name_the_versions_newest_first_without_repeats():
    errors = compatibility_errors(Fields("a", "b", "c"), [Fields("a"), Fields("a", "b")], "BACKWARD_TRANSITIVE")
    assert errors == [
        "reader 'a,b,c' needs 'c' missing from writer 'a,b'",
        "reader 'a,b,c' needs 'b' missing from writer 'a'",
        "reader 'a,b,c' needs 'c' missing from writer 'a'",
    ]


def test_an_unknown_level_is_refused_naming_it():
    with pytest.raises(ValueError, match="'SIDEWAYS'"):
        compatibility_errors(V1, [V1], "sideways")


class Worded(Fields):
    def is_backward_compatible(self, previous):
        return [
            f"field {m} in the new schema is missing in the old schema" for m in sorted(self.fields - previous.fields)
        ]


def test_forward_messages_name_the_schemas_by_their_role():
    new, old = Worded("a"), Worded("a", "b")
    assert compatibility_errors(new, [old], "FORWARD") == ["field b in the old schema is missing in the new schema"]
    assert compatibility_errors(old, [new], "BACKWARD") == ["field b in the new schema is missing in the old schema"]
