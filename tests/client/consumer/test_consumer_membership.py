"""ConsumerMembership, the consumer's side of the consumer group protocol (KIP-848), as pure code: heartbeats out,
answers in, reconciliation events, error reactions as tables; a fake coordinator plays the broker's part. No
sockets."""

from __future__ import annotations

import re
import uuid
from types import SimpleNamespace

import pytest

from spark_kafkalog.client.consumer.consumer_membership import (
    LEAVE_EPOCH,
    LEAVE_STATIC_EPOCH,
    ConsumerHeartbeat,
    ConsumerMembership,
    MemberState,
    UnsupportedGroupProtocolError,
)
from spark_kafkalog.client.consumer.group_membership import GroupMemberAuthorizationError, GroupMemberFatalError
from spark_kafkalog.client.errors import TopicAuthorizationFailedError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

T_ID, U_ID = uuid.uuid4(), uuid.uuid4()
NAMES = {T_ID: "t", U_ID: "u"}
T0, T1, T2, T3 = (TopicPartition("t", p) for p in range(4))
INTERVAL_MS = 5000


def response(epoch=1, *, assignment=None, code=ErrorCode.NONE, member_id=None, interval=INTERVAL_MS, message=None):
    """A ConsumerGroupHeartbeat response; ``assignment``: {topic id: partitions} or None (unchanged)."""
    wire = None
    if assignment is not None:
        wire = SimpleNamespace(
            topic_partitions=[SimpleNamespace(topic_id=t, partitions=list(ps)) for t, ps in assignment.items()]
        )
    return SimpleNamespace(
        error_code=code,
        error_message=message,
        member_id=member_id,
        member_epoch=epoch,
        heartbeat_interval_ms=interval,
        assignment=wire,
    )


def member(topics=("t",), *, regex=None, instance=None, assignor=None) -> ConsumerMembership:
    m = ConsumerMembership("g", rebalance_timeout_ms=60000, group_instance_id=instance, server_assignor=assignor)
    m.subscribe(topics, regex)
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    return m


def reconcile_all(m: ConsumerMembership) -> list[tuple[str, tuple[TopicPartition, ...]]]:
    """What the polling thread does: resolve ids, reconcile, run the callbacks, complete."""
    m.on_topic_names({t: NAMES[t] for t in m.unresolved_topic_ids()})
    ran = m.reconcile()
    events = [(e.kind, e.partitions) for e in m.take_events()]
    if ran:
        m.complete_reconciliation()
    return events


def joined(m: ConsumerMembership, assignment=None, epoch=1, now=0.0) -> ConsumerMembership:
    """Drive ``m`` through its join to STABLE owning ``assignment`` ({topic id: partitions})."""
    join = m.heartbeat_request(now)
    assert join is not None and join.member_epoch == 0
    m.on_heartbeat(join, response(epoch, assignment=assignment or {}), now)
    reconcile_all(m)
    ack = m.heartbeat_request(now)
    if ack is not None:
        m.on_heartbeat(ack, response(epoch), now)
    assert m.stable, m.state
    return m


# joining and heartbeats ---------------------------------------------------------------------------------------
def test_the_join_is_epoch_0_with_a_client_made_member_id_and_every_field():
    m = member(("b", "a"), assignor="uniform", instance="i-1")
    join = m.heartbeat_request(0)
    assert join == ConsumerHeartbeat(
        group_id="g",
        member_id=m.member_id,
        member_epoch=0,
        instance_id="i-1",
        rebalance_timeout_ms=60000,
        subscribed_topic_names=("a", "b"),
        subscribed_topic_regex=None,
        server_assignor="uniform",
        topic_partitions=(),
    )
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", m.member_id)
    assert ConsumerMembership("g").member_id != m.member_id


def test_the_rack_goes_with_the_join_only():
    m = ConsumerMembership("g", rack_id="rack-b")
    m.subscribe(["t"])
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    join = m.heartbeat_request(0)
    assert join.rack_id == "rack-b"
    m.on_heartbeat(join, response(1, assignment={}), 0)
    reconcile_all(m)
    assert m.heartbeat_request(10).rack_id is None


def test_a_join_refused_as_unknown_rejoins_after_a_backoff():
    m = member()
    join = m.heartbeat_request(0)
    m.on_heartbeat(join, response(code=ErrorCode.UNKNOWN_MEMBER_ID), 0)
    assert m.state is MemberState.JOINING and m.heartbeat_request(0.05) is None
    assert m.heartbeat_request(0.2).member_epoch == 0


def test_no_heartbeat_without_a_coordinator_or_while_one_is_in_flight():
    m = ConsumerMembership("g")
    m.subscribe(["t"])
    assert m.heartbeat_request(0) is None and m.wants_coordinator(0)
    m.on_find_coordinator(ErrorCode.NONE, 3, 0)
    assert not m.wants_coordinator(0)
    assert m.heartbeat_request(0) is not None
    assert m.heartbeat_request(0) is None  # in flight


