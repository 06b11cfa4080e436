"""GroupMember, the consumer's side of the classic group protocol, as pure code: requests out, answers in,
rebalance events, error reactions as tables. No sockets."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spark_kafkalog.client.consumer.assignors import assignor_by_name
from spark_kafkalog.client.consumer.consumer_protocol import (
    Assignment,
    Subscription,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafkalog.client.consumer.group_membership import (
    FindCoordinatorRequest,
    GroupMember,
    GroupMemberFatalError,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberState,
    MetadataRequest,
    SyncGroupRequest,
    coordinator_lookup_code,
)
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

T0, T1, T2, T3 = (TopicPartition("t", p) for p in range(4))


def member(*assignors: str, instance: str | None = None, **kw) -> GroupMember:
    m = GroupMember("g", [assignor_by_name(a) for a in assignors or ("range",)], group_instance_id=instance, **kw)
    m.subscribe(["t"])
    return m


def join_response(code=ErrorCode.NONE, *, member_id="m1", generation=1, protocol="range", leader="m1", members=()):
    return SimpleNamespace(
        error_code=code,
        member_id=member_id,
        generation_id=generation,
        protocol_name=protocol,
        leader=leader,
        members=[SimpleNamespace(member_id=mid, group_instance_id=None, metadata=md) for mid, md in members],
    )


def sync_response(partitions=(), code=ErrorCode.NONE):
    data = encode_assignment(Assignment(tuple(partitions))) if partitions else b""
    return SimpleNamespace(error_code=code, assignment=data)


def stable(m: GroupMember, owned=(T0, T1, T2, T3), *, generation=1, protocol="range") -> GroupMember:
    """Drive ``m`` to STABLE as a follower owning ``owned``."""
    assert isinstance(m.next_request(0), FindCoordinatorRequest)
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    assert isinstance(m.next_request(0), JoinGroupRequest)
    m.on_join_group(join_response(generation=generation, leader="other", protocol=protocol), 0)
    assert isinstance(m.next_request(0), SyncGroupRequest)
    m.on_sync_group(sync_response(owned), 0)
    m.take_events()
    assert m.stable
    return m


def test_the_leader_assigns_over_the_partition_counts_and_followers_send_no_assignment():
    m = member()
    m.next_request(0)
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    join = m.next_request(0)
    assert isinstance(join, JoinGroupRequest) and [n for n, _ in join.protocols] == ["range"]
    assert decode_subscription(join.protocols[0][1]).topics == ("t",)
    other = encode_subscription(Subscription(("t",)))
    m.on_join_group(join_response(members=[("m1", join.protocols[0][1]), ("m2", other)]), 0)
    request = m.next_request(0)
    assert isinstance(request, MetadataRequest) and request.topics == ("t",)
    m.on_metadata({"t": 4})
    sync = m.next_request(0)
    assert isinstance(sync, SyncGroupRequest) and dict(sync.assignments).keys() == {"m1", "m2"}
    m.on_sync_group(sync_response([T0, T1]), 0)
    assert m.owned == (T0, T1) and [e.kind for e in m.take_events()] == ["assigned"]


def test_member_id_required_rejoins_at_once_with_the_given_id():
    m = member()
    m.next_request(0)
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    m.next_request(0)
    m.on_join_group(join_response(ErrorCode.MEMBER_ID_REQUIRED, member_id="given"), 0)
    again = m.next_request(0)
    assert isinstance(again, JoinGroupRequest) and again.member_id == "given"


@pytest.mark.parametrize(
    ("code", "keeps_member_id", "coordinator_known", "fatal"),
    [
        (ErrorCode.REBALANCE_IN_PROGRESS, True, True, False),
        (ErrorCode.UNKNOWN_MEMBER_ID, False, True, False),
        (ErrorCode.ILLEGAL_GENERATION, False, True, False),
        (ErrorCode.NOT_COORDINATOR, True, False, False),
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, True, False, False),
        (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, True, True, False),
        (ErrorCode.FENCED_INSTANCE_ID, True, True, True),
        (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, True, True, True),
    ],
)
def test_sync_group_errors(code, keeps_member_id, coordinator_known, fatal):
    m = member()
    m.next_request(0)
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    m.next_request(0)
    m.on_join_group(join_response(leader="other"), 0)
    m.next_request(0)
    m.on_sync_group(sync_response(code=code), 0)
    assert (m.member_id == "m1") is keeps_member_id
    assert (m.coordinator is not None) is coordinator_known
    if fatal:
        assert m.state is MemberState.FATAL
        with pytest.raises(GroupMemberFatalError, match="group 'g'"):
            m.next_request(10)
    else:
        assert isinstance(m.next_request(10), (JoinGroupRequest, FindCoordinatorRequest))


@pytest.mark.parametrize(
    ("code", "rejoins", "resets"),
    [
        (ErrorCode.NONE, False, False),
        (ErrorCode.REBALANCE_IN_PROGRESS, True, False),
        (ErrorCode.UNKNOWN_MEMBER_ID, True, True),
        (ErrorCode.ILLEGAL_GENERATION, True, True),
        (ErrorCode.NOT_COORDINATOR, False, False),
    ],
)
def test_heartbeat_answers(code, rejoins, resets):
    m = stable(member(heartbeat_interval_ms=100))
    hb = m.heartbeat_request(1.0)
    assert isinstance(hb, HeartbeatRequest) and hb.generation_id == 1
    assert m.heartbeat_request(1.01) is None  # one in flight
    m.on_heartbeat(hb, code, 1.05)
    assert m.stable is not rejoins
    assert (m.generation == -1) is resets
    if code == ErrorCode.NOT_COORDINATOR:
        assert m.coordinator is None
    if rejoins:
        m.next_request(2)
        kinds = [e.kind for e in m.take_events()]
        assert kinds == (["lost"] if resets else ["revoked"])  # a reset member's partitions may be others' now


def test_a_heartbeat_answer_about_an_old_generation_is_ignored():
    m = stable(member(heartbeat_interval_ms=100))
    hb = m.heartbeat_request(1.0)
    m.request_rejoin()
    m.next_request(1.0)  # rejoining: JoinGroup in flight
    m.on_heartbeat(hb, ErrorCode.ILLEGAL_GENERATION, 1.1)
    assert m.member_id == "m1" and m.state is MemberState.JOINING


@pytest.mark.parametrize(
    ("assignors", "new_assignment", "revoked", "added"),
    [
        (("range",), (T0, T1), [T0, T1, T2, T3], [T0, T1]),  # eager: all revoked first, all assigned again
        (("cooperative-sticky",), (T0, T1), [T2, T3], []),  # cooperative: only what moved, nothing new
        (("cooperative-sticky",), (T0, T1, T2, T3), [], []),
        (("range", "cooperative-sticky"), (T0,), [T0, T1, T2, T3], [T0]),  # mixed: eager
    ],
)
def test_rebalance_callbacks_by_protocol(assignors, new_assignment, revoked, added):
    m = stable(member(*assignors), protocol=assignors[0])
    m.request_rejoin()
    m.next_request(1)
    events = m.take_events()
    m.on_join_group(join_response(generation=2, leader="other", protocol=assignors[0]), 1)
    m.next_request(1)
    m.on_sync_group(sync_response(new_assignment), 1)
    events += m.take_events()
    assert [tp for e in events if e.kind == "revoked" for tp in e.partitions] == revoked
    assigned = [e for e in events if e.kind == "assigned"]
    assert len(assigned) == 1 and list(assigned[0].partitions) == added
    assert m.owned == tuple(new_assignment)
    # a cooperative member that gave partitions up rejoins so the leader can hand them out
    assert m.stable is not (assignors == ("cooperative-sticky",) and bool(revoked))


def test_no_poll_within_the_poll_interval_leaves_the_group_and_a_static_member_sends_nothing():
    for instance, expect_leave in ((None, True), ("i-1", False)):
        m = stable(member(instance=instance, rebalance_timeout_ms=1000, heartbeat_interval_ms=100))
        m.polled(0.0)
        request = m.heartbeat_request(2.0)
        assert isinstance(request, LeaveGroupRequest) is expect_leave
        assert m.generation == -1 and m.member_id == ""
        m.next_request(2.1)
        assert [e.kind for e in m.take_events()] == ["lost"]


def test_leave_revokes_with_the_generation_still_valid_then_resets():
    m = stable(member())
    m.prepare_leave()
    assert m.commit_identity() == (1, "m1", None)
    assert [e.kind for e in m.take_events()] == ["revoked"]
    request = m.leave()
    assert isinstance(request, LeaveGroupRequest) and request.member_id == "m1"
    assert m.commit_identity()[0] == -1 and m.subscription == () and m.owned == ()
    static = stable(member(instance="i-1"))
    assert static.leave() is None  # a static member keeps its place until the session times out


@pytest.mark.parametrize(
    ("error_code", "retriable", "expected"),
    [
        (None, True, ErrorCode.COORDINATOR_NOT_AVAILABLE),  # a lost connection names no code
        (None, False, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, None, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        (ErrorCode.NOT_COORDINATOR, False, ErrorCode.NOT_COORDINATOR),
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, False, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (ErrorCode.GROUP_AUTHORIZATION_FAILED, None, None),  # fatal
        (ErrorCode.INVALID_REQUEST, False, None),
    ],
)
def test_coordinator_lookup_code_classifies_find_coordinator_errors(
    error_code: int | None, retriable: bool | None, expected: int | None
) -> None:
    error = KafkaClientError("FindCoordinator failed", error_code=error_code, retriable=retriable)
    assert coordinator_lookup_code(error) == expected
