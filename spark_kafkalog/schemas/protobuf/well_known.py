"""protobuf's well-known types (``google/protobuf/*.proto``): files every Protobuf schema may import without a
reference, as protoc and Confluent's registry provide them. Their descriptors come from the protobuf runtime.
"""

from __future__ import annotations

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

_MODULES = (
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

WELL_KNOWN: dict[str, descriptor_pb2.FileDescriptorProto] = {
    m.DESCRIPTOR.name: descriptor_pb2.FileDescriptorProto.FromString(m.DESCRIPTOR.serialized_pb) for m in _MODULES
}
"""The well-known files by import path (dependencies before the files that import them). Shared: do not
modify them."""
