"""What the registry answers: a registered schema (one version of a subject) and its JSON shape.

JSON as Confluent's registry answers ``GET /subjects/{subject}/versions/{version}``::

    {"subject": "s", "version": 1, "id": 1, "schemaType": "PROTOBUF", "references": [...], "schema": "..."}

``schemaType`` is left out for AVRO and ``references`` when there are none, as Confluent does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spark_kafkalog.schemas import AVRO, ParsedSchema


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema registered under ``subject`` as ``version`` with the global ``id``; ``deleted`` when soft-deleted."""

    subject: str
    version: int
    id: int
    schema: ParsedSchema
    deleted: bool = False

    @property
    def schema_type(self) -> str:
        return self.schema.schema_type

    def to_json(self, fmt: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != AVRO:
            body["schemaType"] = self.schema_type
        if self.schema.references:
            body["references"] = [r.to_json() for r in self.schema.references]
        body["schema"] = self.schema.formatted(fmt)
        return body
