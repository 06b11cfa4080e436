"""Java's string hash and HashMap iteration order, checked against values a JVM (OpenJDK 17) printed."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.consumer.java_collections import (
    JavaHashMap,
    java_hash_order,
    java_string_hash,
    java_string_key,
    java_topic_partition_hash,
)
from spark_kafkalog.client.types import TopicPartition


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", 0),
        ("hello", 99162322),
        ("polygenelubricants", -(2**31)),
        ("é\U0001f600", 1996812),  # a surrogate pair hashes as two UTF-16 units
        ("consumer-1-5f7c3a2e", 2083931377),
    ],
)
def test_string_hash_is_javas(text, expected):
    assert java_string_hash(text) == expected


@pytest.mark.parametrize(
    "keys, java_order",
    [
        (
            ["consumer-1", "consumer-2", "consumer-10", "c", "b", "a"],
            ["a", "b", "consumer-10", "c", "consumer-2", "consumer-1"],
        ),
        (  # 15 keys: the table grew from 16 to 32 buckets on the 13th
            [f"m-{i}" for i in range(15)],
            "m-10 m-1 m-13 m-0 m-14 m-3 m-11 m-2 m-12 m-5 m-4 m-7 m-6 m-9 m-8".split(),
        ),
        (  # Aa, BB and C# share one hash: one bucket, in insertion order
            ["Aa", "BB", "C#", "zz", "é", "\U0001f600", "consumer-1-5f7c3a2e-9b1d-4e8a-a3c6-2d4f6b8e0a1c"],
            ["Aa", "BB", "C#", "zz", "\U0001f600", "é", "consumer-1-5f7c3a2e-9b1d-4e8a-a3c6-2d4f6b8e0a1c"],
        ),
    ],
)
def test_hash_map_iterates_in_javas_order(keys, java_order):
    assert java_hash_order(keys) == java_order


def test_hash_set_of_topic_partitions_iterates_in_javas_order():
    m: JavaHashMap[TopicPartition, None] = JavaHashMap(java_topic_partition_hash)
    for i in range(20):
        m[TopicPartition("orders" if i % 2 == 0 else "clicks", i)] = None
    java = (
        "orders-8 orders-10 orders-12 orders-14 orders-16 clicks-17 orders-18 clicks-19 clicks-13 clicks-15 "
        "clicks-9 clicks-11 clicks-5 clicks-7 orders-0 clicks-1 orders-2 clicks-3 orders-4 orders-6"
    )
    assert [str(tp) for tp in m] == java.split()


def test_removal_keeps_the_order_of_the_rest_and_a_reinsert_goes_last_in_its_bucket():
    m: JavaHashMap[str, int] = JavaHashMap(java_string_hash)
    for i, key in enumerate(["Aa", "BB", "C#", "x"]):
        m[key] = i
    del m["Aa"]
    m["Aa"] = 9
    assert list(m) == ["BB", "C#", "Aa", "x"] and m["Aa"] == 9 and len(m) == 4


def test_string_order_is_by_utf16_units_not_code_points():
    # U+FB01 sorts after U+1F600 in Java (0xFB01 > 0xD83D), before it in Python's code-point order
    assert sorted(["\U0001f600", "\ufb01"], key=java_string_key) == ["\U0001f600", "\ufb01"]
    assert sorted(["\U0001f600", "\ufb01"]) == ["\ufb01", "\U0001f600"]
