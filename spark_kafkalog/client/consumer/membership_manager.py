"""``MembershipManager``: the I/O around one ``ConsumerMembership`` (``consumer_membership``) for a ``Consumer`` with
``group.protocol=consumer`` (KIP-848): the heartbeat thread, topic id resolution, and commits as a member.

Connections: FindCoordinator and ConsumerGroupHeartbeat (key 68, v0-1; a regex subscription needs v1) go through a
``KafkaClient`` of the manager's own, so heartbeats never queue behind a fetch's long poll. Topic ids of an
assignment are resolved with Metadata (v10+) through the consumer's main client: the subscribed topics first, every
topic when that did not name them all (a regex subscription, a topic created meanwhile); ids still unknown are asked
for again with exponential backoff from ``retry.backoff.ms`` to ``retry.backoff.max.ms``.

Threads: the heartbeat thread finds the coordinator and sends every heartbeat (the join with epoch 0 included), at
the interval the coordinator returns, at once while joining or acknowledging. ``ensure_active`` runs on the polling
thread (``Consumer.poll``): it reconciles the coordinator's assignment, running the rebalance callbacks (revocation
first, with the auto commit of their positions) before the acknowledging heartbeat is sent, and raises the member's
fatal error. ``leave`` (close, unsubscribe) runs the revocation callbacks, stops the heartbeat thread and sends the
leave heartbeat (epoch -1; -2 for a static member) from the calling thread.

Offsets: ``commit_offsets`` sends OffsetCommit with the member id and epoch (v9 semantics); STALE_MEMBER_EPOCH is
retried with the member's next epoch (the heartbeat thread brings it) until ``default.api.timeout.ms``, as Kafka's
client; UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH and an epoch that never moved raise ``CommitFailedError``.
``fetch_committed`` sends OffsetFetch v9 with the member id and epoch, retried the same way on STALE_MEMBER_EPOCH and
UNKNOWN_MEMBER_ID.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from spark_kafkalog.client.admin.group_admin import GroupAdmin, OffsetAndMetadata
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.consumer_membership import ConsumerHeartbeat, ConsumerMembership, MemberState
from spark_kafkalog.client.consumer.group_membership import (
    CommitFailedError,
    GroupMemberFatalError,
    RebalanceEvent,
    coordinator_lookup_failed,
)
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import AuthorizationError, KafkaClientError, NoCommonVersionError
from spark_kafkalog.client.metadata import MetadataCache
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = [
    "EPOCH_COMMIT_FAILED",
    "EPOCH_FETCH_RETRY",
    "MembershipManager",
    "RegexNeedsV1",
    "coordinator_lookup_failed",
    "epoch_refused",
    "heartbeat_body",
    "identity_moved",
    "known_topic_ids",
    "new_membership",
    "next_resolve",
    "not_in_group",
    "pending_error",
]

log = logging.getLogger("kafkalog.consumer")

_HEARTBEAT = API_BY_KEY[ApiKey.CONSUMER_GROUP_HEARTBEAT].Request
_REGEX_FROM = 1  # ConsumerGroupHeartbeat v1 adds subscribed_topic_regex
EPOCH_COMMIT_FAILED = frozenset(
    {
        ErrorCode.STALE_MEMBER_EPOCH,
        ErrorCode.FENCED_MEMBER_EPOCH,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.REBALANCE_IN_PROGRESS,
    }
)
EPOCH_FETCH_RETRY = frozenset({ErrorCode.STALE_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})
_WAIT_STEP = 0.05  # seconds between looks at the member while waiting for the heartbeat thread


class RegexNeedsV1(KafkaClientError):
    """The coordinator serves ConsumerGroupHeartbeat v0 only, which has no subscribed_topic_regex."""


class MembershipManager:
    """Group membership of one consumer under the consumer protocol; ``client`` is the consumer's main client
    (Metadata for topic ids), ``handle_events`` runs rebalance callbacks on the polling thread."""

    def __init__(
        self,
        config: ClientConfig,
        client: KafkaClient,
        handle_events: Callable[[list[RebalanceEvent]], None],
    ) -> None:
        assert config.group_id is not None
        self.config = config
        self.group_id = config.group_id
        self.member = new_membership(config)
        self.net = KafkaClient(config)
        self._admin = GroupAdmin(self.net)
        self._client = client
        self._handle_events = handle_events
        self._stop = threading.Event()
        self._wake = threading.Event()  # the heartbeat thread: something may be due now
        self._changed = threading.Event()  # the polling thread: a heartbeat was answered
        self._thread: threading.Thread | None = None
        self._next_resolve = 0.0
        self._resolve_misses = 0  # Metadata rounds in a row that left assigned topic ids unknown (backoff)
        self._closed = False

    # -- the polling thread -------------------------------------------------------------------------
    def ensure_active(self, deadline: float) -> bool:
        """Reconcile the coordinator's assignment (callbacks run here) until the member is stable or ``deadline``
        (monotonic seconds) passes; returns whether it is stable. Raises the member's fatal error."""
        self._start()
        self.member.polled(time.monotonic())
        self._wake.set()
        while True:
            self._raise_errors()
            self._run_events()  # partitions lost (fenced, poll timeout): the member rejoins after these
            self._reconcile(time.monotonic())
            if self.member.stable:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._changed.wait(min(remaining, _WAIT_STEP))
            self._changed.clear()

    def _raise_errors(self) -> None:
        error = pending_error(self.member)
        if error is not None:
            self.net.name_principal(error)
            raise error

    def _run_events(self) -> None:
        events = self.member.take_events()
        if events:
            self._handle_events(events)
            self._wake.set()  # a fenced or stale member may rejoin now

    def _reconcile(self, now: float) -> None:
        ids = self.member.unresolved_topic_ids()
        if ids and now >= self._next_resolve:
            names = self._resolve(ids)
            self.member.on_topic_names(names)
            self._resolve_misses, self._next_resolve = next_resolve(self.config, self._resolve_misses, ids, names, now)
        if self.member.reconcile():
            try:
                self._run_events()
            finally:
                self.member.complete_reconciliation()
        if self.member.state is MemberState.ACKNOWLEDGING:
            self._wake.set()

    def _resolve(self, ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
        """Names of ``ids`` from Metadata: the subscribed topics first, then every topic."""
        try:
            if self.member.subscription and self.member.regex is None:
                self._client.refresh_metadata(self.member.subscription)
            found = self._known_ids(ids)
            if len(found) < len(ids):
                self._client.refresh_metadata(None)
                found = self._known_ids(ids)
        except AuthorizationError:
            raise
        except KafkaClientError as e:
            log.debug("group %s: Metadata for assigned topic ids failed: %s", self.group_id, e)
            return {}
        return found

    def _known_ids(self, ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
        return known_topic_ids(self._client.metadata, ids)

    # -- offsets as a member --------------------------------------------------------------------------
    def commit_offsets(self, groups: GroupAdmin, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        """OffsetCommit as this member (see the module docstring); raises ``CommitFailedError`` when the member is
        not in the group or the coordinator refused its epoch for good."""
        deadline = time.monotonic() + self.config.default_api_timeout_ms / 1000.0
        while True:
            epoch, member_id, instance_id = self.member.commit_identity()
            if epoch < 0:
                raise not_in_group(self.group_id)
            try:
                groups.commit_offsets(
                    self.group_id, offsets, generation=epoch, member_id=member_id, group_instance_id=instance_id
                )
                return
            except KafkaClientError as e:
                if e.error_code not in EPOCH_COMMIT_FAILED:
                    raise
                if e.error_code == ErrorCode.STALE_MEMBER_EPOCH and self._identity_moves(epoch, member_id, deadline):
                    continue
                raise epoch_refused(self.group_id, epoch, e.error_code) from e

    def fetch_committed(
        self, groups: GroupAdmin, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """OffsetFetch v9 as this member (outside the group: without member id and epoch)."""
        deadline = time.monotonic() + self.config.default_api_timeout_ms / 1000.0
        while True:
            member_id, epoch = self.member.fetch_identity()
            try:
                return groups.list_group_offsets(self.group_id, partitions, member_id=member_id, member_epoch=epoch)
            except KafkaClientError as e:
                if e.error_code in EPOCH_FETCH_RETRY and self._identity_moves(epoch, member_id or "", deadline):
                    continue
                raise

    def _identity_moves(self, epoch: int, member_id: str, deadline: float) -> bool:
        """Wait (up to ``deadline``) for the heartbeat thread to give the member another epoch or id."""
        self._wake.set()
        while time.monotonic() < deadline:
            moved = identity_moved(self.member, epoch, member_id)
            if moved is not None:
                return moved
            time.sleep(_WAIT_STEP)
        return False

    # -- the heartbeat thread -----------------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._heartbeat_loop, name=f"kafkalog-heartbeat-{self.group_id}", daemon=True
            )
            self._thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            if self.member.wants_coordinator(now):
                self._find_coordinator()
                continue
            request = self.member.heartbeat_request(now)
            if request is None:
                self._wake.wait(min(max(self.member.heartbeat_wait(now), 0.01), 1.0))
                self._wake.clear()
                continue
            if request.leaving:
                log.warning(
                    "group %s: no poll within max.poll.interval.ms (%d ms); leaving the group",
                    self.group_id,
                    self.config.max_poll_interval_ms,
                )
            self._send(request)
            self._changed.set()

    def _find_coordinator(self) -> None:
        try:
            node = self._admin.coordinator(self.group_id)
        except KafkaClientError as e:
            coordinator_lookup_failed(self.member, e, time.monotonic())
            return
        self.member.on_find_coordinator(ErrorCode.NONE, node, time.monotonic())

    def _send(self, request: ConsumerHeartbeat) -> None:
        node = self.member.coordinator
        try:
            if node is None:
                raise KafkaClientError(f"group {self.group_id!r}: the coordinator is unknown", retriable=True)
            _, response = self.net.send_request(
                ApiKey.CONSUMER_GROUP_HEARTBEAT,
                lambda version: heartbeat_body(request, version),
                node_id=node,
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
            self._admin.forget_coordinator(self.group_id)
            self.member.on_heartbeat_failed(request, time.monotonic())
            return
        if response.error_code in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE):
            self._admin.forget_coordinator(self.group_id)
        self.member.on_heartbeat(request, response, time.monotonic())

    # -- leaving ------------------------------------------------------------------------------------
    def leave(self, reason: str = "the consumer is being closed") -> None:
        """Revoke (callbacks run here), stop heartbeating and send the leave heartbeat (epoch -1, -2 static)."""
        self.member.prepare_leave()
        self._run_events()
        self._stop_heartbeats()
        request = self.member.leave()
        if request is not None:
            log.debug("group %s: leaving (%s)", self.group_id, reason)
            self._send(request)

    def _stop_heartbeats(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop_heartbeats()
        self.net.close()


# the pure parts, shared with the asyncio driver (``client.aio.membership``) ------------------------------------
def new_membership(config: ClientConfig) -> ConsumerMembership:
    """The member of ``group.id`` that ``config`` describes (``config.group_id`` must be set)."""
    assert config.group_id is not None
    return ConsumerMembership(
        config.group_id,
        rebalance_timeout_ms=config.max_poll_interval_ms,
        retry_backoff_ms=config.retry_backoff_ms,
        group_instance_id=config.group_instance_id,
        server_assignor=config.group_remote_assignor,
        rack_id=config.client_rack or None,
    )


def next_resolve(
    config: ClientConfig, misses: int, ids: set[uuid.UUID], names: Mapping[uuid.UUID, str], now: float
) -> tuple[int, float]:
    """After a Metadata round that found ``names`` of the assigned topic ``ids``: (rounds in a row that left some
    unknown, monotonic time of the next round) - at once when all were found, else after a backoff doubling from
    ``retry.backoff.ms`` up to ``retry.backoff.max.ms``."""
    misses = misses + 1 if len(names) < len(ids) else 0
    backoff_ms = min(config.retry_backoff_ms * 2 ** min(misses, 16), config.retry_backoff_max_ms)
    return misses, now + backoff_ms / 1000.0 if misses else 0.0


def pending_error(member: ConsumerMembership) -> KafkaClientError | None:
    """The error ``ensure_active`` raises now: the member's fatal error, else the one it holds for the poller
    (taken), else None."""
    error = member.fatal_error
    if error is None:
        error = member.take_error()
    return error


def identity_moved(member: ConsumerMembership, epoch: int, member_id: str) -> bool | None:
    """While a commit or fetch as (``epoch``, ``member_id``) waits for a new identity: True when the member has
    another epoch or id (and is in the group), False when it never will (fatal error, unsubscribed), None to wait."""
    now_epoch, now_id, _ = member.commit_identity()
    if (now_epoch, now_id) != (epoch, member_id) and now_epoch != -1:
        return True
    if member.fatal_error is not None or member.state is MemberState.UNSUBSCRIBED:
        return False
    return None


def not_in_group(group_id: str) -> CommitFailedError:
    """A commit while the member has no epoch (joining, fenced or left)."""
    return CommitFailedError(
        f"group {group_id!r}: this consumer is not in the group now (joining, fenced or left); "
        "poll() to rejoin, then commit the positions of the partitions it owns then",
        error_code=ErrorCode.UNKNOWN_MEMBER_ID,
        retriable=False,
    )


def epoch_refused(group_id: str, epoch: int, error_code: int) -> CommitFailedError:
    """A commit as member ``epoch`` refused with one of ``EPOCH_COMMIT_FAILED`` for good."""
    return CommitFailedError(
        f"group {group_id!r}: the commit as member epoch {epoch} failed ({ErrorCode(error_code).name}); the group "
        "moved on and the partitions may be assigned to another member now",
        error_code=error_code,
        retriable=False,
    )


def known_topic_ids(metadata: MetadataCache, ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The names ``metadata`` knows of the topic ``ids`` (Metadata v10+ carries them)."""
    found = {}
    for name, info in metadata.topics().items():
        if info.topic_id is not None and uuid.UUID(info.topic_id) in ids:
            found[uuid.UUID(info.topic_id)] = name
    return found


def heartbeat_body(request: ConsumerHeartbeat, version: int) -> Any:
    """The ConsumerGroupHeartbeat request of ``request`` at ``version``."""
    fields: dict[str, Any] = {}
    if request.subscribed_topic_regex is not None:
        if version < _REGEX_FROM:
            raise RegexNeedsV1(
                f"group {request.group_id!r}: a regex subscription (subscribed_topic_regex) needs "
                f"ConsumerGroupHeartbeat v1 (Kafka 4.0+); the coordinator serves v{version}: subscribe to topic names",
                retriable=False,
            )
        fields["subscribed_topic_regex"] = request.subscribed_topic_regex
    partitions = None
    if request.topic_partitions is not None:
        partitions = [
            _HEARTBEAT.TopicPartitions(topic_id=topic_id, partitions=list(ps))
            for topic_id, ps in request.topic_partitions
        ]
    return _HEARTBEAT(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=None if request.subscribed_topic_names is None else list(request.subscribed_topic_names),
        server_assignor=request.server_assignor,
        topic_partitions=partitions,
        **fields,
    )
