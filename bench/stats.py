"""Small helpers shared by the benchmarks: a percentile of sorted samples, waiting for a condition, and
producing many messages with confluent-kafka."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``sorted_values`` (ascending), nearest rank."""
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def wait_for(cond: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Poll ``cond()`` every 100 ms until truthy and return it; ``TimeoutError`` naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not (value := cond()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.1)
    return value


def confluent_produce_all(
    producer: Any, topic: str, messages: Iterable[tuple[bytes, bytes | None, int | None]]
) -> None:
    """Produce ``(value, key, partition or None)`` messages with a confluent-kafka ``Producer``, waiting
    whenever its queue is full; raises ``RuntimeError`` unless every message was delivered."""
    produce = producer.produce
    for i, (value, key, partition) in enumerate(messages):
        while True:
            try:
                if partition is None:
                    produce(topic, value, key)
                else:
                    produce(topic, value, key, partition=partition)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 50_000 == 0:
            producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError(f"confluent-kafka could not deliver every message to {topic}")


def confluent_fill(
    bootstrap: str, topic: str, values: list[bytes], records: int, partitions: int, **settings: Any
) -> float:
    """Produce ``records`` records (``values`` cycled, keys ``key-<i>``, round-robin over ``partitions``) with a
    confluent-kafka ``Producer`` batching for throughput (``settings`` added, e.g. ``compression.type``);
    seconds taken."""
    import time

    import confluent_kafka

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
            **settings,
        }
    )
    started = time.perf_counter()
    messages = ((values[i % len(values)], b"key-%d" % i, i % partitions) for i in range(records))
    confluent_produce_all(producer, topic, messages)
    return time.perf_counter() - started
