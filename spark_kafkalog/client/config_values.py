"""Parsers of client setting values, and the built-in (de)serializers the settings name (for ``config``).

A parser takes ``(key, value)`` - a string as in a ``.properties`` file or Spark's ``kafka.*`` options, or a
Python value - and returns the typed value, or raises ``ConfigError`` naming the key and what was expected.
``_int(lo, hi)`` and ``_choice(mapping)`` build parsers; ``_callable_or_name`` takes a callable, a built-in name
(or a Java class name ending in one) or, for the partitioner, an importable ``module:Name``. Pure and
thread-safe; the names keep their underscore: they are ``config``'s internals (its key table and defaults),
not an API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.client.serialization import (
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    JSONDeserializer,
    JSONSerializer,
)
from spark_kafkalog.records import Compression

_INT32_MAX = 2147483647


def _int(lo: int | None = None, hi: int | None = None) -> Callable[[str, Any], int]:
    def parse(key: str, v: Any) -> int:
        if isinstance(v, bool):
            raise ConfigError(f"setting {key!r} must be an integer, got {v!r}")
        if isinstance(v, str):
            try:
                v = int(v.strip())
            except ValueError:
                raise ConfigError(f"setting {key!r} must be an integer, got {v!r}") from None
        if not isinstance(v, int):
            raise ConfigError(f"setting {key!r} must be an integer, got {type(v).__name__} {v!r}")
        if lo is not None and v < lo:
            raise ConfigError(f"setting {key!r} must be >= {lo}, got {v}")
        if hi is not None and v > hi:
            raise ConfigError(f"setting {key!r} must be <= {hi}, got {v}")
        return v

    return parse


def _bool(key: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    raise ConfigError(f"setting {key!r} must be true or false, got {v!r}")


def _str(key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ConfigError(f"setting {key!r} must be a string, got {type(v).__name__} {v!r}")
    return v


def _choice(mapping: Mapping[str, Any]) -> Callable[[str, Any], Any]:
    def parse(key: str, v: Any) -> Any:
        text = str(v).strip().lower()
        if text not in mapping:
            raise ConfigError(f"setting {key!r} must be one of {', '.join(mapping)}; got {v!r}")
        return mapping[text]

    return parse


def _security_protocol(key: str, v: Any) -> str:
    from spark_kafkalog.client.network.security import parse_protocol
    from spark_kafkalog.security.errors import SecurityConfigError

    try:
        return parse_protocol(v, key)
    except SecurityConfigError as e:
        raise ConfigError(str(e)) from None


def _items(key: str, v: Any, expected: str) -> list[Any]:
    """A list setting given as a comma-separated string or a list/tuple; ``expected`` describes it in errors."""
    if isinstance(v, str):
        return v.split(",")
    if isinstance(v, (list, tuple)):
        return list(v)
    raise ConfigError(f"setting {key!r} must be {expected}, got {v!r}")


def _servers(key: str, v: Any) -> tuple[str, ...]:
    items = _items(key, v, "'host:port[,host:port...]' or a list")
    out = []
    for item in items:
        item = str(item).strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"setting {key!r}: {item!r} is not host:port (e.g. localhost:9092)")
        out.append(item)
    if not out:
        raise ConfigError(f"setting {key!r} names no server; expected e.g. 'localhost:9092'")
    return tuple(out)


def _compression(key: str, v: Any) -> Compression:
    if isinstance(v, Compression):
        return v
    try:
        return Compression.from_name(str(v))
    except ValueError as e:
        raise ConfigError(f"setting {key!r}: {e}") from None


def _gzip_level(key: str, v: Any) -> int:
    """Kafka's ``compression.gzip.level``: 1-9, or -1 for the default."""
    level = _int(-1, 9)(key, v)
    if level == 0:
        raise ConfigError(f"setting {key!r} must be -1 (the default) or between 1 and 9, got 0")
    return level


def _acks(key: str, v: Any) -> int:
    text = str(v).strip().lower()
    if text in ("all", "-1"):
        return -1
    if text in ("0", "1"):
        return int(text)
    raise ConfigError(f"setting {key!r} must be one of all, -1, 0, 1; got {v!r}")


def _callable_or_name(names: Mapping[str, Any], *, importable: bool = False) -> Callable[[str, Any], Any]:
    """A callable setting given as an object, a built-in name (or a Java class name ending in one), or, with
    ``importable``, a Python path ``module:Name`` / ``module.Name`` imported on first use (so Spark
    executors can load it by name)."""

    def parse(key: str, v: Any) -> Any:
        if isinstance(v, str):
            text = v.strip()
            found = names.get(text) or names.get(text.rsplit(".", 1)[-1])
            if found is None and importable and ("." in text or ":" in text):
                return _import_object(key, text, names)
            if found is None:
                hint = "a Python callable, 'module:Name'" if importable else "a Python callable"
                raise ConfigError(
                    f"setting {key!r}: unknown name {v!r}; pass {hint} or one of {', '.join(sorted(set(names)))}"
                )
            return found
        if v is None or callable(v) or hasattr(v, "partition"):
            return v
        raise ConfigError(f"setting {key!r} must be a callable, got {type(v).__name__}")

    return parse


