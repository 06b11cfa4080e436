"""What the Schema Registry serializers share: their configuration, the choice of subject and schema id, and
the wire format.

Serializer configuration (confluent-kafka's keys; anything else is a ``ConfigError`` naming it):

=============================  ============================================================================
``auto.register.schemas``      True (default): register the serializer's schema under the subject on first
                               use; False: look it up (``SchemaRegistryError`` 40401/40403 when it is not there)
``normalize.schemas``          register / look up with ``normalize=true`` (default False)
``use.latest.version``         write with the subject's latest version instead (its id and its schema);
                               not together with ``auto.register.schemas``
``use.schema.id``              write with this id, asking nothing
``subject.name.strategy``      ``strategies.subject_name_strategy``'s settings (default: topic name)
=============================  ============================================================================

A subject's id is asked once per serializer and kept (``use.latest.version``: the registry client's latest
cache decides). Output: ``spark_kafkalog.schemas.wire_format.frame`` (magic byte 0, the id as a big-endian
int32, Protobuf's message indexes, the payload), byte for byte what confluent-kafka's serializers write.
Deserializers read the id from the frame and fetch the writer schema by id (cached by the client).

Failures to encode or decode raise ``SerializationError`` naming the serializer, the field and the topic;
the registry's refusals raise its ``SchemaRegistryError`` unchanged (as confluent-kafka does). Serializers are
thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.schema_registry.client import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.model import RegisteredSchema, Schema
from spark_kafkalog.client.schema_registry.strategies import SubjectNameStrategy, subject_name_strategy
from spark_kafkalog.client.serialization import SerializationContext, SerializationError
from spark_kafkalog.schemas.wire_format import WireFormatError, unframe

__all__ = ["SerializerConfig", "SubjectSchemaIds", "read_frame", "serde_error"]

_SERIALIZER_DEFAULTS: dict[str, Any] = {
    "auto.register.schemas": True,
    "normalize.schemas": False,
    "use.latest.version": False,
    "use.schema.id": None,
    "subject.name.strategy": None,
}
_DESERIALIZER_DEFAULTS: dict[str, Any] = {"use.latest.version": False, "subject.name.strategy": None}


def _flag(conf: Mapping[str, Any], key: str, owner: str) -> bool:
    value = conf[key]
    if not isinstance(value, bool):
        raise ConfigError(f"{owner} setting {key!r} must be a bool, not {value!r}")
    return value


class SerializerConfig:
    """A serializer's or deserializer's checked configuration (see the module docstring)."""

    __slots__ = ("auto_register", "normalize", "strategy", "use_latest", "use_schema_id")

    def __init__(
        self, conf: Mapping[str, Any] | None, owner: str, *, extra: Mapping[str, Any] = {}, deserializer: bool = False
    ) -> None:
        defaults = _DESERIALIZER_DEFAULTS if deserializer else _SERIALIZER_DEFAULTS
        merged = {**defaults, **extra, **(conf or {})}
        unknown = sorted(k for k in merged if k not in defaults and k not in extra)
        if unknown:
            raise ConfigError(f"unknown {owner} settings: {', '.join(map(str, unknown))}")
        self.use_latest = _flag(merged, "use.latest.version", owner)
        self.strategy: SubjectNameStrategy = subject_name_strategy(merged["subject.name.strategy"])
        self.auto_register = False if deserializer else _flag(merged, "auto.register.schemas", owner)
        self.normalize = False if deserializer else _flag(merged, "normalize.schemas", owner)
        use_schema_id = None if deserializer else merged["use.schema.id"]
        if use_schema_id is not None and (isinstance(use_schema_id, bool) or not isinstance(use_schema_id, int)):
            raise ConfigError(f"{owner} setting 'use.schema.id' must be an int, not {use_schema_id!r}")
        self.use_schema_id: int | None = use_schema_id
        if self.use_latest and self.auto_register:
            raise ConfigError(f"{owner}: use.latest.version and auto.register.schemas cannot both be on")


class SubjectSchemaIds:
    """The id a serializer writes with, per subject: registered or looked up once, or the latest version."""

    def __init__(self, registry: SchemaRegistryClient | None, config: SerializerConfig) -> None:
        self._registry = registry
        self.config = config
        self._ids: dict[str | None, int] = {}
        self._lock = threading.Lock()

    def latest(
        self, ctx: SerializationContext | None, record_name: str | None, fmt: str | None = None
    ) -> RegisteredSchema | None:
        """The subject's latest version when ``use.latest.version`` is on (None otherwise)."""
        if not self.config.use_latest:
            return None
        subject = self.config.strategy(ctx, record_name)
        if subject is None or self._registry is None:
            raise ValueError("use.latest.version needs a registry and a subject (the strategy named none)")
        return self._registry.get_latest_version(subject, fmt)

    def writer(
        self, ctx: SerializationContext | None, record_name: str | None, schema: Schema | None, fmt: str | None = None
    ) -> tuple[int, RegisteredSchema | None]:
        """``(id, latest)``: the id to write with (``use.schema.id``; the latest version's with
        ``use.latest.version``, returned too; else ``schema`` registered or looked up once per subject)."""
        if self.config.use_schema_id is not None:
            return self.config.use_schema_id, None
        latest = self.latest(ctx, record_name, fmt)
        if latest is not None:
            return latest.schema_id, latest
        subject = self.config.strategy(ctx, record_name)
        return self._id_for(subject, schema), None

    def _id_for(self, subject: str | None, schema: Schema | None) -> int:
        cached = self._ids.get(subject)
        if cached is not None:
            return cached
        if subject is None:
            raise ValueError("the subject name strategy gave no subject (a schema without a record name?)")
        if schema is None:
            raise ValueError("no schema to register or look up: pass one, or set use.latest.version")
        if self._registry is None:
            raise ValueError("a Schema Registry client is needed to register or look up schemas")
        with self._lock:
            cached = self._ids.get(subject)
            if cached is not None:
                return cached
            if self.config.auto_register:
                schema_id = self._registry.register_schema(subject, schema, self.config.normalize)
            else:
                schema_id = self._registry.lookup_schema(subject, schema, self.config.normalize).schema_id
            self._ids[subject] = schema_id
            return schema_id


def serde_error(ctx: SerializationContext | None, owner: str, message: str) -> SerializationError:
    """A ``SerializationError`` saying ``owner: message`` and, given a context, the field and topic."""
    if ctx is None:
        return SerializationError(f"{owner}: {message}")
    return SerializationError(
        f"{owner}: {message} ({ctx.field} of topic {ctx.topic!r})", topic=ctx.topic, field=ctx.field
    )


def read_frame(
    data: bytes | bytearray | memoryview, ctx: SerializationContext | None, owner: str, *, protobuf: bool = False
) -> tuple[int, tuple[int, ...], memoryview]:
    """``unframe`` with its failures as ``SerializationError`` naming ``owner`` and the record's field."""
    try:
        return unframe(data, protobuf=protobuf)
    except WireFormatError as e:
        raise serde_error(ctx, owner, f"{len(data)} bytes are not in Confluent's wire format: {e}") from e
