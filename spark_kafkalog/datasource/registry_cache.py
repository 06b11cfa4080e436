"""Per-process caches of Schema Registry clients, schemas by id, codecs and writer schema ids (no pyspark).

A Spark executor's Python worker reads many batches (and, with ``spark.python.worker.reuse``, many tasks):
each registry (keyed by its settings, ``RegistrySettings.cache_key``) gets one ``SchemaRegistryClient`` per
process, each schema id is fetched once per process, and each reader schema's codec is built once. Schema ids
are immutable in a registry (an id always names the same schema), so nothing expires; ``clear()`` empties
everything (tests). Thread-safe: one lock guards the dictionaries; a miss may be fetched twice by racing
threads, and the first answer stored wins (both are the same schema).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from spark_kafkalog.datasource.formats import RegistrySettings

if TYPE_CHECKING:
    from spark_kafkalog.client.schema_registry import SchemaRegistryClient
    from spark_kafkalog.schemas import ParsedSchema
    from spark_kafkalog.schemas.codec import ValueCodec

__all__ = ["cached", "clear", "reader_codec", "registry_client", "schema_by_id"]

_lock = threading.Lock()
_clients: dict[Any, SchemaRegistryClient] = {}
_values: dict[Any, Any] = {}

T = TypeVar("T")


def registry_client(settings: RegistrySettings) -> SchemaRegistryClient:
    """This process's client of the registry ``settings`` name."""
    with _lock:
        client = _clients.get(settings.cache_key)
    if client is not None:
        return client
    from spark_kafkalog.client.schema_registry import SchemaRegistryClient

    client = SchemaRegistryClient(settings.client_conf())
    with _lock:
        return _clients.setdefault(settings.cache_key, client)


def cached(settings: RegistrySettings, key: tuple, make: Callable[[], T]) -> T:
    """The value cached under ``key`` for the registry ``settings``, made by ``make()`` on a miss (errors
    are not cached: the next call tries again)."""
    full = (settings.cache_key, *key)
    with _lock:
        if full in _values:
            return _values[full]
    value = make()
    with _lock:
        return _values.setdefault(full, value)


def schema_by_id(settings: RegistrySettings, schema_id: int) -> ParsedSchema:
    """The schema registered with ``schema_id`` (references resolved), fetched once per process."""
    return cached(settings, ("schema", schema_id), lambda: registry_client(settings).parsed(schema_id))


def reader_codec(settings: RegistrySettings, schema_id: int, protobuf_message: str | None = None) -> ValueCodec:
    """The codec of reader schema ``schema_id`` (for Protobuf, of its message ``protobuf_message``; None: the
    file's first message)."""
    from spark_kafkalog.schemas.providers import codec_for

    def make() -> ValueCodec:
        reader = schema_by_id(settings, schema_id)
        options = {"message": protobuf_message} if protobuf_message is not None else {}
        return codec_for(reader, **options)

    return cached(settings, ("codec", schema_id, protobuf_message), make)


def clear() -> None:
    """Forget every client, schema and codec of this process."""
    with _lock:
        _clients.clear()
        _values.clear()
