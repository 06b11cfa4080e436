"""The classic group state machine as tables: pure code, time passed in."""

from __future__ import annotations

import pytest

from broker.coordinator.group import Group, GroupError, GroupState, JoinRequest, select_protocol
from spark_kafkalog.protocol import ErrorCode

S = GroupState


def join(g, member_id="", *, now=0, instance=None, protocols=(("range", b"r"),), require=False, ptype="consumer"):
    request = JoinRequest(
        member_id=member_id,
        group_instance_id=instance,
        client_id="c",
        client_host="/127.0.0.1",
        session_timeout_ms=1000,
        rebalance_timeout_ms=5000,
        protocol_type=ptype,
        protocols=list(protocols),
        require_known_member_id=require,
    )
    return g.join(request, now=now)


def stable_group(n=2, now=0):
    """A Stable group of ``n`` members (generation 1); returns (group, member ids)."""
    g = Group("g")
    ids = [join(g, now=now)[0] for _ in range(n)]
    assert g.ready_to_complete(now)
    results = g.complete_join(now)
    g.sync(
        member_id=g.leader_id, group_instance_id=None, generation=1, assignments={m: m.encode() for m in ids}, now=now
    )
    assert g.state is S.STABLE and set(results) == set(ids)
    return g, ids


@pytest.mark.parametrize(
    ("preferences", "expected"),
    [
        ([["range"]], "range"),
        ([["range", "roundrobin"], ["roundrobin", "range"], ["roundrobin"]], "roundrobin"),
        ([["a", "b"], ["b", "a"]], "a"),  # a tie goes to the earliest member's preference
        ([["x", "cooperative-sticky", "range"], ["cooperative-sticky", "range"]], "cooperative-sticky"),
    ],
)
def test_select_protocol_follows_kafkas_vote(preferences, expected):
    assert select_protocol(preferences) == expected


def test_select_protocol_without_a_common_protocol_is_refused():
    with pytest.raises(ValueError, match="no protocol"):
        select_protocol([["a"], ["b"]])


def test_first_join_prepares_a_rebalance_and_completes_with_generation_1_and_a_leader():
    g = Group("g")
    mid, immediate = join(g)
    assert immediate is None and g.state is S.PREPARING_REBALANCE
    results = g.complete_join(0)
    assert g.state is S.COMPLETING_REBALANCE and g.generation == 1
    r = results[mid]
    assert (r.leader_id, r.protocol_name, r.protocol_type) == (mid, "range", "consumer")
    assert r.members == ((mid, None, b"r"),)


def test_initial_rebalance_delay_holds_the_first_rebalance():
    g = Group("g", initial_rebalance_delay_ms=3000)
    join(g, now=0)
    assert not g.ready_to_complete(2999)
    assert g.ready_to_complete(3000)


@pytest.mark.parametrize(
    ("rejoined", "now", "ready"),
    [
        (0, 0, False),
        (1, 0, True),  # everyone rejoined
        (0, 4999, False),
        (0, 5000, True),  # the rebalance timeout passed
    ],
)
def test_rebalance_completes_when_all_rejoined_or_the_rebalance_timeout_passes(rejoined, now, ready):
    g, ids = stable_group(2)
    join(g, ids[0])  # the leader rejoins: a new rebalance
    assert g.state is S.PREPARING_REBALANCE
    if rejoined:
        join(g, ids[1])
    assert g.ready_to_complete(now) is ready


def test_members_that_did_not_rejoin_are_removed_when_the_rebalance_completes():
    g, ids = stable_group(2)
    g.prepare_rebalance(10)
    join(g, ids[1], now=10)
    results = g.complete_join(5000)
    assert set(results) == {ids[1]} and g.generation == 2


