"""Java's orders, reproduced: ``String.compareTo``, ``String.hashCode`` and ``java.util.HashMap`` iteration order.

Kafka's client-side assignors run in the group leader; when the leader is a Java consumer, its result depends on
these orders in a few tie-breaks (which member is visited first, which of several equivalent partitions moves).
Reproducing them makes our assignors give the Java leader's answer, not merely an equally valid one.

``JavaHashMap`` keeps Java 8+ ``HashMap``'s iteration order: buckets by ``(h ^ (h >>> 16)) & (capacity - 1)``,
insertion order within a bucket, capacity doubling past 3/4 load (splitting each bucket in order), and the resize
Java makes instead of treeifying a bucket of 9 keys while capacity is below 64. Not reproduced: the order inside a
treeified bucket (9+ colliding keys at capacity >= 64), which then stays insertion order. Single-threaded values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

__all__ = [
    "JavaHashMap",
    "java_hash_order",
    "java_string_hash",
    "java_string_key",
    "java_topic_partition_hash",
]

K = TypeVar("K")
V = TypeVar("V")

_DEFAULT_CAPACITY = 16
_MAXIMUM_CAPACITY = 1 << 30
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_key(text: str) -> bytes:
    """A sort key ordering strings as Java's ``String.compareTo`` does (by UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a signed int32."""
    data = java_string_key(text)
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def java_topic_partition_hash(tp: tuple[str, int]) -> int:
    """Kafka's ``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    topic, partition = tp
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _table_size_for(capacity: int) -> int:
    n = 1
    while n < capacity:
        n <<= 1
    return min(max(n, 1), _MAXIMUM_CAPACITY)


class JavaHashMap(Generic[K, V]):
    """A mapping whose iteration order is that of a ``java.util.HashMap`` given the same operations.

    ``hash_fn`` is the key's Java ``hashCode``. ``initial_capacity`` mirrors ``new HashMap<>(n)``; the default
    mirrors ``new HashMap<>()``. Use ``for_copy_of(n)`` for ``new HashMap<>(map)`` / ``new HashSet<>(collection)``
    of ``n`` entries, whose first table is sized for them.
    """

    def __init__(self, hash_fn: Callable[[K], int], initial_capacity: int | None = None) -> None:
        self._hash_fn = hash_fn
        self._values: dict[K, V] = {}
        self._capacity = 0
        self._initial_capacity = _DEFAULT_CAPACITY if initial_capacity is None else _table_size_for(initial_capacity)
        self._buckets: list[list[K]] = []

    @classmethod
    def for_copy_of(cls, hash_fn: Callable[[K], int], size: int) -> JavaHashMap[K, V]:
        """The map ``new HashMap<>(m)`` starts as, for a source of ``size`` entries (before its puts)."""
        return cls(hash_fn, int(size / 0.75 + 1.0))

    def _index(self, key: K, capacity: int) -> int:
        h = self._hash_fn(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    def _resize(self) -> None:
        if not self._buckets:
            self._capacity = self._initial_capacity
            self._buckets = [[] for _ in range(self._capacity)]
            return
        new_capacity = self._capacity * 2
        buckets: list[list[K]] = [[] for _ in range(new_capacity)]
        for bucket in self._buckets:
            for key in bucket:
                buckets[self._index(key, new_capacity)].append(key)
        self._capacity, self._buckets = new_capacity, buckets

    def __setitem__(self, key: K, value: V) -> None:
        if key in self._values:
            self._values[key] = value
            return
        if not self._buckets:
            self._resize()
        bucket = self._buckets[self._index(key, self._capacity)]
        bucket.append(key)
        self._values[key] = value
        if len(bucket) > _TREEIFY_THRESHOLD and self._capacity < _MIN_TREEIFY_CAPACITY:
            self._resize()  # Java's treeifyBin resizes a small table instead
        if len(self._values) > int(self._capacity * 0.75):
            self._resize()

    def __getitem__(self, key: K) -> V:
        return self._values[key]

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._values.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __delitem__(self, key: K) -> None:
        del self._values[key]
        self._buckets[self._index(key, self._capacity)].remove(key)

    def pop(self, key: K) -> V:
        value = self._values[key]
        del self[key]
        return value

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[K]:
        for bucket in self._buckets:
            yield from list(bucket)

    def keys(self) -> list[K]:
        return list(self)

    def items(self) -> list[tuple[K, V]]:
        return [(key, self._values[key]) for key in self]


def java_hash_order(keys: Iterable[str]) -> list[str]:
    """``keys`` in the iteration order of a ``new HashMap<>()`` they were put into in the given order."""
    m: JavaHashMap[str, None] = JavaHashMap(java_string_hash)
    for key in keys:
        m[key] = None
    return list(m)
