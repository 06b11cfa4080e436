"""``ValueCodec``: one reader schema's conversion between payloads and the Python values pyarrow builds.

Values are what ``pa.array(values, type=codec.arrow_type)`` accepts and ``pa.Array.to_pylist()`` gives back:
dicts for structs, lists for arrays, lists of ``(key, value)`` pairs (or dicts) for maps, ``bytes``, ``str``,
``int``, ``float``, ``bool``, ``decimal.Decimal``, ``datetime.date``, ``datetime.datetime`` (UTC-aware for
``timestamp(tz="UTC")``), ``datetime.timedelta`` and None.

Arrow types stand for Spark's (the data source maps them with PySpark's ``from_arrow_type``): string, binary,
bool, int8/16/32/64, float32/64, ``decimal128(p, s)``, ``date32``, ``timestamp("us", tz="UTC")`` (Spark's
TimestampType), ``timestamp("us")`` (TimestampNTZType), ``duration("us")`` (DayTimeIntervalType),
``list_``, ``map_`` (string keys unless the format has others) and ``struct``.

A codec is immutable and thread-safe; the data source keeps one per reader schema per executor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa

from spark_kafkalog.schemas.parsed_schema import ParsedSchema


class DecodeError(ValueError):
    """A payload that cannot be read with its writer schema into the reader's type; names why (and where)."""


class EncodeError(ValueError):
    """A value that cannot be written with the codec's schema; names the field and the value's type."""


def decode_each(payloads: Iterable[bytes | memoryview], decode: Callable[[bytes | memoryview], Any]) -> list[Any]:
    """``decode`` of each payload in order; the first ``DecodeError`` is raised again naming its index
    (``payload <i>: ...``). The loop of ``ValueCodec.decode_many`` for codecs that override it."""
    out = []
    for index, payload in enumerate(payloads):
        try:
            out.append(decode(payload))
        except DecodeError as e:
            raise DecodeError(f"payload {index}: {e}") from e
    return out


class ValueCodec(ABC):
    """Converts payloads written with any schema compatible with ``reader`` into values of ``arrow_type``,
    and values of ``arrow_type`` into payloads of ``reader``."""

    reader: ParsedSchema
    arrow_type: pa.DataType
    message_indexes: tuple[int, ...] | None = None
    """What ``wire_format.frame`` writes before ``encode``'s payload (Protobuf: the path of the reader's
    message); None for the other types."""

    @abstractmethod
    def decode(self, payload: bytes | memoryview, writer: ParsedSchema, message_indexes: tuple[int, ...] = ()) -> Any:
        """One payload (the bytes after the wire format's prefix), written with ``writer`` (and, for Protobuf,
        the message at ``message_indexes`` of it), as a value of ``arrow_type``; ``DecodeError`` otherwise."""

    @abstractmethod
    def encode(self, value: Any) -> bytes:
        """The payload of one value of ``arrow_type`` written with ``reader``; ``EncodeError`` otherwise."""

    def decode_many(
        self, payloads: Sequence[bytes | memoryview], writer: ParsedSchema, message_indexes: tuple[int, ...] = ()
    ) -> list[Any]:
        """``decode`` of each payload (all written with ``writer``); a codec may do it faster. The first
        failure raises, naming its index in ``payloads``."""
        return decode_each(payloads, lambda payload: self.decode(payload, writer, message_indexes))

    def encode_many(self, values: Iterable[Any]) -> list[bytes]:
        return [self.encode(v) for v in values]
