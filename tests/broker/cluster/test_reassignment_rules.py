"""The reassignment rules (``broker.cluster.reassignment``) as tables: no registry, no I/O."""

from __future__ import annotations

import pytest

from broker.cluster.reassignment import (
    ReplicaAssignment,
    invalid_target,
    is_complete,
    isr_within,
    leader_for,
    reassign_to,
    revert,
)
from broker.cluster.registry import TopicAssignment

RA = ReplicaAssignment


@pytest.mark.parametrize(
    ("current", "target", "expected"),
    [
        # Kafka's example: [0, 1] -> [1, 2]: target first, then the original replicas
        (RA((0, 1)), (1, 2), RA((1, 2, 0), adding=(2,), removing=(0,))),
        (RA((1, 2, 3)), (4, 5, 6), RA((4, 5, 6, 1, 2, 3), adding=(4, 5, 6), removing=(1, 2, 3))),
        (RA((1, 2, 3)), (1, 2), RA((1, 2, 3), removing=(3,))),  # shrink: nothing to add
        (RA((1, 2)), (1, 2, 3), RA((1, 2, 3), adding=(3,))),  # grow: nothing to remove
        (RA((1, 2)), (2, 1), RA((2, 1))),  # a reorder only changes the preferred leader
        (RA((1, 2)), (1, 2), RA((1, 2))),
        # a new target while [0, 1] -> [1, 2] is in progress starts again from the original [0, 1]; 2, being
        # added, is dropped
        (RA((1, 2, 0), adding=(2,), removing=(0,)), (3, 0), RA((3, 0, 1), adding=(3,), removing=(1,))),
    ],
)
def test_reassign_to_lists_target_then_original_replicas_with_adding_and_removing(current, target, expected):
    assert reassign_to(current, target) == expected


def test_origin_and_target_of_an_ongoing_reassignment():
    a = RA((1, 2, 0), adding=(2,), removing=(0,))
    assert (a.origin, a.target, a.is_reassigning) == ((1, 0), (1, 2), True)
    assert not RA((1, 2)).is_reassigning


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        (RA((1, 2, 0), adding=(2,), removing=(0,)), RA((1, 0))),  # back to the original replicas
        (RA((1, 2, 3), removing=(3,)), RA((1, 2, 3))),
        (RA((0, 1)), None),  # nothing to cancel: NO_REASSIGNMENT_IN_PROGRESS
    ],
)
def test_revert_goes_back_to_the_original_replicas(current, expected):
    assert revert(current) == expected


@pytest.mark.parametrize(
    ("target", "live", "problem"),
    [
        ((), {1, 2}, "empty replica list"),
        ((1, 1), {1, 2}, "duplicate broker ids in [1, 1]"),
        ((1, -1), {1, 2}, "negative broker id in [1, -1]"),
        ((1, 3, 4), {1, 2}, "brokers [3, 4] are not live (replicas [1, 3, 4])"),
        ((2, 1), {1, 2}, None),
    ],
)
def test_invalid_targets_are_named(target, live, problem):
    assert invalid_target(target, live) == problem


@pytest.mark.parametrize(
    ("assignment", "isr", "complete"),
    [
        (RA((1, 2, 0), adding=(2,), removing=(0,)), (0, 1), False),  # 2 still catching up
        (RA((1, 2, 0), adding=(2,), removing=(0,)), (0, 1, 2), True),
        (RA((1, 2, 0), adding=(2,), removing=(0,)), (1, 2), True),  # the removed replica's sync does not matter
        (RA((1, 2, 3), removing=(3,)), (1, 2), True),
    ],
)
def test_complete_once_every_target_replica_is_in_the_isr(assignment, isr, complete):
    assert is_complete(assignment, isr) == complete


@pytest.mark.parametrize(
    ("replicas", "leader", "isr", "live", "expected"),
    [
        ((1, 2), 1, (0, 1, 2), {0, 1, 2}, 1),  # the leader is a target replica: it stays
        ((1, 2), 0, (0, 1, 2), {0, 1, 2}, 1),  # it is not: the first live in-sync target replica
        ((1, 2), 0, (0, 2, 1), {0, 2}, 2),  # 1 is dead
        ((1, 2), 1, (0, 1, 2), {0, 2}, 2),  # the leader is a target replica but dead
        ((1, 2), 0, (0,), {0, 1, 2}, -1),  # no target replica is in sync
    ],
)
def test_leader_for_the_new_replicas(replicas, leader, isr, live, expected):
    assert leader_for(replicas, leader, isr, live) == expected


def test_isr_within_keeps_isr_order():
    assert isr_within((0, 2, 1), (1, 2)) == (2, 1)


def test_assignment_json_carries_adding_and_removing_replicas_as_kafka_writes_them():
    t = TopicAssignment("t", {0: (0, 1), 1: (0, 1)}).with_partition(1, (1, 2, 0), adding=(2,), removing=(0,))
    assert t.reassigning_partitions() == [1] and t.is_reassigning(1) and not t.is_reassigning(0)
    text = t.to_json()
    assert '"partitions":{"0":[0,1],"1":[1,2,0]},"adding_replicas":{"1":[2]},"removing_replicas":{"1":[0]}' in text
    assert TopicAssignment.from_json("t", text) == t
    done = t.with_partition(1, (1, 2))
    assert done.adding_replicas == {} and done.removing_replicas == {} and done.partitions[1] == (1, 2)
    assert '"adding_replicas":{},"removing_replicas":{}' in done.to_json()


@pytest.mark.parametrize(
    ("adding", "removing"),
    [({0: (5,)}, {}), ({}, {0: (1, 1)}), ({0: (1,)}, {0: (1,)}), ({3: (1,)}, {})],
)
def test_assignment_refuses_adding_or_removing_replicas_that_are_not_its_own(adding, removing):
    with pytest.raises(ValueError):
        TopicAssignment("t", {0: (0, 1)}, adding_replicas=adding, removing_replicas=removing)
