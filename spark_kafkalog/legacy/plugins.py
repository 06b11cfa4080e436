"""The 0.8 producer's plug-in interfaces (``Encoder``, ``Partitioner``, ``CallbackHandler``, ``EventHandler``),
their defaults, and ``load_plugin``, which turns a configured class, dotted path or instance into an object.

A plug-in given as a class or a dotted path (``"package.module.Class"`` or ``"package.module:Class"``) is
instantiated without arguments; the seeds' Java names ``kafka.serializer.DefaultEncoder``,
``kafka.serializer.StringEncoder`` and ``kafka.producer.DefaultPartitioner`` name ours. An instance is used as
given. After creation a plug-in's optional ``init(config)`` is called with the ``ProducerConfig`` (the 0.7
interfaces' ``init(props)``); the event handler's ``init`` also receives the callback handler.

``DefaultPartitioner``: murmur2 (Kafka's own partitioner hash, the one Java's and kafka-python's producers use
for keys) of the key's bytes, made positive, modulo the partition count. The seeds' ``key.hashCode() %
numPartitions`` has no Python equivalent (``hash()`` of ``str`` and ``bytes`` changes per process), so keys are
hashed as bytes: bytes-like as they are, ``str`` as UTF-8, ``int`` as its decimal string; other types raise
``TypeError`` (configure a ``partitioner.class`` for them). A ``None`` key gets a random partition.
Plug-in objects are called from one thread at a time (the caller's in sync mode, the send thread in async).
"""

from __future__ import annotations

import importlib
import inspect
import random
from typing import Any

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.legacy.producer_data import ProducerData
from spark_kafkalog.records.murmur2 import murmur2, to_positive

__all__ = [
    "CallbackHandler",
    "DefaultEncoder",
    "DefaultPartitioner",
    "Encoder",
    "EventHandler",
    "Partitioner",
    "StringEncoder",
    "key_bytes",
    "load_plugin",
]


class Encoder:
    """``kafka.serializer.Encoder``: turns an object into the bytes of a message (``None``: a null message)."""

    def to_message(self, obj: Any) -> bytes | None:
        raise NotImplementedError


class DefaultEncoder(Encoder):
    """The no-op encoder: bytes-like objects pass as ``bytes``, ``None`` stays null; anything else is a
    ``TypeError`` naming its type (configure ``serializer.class``)."""

    def to_message(self, obj: Any) -> bytes | None:
        if obj is None or type(obj) is bytes:
            return obj
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return bytes(obj)
        raise TypeError(
            f"DefaultEncoder passes bytes through and cannot encode {type(obj).__name__} {obj!r}; "
            "set serializer.class (e.g. StringEncoder) or key.serializer.class"
        )


class StringEncoder(Encoder):
    """Encodes ``str`` with ``encoding`` (UTF-8; the seeds' ``serializer.encoding``); bytes-like pass as they
    are, ``None`` stays null, other objects are encoded as ``str(obj)``."""

    def __init__(self, encoding: str = "utf-8") -> None:
        self.encoding = encoding

    def to_message(self, obj: Any) -> bytes | None:
        if obj is None:
            return None
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return bytes(obj)
        return str(obj).encode(self.encoding)


class Partitioner:
    """``kafka.producer.Partitioner``: the partition (0 .. ``num_partitions`` - 1) for a message's key.

    Called with the key as given to ``ProducerData`` (before ``key.serializer.class``), never with ``None``:
    null keys get a random partition with a leader, as in 0.8.
    """

    def partition(self, key: Any, num_partitions: int) -> int:
        raise NotImplementedError


def key_bytes(key: Any) -> bytes:
    """The bytes ``DefaultPartitioner`` hashes: bytes-like as is, ``str`` UTF-8, ``int`` its decimal form."""
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key).encode("ascii")
    raise TypeError(
        f"DefaultPartitioner hashes bytes, str and int keys, not {type(key).__name__} {key!r}; "
        "configure partitioner.class for such keys"
    )


class DefaultPartitioner(Partitioner):
    """``to_positive(murmur2(key bytes)) % num_partitions``; a random partition for ``None`` (module docstring)."""

    def partition(self, key: Any, num_partitions: int) -> int:
        if num_partitions <= 0:
            raise ValueError(f"num_partitions must be positive, got {num_partitions}")
        if key is None:
            return random.randrange(num_partitions)
        return to_positive(murmur2(key_bytes(key))) % num_partitions


