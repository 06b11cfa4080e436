"""Classic-protocol members in a consumer group: the online upgrade of a classic group, and JoinGroup,
SyncGroup, Heartbeat and LeaveGroup of classic members beside consumer-protocol members."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest

from broker.coordinator.consumer.group import ConsumerGroup, ConsumerGroupState, encode_classic_assignment
from broker.coordinator.consumer.member import MemberState
from broker.coordinator.group import Group, GroupError, GroupState, Member
from spark_kafkalog.client.consumer.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    encode_assignment,
    encode_subscription,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

from .fakes import FakeTopics, hb, make_group
from .test_group_replay import persisted, replayed


def protocols(topics: list[str], owned: Sequence[TopicPartition] = (), version: int = 0) -> list[tuple[str, bytes]]:
    sub = encode_subscription(Subscription(topics, owned_partitions=owned), version)
    return [("range", sub), ("roundrobin", sub)]


def classic_group(assignments: dict[str, list[tuple[str, int]]], *, protocol_type: str = "consumer") -> Group:
    group = Group("g", state=GroupState.STABLE, generation=3, protocol_type=protocol_type, protocol_name="range")
    for member_id, parts in assignments.items():
        group.members[member_id] = Member(
            member_id=member_id,
            group_instance_id=None,
            client_id="kafka-python",
            client_host="/10.0.0.9",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=60_000,
            protocols=protocols(["a"]),
            assignment=encode_assignment(Assignment([TopicPartition(t, p) for t, p in parts]), 0),
        )
    return group


def upgrade(topics: FakeTopics, classic: Group, **kwargs: object) -> tuple[ConsumerGroup, list]:
    kwargs.setdefault("assignors", make_group().assignors)
    kwargs.setdefault("default_assignor", "uniform")
    return ConsumerGroup.from_classic_group(classic, topics, 0, **kwargs)  # type: ignore[arg-type]  # table kwargs


def error_of(fn) -> ErrorCode:
    with pytest.raises(GroupError) as err:
        fn()
    return err.value.error_code


def test_upgrade_keeps_the_generation_members_and_their_partitions():
    topics = FakeTopics({"a": 4})
    a = topics.id("a")
    group, records = upgrade(topics, classic_group({"k1": [("a", 0), ("a", 1)], "k2": [("a", 2), ("a", 3)]}))
    assert [rec.record_type for rec in records] == [5, 5, 3, 7, 7, 6, 8, 8]
    assert (group.group_epoch, group.assignment_epoch, group.state) == (3, 3, ConsumerGroupState.STABLE)
    k1 = group.members["k1"]
    assert (k1.member_epoch, k1.state, dict(k1.assigned_partitions)) == (3, MemberState.STABLE, {a: frozenset({0, 1})})
    assert k1.classic_member_metadata is not None and k1.classic_member_metadata.session_timeout_ms == 10_000
    assert k1.subscribed_topic_names == ("a",) and k1.client_id == "kafka-python"
    assert group.target_assignment["k2"] == {a: frozenset({2, 3})}
    assert persisted(replayed(records).snapshot()) == persisted(group.snapshot())
    assert group.describe(topics.topic_name).members[0].member_type == 0


@pytest.mark.parametrize(
    ("classic", "kwargs"),
    [
        (lambda: classic_group({"k1": []}, protocol_type="connect"), {}),
        (lambda: classic_group({"k1": [], "k2": []}), {"max_size": 1}),
    ],
    ids=["not the consumer protocol type", "more members than the maximum"],
)
def test_upgrade_is_refused_with_group_id_not_found(classic, kwargs):
    topics = FakeTopics({"a": 1})
    assert error_of(lambda: upgrade(topics, classic(), **kwargs)) == ErrorCode.GROUP_ID_NOT_FOUND


def test_upgrade_is_refused_when_an_assignment_carries_client_assignor_data():
    topics = FakeTopics({"a": 1})
    classic = classic_group({"k1": []})
    classic.members["k1"].assignment = encode_assignment(Assignment([TopicPartition("a", 0)], b"sticky"), 0)
    assert error_of(lambda: upgrade(topics, classic)) == ErrorCode.GROUP_ID_NOT_FOUND


class EagerClassicClient:
    """A kafka-python-like eager member: on REBALANCE_IN_PROGRESS it drops everything, rejoins and syncs."""

    def __init__(self, group: ConsumerGroup, topics: FakeTopics, member_id: str, generation: int, owned):
        self.group, self.topics, self.member_id, self.generation, self.owned = (
            group,
            topics,
            member_id,
            generation,
            owned,
        )

    def heartbeat(self, now: int) -> None:
        try:
            self.group.classic_heartbeat(
                member_id=self.member_id, instance_id=None, generation_id=self.generation, now_ms=now
            )
        except GroupError as err:
            assert err.error_code == ErrorCode.REBALANCE_IN_PROGRESS
            self.owned = {}
            out = self.group.classic_join(
                member_id=self.member_id,
                instance_id=None,
                protocol_type="consumer",
                protocols=protocols(["a"]),
                session_timeout_ms=10_000,
                rebalance_timeout_ms=60_000,
                client_id="kafka-python",
                client_host="/10.0.0.9",
                topics=self.topics,
                now_ms=now,
            )
            assert out.protocol_name == "range"
            self.generation = out.generation_id
            self.owned = dict(
                self.group.classic_sync(
                    member_id=self.member_id,
                    instance_id=None,
                    generation_id=self.generation,
                    protocol_type="consumer",
                    protocol_name="range",
                    now_ms=now,
                )
            )


def test_consumer_members_join_an_upgraded_group_and_classic_members_follow_by_rejoining():
    topics = FakeTopics({"a": 6})
    a = topics.id("a")
    group, _ = upgrade(
        topics, classic_group({"k1": [("a", p) for p in (0, 1, 2)], "k2": [("a", p) for p in (3, 4, 5)]})
    )
    classic = {
        m: EagerClassicClient(group, topics, m, 3, dict(group.members[m].assigned_partitions)) for m in ("k1", "k2")
    }
    out = group.heartbeat(hb("c1", 0, topics=["a"]), topics, 0)
    assert out.member_epoch == 4 and out.assignment == {}
    consumer_owned = dict(out.assignment)
    epoch = out.member_epoch

    def exclusive() -> None:
        seen: set[tuple[uuid.UUID, int]] = set()
        for owned in [consumer_owned, *(c.owned for c in classic.values())]:
            for t, parts in owned.items():
                for p in parts:
                    assert (t, p) not in seen
                    seen.add((t, p))

    for now in range(1, 8):
        for c in classic.values():
            c.heartbeat(now)
            exclusive()
        out = group.heartbeat(hb("c1", epoch, owned=consumer_owned), topics, now)
        epoch = out.member_epoch
        if out.assignment is not None:
            consumer_owned = dict(out.assignment)
        exclusive()
    assert group.state is ConsumerGroupState.STABLE
    sizes = sorted(sum(len(p) for p in o.values()) for o in [consumer_owned, *(c.owned for c in classic.values())])
    assert sizes == [2, 2, 2]
    assert set().union(*(o.get(a, frozenset()) for o in [consumer_owned, *(c.owned for c in classic.values())])) == set(
        range(6)
    )


def test_a_classic_member_can_join_a_consumer_group_only_with_a_protocol_all_classic_members_support():
    topics = FakeTopics({"a": 2})
    group, _ = upgrade(topics, classic_group({"k1": [("a", 0), ("a", 1)]}))
    sub = protocols(["a"])[0][1]

    def join(protos):
        return group.classic_join(
            member_id="k9",
            instance_id=None,
            protocol_type="consumer",
            protocols=protos,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=60_000,
            client_id="x",
            client_host="/h",
            topics=topics,
            now_ms=0,
        )

    assert error_of(lambda: join([("cooperative-sticky", sub)])) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    out = join([("roundrobin", sub)])
    assert out.protocol_name == "roundrobin" and out.generation_id == group.group_epoch


def test_classic_sync_and_heartbeat_check_the_member_and_its_generation():
    topics = FakeTopics({"a": 2})
    group, _ = upgrade(topics, classic_group({"k1": [("a", 0), ("a", 1)]}))
    group.heartbeat(hb("c1", 0, topics=["a"]), topics, 0)

    def sync(member_id="k1", generation=3, name="range"):
        return group.classic_sync(
            member_id=member_id,
            instance_id=None,
            generation_id=generation,
            protocol_type="consumer",
            protocol_name=name,
            now_ms=0,
        )

    assert error_of(lambda: sync(generation=2)) == ErrorCode.ILLEGAL_GENERATION
    assert error_of(lambda: sync(member_id="nobody")) == ErrorCode.UNKNOWN_MEMBER_ID
    assert error_of(lambda: sync(member_id="c1", generation=4)) == ErrorCode.UNKNOWN_MEMBER_ID
    assert error_of(lambda: sync(name="roundrobin")) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert error_of(lambda: sync()) == ErrorCode.REBALANCE_IN_PROGRESS  # the consumer member's join moved the epoch
    code = error_of(lambda: group.classic_heartbeat(member_id="k1", instance_id=None, generation_id=3, now_ms=0))
    assert code == ErrorCode.REBALANCE_IN_PROGRESS
    code = error_of(lambda: group.validate_offset_commit("k1", 2))
    assert code == ErrorCode.ILLEGAL_GENERATION
    group.validate_offset_commit("k1", 3)


def test_a_classic_member_s_session_is_its_own_and_leave_fences_it():
    topics = FakeTopics({"a": 2})
    group, _ = upgrade(topics, classic_group({"k1": [("a", 0)], "k2": [("a", 1)]}))
    assert group.expire(9_999) == []
    group.classic_heartbeat(member_id="k2", instance_id=None, generation_id=3, now_ms=5_000)
    assert [rec.record_type for rec in group.expire(10_000)] == [8, 7, 5, 3]
    assert set(group.members) == {"k2"}
    records = group.classic_leave(member_id="k2", instance_id=None)
    assert [rec.record_type for rec in records] == [8, 7, 5, 3] and group.is_empty


def test_encode_classic_assignment_names_topics_and_sorts_them():
    topics = FakeTopics({"b": 2, "a": 3})
    data = encode_classic_assignment(
        {topics.id("b"): frozenset({1, 0}), topics.id("a"): frozenset({2}), uuid.uuid4(): frozenset({0})},
        topics.topic_name,
    )
    assert list(decode_assignment(data).partitions) == [
        TopicPartition("a", 2),
        TopicPartition("b", 0),
        TopicPartition("b", 1),
    ]
