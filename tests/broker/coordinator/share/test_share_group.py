"""``ShareGroup``, the pure state machine of a share group: heartbeats as tables of (request, expected
answer), Kafka's errors leaving the group unchanged, session expiry on an injected clock (milliseconds passed
in), share-partition initialization gating the assignment, and replay rebuilding the same group."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest

from broker.coordinator.group import GroupError
from broker.coordinator.share import records as r
from broker.coordinator.share.group import ShareGroup, ShareGroupState
from spark_kafkalog.protocol import ErrorCode

A, B = uuid.UUID(int=1), uuid.UUID(int=2)
SESSION = 1_000


@dataclass
class Topics:
    """A ``TopicsView``: name -> (id, partition count)."""

    by_name: dict[str, tuple[uuid.UUID, int]] = field(default_factory=lambda: {"a": (A, 2), "b": (B, 1)})

    def topic_id(self, name):
        return self.by_name[name][0] if name in self.by_name else None

    def topic_name(self, topic_id):
        return next((n for n, (t, _) in self.by_name.items() if t == topic_id), None)

    def partition_count(self, topic_id):
        return next((c for t, c in self.by_name.values() if t == topic_id), -1)


def new_group(max_size: int = 10) -> ShareGroup:
    return ShareGroup("g", session_timeout_ms=SESSION, heartbeat_interval_ms=100, max_size=max_size)


def hb(g, topics, member, epoch, subscribed=None, now=0):
    return g.heartbeat(member, epoch, None, subscribed, topics, now, client_id="c", client_host="/h")


def ready(g, topics, names=("a",)):
    """What the coordinator does before a heartbeat: initialize the subscribed partitions' share state."""
    g.mark_initialized(g.partitions_to_initialize(topics, names))


def flat(assignment):
    return None if assignment is None else sorted((t.int, p) for t, ps in assignment.items() for p in ps)


def test_a_join_writes_kafkas_records_in_order_and_takes_the_assignment_at_once():
    g, topics = new_group(), Topics()
    ready(g, topics)
    out = hb(g, topics, "m1", 0, ["a"])
    assert [type(rec.key).__name__ for rec in out.records] == [
        "ShareGroupMemberMetadataKey",
        "ShareGroupMetadataKey",
        "ShareGroupTargetAssignmentMemberKey",
        "ShareGroupTargetAssignmentMetadataKey",
        "ShareGroupCurrentMemberAssignmentKey",
    ]
    assert (out.member_epoch, out.heartbeat_interval_ms, flat(out.assignment)) == (1, 100, [(1, 0), (1, 1)])
    assert g.state is ShareGroupState.STABLE and g.group_epoch == g.assignment_epoch == 1


# (member, epoch, subscription, expected epoch or error, expected assignment) after m1 joined at 1, m2 at 2
HEARTBEATS = [
    ("m1", 1, None, 2, [(1, 0)]),  # m1 moves to the new target at once (m2 took partition 1)
    ("m2", 2, None, 2, None),  # nothing changed: null assignment
    ("m2", 2, ["a"], 2, [(1, 1)]),  # a full request gets the assignment
    ("m2", 0, ["a"], 2, [(1, 1)]),  # a rejoin with the same id keeps the member
    ("m1", 3, None, ErrorCode.FENCED_MEMBER_EPOCH, None),
    ("m2", 1, None, ErrorCode.FENCED_MEMBER_EPOCH, None),  # smaller and not its previous epoch (0)
    ("m9", 1, None, ErrorCode.UNKNOWN_MEMBER_ID, None),
    ("m9", -1, None, ErrorCode.UNKNOWN_MEMBER_ID, None),
    ("", 1, None, ErrorCode.INVALID_REQUEST, None),
    ("m3", 0, None, ErrorCode.INVALID_REQUEST, None),
    ("m3", 0, [], ErrorCode.INVALID_REQUEST, None),
    ("m1", -2, None, ErrorCode.INVALID_REQUEST, None),
]


@pytest.mark.parametrize(("member", "epoch", "subscribed", "expected", "assignment"), HEARTBEATS)
def test_heartbeats(member, epoch, subscribed, expected, assignment):
    g, topics = new_group(), Topics()
    ready(g, topics)
    hb(g, topics, "m1", 0, ["a"])
    hb(g, topics, "m2", 0, ["a"])
    before = g.snapshot()
    if isinstance(expected, ErrorCode):
        with pytest.raises(GroupError) as e:
            hb(g, topics, member, epoch, subscribed)
        assert e.value.error_code == expected
        assert g.snapshot() == before  # an error leaves the group unchanged
    else:
        out = hb(g, topics, member, epoch, subscribed)
        assert (out.member_epoch, flat(out.assignment)) == (expected, assignment)


def test_the_previous_epoch_is_accepted_when_the_answer_with_the_new_one_was_lost():
    g, topics = new_group(), Topics()
    ready(g, topics)
    hb(g, topics, "m1", 0, ["a"])
    hb(g, topics, "m2", 0, ["a"])
    assert hb(g, topics, "m1", 1).member_epoch == 2
    assert hb(g, topics, "m1", 1).member_epoch == 2


def test_a_new_member_beyond_the_maximum_size_is_refused_and_members_still_heartbeat():
    g, topics = new_group(max_size=1), Topics()
    ready(g, topics)
    hb(g, topics, "m1", 0, ["a"])
    with pytest.raises(GroupError) as e:
        hb(g, topics, "m2", 0, ["a"])
    assert e.value.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert "maximum capacity of 1 members" in str(e.value)
    assert hb(g, topics, "m1", 1).member_epoch == 1