class CallbackHandler:
    """``kafka.producer.async.CallbackHandler``: hooks at the stages of the producer's pipeline; every method
    is a no-op (or returns its input) unless overridden. Exceptions raised by a hook propagate: in sync mode
    to ``send``, in async mode into the send thread's error log (the batch is dropped).

    Async mode only: ``before_enqueue`` (may return a replacement, or ``None`` to drop the data),
    ``after_enqueue`` (``added`` False when the queue was full), ``after_dequeuing`` (a batch taken off the
    queue; returns the batch to send), ``last_batch_before_close`` (extra data sent when closing).
    Both modes, around the event handler: ``before_sending`` (returns the batch to send), ``after_sending``
    (``error`` None on success). The default event handler also calls ``after_serialization`` with
    ``{(topic, partition): [(key bytes, value bytes), ...]}`` just before it sends those messages.
    """

    def init(self, config: Any) -> None:
        """Called once with the ``ProducerConfig`` before the first hook."""

    def before_enqueue(self, data: ProducerData) -> ProducerData | None:
        return data

    def after_enqueue(self, data: ProducerData, added: bool) -> None:
        """Called after each enqueue attempt (``added`` False when the queue was full)."""

    def after_dequeuing(self, batch: list[ProducerData]) -> list[ProducerData]:
        return batch

    def before_sending(self, batch: list[ProducerData]) -> list[ProducerData]:
        return batch

    def after_serialization(self, messages: dict[tuple[str, int], list[tuple[bytes | None, bytes | None]]]) -> None:
        """The encoded messages about to be sent, by (topic, partition)."""

    def after_sending(self, batch: list[ProducerData], error: BaseException | None) -> None:
        """Called once the event handler returned (``error`` None) or raised (``error`` set)."""

    def last_batch_before_close(self) -> list[ProducerData]:
        return []

    def close(self) -> None:
        """Called when the producer closes, after the last batch."""


class EventHandler:
    """``kafka.producer.async.EventHandler``: serializes and sends one batch of ``ProducerData`` (each with a
    single message in async mode), raising when it could not; ``close`` releases what it holds."""

    def init(self, config: Any, callback_handler: CallbackHandler) -> None:
        """Called once before the first ``handle``."""

    def handle(self, batch: list[ProducerData]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Called once when the producer closes."""


_SEEDS_NAMES = {
    "kafka.serializer.DefaultEncoder": DefaultEncoder,
    "kafka.serializer.StringEncoder": StringEncoder,
    "kafka.producer.DefaultPartitioner": DefaultPartitioner,
}


def _resolve(key: str, path: str) -> Any:
    if path in _SEEDS_NAMES:
        return _SEEDS_NAMES[path]
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ConfigError(f"setting {key!r} must name a class as 'package.module.Class', got {path!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"setting {key!r}: cannot import module {module_name!r} ({e})") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"setting {key!r}: module {module_name!r} has no attribute {attr!r}") from None


def load_plugin(key: str, spec: Any, kind: type) -> Any:
    """The plug-in object configured as ``spec`` for setting ``key`` (see the module docstring).

    ``kind`` is the interface: the object must be an instance of it or provide its main method (duck typing;
    a callback handler must subclass ``CallbackHandler``); raises ``ConfigError`` naming the setting otherwise.
    """
    if isinstance(spec, str):
        spec = _resolve(key, spec.strip())
    if inspect.isclass(spec):
        try:
            obj = spec()
        except TypeError as e:
            raise ConfigError(f"setting {key!r}: {spec.__name__}() cannot be created without arguments ({e})") from None
    else:
        obj = spec
    if isinstance(obj, kind):
        return obj
    if kind is CallbackHandler:  # many optional hooks: a subclass supplies the ones it does not override
        raise ConfigError(f"setting {key!r} must be a CallbackHandler subclass or instance, got {obj!r}")
    main_methods: dict[type, str] = {Encoder: "to_message", Partitioner: "partition", EventHandler: "handle"}
    required = main_methods[kind]
    if not callable(getattr(obj, required, None)):
        raise ConfigError(f"setting {key!r} must be a {kind.__name__} (with a {required} method), got {obj!r}")
    return obj