def test_heartbeats_follow_the_interval_the_coordinator_returns_and_carry_only_changed_fields():
    m = joined(member(), {T_ID: [0, 1]})
    assert m.epoch == 1 and m.heartbeat_interval_ms == INTERVAL_MS
    assert m.heartbeat_request(4.9) is None
    assert m.heartbeat_wait(1.0) == pytest.approx(4.0)
    beat = m.heartbeat_request(5.0)
    assert beat == ConsumerHeartbeat("g", m.member_id, 1)  # nothing changed: ids and epoch only
    m.on_heartbeat(beat, response(1, interval=2000), 5.0)
    assert m.heartbeat_request(6.9) is None and m.heartbeat_request(7.0) is not None


def test_a_changed_subscription_is_sent_alone_and_a_dropped_regex_as_an_empty_string():
    m = joined(member(("t",), regex="ev-.*"))
    m.subscribe(["t", "u"], None)
    beat = m.heartbeat_request(10)
    assert (beat.subscribed_topic_names, beat.subscribed_topic_regex) == (("t", "u"), "")
    assert (beat.rebalance_timeout_ms, beat.server_assignor, beat.topic_partitions) == (-1, None, None)


def test_a_regex_subscription_is_sent_with_the_join():
    join = member((), regex="orders-.*").heartbeat_request(0)
    assert (join.subscribed_topic_names, join.subscribed_topic_regex) == ((), "orders-.*")


def test_the_coordinators_member_id_is_taken():
    m = member()
    join = m.heartbeat_request(0)
    m.on_heartbeat(join, response(1, member_id="from-broker", assignment={}), 0)
    assert m.member_id == "from-broker"


# reconciliation -----------------------------------------------------------------------------------------------
def test_assigned_topic_ids_wait_for_their_names_before_anything_is_assigned():
    m = member()
    join = m.heartbeat_request(0)
    m.on_heartbeat(join, response(1, assignment={T_ID: [1, 0]}), 0)
    assert m.unresolved_topic_ids() == {T_ID}
    assert not m.reconcile() and m.owned == () and not m.stable
    m.on_topic_names({T_ID: "t"})
    assert m.reconcile()
    assert [(e.kind, e.partitions) for e in m.take_events()] == [("assigned", (T0, T1))]
    assert m.owned == (T0, T1)


def test_a_topic_not_in_metadata_yet_is_assigned_by_a_later_reconciliation():
    m = member(("t", "u"))
    join = m.heartbeat_request(0)
    m.on_heartbeat(join, response(1, assignment={T_ID: [0], U_ID: [0]}), 0)
    m.on_topic_names({T_ID: "t"})
    assert m.reconcile()
    m.take_events()
    m.complete_reconciliation()
    ack = m.heartbeat_request(0)
    assert ack.topic_partitions == ((T_ID, (0,)),)
    m.on_heartbeat(ack, response(1), 0)
    assert m.unresolved_topic_ids() == {U_ID} and not m.stable
    m.on_topic_names({U_ID: "u"})
    assert m.reconcile()
    assert [(e.kind, e.partitions) for e in m.take_events()] == [("assigned", (TopicPartition("u", 0),))]


def test_revocation_runs_its_callback_before_the_acknowledgement_which_reports_the_owned_partitions():
    m = joined(member(), {T_ID: [0, 1, 2]})
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(1, assignment={T_ID: [2]}), 5)  # the epoch stays until the revocation is acked
    assert m.reconcile()
    assert [(e.kind, e.partitions) for e in m.take_events()] == [("revoked", (T0, T1)), ("assigned", ())]
    commit_epoch, member_id, _ = m.commit_identity()
    assert commit_epoch == 1  # the revocation callback commits with the current epoch
    assert m.heartbeat_request(10).topic_partitions is None  # not acknowledged while the callbacks run
    m.on_heartbeat(ConsumerHeartbeat("g", member_id, 1), response(1), 10)
    m.complete_reconciliation()
    ack = m.heartbeat_request(10.1)  # at once, not after the interval
    assert ack.topic_partitions == ((T_ID, (2,)),)
    assert m.state is MemberState.STABLE
    m.on_heartbeat(ack, response(2, assignment={T_ID: [2, 3]}), 10.1)
    assert reconcile_all(m) == [("assigned", (T3,))] and m.epoch == 2


def test_an_unchanged_assignment_needs_no_callbacks_and_no_acknowledgement():
    m = joined(member(), {T_ID: [0]})
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(2, assignment={T_ID: [0]}), 5)
    assert reconcile_all(m) == []
    assert m.stable and m.epoch == 2 and m.owned == (T0,)
    assert m.heartbeat_request(5) is None  # the next one after the interval


