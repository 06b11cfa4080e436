"""Schema Registry's REST bodies as values: ``Schema``, ``RegisteredSchema`` and ``SchemaRegistryError``.

JSON shapes (Confluent's REST API, as confluent-kafka 2.16 reads and writes them)::

    Schema            {"schema": "<text>", "schemaType": "AVRO"|"JSON"|"PROTOBUF", "references": [ref, ...]}
    RegisteredSchema  the Schema's keys plus "id", "subject", "version" (any of them may be absent)
    reference         {"name": "<name>", "subject": "<subject>", "version": <int>}
    error             {"error_code": <int>, "message": "<text>"}

An absent ``schemaType`` means AVRO. Values are immutable and hashable (usable as cache keys), hence safe to
share between threads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.schemas.parsed_schema import AVRO, SchemaReference

__all__ = ["RegisteredSchema", "Schema", "SchemaReference", "SchemaRegistryError"]


class SchemaRegistryError(KafkaClientError):
    """A request the registry refused or could not answer.

    ``http_status`` is the HTTP status (-1 when no answer came: the connection failed), ``error_code`` the
    registry's code (Confluent's: 40401 subject not found, 40402 version not found, 40403 schema not found,
    409 incompatible schema, 42201 invalid schema, ...; -1 when the answer had none), ``message`` its text.
    Retriable for the HTTP statuses Confluent's clients retry (408, 429, 500, 502, 503, 504) and for
    connection failures."""

    SUBJECT_NOT_FOUND = 40401
    VERSION_NOT_FOUND = 40402
    SCHEMA_NOT_FOUND = 40403

    def __init__(self, http_status: int, error_code: int, message: str) -> None:
        super().__init__(
            f"Schema Registry error {error_code} (HTTP {http_status}): {message}",
            retriable=http_status in RETRIABLE_STATUSES or http_status == -1,
        )
        self.http_status = http_status
        self.error_code = error_code  # type: ignore[assignment]  # the registry's codes, not Kafka's ErrorCode
        self.message = message

    def __reduce__(self) -> Any:
        return (type(self), (self.http_status, self.error_code, self.message))


RETRIABLE_STATUSES = frozenset((408, 429, 500, 502, 503, 504))
"""HTTP statuses after which the same request is sent again (confluent-kafka's ``is_retriable``)."""


def references_from_json(data: Any) -> tuple[SchemaReference, ...]:
    if not data:
        return ()
    return tuple(SchemaReference.from_json(item) for item in data)


@dataclass(frozen=True)
class Schema:
    """A schema's text, type and references: what is registered (confluent-kafka's ``Schema``).

    ``schema_str`` is the schema in its type's text form (Avro or JSON Schema JSON, a ``.proto`` file or,
    as confluent-kafka's ProtobufSerializer registers it, a base64 ``FileDescriptorProto``); ``references``
    may be given as ``SchemaReference`` objects or as their JSON dicts."""

    schema_str: str
    schema_type: str = AVRO
    references: tuple[SchemaReference, ...] = field(default=())

    def __init__(
        self,
        schema_str: str,
        schema_type: str | None = AVRO,
        references: Iterable[SchemaReference | Mapping[str, Any]] | None = (),
    ) -> None:
        if not isinstance(schema_str, str):
            raise TypeError(f"schema_str must be a str, not {type(schema_str).__name__}")
        refs = tuple(r if isinstance(r, SchemaReference) else SchemaReference.from_json(r) for r in references or ())
        object.__setattr__(self, "schema_str", schema_str)
        object.__setattr__(self, "schema_type", (schema_type or AVRO).upper())
        object.__setattr__(self, "references", refs)

    def to_dict(self) -> dict[str, Any]:
        """The request body of a registration, lookup or compatibility test."""
        body: dict[str, Any] = {"schema": self.schema_str, "schemaType": self.schema_type}
        body["references"] = [r.to_json() for r in self.references]
        return body

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schema:
        """From an answer's ``schema``, ``schemaType`` (absent: AVRO) and ``references``."""
        text = data.get("schema")
        if not isinstance(text, str):
            raise SchemaRegistryError(200, -1, f"the registry's answer has no schema text: {_short(data)}")
        return cls(text, data.get("schemaType") or AVRO, references_from_json(data.get("references")))


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as registered: its global ``schema_id``, the ``schema``, and the ``subject`` and ``version``
    it was asked under (None where the answer did not say)."""

    schema_id: int
    schema: Schema
    subject: str | None = None
    version: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], schema: Schema | None = None) -> RegisteredSchema:
        """From an answer with ``id`` (and ``subject``, ``version``, the schema keys; ``schema`` stands in
        when the answer carries no schema text)."""
        schema_id = data.get("id")
        if not isinstance(schema_id, int) or isinstance(schema_id, bool):
            raise SchemaRegistryError(200, -1, f"the registry's answer has no schema id: {_short(data)}")
        if schema is None or "schema" in data:
            schema = Schema.from_dict(data)
        return cls(schema_id, schema, data.get("subject"), data.get("version"))

    def to_dict(self) -> dict[str, Any]:
        body = self.schema.to_dict()
        body["id"] = self.schema_id
        if self.subject is not None:
            body["subject"] = self.subject
        if self.version is not None:
            body["version"] = self.version
        return body


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 200 else text[:200] + "..."
