"""Protobuf message classes built at test time (no generated code): ``ex.User`` in ``user.proto``, importing
``ex.Addr`` from ``common/addr.proto`` and ``google/protobuf/timestamp.proto``, with a nested ``ex.User.Inner``
and a first message ``ex.Other`` (so ``User``'s message indexes are ``[1]``, ``Inner``'s ``[1, 0]``)."""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2
from google.protobuf.message import Message

_STRING, _INT64, _INT32, _MESSAGE = 9, 3, 5, 11
_OPTIONAL = 1


def build() -> tuple[type[Message], type[Message], type[Message]]:
    """``(User, Inner, Addr)`` classes in a fresh descriptor pool."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    addr = descriptor_pb2.FileDescriptorProto(name="common/addr.proto", package="ex", syntax="proto3")
    message = addr.message_type.add(name="Addr")
    message.field.add(name="city", number=1, type=_STRING, label=_OPTIONAL)
    pool.Add(addr)
    user = descriptor_pb2.FileDescriptorProto(
        name="user.proto",
        package="ex",
        syntax="proto3",
        dependency=["common/addr.proto", "google/protobuf/timestamp.proto"],
    )
    user.message_type.add(name="Other").field.add(name="o", number=1, type=_STRING, label=_OPTIONAL)
    message = user.message_type.add(name="User")
    message.field.add(name="id", number=1, type=_INT64, label=_OPTIONAL)
    message.field.add(name="addr", number=2, type=_MESSAGE, label=_OPTIONAL, type_name=".ex.Addr")
    message.field.add(name="at", number=3, type=_MESSAGE, label=_OPTIONAL, type_name=".google.protobuf.Timestamp")
    message.nested_type.add(name="Inner").field.add(name="x", number=1, type=_INT32, label=_OPTIONAL)
    pool.Add(user)
    get = message_factory.GetMessageClass
    return (
        get(pool.FindMessageTypeByName("ex.User")),
        get(pool.FindMessageTypeByName("ex.User.Inner")),
        get(pool.FindMessageTypeByName("ex.Addr")),
    )
