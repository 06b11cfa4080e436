"""``ProtobufSerializer`` / ``ProtobufDeserializer``: Protobuf messages in Confluent's wire format, their
``.proto`` files registered in a Schema Registry (confluent-kafka's classes of the same names).

The serializer registers the message's file as confluent-kafka does: the schema text is the base64 of the
file's serialized ``FileDescriptorProto`` (the registry keeps it as ``.proto`` text), and every imported file
except the well-known ones (``google/protobuf/``, ``google/type/``, ``confluent/``) is registered first under the
subject the reference strategy names (default: the import path, e.g. ``common/address.proto``) and referenced
by name, subject and version. The frame carries the message indexes: the path of the message type in its file
(``[0]``, the first top-level message, as the single byte 0). Payload: ``message.SerializeToString()``.

The deserializer parses the payload with the given message class (``msg_type.FromString``); the writer's id and
indexes are only read past (the registry is not asked). Extra configuration keys besides ``serde``'s:
``reference.subject.name.strategy`` (callable ``(ctx, file_descriptor) -> subject``), ``skip.known.types``
(True), ``use.deprecated.format`` (False only: the pre-2020 index encoding is not written).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.descriptor import Descriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message

from spark_kafkalog.client.schema_registry.client import SchemaRegistryClient
from spark_kafkalog.client.schema_registry.model import Schema, SchemaReference
from spark_kafkalog.client.schema_registry.serde import SerializerConfig, SubjectSchemaIds, read_frame, serde_error
from spark_kafkalog.client.serialization import Deserializer, SerializationContext, Serializer
from spark_kafkalog.schemas.parsed_schema import PROTOBUF
from spark_kafkalog.schemas.wire_format import frame

__all__ = [
    "ProtobufDeserializer",
    "ProtobufSerializer",
    "message_indexes",
    "reference_subject_name_strategy",
    "schema_of_file",
]

ReferenceStrategy = Callable[[Any, FileDescriptor], str]

_KNOWN_PREFIXES = ("google/protobuf/", "google/type/", "confluent/")


def reference_subject_name_strategy(ctx: SerializationContext | None, file: FileDescriptor) -> str:
    """The subject an imported file is registered under: its import path (confluent-kafka's default)."""
    return str(file.name)


def schema_of_file(file: FileDescriptor, references: tuple[SchemaReference, ...] = ()) -> Schema:
    """The ``Schema`` confluent-kafka registers for a ``.proto`` file: base64 of its ``FileDescriptorProto``."""
    return Schema(base64.standard_b64encode(file.serialized_pb).decode("ascii"), PROTOBUF, references)


def message_indexes(descriptor: Descriptor) -> tuple[int, ...]:
    """The path of a message type in its file: its index among the file's top-level messages, then among
    each enclosing message's nested types."""
    path: list[int] = []
    current = descriptor
    while current.containing_type is not None:
        parent = current.containing_type
        path.append(list(parent.nested_types).index(current))
        current = parent
    path.append(list(current.file.message_types_by_name.values()).index(current))
    return tuple(reversed(path))


class ProtobufSerializer(Serializer[Message]):
    """Writes messages of ``msg_type`` (a generated message class), its file registered under the subject
    the strategy names (record name: the message's full name)."""

    __slots__ = (
        "_descriptor",
        "_ids",
        "_indexes",
        "_lock",
        "_msg_type",
        "_reference_strategy",
        "_registry",
        "_schemas",
        "_skip_known",
    )

    def __init__(
        self, msg_type: type[Message], registry: SchemaRegistryClient, conf: Mapping[str, Any] | None = None
    ) -> None:
        conf = dict(conf or {})
        reference_strategy = conf.pop("reference.subject.name.strategy", reference_subject_name_strategy)
        skip_known = conf.pop("skip.known.types", True)
        if conf.pop("use.deprecated.format", False) is not False:
            raise ValueError(
                "ProtobufSerializer: use.deprecated.format is not supported (only Confluent's current format)"
            )
        if not callable(reference_strategy):
            raise ValueError("ProtobufSerializer setting 'reference.subject.name.strategy' must be callable(ctx, file)")
        if not isinstance(skip_known, bool):
            raise ValueError(f"ProtobufSerializer setting 'skip.known.types' must be a bool, not {skip_known!r}")
        descriptor = getattr(msg_type, "DESCRIPTOR", None)
        if not isinstance(descriptor, Descriptor):
            raise ValueError(f"ProtobufSerializer needs a generated message class, not {msg_type!r}")
        self._msg_type = msg_type
        self._descriptor = descriptor
        self._registry = registry
        self._reference_strategy: ReferenceStrategy = reference_strategy
        self._skip_known = skip_known
        self._ids = SubjectSchemaIds(registry, SerializerConfig(conf, "ProtobufSerializer"))
        self._indexes = message_indexes(descriptor)
        self._schemas: dict[tuple[str, str] | None, Schema] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ProtobufSerializer({self._descriptor.full_name})"

    def __call__(self, obj: Message | None, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if not isinstance(obj, self._msg_type):
            raise serde_error(
                ctx, "ProtobufSerializer", f"expected a {self._descriptor.full_name}, not a {type(obj).__name__}"
            )
        config = self._ids.config
        schema = None if config.use_latest or config.use_schema_id is not None else self._schema(ctx)
        schema_id, _ = self._ids.writer(ctx, self._descriptor.full_name, schema, "serialized")
        try:
            payload = obj.SerializeToString()
        except Exception as e:  # EncodeError for missing required fields (proto2)
            raise serde_error(ctx, "ProtobufSerializer", f"cannot write the message: {e}") from e
        return frame(schema_id, payload, self._indexes)

    def _schema(self, ctx: SerializationContext | None) -> Schema:
        """The message's file as a ``Schema``, its imports registered (or looked up) first, once."""
        key = None if ctx is None else (ctx.topic, str(ctx.field))  # what the reference strategy may look at
        schema = self._schemas.get(key)
        if schema is None:
            with self._lock:
                schema = self._schemas.get(key)
                if schema is None:
                    references = self._references(ctx, self._descriptor.file)
                    schema = self._schemas[key] = schema_of_file(self._descriptor.file, references)
        return schema

    def _references(self, ctx: SerializationContext | None, file: FileDescriptor) -> tuple[SchemaReference, ...]:
        references = []
        config = self._ids.config
        for dependency in file.dependencies:
            if self._skip_known and dependency.name.startswith(_KNOWN_PREFIXES):
                continue
            schema = schema_of_file(dependency, self._references(ctx, dependency))
            subject = self._reference_strategy(ctx, dependency)
            if config.auto_register:
                self._registry.register_schema(subject, schema, config.normalize)
            version = self._registry.lookup_schema(subject, schema, config.normalize).version
            if version is None:
                raise ValueError(f"the registry named no version of {dependency.name!r} under subject {subject!r}")
            references.append(SchemaReference(dependency.name, subject, version))
        return tuple(references)


class ProtobufDeserializer(Deserializer[Message]):
    """Reads Confluent-framed Protobuf into messages of ``msg_type`` (a generated message class)."""

    __slots__ = ("_msg_type",)

    def __init__(
        self,
        msg_type: type[Message],
        conf: Mapping[str, Any] | None = None,
        registry: SchemaRegistryClient | None = None,
    ) -> None:
        conf = dict(conf or {})
        if conf.pop("use.deprecated.format", False) is not False:
            raise ValueError("ProtobufDeserializer: use.deprecated.format is not supported")
        SerializerConfig(conf, "ProtobufDeserializer", deserializer=True)
        if not isinstance(getattr(msg_type, "DESCRIPTOR", None), Descriptor):
            raise ValueError(f"ProtobufDeserializer needs a generated message class, not {msg_type!r}")
        self._msg_type = msg_type

    def __repr__(self) -> str:
        return f"ProtobufDeserializer({self._msg_type.DESCRIPTOR.full_name})"

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Message | None:
        if data is None:
            return None
        schema_id, _, payload = read_frame(data, ctx, "ProtobufDeserializer", protobuf=True)
        try:
            return self._msg_type.FromString(bytes(payload))
        except DecodeError as e:
            raise serde_error(
                ctx,
                "ProtobufDeserializer",
                f"cannot read {len(payload)} bytes (schema id {schema_id}) as {self._msg_type.DESCRIPTOR.full_name}: {e}",
            ) from e
