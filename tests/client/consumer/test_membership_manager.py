"""MembershipManager without a broker: commits as a member (STALE_MEMBER_EPOCH retried with the next epoch, the
other epoch errors raise CommitFailedError), OffsetFetch v9 with the member's identity, the heartbeat request body
per version, and topic id resolution through Metadata. The heartbeat thread is not started."""

from __future__ import annotations

import threading
import uuid
from types import SimpleNamespace

import pytest

from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.consumer_membership import ConsumerHeartbeat
from spark_kafkalog.client.consumer.group_membership import CommitFailedError
from spark_kafkalog.client.consumer.membership_manager import (
    MembershipManager,
    RegexNeedsV1,
    coordinator_lookup_failed,
    heartbeat_body,
)
from spark_kafkalog.client.errors import GroupAuthorizationFailedError, KafkaClientError
from spark_kafkalog.client.metadata import TopicInfo
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

TP = TopicPartition("t", 0)
OFFSETS = {TP: OffsetAndMetadata(5)}


def manager(**config) -> MembershipManager:
    cfg = ClientConfig.create(
        bootstrap_servers="127.0.0.1:1", group_id="g", group_protocol="consumer", retry_backoff_ms=10, **config
    )
    m = MembershipManager(cfg, client=SimpleNamespace(), handle_events=lambda events: None)
    m.member.subscribe(["t"])
    m.member.on_find_coordinator(ErrorCode.NONE, 1, 0)
    return m


def in_group(m: MembershipManager, epoch: int) -> None:
    join = m.member.heartbeat_request(0)
    m.member.on_heartbeat(join, heartbeat_response(epoch, assignment=[]), 0)
    m.member.reconcile()
    m.member.complete_reconciliation()


def heartbeat_response(epoch: int, assignment=None):
    wire = None if assignment is None else SimpleNamespace(topic_partitions=assignment)
    return SimpleNamespace(
        error_code=0, error_message=None, member_id=None, member_epoch=epoch, heartbeat_interval_ms=100, assignment=wire
    )


class FakeGroups:
    """GroupAdmin's commit_offsets/list_group_offsets: answers ``errors`` in turn (None: success), records calls."""

    def __init__(self, *errors: int | None) -> None:
        self.errors = list(errors)
        self.calls: list[dict] = []

    def _answer(self, call: dict) -> None:
        self.calls.append(call)
        code = self.errors.pop(0) if self.errors else None
        if code is not None:
            raise KafkaClientError(f"failed: {ErrorCode(code).name}", error_code=code)

    def commit_offsets(self, group_id, offsets, *, generation, member_id, group_instance_id):
        self._answer({"group": group_id, "epoch": generation, "member": member_id})

    def list_group_offsets(self, group_id, partitions, *, member_id=None, member_epoch=-1):
        self._answer({"group": group_id, "epoch": member_epoch, "member": member_id})
        return {TP: OffsetAndMetadata(3)}


def bump_epoch_later(m: MembershipManager, epoch: int, delay: float = 0.1) -> threading.Timer:
    """The heartbeat thread's part: a heartbeat answered with ``epoch`` after ``delay`` seconds."""

    def beat() -> None:
        request = m.member.heartbeat_request(1e9)
        m.member.on_heartbeat(request, heartbeat_response(epoch), 1e9)

    timer = threading.Timer(delay, beat)
    timer.start()
    return timer


def test_a_commit_carries_the_member_id_and_epoch():
    m = manager()
    in_group(m, 3)
    groups = FakeGroups(None)
    m.commit_offsets(groups, OFFSETS)
    assert groups.calls == [{"group": "g", "epoch": 3, "member": m.member.member_id}]


def test_stale_member_epoch_is_retried_with_the_next_epoch():
    m = manager()
    in_group(m, 3)
    groups = FakeGroups(ErrorCode.STALE_MEMBER_EPOCH, None)
    timer = bump_epoch_later(m, 4)
    m.commit_offsets(groups, OFFSETS)
    timer.join()
    assert [c["epoch"] for c in groups.calls] == [3, 4]


def test_stale_member_epoch_without_a_new_epoch_fails_the_commit_after_the_api_timeout():
    m = manager(default_api_timeout_ms=300)
    in_group(m, 3)
    with pytest.raises(CommitFailedError, match="STALE_MEMBER_EPOCH"):
        m.commit_offsets(FakeGroups(ErrorCode.STALE_MEMBER_EPOCH), OFFSETS)


@pytest.mark.parametrize("code", [ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH])
def test_an_unknown_or_fenced_member_fails_the_commit_at_once(code):
    m = manager()
    in_group(m, 3)
    groups = FakeGroups(code)
    with pytest.raises(CommitFailedError, match=ErrorCode(code).name) as caught:
        m.commit_offsets(groups, OFFSETS)
    assert caught.value.error_code == code and len(groups.calls) == 1


def test_a_commit_outside_the_group_fails_without_a_request():
    m = manager()  # joining: no epoch yet
    groups = FakeGroups()
    with pytest.raises(CommitFailedError, match="not in the group"):
        m.commit_offsets(groups, OFFSETS)
    assert groups.calls == []


def test_other_commit_errors_are_raised_as_they_are():
    m = manager()
    in_group(m, 3)
    with pytest.raises(KafkaClientError, match="OFFSET_METADATA_TOO_LARGE") as caught:
        m.commit_offsets(FakeGroups(ErrorCode.OFFSET_METADATA_TOO_LARGE), OFFSETS)
    assert not isinstance(caught.value, CommitFailedError)


