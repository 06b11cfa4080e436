"""The share group assignor "simple": every member gets partitions, a partition is shared only when members
outnumber partitions, counts differ by at most one, and members keep what they had when balance allows."""

import uuid

import pytest

from broker.coordinator.share.assignor import assign

A, B = uuid.UUID(int=1), uuid.UUID(int=2)


def counts(result):
    return {m: sum(len(ps) for ps in a.values()) for m, a in result.items()}


def holders(result):
    out: dict[tuple[uuid.UUID, int], int] = {}
    for a in result.values():
        for t, ps in a.items():
            for p in ps:
                out[(t, p)] = out.get((t, p), 0) + 1
    return out


@pytest.mark.parametrize(
    ("members", "partitions", "sharing", "per_member"),
    [
        (1, 4, 1, {4}),
        (2, 4, 1, {2}),
        (3, 4, 1, {1, 2}),
        (4, 4, 1, {1}),
        (5, 4, 2, {1, 2}),  # 8 slots over 5 members
        (3, 2, 2, {1, 2}),
        (6, 2, 3, {1}),
        (7, 1, 7, {1}),
    ],
)
def test_homogeneous_groups_are_balanced_and_share_only_when_needed(members, partitions, sharing, per_member):
    subs = {f"m{i}": frozenset({A}) for i in range(members)}
    result = assign(subs, {A: list(range(partitions))}, {})
    assert set(counts(result).values()) == per_member
    assert set(holders(result).values()) == {sharing}
    assert len(holders(result)) == partitions


def test_partitions_of_several_topics_are_pooled_when_subscriptions_are_equal():
    subs = {"m1": frozenset({A, B}), "m2": frozenset({A, B})}
    result = assign(subs, {A: [0], B: [0]}, {})
    assert counts(result) == {"m1": 1, "m2": 1} and set(holders(result).values()) == {1}


def test_members_keep_their_partitions_when_balance_allows():
    subs = {"m1": frozenset({A}), "m2": frozenset({A}), "m3": frozenset({A})}
    before = {"m1": {A: frozenset({0, 1})}, "m2": {A: frozenset({2, 3})}}
    result = assign(subs, {A: [0, 1, 2, 3]}, before)
    assert result["m1"][A] <= before["m1"][A] and result["m2"][A] <= before["m2"][A]
    assert len(result["m3"][A]) == 1 and counts(result)["m1"] + counts(result)["m2"] == 3


def test_the_larger_quota_goes_to_the_member_that_held_more():
    subs = {"m1": frozenset({A, B}), "m2": frozenset({A, B})}
    result = assign(subs, {A: [0, 1], B: [0]}, {"m2": {A: frozenset({0, 1})}})
    assert result["m2"] == {A: frozenset({0, 1})} and result["m1"] == {B: frozenset({0})}


def test_heterogeneous_subscriptions_assign_each_topic_over_its_subscribers():
    subs = {"m1": frozenset({A}), "m2": frozenset({A, B}), "m3": frozenset({B})}
    result = assign(subs, {A: [0, 1], B: [0]}, {})
    assert set(result["m1"]) <= {A} and set(result["m3"]) <= {B}
    assert holders(result)[(A, 0)] == 1 and holders(result)[(A, 1)] == 1
    assert holders(result)[(B, 0)] == 2  # two subscribers, one partition: shared
    assert all(counts(result)[m] >= 1 for m in subs)


def test_topics_no_longer_subscribed_or_assignable_are_dropped():
    subs = {"m1": frozenset({A})}
    result = assign(subs, {A: [0]}, {"m1": {A: frozenset({0, 5}), B: frozenset({0})}})
    assert result == {"m1": {A: frozenset({0})}}


def test_no_members_or_no_partitions():
    assert assign({}, {A: [0]}, {}) == {}
    assert assign({"m1": frozenset({A})}, {}, {}) == {"m1": {}}


@pytest.mark.parametrize("seed", range(20))
def test_any_previous_assignment_ends_balanced_with_the_wanted_sharing(seed):
    """Whatever the members held before (random, possibly over-shared), the result is balanced: counts differ by
    at most one and every partition has exactly ``ceil(M / P)`` members."""
    import random

    rng = random.Random(seed)
    for _ in range(200):
        n_parts, n_members = rng.randint(1, 6), rng.randint(1, 9)
        members = [f"m{i}" for i in range(n_members)]
        before = {
            m: {A: frozenset(rng.sample(range(n_parts), rng.randint(0, n_parts)))}
            for m in members
            if rng.random() < 0.7
        }
        result = assign({m: frozenset({A}) for m in members}, {A: list(range(n_parts))}, before)
        c = counts(result)
        assert max(c.values()) - min(c.values()) <= 1, (before, result)
        assert set(holders(result).values()) == {-(-n_members // n_parts)} and len(holders(result)) == n_parts
