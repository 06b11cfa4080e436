"""The framing every coordinator record shares (Kafka's ``CoordinatorRecordSerde``).

A coordinator record's key and value (``__consumer_offsets``, ``__share_group_state``) are each an ``int16``
version followed by the fields of a ``DataSpec`` at that version; for a key the version is the record type.
A struct is flexible (compact strings and arrays, tagged fields) when its spec says so for that version.
The record codecs (``offsets_topic``, ``consumer.record_codec``, ``share.record_codec``,
``broker.share.record_codec``) declare their specs and call ``write_record_part`` / ``read_record_part``,
each naming the ``ValueError`` subclass it raises for anything that cannot be encoded or is malformed.
Pure code, thread-safe.
"""

from __future__ import annotations

from typing import Any

from spark_kafkalog.protocol.codec import decode_with, encode_struct
from spark_kafkalog.protocol.exceptions import DecodeError, EncodeError
from spark_kafkalog.protocol.primitives import Reader, Writer
from spark_kafkalog.protocol.schema import DataSpec

Bytes = bytes | bytearray | memoryview


def write_record_part(spec: DataSpec[Any], version: int, obj: Any, error: type[ValueError]) -> bytes:
    """``int16`` ``version`` then ``obj`` in ``spec`` at that version; ``error`` when it cannot be encoded."""
    w = Writer()
    w.int16(version)
    flexible = spec.flexible is not None and version in spec.flexible
    try:
        return bytes(encode_struct(spec.struct, version, flexible, obj, w).getvalue())
    except EncodeError as e:
        raise error(f"cannot encode {spec.name}: {e}") from None


def read_record_part(spec: DataSpec[Any], data: Bytes, error: type[ValueError], *, version: int | None = None) -> Any:
    """The struct ``data`` holds (its leading ``int16`` version unless ``version`` is given).

    ``error`` when the version is not one of ``spec``'s, the fields are malformed or bytes trail them.
    """
    r = Reader(data, where=spec.name)
    try:
        if version is None:
            version = r.int16()
        if version not in spec.versions:
            raise error(f"{spec.name} version {version} is not one of {spec.versions}")
        flexible = spec.flexible is not None and version in spec.flexible
        obj = decode_with(spec.struct, version, flexible, r)
    except DecodeError as e:
        raise error(f"malformed {spec.name}: {e}") from None
    if r.pos != r.end:
        raise error(f"{spec.name} v{version} has {r.end - r.pos} trailing bytes")
    return obj


def record_type_of(key: Bytes | None) -> int | None:
    """The ``int16`` record type a coordinator record key starts with (None: shorter than 2 bytes)."""
    if key is None or len(key) < 2:
        return None
    return int.from_bytes(bytes(key[:2]), "big", signed=True)
