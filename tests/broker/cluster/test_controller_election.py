"""The controller's election rules as tables (broker.cluster.election)."""

from __future__ import annotations

import pytest

from broker.cluster.election import (
    Election,
    back_in_sync,
    dead_followers_removed,
    imbalanced_brokers,
    offline_election,
    preferred_election,
    shutdown_election,
    unclean_enabled,
)


@pytest.mark.parametrize(
    ("replicas", "isr", "live", "unclean", "expected"),
    [
        # the first live replica in assignment order that is in the ISR; the ISR shrinks to live members
        ((1, 2, 3), (1, 2, 3), {2, 3}, False, Election(2, (2, 3))),
        ((1, 2, 3), (3, 1, 2), {2, 3}, False, Election(2, (3, 2))),
        ((1, 2, 3), (1, 3), {2, 3}, False, Election(3, (3,))),
        ((1, 2, 3), (1, 2, 3), {1, 2, 3}, False, Election(1, (1, 2, 3))),
        # no live ISR member: offline, the ISR keeps its last members
        ((1, 2, 3), (1,), {2, 3}, False, Election(-1, (1,))),
        ((1,), (1,), set(), False, Election(-1, (1,))),
        # unclean: a live replica outside the ISR, alone in the new ISR
        ((1, 2, 3), (1,), {3, 2}, True, Election(2, (2,), unclean=True)),
        ((1, 2, 3), (1,), {3}, True, Election(3, (3,), unclean=True)),
        ((1, 2, 3), (1,), set(), True, Election(-1, (1,))),
        # unclean never wins over a live ISR member
        ((1, 2, 3), (3,), {2, 3}, True, Election(3, (3,))),
        # a live broker that is not a replica is never chosen
        ((1, 2), (1, 2), {5}, True, Election(-1, (1, 2))),
    ],
)
def test_offline_election_prefers_the_isr_in_assignment_order(replicas, isr, live, unclean, expected):
    assert offline_election(replicas, isr, live, unclean=unclean) == expected


@pytest.mark.parametrize(
    ("replicas", "isr", "live", "shutting_down", "expected"),
    [
        ((1, 2, 3), (1, 2, 3), {1, 2, 3}, {1}, Election(2, (2, 3))),
        ((1, 2, 3), (1, 3), {1, 2, 3}, {1}, Election(3, (3,))),
        ((1, 2, 3), (1, 2, 3), {1, 2, 3}, {1, 2}, Election(3, (3,))),
        ((1, 2, 3), (1,), {1, 2, 3}, {1}, None),  # nobody else in sync: the leader stays
        ((1,), (1,), {1}, {1}, None),  # replication factor 1: nowhere to move
        ((1, 2, 3), (1, 2, 3), {1, 3}, {1}, Election(3, (2, 3))),  # a dead ISR member is not chosen
    ],
)
def test_shutdown_election_moves_to_another_isr_member(replicas, isr, live, shutting_down, expected):
    assert shutdown_election(replicas, isr, live, shutting_down) == expected


@pytest.mark.parametrize(
    ("replicas", "leader", "isr", "live", "expected"),
    [
        ((1, 2, 3), 2, (1, 2, 3), {1, 2, 3}, Election(1, (1, 2, 3))),
        ((1, 2, 3), 1, (1, 2, 3), {1, 2, 3}, None),  # already the preferred leader
        ((1, 2, 3), 2, (2, 3), {1, 2, 3}, None),  # preferred replica not in sync
        ((1, 2, 3), 2, (1, 2, 3), {2, 3}, None),  # preferred replica not alive
        ((1, 2, 3), -1, (1,), {1}, Election(1, (1,))),
    ],
)
def test_preferred_election_needs_a_live_in_sync_preferred_replica(replicas, leader, isr, live, expected):
    assert preferred_election(replicas, leader, isr, live) == expected


def test_imbalance_is_per_preferred_broker_and_above_the_percentage():
    partitions = [
        ((1, 2), 1),
        ((1, 2), 2),  # broker 1 leads 1 of its 2 preferred partitions: 50 %
        ((2, 1), 2),
        ((2, 1), 2),
        ((2, 1), 2),
        ((2, 1), 2),
        ((2, 1), 1),  # broker 2: 1 of 5 = 20 %
        ((3, 1), 3),
    ]
    assert imbalanced_brokers(partitions, 10) == {1: [1], 2: [6]}
    assert imbalanced_brokers(partitions, 20) == {1: [1]}  # exactly the percentage is not above it
    assert imbalanced_brokers(partitions, 50) == {}
    assert imbalanced_brokers([], 0) == {}


@pytest.mark.parametrize(
    ("config", "default", "expected"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"unclean.leader.election.enable": "true"}, False, True),
        ({"unclean.leader.election.enable": "false"}, True, False),
    ],
)
def test_topic_override_of_unclean_election(config, default, expected):
    assert unclean_enabled(config, default) is expected


@pytest.mark.parametrize(
    ("leader", "isr", "live", "expected"),
    [
        (1, (1, 2, 3), {1, 2, 3}, None),  # everyone alive: nothing to change
        (1, (1, 2, 3), {1, 3}, Election(1, (1, 3))),  # a dead follower leaves the ISR
        (1, (1, 2, 3), {1}, Election(1, (1,))),
        (1, (1, 2), {2, 3}, None),  # a dead leader is the offline election's business
        (1, (1,), {1, 2}, None),
        (2, (3, 2, 1), {2, 1}, Election(2, (2, 1))),  # the ISR keeps its order
    ],
)
def test_dead_followers_leave_the_isr_of_a_live_leader(leader, isr, live, expected):
    assert dead_followers_removed(leader, isr, live) == expected


@pytest.mark.parametrize(
    ("brokers", "partitions", "expected"),
    [
        ({1}, [((1, 2), (2, 1)), ((1, 3), (3, 1))], {1}),  # in the ISR of every partition it prefers
        ({1}, [((1, 2), (2, 1)), ((1, 3), (3,))], set()),  # one still behind: not yet
        ({1}, [((2, 1), (2,)), ((3, 1), (3,))], {1}),  # out of sync only where it is not preferred
        ({1, 2}, [((1, 2), (1, 2)), ((2, 1), (1,))], {1}),
        ({4}, [((1, 2), (1,))], {4}),  # preferred for nothing
        ({1}, [], {1}),
        (set(), [((1, 2), (2,))], set()),
    ],
)
def test_a_broker_is_back_in_sync_when_in_the_isr_of_every_partition_it_prefers(brokers, partitions, expected):
    assert back_in_sync(brokers, partitions) == expected
