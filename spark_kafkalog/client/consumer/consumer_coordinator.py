"""``ConsumerCoordinator``: the I/O around one ``GroupMember`` (``group_membership``) for a subscribing
``Consumer``: it sends what the member asks for to the group's coordinator, feeds the answers back, and
runs the heartbeat thread.

Connections: the coordinator traffic (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup) goes
through a ``KafkaClient`` of its own, so a JoinGroup that waits for a rebalance (up to the rebalance timeout,
``max.poll.interval.ms``) never holds the consumer's fetch connections, and heartbeats are not queued behind
a fetch's long poll. The leader reads partition counts through the consumer's main client.

Threads: ``ensure_active`` runs on the polling thread (``Consumer.poll``); rebalance callbacks come back
from it as ``RebalanceEvent``s, in order, before the request that follows them is sent (so a revocation
is handled, and its offsets committed, before the JoinGroup). The heartbeat thread only sends Heartbeat
(and, after ``max.poll.interval.ms`` without a poll, LeaveGroup); the member's lock orders the two threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.assignors import assignor_by_name
from spark_kafkalog.client.consumer.group_membership import (
    FindCoordinatorRequest,
    GroupMember,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    MetadataRequest,
    RebalanceEvent,
    SyncGroupRequest,
    coordinator_lookup_code,
)
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import AuthorizationError, KafkaClientError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = ["ConsumerCoordinator", "new_group_member"]

log = logging.getLogger("kafkalog.consumer")

_PROTOCOL_TYPE = "consumer"
_JOIN = API_BY_KEY[ApiKey.JOIN_GROUP].Request
_SYNC = API_BY_KEY[ApiKey.SYNC_GROUP].Request
_HEARTBEAT = API_BY_KEY[ApiKey.HEARTBEAT].Request
_LEAVE = API_BY_KEY[ApiKey.LEAVE_GROUP].Request


def new_group_member(config: ClientConfig) -> GroupMember:
    """The classic member of ``group.id`` that ``config`` describes (``config.group_id`` must be set); shared with
    the asyncio driver (``client.aio.group_coordinator``)."""
    assert config.group_id is not None
    return GroupMember(
        config.group_id,
        [assignor_by_name(name) for name in config.partition_assignment_strategy],
        session_timeout_ms=config.session_timeout_ms,
        rebalance_timeout_ms=config.max_poll_interval_ms,
        heartbeat_interval_ms=config.heartbeat_interval_ms,
        retry_backoff_ms=config.retry_backoff_ms,
        group_instance_id=config.group_instance_id,
    )


class ConsumerCoordinator:
    """Group membership of one consumer. ``partition_counts(topics)`` gives the leader the partitions of the
    group's topics (missing topics left out); ``handle_events`` runs rebalance callbacks on the polling thread."""

    def __init__(
        self,
        config: ClientConfig,
        partition_counts: Callable[[tuple[str, ...]], dict[str, int]],
        handle_events: Callable[[list[RebalanceEvent]], None],
    ) -> None:
        assert config.group_id is not None
        self.config = config
        self.group_id = config.group_id
        self.member = new_group_member(config)
        self.net = KafkaClient(config)
        self._admin = GroupAdmin(self.net)
        self._partition_counts = partition_counts
        self._handle_events = handle_events
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._heartbeat_thread: threading.Thread | None = None
        self._closed = False

    # -- the polling thread -------------------------------------------------------------------------
    def ensure_active(self, deadline: float) -> bool:
        """Drive the member until it is stable or ``deadline`` (monotonic seconds) passes; returns whether
        it is stable. Rebalance callbacks run (through ``handle_events``) before each request is sent."""
        self._start_heartbeats()
        self.member.polled(time.monotonic())
        while True:
            now = time.monotonic()
            try:
                request = self.member.next_request(now)  # raises GroupMemberFatalError
            except AuthorizationError as e:
                self.net.name_principal(e)
                raise
            self._run_events()
            if request is None:
                if self.member.stable:
                    return True
                wait = self.member.retry_in(now)
                if wait <= 0 or now + wait > deadline:
                    return self.member.stable
                time.sleep(wait)
                continue
            self._send(request)
            self._run_events()
            if time.monotonic() >= deadline and not self.member.stable:
                return False

    def _run_events(self) -> None:
        events = self.member.take_events()
        if events:
            self._handle_events(events)

    def _send(self, request: Any) -> None:
        now = time.monotonic
        try:
            if isinstance(request, FindCoordinatorRequest):
                self._find_coordinator()
            elif isinstance(request, JoinGroupRequest):
                _, response = self._call(ApiKey.JOIN_GROUP, self.join_body(request), request.rebalance_timeout_ms)
                self.member.on_join_group(response, now())
            elif isinstance(request, MetadataRequest):
                self.member.on_metadata(self._partition_counts(request.topics))
            elif isinstance(request, SyncGroupRequest):
                _, response = self._call(ApiKey.SYNC_GROUP, self.sync_body(request), self.member.rebalance_timeout_ms)
                self.member.on_sync_group(response, now())
        except AuthorizationError:
            raise  # never retried: FindCoordinator refused (no DESCRIBE on the group)
        except KafkaClientError as e:
            log.debug("group %s: %s failed: %s", self.group_id, type(request).__name__, e)
            self._admin.forget_coordinator(self.group_id)
            self.member.on_request_failed(request, now())

    def _find_coordinator(self) -> None:
        try:
            node = self._admin.coordinator(self.group_id)
        except KafkaClientError as e:
            code = coordinator_lookup_code(e)
            if code is None:
                raise
            self.member.on_find_coordinator(code, -1, time.monotonic())
            return
        self.member.on_find_coordinator(ErrorCode.NONE, node, time.monotonic())

    def _call(self, api_key: int, body: Any, wait_ms: int = 0) -> tuple[int, Any]:
        node = self.member.coordinator
        if node is None:
            raise KafkaClientError(f"group {self.group_id!r}: the coordinator is unknown", retriable=True)
        timeout_ms = self.config.request_timeout_ms + wait_ms
        return self.net.send_request(api_key, body, node_id=node, timeout_ms=timeout_ms)

    # the request bodies (pure; shared with the asyncio driver, ``client.aio.group_coordinator``)
    @staticmethod
    def join_body(r: JoinGroupRequest) -> Callable[[int], Any]:
        def build(version: int) -> Any:
            return _JOIN(
                group_id=r.group_id,
                session_timeout_ms=r.session_timeout_ms,
                rebalance_timeout_ms=r.rebalance_timeout_ms,
                member_id=r.member_id,
                group_instance_id=r.group_instance_id,
                protocol_type=_PROTOCOL_TYPE,
                protocols=[_JOIN.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in r.protocols],
            )

        return build

    @staticmethod
    def sync_body(r: SyncGroupRequest) -> Any:
        return _SYNC(
            group_id=r.group_id,
            generation_id=r.generation_id,
            member_id=r.member_id,
            group_instance_id=r.group_instance_id,
            protocol_type=_PROTOCOL_TYPE,
            protocol_name=r.protocol_name,
            assignments=[_SYNC.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in r.assignments],
        )

    # -- the heartbeat thread -----------------------------------------------------------------------
    def _start_heartbeats(self) -> None:
        if self._heartbeat_thread is None and not self._closed:
            self._heartbeat_thread = threading.Thread(
                target=self._heartbeat_loop, name=f"kafkalog-heartbeat-{self.group_id}", daemon=True
            )
            self._heartbeat_thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            request = self.member.heartbeat_request(now)
            if request is None:
                self._stop.wait(min(max(self.member.heartbeat_wait(now), 0.01), 1.0))
                continue
            if isinstance(request, LeaveGroupRequest):
                log.warning(
                    "group %s: no poll within max.poll.interval.ms (%d ms); leaving the group",
                    self.group_id,
                    self.config.max_poll_interval_ms,
                )
                self._send_leave(request)
                continue
            self._heartbeat(request)

    def _heartbeat(self, request: HeartbeatRequest) -> None:
        body = self.heartbeat_body(request)
        try:
            _, response = self._call(ApiKey.HEARTBEAT, body)
        except KafkaClientError as e:
            log.debug("group %s: heartbeat failed: %s", self.group_id, e)
            self._admin.forget_coordinator(self.group_id)
            self.member.on_request_failed(request, time.monotonic())
            return
        self.member.on_heartbeat(request, response.error_code, time.monotonic())

    @staticmethod
    def heartbeat_body(request: HeartbeatRequest) -> Any:
        return _HEARTBEAT(
            group_id=request.group_id,
            generation_id=request.generation_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
        )

    @staticmethod
    def leave_body(request: LeaveGroupRequest, version: int) -> Any:
        if version < 3:
            return _LEAVE(group_id=request.group_id, member_id=request.member_id)
        member = _LEAVE.MemberIdentity(member_id=request.member_id, group_instance_id=None, reason=request.reason)
        return _LEAVE(group_id=request.group_id, members=[member])

    def _send_leave(self, request: LeaveGroupRequest) -> None:
        try:
            self._call(ApiKey.LEAVE_GROUP, lambda version: self.leave_body(request, version))
        except KafkaClientError as e:  # the session timeout removes the member instead
            log.info("group %s: LeaveGroup failed (%s); the session timeout will remove the member", self.group_id, e)

    # -- leaving ------------------------------------------------------------------------------------
    def leave(self, reason: str = "the consumer is being closed") -> None:
        """Revoke (callbacks run here) and leave the group; a static member only gives up its partitions."""
        self.member.prepare_leave()
        self._run_events()
        request = self.member.leave(reason)
        if request is not None:
            self._send_leave(request)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join(timeout=5)
        self.net.close()
