"""The range assignment of Kafka 0.8's consumer rebalancing algorithm (design section 5.6), as pure tables."""

from __future__ import annotations

import pytest

from spark_kafkalog.legacy.range_rebalance import assign_for_consumer, consumer_thread_ids, range_assign
from spark_kafkalog.legacy.topic_filter import Blacklist, Whitelist


@pytest.mark.parametrize(
    ("partitions", "threads", "expected"),
    [
        # even split: consecutive blocks in sorted order
        (range(6), ["c-0", "c-1", "c-2"], {"c-0": [0, 1], "c-1": [2, 3], "c-2": [4, 5]}),
        # uneven: the first n % m threads get one more
        (range(7), ["c-0", "c-1", "c-2"], {"c-0": [0, 1, 2], "c-1": [3, 4], "c-2": [5, 6]}),
        (range(8), ["c-0", "c-1", "c-2"], {"c-0": [0, 1, 2], "c-1": [3, 4, 5], "c-2": [6, 7]}),
        # more consumers than partitions: the last ones get nothing
        (range(2), ["a-0", "b-0", "c-0"], {"a-0": [0], "b-0": [1], "c-0": []}),
        # no partitions yet
        ([], ["a-0"], {"a-0": []}),
        # partitions sorted numerically, threads as strings (c-10 before c-2, as 0.8 compared them)
        ([10, 2, 1, 0], ["c-2", "c-10"], {"c-10": [0, 1], "c-2": [2, 10]}),
        # one thread takes all
        (range(3), ["only-0"], {"only-0": [0, 1, 2]}),
    ],
)
def test_range_assign_splits_sorted_partitions_over_sorted_threads(partitions, threads, expected):
    assert range_assign(partitions, threads) == expected


def test_every_partition_goes_to_exactly_one_thread():
    for n in range(0, 13):
        for m in range(1, 6):
            threads = [f"t-{i}" for i in range(m)]
            result = range_assign(range(n), threads)
            owned = sorted(p for parts in result.values() for p in parts)
            assert owned == list(range(n))
            sizes = [len(parts) for parts in result.values()]
            assert max(sizes) - min(sizes) <= 1


def test_consumer_thread_ids_are_one_per_stream():
    assert consumer_thread_ids("g_host-1", {"a": 2, "b": 1}) == {"a": ["g_host-1-0", "g_host-1-1"], "b": ["g_host-1-0"]}
    with pytest.raises(ValueError, match="streams must be >= 1"):
        consumer_thread_ids("c", {"a": 0})


def test_three_consumers_with_two_threads_each_over_eight_partitions():
    group = {"t": [f"{c}-{i}" for c in ("c1", "c2", "c3") for i in range(2)]}
    parts = {"t": list(range(8))}
    by_consumer = {c: assign_for_consumer(consumer_thread_ids(c, {"t": 2}), parts, group) for c in ("c1", "c2", "c3")}
    assert by_consumer["c1"] == {("t", 0): "c1-0", ("t", 1): "c1-0", ("t", 2): "c1-1", ("t", 3): "c1-1"}
    assert by_consumer["c2"] == {("t", 4): "c2-0", ("t", 5): "c2-1"}
    assert by_consumer["c3"] == {("t", 6): "c3-0", ("t", 7): "c3-1"}


def test_topics_are_assigned_independently_over_their_own_subscribers():
    # c1 reads a and b, c2 reads only b: a's partitions all go to c1, b's are split
    group = {"a": ["c1-0"], "b": ["c1-0", "c2-0"]}
    parts = {"a": [0, 1], "b": [0, 1, 2]}
    assert assign_for_consumer({"a": ["c1-0"], "b": ["c1-0"]}, parts, group) == {
        ("a", 0): "c1-0",
        ("a", 1): "c1-0",
        ("b", 0): "c1-0",
        ("b", 1): "c1-0",
    }
    assert assign_for_consumer({"b": ["c2-0"]}, parts, group) == {("b", 2): "c2-0"}


def test_a_consumer_not_yet_seen_in_the_registry_counts_itself():
    assert assign_for_consumer({"t": ["new-0"]}, {"t": [0, 1]}, {"t": ["old-0"]}) == {("t", 0): "new-0"}


@pytest.mark.parametrize(
    ("topic_filter", "allowed", "refused"),
    [
        (Whitelist("clicks.*"), ["clicks", "clicks-2"], ["views", "xclicks", "__consumer_offsets"]),
        (Whitelist("a,b"), ["a", "b"], ["ab", "c"]),
        (Whitelist(' "a, b" '), ["a", "b"], ["a,b"]),
        (Whitelist(".*"), ["x", "__y"], ["__consumer_offsets", "__transaction_state"]),
        (Blacklist("clicks.*"), ["views"], ["clicks", "clicks-2", "__consumer_offsets"]),
    ],
)
def test_topic_filters_match_whole_names_and_skip_internal_topics(topic_filter, allowed, refused):
    for topic in allowed:
        assert topic_filter.is_topic_allowed(topic), topic
    for topic in refused:
        assert not topic_filter.is_topic_allowed(topic), topic


def test_internal_topics_are_allowed_when_not_excluded():
    assert Whitelist(".*").is_topic_allowed("__consumer_offsets", exclude_internal_topics=False)


def test_an_invalid_regex_is_refused():
    with pytest.raises(ValueError, match="invalid regex"):
        Whitelist("a(")
