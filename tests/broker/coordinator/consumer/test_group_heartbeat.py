"""ConsumerGroup.heartbeat: joins, epochs, revocation before assignment, fencing, static members, regexes,
limits, timeouts and what the response carries."""

from __future__ import annotations

import pytest

from broker.coordinator.consumer import records as r
from broker.coordinator.consumer.group import ConsumerGroupState, new_member_id
from broker.coordinator.consumer.member import MemberState
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import ErrorCode

from .fakes import FakeTopics, hb, make_group
from .sim import Cluster


def record_types(out) -> list[int]:
    return [rec.record_type for rec in out.records]


def error_of(fn) -> ErrorCode:
    with pytest.raises(GroupError) as err:
        fn()
    return err.value.error_code


def test_first_join_gets_epoch_1_every_partition_and_kafka_s_record_order():
    topics = FakeTopics({"a": 3})
    group = make_group()
    out = group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0, client_id="c", client_host="/10.0.0.1")
    assert (out.member_id, out.member_epoch, out.heartbeat_interval_ms) == ("m1", 1, 5000)
    assert out.assignment == {topics.id("a"): frozenset({0, 1, 2})}
    # member metadata (5), group epoch (3), target member (7), target metadata (6), current assignment (8)
    assert record_types(out) == [5, 3, 7, 6, 8]
    assert group.state is ConsumerGroupState.STABLE
    assert (group.group_epoch, group.assignment_epoch) == (1, 1)
    m = group.members["m1"]
    assert (m.client_id, m.client_host, m.rebalance_timeout_ms, m.subscribed_topic_names) == (
        "c",
        "/10.0.0.1",
        300_000,
        ("a",),
    )


def test_v0_join_with_an_empty_member_id_gets_a_coordinator_generated_id():
    topics = FakeTopics({"a": 1})
    group = make_group()
    out = group.heartbeat(hb("", 0, topics=["a"]), topics, 0, version=0)
    assert out.member_id == "gen-1" and "gen-1" in group.members


def test_new_member_id_is_22_characters_of_url_safe_base64():
    ids = {new_member_id() for _ in range(50)}
    assert len(ids) == 50
    for member_id in ids:
        assert len(member_id) == 22 and not member_id.startswith("-")
        assert set(member_id) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@pytest.mark.parametrize(
    ("request_", "version", "code"),
    [
        (hb("", 0, topics=["a"]), 1, ErrorCode.INVALID_REQUEST),
        (hb("", 5), 0, ErrorCode.INVALID_REQUEST),
        (hb("m", 0, topics=["a"], rebalance_timeout_ms=-1), 1, ErrorCode.INVALID_REQUEST),
        (hb("m", 0, topics=["a"], owned={}), 1, None),
        (hb("m", 0, topics=None), 1, ErrorCode.INVALID_REQUEST),
        (hb("m", -2), 1, ErrorCode.INVALID_REQUEST),
        (hb("m", -3), 1, ErrorCode.INVALID_REQUEST),
        (hb("m", 0, topics=["a"], instance_id=""), 1, ErrorCode.INVALID_REQUEST),
        (hb("m", 0, topics=["a"], rack_id=""), 1, ErrorCode.INVALID_REQUEST),
        (hb("m", 0, topics=["a"], server_assignor="sticky"), 1, ErrorCode.UNSUPPORTED_ASSIGNOR),
        (hb("m", 0, regex="("), 1, ErrorCode.INVALID_REGULAR_EXPRESSION),
        (hb("m", 3, topics=["a"]), 1, ErrorCode.UNKNOWN_MEMBER_ID),
        (hb("m", -1), 1, ErrorCode.UNKNOWN_MEMBER_ID),
    ],
    ids=[
        "v1 join without member id",
        "v0 heartbeat without member id",
        "join without rebalance timeout",
        "a valid join",
        "join without subscription",
        "static leave without instance id",
        "epoch below -2",
        "empty instance id",
        "empty rack id",
        "unknown assignor",
        "bad regex",
        "unknown member",
        "unknown member leaving",
    ],
)
def test_invalid_requests_are_refused_and_change_nothing(request_, version, code):
    topics = FakeTopics({"a": 2})
    group = make_group()
    if code is None:
        group.heartbeat(request_, topics, 0, version=version)
        return
    before = group.snapshot()
    assert error_of(lambda: group.heartbeat(request_, topics, 0, version=version)) == code
    assert group.snapshot() == before


