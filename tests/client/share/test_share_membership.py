"""ShareMembership, the share consumer's side of the share group protocol (KIP-932), as pure code: heartbeats out,
answers in, the assignment by topic id resolved to names, error reactions as a table. No sockets."""

from __future__ import annotations

import base64
import uuid
from types import SimpleNamespace

import pytest

from spark_kafkalog.client.consumer.group_membership import GroupMemberAuthorizationError, GroupMemberFatalError
from spark_kafkalog.client.errors import KafkaClientError, TopicAuthorizationFailedError
from spark_kafkalog.client.share.membership import (
    LEAVE_EPOCH,
    ShareMembership,
    ShareMemberState,
    new_share_member_id,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

T_ID, U_ID = uuid.uuid4(), uuid.uuid4()
INTERVAL_MS = 5000


def response(epoch=1, *, assignment=None, code=ErrorCode.NONE, interval=INTERVAL_MS, message=None):
    """A ShareGroupHeartbeat response; ``assignment``: {topic id: partitions} or None (unchanged)."""
    wire = None
    if assignment is not None:
        wire = SimpleNamespace(
            topic_partitions=[SimpleNamespace(topic_id=t, partitions=list(ps)) for t, ps in assignment.items()]
        )
    return SimpleNamespace(
        error_code=code,
        error_message=message,
        member_id=None,
        member_epoch=epoch,
        heartbeat_interval_ms=interval,
        assignment=wire,
    )


def member(topics=("t",), *, rack=None) -> ShareMembership:
    m = ShareMembership("g", retry_backoff_ms=100, rack_id=rack)
    m.subscribe(topics)
    m.on_find_coordinator(ErrorCode.NONE, 7, 0)
    return m


def joined(m: ShareMembership, assignment=None, epoch=1, now=0.0) -> ShareMembership:
    join = m.heartbeat_request(now)
    assert join is not None and join.member_epoch == 0
    m.on_heartbeat(join, response(epoch, assignment=assignment or {}), now)
    assert m.in_group
    return m


def test_member_ids_are_kafka_uuid_strings_made_by_the_client():
    ids = {new_share_member_id() for _ in range(200)}
    assert len(ids) == 200
    for text in ids:
        assert len(text) == 22 and not text.startswith("-")
        raw = base64.urlsafe_b64decode(text + "==")
        assert uuid.UUID(bytes=raw).version == 4


def test_the_join_is_epoch_0_with_the_member_id_the_topics_and_the_rack():
    m = member(("u", "t", "t"), rack="r1")
    join = m.heartbeat_request(0.0)
    assert join is not None
    assert (join.group_id, join.member_id, join.member_epoch) == ("g", m.member_id, 0)
    assert join.subscribed_topic_names == ("t", "u")
    assert join.rack_id == "r1"
    assert m.heartbeat_request(0.0) is None  # one in flight


def test_later_heartbeats_carry_the_topics_only_when_they_changed_and_come_at_the_interval():
    m = joined(member(rack="r1"), epoch=3)
    assert m.heartbeat_request(1.0) is None  # not due before the interval
    hb = m.heartbeat_request(5.0)
    assert hb is not None and hb.member_epoch == 3
    assert hb.subscribed_topic_names is None and hb.rack_id is None
    m.on_heartbeat(hb, response(3), 5.0)
    m.subscribe(["t", "v"])
    hb = m.heartbeat_request(5.1)  # a changed subscription goes at once
    assert hb is not None and hb.subscribed_topic_names == ("t", "v")


def test_the_assignment_is_resolved_from_topic_ids_to_names():
    m = joined(member(("t", "u")), assignment={T_ID: [1, 0], U_ID: [2]})
    assert m.unresolved_topic_ids() == {T_ID, U_ID}
    assert m.assignment() == ()
    m.on_topic_names({T_ID: "t"})
    assert m.assignment() == ((TopicPartition("t", 0), T_ID), (TopicPartition("t", 1), T_ID))
    m.on_topic_names({U_ID: "u"})
    assert [tp for tp, _ in m.assignment()] == [TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 2)]


def test_a_null_assignment_keeps_the_last_one_and_a_new_one_replaces_it():
    m = joined(member(), assignment={T_ID: [0, 1]})
    m.on_topic_names({T_ID: "t"})
    hb = m.heartbeat_request(5.0)
    m.on_heartbeat(hb, response(1), 5.0)
    assert len(m.assignment()) == 2
    hb = m.heartbeat_request(10.0)
    m.on_heartbeat(hb, response(2, assignment={T_ID: [1]}), 10.0)
    assert m.assignment() == ((TopicPartition("t", 1), T_ID),)
    assert m.epoch == 2


