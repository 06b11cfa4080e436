"""Serializers and deserializers as objects, in confluent-kafka's shape, with Kafka's byte layouts.

A ``Serializer`` turns a key or value into bytes, a ``Deserializer`` turns bytes back; both are called as
``obj(data, ctx)`` where ``ctx`` is a ``SerializationContext(topic, field, headers)`` (``field`` a
``MessageField``: KEY or VALUE), as confluent-kafka's ``SerializingProducer`` and ``DeserializingConsumer``
call theirs. Subclass them for your own formats. The built-in ones and their formats:

============================  ===========================================================================
``StringSerializer(codec)``    ``str`` in ``codec`` (UTF-8 by default), as Kafka's StringSerializer
``IntegerSerializer()``        4 bytes, big-endian two's complement int32, as Kafka's IntegerSerializer;
                               ints outside [-2**31, 2**31 - 1] are refused (not wrapped)
``DoubleSerializer()``         8 bytes, IEEE-754 binary64 big-endian, as Kafka's DoubleSerializer
``JSONSerializer(to_dict)``    compact UTF-8 JSON (no spaces, non-ASCII unescaped, NaN/Infinity refused);
                               ``to_dict(obj, ctx)`` first turns a user's object into JSON-able data
============================  ===========================================================================

Each has its ``...Deserializer`` (``JSONDeserializer(from_dict)`` calls ``from_dict(data, ctx)`` after
parsing). The JSON is plain JSON, as Kafka Connect's JsonConverter writes with ``schemas.enable=false``,
not Schema Registry's framing (a magic byte and schema id before the JSON; confluent-kafka's
schema-registry serializers, which plug into our clients as they are, write that). ``None`` passes as ``None`` both ways (a null key or value; a tombstone), never as bytes.
A failure raises ``SerializationError`` naming the serializer, what was wrong and, given a context, the
field and topic; through a producer or consumer it arrives as its ``KeySerializationError``,
``ValueSerializationError``, ``KeyDeserializationError`` or ``ValueDeserializationError`` (the
consumer's also names partition and offset).

The producer's ``key.serializer``/``value.serializer`` and the consumer's ``key.deserializer``/
``value.deserializer`` take these objects (or a class of them, instantiated without arguments, as Kafka
instantiates a configured class) and confluent-kafka's own ``confluent_kafka.serialization`` objects,
besides plain one-argument callables (called with the data alone; their exceptions pass unchanged) and the
names ``config`` knows (Kafka's Java class names among them). An object is called for a null key or value
too, as confluent-kafka calls it (the built-ins return ``None``); the producer passes bytes and ``None``
straight through only when no serializer is set. ``resolve_serializer``/``resolve_deserializer`` turn any
setting into one function of ``(data, topic, headers)``, once per client (``ClientConfig.key_serializer_for()``
and friends), which the blocking and asyncio clients call per record.

Built-in objects are immutable and thread-safe; a user's serializer is called from the thread that
calls ``send`` (the producer) or ``poll`` (the consumer).
"""

from __future__ import annotations

import codecs
import json
import numbers
import operator
import struct
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, Generic, TypeVar

from spark_kafkalog.client.errors import ConfigError, KafkaClientError

__all__ = [
    "DeserializeFn",
    "Deserializer",
    "DoubleDeserializer",
    "DoubleSerializer",
    "Headers",
    "IntegerDeserializer",
    "IntegerSerializer",
    "JSONDeserializer",
    "JSONSerializer",
    "KeyDeserializationError",
    "KeySerializationError",
    "MessageField",
    "SerializationContext",
    "SerializationError",
    "SerializeFn",
    "Serializer",
    "StringDeserializer",
    "StringSerializer",
    "ValueDeserializationError",
    "ValueSerializationError",
    "resolve_deserializer",
    "resolve_serializer",
]

T = TypeVar("T")

Headers = Sequence[tuple[str, "bytes | None"]]
"""A record's headers: ``(name, value)`` pairs, in order, names repeatable."""

