"""The preferred read replica selectors (KIP-392) as pure functions of a partition view: Kafka's
``RackAwareReplicaSelector`` rules (leader in the rack, else the most caught-up replica there, else the leader),
the leader selector, and the names ``replica.selector.class`` accepts."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig, ConfigError
from broker.replication.replica_selector import (
    RACK_AWARE_CLASS,
    SELECTOR_NAMES,
    LeaderSelector,
    PartitionView,
    RackAwareReplicaSelector,
    ReplicaView,
    selector_for,
)


def view(*replicas: tuple[int, str | None, int, int], leader: int = 0) -> PartitionView:
    """Replicas as (broker id, rack, log end offset, ms since last caught up); ``leader`` is one of them."""
    views = tuple(ReplicaView(*r) for r in replicas)
    return PartitionView(views, next(v for v in views if v.broker_id == leader))


THREE_RACKS = ((0, "a", 100, 0), (1, "b", 100, 0), (2, "c", 100, 0))


@pytest.mark.parametrize(
    "rack, replicas, leader, chosen",
    [
        ("b", THREE_RACKS, 0, 1),  # the replica in the client's rack
        ("c", THREE_RACKS, 0, 2),
        ("a", THREE_RACKS, 0, 0),  # the leader is in the rack
        ("a", ((0, "a", 100, 0), (1, "a", 120, 0)), 0, 0),  # the leader wins in its rack even when behind
        ("z", THREE_RACKS, 0, 0),  # no replica in the rack: the leader
        ("", THREE_RACKS, 0, 0),  # no rack given: the leader
        ("b", ((0, "a", 100, 0), (1, "b", 90, 0), (2, "b", 95, 0)), 0, 2),  # highest log end offset
        ("b", ((0, "a", 100, 0), (1, "b", 95, 50), (2, "b", 95, 10)), 0, 2),  # then caught up most recently
        ("b", ((0, "a", 100, 0), (1, "b", 95, 10), (2, "b", 95, 10)), 0, 2),  # then the highest broker id
        ("b", ((0, "a", 100, 0), (1, None, 100, 0)), 0, 0),  # a broker without a rack is in no rack
        ("b", ((1, "b", 100, 0), (0, "a", 100, 0)), 1, 1),  # another broker leads, in the rack
    ],
)
def test_rack_aware_selector_picks_as_kafka(rack, replicas, leader, chosen):
    assert RackAwareReplicaSelector().select(rack, view(*replicas, leader=leader)).broker_id == chosen


@pytest.mark.parametrize("rack", ["a", "b", ""])
def test_leader_selector_always_picks_the_leader(rack):
    assert LeaderSelector().select(rack, view(*THREE_RACKS)).broker_id == 0


@pytest.mark.parametrize(
    "name, kind",
    [
        (None, type(None)),
        ("", type(None)),
        ("leader", LeaderSelector),
        ("rack-aware", RackAwareReplicaSelector),
        (RACK_AWARE_CLASS, RackAwareReplicaSelector),
    ],
)
def test_selector_for_names(name, kind):
    assert type(selector_for(name)) is kind


def test_every_name_the_config_key_accepts_builds_a_selector():
    assert set(SELECTOR_NAMES) == {RACK_AWARE_CLASS, "rack-aware", "leader"}
    assert all(selector_for(name) is not None for name in SELECTOR_NAMES)


def test_selector_for_an_unknown_class_names_the_accepted_ones():
    with pytest.raises(ValueError, match="RackAwareReplicaSelector"):
        selector_for("com.example.MySelector")


def test_the_config_key_accepts_kafkas_class_and_refuses_others():
    base = {"broker.id": "0", "zookeeper.connect": "memory:x"}
    assert BrokerConfig.from_properties(base)["replica.selector.class"] is None
    cfg = BrokerConfig.from_properties({**base, "replica.selector.class": RACK_AWARE_CLASS})
    assert cfg["replica.selector.class"] == RACK_AWARE_CLASS
    with pytest.raises(ConfigError, match="replica.selector.class"):
        BrokerConfig.from_properties({**base, "replica.selector.class": "com.example.MySelector"})
