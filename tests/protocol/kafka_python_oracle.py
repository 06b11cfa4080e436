"""kafka-python 3.x's message classes as an independent, test-only oracle for our codec.

Two kafka-python quirks are bridged here, not in our code: it reads any ApiVersions response with a
non-zero error code as v0 (as clients must), and it renames Metadata's ``*_authorized_operations``
fields to ``authorized_operations`` with a bit-set type where the "not requested" value
-2147483648 is ``None``. It also returns ``None`` for an all-zero uuid.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.api_message import ApiMessage

from spark_kafkalog.protocol.schema import StructSpec

NOT_REQUESTED = -(1 << 31)
_ALIASES = {
    "topic_authorized_operations": "authorized_operations",
    "cluster_authorized_operations": "authorized_operations",
}


def _all_message_classes() -> dict[str, type]:
    classes: dict[str, type] = {}
    stack = list(ApiMessage.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is None and cls.__dict__.get("_json") is not None:
            classes[cls.__name__] = cls
    return classes


def message_class(name: str) -> type:
    """kafka-python's class for e.g. ``ProduceRequest`` (importing every protocol module first)."""
    import kafka.protocol.admin  # noqa: F401
    import kafka.protocol.consumer  # noqa: F401
    import kafka.protocol.metadata  # noqa: F401
    import kafka.protocol.producer  # noqa: F401

    return _all_message_classes()[name]


def oracle_sample(name: str, value: Any) -> Any:
    """Adjust a sample so that kafka-python reads it at its own version (see the module docstring)."""
    if name == "ApiVersionsResponse":
        value.error_code = 0
    if name == "MetadataResponse":
        value.cluster_authorized_operations = NOT_REQUESTED
        for topic in value.topics:
            topic.topic_authorized_operations = NOT_REQUESTED
    return value


def build(cls: type, spec: StructSpec, values: dict[str, Any], version: int | None = None) -> Any:
    """A kafka-python message (or nested struct) from our ``to_dict()`` output."""
    kwargs = {}
    fields = cls._struct.fields
    for f in spec.fields:
        if f.name not in values:
            continue
        name = f.name if f.name in fields else _ALIASES.get(f.name, f.name)
        if name not in fields:
            continue
        v = values[f.name]
        if name == "authorized_operations" and v == NOT_REQUESTED:
            v = None
        elif v is not None and f.struct is not None:
            sub = fields[name].data_class
            v = [build(sub, f.struct, x) for x in v] if f.kind == "array" else build(sub, f.struct, v)
        kwargs[name] = v
    if version is not None:
        return cls(version=version, **kwargs)
    return cls(**kwargs)


def to_ours(spec: StructSpec, theirs: dict[str, Any]) -> dict[str, Any]:
    """kafka-python's ``to_dict(json=False)`` output as the dict our ``from_dict`` takes."""
    out: dict[str, Any] = {}
    for f in spec.fields:
        name = f.name if f.name in theirs else _ALIASES.get(f.name)
        if name not in theirs:
            continue
        v = theirs[name]
        if name == "authorized_operations" and v is None:
            v = NOT_REQUESTED
        elif f.prim == "uuid" and f.kind == "prim" and v is None:
            v = uuid.UUID(int=0)
        elif isinstance(v, (bytearray, memoryview)):
            v = bytes(v)
        elif v is not None and f.struct is not None:
            v = [to_ours(f.struct, x) for x in v] if f.kind == "array" else to_ours(f.struct, v)
        out[f.name] = v
    return out