def test_a_new_target_during_the_callbacks_is_reconciled_after_them():
    m = joined(member(), {T_ID: [0, 1]})
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(1, assignment={T_ID: [1]}), 5)
    assert m.reconcile()
    m.take_events()
    beat = m.heartbeat_request(10)
    m.on_heartbeat(beat, response(1, assignment={T_ID: []}), 10)
    m.complete_reconciliation()
    assert m.heartbeat_request(10).topic_partitions == ((T_ID, (1,)),)
    assert not m.stable
    assert reconcile_all(m) == [("revoked", (T1,)), ("assigned", ())]


# errors -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", [ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID])
def test_a_fenced_member_loses_its_partitions_then_rejoins_with_epoch_0_and_the_same_id(code):
    m = joined(member(), {T_ID: [0, 1]}, epoch=4)
    member_id = m.member_id
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(code=code), 5)
    assert m.state is MemberState.FENCED and m.owned == () and m.commit_identity()[0] == -1
    assert m.heartbeat_request(5) is None  # no rejoin before the lost callback ran
    assert [(e.kind, e.partitions) for e in m.take_events()] == [("lost", (T0, T1))]
    rejoin = m.heartbeat_request(5)
    assert (rejoin.member_epoch, rejoin.member_id, rejoin.topic_partitions) == (0, member_id, ())
    assert rejoin.subscribed_topic_names == ("t",) and rejoin.rebalance_timeout_ms == 60000


@pytest.mark.parametrize(
    "code, state, coordinator",
    [
        (ErrorCode.NOT_COORDINATOR, MemberState.STABLE, None),
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, MemberState.STABLE, None),
        (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, MemberState.STABLE, 7),
        (ErrorCode.REQUEST_TIMED_OUT, MemberState.STABLE, 7),
    ],
)
def test_retriable_errors_keep_the_membership_and_resend_every_field(code, state, coordinator):
    m = joined(member(), {T_ID: [0]})
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(code=code), 5)
    assert (m.state, m.coordinator, m.owned) == (state, coordinator, (T0,))
    m.on_find_coordinator(ErrorCode.NONE, 7, 5)
    assert m.heartbeat_request(5.05) is None  # backing off
    again = m.heartbeat_request(10.2)
    assert again.subscribed_topic_names == ("t",) and again.topic_partitions == ((T_ID, (0,)),)
    assert again.rebalance_timeout_ms == 60000


@pytest.mark.parametrize(
    "code, error_type, text",
    [
        (ErrorCode.UNSUPPORTED_VERSION, UnsupportedGroupProtocolError, 'group_protocol="classic"'),
        (ErrorCode.GROUP_AUTHORIZATION_FAILED, GroupMemberAuthorizationError, "'g'"),
        (ErrorCode.UNRELEASED_INSTANCE_ID, GroupMemberFatalError, "UNRELEASED_INSTANCE_ID"),
        (ErrorCode.FENCED_INSTANCE_ID, GroupMemberFatalError, "FENCED_INSTANCE_ID"),
        (ErrorCode.UNSUPPORTED_ASSIGNOR, GroupMemberFatalError, "UNSUPPORTED_ASSIGNOR"),
        (ErrorCode.INVALID_REQUEST, GroupMemberFatalError, "INVALID_REQUEST"),
        (ErrorCode.GROUP_MAX_SIZE_REACHED, GroupMemberFatalError, "GROUP_MAX_SIZE_REACHED"),
    ],
)
def test_errors_that_repeating_cannot_fix_are_fatal(code, error_type, text):
    m = member()
    join = m.heartbeat_request(0)
    m.on_heartbeat(join, response(code=code, message="broker says so"), 0)
    assert m.state is MemberState.FATAL
    assert isinstance(m.fatal_error, error_type) and text in str(m.fatal_error)
    assert m.heartbeat_request(100) is None


def test_a_topic_authorization_error_is_reported_once_and_the_member_carries_on():
    m = joined(member((), regex="secret-.*"), {})
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(code=ErrorCode.TOPIC_AUTHORIZATION_FAILED), 5)
    assert isinstance(m.take_error(), TopicAuthorizationFailedError)
    assert m.take_error() is None and m.state is MemberState.STABLE


def test_a_broker_without_the_consumer_protocol_is_fatal_naming_the_classic_protocol():
    m = member()
    m.heartbeat_request(0)
    m.on_unsupported("ConsumerGroupHeartbeat is not among the broker's APIs")
    assert isinstance(m.fatal_error, UnsupportedGroupProtocolError)
    assert 'use group_protocol="classic"' in str(m.fatal_error)


def test_a_lost_connection_forgets_the_coordinator_and_keeps_the_partitions():
    m = joined(member(), {T_ID: [0]})
    beat = m.heartbeat_request(5)
    m.on_heartbeat_failed(beat, 5)
    assert (m.coordinator, m.owned, m.state) == (None, (T0,), MemberState.STABLE)