SerializeFn = Callable[[Any, str, "Headers | None"], "bytes | None"]
"""A producer's resolved key or value serializer: ``fn(obj, topic, headers) -> bytes | None``."""
DeserializeFn = Callable[["bytes | None", str, "Headers | None"], Any]
"""A consumer's resolved key or value deserializer: ``fn(data, topic, headers) -> object``."""

_INT32 = struct.Struct(">i")  # Kafka's IntegerSerializer: 4 bytes, big-endian, two's complement
_FLOAT64 = struct.Struct(">d")  # Kafka's DoubleSerializer: Double.doubleToLongBits, big-endian
_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1


class MessageField(StrEnum):
    """Which part of a record is (de)serialized; its value (``"key"``, ``"value"``) is confluent-kafka's."""

    KEY = "key"
    VALUE = "value"


_FIELDS = frozenset(MessageField)


class SerializationContext:
    """What a serializer is working on: the record's ``topic``, the ``field`` (key or value) and its
    ``headers`` (the producer's as given to ``send`` - a serializer may append to a list to add headers -,
    the consumer's as read; ``None`` when there are none on the producer side)."""

    __slots__ = ("field", "headers", "topic")

    def __init__(self, topic: str, field: MessageField | str, headers: Headers | None = None) -> None:
        self.topic = topic
        self.field = field
        self.headers = headers

    def __repr__(self) -> str:
        return f"SerializationContext(topic={self.topic!r}, field={str(self.field)!r}, headers={self.headers!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SerializationContext):
            return NotImplemented
        return (self.topic, self.field, self.headers) == (other.topic, other.field, other.headers)

    __hash__ = None  # type: ignore[assignment]  # mutable headers: not hashable, as a list is not


class SerializationError(KafkaClientError):
    """A key or value that could not be (de)serialized; never retriable. ``field`` is ``"key"`` or
    ``"value"`` (None when unknown), ``topic`` the record's topic, and on the consumer's side
    ``partition``/``offset`` say which record (None elsewhere)."""

    def __init__(
        self,
        message: str,
        *,
        topic: str | None = None,
        field: MessageField | str | None = None,
        partition: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message, retriable=False, topic=topic, partition=partition)
        self.field: MessageField | str | None = MessageField(field) if field in _FIELDS else field
        self.offset = offset

    def at_record(self, partition: int, offset: int) -> SerializationError:
        """This error, located at the consumer's record (``partition``, ``offset`` set and named in the
        message, as Java's RecordDeserializationException: the position stays at the record; seek past it
        to skip it)."""
        self.partition = partition
        self.offset = offset
        self.add_context(f"record at offset {offset} of partition {partition}; seek past it to skip it")
        return self


class KeySerializationError(SerializationError):
    """The producer's key serializer failed (confluent-kafka's ``KeySerializationError``)."""


class ValueSerializationError(SerializationError):
    """The producer's value serializer failed (confluent-kafka's ``ValueSerializationError``)."""


class KeyDeserializationError(SerializationError):
    """The consumer's key deserializer failed on a record (confluent-kafka's ``KeyDeserializationError``)."""


class ValueDeserializationError(SerializationError):
    """The consumer's value deserializer failed on a record (confluent-kafka's ``ValueDeserializationError``)."""


class Serializer(ABC, Generic[T]):
    """Base of serializers: ``serializer(obj, ctx)`` returns ``bytes`` (``None`` for a null key or value).

    Raise ``SerializationError`` (or any exception: the producer wraps it in ``KeySerializationError`` /
    ``ValueSerializationError`` naming topic and field) for an object it cannot serialize."""

    __slots__ = ()

    @abstractmethod
    def __call__(self, obj: T | None, ctx: SerializationContext | None = None) -> bytes | None:
        """``obj`` as bytes; ``ctx`` names the topic, field and headers (``None`` outside a client)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Deserializer(ABC, Generic[T]):
    """Base of deserializers: ``deserializer(data, ctx)`` returns the object (``None`` for a null key or
    value); raise ``SerializationError`` (or any exception) for bytes it cannot read."""

    __slots__ = ()

    @abstractmethod
    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> T | None:
        """The object ``data`` holds; ``ctx`` names the topic, field and headers (``None`` outside a client)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _where(ctx: SerializationContext | None) -> str:
    """`` (value of topic 'events')`` for error messages; empty without a context."""
    if ctx is None:
        return ""
    return f" ({ctx.field} of topic {ctx.topic!r})"


