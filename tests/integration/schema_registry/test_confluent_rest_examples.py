"""Confluent Schema Registry's documented REST examples, endpoint by endpoint, against kafkalog's registry.

Sources: Confluent's API reference (``docs.confluent.io/platform/current/schema-registry/develop/api.html``;
its older text is ``confluentinc/schema-registry:docs/develop/api.rst``) and the per-endpoint reference of
Confluent Cloud's Schema Registry API (``docs.confluent.io/cloud/current/ccloud/<operation>/``: statuses and
error codes of each endpoint), plus rest-utils' exception mappers for the generic answers (malformed JSON:
400 with ``error_code`` 400; unknown path: 404 ``HTTP 404 Not Found``). Each example is one row: the
requests that set the stage, the request, and the status and body Confluent's registry answers.

Bodies are compared by shape and value: a dict must have exactly the expected keys (plus keys Confluent adds
only in newer releases, ``OPTIONAL_KEYS``), ``Any*`` markers stand for values that are not deterministic, and
``Ref("id")`` for the id the stage's registrations returned. Schema strings are compared exactly with Avro's
``Schema.toString()`` (what Confluent stores and answers), not with the docs' pretty-printed illustrations.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
V1_JSON = "application/vnd.schemaregistry.v1+json"
OPTIONAL_KEYS = frozenset({"guid", "ts", "metadata", "ruleSet", "deleted"})
"""Keys newer Confluent releases add to answers (schema guids, timestamps, data contracts); allowed, never required."""


class _Any:
    def __init__(self, kind: type | tuple[type, ...], what: str) -> None:
        self.kind, self.what = kind, what

    def matches(self, value: object) -> bool:
        return isinstance(value, self.kind) and not isinstance(value, bool)

    def __repr__(self) -> str:
        return self.what


ANY_INT = _Any(int, "ANY_INT")
ANY_STR = _Any(str, "ANY_STR")


@dataclass(frozen=True)
class Ref:
    """The value the stage captured under ``key`` (ids: ``id``, ``id2``, ...)."""

    key: str


@dataclass(frozen=True)
class Unordered:
    """A JSON array whose order Confluent does not fix."""

    items: tuple[Any, ...]


@dataclass(frozen=True)
class NonEmptyStrings:
    """A non-empty JSON array of strings (verbose compatibility messages)."""


@dataclass(frozen=True)
class Prefix:
    """A string starting with ``text`` (Confluent's messages that go on with details)."""

    text: str


@dataclass(frozen=True)
class Raw:
    """A body that is not JSON-decoded: the exact text (``/schema`` endpoints answer the schema itself)."""

    text: str


@dataclass(frozen=True)
class Call:
    """One request. Strings in ``path`` and ``body`` have ``{s}``, ``{s2}``, ``{rec}`` replaced; ``body`` is
    JSON-encoded unless it is ``bytes``."""

    method: str
    path: str
    body: Any = None
    content_type: str = V1_JSON


@dataclass(frozen=True)
class Example:
    name: str
    call: Call
    status: int
    body: Any
    stage: tuple[Call, ...] = ()
    source: str = "docs.confluent.io/platform/current/schema-registry/develop/api.html"
    extra_keys: frozenset[str] = frozenset()
    """Keys beyond the documented example's that the current Confluent release also sends (allowed)."""


def record(rec: str, *extra: dict[str, Any]) -> str:
    """The docs' example record (fields written ``type`` before ``name`` as the docs do)."""
    fields: list[dict[str, Any]] = [{"type": "string", "name": "field1"}, {"type": "int", "name": "field2"}]
    return json.dumps({"type": "record", "name": rec, "fields": [*fields, *extra]})


def canonical(rec: str, *extra: str) -> str:
    """What Avro's Schema.toString() prints for ``record(rec, ...)``: compact, ``name`` before ``type``."""
    fields = ['{"name":"field1","type":"string"}', '{"name":"field2","type":"int"}', *extra]
    return '{"type":"record","name":"' + rec + '","fields":[' + ",".join(fields) + "]}"


FIELD3 = {"name": "field3", "type": "string", "default": "x"}
FIELD3_CANON = '{"name":"field3","type":"string","default":"x"}'
REQUIRED3 = {"name": "field3", "type": "string"}
V1 = record("{rec}")
V2 = record("{rec}", FIELD3)
INCOMPATIBLE = record("{rec}", REQUIRED3)  # BACKWARD: a new field without a default
DROPPED = json.dumps({"type": "record", "name": "{rec}", "fields": [{"type": "int", "name": "field2"}]})
"""V1 without field1: BACKWARD-compatible (the reader ignores it), not FORWARD (V1 reads no field1, has no default)."""
STRING = '{"type": "string"}'
T1 = json.dumps({"type": "record", "name": "{rec}", "fields": [{"name": "x", "type": "int"}]})
T2 = json.dumps({"type": "record", "name": "{rec}", "fields": []})
T3 = json.dumps({"type": "record", "name": "{rec}", "fields": [{"name": "x", "type": "string", "default": ""}]})
"""T2 drops T1's x; T3 brings x back as a string with a default: it reads T2's data (x from its default) but not
T1's (int is not string): compatible with the latest version, not with every version (the TRANSITIVE levels)."""
JSON_DOC = '{"type": "object", "title": "{rec}", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}'
JSON_CANON = '{"type":"object","title":"{rec}","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}'
"""A JSON schema and its canonical form: compact, keys in the order written (Jackson's JsonNode.toString())."""
PROTO = 'syntax = "proto3";\npackage conformance;\n\nmessage {rec} {\n  string name = 1;\n  int64 id = 2;\n}\n'


def post(path: str, schema: str, **extra: Any) -> Call:
    return Call("POST", path, {"schema": schema, **extra})


def register(subject: str, schema: str, **extra: Any) -> Call:
    return post(f"/subjects/{subject}/versions", schema, **extra)


REGISTER_EXTRAS = frozenset({"version", "schemaType", "references", "schema"})
"""RegisterSchemaResponse's keys besides ``id`` in current releases (id, version, guid, schemaType, references,
metadata, ruleSet, schema, ts, deleted; empty ones left out). ``subject`` is not one of them."""
ID_EXTRAS = REGISTER_EXTRAS | {"subject"}
"""For the rows about which id a registration answers: the answer's keys are the first row's business."""


def bad_version(version: str) -> dict[str, Any]:
    return err(
        42202,
        f"The specified version '{version}' is not a valid version id. "
        'Allowed values are between [1, 2^31-1] and the string "latest"',
    )


INCOMPATIBLE_409 = {
    "error_code": 409,
    "message": Prefix('Schema being registered is incompatible with an earlier schema for subject "{s}", details: ['),
}


def err(code: int, status_message: str | None = None) -> dict[str, Any]:
    """An error body; ``status_message`` (Confluent's exact text, ``{s}`` for the subject) or any message."""
    return {"error_code": code, "message": status_message if status_message is not None else ANY_STR}


V1_V2 = (register("{s}", V1), register("{s}", V2))
"""Stage: versions 1 and 2 of ``{s}``."""
V1_DELETED_OF_V1_V2 = (*V1_V2, Call("DELETE", "/subjects/{s}/versions/1"))
"""Stage: versions 1 and 2 of ``{s}``, version 1 soft-deleted."""
REFERENCED_V1 = (
    register("{s}", V1),
    register(
        "{s2}",
        '{"type":"record","name":"wrap_{rec}","fields":[{"name":"inner","type":"{rec}"}]}',
        references=[{"name": "{rec}", "subject": "{s}", "version": 1}],
    ),
)
"""Stage: ``{s}`` version 1, referenced by ``{s2}`` version 1 (id ``id2``)."""


def t1_t2_under(level: str) -> tuple[Call, ...]:
    """Stage: ``T1`` then ``T2`` registered under ``{s}``, then the subject's compatibility set to ``level``."""
    return (register("{s}", T1), register("{s}", T2), Call("PUT", "/config/{s}", {"compatibility": level}))


EXAMPLES: list[Example] = [
    # --- /schemas -------------------------------------------------------------------------------------
    Example(
        "GET /schemas/ids/{id}: the schema string (AVRO: no schemaType, no references)",
        Call("GET", "/schemas/ids/{id}"),
        200,
        {"schema": canonical("{rec}")},
        stage=(register("{s}", V1),),
    ),
    Example(
        'GET /schemas/ids/{id} of a primitive: Avro\'s canonical form of {"type": "string"}',
        Call("GET", "/schemas/ids/{id}"),
        200,
        {"schema": '"string"'},
        stage=(register("{s}", STRING),),
    ),
    Example(
        "GET /schemas/ids/{id} unknown: 40403",
        Call("GET", "/schemas/ids/987654321"),
        404,
        err(40403, "Schema 987654321 not found"),
    ),
    Example(
        "GET /schemas/ids/{id}/schema: the raw schema",
        Call("GET", "/schemas/ids/{id}/schema"),
        200,
        Raw(canonical("{rec}")),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /schemas/ids/{id}/schema unknown: 40403",
        Call("GET", "/schemas/ids/987654321/schema"),
        404,
        err(40403, "Schema 987654321 not found"),
    ),
    Example(
        "GET /schemas/types",
        Call("GET", "/schemas/types"),
        200,
        Unordered(("JSON", "PROTOBUF", "AVRO")),
    ),
    Example(
        "GET /schemas/ids/{id}/subjects: every subject the schema is registered under",
        Call("GET", "/schemas/ids/{id}/subjects"),
        200,
        Unordered(("{s}", "{s2}")),
        stage=(register("{s}", V1), register("{s2}", V1)),
    ),
    Example(
        "GET /schemas/ids/{id}/versions: subject-version pairs",
        Call("GET", "/schemas/ids/{id}/versions"),
        200,
        Unordered(({"subject": "{s}", "version": 1}, {"subject": "{s2}", "version": 1})),
        stage=(register("{s}", V1), register("{s2}", V1)),
    ),
    Example(
        "GET /schemas/ids/{id}/versions unknown: 40403",
        Call("GET", "/schemas/ids/987654321/versions"),
        404,
        err(40403, "Schema 987654321 not found"),
    ),
    Example(
        "GET /schemas?subjectPrefix=: the latest schemas of matching subjects",
        Call("GET", "/schemas?subjectPrefix={s}&latestOnly=true"),
        200,
        [{"subject": "{s}", "version": 2, "id": Ref("id2"), "schema": canonical("{rec}", FIELD3_CANON)}],
        stage=V1_V2,
    ),
    # --- /subjects ------------------------------------------------------------------------------------
    Example(
        "GET /subjects (subjectPrefix): registered subjects",
        Call("GET", "/subjects?subjectPrefix={s}"),
        200,
        Unordered(("{s}", "{s}-b")),
        stage=(register("{s}", V1), register("{s}-b", V1)),
    ),
    Example(
        "GET /subjects/{subject}/versions",
        Call("GET", "/subjects/{s}/versions"),
        200,
        [1, 2],
        stage=V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions unknown subject: 40401",
        Call("GET", "/subjects/{s}/versions"),
        404,
        err(40401, "Subject '{s}' not found."),
    ),
    Example(
        "GET /subjects/{subject}/versions/{version}",
        Call("GET", "/subjects/{s}/versions/1"),
        200,
        {"subject": "{s}", "version": 1, "id": Ref("id"), "schema": canonical("{rec}")},
        stage=V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions/latest",
        Call("GET", "/subjects/{s}/versions/latest"),
        200,
        {"subject": "{s}", "version": 2, "id": Ref("id2"), "schema": canonical("{rec}", FIELD3_CANON)},
        stage=V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions/-1 is latest",
        Call("GET", "/subjects/{s}/versions/-1"),
        200,
        {"subject": "{s}", "version": 2, "id": Ref("id2"), "schema": canonical("{rec}", FIELD3_CANON)},
        stage=V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions/{version} unknown version: 40402",
        Call("GET", "/subjects/{s}/versions/3"),
        404,
        err(40402, "Version 3 not found."),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /subjects/{subject}/versions/{version} unknown subject: 40401",
        Call("GET", "/subjects/{s}/versions/1"),
        404,
        err(40401, "Subject '{s}' not found."),
    ),
    Example(
        "GET /subjects/{subject}/versions/{version} not a version: 42202",
        Call("GET", "/subjects/{s}/versions/abc"),
        422,
        bad_version("abc"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /subjects/{subject}/versions/0: 42202 (versions are 1..2^31-1 or latest)",
        Call("GET", "/subjects/{s}/versions/0"),
        422,
        bad_version("0"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /subjects/{subject}/versions/{version}/schema: the raw schema",
        Call("GET", "/subjects/{s}/versions/1/schema"),
        200,
        Raw(canonical("{rec}")),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /subjects/{subject}/versions/latest/schema",
        Call("GET", "/subjects/{s}/versions/latest/schema"),
        200,
        Raw('"string"'),
        stage=(register("{s}", STRING),),
    ),
    Example(
        'POST /subjects/{subject}/versions: {"id": n}',
        register("{s}", V1),
        200,
        {"id": ANY_INT},
        extra_keys=REGISTER_EXTRAS,
    ),
    Example(
        "POST /subjects/{subject}/versions again: the same id, no new version",
        register("{s}", V1),
        200,
        {"id": Ref("id")},
        extra_keys=ID_EXTRAS,
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /subjects/{subject}/versions under another subject: the same id",
        register("{s2}", V1),
        200,
        {"id": Ref("id")},
        extra_keys=ID_EXTRAS,
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /subjects/{subject}/versions invalid Avro: 42201",
        register("{s}", '{"type": "record", "name": "x", "fields": [{"name": "a", "type": "nosuchtype"}]}'),
        422,
        err(42201),
    ),
    Example(
        "POST /subjects/{subject}/versions unknown schemaType: 42201",
        register("{s}", STRING, schemaType="NOSUCHTYPE"),
        422,
        err(42201),
    ),
    Example(
        "POST /subjects/{subject}/versions incompatible (BACKWARD): 409",
        register("{s}", INCOMPATIBLE),
        409,
        INCOMPATIBLE_409,
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /subjects/{subject}/versions compatible evolution: a new id",
        register("{s}", V2),
        200,
        {"id": ANY_INT},
        extra_keys=ID_EXTRAS,
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /subjects/{subject}: lookup answers subject, id, version and schema",
        post("/subjects/{s}", V1),
        200,
        {"subject": "{s}", "id": Ref("id"), "version": 1, "schema": canonical("{rec}")},
        stage=V1_V2,
    ),
    Example(
        "POST /subjects/{subject} unknown schema: 40403",
        post("/subjects/{s}", INCOMPATIBLE),
        404,
        err(40403, "Schema not found"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /subjects/{subject} unknown subject: 40401",
        post("/subjects/{s}", V1),
        404,
        err(40401, "Subject '{s}' not found."),
    ),
    Example(
        "DELETE /subjects/{subject}: the deleted versions",
        Call("DELETE", "/subjects/{s}"),
        200,
        [1, 2],
        stage=V1_V2,
    ),
    Example(
        "DELETE /subjects/{subject} unknown: 40401",
        Call("DELETE", "/subjects/{s}"),
        404,
        err(40401, "Subject '{s}' not found."),
    ),
    Example(
        "DELETE /subjects/{subject} twice: 40404 (already soft-deleted)",
        Call("DELETE", "/subjects/{s}"),
        404,
        err(40404, "Subject '{s}' was soft deleted.Set permanent=true to delete permanently"),
        stage=(register("{s}", V1), Call("DELETE", "/subjects/{s}")),
    ),
    Example(
        "DELETE /subjects/{subject}?permanent=true without a soft delete first: 40405",
        Call("DELETE", "/subjects/{s}?permanent=true"),
        404,
        err(40405, "Subject '{s}' was not deleted first before being permanently deleted"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "DELETE /subjects/{subject}?permanent=true after a soft delete",
        Call("DELETE", "/subjects/{s}?permanent=true"),
        200,
        [1],
        stage=(register("{s}", V1), Call("DELETE", "/subjects/{s}")),
    ),
    Example(
        "GET /subjects/{subject}/versions of a soft-deleted subject: 40401",
        Call("GET", "/subjects/{s}/versions"),
        404,
        err(40401, "Subject '{s}' not found."),
        stage=(register("{s}", V1), Call("DELETE", "/subjects/{s}")),
    ),
    Example(
        "GET /subjects?deleted=true lists soft-deleted subjects",
        Call("GET", "/subjects?subjectPrefix={s}&deleted=true"),
        200,
        Unordered(("{s}", "{s}-b")),
        stage=(register("{s}", V1), register("{s}-b", V1), Call("DELETE", "/subjects/{s}")),
    ),
    Example(
        "GET /subjects leaves soft-deleted subjects out",
        Call("GET", "/subjects?subjectPrefix={s}"),
        200,
        ["{s}-b"],
        stage=(register("{s}", V1), register("{s}-b", V1), Call("DELETE", "/subjects/{s}")),
    ),
    Example(
        "GET /subjects?deletedOnly=true: only soft-deleted subjects",
        Call("GET", "/subjects?subjectPrefix={s}&deletedOnly=true"),
        200,
        ["{s}"],
        stage=(register("{s}", V1), register("{s}-b", V1), Call("DELETE", "/subjects/{s}")),
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version}: the deleted version",
        Call("DELETE", "/subjects/{s}/versions/1"),
        200,
        1,
        stage=V1_V2,
    ),
    Example(
        "DELETE /subjects/{subject}/versions/latest deletes the latest",
        Call("DELETE", "/subjects/{s}/versions/latest"),
        200,
        2,
        stage=V1_V2,
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version} twice: 40406",
        Call("DELETE", "/subjects/{s}/versions/1"),
        404,
        err(40406, "Subject '{s}' Version 1 was soft deleted.Set permanent=true to delete permanently"),
        stage=V1_DELETED_OF_V1_V2,
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version}?permanent=true without a soft delete first: 40407",
        Call("DELETE", "/subjects/{s}/versions/1?permanent=true"),
        404,
        err(40407, "Subject '{s}' Version 1 was not deleted first before being permanently deleted"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version}?permanent=true after a soft delete",
        Call("DELETE", "/subjects/{s}/versions/1?permanent=true"),
        200,
        1,
        stage=V1_DELETED_OF_V1_V2,
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version} unknown version: 40402",
        Call("DELETE", "/subjects/{s}/versions/7"),
        404,
        err(40402, "Version 7 not found."),
        stage=(register("{s}", V1),),
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version} not a version: 42202",
        Call("DELETE", "/subjects/{s}/versions/abc"),
        422,
        bad_version("abc"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /subjects/{subject}/versions?deleted=true lists soft-deleted versions",
        Call("GET", "/subjects/{s}/versions?deleted=true"),
        200,
        [1, 2],
        stage=V1_DELETED_OF_V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions leaves soft-deleted versions out",
        Call("GET", "/subjects/{s}/versions"),
        200,
        [2],
        stage=V1_DELETED_OF_V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions/{version} soft-deleted: 40402 unless deleted=true",
        Call("GET", "/subjects/{s}/versions/1"),
        404,
        err(40402, "Version 1 not found."),
        stage=V1_DELETED_OF_V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions/{version}?deleted=true finds a soft-deleted version",
        Call("GET", "/subjects/{s}/versions/1?deleted=true"),
        200,
        {"subject": "{s}", "version": 1, "id": Ref("id"), "schema": canonical("{rec}")},
        stage=V1_DELETED_OF_V1_V2,
    ),
    Example(
        "GET /subjects/{subject}/versions/latest skips a soft-deleted latest",
        Call("GET", "/subjects/{s}/versions/latest"),
        200,
        {"subject": "{s}", "version": 1, "id": Ref("id"), "schema": canonical("{rec}")},
        stage=(register("{s}", V1), register("{s}", V2), Call("DELETE", "/subjects/{s}/versions/2")),
    ),
    Example(
        "POST /subjects/{subject}/versions after a soft delete: numbering goes on, the id is reused",
        Call("GET", "/subjects/{s}/versions/latest"),
        200,
        {"subject": "{s}", "version": 2, "id": Ref("id"), "schema": canonical("{rec}")},
        stage=(register("{s}", V1), Call("DELETE", "/subjects/{s}/versions/1"), register("{s}", V1)),
    ),
    Example(
        "POST /subjects/{subject}?deleted=true looks up a soft-deleted version",
        post("/subjects/{s}?deleted=true", V1),
        200,
        {"subject": "{s}", "id": Ref("id"), "version": 1, "schema": canonical("{rec}")},
        stage=V1_DELETED_OF_V1_V2,
    ),
    # --- references -----------------------------------------------------------------------------------
    Example(
        "GET /subjects/{subject}/versions/{version}/referencedby: ids of the referring schemas",
        Call("GET", "/subjects/{s}/versions/1/referencedby"),
        200,
        [Ref("id2")],
        stage=REFERENCED_V1,
    ),
    Example(
        "GET /subjects/{subject}/versions/{version}/referencedby with no referrers: []",
        Call("GET", "/subjects/{s}/versions/1/referencedby"),
        200,
        [],
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /subjects/{subject}/versions/{version} of a referring schema: its references",
        Call("GET", "/subjects/{s2}/versions/1"),
        200,
        {
            "subject": "{s2}",
            "version": 1,
            "id": Ref("id2"),
            "references": [{"name": "{rec}", "subject": "{s}", "version": 1}],
            "schema": '{"type":"record","name":"wrap_{rec}","fields":[{"name":"inner","type":"{rec}"}]}',
        },
        stage=REFERENCED_V1,
    ),
    Example(
        "GET /schemas/ids/{id}?format=resolved: Avro references inlined, references still listed",
        Call("GET", "/schemas/ids/{id2}?format=resolved"),
        200,
        {
            "references": [{"name": "{rec}", "subject": "{s}", "version": 1}],
            "schema": '{"type":"record","name":"wrap_{rec}","fields":[{"name":"inner","type":'
            + canonical("{rec}")
            + "}]}",
        },
        stage=REFERENCED_V1,
    ),
    Example(
        "DELETE /subjects/{subject}/versions/{version} of a referenced schema: 42206",
        Call("DELETE", "/subjects/{s}/versions/1"),
        422,
        err(42206),
        stage=REFERENCED_V1,
    ),
    # --- /compatibility -------------------------------------------------------------------------------
    Example(
        "POST /compatibility/subjects/{subject}/versions/latest compatible",
        post("/compatibility/subjects/{s}/versions/latest", V2),
        200,
        {"is_compatible": True},
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/latest incompatible",
        post("/compatibility/subjects/{s}/versions/latest", INCOMPATIBLE),
        200,
        {"is_compatible": False},
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/{version}?verbose=true: the reasons",
        post("/compatibility/subjects/{s}/versions/1?verbose=true", INCOMPATIBLE),
        200,
        {"is_compatible": False, "messages": NonEmptyStrings()},
        stage=(register("{s}", V1),),
    ),
    Example(
        "verbose messages in Confluent's format: the Avro incompatibility, the old version and schema, the level",
        post("/compatibility/subjects/{s}/versions/latest?verbose=true", INCOMPATIBLE),
        200,
        {
            "is_compatible": False,
            "messages": [
                "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'field3' at path "
                "'/fields/2' in the new schema has no default value and is missing in the old schema', "
                "additionalInfo:'field3'}",
                "{oldSchemaVersion: 1}",
                "{oldSchema: '" + canonical("{rec}") + "'}",
                "{validateFields: 'false', compatibility: 'BACKWARD'}",
            ],
        },
        stage=(register("{s}", V1),),
        source="Confluent 7.x POST /compatibility ?verbose=true (Avro SchemaCompatibility messages plus context)",
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions (all versions)",
        post("/compatibility/subjects/{s}/versions", V2),
        200,
        {"is_compatible": True},
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/{version} unknown version: 40402",
        post("/compatibility/subjects/{s}/versions/7", V2),
        404,
        err(40402, "Version 7 not found."),
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/{version} unknown subject: 40401",
        post("/compatibility/subjects/{s}/versions/1", V2),
        404,
        err(40401, "Subject '{s}' not found."),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/{version} not a version: 42202",
        post("/compatibility/subjects/{s}/versions/abc", V2),
        422,
        bad_version("abc"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/latest invalid schema: 42201",
        post("/compatibility/subjects/{s}/versions/latest", '{"type": "nosuchtype"}'),
        422,
        err(42201),
        stage=(register("{s}", V1),),
    ),
    # --- /config (subject level; the global level is in test_global_config_and_mode) -----------------
    Example(
        "PUT /config/{subject}: echoes the request",
        Call("PUT", "/config/{s}", {"compatibility": "FULL"}),
        200,
        {"compatibility": "FULL"},
    ),
    Example(
        "GET /config/{subject}: compatibilityLevel",
        Call("GET", "/config/{s}"),
        200,
        {"compatibilityLevel": "FULL"},
        stage=(Call("PUT", "/config/{s}", {"compatibility": "FULL"}),),
    ),
    Example(
        "GET /config/{subject} with no subject level: 40408",
        Call("GET", "/config/{s}"),
        404,
        err(40408, "Subject '{s}' does not have subject-level compatibility configured"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /config/{subject}?defaultToGlobal=true: the global level",
        Call("GET", "/config/{s}?defaultToGlobal=true"),
        200,
        {"compatibilityLevel": "BACKWARD"},
        stage=(register("{s}", V1),),
    ),
    Example(
        "DELETE /config/{subject}: the level it had",
        Call("DELETE", "/config/{s}"),
        200,
        {"compatibilityLevel": "FULL_TRANSITIVE"},
        stage=(Call("PUT", "/config/{s}", {"compatibility": "FULL_TRANSITIVE"}),),
    ),
    Example(
        "PUT /config/{subject} invalid level: 42203",
        Call("PUT", "/config/{s}", {"compatibility": "SIDEWAYS"}),
        422,
        err(42203),
    ),
    Example(
        "PUT /config/{subject} NONE lets an incompatible schema in",
        register("{s}", INCOMPATIBLE),
        200,
        {"id": ANY_INT},
        extra_keys=ID_EXTRAS,
        stage=(register("{s}", V1), Call("PUT", "/config/{s}", {"compatibility": "NONE"})),
    ),
    Example(
        "PUT /config/{subject} BACKWARD lets a field without a default be dropped",
        register("{s}", DROPPED),
        200,
        {"id": ANY_INT},
        extra_keys=ID_EXTRAS,
        stage=(register("{s}", V1),),
    ),
    Example(
        "PUT /config/{subject} FORWARD refuses what only BACKWARD allows: 409",
        register("{s}", DROPPED),
        409,
        INCOMPATIBLE_409,
        stage=(register("{s}", V1), Call("PUT", "/config/{s}", {"compatibility": "FORWARD"})),
    ),
    Example(
        "BACKWARD checks the latest version only",
        register("{s}", T3),
        200,
        {"id": ANY_INT},
        stage=(register("{s}", T1), register("{s}", T2)),
        extra_keys=ID_EXTRAS,
    ),
    Example(
        "BACKWARD_TRANSITIVE checks every version: 409",
        register("{s}", T3),
        409,
        INCOMPATIBLE_409,
        stage=t1_t2_under("BACKWARD_TRANSITIVE"),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions/latest under BACKWARD_TRANSITIVE: that version only",
        post("/compatibility/subjects/{s}/versions/latest", T3),
        200,
        {"is_compatible": True},
        stage=t1_t2_under("BACKWARD_TRANSITIVE"),
    ),
    Example(
        "POST /compatibility/subjects/{subject}/versions under BACKWARD_TRANSITIVE: every version",
        post("/compatibility/subjects/{s}/versions", T3),
        200,
        {"is_compatible": False},
        stage=t1_t2_under("BACKWARD_TRANSITIVE"),
    ),
    Example(
        "FULL_TRANSITIVE refuses what FULL allows: 409",
        register("{s}", T3),
        409,
        INCOMPATIBLE_409,
        stage=t1_t2_under("FULL_TRANSITIVE"),
    ),
    # --- /mode (subject level) ------------------------------------------------------------------------
    Example(
        "PUT /mode/{subject}: echoes the request",
        Call("PUT", "/mode/{s}", {"mode": "READONLY"}),
        200,
        {"mode": "READONLY"},
    ),
    Example(
        "GET /mode/{subject}",
        Call("GET", "/mode/{s}"),
        200,
        {"mode": "READONLY"},
        stage=(Call("PUT", "/mode/{s}", {"mode": "READONLY"}),),
    ),
    Example(
        "POST /subjects/{subject}/versions in READONLY mode: 42205",
        register("{s}", V2),
        422,
        err(42205),
        stage=(register("{s}", V1), Call("PUT", "/mode/{s}", {"mode": "READONLY"})),
    ),
    Example(
        "DELETE /mode/{subject}: the mode it had",
        Call("DELETE", "/mode/{s}"),
        200,
        {"mode": "READONLY"},
        stage=(Call("PUT", "/mode/{s}", {"mode": "READONLY"}),),
    ),
    Example(
        "GET /mode/{subject} with no subject mode: 40409",
        Call("GET", "/mode/{s}"),
        404,
        err(40409, "Subject '{s}' does not have subject-level mode configured"),
        stage=(register("{s}", V1),),
    ),
    Example(
        "GET /mode/{subject}?defaultToGlobal=true: the global mode",
        Call("GET", "/mode/{s}?defaultToGlobal=true"),
        200,
        {"mode": "READWRITE"},
        stage=(register("{s}", V1),),
    ),
    Example(
        "PUT /mode/{subject} invalid mode: 42204",
        Call("PUT", "/mode/{s}", {"mode": "SOMETIMES"}),
        422,
        err(42204),
    ),
    Example(
        "PUT /mode/{subject} IMPORT over existing schemas without force: 42205",
        Call("PUT", "/mode/{s}", {"mode": "IMPORT"}),
        422,
        err(42205),
        stage=(register("{s}", V1),),
    ),
    Example(
        "PUT /mode/{subject}?force=true IMPORT over existing schemas",
        Call("PUT", "/mode/{s}?force=true", {"mode": "IMPORT"}),
        200,
        {"mode": "IMPORT"},
        stage=(register("{s}", V1),),
    ),
    Example(
        "POST /subjects/{subject}/versions with id and version in IMPORT mode keeps them",
        Call("GET", "/subjects/{s}/versions/5"),
        200,
        {"subject": "{s}", "version": 5, "id": 910000, "schema": canonical("{rec}")},
        stage=(
            Call("PUT", "/mode/{s}", {"mode": "IMPORT"}),
            register("{s}", V1, id=910000, version=5),
        ),
    ),
    # --- JSON Schema and Protobuf: schemaType in every answer --------------------------------------------
    Example(
        "GET /subjects/{subject}/versions/{version} of a JSON schema: schemaType JSON, compact JSON as Jackson prints",
        Call("GET", "/subjects/{s}/versions/1"),
        200,
        {"subject": "{s}", "version": 1, "id": Ref("id"), "schemaType": "JSON", "schema": JSON_CANON},
        stage=(register("{s}", JSON_DOC, schemaType="JSON"),),
    ),
    Example(
        "GET /schemas/ids/{id} of a JSON schema",
        Call("GET", "/schemas/ids/{id}"),
        200,
        {"schemaType": "JSON", "schema": JSON_CANON},
        stage=(register("{s}", JSON_DOC, schemaType="JSON"),),
    ),
    Example(
        "POST /subjects/{subject} lookup of a JSON schema written differently (whitespace)",
        post("/subjects/{s}", JSON_CANON, schemaType="JSON"),
        200,
        {"subject": "{s}", "version": 1, "id": Ref("id"), "schemaType": "JSON", "schema": JSON_CANON},
        stage=(register("{s}", JSON_DOC, schemaType="JSON"),),
    ),
    Example(
        "GET /schemas/ids/{id} of a Protobuf schema",
        Call("GET", "/schemas/ids/{id}?subject={s}"),
        200,
        {"schemaType": "PROTOBUF", "schema": ANY_STR},
        stage=(register("{s}", PROTO, schemaType="PROTOBUF"),),
    ),
    Example(
        "GET /subjects/{subject}/versions/latest of a Protobuf schema",
        Call("GET", "/subjects/{s}/versions/latest"),
        200,
        {"subject": "{s}", "version": 1, "id": Ref("id"), "schemaType": "PROTOBUF", "schema": ANY_STR},
        stage=(register("{s}", PROTO, schemaType="PROTOBUF"),),
    ),
    Example(
        "POST /subjects/{subject}/versions of an invalid JSON schema: 42201",
        register("{s}", '{"type": 12}', schemaType="JSON"),
        422,
        err(42201),
    ),
    Example(
        "POST /subjects/{subject}/versions of an invalid Protobuf schema: 42201",
        register("{s}", "message {", schemaType="PROTOBUF"),
        422,
        err(42201),
    ),
    # --- the rest of the surface and the generic answers ----------------------------------------------
    Example("GET /: {}", Call("GET", "/"), 200, {}),
    Example("GET /mode: the global mode", Call("GET", "/mode"), 200, {"mode": "READWRITE"}),
    Example("GET /config: the global level", Call("GET", "/config"), 200, {"compatibilityLevel": "BACKWARD"}),
    Example(
        "GET on an unknown path: 404 HTTP 404 Not Found",
        Call("GET", "/no/such/resource"),
        404,
        err(404, "HTTP 404 Not Found"),
        source="rest-utils WebApplicationExceptionMapper",
    ),
    Example(
        "a method the path does not have: 405",
        Call("PATCH", "/subjects"),
        405,
        err(405, "HTTP 405 Method Not Allowed"),
        source="rest-utils WebApplicationExceptionMapper",
    ),
    Example(
        "malformed JSON: 400 with error_code 400",
        Call("POST", "/subjects/{s}/versions", b'{"schema": '),
        400,
        err(400),
        source="rest-utils JsonParseExceptionMapper",
    ),
    Example(
        "an unsupported request content type: 415",
        Call("POST", "/subjects/{s}/versions", json.dumps({"schema": STRING}).encode(), content_type="text/plain"),
        415,
        err(415, "HTTP 415 Unsupported Media Type"),
        source="rest-utils WebApplicationExceptionMapper (Jersey's @Consumes)",
    ),
    Example(
        "application/json bodies are accepted",
        Call(
            "POST", "/subjects/{s}/versions", json.dumps({"schema": STRING}).encode(), content_type="application/json"
        ),
        200,
        {"id": ANY_INT},
        extra_keys=ID_EXTRAS,
        source="api.html, Content Types",
    ),
    Example(
        "application/octet-stream bodies are accepted (the docs' compatibility content type)",
        Call(
            "POST",
            "/subjects/{s}/versions",
            json.dumps({"schema": STRING}).encode(),
            content_type="application/octet-stream",
        ),
        200,
        {"id": ANY_INT},
        extra_keys=ID_EXTRAS,
        source="api.html, Content Types",
    ),
    Example(
        "application/vnd.schemaregistry+json bodies are accepted",
        Call(
            "POST",
            "/subjects/{s}/versions",
            json.dumps({"schema": STRING}).encode(),
            content_type="application/vnd.schemaregistry+json",
        ),
        200,
        {"id": ANY_INT},
        extra_keys=ID_EXTRAS,
        source="api.html, Content Types",
    ),
    Example(
        "a subject name with spaces and a colon, URL-encoded",
        Call("GET", "/subjects/{s}%3Ax%20y/versions"),
        200,
        [1],
        stage=(register("{s}%3Ax%20y", V1),),
    ),
    Example(
        "Python-style booleans in queries (True/False, as confluent-kafka sends them)",
        post("/subjects/{s}?normalize=False&deleted=True", V1),
        200,
        {"subject": "{s}", "id": Ref("id"), "version": 1, "schema": canonical("{rec}")},
        stage=(register("{s}", V1),),
        source="confluent_kafka/schema_registry/_sync/schema_registry_client.py lookup_schema",
    ),
]


class Session:
    """One test's requests: ``{s}``/``{s2}``/``{rec}`` names and the ids its registrations answered."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        assert parsed.hostname and parsed.port, url
        self.host, self.port = parsed.hostname, parsed.port
        hexes = uuid.uuid4().hex
        self.names = {"{s}": f"conf-{hexes[:8]}", "{s2}": f"conf-{hexes[8:16]}", "{rec}": f"test_{hexes[16:24]}"}
        self.ids: dict[str, int] = {}

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            for token, name in self.names.items():
                value = value.replace(token, name)
            for key, schema_id in self.ids.items():
                value = value.replace("{" + key + "}", str(schema_id))
            return value
        if isinstance(value, bytes):
            return self.fill(value.decode()).encode()
        if isinstance(value, dict):
            return {self.fill(k): self.fill(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.fill(v) for v in value)
        if isinstance(value, Unordered):
            return Unordered(tuple(self.fill(v) for v in value.items))
        if isinstance(value, Raw):
            return Raw(self.fill(value.text))
        if isinstance(value, Prefix):
            return Prefix(self.fill(value.text))
        if isinstance(value, Ref):
            assert value.key in self.ids, f"the stage captured no {value.key!r} (captured: {self.ids})"
            return self.ids[value.key]
        return value

    def send(self, call: Call) -> tuple[int, str, bytes]:
        body = call.body
        payload_bytes = (
            None
            if body is None
            else self.fill(body)
            if isinstance(body, bytes)
            else json.dumps(self.fill(body)).encode()
        )
        headers = {"Accept": ACCEPT}
        if payload_bytes is not None:
            headers["Content-Type"] = call.content_type
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request(call.method, self.fill(call.path), body=payload_bytes, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type", ""), resp.read()
        finally:
            conn.close()

    def stage(self, call: Call) -> None:
        status, _, raw = self.send(call)
        assert 200 <= status < 300, f"stage {call.method} {self.fill(call.path)} -> {status} {raw!r}"
        answer = json.loads(raw) if raw else None
        if isinstance(answer, dict) and "id" in answer and call.method == "POST":
            self.ids[f"id{len(self.ids) + 1}" if self.ids else "id"] = answer["id"]


def mismatch(expected: Any, got: Any, where: str = "$", optional: frozenset[str] = OPTIONAL_KEYS) -> str | None:
    """Why ``got`` does not match ``expected`` (None: it matches); ``optional``: keys an object may also have."""
    if isinstance(expected, _Any):
        return None if expected.matches(got) else f"{where}: expected {expected!r}, got {got!r}"
    if isinstance(expected, Prefix):
        ok = isinstance(got, str) and got.startswith(expected.text)
        return None if ok else f"{where}: expected a string starting {expected.text!r}, got {got!r}"
    if isinstance(expected, NonEmptyStrings):
        ok = isinstance(got, list) and bool(got) and all(isinstance(m, str) and m for m in got)
        return None if ok else f"{where}: expected a non-empty list of strings, got {got!r}"
    if isinstance(expected, Unordered):
        if not isinstance(got, list) or len(got) != len(expected.items):
            return f"{where}: expected {list(expected.items)!r} in any order, got {got!r}"
        left = list(got)
        for item in expected.items:
            hit = next((i for i, g in enumerate(left) if mismatch(item, g) is None), None)
            if hit is None:
                return f"{where}: {item!r} missing from {got!r}"
            left.pop(hit)
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{where}: expected an object {expected!r}, got {got!r}"
        missing = expected.keys() - got.keys()
        extra = got.keys() - expected.keys() - optional
        if missing or extra:
            return f"{where}: keys differ (missing {sorted(missing)}, unexpected {sorted(extra)}) in {got!r}"
        for key, value in expected.items():
            why = mismatch(value, got[key], f"{where}.{key}")
            if why:
                return why
        return None
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return f"{where}: expected {expected!r}, got {got!r}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            why = mismatch(e, g, f"{where}[{i}]")
            if why:
                return why
        return None
    if type(expected) is not type(got) or expected != got:
        return f"{where}: expected {expected!r}, got {got!r}"
    return None


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_confluent_documented_example(registry_url: str, example: Example) -> None:
    session = Session(registry_url)
    for call in example.stage:
        session.stage(call)
    status, content_type, raw = session.send(example.call)
    request = f"{example.call.method} {session.fill(example.call.path)}"
    text = raw.decode("utf-8", "replace")
    assert status == example.status, f"{request}: status {status}, expected {example.status}; body {text}"
    assert content_type.split(";")[0].strip() == V1_JSON, f"{request}: Content-Type {content_type!r}"
    expected = session.fill(example.body)
    if isinstance(expected, Raw):
        assert text == expected.text, f"{request}: body {text!r}, expected {expected.text!r}"
        return
    try:
        got = json.loads(raw)
    except ValueError:
        pytest.fail(f"{request}: body is not JSON: {text!r}")
    why = mismatch(expected, got, optional=OPTIONAL_KEYS | example.extra_keys)
    assert why is None, f"{request}: {why}"


def test_global_config_and_mode_round_trip(registry_url: str) -> None:
    """PUT /config and PUT /mode echo the request; GET answers compatibilityLevel / mode; put back after."""
    session = Session(registry_url)

    def ask(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, _, raw = session.send(Call(method, path, body))
        return status, json.loads(raw)

    try:
        assert ask("PUT", "/config", {"compatibility": "FULL"}) == (200, {"compatibility": "FULL"})
        status, body = ask("GET", "/config")
        assert (status, mismatch({"compatibilityLevel": "FULL"}, body)) == (200, None), body
        session.stage(register("{s}", V1))
        # FULL: a field added with a default is both ways compatible; a field removed without one is not.
        assert ask("POST", "/compatibility/subjects/{s}/versions/latest", {"schema": V2})[1]["is_compatible"] is True
        status, body = ask("PUT", "/config", {"compatibility": "sideways"})
        assert (status, body.get("error_code")) == (422, 42203), body
        # DELETE /config answers the level it had and reverts to the default (schema.registry.compatibility.level)
        status, body = ask("DELETE", "/config")
        assert (status, mismatch({"compatibilityLevel": "FULL"}, body)) == (200, None), body
        status, body = ask("GET", "/config")
        assert (status, mismatch({"compatibilityLevel": "BACKWARD"}, body)) == (200, None), body
        assert ask("PUT", "/mode", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
        assert ask("GET", "/mode") == (200, {"mode": "READONLY"})
        status, body = ask("POST", "/subjects/{s}/versions", {"schema": V2})
        assert (status, body.get("error_code")) == (422, 42205), body
    finally:
        ask("PUT", "/mode", {"mode": "READWRITE"})
        ask("PUT", "/config", {"compatibility": "BACKWARD"})
    assert ask("GET", "/mode") == (200, {"mode": "READWRITE"})
    status, body = ask("GET", "/config")
    assert (status, mismatch({"compatibilityLevel": "BACKWARD"}, body)) == (200, None), body


def test_metadata_id_names_the_kafka_cluster(registry_url: str) -> None:
    """GET /v1/metadata/id: ``{"scope": {"path": [], "clusters": {"kafka-cluster": <id>, ...}}}``."""
    status, content_type, raw = Session(registry_url).send(Call("GET", "/v1/metadata/id"))
    assert status == 200, raw
    body = json.loads(raw)
    clusters = body.get("scope", {}).get("clusters", {})
    assert isinstance(clusters.get("kafka-cluster"), str) and clusters["kafka-cluster"], body
    assert clusters.get("schema-registry-cluster") == "schema-registry", body


def test_contexts_lists_the_default_context(registry_url: str) -> None:
    """GET /contexts: a JSON list of context names with the default context in it."""
    status, _, raw = Session(registry_url).send(Call("GET", "/contexts"))
    assert status == 200, raw
    body = json.loads(raw)
    assert isinstance(body, list) and body and all(isinstance(c, str) for c in body), body
    assert body[0] in (".", ":.:"), body