def test_a_leave_removes_the_member_and_bumps_the_epoch():
    g, topics = new_group(), Topics()
    ready(g, topics)
    hb(g, topics, "m1", 0, ["a"])
    out = hb(g, topics, "m1", -1)
    assert out.member_epoch == -1 and [rec.value for rec in out.records[:3]] == [None, None, None]
    assert g.state is ShareGroupState.EMPTY and g.group_epoch == 2 and not g.target_assignment


def test_sessions_expire_on_the_injected_clock_and_loaded_members_get_a_fresh_one():
    g, topics = new_group(), Topics()
    ready(g, topics)
    hb(g, topics, "m1", 0, ["a"], now=0)
    hb(g, topics, "m2", 0, ["a"], now=500)
    assert g.next_deadline_ms() == SESSION
    assert g.expire(SESSION - 1) == []
    records = g.expire(SESSION)
    assert sorted(g.members) == ["m2"] and records[-1].key == r.ShareGroupMetadataKey("g")
    loaded = replayed(g)
    assert loaded.next_deadline_ms() is None
    assert loaded.expire(5_000) == [] and loaded.next_deadline_ms() == 5_000 + SESSION


def test_only_initialized_partitions_are_assigned_and_new_ones_join_once_initialized():
    g, topics = new_group(), Topics()
    out = hb(g, topics, "m1", 0, ["a"])
    assert flat(out.assignment) == []  # nothing initialized yet
    assert g.partitions_to_initialize(topics) == {A: ("a", frozenset({0, 1}))}
    g.mark_initialized({A: ("a", [0])})
    out = hb(g, topics, "m1", 1)
    assert (out.member_epoch, flat(out.assignment)) == (2, [(1, 0)])
    topics.by_name["a"] = (A, 3)  # the topic grew
    assert g.partitions_to_initialize(topics) == {A: ("a", frozenset({1, 2}))}
    ready(g, topics)
    out = hb(g, topics, "m1", 2)
    assert (out.member_epoch, flat(out.assignment)) == (3, [(1, 0), (1, 1), (1, 2)])
    assert g.mark_initialized({A: ("a", [1])}) == []  # nothing new: no record


def test_a_subscription_change_moves_the_member_to_the_new_topics():
    g, topics = new_group(), Topics()
    ready(g, topics, ("a", "b"))
    hb(g, topics, "m1", 0, ["a"])
    out = hb(g, topics, "m1", 1, ["b"])
    assert (out.member_epoch, flat(out.assignment)) == (2, [(2, 0)])


def replayed(g: ShareGroup) -> ShareGroup:
    """A fresh group rebuilt from the records the given one's state implies (as the loader keeps them)."""
    fresh = new_group()
    for rec in g._history:
        fresh.replay(rec)
    return fresh


@pytest.fixture(autouse=True)
def record_history(monkeypatch):
    """Keep every record a group emits (``_emit``), so ``replayed`` can rebuild it."""
    original = ShareGroup._emit

    def emit(self, out, rec):
        self.__dict__.setdefault("_history", []).append(rec)
        original(self, out, rec)

    monkeypatch.setattr(ShareGroup, "_emit", emit)


def test_replaying_the_records_rebuilds_the_same_group():
    g, topics = new_group(), Topics()
    ready(g, topics, ("a", "b"))
    hb(g, topics, "m1", 0, ["a", "b"])
    hb(g, topics, "m2", 0, ["a"])
    hb(g, topics, "m3", 0, ["b"])
    hb(g, topics, "m1", 1)
    hb(g, topics, "m2", -1)
    fresh = replayed(g)
    strip = {m: (x.member_epoch, x.previous_member_epoch, x.assigned_partitions, x.subscribed_topic_names)
             for m, x in g.members.items()}  # fmt: skip
    assert {m: (x.member_epoch, x.previous_member_epoch, x.assigned_partitions, x.subscribed_topic_names)
            for m, x in fresh.members.items()} == strip  # fmt: skip
    for name in ("group_epoch", "metadata_hash", "assignment_epoch", "target_assignment", "initialized"):
        assert getattr(fresh, name) == getattr(g, name), name


def test_the_group_tombstones_end_with_the_epoch_and_make_it_dead():
    g, topics = new_group(), Topics()
    ready(g, topics)
    hb(g, topics, "m1", 0, ["a"])
    hb(g, topics, "m1", -1)
    records = g.delete_records()
    assert [type(rec.key).__name__ for rec in records] == [
        "ShareGroupTargetAssignmentMetadataKey",
        "ShareGroupStatePartitionMetadataKey",
        "ShareGroupMetadataKey",
    ]
    for rec in records:
        g.replay(rec)
    assert g.state is ShareGroupState.DEAD and g.initialized == {}


def test_describe_names_topics_and_leaves_out_unknown_ones():
    g, topics = new_group(), Topics()
    ready(g, topics, ("a", "b"))
    hb(g, topics, "m1", 0, ["a", "b"])
    d = g.describe(lambda t: "a" if t == A else None)
    (m,) = d.members
    assert (d.state, d.group_epoch, d.assignment_epoch, d.assignor_name) == (ShareGroupState.STABLE, 1, 1, "simple")
    assert [(t.topic_name, t.partitions) for t in m.assignment] == [("a", (0, 1))]
    assert (m.member_epoch, m.client_id, m.client_host, m.subscribed_topic_names) == (1, "c", "/h", ("a", "b"))
