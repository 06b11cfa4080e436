"""The server-side assignors: balance, stickiness, determinism, heterogeneous subscriptions, racks."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.consumer.assignors import (
    BUILTIN_ASSIGNORS,
    MemberSubscriptionSpec,
    PartitionAssignorError,
    RangeAssignor,
    UniformAssignor,
    assignors_from_config,
)
from broker.coordinator.consumer.member import Assignment

from .fakes import FakeTopics


def spec(topics: FakeTopics, names: list[str], current: dict[str, list[int]] | None = None, rack: str | None = None):
    return MemberSubscriptionSpec(
        subscribed_topic_ids=frozenset(topics.id(n) for n in names),
        assignment={topics.id(n): frozenset(p) for n, p in (current or {}).items() if p},
        rack_id=rack,
    )


def by_name(topics: FakeTopics, result: dict[str, Assignment]) -> dict[str, dict[str, list[int]]]:
    return {
        m: {topics.topic_name(t) or "?": sorted(p) for t, p in sorted(a.items(), key=lambda x: str(x[0]))}
        for m, a in result.items()
    }


def sizes(result: dict[str, Assignment]) -> dict[str, int]:
    return {m: sum(len(p) for p in a.values()) for m, a in result.items()}


def assert_complete_and_exclusive(topics: FakeTopics, result: dict[str, Assignment], names: list[str]) -> None:
    seen: list[tuple[uuid.UUID, int]] = [(t, p) for a in result.values() for t, ps in a.items() for p in ps]
    assert len(seen) == len(set(seen)), "a partition was assigned twice"
    expected = {(topics.id(n), p) for n in names for p in range(topics.partition_count(topics.id(n)))}
    assert set(seen) == expected


@pytest.mark.parametrize("assignor", [UniformAssignor(), RangeAssignor()], ids=lambda a: a.name)
@pytest.mark.parametrize(
    ("partitions", "members", "expected_sizes"),
    [
        (6, 3, [2, 2, 2]),
        (7, 3, [3, 2, 2]),
        (2, 3, [1, 1, 0]),
        (1, 1, [1]),
        (0, 2, [0, 0]),
    ],
)
def test_homogeneous_fresh_assignment_is_complete_and_balanced(assignor, partitions, members, expected_sizes):
    topics = FakeTopics({"a": partitions})
    specs = {f"m{i}": spec(topics, ["a"]) for i in range(members)}
    result = assignor.assign(specs, topics)
    assert sorted(sizes(result).values(), reverse=True) == expected_sizes
    assert set(result) == set(specs)
    assert_complete_and_exclusive(topics, result, ["a"])


@pytest.mark.parametrize("assignor", [UniformAssignor(), RangeAssignor()], ids=lambda a: a.name)
def test_assignors_are_deterministic(assignor):
    topics = FakeTopics({"a": 7, "b": 5})
    specs = {f"m{i}": spec(topics, ["a", "b"]) for i in (3, 1, 2)}
    first = assignor.assign(specs, topics)
    again = assignor.assign(dict(reversed(list(specs.items()))), topics)
    assert first == again


def test_range_fresh_assignment_gives_contiguous_ranges_in_member_order():
    topics = FakeTopics({"a": 7})
    result = RangeAssignor().assign({m: spec(topics, ["a"]) for m in ("m2", "m1", "m3")}, topics)
    assert by_name(topics, result) == {"m1": {"a": [0, 1, 2]}, "m2": {"a": [3, 4]}, "m3": {"a": [5, 6]}}


def test_range_copartitioned_topics_get_the_same_partition_numbers_per_member():
    topics = FakeTopics({"a": 4, "b": 4})
    result = by_name(topics, RangeAssignor().assign({m: spec(topics, ["a", "b"]) for m in ("m1", "m2")}, topics))
    for member in ("m1", "m2"):
        assert result[member]["a"] == result[member]["b"]


def test_uniform_keeps_a_balanced_assignment_unchanged():
    topics = FakeTopics({"a": 6})
    current = {"m1": [1, 3, 5], "m2": [0, 2, 4]}
    result = UniformAssignor().assign({m: spec(topics, ["a"], {"a": p}) for m, p in current.items()}, topics)
    assert by_name(topics, result) == {m: {"a": p} for m, p in current.items()}


@pytest.mark.parametrize("assignor", [UniformAssignor(), RangeAssignor()], ids=lambda a: a.name)
def test_a_joining_member_takes_partitions_only_from_the_loaded_ones(assignor):
    topics = FakeTopics({"a": 6})
    fresh = assignor.assign({m: spec(topics, ["a"]) for m in ("m1", "m2")}, topics)
    current = by_name(topics, fresh)
    specs = {m: spec(topics, ["a"], current[m]) for m in ("m1", "m2")}
    specs["m3"] = spec(topics, ["a"])
    result = by_name(topics, assignor.assign(specs, topics))
    assert sorted(len(result[m].get("a", [])) for m in result) == [2, 2, 2]
    for m in ("m1", "m2"):
        assert set(result[m]["a"]) <= set(current[m]["a"]), "an existing member received a partition it did not have"


@pytest.mark.parametrize("assignor", [UniformAssignor(), RangeAssignor()], ids=lambda a: a.name)
def test_a_leaving_member_s_partitions_go_to_the_rest_who_keep_theirs(assignor):
    topics = FakeTopics({"a": 6})
    fresh = by_name(topics, assignor.assign({m: spec(topics, ["a"]) for m in ("m1", "m2", "m3")}, topics))
    specs = {m: spec(topics, ["a"], fresh[m]) for m in ("m1", "m3")}
    result = by_name(topics, assignor.assign(specs, topics))
    for m in ("m1", "m3"):
        assert set(fresh[m]["a"]) <= set(result[m]["a"])
        assert len(result[m]["a"]) == 3


def test_uniform_heterogeneous_balances_each_member_against_those_sharing_its_topics():
    topics = FakeTopics({"a": 3, "b": 3})
    specs = {"m1": spec(topics, ["a"]), "m2": spec(topics, ["a", "b"]), "m3": spec(topics, ["b"])}
    result = UniformAssignor().assign(specs, topics)
    assert_complete_and_exclusive(topics, result, ["a", "b"])
    assert sorted(sizes(result).values()) == [2, 2, 2]
    named = by_name(topics, result)
    assert "b" not in named["m1"] and "a" not in named["m3"]


def test_uniform_heterogeneous_is_sticky_when_a_member_joins():
    topics = FakeTopics({"a": 4, "b": 4})
    first = by_name(
        topics, UniformAssignor().assign({"m1": spec(topics, ["a"]), "m2": spec(topics, ["a", "b"])}, topics)
    )
    specs = {m: spec(topics, ["a"] if m == "m1" else ["a", "b"], first[m]) for m in first}
    specs["m3"] = spec(topics, ["b"])
    result = by_name(topics, UniformAssignor().assign(specs, topics))
    moved = sum(len(set(first[m].get(t, [])) - set(result[m].get(t, []))) for m in ("m1", "m2") for t in ("a", "b"))
    # m3 needs 2 of m2's b partitions, and m2 one of m1's a partitions to stay level: 3 moves, no more.
    assert moved == 3
    assert sorted(sum(len(p) for p in result[m].values()) for m in result) == [2, 3, 3]


def test_uniform_drops_partitions_of_unsubscribed_or_shrunk_topics():
    topics = FakeTopics({"a": 2, "b": 2})
    specs = {"m1": spec(topics, ["a"], {"a": [0, 1], "b": [0, 1]})}
    assert by_name(topics, UniformAssignor().assign(specs, topics)) == {"m1": {"a": [0, 1]}}


def test_uniform_prefers_a_member_in_the_partition_s_rack_on_ties():
    topics = FakeTopics({"a": 2})
    topics.set_racks("a", 0, ["r2"])
    topics.set_racks("a", 1, ["r1"])
    specs = {"m1": spec(topics, ["a"], rack="r1"), "m2": spec(topics, ["a"], rack="r2")}
    assert by_name(topics, UniformAssignor().assign(specs, topics)) == {"m1": {"a": [1]}, "m2": {"a": [0]}}


@pytest.mark.parametrize("assignor", [UniformAssignor(), RangeAssignor()], ids=lambda a: a.name)
def test_a_subscription_to_an_unknown_topic_is_an_assignor_error(assignor):
    topics = FakeTopics({"a": 1})
    specs = {"m1": MemberSubscriptionSpec(subscribed_topic_ids=frozenset({uuid.uuid4()}))}
    with pytest.raises(PartitionAssignorError):
        assignor.assign(specs, topics)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["uniform", "range"], ["uniform", "range"]),
        (["range"], ["range"]),
        (["org.apache.kafka.coordinator.group.assignor.RangeAssignor", " uniform"], ["range", "uniform"]),
    ],
)
def test_assignors_from_config_keeps_the_configured_order(names, expected):
    assert list(assignors_from_config(names)) == expected


@pytest.mark.parametrize("names", [[], ["sticky"]])
def test_assignors_from_config_refuses_unknown_or_empty(names):
    with pytest.raises(ValueError, match="assignor"):
        assignors_from_config(names)


def test_builtin_assignors_are_uniform_and_range():
    assert sorted(BUILTIN_ASSIGNORS) == ["range", "uniform"]


@pytest.mark.parametrize("seed", range(12))
def test_uniform_random_groups_are_complete_balanced_and_stable(seed):
    import random

    rng = random.Random(seed)
    topics = FakeTopics({f"t{i}": rng.randint(1, 9) for i in range(rng.randint(1, 4))})
    names = list(topics.topic_names())
    specs = {f"m{i}": spec(topics, rng.sample(names, rng.randint(1, len(names)))) for i in range(rng.randint(1, 6))}
    subscribed = sorted({topics.topic_name(t) or "" for s in specs.values() for t in s.subscribed_topic_ids})
    result = UniformAssignor().assign(specs, topics)
    assert_complete_and_exclusive(topics, result, subscribed)
    load = sizes(result)
    for u, a in result.items():
        for topic_id in a:
            for v, s in specs.items():
                if topic_id in s.subscribed_topic_ids:
                    assert load[u] - load[v] <= 1, f"{u} could pass a partition to {v}"
    again = UniformAssignor().assign(
        {m: MemberSubscriptionSpec(s.subscribed_topic_ids, result[m]) for m, s in specs.items()}, topics
    )
    assert again == result


def test_uniform_handles_a_large_group_and_a_join_moves_only_the_newcomer_s_share():
    topics = FakeTopics({f"t{i}": 50 for i in range(10)})
    ids = frozenset(topics.id(f"t{i}") for i in range(10))
    specs = {f"m{i:02d}": MemberSubscriptionSpec(ids) for i in range(50)}
    first = UniformAssignor().assign(specs, topics)
    assert set(sizes(first).values()) == {10}
    specs = {m: MemberSubscriptionSpec(ids, first[m]) for m in specs}
    specs["new"] = MemberSubscriptionSpec(ids)
    second = UniformAssignor().assign(specs, topics)
    assert sorted(set(sizes(second).values())) == [9, 10]
    moved = sum(len(set(first[m].get(t, ())) - set(second[m].get(t, ()))) for m in first for t in ids)
    assert moved == sizes(second)["new"]
