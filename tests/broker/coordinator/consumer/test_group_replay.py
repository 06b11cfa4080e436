"""Replay: the records a sequence of heartbeats produced, replayed into a fresh group, rebuild the same state."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.consumer import records as r
from broker.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState, GroupSnapshot
from broker.coordinator.consumer.member import MemberState

from .fakes import FakeTopics, hb, make_group
from .sim import Cluster


def persisted(snap: GroupSnapshot) -> dict[str, object]:
    """What the records carry (deadlines are in memory only and compare=False on members already)."""
    return {
        "group_epoch": snap.group_epoch,
        "assignment_epoch": snap.assignment_epoch,
        "metadata_hash": snap.metadata_hash,
        "members": snap.members,
        "static_members": snap.static_members,
        "target": snap.target,
        "owners": snap.owners,
        "regexes": snap.regexes,
        "deleted": snap.deleted,
    }


def replayed(log: list[r.CoordinatorRecord]) -> ConsumerGroup:
    fresh = make_group()
    for rec in log:
        fresh.replay(rec)
    return fresh


def scenario_three_join_one_leaves(cluster: Cluster) -> None:
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a", "b"])
    cluster.beat("m1")
    cluster.join("m3", ["b"], instance_id="i3")
    cluster.settle()
    cluster.leave("m2")
    cluster.beat("m1")


def scenario_static_handover(cluster: Cluster) -> None:
    cluster.join("m1", ["a"], instance_id="i1")
    cluster.join("m2", ["a"])
    cluster.settle()
    cluster.leave("m1", epoch=-2)
    cluster.join("m1b", ["a"], instance_id="i1")
    cluster.settle()


def scenario_regex_and_new_topic(cluster: Cluster) -> None:
    cluster.join("m1", None, regex="a|b|c")
    cluster.join("m2", ["a"])
    cluster.settle()
    cluster.topics.create("c", 2)
    cluster.settle()
    assert cluster.topics.id("c") in cluster.clients["m1"].owned
    cluster.join("m3", None, regex="b")
    cluster.settle()
    cluster.leave("m3")
    cluster.settle()


def scenario_expiry(cluster: Cluster) -> None:
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a"])
    cluster.beat("m1")
    cluster.now = 100_000
    cluster.beat("m2")
    cluster.log.extend(cluster.group.expire(cluster.now))


@pytest.mark.parametrize(
    "scenario",
    [scenario_three_join_one_leaves, scenario_static_handover, scenario_regex_and_new_topic, scenario_expiry],
    ids=lambda f: f.__name__.removeprefix("scenario_"),
)
def test_replaying_the_records_rebuilds_the_same_group(scenario):
    topics = FakeTopics({"a": 4, "b": 3})
    cluster = Cluster(make_group(), topics)
    scenario(cluster)
    assert cluster.log, "the scenario wrote no records"
    rebuilt = replayed(cluster.log)
    assert persisted(rebuilt.snapshot()) == persisted(cluster.group.snapshot())
    assert rebuilt.state == cluster.group.state
    assert rebuilt.describe(topics.topic_name) == cluster.group.describe(topics.topic_name)


def test_replay_at_every_prefix_matches_the_state_after_that_heartbeat():
    topics = FakeTopics({"a": 4})
    group = make_group()
    log: list[r.CoordinatorRecord] = []
    states = []
    steps = [
        hb("m1", 0, topics=["a"]),
        hb("m2", 0, topics=["a"]),
        hb("m1", 1, owned={topics.id("a"): [0, 1, 2, 3]}),
    ]
    for req in steps:
        out = group.heartbeat(req, topics, 0)
        log.extend(out.records)
        states.append((len(log), persisted(group.snapshot())))
    for length, state in states:
        assert persisted(replayed(log[:length]).snapshot()) == state


def test_a_loaded_member_gets_a_fresh_session_on_the_first_expiry_check():
    topics = FakeTopics({"a": 1})
    group = make_group(session_timeout_ms=1000)
    out = group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    loaded = make_group(session_timeout_ms=1000)
    for rec in out.records:
        loaded.replay(rec)
    assert loaded.expire(50_000) == []
    assert loaded.members["m1"].session_deadline_ms == 51_000
    assert [rec.record_type for rec in loaded.expire(51_000)] == [8, 7, 5, 3]


def test_an_unknown_member_state_byte_replays_as_unknown():
    group = make_group()
    group.replay(
        r.CoordinatorRecord(r.ConsumerGroupMemberMetadataKey("g", "m1"), r.ConsumerGroupMemberMetadataValue("c", "h"))
    )
    group.replay(
        r.CoordinatorRecord(
            r.ConsumerGroupCurrentMemberAssignmentKey("g", "m1"),
            r.ConsumerGroupCurrentMemberAssignmentValue(member_epoch=3, previous_member_epoch=2, state=42),
        )
    )
    assert group.members["m1"].state is MemberState.UNKNOWN
    assert group.state is ConsumerGroupState.RECONCILING


def test_kafka_s_subscription_metadata_record_is_kept_and_tombstoned_with_the_group():
    value = r.ConsumerGroupPartitionMetadataValue(
        (r.TopicMetadata(topic_id=uuid.UUID(int=7), topic_name="a", num_partitions=3),)
    )
    group = make_group()
    group.replay(r.CoordinatorRecord(r.ConsumerGroupMetadataKey("g"), r.ConsumerGroupMetadataValue(5)))
    group.replay(r.CoordinatorRecord(r.ConsumerGroupPartitionMetadataKey("g"), value))
    assert group.partition_metadata == value and group.group_epoch == 5
    types = [rec.record_type for rec in group.delete_records()]
    assert types == [6, 4, 3]
    for rec in group.delete_records():
        group.replay(rec)
    assert group.partition_metadata is None and group.state is ConsumerGroupState.DEAD