def test_join_with_owned_partitions_is_invalid():
    topics = FakeTopics({"a": 2})
    group = make_group()
    req = hb("m", 0, topics=["a"], owned={topics.id("a"): [0]})
    assert error_of(lambda: group.heartbeat(req, topics, 0)) == ErrorCode.INVALID_REQUEST


def test_three_members_joining_revoke_before_the_partitions_move():
    topics = FakeTopics({"a": 6})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"])
    assert cluster.owned_counts() == {"m1": 6}
    cluster.join("m2", ["a"])
    # m2 is at the new epoch but gets nothing until m1 revokes; m1 is asked to revoke first.
    assert cluster.clients["m2"].owned == {} and cluster.clients["m2"].epoch == 2
    assert cluster.group.members["m2"].state is MemberState.UNRELEASED_PARTITIONS
    out = cluster.beat("m1")
    assert out.member_epoch == 1 and cluster.group.members["m1"].state is MemberState.UNREVOKED_PARTITIONS
    assert out.assignment is not None and sum(len(p) for p in out.assignment.values()) == 3
    cluster.join("m3", ["a"])
    rounds = cluster.settle()
    assert rounds >= 1
    assert cluster.owned_counts() == {"m1": 2, "m2": 2, "m3": 2}
    assert cluster.group.group_epoch == 3 and cluster.group.state is ConsumerGroupState.STABLE
    assert all(m.member_epoch == 3 for m in cluster.group.members.values())

    cluster.leave("m2")
    assert cluster.group.group_epoch == 4
    cluster.settle()
    assert cluster.owned_counts() == {"m1": 3, "m3": 3}


def test_leaving_writes_tombstones_and_bumps_the_epoch_and_the_last_leaves_the_group_empty():
    topics = FakeTopics({"a": 2})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"])
    out = cluster.leave("m1")
    assert (out.member_id, out.member_epoch, out.assignment) == ("m1", -1, None)
    assert record_types(out) == [8, 7, 5, 3]
    assert all(rec.value is None for rec in out.records[:3])
    assert cluster.group.state is ConsumerGroupState.EMPTY and cluster.group.group_epoch == 2


def test_a_known_member_rejoining_with_epoch_0_starts_over_without_partitions():
    topics = FakeTopics({"a": 4})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a"])
    cluster.settle()
    out = cluster.group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    cluster.clients["m1"].owned = dict(out.assignment or {})
    cluster.clients["m1"].epoch = out.member_epoch
    assert out.assignment is not None
    cluster.check_exclusive()
    cluster.settle()
    assert cluster.owned_counts() == {"m1": 2, "m2": 2}


def test_epoch_fencing_rules():
    topics = FakeTopics({"a": 4})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a"])
    cluster.settle()
    group, a = cluster.group, topics.id("a")
    m1 = group.members["m1"]
    assert m1.member_epoch == 2 and m1.previous_member_epoch == 1
    owned = dict(m1.assigned_partitions)
    # ahead of the coordinator
    assert error_of(lambda: group.heartbeat(hb("m1", 3, owned=owned), topics, 0)) == ErrorCode.FENCED_MEMBER_EPOCH
    # the previous epoch with a subset of the assigned partitions: accepted (the response was lost)
    out = group.heartbeat(hb("m1", 1, owned=owned), topics, 0)
    assert out.member_epoch == 2
    # the previous epoch while owning a partition it is not assigned: fenced
    stray = {a: owned[a] | {p for p in range(4) if p not in owned[a]}}
    assert error_of(lambda: group.heartbeat(hb("m1", 1, owned=stray), topics, 0)) == ErrorCode.FENCED_MEMBER_EPOCH
    # the previous epoch without reporting partitions: fenced (a subset cannot be shown)
    assert error_of(lambda: group.heartbeat(hb("m1", 1), topics, 0)) == ErrorCode.FENCED_MEMBER_EPOCH
    # an older epoch that is not the previous one, even with a subset of the partitions
    cluster.join("m3", ["a"])
    cluster.settle()
    m1 = group.members["m1"]
    assert (m1.member_epoch, m1.previous_member_epoch) == (3, 2)
    subset = dict(m1.assigned_partitions)
    assert error_of(lambda: group.heartbeat(hb("m1", 1, owned=subset), topics, 0)) == ErrorCode.FENCED_MEMBER_EPOCH