@pytest.mark.parametrize(
    ("state_setup", "generation", "member", "error"),
    [
        ("stable", 1, "known", None),
        ("stable", 0, "known", ErrorCode.ILLEGAL_GENERATION),
        ("stable", 1, "unknown", ErrorCode.UNKNOWN_MEMBER_ID),
        ("rebalancing", 1, "known", ErrorCode.REBALANCE_IN_PROGRESS),
        ("empty", 1, "unknown", ErrorCode.UNKNOWN_MEMBER_ID),
        ("dead", 1, "known", ErrorCode.COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_heartbeat_errors(state_setup, generation, member, error):
    g, ids = stable_group(2)
    if state_setup == "rebalancing":
        join(g, ids[0])
    elif state_setup == "empty":
        g = Group("g")
    elif state_setup == "dead":
        g.mark_dead(0)
    mid = ids[1] if member == "known" else "nobody"
    if error is None:
        g.heartbeat(member_id=mid, group_instance_id=None, generation=generation, now=1)
        return
    with pytest.raises(GroupError) as e:
        g.heartbeat(member_id=mid, group_instance_id=None, generation=generation, now=1)
    assert e.value.error_code == error


def test_join_v4_with_an_empty_member_id_gets_member_id_required_then_joins_with_it():
    g = Group("g")
    with pytest.raises(GroupError) as e:
        join(g, require=True)
    assert e.value.error_code == ErrorCode.MEMBER_ID_REQUIRED and e.value.member_id
    assert not g.ready_to_complete(0) or g.is_empty
    mid, _ = join(g, e.value.member_id, require=True)
    assert mid == e.value.member_id and g.has_member(mid)


def test_a_pending_member_id_holds_the_rebalance_until_it_joins_or_expires():
    g, ids = stable_group(1)
    with pytest.raises(GroupError) as e:
        join(g, require=True, now=0)
    join(g, ids[0], now=0)  # the leader rejoins
    assert not g.ready_to_complete(10)
    g.expire_pending(1000)
    assert g.ready_to_complete(1000)
    assert e.value.member_id not in g.members


@pytest.mark.parametrize(
    ("protocols", "ptype", "error"),
    [
        ((("range", b""),), "consumer", None),
        ((("roundrobin", b""),), "consumer", ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
        ((("range", b""),), "connect", ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
        ((), "consumer", ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
    ],
)
def test_a_new_member_must_share_a_protocol_with_the_group(protocols, ptype, error):
    g, _ = stable_group(1)
    if error is None:
        join(g, protocols=protocols, ptype=ptype)
        assert g.state is S.PREPARING_REBALANCE
        return
    with pytest.raises(GroupError) as e:
        join(g, protocols=protocols, ptype=ptype)
    assert e.value.error_code == error


def test_followers_wait_for_the_leaders_sync_and_then_get_their_assignment():
    g = Group("g")
    a, _ = join(g)
    b, _ = join(g)
    g.complete_join(0)
    follower = b if g.leader_id == a else a
    assert g.sync(member_id=follower, group_instance_id=None, generation=1, assignments={}, now=0) is None
    got = g.sync(member_id=g.leader_id, group_instance_id=None, generation=1, assignments={a: b"A", b: b"B"}, now=0)
    assert g.state is S.STABLE and got == (b"A" if g.leader_id == a else b"B")
    assert g.assignment_of(follower) == (b"A" if follower == a else b"B")


def test_sync_during_a_rebalance_is_rebalance_in_progress():
    g, ids = stable_group(2)
    join(g, ids[0])
    with pytest.raises(GroupError) as e:
        g.sync(member_id=ids[1], group_instance_id=None, generation=1, assignments={}, now=0)
    assert e.value.error_code == ErrorCode.REBALANCE_IN_PROGRESS


def test_a_follower_rejoining_with_the_same_metadata_gets_the_current_generation_without_a_rebalance():
    g, ids = stable_group(2)
    follower = next(m for m in ids if m != g.leader_id)
    mid, immediate = join(g, follower)
    assert g.state is S.STABLE and immediate is not None and immediate.generation == 1


@pytest.mark.parametrize(("now", "expired"), [(999, False), (1000, True)])
def test_session_expiry_is_a_table_of_times(now, expired):
    g, ids = stable_group(1)
    assert (g.expired_members(now) == ids) is expired


def test_leave_and_expiry_rebalance_the_rest_and_the_last_leaving_empties_the_group():
    g, ids = stable_group(2)
    g.leave(member_id=ids[0], group_instance_id=None, now=1)
    assert g.state is S.PREPARING_REBALANCE
    join(g, ids[1], now=1)
    g.complete_join(1)
    g.remove_member(ids[1], now=2)
    assert g.state is S.PREPARING_REBALANCE and g.is_empty
    assert g.complete_join(2) == {} and g.state is S.EMPTY


def test_static_member_with_another_member_id_is_fenced():
    g = Group("g")
    mid, _ = join(g, instance="i-1")
    g.complete_join(0)
    with pytest.raises(GroupError) as e:
        g.heartbeat(member_id="other", group_instance_id="i-1", generation=1, now=0)
    assert e.value.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_static_member_rejoining_with_an_empty_id_takes_over_its_slot():
    g = Group("g")
    old, _ = join(g, instance="i-1")
    g.complete_join(0)
    new, _ = join(g, instance="i-1", require=True)
    assert new != old and g.static_members["i-1"] == new and list(g.members) == [new]
    with pytest.raises(GroupError) as e:
        g.heartbeat(member_id=old, group_instance_id="i-1", generation=1, now=0)
    assert e.value.error_code == ErrorCode.FENCED_INSTANCE_ID


def _subscription(topics, owned=(), generation=-1) -> bytes:
    from spark_kafkalog.client.consumer.consumer_protocol import Subscription, encode_subscription

    return encode_subscription(Subscription(tuple(topics), owned_partitions=tuple(owned), generation_id=generation))


@pytest.mark.parametrize(
    ("first", "protocols", "rebalances"),
    [
        (b"r", (("range", b"r"),), False),
        (b"r", (("range", b"changed"),), True),
        # the consumer protocol: the topics count, not the owned partitions a restarted member no longer has
        (_subscription(["t"], [("t", 0)], 3), (("range", _subscription(["t"])),), False),
        (_subscription(["t"]), (("range", _subscription(["t", "u"])),), True),
    ],
)
def test_static_member_restarting_in_a_stable_group_keeps_its_assignment_unless_its_metadata_changed(
    first, protocols, rebalances
):
    g = Group("g")
    a, _ = join(g, instance="a", protocols=(("range", first),))
    b, _ = join(g, instance="b", protocols=(("range", first),))
    g.complete_join(0)
    g.sync(member_id=g.leader_id, group_instance_id=None, generation=1, assignments={a: b"A", b: b"B"}, now=0)
    assert g.state is S.STABLE
    new_b, immediate = join(g, instance="b", protocols=protocols, now=5)
    assert new_b != b and g.static_members["b"] == new_b
    if rebalances:
        assert immediate is None and g.state is S.PREPARING_REBALANCE
        return
    assert immediate is not None and immediate.generation == 1 and immediate.member_id == new_b
    assert g.state is S.STABLE and g.generation == 1
    assignment = g.sync(member_id=new_b, group_instance_id="b", generation=1, assignments={}, now=5)
    assert assignment == b"B"


def test_a_restarted_static_leader_stays_leader_of_the_same_generation_and_keeps_its_assignment():
    g = Group("g")
    a, _ = join(g, instance="a")
    b, _ = join(g, instance="b")
    g.complete_join(0)
    assert g.leader_id == a
    g.sync(member_id=a, group_instance_id="a", generation=1, assignments={a: b"A", b: b"B"}, now=0)
    new_a, immediate = join(g, instance="a", now=5)
    assert immediate is not None and immediate.member_id == new_a
    assert immediate.leader_id == new_a and {m[0] for m in immediate.members} == {new_a, b}  # KIP-814 shape
    assert g.leader_id == new_a and g.state is S.STABLE and g.generation == 1
    assert g.sync(member_id=new_a, group_instance_id="a", generation=1, assignments={}, now=5) == b"A"


def test_leave_by_group_instance_id():
    g = Group("g")
    join(g, instance="i-1")
    g.complete_join(0)
    g.leave(member_id="", group_instance_id="i-1", now=0)
    assert g.is_empty


def test_group_max_size():
    g = Group("g", max_size=1)
    join(g)
    with pytest.raises(GroupError) as e:
        join(g)
    assert e.value.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED


@pytest.mark.parametrize(
    ("setup", "member", "generation", "error"),
    [
        ("empty", "", -1, None),  # assign-mode commit with a group id
        ("empty", "someone", -1, None),  # generation -1 on an Empty group: any member id (Kafka's rule)
        ("stable", "known", 1, None),
        ("stable", "", -1, ErrorCode.UNKNOWN_MEMBER_ID),
        ("stable", "known", 0, ErrorCode.ILLEGAL_GENERATION),
        ("completing", "known", 1, ErrorCode.REBALANCE_IN_PROGRESS),
    ],
)
def test_commit_validation(setup, member, generation, error):
    if setup == "empty":
        g, ids = Group("g"), ["x"]
    else:
        g, ids = stable_group(1)
    if setup == "completing":
        join(g, ids[0])
        g.complete_join(0)
    mid = ids[0] if member == "known" else member
    if error is None:
        g.validate_commit(member_id=mid, group_instance_id=None, generation=generation)
        return
    with pytest.raises(GroupError) as e:
        g.validate_commit(member_id=mid, group_instance_id=None, generation=generation)
    assert e.value.error_code == error
