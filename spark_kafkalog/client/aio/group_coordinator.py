"""``AsyncConsumerCoordinator``: the asyncio driver of one ``GroupMember`` (the classic group protocol) for an
``AIOConsumer``, as ``ConsumerCoordinator`` is the blocking one: it sends what the member asks for to the group's
coordinator, feeds the answers back, and runs a heartbeat task.

Connections: the coordinator traffic (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup) goes through an
``AsyncKafkaClient`` of its own, so a JoinGroup that waits for a rebalance (up to ``max.poll.interval.ms``) never
holds the consumer's fetch connections; the leader reads partition counts through the consumer's main client.

Tasks: ``ensure_active`` runs in the consumer's ``poll``; rebalance callbacks come back from it as
``RebalanceEvent``s, in order, awaited (``handle_events``) before the request that follows them is sent (so a
revocation is handled, and its offsets committed, before the JoinGroup). The heartbeat task only sends Heartbeat
(and, after ``max.poll.interval.ms`` without a poll, LeaveGroup). One event loop: the member's lock is never
contended. A ``poll`` cancelled while JoinGroup or SyncGroup is in flight, or in the callbacks before it (``asyncio.wait_for``,
a task cancelled), counts as a failed request: the next ``poll`` joins again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.consumer_coordinator import ConsumerCoordinator, new_group_member
from spark_kafkalog.client.consumer.group_membership import (
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    MetadataRequest,
    RebalanceEvent,
    SyncGroupRequest,
    coordinator_lookup_code,
)
from spark_kafkalog.client.errors import AuthorizationError, KafkaClientError
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["AsyncConsumerCoordinator", "run_heartbeats"]

log = logging.getLogger("kafkalog.consumer")

RequestKind = FindCoordinatorRequest | JoinGroupRequest | MetadataRequest | SyncGroupRequest


async def run_heartbeats(
    step: Callable[[], Awaitable[None]], running: Callable[[], bool], group_id: str, config: ClientConfig
) -> None:
    """A heartbeat task's body: ``step()`` while ``running()``; an unexpected error is logged and the task goes on
    after ``retry.backoff.ms`` (ending, it would leave the member without heartbeats and without a word)."""
    while running():
        try:
            await step()
        except Exception:
            log.exception("group %s: heartbeat task error", group_id)
            await asyncio.sleep(config.retry_backoff_ms / 1000.0)


class AsyncConsumerCoordinator:
    """Group membership of one ``AIOConsumer``. ``partition_counts(topics)`` gives the leader the partitions of the
    group's topics (missing topics left out); ``handle_events`` runs rebalance callbacks from ``ensure_active``."""

    def __init__(
        self,
        config: ClientConfig,
        partition_counts: Callable[[tuple[str, ...]], Awaitable[dict[str, int]]],
        handle_events: Callable[[list[RebalanceEvent]], Awaitable[None]],
    ) -> None:
        assert config.group_id is not None
        self.config = config
        self.group_id = config.group_id
        self.member = new_group_member(config)
        self.net = AsyncKafkaClient(None, config=config)
        self._partition_counts = partition_counts
        self._handle_events = handle_events
        self._heartbeats: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._closed = False

    # -- the polling task ---------------------------------------------------------------------------
    async def ensure_active(self, deadline: float) -> bool:
        """Drive the member until it is stable or ``deadline`` (monotonic seconds) passes; returns whether it is
        stable. Rebalance callbacks run (awaited through ``handle_events``) before each request is sent."""
        self._start_heartbeats()
        self.member.polled(time.monotonic())
        while True:
            now = time.monotonic()
            try:
                request = self.member.next_request(now)  # raises GroupMemberFatalError
            except AuthorizationError as e:
                self.net.name_principal(e)
                raise
            try:
                await self._run_events()
            except asyncio.CancelledError:  # the member counts ``request`` as sent: it must hear it failed
                if request is not None:
                    self.member.on_request_failed(request, time.monotonic())
                raise
            if request is None:
                if self.member.stable:
                    return True
                wait = self.member.retry_in(now)
                if wait <= 0 or now + wait > deadline:
                    return self.member.stable
                await asyncio.sleep(wait)
                continue
            await self._send(request)
            await self._run_events()
            if time.monotonic() >= deadline and not self.member.stable:
                return False

    async def _run_events(self) -> None:
        events = self.member.take_events()
        if events:
            await self._handle_events(events)

    async def _send(self, request: RequestKind) -> None:
        now = time.monotonic
        try:
            if isinstance(request, FindCoordinatorRequest):
                await self._find_coordinator()
            elif isinstance(request, JoinGroupRequest):
                build = ConsumerCoordinator.join_body(request)
                response = await self._call(ApiKey.JOIN_GROUP, build, request.rebalance_timeout_ms)
                self.member.on_join_group(response, now())
            elif isinstance(request, MetadataRequest):
                self.member.on_metadata(await self._partition_counts(request.topics))
            elif isinstance(request, SyncGroupRequest):
                body = ConsumerCoordinator.sync_body(request)
                response = await self._call(ApiKey.SYNC_GROUP, lambda v: body, self.member.rebalance_timeout_ms)
                self.member.on_sync_group(response, now())
        except AuthorizationError:
            raise  # never retried: FindCoordinator refused (no DESCRIBE on the group)
        except KafkaClientError as e:
            log.debug("group %s: %s failed: %s", self.group_id, type(request).__name__, e)
            self.member.on_request_failed(request, now())
        except asyncio.CancelledError:  # the poll was cancelled with the request in flight: it is sent again
            self.member.on_request_failed(request, now())
            raise

    async def _find_coordinator(self) -> None:
        try:
            node = await self.net.find_coordinator(self.group_id)
        except KafkaClientError as e:
            code = coordinator_lookup_code(e)
            if code is None:
                raise
            self.member.on_find_coordinator(code, -1, time.monotonic())
            return
        self.member.on_find_coordinator(ErrorCode.NONE, node, time.monotonic())

    async def _call(self, api_key: int, build: Callable[[int], Any], wait_ms: int = 0) -> Any:
        node = self.member.coordinator
        if node is None:
            raise KafkaClientError(f"group {self.group_id!r}: the coordinator is unknown", retriable=True)
        timeout_ms = self.config.request_timeout_ms + wait_ms
        return await self.net.send_request(node, api_key, build, timeout_ms=timeout_ms)

    # -- the heartbeat task -------------------------------------------------------------------------
    def _start_heartbeats(self) -> None:
        if self._heartbeats is None and not self._closed:
            self._heartbeats = asyncio.get_running_loop().create_task(
                self._heartbeat_loop(), name=f"kafkalog-heartbeat-{self.group_id}"
            )

    async def _heartbeat_loop(self) -> None:
        await run_heartbeats(self._heartbeat_step, lambda: not self._closed, self.group_id, self.config)

    async def _heartbeat_step(self) -> None:
        now = time.monotonic()
        request = self.member.heartbeat_request(now)
        if request is None:
            wait = min(max(self.member.heartbeat_wait(now), 0.01), 1.0)
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                pass
            self._wake.clear()
        elif isinstance(request, LeaveGroupRequest):
            log.warning(
                "group %s: no poll within max.poll.interval.ms (%d ms); leaving the group",
                self.group_id,
                self.config.max_poll_interval_ms,
            )
            await self._send_leave(request)
        else:
            await self._heartbeat(request)

    async def _heartbeat(self, request: HeartbeatRequest) -> None:
        body = ConsumerCoordinator.heartbeat_body(request)
        try:
            response = await self._call(ApiKey.HEARTBEAT, lambda v: body)
        except KafkaClientError as e:
            log.debug("group %s: heartbeat failed: %s", self.group_id, e)
            self.member.on_request_failed(request, time.monotonic())
            return
        self.member.on_heartbeat(request, response.error_code, time.monotonic())

    async def _send_leave(self, request: LeaveGroupRequest) -> None:
        try:
            await self._call(ApiKey.LEAVE_GROUP, lambda version: ConsumerCoordinator.leave_body(request, version))
        except KafkaClientError as e:  # the session timeout removes the member instead
            log.info("group %s: LeaveGroup failed (%s); the session timeout will remove the member", self.group_id, e)

    # -- leaving ------------------------------------------------------------------------------------
    async def leave(self, reason: str = "the consumer is being closed") -> None:
        """Revoke (callbacks awaited here) and leave the group; a static member only gives up its partitions."""
        self.member.prepare_leave()
        await self._run_events()
        request = self.member.leave(reason)
        if request is not None:
            await self._send_leave(request)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        task, self._heartbeats = self._heartbeats, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self.net.close()