def test_the_assignment_is_sent_only_on_full_requests_or_when_it_changed():
    topics = FakeTopics({"a": 2})
    group = make_group()
    a = topics.id("a")
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    steady = group.heartbeat(hb("m1", 1, owned={a: [0, 1]}), topics, 1)
    assert steady.assignment is None and steady.records == ()
    full = group.heartbeat(hb("m1", 1, topics=["a"], owned={a: [0, 1]}, rebalance_timeout_ms=300_000), topics, 2)
    assert full.assignment == {a: frozenset({0, 1})}
    lagging = group.heartbeat(hb("m1", 1, owned={a: [0]}), topics, 3)
    assert lagging.assignment is None  # as Kafka: the client has it from an earlier answer
    silent = group.heartbeat(hb("m1", 1), topics, 4)
    assert silent.assignment is None


def test_static_membership_instance_ids_are_reserved_and_handed_over():
    topics = FakeTopics({"a": 4})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"], instance_id="i1")
    cluster.join("m2", ["a"], instance_id="i2")
    cluster.settle()
    group = cluster.group
    m1_partitions = dict(group.members["m1"].assigned_partitions)
    # another member id cannot take i1 while m1 holds it
    code = error_of(lambda: group.heartbeat(hb("m1b", 0, topics=["a"], instance_id="i1"), topics, 0))
    assert code == ErrorCode.UNRELEASED_INSTANCE_ID
    # m1 leaves temporarily (-2): it stays, with its partitions, at epoch -2
    epoch_before = group.group_epoch
    out = cluster.leave("m1", epoch=-2)
    assert out.member_epoch == -2 and record_types(out) == [8]
    assert group.members["m1"].member_epoch == -2 and group.group_epoch == epoch_before
    assert group.partition_owner(topics.id("a"), min(m1_partitions[topics.id("a")])) == "m1"
    # the restarted instance, with a new member id, takes m1's place and partitions without a rebalance
    out = group.heartbeat(hb("m1b", 0, topics=["a"], instance_id="i1"), topics, 10)
    assert "m1" not in group.members and group.static_members["i1"] == "m1b"
    assert out.assignment == m1_partitions and out.member_epoch == group.group_epoch
    assert record_types(out)[:6] == [8, 7, 5, 5, 7, 8]
    assert group.group_epoch == epoch_before
    # the old member id is fenced by the new one
    code = error_of(lambda: group.heartbeat(hb("m1", 2, owned={}, instance_id="i1"), topics, 0))
    assert code == ErrorCode.FENCED_INSTANCE_ID
    # an instance id nobody holds
    code = error_of(lambda: group.heartbeat(hb("m9", 2, owned={}, instance_id="i9"), topics, 0))
    assert code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_static_member_that_left_temporarily_is_removed_when_its_session_expires():
    topics = FakeTopics({"a": 2})
    group = make_group(session_timeout_ms=1000)
    group.heartbeat(hb("m1", 0, topics=["a"], instance_id="i1"), topics, 0)
    group.heartbeat(hb("m1", -2, instance_id="i1"), topics, 100)
    assert group.expire(999) == []
    out = group.expire(1000)
    assert [rec.record_type for rec in out] == [8, 7, 5, 3]
    assert group.is_empty and "i1" not in group.static_members


def test_session_timeout_fences_a_silent_member_and_its_partitions_move():
    topics = FakeTopics({"a": 2})
    cluster = Cluster(make_group(session_timeout_ms=1000), topics)
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a"])
    cluster.settle()
    cluster.now = 900
    cluster.beat("m2")
    assert cluster.group.expire(999) == []
    assert cluster.group.next_deadline_ms() == 1000
    fenced = cluster.group.expire(1000)
    assert [rec.record_type for rec in fenced] == [8, 7, 5, 3]
    assert set(cluster.group.members) == {"m2"}
    cluster.clients.pop("m1")
    cluster.settle()
    assert cluster.owned_counts() == {"m2": 2}


def test_rebalance_timeout_fences_a_member_that_does_not_revoke():
    topics = FakeTopics({"a": 2})
    group = make_group(session_timeout_ms=60_000)
    a = topics.id("a")
    group.heartbeat(hb("m1", 0, topics=["a"], rebalance_timeout_ms=5000), topics, 0)
    group.heartbeat(hb("m2", 0, topics=["a"]), topics, 100)
    out = group.heartbeat(hb("m1", 1, owned={a: [0, 1]}), topics, 200)
    assert group.members["m1"].state is MemberState.UNREVOKED_PARTITIONS
    assert out.assignment is not None and sum(len(p) for p in out.assignment.values()) == 1
    # it keeps heartbeating but never revokes: the deadline does not move
    group.heartbeat(hb("m1", 1, owned={a: [0, 1]}), topics, 3000)
    assert group.expire(5199) == []
    assert [rec.record_type for rec in group.expire(5200)] == [8, 7, 5, 3]
    assert set(group.members) == {"m2"}


