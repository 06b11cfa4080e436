"""murmur2 against values computed by Kafka's Java implementation, and the default partitioner."""

from __future__ import annotations

import pytest

from spark_kafkalog.records import default_partition, murmur2, to_positive

# From apache/kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2
# (commit f55581dc73953c3509a4702433aeeeddc2970779).
JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize(("key", "expected"), sorted(JAVA_MURMUR2.items()))
def test_murmur2_equals_java_utils_murmur2(key, expected):
    assert murmur2(key) == expected


def test_murmur2_accepts_bytearray_and_memoryview():
    assert murmur2(bytearray(b"foobar")) == murmur2(memoryview(b"foobar")) == -790332482


def test_to_positive_clears_the_sign_bit_like_java():
    assert to_positive(-790332482) == 1357151166
    assert to_positive(-(2**31)) == 0
    assert to_positive(123) == 123


def test_default_partition_is_the_positive_hash_modulo_the_partition_count():
    assert default_partition(b"foobar", 10) == 1357151166 % 10 == 6
    assert default_partition(b"21", 3) == to_positive(-973932308) % 3
    assert all(default_partition(key, 7) == to_positive(h) % 7 for key, h in JAVA_MURMUR2.items())


def test_default_partition_agrees_with_kafka_python_for_many_keys():
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    for n in range(300):
        key = f"key-{n}".encode() * (n % 5)
        assert to_positive(murmur2(key)) == to_positive(kafka_python_murmur2(key))


def test_default_partition_rejects_a_non_positive_partition_count():
    with pytest.raises(ValueError):
        default_partition(b"k", 0)