def _import_object(key: str, path: str, names: Mapping[str, Any]) -> Any:
    import importlib

    module_name, sep, attr = path.partition(":") if ":" in path else path.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as e:
        raise ConfigError(
            f"setting {key!r}: cannot import {path!r} ({e}); pass 'module:Name' of an importable Python class or "
            f"callable, or one of {', '.join(sorted(set(names)))}"
        ) from None
    if not (callable(obj) or hasattr(obj, "partition")):
        raise ConfigError(f"setting {key!r}: {path!r} is a {type(obj).__name__}, not a class or callable")
    return obj


def _bytes_serializer(value: Any, topic: str | None = None, headers: Any = None) -> bytes | None:
    """Default serializer: bytes-like values as they are, ``str`` as UTF-8, ``None`` as null. Also the
    producer's per-record function as it is (``topic``, ``headers`` unused: ``resolve_serializer``'s default)."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(
        f"cannot send a {type(value).__name__} without a serializer: pass bytes or str, "
        "or set key.serializer/value.serializer"
    )


def _string_serializer(value: Any) -> bytes | None:
    return None if value is None else str(value).encode("utf-8")


def _identity(value: Any) -> Any:
    return value


def _string_deserializer(value: bytes | None) -> str | None:
    return None if value is None else bytes(value).decode("utf-8")


# Names (Kafka's Java class names too: org.apache.kafka.common.serialization.IntegerSerializer's last part) of
# the built-in (de)serializers. "string"/StringSerializer keep their lenient function (str() of any object, as
# before the serializer objects); the integer, double and JSON ones are client.serialization's objects.
_SERIALIZERS = {
    "bytes": _bytes_serializer,
    "ByteArraySerializer": _bytes_serializer,
    "BytesSerializer": _bytes_serializer,
    "string": _string_serializer,
    "StringSerializer": _string_serializer,
    "integer": IntegerSerializer(),
    "IntegerSerializer": IntegerSerializer(),
    "double": DoubleSerializer(),
    "DoubleSerializer": DoubleSerializer(),
    "json": JSONSerializer(),
}
_DESERIALIZERS = {
    "bytes": _identity,
    "ByteArrayDeserializer": _identity,
    "BytesDeserializer": _identity,
    "string": _string_deserializer,
    "StringDeserializer": _string_deserializer,
    "integer": IntegerDeserializer(),
    "IntegerDeserializer": IntegerDeserializer(),
    "double": DoubleDeserializer(),
    "DoubleDeserializer": DoubleDeserializer(),
    "json": JSONDeserializer(),
}


def _group_instance_id(key: str, v: Any) -> str | None:
    if v is None:
        return None
    text = _str(key, v).strip()
    if not text:
        raise ConfigError(f"setting {key!r} must not be empty (leave it unset for a dynamic member)")
    return text


def _assignors(key: str, v: Any) -> tuple[str, ...]:
    """Assignor names, comma-separated or a list; Java class names map to ours (``...RangeAssignor`` -> range)."""
    from spark_kafkalog.client.consumer.assignors import assignor_by_name
    from spark_kafkalog.client.consumer.partition_assignor import UnknownAssignorError

    items = _items(key, v, "assignor names (e.g. 'range,cooperative-sticky')")
    names = []
    for item in items:
        name = str(getattr(item, "name", item)).strip()
        name = _JAVA_ASSIGNORS.get(name.rsplit(".", 1)[-1], name)
        if not name:
            continue
        try:
            assignor_by_name(name)
        except UnknownAssignorError as e:
            raise ConfigError(f"setting {key!r}: {e}") from None
        if name not in names:
            names.append(name)
    if not names:
        raise ConfigError(f"setting {key!r} names no assignor; e.g. 'range,cooperative-sticky'")
    return tuple(names)


def _group_protocol(key: str, v: Any) -> str:
    text = str(v).strip().lower()
    if text not in ("classic", "consumer"):
        raise ConfigError(
            f"setting {key!r} must be classic (JoinGroup/SyncGroup) or consumer (KIP-848, ConsumerGroupHeartbeat); "
            f"got {v!r}"
        )
    return text


def _remote_assignor(key: str, v: Any) -> str | None:
    if v is None:
        return None
    text = _str(key, v).strip()
    return text or None


_JAVA_ASSIGNORS = {
    "RangeAssignor": "range",
    "RoundRobinAssignor": "roundrobin",
    "StickyAssignor": "sticky",
    "CooperativeStickyAssignor": "cooperative-sticky",
}


def _partitioner_names() -> dict[str, Any]:
    from spark_kafkalog.client.producer.partitioner import PARTITIONERS_BY_NAME

    return PARTITIONERS_BY_NAME


def _partitioner(key: str, v: Any) -> Any:
    return _callable_or_name(_partitioner_names(), importable=True)(key, v)
