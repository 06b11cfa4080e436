"""Replica placement (metadata.cache.assign_replicas) as tables, including Kafka's own examples
(AdminUtils' tests: plain and rack-aware assignment with a fixed start index)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from broker.metadata.cache import assign_replicas, rack_alternated_brokers

RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_plain_assignment_matches_kafka_example():
    got = assign_replicas([0, 1, 2, 3, 4], 10, 3, start_index=0)
    assert got == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("racks", "expected"),
    [
        (RACKS, [0, 3, 1, 5, 4, 2]),
        ({b: r for b, r in RACKS.items() if b != 5}, [0, 3, 1, 4, 2]),
        ({1: "a", 2: "a", 3: "a"}, [1, 2, 3]),
        ({7: "b", 3: "a", 9: "b", 1: "a"}, [1, 7, 3, 9]),
    ],
)
def test_rack_alternated_broker_order(racks, expected):
    assert rack_alternated_brokers(racks) == expected


def test_rack_aware_assignment_matches_kafka_example():
    got = assign_replicas(sorted(RACKS), 7, 3, racks=RACKS, start_index=0)
    assert got == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("racks", "rf"),
    [
        (RACKS, 3),
        ({0: "a", 1: "a", 2: "b", 3: "b"}, 2),
        ({0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c", 6: "a", 7: "b", 8: "c"}, 3),
        ({0: "a", 1: "a", 2: "a", 3: "b"}, 2),  # unbalanced racks: still one replica per rack
    ],
)
def test_rack_aware_assignment_puts_replicas_on_distinct_racks(racks, rf):
    for seed in range(20):
        got = assign_replicas(sorted(racks), 12, rf, racks=racks, rng=random.Random(seed))
        for replicas in got.values():
            assert len(set(replicas)) == rf
            assert len({racks[b] for b in replicas}) == min(rf, len(set(racks.values())))


def test_more_replicas_than_racks_fills_every_rack_then_repeats_racks():
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    got = assign_replicas(sorted(racks), 8, 3, racks=racks, start_index=0)
    for replicas in got.values():
        assert len(set(replicas)) == 3 and {racks[b] for b in replicas} == {"a", "b"}


def test_rack_aware_leaders_spread_evenly():
    got = assign_replicas(sorted(RACKS), 12, 3, racks=RACKS, rng=random.Random(7))
    assert Counter(r[0] for r in got.values()) == {b: 2 for b in RACKS}


def test_brokers_without_a_rack_fall_back_to_the_plain_assignment():
    racks = {0: "a", 1: None, 2: "b"}
    assert assign_replicas([0, 1, 2], 6, 2, racks=racks, start_index=1) == assign_replicas(
        [0, 1, 2], 6, 2, start_index=1
    )


def test_topic_admin_places_replicas_by_the_registered_racks(monkeypatch):
    from broker.cluster.registry import BrokerInfo
    from broker.config import BrokerConfig
    from broker.config_admin import topic_admin
    from broker.metadata.cache import MetadataCache

    racks = {1: "a", 2: "a", 3: "b", 4: "b"}
    metadata = MetadataCache(1)
    metadata.set_brokers({b: BrokerInfo(b, "127.0.0.1", 9000 + b, rack=r) for b, r in racks.items()})
    config = BrokerConfig.from_properties({"broker.id": "1", "log.dirs": "/nonexistent", "zookeeper.connect": "x:1"})
    admin = topic_admin.TopicAdmin(config, metadata, None, lambda overrides: None, None)
    plan = admin.plan_topic("t", 8, 2)
    assert all({racks[b] for b in replicas} == {"a", "b"} for replicas in plan.replicas.values())
