"""``AsyncMembershipManager``: the asyncio driver of one ``ConsumerMembership`` (KIP-848, ``group.protocol=consumer``)
for an ``AIOConsumer``, as ``MembershipManager`` is the blocking one: a heartbeat task, topic id resolution, and
commits as a member.

Connections: FindCoordinator and ConsumerGroupHeartbeat (key 68, v0-1; a regex subscription needs v1) go through an
``AsyncKafkaClient`` of the manager's own; topic ids of an assignment are resolved with Metadata through the
consumer's main client (the subscribed topics first, every topic when that did not name them all), ids still
unknown asked for again with exponential backoff from ``retry.backoff.ms`` to ``retry.backoff.max.ms``.

Tasks: the heartbeat task finds the coordinator and sends every heartbeat (the join with epoch 0 included), at the
interval the coordinator returns, at once while joining or acknowledging. ``ensure_active`` runs in the consumer's
``poll``: it reconciles the coordinator's assignment, awaiting the rebalance callbacks (revocation first, with the
auto commit of their positions) before the acknowledging heartbeat is sent, and raises the member's fatal error.
``leave`` (close, unsubscribe) runs the revocation callbacks, stops the heartbeat task and sends the leave heartbeat
(epoch -1; -2 for a static member).

Offsets: ``commit_offsets`` sends OffsetCommit with the member id and epoch; STALE_MEMBER_EPOCH is retried with the
member's next epoch (the heartbeat task brings it) until ``default.api.timeout.ms``; UNKNOWN_MEMBER_ID,
FENCED_MEMBER_EPOCH and an epoch that never moved raise ``CommitFailedError``. ``fetch_committed`` sends OffsetFetch
v9 as the member, retried the same way on STALE_MEMBER_EPOCH and UNKNOWN_MEMBER_ID.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping

from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.aio.group_calls import AsyncGroupCalls
from spark_kafkalog.client.aio.group_coordinator import run_heartbeats
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.consumer_membership import ConsumerHeartbeat, MemberState
from spark_kafkalog.client.consumer.group_membership import (
    GroupMemberFatalError,
    RebalanceEvent,
)
from spark_kafkalog.client.consumer.membership_manager import (
    EPOCH_COMMIT_FAILED,
    EPOCH_FETCH_RETRY,
    RegexNeedsV1,
    coordinator_lookup_failed,
    epoch_refused,
    heartbeat_body,
    identity_moved,
    known_topic_ids,
    new_membership,
    next_resolve,
    not_in_group,
    pending_error,
)
from spark_kafkalog.client.errors import AuthorizationError, KafkaClientError, NoCommonVersionError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["AsyncMembershipManager"]

log = logging.getLogger("kafkalog.consumer")

_WAIT_STEP = 0.05  # seconds between looks at the member while waiting for the heartbeat task


class AsyncMembershipManager:
    """Group membership of one ``AIOConsumer`` under the consumer protocol; ``client`` is the consumer's main client
    (Metadata for topic ids), ``handle_events`` awaits the rebalance callbacks."""

    def __init__(
        self,
        config: ClientConfig,
        client: AsyncKafkaClient,
        handle_events: Callable[[list[RebalanceEvent]], Awaitable[None]],
    ) -> None:
        assert config.group_id is not None
        self.config = config
        self.group_id = config.group_id
        self.member = new_membership(config)
        self.net = AsyncKafkaClient(None, config=config)
        self._client = client
        self._handle_events = handle_events
        self._wake = asyncio.Event()  # the heartbeat task: something may be due now
        self._changed = asyncio.Event()  # the polling side: a heartbeat was answered
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._next_resolve = 0.0
        self._resolve_misses = 0
        self._closed = False

    # -- the polling side ---------------------------------------------------------------------------
    async def ensure_active(self, deadline: float) -> bool:
        """Reconcile the coordinator's assignment (callbacks awaited here) until the member is stable or ``deadline``
        (monotonic seconds) passes; returns whether it is stable. Raises the member's fatal error."""
        self._start()
        self.member.polled(time.monotonic())
        self._wake.set()
        while True:
            self._raise_errors()
            await self._run_events()
            await self._reconcile(time.monotonic())
            if self.member.stable:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                await asyncio.wait_for(self._changed.wait(), min(remaining, _WAIT_STEP))
            except TimeoutError:
                pass
            self._changed.clear()

    def _raise_errors(self) -> None:
        error = pending_error(self.member)
        if error is not None:
            self.net.name_principal(error)
            raise error

    async def _run_events(self) -> None:
        events = self.member.take_events()
        if events:
            await self._handle_events(events)
            self._wake.set()

    async def _reconcile(self, now: float) -> None:
        ids = self.member.unresolved_topic_ids()
        if ids and now >= self._next_resolve:
            names = await self._resolve(ids)
            self.member.on_topic_names(names)
            self._resolve_misses, self._next_resolve = next_resolve(self.config, self._resolve_misses, ids, names, now)
        if self.member.reconcile():
            try:
                await self._run_events()
            finally:
                self.member.complete_reconciliation()
        if self.member.state is MemberState.ACKNOWLEDGING:
            self._wake.set()

    async def _resolve(self, ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
        try:
            if self.member.subscription and self.member.regex is None:
                await self._client.refresh_metadata(self.member.subscription)
            found = known_topic_ids(self._client.metadata, ids)
            if len(found) < len(ids):
                await self._client.refresh_metadata(None)
                found = known_topic_ids(self._client.metadata, ids)
        except AuthorizationError:
            raise
        except KafkaClientError as e:
            log.debug("group %s: Metadata for assigned topic ids failed: %s", self.group_id, e)
            return {}
        return found

    # -- offsets as a member --------------------------------------------------------------------------
    async def commit_offsets(
        self, groups: AsyncGroupCalls, offsets: Mapping[TopicPartition, OffsetAndMetadata]
    ) -> None:
        """OffsetCommit as this member (see the module docstring)."""
        deadline = time.monotonic() + self.config.default_api_timeout_ms / 1000.0
        while True:
            epoch, member_id, instance_id = self.member.commit_identity()
            if epoch < 0:
                raise not_in_group(self.group_id)
            try:
                await groups.commit_offsets(
                    self.group_id, offsets, generation=epoch, member_id=member_id, group_instance_id=instance_id
                )
                return
            except KafkaClientError as e:
                if e.error_code not in EPOCH_COMMIT_FAILED:
                    raise
                if e.error_code == ErrorCode.STALE_MEMBER_EPOCH and await self._identity_moves(
                    epoch, member_id, deadline
                ):
                    continue
                raise epoch_refused(self.group_id, epoch, e.error_code) from e

    async def fetch_committed(
        self, groups: AsyncGroupCalls, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """OffsetFetch v9 as this member (outside the group: without member id and epoch)."""
        deadline = time.monotonic() + self.config.default_api_timeout_ms / 1000.0
        while True:
            member_id, epoch = self.member.fetch_identity()
            try:
                return await groups.list_group_offsets(
                    self.group_id, partitions, member_id=member_id, member_epoch=epoch
                )
            except KafkaClientError as e:
                if e.error_code in EPOCH_FETCH_RETRY and await self._identity_moves(epoch, member_id or "", deadline):
                    continue
                raise

    async def _identity_moves(self, epoch: int, member_id: str, deadline: float) -> bool:
        """Wait (up to ``deadline``) for the heartbeat task to give the member another epoch or id."""
        self._wake.set()
        while time.monotonic() < deadline:
            moved = identity_moved(self.member, epoch, member_id)
            if moved is not None:
                return moved
            await asyncio.sleep(_WAIT_STEP)
        return False

    # -- the heartbeat task -------------------------------------------------------------------------
    def _start(self) -> None:
        if self._task is None and not self._closed and not self._stopping:
            self._task = asyncio.get_running_loop().create_task(
                self._heartbeat_loop(), name=f"kafkalog-heartbeat-{self.group_id}"
            )

    async def _heartbeat_loop(self) -> None:
        await run_heartbeats(self._heartbeat_step, lambda: not self._stopping, self.group_id, self.config)

    async def _heartbeat_step(self) -> None:
        now = time.monotonic()
        if self.member.wants_coordinator(now):
            await self._find_coordinator()
            return
        request = self.member.heartbeat_request(now)
        if request is None:
            try:
                await asyncio.wait_for(self._wake.wait(), min(max(self.member.heartbeat_wait(now), 0.01), 1.0))
            except TimeoutError:
                pass
            self._wake.clear()
            return
        if request.leaving:
            log.warning(
                "group %s: no poll within max.poll.interval.ms (%d ms); leaving the group",
                self.group_id,
                self.config.max_poll_interval_ms,
            )
        await self._send(request)
        self._changed.set()

    async def _find_coordinator(self) -> None:
        try:
            node = await self.net.find_coordinator(self.group_id)
        except KafkaClientError as e:
            coordinator_lookup_failed(self.member, e, time.monotonic())
            return
        self.member.on_find_coordinator(ErrorCode.NONE, node, time.monotonic())

    async def _send(self, request: ConsumerHeartbeat) -> None:
        node = self.member.coordinator
        try:
            if node is None:
                raise KafkaClientError(f"group {self.group_id!r}: the coordinator is unknown", retriable=True)
            response = await self.net.send_request(
                node,
                ApiKey.CONSUMER_GROUP_HEARTBEAT,
                lambda version: heartbeat_body(request, version),
                timeout_ms=self.config.request_timeout_ms,
            )
        except NoCommonVersionError as e:
            self.member.on_unsupported(str(e))
            return
        except RegexNeedsV1 as e:
            self.member.fail(GroupMemberFatalError(str(e), error_code=ErrorCode.UNSUPPORTED_VERSION, retriable=False))
            return
        except KafkaClientError as e:
            log.debug("group %s: ConsumerGroupHeartbeat failed: %s", self.group_id, e)
            self.member.on_heartbeat_failed(request, time.monotonic())
            return
        self.member.on_heartbeat(request, response, time.monotonic())

    # -- leaving ------------------------------------------------------------------------------------
    async def leave(self, reason: str = "the consumer is being closed") -> None:
        """Revoke (callbacks awaited here), stop heartbeating and send the leave heartbeat (epoch -1, -2 static)."""
        self.member.prepare_leave()
        await self._run_events()
        await self._stop_heartbeats()
        request = self.member.leave()
        if request is not None:
            log.debug("group %s: leaving (%s)", self.group_id, reason)
            await self._send(request)

    async def _stop_heartbeats(self) -> None:
        self._stopping = True
        self._wake.set()
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            try:  # as the blocking driver joins its thread: a heartbeat in flight is answered first
                await asyncio.wait_for(asyncio.shield(task), 5)
            except TimeoutError:
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._stop_heartbeats()
        await self.net.close()