def test_regex_subscription_follows_topics_created_later():
    topics = FakeTopics({"orders-1": 2, "other": 2})
    group = make_group()
    out = group.heartbeat(hb("m1", 0, regex="orders-.*"), topics, 0)
    assert out.assignment == {topics.id("orders-1"): frozenset({0, 1})}
    assert 16 in record_types(out)
    assert group.resolved_regexes["orders-.*"].topics == frozenset({"orders-1"})
    epoch = group.group_epoch
    topics.create("orders-2", 1)
    topics.create("orders", 1)  # fullmatch: "orders-.*" does not match "orders"
    out = group.heartbeat(hb("m1", epoch, owned=out.assignment), topics, 10)
    assert group.group_epoch == epoch + 1
    assert out.assignment == {topics.id("orders-1"): frozenset({0, 1}), topics.id("orders-2"): frozenset({0})}
    assert group.subscribed_topic_names() == {"orders-1", "orders-2"}


def test_changing_the_regex_drops_the_old_one_when_nobody_uses_it():
    topics = FakeTopics({"x1": 1, "y1": 1})
    group = make_group()
    group.heartbeat(hb("m1", 0, regex="x.*"), topics, 0)
    out = group.heartbeat(hb("m1", 1, regex="y.*", owned={topics.id("x1"): [0]}), topics, 1)
    tombstones = [rec for rec in out.records if rec.record_type == 16 and rec.value is None]
    assert [rec.key.regular_expression for rec in tombstones] == ["x.*"]  # type: ignore[union-attr]
    assert set(group.resolved_regexes) == {"y.*"}


def test_group_max_size_refuses_new_members_only():
    topics = FakeTopics({"a": 2})
    group = make_group(max_size=1)
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    assert error_of(lambda: group.heartbeat(hb("m2", 0, topics=["a"]), topics, 0)) == ErrorCode.GROUP_MAX_SIZE_REACHED
    group.heartbeat(hb("m1", 1, owned={topics.id("a"): [0, 1]}), topics, 1)


def test_metadata_change_bumps_the_epoch_and_assigns_new_partitions():
    topics = FakeTopics({"a": 2})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a"])
    cluster.settle()
    epoch = cluster.group.group_epoch
    topics.grow("a", 4)
    cluster.settle()
    assert cluster.group.group_epoch == epoch + 1
    assert cluster.owned_counts() == {"m1": 2, "m2": 2}


def test_subscription_change_bumps_the_epoch_and_moves_the_member_off_the_dropped_topic():
    topics = FakeTopics({"a": 2, "b": 2})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a", "b"])
    group = cluster.group
    epoch = group.group_epoch
    client = cluster.clients["m1"]
    out = group.heartbeat(hb("m1", client.epoch, topics=["b"], owned=client.owned), topics, 1)
    assert group.group_epoch == epoch + 1
    assert group.members["m1"].state is MemberState.UNREVOKED_PARTITIONS
    client.owned = dict(out.assignment or {})
    cluster.settle()
    assert set(cluster.clients["m1"].owned) == {topics.id("b")}


def test_the_most_requested_server_assignor_is_used():
    topics = FakeTopics({"a": 4})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"], server_assignor="range"), topics, 0)
    group.heartbeat(hb("m2", 0, topics=["a"], server_assignor="range"), topics, 0)
    assert group.preferred_assignor() == "range"
    a = topics.id("a")
    assert group.target_assignment["m1"] == {a: frozenset({0, 1})}
    assert group.target_assignment["m2"] == {a: frozenset({2, 3})}
    assert group.describe(topics.topic_name).assignor_name == "range"


def test_revert_puts_the_group_back_as_it_was_before_the_heartbeat():
    topics = FakeTopics({"a": 2})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    before = group.snapshot()
    out = group.heartbeat(hb("m2", 0, topics=["a"]), topics, 1)
    assert group.snapshot() != before
    group.revert(out.snapshot)
    assert group.snapshot() == before and set(group.members) == {"m1"}


@pytest.mark.parametrize(
    ("member_id", "epoch", "code"),
    [
        ("m1", 1, None),
        ("m1", 0, ErrorCode.STALE_MEMBER_EPOCH),
        ("m1", 2, ErrorCode.STALE_MEMBER_EPOCH),
        ("nobody", 1, ErrorCode.UNKNOWN_MEMBER_ID),
        ("", -1, ErrorCode.UNKNOWN_MEMBER_ID),
    ],
)
def test_validate_offset_commit(member_id, epoch, code):
    topics = FakeTopics({"a": 1})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    if code is None:
        group.validate_offset_commit(member_id, epoch)
    else:
        assert error_of(lambda: group.validate_offset_commit(member_id, epoch)) == code


