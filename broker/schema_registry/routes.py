"""Confluent Schema Registry's REST API mapped onto ``SchemaRegistry`` (``broker.schema_registry.registry``).

``RegistryRoutes(registry, *, cluster_id="")`` is the HTTP handler (``await routes(request) -> HttpResponse``) of
``broker.schema_registry.http_server``. Paths, parameters and bodies are Confluent's (docs/schema-registry.md
lists them); path segments are percent-decoded (``/subjects/a%2Fb`` names subject ``a/b``); boolean query
parameters accept any case (confluent-kafka sends ``normalize=False``).

Answers are JSON with ``Content-Type: application/vnd.schemaregistry.v1+json`` (the raw-schema paths
``.../schema`` answer the schema text itself, as Confluent does). Errors: the registry's ``RegistryError``
(status, ``{"error_code", "message"}``); an unknown path 404 ``{"error_code":404,"message":"HTTP 404 Not Found"}``;
a known path with another method 405; a body that is not JSON or of the wrong shape 400 (error code 400, as
Confluent's Jackson mapping answers); a body with a content type other than JSON 415; ``OPTIONS`` answers 200
with ``Allow``.

Concurrency: one instance per registry, used on the registry's event loop; keeps no per-request state.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.schemas import SchemaReference

from . import errors
from .errors import RegistryError
from .http_server import HttpRequest, HttpResponse

__all__ = ["RegistryRoutes"]

log = logging.getLogger("kafkalog.schema_registry.routes")

JSON_TYPES = ("application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json", "application/json")
_MAX_VERSION = 2**31 - 1

Params = dict[str, str]
Action = Callable[[HttpRequest, Params], Awaitable[HttpResponse]]


@dataclass(frozen=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    action: str


def _route(method: str, template: str, action: str) -> _Route:
    """``/subjects/{subject}/versions`` -> a pattern over the decoded segments joined with NUL."""
    parts = [p for p in template.split("/") if p]
    names = tuple(p[1:-1] for p in parts if p.startswith("{"))
    regex = "\x00".join("([^\x00]*)" if p.startswith("{") else re.escape(p) for p in parts)
    return _Route(method, re.compile(regex), names, action)


_ROUTES: tuple[_Route, ...] = (
    _route("GET", "/", "root"),
    _route("GET", "/schemas/types", "schema_types"),
    _route("GET", "/schemas", "schemas"),
    _route("GET", "/schemas/ids/{id}", "schema_by_id"),
    _route("GET", "/schemas/ids/{id}/schema", "raw_schema_by_id"),
    _route("GET", "/schemas/ids/{id}/subjects", "subjects_by_id"),
    _route("GET", "/schemas/ids/{id}/versions", "versions_by_id"),
    _route("GET", "/subjects", "subjects"),
    _route("GET", "/subjects/{subject}/versions", "versions"),
    _route("POST", "/subjects/{subject}/versions", "register"),
    _route("GET", "/subjects/{subject}/versions/{version}", "get_version"),
    _route("DELETE", "/subjects/{subject}/versions/{version}", "delete_version"),
    _route("GET", "/subjects/{subject}/versions/{version}/schema", "raw_version"),
    _route("GET", "/subjects/{subject}/versions/{version}/referencedby", "referenced_by"),
    _route("GET", "/subjects/{subject}/metadata", "latest_with_metadata"),
    _route("POST", "/subjects/{subject}", "lookup"),
    _route("DELETE", "/subjects/{subject}", "delete_subject"),
    _route("POST", "/compatibility/subjects/{subject}/versions/{version}", "compatibility"),
    _route("POST", "/compatibility/subjects/{subject}/versions", "compatibility_all"),
    _route("GET", "/config", "get_config"),
    _route("PUT", "/config", "set_config"),
    _route("DELETE", "/config", "delete_config"),
    _route("GET", "/config/{subject}", "get_config"),
    _route("PUT", "/config/{subject}", "set_config"),
    _route("DELETE", "/config/{subject}", "delete_config"),
    _route("GET", "/mode", "get_mode"),
    _route("PUT", "/mode", "set_mode"),
    _route("GET", "/mode/{subject}", "get_mode"),
    _route("PUT", "/mode/{subject}", "set_mode"),
    _route("DELETE", "/mode/{subject}", "delete_mode"),
    _route("GET", "/contexts", "contexts"),
    _route("GET", "/v1/metadata/id", "metadata_id"),
    _route("GET", "/v1/metadata/version", "metadata_version"),
)


def _not_found() -> HttpResponse:
    return HttpResponse.error(404, 404, "HTTP 404 Not Found")


def _bad_request(message: str) -> RegistryError:
    return RegistryError(400, 400, message)


def _bool(request: HttpRequest, name: str, default: bool = False) -> bool:
    value = request.param(name)
    if value is None or value == "":
        return default
    low = value.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    raise _bad_request(f"Query parameter {name}={value!r}: expected true or false")


def _int(request: HttpRequest, name: str, default: int) -> int:
    value = request.param(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise _bad_request(f"Query parameter {name}={value!r}: expected an integer") from None


def _schema_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _not_found_error() from None
    return value


def _not_found_error() -> RegistryError:
    return RegistryError(404, 404, "HTTP 404 Not Found")


def _version(text: str) -> int | str:
    """A path version: ``latest`` (any case), ``-1`` (latest) or 1..2^31-1; 42202 otherwise."""
    if text.lower() == "latest":
        return "latest"
    try:
        value = int(text)
    except ValueError:
        raise errors.invalid_version(text) from None
    if value == -1:
        return "latest"
    if not 1 <= value <= _MAX_VERSION:
        raise errors.invalid_version(text)
    return value


def _references(raw: Any) -> list[SchemaReference]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _bad_request("references: expected a list of {name, subject, version}")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise _bad_request("references: expected a list of {name, subject, version}")
        try:
            out.append(SchemaReference.from_json(item))
        except (KeyError, TypeError, ValueError) as e:
            raise errors.invalid_schema(f"reference {item!r}: {e}") from None
    return out


@dataclass(frozen=True)
class SchemaRequest:
    """The body of register, lookup and compatibility requests (Confluent's ``RegisterSchemaRequest``)."""

    schema_type: str | None
    schema: str
    references: list[SchemaReference]
    id: int | None = None
    version: int | None = None

    @classmethod
    def from_json(cls, body: Any) -> SchemaRequest:
        if not isinstance(body, dict):
            raise _bad_request("Expected a JSON object {schema, schemaType?, references?}")
        schema = body.get("schema")
        if schema is None or schema == "":
            raise errors.invalid_schema("Empty schema")
        if not isinstance(schema, str):
            raise _bad_request(f"schema: expected a string (the schema's text), got {type(schema).__name__}")
        schema_type = body.get("schemaType")
        if schema_type is not None and not isinstance(schema_type, str):
            raise _bad_request("schemaType: expected AVRO, JSON or PROTOBUF")
        ident, version = body.get("id"), body.get("version")
        for name, value in (("id", ident), ("version", version)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise _bad_request(f"{name}: expected an integer")
        return cls(
            schema_type=schema_type.upper() if schema_type else None,
            schema=schema,
            references=_references(body.get("references")),
            id=ident if ident is not None and ident > 0 else None,
            version=version if version is not None and version > 0 else None,
        )


class RegistryRoutes:
    """The REST handler over one ``SchemaRegistry`` (see the module docstring). ``cluster_id``: the Kafka
    cluster's id, answered by ``GET /v1/metadata/id``."""

    def __init__(self, registry: Any, *, cluster_id: str = "", version: str = "") -> None:
        self.registry = registry
        self.cluster_id = cluster_id
        self.version = version

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        segments = request.segments
        key = "\x00".join(segments)
        allowed: list[str] = []
        for route in _ROUTES:
            match = route.pattern.fullmatch(key)
            if match is None:
                continue
            if route.method != request.method:
                allowed.append(route.method)
                continue
            params = dict(zip(route.names, match.groups(), strict=True))
            action: Action = getattr(self, "_" + route.action)
            try:
                return await action(request, params)
            except RegistryError as e:
                return HttpResponse.error(e.http_status, e.error_code, e.message)
        if not allowed:
            return _not_found()
        allow = ", ".join(sorted({*allowed, "OPTIONS"} | ({"HEAD"} if "GET" in allowed else set())))
        if request.method == "OPTIONS":
            return HttpResponse(200, b"", [("Allow", allow)])
        return HttpResponse.error(405, 405, "HTTP 405 Method Not Allowed", [("Allow", allow)])

    # -- bodies -------------------------------------------------------------------------------------
    @staticmethod
    def _body(request: HttpRequest) -> Any:
        ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype and ctype not in JSON_TYPES and ctype != "application/octet-stream":
            raise RegistryError(415, 415, "HTTP 415 Unsupported Media Type")
        try:
            return json.loads(request.body or b"null")
        except (ValueError, UnicodeDecodeError) as e:
            raise _bad_request(f"Request body is not JSON: {e}") from None

    # -- server -------------------------------------------------------------------------------------
    async def _root(self, request: HttpRequest, p: Params) -> HttpResponse:
        return HttpResponse.json(200, {})

    async def _schema_types(self, request: HttpRequest, p: Params) -> HttpResponse:
        return HttpResponse.json(200, list(await self.registry.schema_types()))

    async def _contexts(self, request: HttpRequest, p: Params) -> HttpResponse:
        return HttpResponse.json(200, ["."])

    async def _metadata_id(self, request: HttpRequest, p: Params) -> HttpResponse:
        clusters = {"kafka-cluster": self.cluster_id, "schema-registry-cluster": "schema-registry"}
        return HttpResponse.json(200, {"scope": {"path": [], "clusters": clusters}})

    async def _metadata_version(self, request: HttpRequest, p: Params) -> HttpResponse:
        return HttpResponse.json(200, {"version": self.version, "commitId": ""})

    # -- schemas ------------------------------------------------------------------------------------
    async def _schemas(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.schemas(
            subject_prefix=request.param("subjectPrefix", "") or "",
            deleted=_bool(request, "deleted"),
            latest_only=_bool(request, "latestOnly"),
            offset=_int(request, "offset", 0),
            limit=_int(request, "limit", -1),
        )
        return HttpResponse.json(200, [s.to_json() for s in found])

    async def _schema_by_id(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.schema_by_id(_schema_id(p["id"]), subject=request.param("subject"))
        schema = found.schema
        body: dict[str, Any] = {}
        if schema.schema_type != "AVRO":
            body["schemaType"] = schema.schema_type
        if schema.references:
            body["references"] = [r.to_json() for r in schema.references]
        body["schema"] = schema.formatted(request.param("format"))
        return HttpResponse.json(200, body)

    async def _raw_schema_by_id(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.schema_by_id(_schema_id(p["id"]), subject=request.param("subject"))
        return _raw(found.schema.formatted(request.param("format")))

    async def _subjects_by_id(self, request: HttpRequest, p: Params) -> HttpResponse:
        pairs = await self.registry.subject_versions_by_id(
            _schema_id(p["id"]), subject=request.param("subject"), deleted=_bool(request, "deleted")
        )
        return HttpResponse.json(200, list(dict.fromkeys(s for s, _ in pairs)))

    async def _versions_by_id(self, request: HttpRequest, p: Params) -> HttpResponse:
        pairs = await self.registry.subject_versions_by_id(
            _schema_id(p["id"]), subject=request.param("subject"), deleted=_bool(request, "deleted")
        )
        return HttpResponse.json(200, [{"subject": s, "version": v} for s, v in pairs])

    # -- subjects -----------------------------------------------------------------------------------
    async def _subjects(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.subjects(
            prefix=request.param("subjectPrefix", "") or "",
            deleted=_bool(request, "deleted"),
            deleted_only=_bool(request, "deletedOnly"),
        )
        return HttpResponse.json(200, list(found))

    async def _versions(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.versions(
            p["subject"], deleted=_bool(request, "deleted"), deleted_only=_bool(request, "deletedOnly")
        )
        return HttpResponse.json(200, list(found))

    async def _get_version(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.get_version(p["subject"], _version(p["version"]), deleted=_bool(request, "deleted"))
        return HttpResponse.json(200, found.to_json(request.param("format")))

    async def _latest_with_metadata(self, request: HttpRequest, p: Params) -> HttpResponse:
        """Confluent's ``GET /subjects/{s}/metadata?key=..&value=..``: kafkalog keeps no schema metadata, so
        the latest version answers when no metadata is asked for, else 40403."""
        if request.query.get("key") or request.query.get("value"):
            raise errors.schema_not_found()
        found = await self.registry.get_version(p["subject"], "latest", deleted=_bool(request, "deleted"))
        return HttpResponse.json(200, found.to_json(request.param("format")))

    async def _raw_version(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.get_version(p["subject"], _version(p["version"]), deleted=_bool(request, "deleted"))
        return _raw(found.schema.formatted(request.param("format")))

    async def _referenced_by(self, request: HttpRequest, p: Params) -> HttpResponse:
        ids = await self.registry.referenced_by(p["subject"], _version(p["version"]))
        return HttpResponse.json(200, list(ids))

    async def _register(self, request: HttpRequest, p: Params) -> HttpResponse:
        body = SchemaRequest.from_json(self._body(request))
        found = await self.registry.register(
            p["subject"],
            body.schema_type,
            body.schema,
            body.references,
            normalize=_bool(request, "normalize"),
            schema_id=body.id,
            version=body.version,
        )
        return HttpResponse.json(200, {"id": found.id, "version": found.version})

    async def _lookup(self, request: HttpRequest, p: Params) -> HttpResponse:
        body = SchemaRequest.from_json(self._body(request))
        found = await self.registry.lookup(
            p["subject"],
            body.schema_type,
            body.schema,
            body.references,
            normalize=_bool(request, "normalize"),
            deleted=_bool(request, "deleted"),
        )
        return HttpResponse.json(200, found.to_json(request.param("format")))

    async def _delete_subject(self, request: HttpRequest, p: Params) -> HttpResponse:
        versions = await self.registry.delete_subject(p["subject"], permanent=_bool(request, "permanent"))
        return HttpResponse.json(200, list(versions))

    async def _delete_version(self, request: HttpRequest, p: Params) -> HttpResponse:
        version = await self.registry.delete_version(
            p["subject"], _version(p["version"]), permanent=_bool(request, "permanent")
        )
        return HttpResponse.json(200, version)

    # -- compatibility ------------------------------------------------------------------------------
    async def _compatibility(self, request: HttpRequest, p: Params) -> HttpResponse:
        return await self._test(request, p["subject"], _version(p["version"]))

    async def _compatibility_all(self, request: HttpRequest, p: Params) -> HttpResponse:
        return await self._test(request, p["subject"], None)

    async def _test(self, request: HttpRequest, subject: str, version: int | str | None) -> HttpResponse:
        body = SchemaRequest.from_json(self._body(request))
        messages = await self.registry.test_compatibility(
            subject,
            version,
            body.schema_type,
            body.schema,
            body.references,
            normalize=_bool(request, "normalize"),
        )
        answer: dict[str, Any] = {"is_compatible": not messages}
        if _bool(request, "verbose"):
            answer["messages"] = list(messages)
        return HttpResponse.json(200, answer)

    # -- config and mode ----------------------------------------------------------------------------
    async def _get_config(self, request: HttpRequest, p: Params) -> HttpResponse:
        found = await self.registry.get_config(p.get("subject"), default_to_global=_bool(request, "defaultToGlobal"))
        return HttpResponse.json(200, found)

    async def _set_config(self, request: HttpRequest, p: Params) -> HttpResponse:
        body = self._body(request)
        if not isinstance(body, dict):
            raise _bad_request('Expected a JSON object {"compatibility": "<level>"}')
        return HttpResponse.json(200, await self.registry.set_config(p.get("subject"), body))

    async def _delete_config(self, request: HttpRequest, p: Params) -> HttpResponse:
        return HttpResponse.json(200, await self.registry.delete_config(p.get("subject")))

    async def _get_mode(self, request: HttpRequest, p: Params) -> HttpResponse:
        mode = await self.registry.get_mode(p.get("subject"), default_to_global=_bool(request, "defaultToGlobal"))
        return HttpResponse.json(200, {"mode": mode})

    async def _set_mode(self, request: HttpRequest, p: Params) -> HttpResponse:
        body = self._body(request)
        if not isinstance(body, dict) or not isinstance(body.get("mode"), str):
            raise errors.invalid_mode(body.get("mode") if isinstance(body, dict) else body)
        mode = await self.registry.set_mode(p.get("subject"), body["mode"], force=_bool(request, "force"))
        return HttpResponse.json(200, {"mode": mode})

    async def _delete_mode(self, request: HttpRequest, p: Params) -> HttpResponse:
        return HttpResponse.json(200, {"mode": await self.registry.delete_mode(p["subject"])})


def _raw(text: str) -> HttpResponse:
    """A raw schema answer: the text itself (Confluent answers it with the JSON content type)."""
    return HttpResponse(200, text.encode(), [("Content-Type", "application/vnd.schemaregistry.v1+json")])
