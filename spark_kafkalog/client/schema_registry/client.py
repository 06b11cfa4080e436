"""``SchemaRegistryClient``: a blocking client of Confluent Schema Registry's REST API, with caches.

Method names, arguments and results follow confluent-kafka's ``SchemaRegistryClient`` (so code written for
it runs against this one); the configuration is described in ``rest``. Requests (each a REST call)::

    register_schema(subject, schema)          POST   /subjects/{subject}/versions?normalize=
    get_schema(schema_id, subject_name, fmt)  GET    /schemas/ids/{id}?subject=&format=
    lookup_schema(subject, schema)            POST   /subjects/{subject}?normalize=&deleted=
    get_subjects()                            GET    /subjects
    get_versions(subject)                     GET    /subjects/{subject}/versions
    get_version(subject, version)             GET    /subjects/{subject}/versions/{version}
    get_latest_version(subject)               GET    /subjects/{subject}/versions/latest
    delete_subject / delete_version           DELETE /subjects/{subject}[/versions/{version}]?permanent=
    get/set_compatibility, get/set_config     GET/PUT /config[/{subject}]
    test_compatibility(subject, schema, v)    POST   /compatibility/subjects/{subject}/versions/{v}
    get_mode / set_mode                       GET/PUT /mode[/{subject}]

Caches (each an LRU of ``cache.capacity`` entries): schemas by id (never change), the id a schema got under a
subject (registration and lookup), versions by ``(subject, version)``, latest versions (until
``cache.latest.ttl.sec`` passes, or until ``clear_latest_caches``), and parsed schemas by id (``parsed``).
Deleting a subject or version drops what the client cached for it.

``parsed(schema_id)`` gives the ``spark_kafkalog.schemas.ParsedSchema`` of a registered schema, its references
fetched (``get_version(ref.subject, ref.version)``) and parsed first, recursively; ``parse(schema)`` does the
same for a ``Schema`` not registered yet.

Thread-safe: the caches are guarded by a lock and the transport keeps one connection per thread.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from spark_kafkalog.client.schema_registry.model import RegisteredSchema, Schema, SchemaRegistryError
from spark_kafkalog.client.schema_registry.rest import RestClient, RestConfig, path_of
from spark_kafkalog.schemas import InvalidSchemaError, ParsedSchema, parse_schema

__all__ = ["SchemaRegistryClient"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_MAX_REFERENCE_DEPTH = 32


class _Lru(Generic[K, V]):
    """A size-bounded mapping, least recently used out first, entries optionally expiring; thread-safe."""

    def __init__(self, capacity: int, ttl: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._data: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._capacity = capacity
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            if self._ttl is not None and self._clock() - entry[0] >= self._ttl:
                del self._data[key]
                return None
            self._data.move_to_end(key)
            return entry[1]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = (self._clock(), value)
            self._data.move_to_end(key)
            while len(self._data) > self._capacity:
                self._data.popitem(last=False)

    def drop(self, keep: Callable[[K], bool]) -> None:
        """Removes the entries whose key ``keep`` refuses."""
        with self._lock:
            for key in [k for k in self._data if not keep(k)]:
                del self._data[key]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class SchemaRegistryClient:
    """A client of one Schema Registry (several URLs of it: fail-over); see the module docstring.

    ``conf`` is confluent-kafka's configuration mapping (``{"url": "http://localhost:8081", ...}``) or just the
    URL string. Use as a context manager or call ``close()`` to close its connections."""

    def __init__(self, conf: Mapping[str, Any] | str) -> None:
        self._config = RestConfig.from_conf(conf)
        self._rest = RestClient(self._config)
        capacity = self._config.cache_capacity
        self._schemas: _Lru[tuple[int, str | None], Schema] = _Lru(capacity)
        self._ids: _Lru[tuple[str, Schema, bool], int] = _Lru(capacity)
        self._lookups: _Lru[tuple[str, Schema, bool, bool], RegisteredSchema] = _Lru(capacity)
        self._versions: _Lru[tuple[str, int, str | None], RegisteredSchema] = _Lru(capacity)
        self._latest: _Lru[tuple[str, str | None], RegisteredSchema] = _Lru(capacity, self._config.cache_latest_ttl_sec)
        self._parsed: _Lru[int, ParsedSchema] = _Lru(capacity)
        self._parsed_unregistered: _Lru[Schema, ParsedSchema] = _Lru(capacity)

    @property
    def urls(self) -> list[str]:
        """The registry's base URLs, without credentials."""
        return self._config.urls

    def __repr__(self) -> str:
        return f"SchemaRegistryClient(urls={self.urls!r})"

    def __enter__(self) -> SchemaRegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections (the client stays usable: a later call opens new ones)."""
        self._rest.close()

    def clear_latest_caches(self) -> None:
        """Forgets the cached latest versions (the next ``get_latest_version`` asks the registry)."""
        self._latest.clear()

    def clear_caches(self) -> None:
        """Forgets everything cached."""
        for cache in (self._schemas, self._ids, self._lookups, self._versions, self._latest, self._parsed):
            cache.clear()
        self._parsed_unregistered.clear()

    # --- schemas -------------------------------------------------------------------------------------

    def register_schema(self, subject_name: str, schema: Schema, normalize_schemas: bool = False) -> int:
        """Registers ``schema`` under ``subject_name`` (or finds it there) and returns its global id;
        ``SchemaRegistryError`` 409 when the subject's compatibility level refuses it, 42201 when invalid."""
        return self.register_schema_full_response(subject_name, schema, normalize_schemas).schema_id

    def register_schema_full_response(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> RegisteredSchema:
        """``register_schema`` with the registry's whole answer (``subject``/``version`` when it names them)."""
        key = (subject_name, schema, normalize_schemas)
        schema_id = self._ids.get(key)
        if schema_id is not None:
            return RegisteredSchema(schema_id, schema, subject_name, None)
        answer = self._rest.request(
            "POST",
            path_of("subjects", subject_name, "versions"),
            schema.to_dict(),
            {"normalize": normalize_schemas},
        )
        registered = RegisteredSchema.from_dict(_mapping(answer), schema)
        registered = RegisteredSchema(
            registered.schema_id, registered.schema, registered.subject or subject_name, registered.version
        )
        self._ids.put(key, registered.schema_id)
        if registered.schema.schema_str == schema.schema_str:
            self._schemas.put((registered.schema_id, None), schema)
        return registered

    def get_schema(self, schema_id: int, subject_name: str | None = None, fmt: str | None = None) -> Schema:
        """The schema with global id ``schema_id`` (``fmt``: the registry's ``?format=``, e.g. Protobuf's
        ``serialized``); ``SchemaRegistryError`` 40403 when there is none."""
        key = (schema_id, fmt)
        cached = self._schemas.get(key)
        if cached is not None:
            return cached
        query = {"subject": subject_name, "format": fmt}
        answer = self._rest.request("GET", path_of("schemas", "ids", schema_id), query=query)
        schema = Schema.from_dict(_mapping(answer))
        self._schemas.put(key, schema)
        return schema

    def get_schema_types(self) -> list[str]:
        """The schema types the registry serves (``["AVRO", "JSON", "PROTOBUF"]``)."""
        return list(self._rest.request("GET", "/schemas/types"))

    def get_subjects_by_schema_id(self, schema_id: int, deleted: bool = False) -> list[str]:
        """The subjects under which schema ``schema_id`` is registered."""
        return list(
            self._rest.request("GET", path_of("schemas", "ids", schema_id, "subjects"), query={"deleted": deleted})
        )

    def lookup_schema(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False, deleted: bool = False
    ) -> RegisteredSchema:
        """The version of ``subject_name`` holding ``schema``; ``SchemaRegistryError`` 40401 (no such subject)
        or 40403 (not registered there)."""
        key = (subject_name, schema, normalize_schemas, deleted)
        cached = self._lookups.get(key)
        if cached is not None:
            return cached
        answer = self._rest.request(
            "POST",
            path_of("subjects", subject_name),
            schema.to_dict(),
            {"normalize": normalize_schemas, "deleted": deleted},
        )
        found = RegisteredSchema.from_dict(_mapping(answer), schema)
        registered = RegisteredSchema(found.schema_id, schema, found.subject or subject_name, found.version)
        self._lookups.put(key, registered)
        return registered

    def parsed(self, schema_id: int) -> ParsedSchema:
        """The parsed schema with global id ``schema_id``, its references resolved through the registry;
        ``SchemaRegistryError`` when it is not there, ``InvalidSchemaError`` when it does not parse."""
        cached = self._parsed.get(schema_id)
        if cached is not None:
            return cached
        parsed = self._parse(self.get_schema(schema_id), 0)
        self._parsed.put(schema_id, parsed)
        return parsed

    def parse(self, schema: Schema) -> ParsedSchema:
        """``schema`` parsed, its references fetched from the registry and parsed first."""
        cached = self._parsed_unregistered.get(schema)
        if cached is not None:
            return cached
        parsed = self._parse(schema, 0)
        self._parsed_unregistered.put(schema, parsed)
        return parsed

    def _parse(self, schema: Schema, depth: int) -> ParsedSchema:
        if depth > _MAX_REFERENCE_DEPTH:
            raise InvalidSchemaError(f"schema references nest deeper than {_MAX_REFERENCE_DEPTH} (a cycle?)")
        resolved: dict[str, ParsedSchema] = {}
        for reference in schema.references:
            target = self.get_version(reference.subject, reference.version)
            parsed = self._parsed.get(target.schema_id)
            if parsed is None:
                parsed = self._parse(target.schema, depth + 1)
                self._parsed.put(target.schema_id, parsed)
            resolved[reference.name] = parsed
        return parse_schema(schema.schema_type, schema.schema_str, schema.references, resolved)

    # --- subjects and versions -----------------------------------------------------------------------

    def get_subjects(self, subject_prefix: str | None = None, deleted: bool = False) -> list[str]:
        """The registered subjects (with ``deleted``: soft-deleted ones too)."""
        query = {"subjectPrefix": subject_prefix, "deleted": deleted}
        return list(self._rest.request("GET", "/subjects", query=query))

    def get_versions(self, subject_name: str, deleted: bool = False) -> list[int]:
        """The versions of ``subject_name``, ascending; ``SchemaRegistryError`` 40401 when it has none."""
        return list(
            self._rest.request("GET", path_of("subjects", subject_name, "versions"), query={"deleted": deleted})
        )

    def get_version(
        self, subject_name: str, version: int | str, deleted: bool = False, fmt: str | None = None
    ) -> RegisteredSchema:
        """Version ``version`` (an int, or ``"latest"``) of ``subject_name``; 40401 / 40402 when missing."""
        if version == "latest" or version == -1:
            return self.get_latest_version(subject_name, fmt)
        key = (subject_name, int(version), fmt)
        cached = None if deleted else self._versions.get(key)
        if cached is not None:
            return cached
        answer = self._rest.request(
            "GET",
            path_of("subjects", subject_name, "versions", int(version)),
            query={"deleted": deleted, "format": fmt},
        )
        registered = RegisteredSchema.from_dict(_mapping(answer))
        if not deleted:
            self._versions.put(key, registered)
        return registered

    def get_latest_version(self, subject_name: str, fmt: str | None = None) -> RegisteredSchema:
        """The latest (not soft-deleted) version of ``subject_name``, cached (see ``cache.latest.ttl.sec``)."""
        key = (subject_name, fmt)
        cached = self._latest.get(key)
        if cached is not None:
            return cached
        answer = self._rest.request(
            "GET", path_of("subjects", subject_name, "versions", "latest"), query={"format": fmt}
        )
        registered = RegisteredSchema.from_dict(_mapping(answer))
        self._latest.put(key, registered)
        return registered

    def get_referenced_by(self, subject_name: str, version: int | str = "latest") -> list[int]:
        """The ids of the schemas that reference this version."""
        return list(self._rest.request("GET", path_of("subjects", subject_name, "versions", version, "referencedby")))

    def delete_subject(self, subject_name: str, permanent: bool = False) -> list[int]:
        """Soft-deletes ``subject_name`` (``permanent``: removes it for good, after a soft delete) and returns
        the versions deleted."""
        answer = self._rest.request("DELETE", path_of("subjects", subject_name), query={"permanent": permanent})
        self._forget(subject_name)
        return list(answer or [])

    def delete_version(self, subject_name: str, version: int | str, permanent: bool = False) -> int:
        """Deletes one version (soft, or ``permanent`` after a soft delete); returns its number."""
        answer = self._rest.request(
            "DELETE", path_of("subjects", subject_name, "versions", version), query={"permanent": permanent}
        )
        self._forget(subject_name)
        return int(answer)

    def _forget(self, subject_name: str) -> None:
        self._latest.drop(lambda key: key[0] != subject_name)
        self._versions.drop(lambda key: key[0] != subject_name)
        self._ids.drop(lambda key: key[0] != subject_name)
        self._lookups.drop(lambda key: key[0] != subject_name)

    # --- compatibility, config and mode --------------------------------------------------------------

    def set_compatibility(self, subject_name: str | None = None, level: str | None = None) -> str:
        """Sets the compatibility level of ``subject_name`` (None: the global default); returns it."""
        if level is None:
            raise ValueError("level must be given: one of NONE, BACKWARD, FORWARD, FULL and their _TRANSITIVE forms")
        answer = self.set_config(subject_name, {"compatibility": level.upper()})
        return str(answer.get("compatibility", level.upper()))

    def get_compatibility(self, subject_name: str | None = None) -> str:
        """The compatibility level set on ``subject_name`` (None: the global one); 40408 when the subject has
        none of its own."""
        return str(self.get_config(subject_name)["compatibilityLevel"])

    def get_config(self, subject_name: str | None = None, default_to_global: bool = False) -> dict[str, Any]:
        """The config of ``subject_name`` (None: global): ``{"compatibilityLevel": ..., ...}``."""
        path = "/config" if subject_name is None else path_of("config", subject_name)
        query = {"defaultToGlobal": True} if default_to_global else None
        return dict(_mapping(self._rest.request("GET", path, query=query)))

    def set_config(self, subject_name: str | None, config: Mapping[str, Any]) -> dict[str, Any]:
        """PUTs ``config`` (``{"compatibility": L, "normalize": bool}``) for ``subject_name`` (None: global)."""
        path = "/config" if subject_name is None else path_of("config", subject_name)
        return dict(_mapping(self._rest.request("PUT", path, dict(config))))

    def delete_config(self, subject_name: str | None = None) -> dict[str, Any]:
        """Removes the config of ``subject_name`` (None: resets the global one); returns what it was."""
        path = "/config" if subject_name is None else path_of("config", subject_name)
        return dict(_mapping(self._rest.request("DELETE", path)))

    def test_compatibility(
        self, subject_name: str, schema: Schema, version: int | str = "latest", normalize_schemas: bool = False
    ) -> bool:
        """Whether ``schema`` is compatible with ``version`` of the subject under its compatibility level."""
        return self.compatibility_messages(subject_name, schema, version, normalize_schemas)[0]

    def test_compatibility_all_versions(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> bool:
        """Whether ``schema`` is compatible with the versions the subject's level names."""
        answer = self._rest.request(
            "POST",
            path_of("compatibility", "subjects", subject_name, "versions"),
            schema.to_dict(),
            {"normalize": normalize_schemas},
        )
        return bool(_mapping(answer)["is_compatible"])

    def compatibility_messages(
        self, subject_name: str, schema: Schema, version: int | str = "latest", normalize_schemas: bool = False
    ) -> tuple[bool, list[str]]:
        """``(is_compatible, messages)``: the registry's verbose compatibility answer (messages say why not)."""
        answer = _mapping(
            self._rest.request(
                "POST",
                path_of("compatibility", "subjects", subject_name, "versions", version),
                schema.to_dict(),
                {"normalize": normalize_schemas, "verbose": True},
            )
        )
        return bool(answer["is_compatible"]), [str(m) for m in answer.get("messages") or ()]

    def get_mode(self, subject_name: str | None = None) -> str:
        """The mode (READWRITE, READONLY, IMPORT) of ``subject_name``, or the global one."""
        path = "/mode" if subject_name is None else path_of("mode", subject_name)
        return str(_mapping(self._rest.request("GET", path))["mode"])

    def set_mode(self, mode: str, subject_name: str | None = None, force: bool = False) -> str:
        """Sets the mode of ``subject_name`` (None: global); ``force`` allows IMPORT over existing schemas."""
        path = "/mode" if subject_name is None else path_of("mode", subject_name)
        return str(_mapping(self._rest.request("PUT", path, {"mode": mode}, {"force": force}))["mode"])

    def update_mode(self, subject_name: str, mode: str, force: bool = False) -> str:
        """confluent-kafka's spelling of ``set_mode`` for a subject."""
        return self.set_mode(mode, subject_name, force)

    def get_global_mode(self) -> str:
        """confluent-kafka's spelling of ``get_mode()``."""
        return self.get_mode(None)

    def update_global_mode(self, mode: str, force: bool = False) -> str:
        """confluent-kafka's spelling of ``set_mode(mode)``."""
        return self.set_mode(mode, None, force)

    def delete_mode(self, subject_name: str) -> str:
        """Removes the subject's own mode; returns what it was."""
        return str(_mapping(self._rest.request("DELETE", path_of("mode", subject_name)))["mode"])


def _mapping(answer: Any) -> Mapping[str, Any]:
    if not isinstance(answer, Mapping):
        raise SchemaRegistryError(200, -1, f"the registry answered {type(answer).__name__} where an object belongs")
    return answer