# leaving ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("instance, epoch", [(None, LEAVE_EPOCH), ("i-1", LEAVE_STATIC_EPOCH)])
def test_leave_revokes_first_then_sends_epoch_minus_1_or_minus_2_for_a_static_member(instance, epoch):
    m = joined(member(instance=instance), {T_ID: [0, 1]})
    m.prepare_leave()
    assert [(e.kind, e.partitions) for e in m.take_events()] == [("revoked", (T0, T1))]
    leave = m.leave()
    assert (leave.member_epoch, leave.member_id, leave.instance_id) == (epoch, m.member_id, instance)
    assert leave.subscribed_topic_names is None and leave.topic_partitions is None
    m.on_heartbeat(leave, response(code=ErrorCode.UNKNOWN_MEMBER_ID), 1)  # errors of a leave are ignored
    assert m.state is MemberState.UNSUBSCRIBED and m.fatal_error is None


def test_no_leave_heartbeat_for_a_member_that_is_not_in_the_group():
    m = ConsumerMembership("g")
    m.subscribe(["t"])  # joining, but no coordinator known yet
    assert m.leave() is None and m.state is MemberState.UNSUBSCRIBED


def test_no_poll_within_the_rebalance_timeout_leaves_and_the_next_poll_loses_the_partitions_and_rejoins():
    m = member()
    m.polled(0)
    joined(m, {T_ID: [0]})
    beat = m.heartbeat_request(5)
    m.on_heartbeat(beat, response(1), 5)
    leave = m.heartbeat_request(61)  # 60 s rebalance timeout
    assert leave.member_epoch == LEAVE_EPOCH and m.state is MemberState.LEAVING_STALE
    m.on_heartbeat(leave, response(-1), 61)
    assert m.state is MemberState.STALE and m.heartbeat_request(70) is None
    m.polled(80)
    assert [(e.kind, e.partitions) for e in m.take_events()] == [("lost", (T0,))]
    rejoin = m.heartbeat_request(80)
    assert (rejoin.member_epoch, rejoin.topic_partitions) == (0, ())


# a fake coordinator: two members share a topic, one leaves, the other gets everything ---------------------------
class FakeCoordinator:
    """Answers heartbeats as KIP-848's coordinator does, simplified: a uniform split by member order, a partition
    moves to its new owner only after the old owner acknowledged its revocation, the epoch bumps when a member
    acknowledged its whole target."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.members: dict[str, dict] = {}

    def _targets(self) -> dict[str, set[int]]:
        ids = sorted(self.members)
        return {m: {p for p in range(self.partitions) if p % len(ids) == i} for i, m in enumerate(ids)}

    def heartbeat(self, request: ConsumerHeartbeat):
        if request.member_epoch < 0:
            self.members.pop(request.member_id, None)
            return response(request.member_epoch)
        state = self.members.setdefault(request.member_id, {"epoch": 0, "owned": set(), "sent": None})
        if request.topic_partitions is not None:
            state["owned"] = {p for _, ps in request.topic_partitions for p in ps}
        target = self._targets()[request.member_id]
        taken = set().union(*(s["owned"] for mid, s in self.members.items() if mid != request.member_id))
        revoking = state["owned"] - target
        assignable = (target - taken) if not revoking else (state["owned"] & target)
        if state["owned"] == target:
            state["epoch"] = max(state["epoch"], 1) + (0 if state["sent"] == target else 1)
        elif state["epoch"] == 0:
            state["epoch"] = 1
        assignment = None
        if assignable != state["sent"]:
            assignment = {T_ID: sorted(assignable)}
            state["sent"] = assignable
        return response(state["epoch"], assignment=assignment, interval=1000)


def run(coordinator: FakeCoordinator, members: list[ConsumerMembership], now: float, rounds: int = 20) -> float:
    for _ in range(rounds):
        now += 1.0
        for m in members:
            m.polled(now)
            request = m.heartbeat_request(now)
            if request is not None:
                m.on_heartbeat(request, coordinator.heartbeat(request), now)
            reconcile_all(m)
    return now


def test_two_members_share_the_partitions_and_the_one_that_stays_gets_all_after_the_other_leaves():
    coordinator = FakeCoordinator(4)
    a, b = member(), member()
    now = run(coordinator, [a, b], 0.0)
    assert a.stable and b.stable
    assert set(a.owned) | set(b.owned) == {T0, T1, T2, T3} and not set(a.owned) & set(b.owned)
    assert a.owned and b.owned
    b.prepare_leave()
    b.take_events()
    leave = b.leave()
    b.on_heartbeat(leave, coordinator.heartbeat(leave), now)
    run(coordinator, [a], now)
    assert a.owned == (T0, T1, T2, T3) and a.stable
