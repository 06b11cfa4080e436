"""Partitioners: which partition a record without an explicit partition goes to.

A partitioner is any object with ``partition(topic, key, value, num_partitions, available) -> int`` or a
plain callable with that signature; ``key``/``value`` are the serialised bytes (``None`` when null) and
``available`` lists the partitions that currently have a leader (may be empty while metadata is
incomplete). An optional ``record_appended(topic, partition, size)`` hook tells it how many bytes
landed where.

* ``DefaultPartitioner`` (Kafka's built-in partitioner, KIP-794): a keyed record goes to
  ``toPositive(murmur2(key)) % num_partitions``, so keys land exactly where Java producers put them.
  Records with a null key (or every record with ``partitioner.ignore.keys=true``) use *sticky*
  partitioning: they stick to one randomly chosen available partition until ``batch.size`` bytes were
  produced to it, then move to another random one. So null-key records are spread evenly over time but
  neither round-robin nor reproducible (as in Java since 2.4; Java additionally prefers less loaded
  brokers, which we do not).
* ``UniformStickyPartitioner``: sticky for every record, keys ignored.
* ``RoundRobinPartitioner``: records cycle over the available partitions (keys ignored), per topic.

The built-in partitioners are thread-safe (``send`` may be called from several threads).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from spark_kafkalog.records import default_partition

__all__ = [
    "DefaultPartitioner",
    "PARTITIONERS_BY_NAME",
    "Partitioner",
    "RoundRobinPartitioner",
    "UniformStickyPartitioner",
    "make_partitioner",
]


class Partitioner(Protocol):
    def partition(
        self, topic: str, key: bytes | None, value: bytes | None, num_partitions: int, available: Sequence[int]
    ) -> int: ...


class _Sticky:
    """The sticky partition of each topic, moved after ``batch_size`` bytes (thread-safe)."""

    def __init__(self, batch_size: int, rng: random.Random | None = None) -> None:
        self.batch_size = max(batch_size, 1)
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._current: dict[str, list[int]] = {}  # topic -> [partition, bytes produced to it]

    def partition(self, topic: str, num_partitions: int, available: Sequence[int]) -> int:
        with self._lock:
            state = self._current.get(topic)
            if state is None or state[0] >= num_partitions or (available and state[0] not in available):
                state = [self._pick(num_partitions, available, None), 0]
                self._current[topic] = state
            return state[0]

    def record_appended(
        self, topic: str, partition: int, size: int, num_partitions: int, available: Sequence[int]
    ) -> None:
        if topic not in self._current:  # keyed records only: no sticky state to update
            return
        with self._lock:
            state = self._current.get(topic)
            if state is None or state[0] != partition:
                return
            state[1] += size
            if state[1] >= self.batch_size:
                self._current[topic] = [self._pick(num_partitions, available, partition), 0]

    def _pick(self, num_partitions: int, available: Sequence[int], previous: int | None) -> int:
        choices = [p for p in (available or range(num_partitions)) if p < num_partitions]
        if not choices:
            choices = list(range(num_partitions))
        if previous is not None and len(choices) > 1:
            choices = [p for p in choices if p != previous]
        return self._rng.choice(choices)


class DefaultPartitioner:
    """murmur2 for keyed records, sticky for the rest (see the module docstring)."""

    def __init__(self, batch_size: int = 16384, ignore_keys: bool = False, rng: random.Random | None = None) -> None:
        self.ignore_keys = ignore_keys
        self._sticky = _Sticky(batch_size, rng)

    def partition(
        self, topic: str, key: bytes | None, value: bytes | None, num_partitions: int, available: Sequence[int]
    ) -> int:
        if key is not None and not self.ignore_keys:
            return default_partition(key, num_partitions)
        return self._sticky.partition(topic, num_partitions, available)

    def record_appended(
        self, topic: str, partition: int, size: int, num_partitions: int, available: Sequence[int]
    ) -> None:
        self._sticky.record_appended(topic, partition, size, num_partitions, available)


class UniformStickyPartitioner(DefaultPartitioner):
    def __init__(self, batch_size: int = 16384, ignore_keys: bool = True, rng: random.Random | None = None) -> None:
        super().__init__(batch_size, True, rng)


class RoundRobinPartitioner:
    def __init__(self, batch_size: int = 16384, ignore_keys: bool = True, rng: random.Random | None = None) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, int] = {}

    def partition(
        self, topic: str, key: bytes | None, value: bytes | None, num_partitions: int, available: Sequence[int]
    ) -> int:
        with self._lock:
            n = self._counters.get(topic, 0)
            self._counters[topic] = n + 1
        choices = [p for p in available if p < num_partitions] if available else None
        if choices:
            return choices[n % len(choices)]
        return n % num_partitions


PARTITIONERS_BY_NAME: dict[str, type] = {
    "default": DefaultPartitioner,
    "murmur2_random": DefaultPartitioner,  # librdkafka's name for the Java-compatible partitioner
    "DefaultPartitioner": DefaultPartitioner,
    "BuiltInPartitioner": DefaultPartitioner,
    "uniform_sticky": UniformStickyPartitioner,
    "UniformStickyPartitioner": UniformStickyPartitioner,
    "round_robin": RoundRobinPartitioner,
    "RoundRobinPartitioner": RoundRobinPartitioner,
}


def make_partitioner(
    setting: Any, *, batch_size: int, ignore_keys: bool
) -> tuple[Callable[..., int], Callable[..., None] | None]:
    """``(partition function, record_appended hook or None)`` for a ``partitioner`` setting: ``None``
    (the default partitioner), a class (instantiated with ``batch_size``/``ignore_keys`` when it accepts
    them), an object with ``partition``, or a plain callable."""
    if setting is None:
        setting = DefaultPartitioner
    if isinstance(setting, type):
        try:
            setting = setting(batch_size=batch_size, ignore_keys=ignore_keys)
        except TypeError:
            setting = setting()
    partition = getattr(setting, "partition", None)
    if partition is None:
        if not callable(setting):
            raise TypeError(f"partitioner {setting!r} has no partition() method and is not callable")
        return setting, None
    return partition, getattr(setting, "record_appended", None)
