"""A parsed schema of one of the registry's types, and a reference to another registered schema.

The registry's identity of a schema is ``(schema_type, canonical, references)``: two registrations whose
canonical strings and references are equal are the same schema and get the same id. ``canonical`` is what
Confluent's registry stores and answers for the type (Avro: the parsed schema printed as compact JSON;
JSON Schema: the document as compact JSON; Protobuf: the ``.proto`` text printed from the parsed file), and
``normalized()`` the form ``normalize=true`` registers (Confluent's normalization per type).

Compatibility follows Confluent's ``ParsedSchema.isBackwardCompatible``: ``new.is_backward_compatible(old)``
lists why data written with ``old`` cannot be read with ``new`` (empty: compatible); FORWARD is the same
check with the roles swapped (``spark_kafkalog.schemas.compatibility``).

Instances are immutable and thread-safe.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

AVRO = "AVRO"
JSON = "JSON"
PROTOBUF = "PROTOBUF"
SCHEMA_TYPES = (AVRO, JSON, PROTOBUF)
"""The registry's schema types, as ``schemaType`` names them (an absent ``schemaType`` means AVRO)."""


class InvalidSchemaError(ValueError):
    """A schema that does not parse or is not valid for its type; the message names what is wrong (the
    registry answers it as error 42201)."""


@dataclass(frozen=True)
class SchemaReference:
    """A reference from a schema to another registered schema (Confluent's ``{"name", "subject", "version"}``).

    ``name`` is what the referring schema uses: an Avro named type's full name, a Protobuf import path
    (``"other.proto"``) or a JSON Schema ``$ref`` URL."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SchemaReference:
        """From a request or record body; a missing or mistyped field raises ``InvalidSchemaError``."""
        try:
            name, subject, version = data["name"], data["subject"], data["version"]
        except (KeyError, TypeError):
            raise InvalidSchemaError(f"a schema reference needs name, subject and version: {data!r}") from None
        if not isinstance(name, str) or not isinstance(subject, str) or isinstance(version, bool):
            raise InvalidSchemaError(f"invalid schema reference {data!r}")
        if not isinstance(version, int):
            raise InvalidSchemaError(f"schema reference {name!r}: version must be an integer, not {version!r}")
        return cls(name, subject, version)


class ParsedSchema(ABC):
    """One parsed schema. Subclasses: ``avro.AvroSchema``, ``json_schema.JsonSchema``, ``protobuf.ProtobufSchema``."""

    schema_type: ClassVar[str]

    @property
    @abstractmethod
    def canonical(self) -> str:
        """The schema text the registry stores, answers and compares (see the module's docstring)."""

    @property
    @abstractmethod
    def references(self) -> tuple[SchemaReference, ...]:
        """The references it was parsed with, in the order given."""

    @property
    @abstractmethod
    def name(self) -> str | None:
        """The record name the record-name subject strategies use: an Avro record's full name, a Protobuf
        file's first message's full name, a JSON Schema's ``title``; None when the schema has none."""

    @abstractmethod
    def normalized(self) -> ParsedSchema:
        """The schema in Confluent's normalized form (what ``normalize=true`` registers and looks up)."""

    @abstractmethod
    def is_backward_compatible(self, previous: ParsedSchema) -> list[str]:
        """Why data written with ``previous`` cannot be read with this schema; empty when it can. Each
        message names the incompatibility and where (a field path), in the manner of Confluent's messages.
        A ``previous`` of another type is incompatible."""

    def formatted(self, fmt: str | None = None) -> str:
        """The schema text for ``?format=`` (Protobuf: ``serialized`` is the base64 FileDescriptorProto;
        Avro: ``resolved`` inlines references); unknown or absent formats give ``canonical``."""
        return self.canonical

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ParsedSchema)
            and self.schema_type == other.schema_type
            and self.canonical == other.canonical
            and self.references == other.references
        )

    def __hash__(self) -> int:
        return hash((self.schema_type, self.canonical, self.references))

    def __repr__(self) -> str:
        text = self.canonical
        return f"{type(self).__name__}({text[:80] + '...' if len(text) > 80 else text!r})"
