"""Confluent's REST paths, parameters and bodies mapped onto the registry's operations, against a fake registry that
records each call and answers canned values (or raises the RegistryError a test gives it)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import pytest

from broker.schema_registry import errors
from broker.schema_registry.errors import RegistryError
from broker.schema_registry.http_server import HttpRequest, HttpResponse
from broker.schema_registry.model import RegisteredSchema
from broker.schema_registry.routes import RegistryRoutes
from spark_kafkalog.schemas import ParsedSchema, SchemaReference


class TextSchema(ParsedSchema):
    """A stand-in schema: canonical = the text; ``formatted("upper")`` upper-cases it."""

    def __init__(self, text: str, schema_type: str = "AVRO", refs: tuple[SchemaReference, ...] = ()) -> None:
        self._text, self._refs = text, refs
        self.schema_type = schema_type  # type: ignore[misc]  # a ClassVar in real schemas; per instance here

    canonical = property(lambda self: self._text)
    references = property(lambda self: self._refs)
    name = property(lambda self: None)

    def normalized(self) -> ParsedSchema:
        return self

    def is_backward_compatible(self, previous: ParsedSchema) -> list[str]:
        return []

    def formatted(self, fmt: str | None = None) -> str:
        return self._text.upper() if fmt == "upper" else self._text


REF = SchemaReference("other.proto", "other", 1)
V1 = RegisteredSchema("s", 1, 7, TextSchema('"string"'))
PROTO = RegisteredSchema("p", 2, 8, TextSchema("syntax = 'proto3';", "PROTOBUF", (REF,)))


class FakeRegistry:
    """Records ``(operation, args, kwargs)``; answers from ``answers`` or raises ``error``."""

    answers: ClassVar[dict[str, Any]] = {
        "schema_types": ["JSON", "PROTOBUF", "AVRO"],
        "schemas": [V1, PROTO],
        "schema_by_id": PROTO,
        "subject_versions_by_id": [("s", 1), ("t", 3), ("s", 2)],
        "subjects": ["s", "t"],
        "versions": [1, 2],
        "get_version": V1,
        "referenced_by": [9, 10],
        "register": V1,
        "lookup": V1,
        "delete_subject": [1, 2],
        "delete_version": 2,
        "test_compatibility": [],
        "get_config": {"compatibilityLevel": "BACKWARD"},
        "set_config": {"compatibility": "FULL"},
        "delete_config": {"compatibilityLevel": "NONE"},
        "get_mode": "READWRITE",
        "set_mode": "IMPORT",
        "delete_mode": "READWRITE",
    }

    def __init__(self, error: RegistryError | None = None, **answers: Any) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []
        self.error = error
        self.overrides = answers

    def __getattr__(self, operation: str):
        if operation not in self.answers:
            raise AttributeError(operation)

        async def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((operation, args, kwargs))
            if self.error is not None:
                raise self.error
            return self.overrides.get(operation, self.answers[operation])

        return call


def request(
    registry: Any, method: str, target: str, body: Any = None, content_type: str | None = None
) -> tuple[HttpResponse, Any]:
    headers = {}
    raw = b""
    if body is not None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["content-type"] = content_type or "application/vnd.schemaregistry.v1+json"
    routes = RegistryRoutes(registry, cluster_id="cluster-1")
    response = asyncio.run(routes(HttpRequest(method, target, "HTTP/1.1", headers, raw)))
    ctype = dict((k.lower(), v) for k, v in response.headers).get("content-type")
    try:
        decoded = json.loads(response.body) if response.body else None
    except ValueError:
        decoded = response.body.decode()
    if response.body:
        assert ctype == "application/vnd.schemaregistry.v1+json"
    return response, decoded


SCHEMA_BODY = {"schema": '"string"'}

# (method, target, body, operation, args, kwargs, status, answer)
CASES = [
    ("GET", "/", None, None, (), {}, 200, {}),
    ("GET", "/schemas/types", None, "schema_types", (), {}, 200, ["JSON", "PROTOBUF", "AVRO"]),
    (
        "GET",
        "/schemas?subjectPrefix=s&deleted=TRUE&latestOnly=true&offset=1&limit=5",
        None,
        "schemas",
        (),
        {"subject_prefix": "s", "deleted": True, "latest_only": True, "offset": 1, "limit": 5},
        200,
        [V1.to_json(), PROTO.to_json()],
    ),
    (
        "GET",
        "/schemas/ids/8",
        None,
        "schema_by_id",
        (8,),
        {"subject": None},
        200,
        {"schemaType": "PROTOBUF", "references": [REF.to_json()], "schema": "syntax = 'proto3';"},
    ),
    (
        "GET",
        "/schemas/ids/8?subject=p&format=upper",
        None,
        "schema_by_id",
        (8,),
        {"subject": "p"},
        200,
        {"schemaType": "PROTOBUF", "references": [REF.to_json()], "schema": "SYNTAX = 'PROTO3';"},
    ),
    ("GET", "/schemas/ids/8/schema", None, "schema_by_id", (8,), {"subject": None}, 200, "syntax = 'proto3';"),
    (
        "GET",
        "/schemas/ids/8/subjects",
        None,
        "subject_versions_by_id",
        (8,),
        {"subject": None, "deleted": False},
        200,
        ["s", "t"],
    ),
    (
        "GET",
        "/schemas/ids/8/versions?deleted=true",
        None,
        "subject_versions_by_id",
        (8,),
        {"subject": None, "deleted": True},
        200,
        [{"subject": "s", "version": 1}, {"subject": "t", "version": 3}, {"subject": "s", "version": 2}],
    ),
    (
        "GET",
        "/subjects",
        None,
        "subjects",
        (),
        {"prefix": "", "deleted": False, "deleted_only": False},
        200,
        ["s", "t"],
    ),
    (
        "GET",
        "/subjects?subjectPrefix=x&deletedOnly=true",
        None,
        "subjects",
        (),
        {"prefix": "x", "deleted": False, "deleted_only": True},
        200,
        ["s", "t"],
    ),
    (
        "GET",
        "/subjects/a%2Fb/versions",
        None,
        "versions",
        ("a/b",),
        {"deleted": False, "deleted_only": False},
        200,
        [1, 2],
    ),
    ("GET", "/subjects/s/versions/latest", None, "get_version", ("s", "latest"), {"deleted": False}, 200, V1.to_json()),
    ("GET", "/subjects/s/versions/-1", None, "get_version", ("s", "latest"), {"deleted": False}, 200, V1.to_json()),
    ("GET", "/subjects/s/versions/1?deleted=true", None, "get_version", ("s", 1), {"deleted": True}, 200, V1.to_json()),
    ("GET", "/subjects/s/versions/1/schema", None, "get_version", ("s", 1), {"deleted": False}, 200, "string"),
    ("GET", "/subjects/s/versions/1/referencedby", None, "referenced_by", ("s", 1), {}, 200, [9, 10]),
    ("GET", "/subjects/s/metadata", None, "get_version", ("s", "latest"), {"deleted": False}, 200, V1.to_json()),
    (
        "POST",
        "/subjects/s/versions?normalize=False",
        SCHEMA_BODY,
        "register",
        ("s", None, '"string"', []),
        {"normalize": False, "schema_id": None, "version": None},
        200,
        {"id": 7, "version": 1},
    ),
    (
        "POST",
        "/subjects/s/versions?normalize=true",
        {"schema": "x", "schemaType": "protobuf", "references": [REF.to_json()], "id": 100, "version": 4},
        "register",
        ("s", "PROTOBUF", "x", [REF]),
        {"normalize": True, "schema_id": 100, "version": 4},
        200,
        {"id": 7, "version": 1},
    ),
    (
        "POST",
        "/subjects/s?normalize=False&deleted=True",
        SCHEMA_BODY,
        "lookup",
        ("s", None, '"string"', []),
        {"normalize": False, "deleted": True},
        200,
        V1.to_json(),
    ),
    ("DELETE", "/subjects/s", None, "delete_subject", ("s",), {"permanent": False}, 200, [1, 2]),
    ("DELETE", "/subjects/s?permanent=true", None, "delete_subject", ("s",), {"permanent": True}, 200, [1, 2]),
    ("DELETE", "/subjects/s/versions/2?permanent=true", None, "delete_version", ("s", 2), {"permanent": True}, 200, 2),
    (
        "POST",
        "/compatibility/subjects/s/versions/latest?normalize=False&verbose=False",
        SCHEMA_BODY,
        "test_compatibility",
        ("s", "latest", None, '"string"', []),
        {"normalize": False},
        200,
        {"is_compatible": True},
    ),
    (
        "POST",
        "/compatibility/subjects/s/versions?verbose=true",
        SCHEMA_BODY,
        "test_compatibility",
        ("s", None, None, '"string"', []),
        {"normalize": False},
        200,
        {"is_compatible": True, "messages": []},
    ),
    (
        "GET",
        "/config",
        None,
        "get_config",
        (None,),
        {"default_to_global": False},
        200,
        {"compatibilityLevel": "BACKWARD"},
    ),
    (
        "GET",
        "/config/s?defaultToGlobal=true",
        None,
        "get_config",
        ("s",),
        {"default_to_global": True},
        200,
        {"compatibilityLevel": "BACKWARD"},
    ),
    (
        "PUT",
        "/config",
        {"compatibility": "FULL"},
        "set_config",
        (None, {"compatibility": "FULL"}),
        {},
        200,
        {"compatibility": "FULL"},
    ),
    (
        "PUT",
        "/config/s",
        {"compatibility": "FULL"},
        "set_config",
        ("s", {"compatibility": "FULL"}),
        {},
        200,
        {"compatibility": "FULL"},
    ),
    ("DELETE", "/config/s", None, "delete_config", ("s",), {}, 200, {"compatibilityLevel": "NONE"}),
    ("DELETE", "/config", None, "delete_config", (None,), {}, 200, {"compatibilityLevel": "NONE"}),
    ("GET", "/mode", None, "get_mode", (None,), {"default_to_global": False}, 200, {"mode": "READWRITE"}),
    (
        "PUT",
        "/mode?force=true",
        {"mode": "IMPORT"},
        "set_mode",
        (None, "IMPORT"),
        {"force": True},
        200,
        {"mode": "IMPORT"},
    ),
    ("PUT", "/mode/s", {"mode": "IMPORT"}, "set_mode", ("s", "IMPORT"), {"force": False}, 200, {"mode": "IMPORT"}),
    (
        "GET",
        "/mode/s?defaultToGlobal=true",
        None,
        "get_mode",
        ("s",),
        {"default_to_global": True},
        200,
        {"mode": "READWRITE"},
    ),
    ("DELETE", "/mode/s", None, "delete_mode", ("s",), {}, 200, {"mode": "READWRITE"}),
    ("GET", "/contexts", None, None, (), {}, 200, ["."]),
    (
        "GET",
        "/v1/metadata/id",
        None,
        None,
        (),
        {},
        200,
        {
            "scope": {
                "path": [],
                "clusters": {"kafka-cluster": "cluster-1", "schema-registry-cluster": "schema-registry"},
            }
        },
    ),
]


@pytest.mark.parametrize(("method", "target", "body", "operation", "args", "kwargs", "status", "answer"), CASES)
def test_each_endpoint_calls_its_operation_and_answers_its_json(
    method, target, body, operation, args, kwargs, status, answer
):
    registry = FakeRegistry()
    response, decoded = request(registry, method, target, body)
    assert (response.status, decoded) == (status, answer)
    expected = [] if operation is None else [(operation, args, kwargs)]
    assert registry.calls == expected


def test_compatibility_messages_make_it_incompatible_and_are_listed_with_verbose():
    registry = FakeRegistry(test_compatibility=["{errorType:'TYPE_MISMATCH'}"])
    _, quiet = request(registry, "POST", "/compatibility/subjects/s/versions/1", SCHEMA_BODY)
    _, verbose = request(registry, "POST", "/compatibility/subjects/s/versions/1?verbose=true", SCHEMA_BODY)
    assert quiet == {"is_compatible": False}
    assert verbose == {"is_compatible": False, "messages": ["{errorType:'TYPE_MISMATCH'}"]}


@pytest.mark.parametrize(
    "error",
    [
        errors.subject_not_found("s"),
        errors.version_not_found(3),
        errors.incompatible_schema("s", ["x"]),
        errors.invalid_schema("bad"),
        errors.subject_level_compatibility_not_configured("s"),
    ],
)
def test_registry_errors_are_answered_with_their_status_code_and_message(error):
    response, decoded = request(FakeRegistry(error), "POST", "/subjects/s/versions", SCHEMA_BODY)
    assert response.status == error.http_status
    assert decoded == {"error_code": error.error_code, "message": error.message}


@pytest.mark.parametrize(
    ("method", "target", "body", "content_type", "status", "code"),
    [
        ("GET", "/nothing/here", None, None, 404, 404),
        ("GET", "/subjects/s/versions/1/extra", None, None, 404, 404),
        ("GET", "/schemas/ids/abc", None, None, 404, 404),
        ("PATCH", "/subjects", None, None, 405, 405),
        ("POST", "/subjects/s/versions", b"{not json", None, 400, 400),
        ("POST", "/subjects/s/versions", [1, 2], None, 400, 400),
        ("POST", "/subjects/s/versions", {"schema": {"type": "record"}}, None, 400, 400),
        ("POST", "/subjects/s/versions", {"schema": "x", "id": "seven"}, None, 400, 400),
        ("POST", "/subjects/s/versions", {"schema": "x", "references": {"a": 1}}, None, 400, 400),
        ("POST", "/subjects/s/versions", {"schema": "x", "references": [{"name": "a"}]}, None, 422, 42201),
        ("POST", "/subjects/s/versions", {}, None, 422, 42201),
        ("POST", "/subjects/s/versions", {"schema": ""}, None, 422, 42201),
        ("POST", "/subjects/s/versions", SCHEMA_BODY, "text/plain", 415, 415),
        ("GET", "/subjects/s/versions/abc", None, None, 422, 42202),
        ("GET", "/subjects/s/versions/0", None, None, 422, 42202),
        ("GET", "/subjects/s/versions/2147483648", None, None, 422, 42202),
        ("GET", "/subjects?deleted=maybe", None, None, 400, 400),
        ("GET", "/schemas?offset=x", None, None, 400, 400),
        ("PUT", "/mode", {"mode": 3}, None, 422, 42204),
        ("PUT", "/config", "FULL", None, 400, 400),
    ],
)
def test_bad_requests_are_refused_before_the_registry_with_confluents_codes(
    method, target, body, content_type, status, code
):
    registry = FakeRegistry()
    response, decoded = request(registry, method, target, body, content_type)
    assert (response.status, decoded["error_code"]) == (status, code)
    assert registry.calls == []


def test_unknown_paths_answer_confluents_404_body():
    _, decoded = request(FakeRegistry(), "GET", "/unknown")
    assert decoded == {"error_code": 404, "message": "HTTP 404 Not Found"}


def test_options_answers_the_methods_of_a_path_and_405_names_them():
    options, _ = request(FakeRegistry(), "OPTIONS", "/config/s")
    refused, _ = request(FakeRegistry(), "POST", "/config/s")
    assert options.status == 200
    assert dict(options.headers)["Allow"] == "DELETE, GET, HEAD, OPTIONS, PUT"
    assert refused.status == 405
    assert dict(refused.headers)["Allow"] == "DELETE, GET, HEAD, OPTIONS, PUT"


@pytest.mark.parametrize(
    "content_type",
    [
        "application/vnd.schemaregistry.v1+json",
        "application/vnd.schemaregistry+json",
        "application/json; charset=utf-8",
    ],
)
def test_every_json_content_type_is_accepted_for_bodies(content_type):
    response, _ = request(FakeRegistry(), "POST", "/subjects/s/versions", SCHEMA_BODY, content_type)
    assert response.status == 200


def test_subject_metadata_with_a_metadata_filter_is_not_found():
    registry = FakeRegistry()
    response, decoded = request(registry, "GET", "/subjects/s/metadata?key=owner&value=me")
    assert (response.status, decoded["error_code"]) == (404, 40403)