@pytest.mark.parametrize(
    "code, state, coordinator_kept, retry_after",
    [
        (ErrorCode.NOT_COORDINATOR, ShareMemberState.STABLE, False, 0.1),
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, ShareMemberState.STABLE, False, 0.1),
        (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ShareMemberState.STABLE, True, 0.1),
        (ErrorCode.FENCED_MEMBER_EPOCH, ShareMemberState.JOINING, True, 0.0),
        (ErrorCode.UNKNOWN_MEMBER_ID, ShareMemberState.JOINING, True, 0.0),
    ],
)
def test_recoverable_heartbeat_errors(code, state, coordinator_kept, retry_after):
    m = joined(member(), assignment={T_ID: [0]})
    m.on_topic_names({T_ID: "t"})
    hb = m.heartbeat_request(5.0)
    m.on_heartbeat(hb, response(code=code), 5.0)
    assert m.state is state
    assert (m.coordinator == 7) is coordinator_kept
    assert m.fatal_error is None
    if not coordinator_kept:
        assert not m.wants_coordinator(5.0 + retry_after / 2) and m.wants_coordinator(5.0 + retry_after)
        m.on_find_coordinator(ErrorCode.NONE, 7, 5.0 + retry_after)
    if retry_after:
        assert m.heartbeat_request(5.0 + retry_after / 2) is None
    assert m.heartbeat_request(5.0 + retry_after) is not None  # retried after the backoff, not the interval
    if state is ShareMemberState.JOINING:
        assert m.assignment() == ()  # fenced: the assignment is dropped
        assert m.epoch == 0 and m.member_id == hb.member_id  # rejoins with epoch 0, same member id


def test_a_refused_join_is_retried_after_the_backoff():
    m = member()
    join = m.heartbeat_request(0.0)
    m.on_heartbeat(join, response(code=ErrorCode.UNKNOWN_MEMBER_ID), 0.0)
    assert m.heartbeat_request(0.05) is None
    assert m.heartbeat_request(0.1) is not None


@pytest.mark.parametrize(
    "code, error_type",
    [
        (ErrorCode.GROUP_AUTHORIZATION_FAILED, GroupMemberAuthorizationError),
        (ErrorCode.UNSUPPORTED_VERSION, GroupMemberFatalError),
        (ErrorCode.GROUP_ID_NOT_FOUND, GroupMemberFatalError),
        (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, GroupMemberFatalError),
        (ErrorCode.GROUP_MAX_SIZE_REACHED, GroupMemberFatalError),
        (ErrorCode.INVALID_REQUEST, GroupMemberFatalError),
    ],
)
def test_fatal_heartbeat_errors_are_raised_from_every_poll(code, error_type):
    m = member()
    join = m.heartbeat_request(0.0)
    m.on_heartbeat(join, response(code=code, message="why"), 0.0)
    assert m.state is ShareMemberState.FATAL
    error = m.take_error()
    assert isinstance(error, error_type)
    assert "'g'" in str(error) or "g" == getattr(error, "resource_name", None)
    assert m.take_error() is error  # kept
    assert m.heartbeat_request(10.0) is None


def test_topic_authorization_failures_are_raised_once_and_the_member_carries_on():
    m = joined(member())
    hb = m.heartbeat_request(5.0)
    m.on_heartbeat(hb, response(code=ErrorCode.TOPIC_AUTHORIZATION_FAILED), 5.0)
    assert isinstance(m.take_error(), TopicAuthorizationFailedError)
    assert m.take_error() is None
    assert m.state is ShareMemberState.STABLE


def test_a_lost_connection_forgets_the_coordinator_and_resends_the_topics():
    m = joined(member())
    hb = m.heartbeat_request(5.0)
    m.on_heartbeat_failed(hb, 5.0)
    assert m.coordinator is None and m.wants_coordinator(5.2)
    m.on_find_coordinator(ErrorCode.NONE, 8, 5.2)
    hb = m.heartbeat_request(10.0)
    assert hb is not None and hb.subscribed_topic_names == ("t",)


def test_leaving_sends_epoch_minus_1_and_ends_unsubscribed():
    m = joined(member(), assignment={T_ID: [0]})
    leave = m.leave()
    assert leave is not None and leave.member_epoch == LEAVE_EPOCH and leave.leaving
    assert m.assignment() == ()
    m.on_heartbeat(leave, response(code=ErrorCode.UNKNOWN_MEMBER_ID), 1.0)  # errors of a leave are ignored
    assert m.state is ShareMemberState.UNSUBSCRIBED and m.fatal_error is None


def test_leaving_before_the_join_was_answered_sends_nothing():
    m = member()
    assert m.leave() is None
    assert m.state is ShareMemberState.UNSUBSCRIBED


def test_an_answer_to_a_heartbeat_of_an_abandoned_membership_is_ignored():
    m = joined(member(), epoch=4)
    hb = m.heartbeat_request(5.0)
    m.on_heartbeat(hb, response(code=ErrorCode.FENCED_MEMBER_EPOCH), 5.0)  # rejoining at epoch 0
    m.on_heartbeat(hb, response(9), 5.0)  # a stale answer to the epoch-4 heartbeat
    assert m.state is ShareMemberState.JOINING and m.epoch == 0


def test_a_group_id_is_required():
    with pytest.raises(KafkaClientError, match="group id"):
        ShareMembership("")