def _error(ctx: SerializationContext | None, message: str) -> SerializationError:
    if ctx is None:
        return SerializationError(message)
    return SerializationError(message + _where(ctx), topic=ctx.topic, field=ctx.field)


def _check_codec(codec: str) -> str:
    try:
        return codecs.lookup(codec).name
    except LookupError:
        raise ValueError(f"unknown text codec {codec!r} (e.g. 'utf_8', 'latin_1')") from None


class StringSerializer(Serializer[str]):
    """``str`` as bytes in ``codec`` (UTF-8 by default), as Kafka's StringSerializer; other types are
    refused (convert them first, or use ``JSONSerializer``)."""

    __slots__ = ("codec",)

    def __init__(self, codec: str = "utf_8") -> None:
        self.codec = _check_codec(codec)

    def __call__(self, obj: str | None, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if not isinstance(obj, str):
            raise _error(ctx, f"StringSerializer takes a str, got {type(obj).__name__}")
        try:
            return obj.encode(self.codec)
        except UnicodeEncodeError as e:
            raise _error(ctx, f"StringSerializer cannot encode character {e.start} in {self.codec}: {e.reason}") from e

    def __repr__(self) -> str:
        return f"StringSerializer(codec={self.codec!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.codec == self.codec

    def __hash__(self) -> int:
        return hash((type(self), self.codec))


class StringDeserializer(Deserializer[str]):
    """Bytes in ``codec`` (UTF-8 by default) as ``str``, as Kafka's StringDeserializer."""

    __slots__ = ("codec",)

    def __init__(self, codec: str = "utf_8") -> None:
        self.codec = _check_codec(codec)

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> str | None:
        if data is None:
            return None
        try:
            return bytes(data).decode(self.codec)
        except UnicodeDecodeError as e:
            raise _error(ctx, f"StringDeserializer cannot decode byte {e.start} as {self.codec}: {e.reason}") from e
        except TypeError as e:
            raise _error(ctx, f"StringDeserializer takes bytes, got {type(data).__name__}") from e

    def __repr__(self) -> str:
        return f"StringDeserializer(codec={self.codec!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.codec == self.codec

    def __hash__(self) -> int:
        return hash((type(self), self.codec))


class _Stateless:
    """Equality of the built-ins without settings: any two instances of the same class are equal."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class IntegerSerializer(_Stateless, Serializer[int]):
    """An int as Kafka's IntegerSerializer writes it: 4 bytes, big-endian two's complement. Ints outside
    int32 (and bools) are refused naming the value: Java's ``Integer`` cannot hold them."""

    __slots__ = ()

    def __call__(self, obj: int | None, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if isinstance(obj, bool):
            raise _error(ctx, f"IntegerSerializer takes an int, got bool {obj!r}")
        try:
            number = operator.index(obj)
        except TypeError:
            raise _error(ctx, f"IntegerSerializer takes an int, got {type(obj).__name__}") from None
        if not _INT32_MIN <= number <= _INT32_MAX:
            raise _error(ctx, f"IntegerSerializer: {number} is outside int32 [{_INT32_MIN}, {_INT32_MAX}]")
        return _INT32.pack(number)


class IntegerDeserializer(_Stateless, Deserializer[int]):
    """Kafka's IntegerSerializer bytes (exactly 4, big-endian two's complement) as an int."""

    __slots__ = ()

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> int | None:
        if data is None:
            return None
        if len(data) != 4:
            raise _error(ctx, f"IntegerDeserializer needs exactly 4 bytes, got {len(data)}")
        value: int = _INT32.unpack(data)[0]
        return value


class DoubleSerializer(_Stateless, Serializer[float]):
    """A float (or int, or any real number but bool) as Kafka's DoubleSerializer writes it: 8 bytes,
    IEEE-754 binary64, big-endian; NaN and infinities included, as Java's."""

    __slots__ = ()

    def __call__(self, obj: float | None, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if isinstance(obj, bool) or not isinstance(obj, numbers.Real):
            raise _error(ctx, f"DoubleSerializer takes a float, got {type(obj).__name__}")
        try:
            return _FLOAT64.pack(float(obj))
        except OverflowError:
            raise _error(ctx, f"DoubleSerializer: {obj} is too large for a double") from None


class DoubleDeserializer(_Stateless, Deserializer[float]):
    """Kafka's DoubleSerializer bytes (exactly 8, IEEE-754 binary64 big-endian) as a float."""

    __slots__ = ()

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> float | None:
        if data is None:
            return None
        if len(data) != 8:
            raise _error(ctx, f"DoubleDeserializer needs exactly 8 bytes, got {len(data)}")
        value: float = _FLOAT64.unpack(data)[0]
        return value


ToDict = Callable[[Any, "SerializationContext | None"], Any]
FromDict = Callable[[Any, "SerializationContext | None"], Any]


class JSONSerializer(Serializer[Any]):
    """An object as compact UTF-8 JSON (``{"a":1}``: no spaces, non-ASCII characters as themselves).

    ``to_dict(obj, ctx)``, when given, first turns the object into JSON-able data (dicts, lists, str,
    int, float, bool, None), as confluent-kafka's JSONSerializer hook does; ``sort_keys`` sorts object
    keys. NaN and infinities are refused (JSON has none), as are objects JSON cannot hold."""

    __slots__ = ("_dumps", "sort_keys", "to_dict")

    def __init__(self, to_dict: ToDict | None = None, *, sort_keys: bool = False) -> None:
        self.to_dict = to_dict
        self.sort_keys = sort_keys
        self._dumps = json.JSONEncoder(
            ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=sort_keys
        ).encode

    def __call__(self, obj: Any, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if self.to_dict is not None:
            obj = self.to_dict(obj, ctx)
        try:
            return self._dumps(obj).encode("utf-8")
        except (TypeError, ValueError) as e:
            raise _error(ctx, f"JSONSerializer cannot write a {type(obj).__name__}: {e}") from e

    def __repr__(self) -> str:
        return f"JSONSerializer(to_dict={self.to_dict!r}, sort_keys={self.sort_keys})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (other.to_dict, other.sort_keys) == (self.to_dict, self.sort_keys)

    def __hash__(self) -> int:
        return hash((type(self), self.to_dict, self.sort_keys))


class JSONDeserializer(Deserializer[Any]):
    """UTF-8 JSON (UTF-16/32 with a BOM also read, as ``json.loads`` does) as Python data, then
    ``from_dict(data, ctx)`` when given (confluent-kafka's hook: build the user's object)."""

    __slots__ = ("from_dict",)

    def __init__(self, from_dict: FromDict | None = None) -> None:
        self.from_dict = from_dict

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        try:
            obj = json.loads(bytes(data))
        except (ValueError, TypeError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise _error(ctx, f"JSONDeserializer cannot read {len(data)} bytes: {e}") from e
        if self.from_dict is not None:
            return self.from_dict(obj, ctx)
        return obj

    def __repr__(self) -> str:
        return f"JSONDeserializer(from_dict={self.from_dict!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.from_dict == self.from_dict

    def __hash__(self) -> int:
        return hash((type(self), self.from_dict))


# --- resolution into the per-record functions the clients call -------------------------------------


def _takes_context(obj: Any) -> bool:
    """Whether ``obj`` is called as ``obj(data, ctx)``: ours, or confluent-kafka's serializer objects
    (recognised only when the user's program has imported confluent_kafka.serialization)."""
    if isinstance(obj, (Serializer, Deserializer)):
        return True
    confluent = sys.modules.get("confluent_kafka.serialization")
    return confluent is not None and isinstance(obj, (confluent.Serializer, confluent.Deserializer))


def _instance(setting: Any, key: str, wanted: type, opposite: type) -> Any:
    """``setting`` with a ``wanted`` class instantiated (as Kafka instantiates a configured class); a
    serializer given where a deserializer belongs (or the reverse) is a ``ConfigError``."""
    if isinstance(setting, type) and issubclass(setting, (wanted, opposite)):
        try:
            setting = setting()
        except TypeError as e:
            raise ConfigError(f"setting {key!r}: cannot build {setting.__name__}() ({e}); pass an instance") from None
    if isinstance(setting, opposite):
        name = type(setting).__name__
        hint = f" (e.g. {name.replace(opposite.__name__, wanted.__name__)}())" if opposite.__name__ in name else ""
        raise ConfigError(f"setting {key!r}: {name} is a {opposite.__name__}; pass a {wanted.__name__}{hint}")
    return setting


def _wrapped(
    error: BaseException, cls: type[SerializationError], what: str, field: MessageField, topic: str
) -> SerializationError:
    """``error`` as ``cls`` naming ``field`` and ``topic`` (a built-in's message already does)."""
    if isinstance(error, SerializationError) and error.topic is not None:
        message = str(error)
    else:
        message = f"{what} {type(error).__name__} on the {field} of topic {topic!r}: {error}"
    return cls(message, topic=topic, field=field)


def resolve_serializer(serializer: Any, field: MessageField, default: SerializeFn) -> SerializeFn:
    """The producer's per-record function ``(obj, topic, headers) -> bytes | None`` for a ``key.serializer``
    or ``value.serializer`` setting: ``default`` itself when the setting is None; a ``Serializer`` object (or
    confluent-kafka's) called with a ``SerializationContext``, its failures raised as
    ``KeySerializationError``/``ValueSerializationError``; a plain callable called with the object alone,
    its errors unchanged."""
    if serializer is None:
        return default
    fn = _instance(serializer, f"{field}.serializer", Serializer, Deserializer)
    if not _takes_context(fn):

        def plain(obj: Any, topic: str, headers: Headers | None) -> bytes | None:
            return fn(obj)

        return plain
    error_cls = KeySerializationError if field == MessageField.KEY else ValueSerializationError
    what = f"{field}.serializer {type(fn).__name__} raised"
    context = SerializationContext

    def serialize(obj: Any, topic: str, headers: Headers | None) -> bytes | None:
        try:
            return fn(obj, context(topic, field, headers))
        except Exception as e:
            raise _wrapped(e, error_cls, what, field, topic) from e

    return serialize


def resolve_deserializer(deserializer: Any, field: MessageField) -> DeserializeFn:
    """The consumer's per-record function ``(data, topic, headers) -> object`` for a ``key.deserializer`` or
    ``value.deserializer`` setting: bytes as they are when None, a ``Deserializer`` object (or confluent-kafka's)
    called with a ``SerializationContext`` and its failures raised as ``KeyDeserializationError``/
    ``ValueDeserializationError``, a plain callable called with the bytes alone, its errors unchanged."""
    if deserializer is None:

        def raw(data: bytes | None, topic: str, headers: Headers | None) -> Any:
            return data

        return raw
    fn = _instance(deserializer, f"{field}.deserializer", Deserializer, Serializer)
    if not _takes_context(fn):

        def plain(data: bytes | None, topic: str, headers: Headers | None) -> Any:
            return fn(data)

        return plain
    error_cls = KeyDeserializationError if field == MessageField.KEY else ValueDeserializationError
    what = f"{field}.deserializer {type(fn).__name__} raised"
    context = SerializationContext

    def deserialize(data: bytes | None, topic: str, headers: Headers | None) -> Any:
        try:
            return fn(data, context(topic, field, headers))
        except Exception as e:
            raise _wrapped(e, error_cls, what, field, topic) from e

    return deserialize
