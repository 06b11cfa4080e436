"""The ``.proto`` files every Protobuf schema may import without a reference: protobuf's well-known types
(``google/protobuf/*.proto``, their descriptors from the protobuf runtime) and the files Confluent treats as
built in (``google/type/*.proto``, ``confluent/meta.proto``, ``confluent/type/*.proto``: ``builtin_files``).
``compiled_files`` reads the descriptors protoc compiled into generated ``*_pb2`` modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from google.protobuf import (
    any_pb2,
    api_pb2,
    descriptor_pb2,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    source_context_pb2,
    struct_pb2,
    timestamp_pb2,
    type_pb2,
    wrappers_pb2,
)

from spark_kafkalog.schemas.protobuf.builtin_files import BUILTIN_FILES
from spark_kafkalog.schemas.protobuf.proto_parser import parse_proto

PROTOBUF_MODULES = (
    descriptor_pb2,
    any_pb2,
    source_context_pb2,
    type_pb2,
    api_pb2,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
"""protobuf's generated modules of its well-known types, dependencies first."""


def compiled_files(modules: Iterable[ModuleType]) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The ``FileDescriptorProto`` protoc compiled into each generated module, by import path (in ``modules``'
    order); each a fresh copy."""
    return {
        m.DESCRIPTOR.name: descriptor_pb2.FileDescriptorProto.FromString(m.DESCRIPTOR.serialized_pb) for m in modules
    }


def _load() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    files = compiled_files(PROTOBUF_MODULES)
    for name, text in BUILTIN_FILES.items():  # they import only protobuf's own files
        files[name] = parse_proto(text, name, files)
    return files


WELL_KNOWN: dict[str, descriptor_pb2.FileDescriptorProto] = _load()
"""The built-in files by import path (dependencies before the files that import them). Shared: do not
modify them."""