def test_offset_fetch_carries_the_member_identity_and_retries_a_stale_epoch():
    m = manager()
    in_group(m, 3)
    groups = FakeGroups(ErrorCode.STALE_MEMBER_EPOCH, None)
    timer = bump_epoch_later(m, 5)
    assert m.fetch_committed(groups, [TP]) == {TP: OffsetAndMetadata(3)}
    timer.join()
    assert [(c["member"], c["epoch"]) for c in groups.calls] == [(m.member.member_id, 3), (m.member.member_id, 5)]


def test_offset_fetch_outside_the_group_sends_no_member_identity():
    m = manager()
    groups = FakeGroups(None)
    m.fetch_committed(groups, [TP])
    assert groups.calls == [{"group": "g", "epoch": -1, "member": None}]


# the request body ---------------------------------------------------------------------------------------------
def test_the_heartbeat_body_sends_nulls_for_unchanged_fields_and_topic_ids_as_uuids():
    topic_id = uuid.uuid4()
    full = ConsumerHeartbeat("g", "m", 0, "i", 1000, ("t",), None, "range", ((topic_id, (0, 2)),), "rack-a")
    body = heartbeat_body(full, 1)
    assert body.rack_id == "rack-a"
    assert (body.member_epoch, body.instance_id, body.rebalance_timeout_ms, body.server_assignor) == (
        0,
        "i",
        1000,
        "range",
    )
    assert body.subscribed_topic_names == ["t"] and body.subscribed_topic_regex is None
    assert [(t.topic_id, t.partitions) for t in body.topic_partitions] == [(topic_id, [0, 2])]
    short = heartbeat_body(ConsumerHeartbeat("g", "m", 7), 1)
    assert (short.rebalance_timeout_ms, short.subscribed_topic_names, short.topic_partitions) == (-1, None, None)


def test_a_regex_needs_heartbeat_v1():
    request = ConsumerHeartbeat("g", "m", 0, subscribed_topic_names=(), subscribed_topic_regex="a.*")
    assert heartbeat_body(request, 1).subscribed_topic_regex == "a.*"
    with pytest.raises(RegexNeedsV1, match="needs ConsumerGroupHeartbeat v1"):
        heartbeat_body(request, 0)


# topic ids ----------------------------------------------------------------------------------------------------
class FakeClient:
    """The consumer's client: a refresh of named topics sees those not in ``all_only``; a refresh of every topic
    sees them all."""

    def __init__(self, topics: dict[str, uuid.UUID], all_only: set[str]) -> None:
        self.topics_by_name, self.all_only = topics, all_only
        self.refreshes: list[object] = []
        self.metadata = SimpleNamespace(topics=self._infos)
        self._seen: set[str] = set()

    def refresh_metadata(self, topics=None) -> None:
        self.refreshes.append(None if topics is None else tuple(topics))
        names = set(self.topics_by_name) if topics is None else set(topics) - self.all_only
        self._seen |= names

    def _infos(self) -> dict[str, TopicInfo]:
        return {n: TopicInfo(n, 0, {}, topic_id=str(self.topics_by_name[n])) for n in self._seen}


def test_topic_ids_are_resolved_from_the_subscribed_topics_then_from_every_topic():
    t_id, u_id = uuid.uuid4(), uuid.uuid4()
    m = manager()
    m.member.subscribe(["t"])
    client = FakeClient({"t": t_id, "u": u_id}, all_only={"u"})
    m._client = client
    assert m._resolve({t_id}) == {t_id: "t"} and client.refreshes == [("t",)]
    assert m._resolve({t_id, u_id}) == {t_id: "t", u_id: "u"} and client.refreshes[1:] == [("t",), None]


def test_unknown_topic_ids_are_asked_for_again_with_exponential_backoff():
    m = manager(retry_backoff_max_ms=50)
    join = m.member.heartbeat_request(0)
    m.member.on_heartbeat(join, heartbeat_response(1, [SimpleNamespace(topic_id=uuid.uuid4(), partitions=[0])]), 0)
    asked: list[float] = []
    m._resolve = lambda ids: asked.append(now) or {}
    for now in (0.0, 0.01, 0.021, 0.05, 0.062, 0.09, 0.113, 0.14, 0.164):  # backoff 20, 40, 50 (max), 50 ms
        m._reconcile(now)
    assert asked == [0.0, 0.021, 0.062, 0.113, 0.164]
    assert m.member.owned == () and not m.member.stable


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (KafkaClientError("connection lost", retriable=True), ("retry", ErrorCode.COORDINATOR_NOT_AVAILABLE)),
        (
            KafkaClientError("loading", error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
            ("retry", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        ),
        (KafkaClientError("bad request", error_code=ErrorCode.INVALID_REQUEST, retriable=False), ("fail", None)),
        (GroupAuthorizationFailedError(what="FindCoordinator", resource_name="g"), ("fail", None)),
    ],
)
def test_coordinator_lookup_failed_retries_or_fails_the_member(
    error: KafkaClientError, outcome: tuple[str, int | None]
) -> None:
    seen: list[tuple[str, object]] = []
    member = SimpleNamespace(
        fail=lambda e: seen.append(("fail", e)),
        on_find_coordinator=lambda code, node, now: seen.append(("retry", (code, node, now))),
    )
    coordinator_lookup_failed(member, error, 12.5)  # type: ignore[arg-type]  # records the member's calls
    kind, code = outcome
    assert seen == ([("fail", error)] if kind == "fail" else [("retry", (code, -1, 12.5))])