def test_an_empty_group_accepts_commits_without_a_member():
    make_group().validate_offset_commit("", -1)


@pytest.mark.parametrize(
    ("member_id", "epoch", "code"),
    [
        (None, -1, None),
        ("", -1, None),
        ("m1", 1, None),
        ("m1", 5, ErrorCode.STALE_MEMBER_EPOCH),
        ("ghost", 1, ErrorCode.UNKNOWN_MEMBER_ID),
    ],
)
def test_validate_offset_fetch(member_id, epoch, code):
    topics = FakeTopics({"a": 1})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    if code is None:
        group.validate_offset_fetch(member_id, epoch)
    else:
        assert error_of(lambda: group.validate_offset_fetch(member_id, epoch)) == code


def test_describe_shows_members_assignments_and_targets_by_topic_name():
    topics = FakeTopics({"a": 2})
    cluster = Cluster(make_group(), topics)
    cluster.join("m1", ["a"])
    cluster.join("m2", ["a"])
    d = cluster.group.describe(topics.topic_name)
    assert (d.group_id, d.state, d.group_epoch, d.assignment_epoch, d.assignor_name) == (
        "g",
        ConsumerGroupState.RECONCILING,
        2,
        2,
        "uniform",
    )
    by_id = {m.member_id: m for m in d.members}
    assert [tp.topic_name for tp in by_id["m1"].assignment] == ["a"]
    assert sum(len(tp.partitions) for tp in by_id["m2"].target_assignment) == 1
    assert by_id["m2"].assignment == () and by_id["m2"].member_type == 1


def test_dead_after_the_group_tombstone_is_replayed():
    topics = FakeTopics({"a": 1})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)
    tombstones = group.delete_records()
    assert [rec.record_type for rec in tombstones] == [8, 7, 5, 6, 3]
    for rec in tombstones:
        group.replay(rec)
    assert group.state is ConsumerGroupState.DEAD and group.is_empty
    assert isinstance(tombstones[-1].key, r.ConsumerGroupMetadataKey)


def test_a_static_member_leaving_for_good_frees_its_instance_id():
    topics = FakeTopics({"a": 2})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"], instance_id="i1"), topics, 0)
    out = group.heartbeat(hb("m1", -1, instance_id="i1"), topics, 1)
    assert out.member_epoch == -1 and record_types(out) == [8, 7, 5, 3]
    assert "i1" not in group.static_members
    out = group.heartbeat(hb("m2", 0, topics=["a"], instance_id="i1"), topics, 2)
    assert out.member_id == "m2" and out.assignment == {topics.id("a"): frozenset({0, 1})}


def test_a_static_leave_from_the_wrong_member_id_is_fenced():
    topics = FakeTopics({"a": 1})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"], instance_id="i1"), topics, 0)
    assert error_of(lambda: group.heartbeat(hb("m2", -2, instance_id="i1"), topics, 1)) == ErrorCode.FENCED_INSTANCE_ID
    assert error_of(lambda: group.heartbeat(hb("m2", -2, instance_id="i9"), topics, 1)) == ErrorCode.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize(
    ("api_version", "transactional", "code"),
    [(8, False, ErrorCode.UNSUPPORTED_VERSION), (8, True, None), (9, False, None), (None, False, None)],
)
def test_a_consumer_member_commits_with_offset_commit_v9_or_later(api_version, transactional, code):
    topics = FakeTopics({"a": 1})
    group = make_group()
    group.heartbeat(hb("m1", 0, topics=["a"]), topics, 0)

    def commit() -> None:
        group.validate_offset_commit("m1", 1, api_version=api_version, transactional=transactional)

    if code is None:
        commit()
    else:
        assert error_of(commit) == code


def test_subscribing_to_a_missing_topic_assigns_nothing_until_it_exists():
    topics = FakeTopics({"a": 1})
    group = make_group()
    out = group.heartbeat(hb("m1", 0, topics=["later"]), topics, 0)
    assert out.assignment == {} and group.state is ConsumerGroupState.STABLE
    topics.create("later", 2)
    out = group.heartbeat(hb("m1", out.member_epoch, owned={}), topics, 1)
    assert out.assignment == {topics.id("later"): frozenset({0, 1})}
