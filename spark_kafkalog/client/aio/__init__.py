"""The asyncio Kafka client: ``AsyncKafkaClient`` (connections, metadata, ListOffsets, Fetch, FindCoordinator),
``AIOProducer``, ``AIOConsumer`` and ``AIOAdminClient``, on ``network.asyncio_transport.AsyncKafkaConnection``
with the blocking client's configuration (``ClientConfig``, the same settings and names) and semantics.

Concurrency: one event loop. Every object is used from the loop it was started on; its methods are coroutines
of that loop and are not thread-safe. Connections are shared per broker by the coroutines of one client.

    from spark_kafkalog.client.aio import AIOProducer

    async with AIOProducer("localhost:9092", linger_ms=5) as producer:
        metadata = await producer.send_and_wait("events", b"value", key=b"key")

``AIOProducer``, ``AIOConsumer`` and ``AIOAdminClient`` are imported on first use (module ``__getattr__``), so
importing ``AsyncKafkaClient`` does not load the producer and consumer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from spark_kafkalog.client.aio.client import AsyncKafkaClient

if TYPE_CHECKING:
    from spark_kafkalog.client.aio.admin import AIOAdminClient
    from spark_kafkalog.client.aio.consumer import AIOConsumer
    from spark_kafkalog.client.aio.producer import AIOProducer

__all__ = ["AIOAdminClient", "AIOConsumer", "AIOProducer", "AsyncKafkaClient"]

_LAZY = {
    "AIOAdminClient": "spark_kafkalog.client.aio.admin",
    "AIOConsumer": "spark_kafkalog.client.aio.consumer",
    "AIOProducer": "spark_kafkalog.client.aio.producer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
