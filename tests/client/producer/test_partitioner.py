"""Partitioners: Java-identical murmur2 placement of keyed records, sticky null keys, round robin, plugins."""

from __future__ import annotations

import random

import pytest

from spark_kafkalog.client import DefaultPartitioner, RoundRobinPartitioner, UniformStickyPartitioner
from spark_kafkalog.client.producer.partitioner import make_partitioner

# Java Utils.murmur2 values (Kafka's UtilsTest); the partition is toPositive(hash) % n.
JAVA_MURMUR2 = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536}


@pytest.mark.parametrize("key, java_hash", JAVA_MURMUR2.items())
@pytest.mark.parametrize("num_partitions", [1, 3, 7, 12])
def test_keyed_records_land_where_the_java_producer_puts_them(key, java_hash, num_partitions):
    partitioner = DefaultPartitioner()
    expected = (java_hash & 0x7FFFFFFF) % num_partitions
    assert partitioner.partition("t", key, b"v", num_partitions, list(range(num_partitions))) == expected


def test_keyed_placement_ignores_leader_availability():
    partitioner = DefaultPartitioner()
    expected = (JAVA_MURMUR2[b"foobar"] & 0x7FFFFFFF) % 5
    assert partitioner.partition("t", b"foobar", None, 5, available=[p for p in range(5) if p != expected]) == expected


def test_null_keys_stick_to_one_partition_until_batch_size_bytes_then_move():
    partitioner = DefaultPartitioner(batch_size=100, rng=random.Random(1))
    available = [0, 1, 2, 3]
    first = partitioner.partition("t", None, b"x", 4, available)
    for _ in range(4):  # 4 * 30 bytes: stays until 100 bytes were produced there
        assert partitioner.partition("t", None, b"x", 4, available) == first
        partitioner.record_appended("t", first, 30, 4, available)
    second = partitioner.partition("t", None, b"x", 4, available)
    assert second != first


def test_sticky_partitions_are_chosen_among_partitions_with_a_leader():
    partitioner = DefaultPartitioner(batch_size=1, rng=random.Random(3))
    seen = set()
    for _ in range(50):
        p = partitioner.partition("t", None, b"x", 6, [1, 4])
        partitioner.record_appended("t", p, 10, 6, [1, 4])
        seen.add(p)
    assert seen == {1, 4}


def test_sticky_partitioning_spreads_null_keys_over_all_partitions_over_time():
    partitioner = DefaultPartitioner(batch_size=10, rng=random.Random(7))
    counts = [0] * 4
    for _ in range(4000):
        p = partitioner.partition("t", None, b"x", 4, [0, 1, 2, 3])
        partitioner.record_appended("t", p, 5, 4, [0, 1, 2, 3])
        counts[p] += 1
    assert min(counts) > 700


def test_ignore_keys_makes_keyed_records_sticky():
    partitioner = DefaultPartitioner(batch_size=10**9, ignore_keys=True, rng=random.Random(0))
    assert len({partitioner.partition("t", b"k%d" % i, None, 8, list(range(8))) for i in range(50)}) == 1
    uniform = UniformStickyPartitioner(batch_size=10**9, rng=random.Random(0))
    assert len({uniform.partition("t", b"k%d" % i, None, 8, list(range(8))) for i in range(50)}) == 1


def test_round_robin_cycles_over_available_partitions_per_topic():
    partitioner = RoundRobinPartitioner()
    assert [partitioner.partition("a", b"k", None, 3, [0, 1, 2]) for _ in range(6)] == [0, 1, 2, 0, 1, 2]
    assert [partitioner.partition("b", None, None, 4, [1, 3]) for _ in range(4)] == [1, 3, 1, 3]


def test_make_partitioner_accepts_classes_objects_and_plain_functions():
    fn, hook = make_partitioner(None, batch_size=10, ignore_keys=False)
    assert fn.__self__.__class__ is DefaultPartitioner and hook is not None
    fn, hook = make_partitioner(RoundRobinPartitioner, batch_size=10, ignore_keys=False)
    assert hook is None and fn("t", None, None, 2, [0, 1]) == 0

    def last(topic, key, value, num_partitions, available):
        return num_partitions - 1

    fn, hook = make_partitioner(last, batch_size=10, ignore_keys=False)
    assert fn("t", None, None, 5, []) == 4 and hook is None

    class NoArgs:
        def partition(self, topic, key, value, num_partitions, available):
            return 0

    fn, _ = make_partitioner(NoArgs, batch_size=10, ignore_keys=False)
    assert fn("t", None, None, 5, []) == 0
    with pytest.raises(TypeError, match="not callable"):
        make_partitioner(42, batch_size=10, ignore_keys=False)
