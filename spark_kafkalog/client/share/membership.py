"""``ShareMembership``: one share consumer's side of the share group protocol (KIP-932), as a sans-IO state machine.

The one request is ShareGroupHeartbeat (key 76, v1). The driver (``heartbeat``) asks for the heartbeat to send,
sends it and feeds the answer back; the polling thread resolves the assigned topic ids to names::

    request = member.heartbeat_request(now)      # a ShareHeartbeat when one is due, else None
    member.on_heartbeat(request, response, now)  # or on_heartbeat_failed(request, now)
    ids = member.unresolved_topic_ids()          # the polling thread: names wanted from Metadata
    member.on_topic_names({topic_id: name})
    member.assignment()                          # the partitions to fetch from now (names resolved)

States (``ShareMemberState``)::

    UNSUBSCRIBED --subscribe--> JOINING (epoch 0) --answer--> STABLE (heartbeats every interval)
    any --FENCED_MEMBER_EPOCH/UNKNOWN_MEMBER_ID--> JOINING (assignment dropped, same member id)
    any --leave()--> LEAVING --leave sent--> UNSUBSCRIBED;  any --fatal error--> FATAL

Rules, as Kafka's Java client (``ShareMembershipManager``, ``ShareHeartbeatRequestManager``):

* The member id is made by the client (``new_share_member_id``: a random type-4 UUID in Kafka's ``Uuid`` string
  form, unpadded base64url of its 16 bytes, never starting with ``-``) and kept for the consumer's life; a join is a
  heartbeat with epoch 0, a leave one with epoch -1. Share groups have no static members and no rebalance callbacks:
  an assignment applies as soon as its topic names are known.
* A heartbeat carries the subscribed topic names when they changed since the last one sent (every heartbeat after
  an error, and the join, carry them), else null; the rack (``client.rack``) goes with the join only.
* An answer with an assignment (``topic_partitions`` by topic id) is the new assignment; null keeps the last one.
  The next heartbeat is due the answer's ``heartbeat_interval_ms`` later (at once while joining).
* FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID drop the assignment and rejoin with epoch 0 (same member id; after a
  backoff when refused while joining). NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE forget the coordinator;
  COORDINATOR_LOAD_IN_PROGRESS and the other retriable codes back off (``retry.backoff.ms``);
  TOPIC_AUTHORIZATION_FAILED is raised from the next poll and the member carries on; GROUP_AUTHORIZATION_FAILED,
  UNSUPPORTED_VERSION (a broker without share groups), GROUP_ID_NOT_FOUND and INCONSISTENT_GROUP_PROTOCOL (the group
  id belongs to a group of another type), GROUP_MAX_SIZE_REACHED, INVALID_REQUEST and every other code are fatal
  (``GroupMemberFatalError``, raised from every poll). Errors of a leave heartbeat are ignored.

Thread safety: every method takes the member's lock, so the heartbeat thread and the polling thread share one member.
Times are ``time.monotonic()`` seconds passed in by the caller.
"""

from __future__ import annotations

import base64
import enum
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.client.consumer.group_membership import GroupMemberFatalError, group_member_error
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "JOIN_EPOCH",
    "LEAVE_EPOCH",
    "ShareHeartbeat",
    "ShareMemberState",
    "ShareMembership",
    "new_share_member_id",
]

JOIN_EPOCH = 0
LEAVE_EPOCH = -1

_UNSUPPORTED_HINT = (
    "the broker does not serve share groups (KIP-932, ShareGroupHeartbeat v1): it needs Kafka 4.1+ (or kafkalog) "
    "with share groups enabled"
)
_COORDINATOR_GONE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})
_FENCED = frozenset({ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})


class ShareMemberState(enum.Enum):
    UNSUBSCRIBED = "unsubscribed"
    JOINING = "joining"  # heartbeats with epoch 0 until the coordinator answers
    STABLE = "stable"
    LEAVING = "leaving"  # the leave heartbeat (epoch -1) is to be sent or in flight
    FATAL = "fatal"


_IN_GROUP = frozenset({ShareMemberState.JOINING, ShareMemberState.STABLE})


@dataclass(frozen=True)
class ShareHeartbeat:
    """One ShareGroupHeartbeat request's fields; ``None`` is "unchanged since the last heartbeat"."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None

    @property
    def leaving(self) -> bool:
        return self.member_epoch < 0


def new_share_member_id() -> str:
    """A member id as Kafka's share consumer makes it (``Uuid.randomUuid().toString()``): a random type-4 UUID as
    unpadded base64url (22 characters), never one starting with ``-`` (it would read as a command-line flag)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


class ShareMembership:
    """One member of the share group ``group_id``; see the module docstring."""

    def __init__(
        self,
        group_id: str,
        *,
        retry_backoff_ms: int = 100,
        member_id: str | None = None,
        rack_id: str | None = None,
    ) -> None:
        if not group_id:
            raise KafkaClientError("a share consumer needs a group id (group.id)", retriable=False)
        self.group_id = group_id
        self.retry_backoff_ms = retry_backoff_ms
        self.rack_id = rack_id or None
        self.member_id = member_id or new_share_member_id()
        self.epoch = JOIN_EPOCH
        self.state = ShareMemberState.UNSUBSCRIBED
        self.coordinator: int | None = None
        self.heartbeat_interval_ms = 0  # the coordinator's (group.share.heartbeat.interval.ms)
        self.subscription: tuple[str, ...] = ()
        self.fatal_error: KafkaClientError | None = None  # raised from every poll once set
        self._target: dict[uuid.UUID, tuple[int, ...]] = {}
        self._names: dict[uuid.UUID, str] = {}
        self._sent_topics: tuple[str, ...] | None = None  # what the last heartbeat carried (None: send them)
        self._heartbeat_in_flight = False
        self._next_heartbeat = 0.0
        self._retry_at = 0.0
        self._pending_error: KafkaClientError | None = None
        self._lock = threading.RLock()

    # subscription and queries -----------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str]) -> bool:
        """Subscribe to ``topics`` (names); returns whether the subscription changed. The next heartbeat carries
        it (the first one joins). An empty list is ``leave``'s business, not this method's."""
        with self._lock:
            wanted = tuple(sorted(set(topics)))
            if wanted == self.subscription and self.state is not ShareMemberState.UNSUBSCRIBED:
                return False
            self.subscription = wanted
            if self.state in (ShareMemberState.UNSUBSCRIBED, ShareMemberState.LEAVING) and wanted:
                self._join()
            else:
                self._next_heartbeat = 0.0  # tell the coordinator at once
            return True

    @property
    def in_group(self) -> bool:
        """Joined: the coordinator answered the join and the member has an epoch."""
        with self._lock:
            return self.state is ShareMemberState.STABLE

    def assignment(self) -> tuple[tuple[TopicPartition, uuid.UUID], ...]:
        """The assigned partitions whose topic names are known, each with its topic id, sorted."""
        with self._lock:
            if self.state is not ShareMemberState.STABLE:
                return ()
            out = [
                (TopicPartition(self._names[t], p), t) for t, ps in self._target.items() if t in self._names for p in ps
            ]
            return tuple(sorted(out))

    def unresolved_topic_ids(self) -> set[uuid.UUID]:
        """Topic ids of the assignment whose names are not known yet (ask Metadata, then ``on_topic_names``)."""
        with self._lock:
            return {t for t in self._target if t not in self._names}

    def on_topic_names(self, names: Mapping[uuid.UUID, str]) -> None:
        with self._lock:
            self._names.update(names)

    def take_error(self) -> KafkaClientError | None:
        """The error to raise from poll now: the fatal one (kept), else one held for the poller (taken)."""
        with self._lock:
            if self.fatal_error is not None:
                return self.fatal_error
            error, self._pending_error = self._pending_error, None
            return error

    def _join(self) -> None:
        self.state = ShareMemberState.JOINING
        self.epoch = JOIN_EPOCH
        self._sent_topics = None
        self._target = {}
        self._next_heartbeat = 0.0

    # heartbeats (the heartbeat thread) --------------------------------------------------------------
    def heartbeat_request(self, now: float) -> ShareHeartbeat | None:
        """The heartbeat to send now, or None (not due, one in flight, no coordinator, not in the group)."""
        with self._lock:
            if self.coordinator is None or self._heartbeat_in_flight or self.state not in _IN_GROUP:
                return None
            if now < self._retry_at:
                return None
            if self.state is not ShareMemberState.JOINING and now < self._next_heartbeat:
                return None
            joining = self.state is ShareMemberState.JOINING
            topics = None
            if joining or self._sent_topics != self.subscription:
                topics = self._sent_topics = self.subscription
            self._heartbeat_in_flight = True
            self._next_heartbeat = now + max(self.heartbeat_interval_ms, 0) / 1000.0
            return ShareHeartbeat(self.group_id, self.member_id, self.epoch, self.rack_id if joining else None, topics)

    def heartbeat_wait(self, now: float) -> float:
        """Seconds until ``heartbeat_request`` may have something to send (an upper bound for a sleep)."""
        with self._lock:
            if self.state is ShareMemberState.JOINING:
                return max(0.0, self._retry_at - now)
            if self.state is ShareMemberState.STABLE:
                return max(0.0, max(self._next_heartbeat, self._retry_at) - now)
            return 1.0

    def on_heartbeat(self, request: ShareHeartbeat, response: Any, now: float) -> None:
        """A ShareGroupHeartbeat response (the wire object: error_code, error_message, member_id, member_epoch,
        heartbeat_interval_ms, assignment[topic_partitions[topic_id, partitions]] or None)."""
        with self._lock:
            self._heartbeat_in_flight = False
            if request.leaving:
                self._left()
                return
            if self.state not in _IN_GROUP or request.member_epoch != self.epoch:
                return  # answers a heartbeat of a membership this member has since given up
            code = ErrorCode(response.error_code)
            if code != ErrorCode.NONE:
                self._on_error(code, getattr(response, "error_message", None), now)
                return
            self.epoch = response.member_epoch
            self.state = ShareMemberState.STABLE
            if response.heartbeat_interval_ms > 0:
                self.heartbeat_interval_ms = response.heartbeat_interval_ms
                self._next_heartbeat = now + self.heartbeat_interval_ms / 1000.0
            if response.assignment is not None:
                self._target = {
                    t.topic_id: tuple(sorted(set(t.partitions))) for t in response.assignment.topic_partitions
                }

    def on_heartbeat_failed(self, request: ShareHeartbeat, now: float) -> None:
        """The connection to the coordinator broke or timed out while ``request`` was in flight."""
        with self._lock:
            self._heartbeat_in_flight = False
            self.coordinator = None
            self._sent_topics = None
            self._retry_at = self._next_heartbeat = now + self.retry_backoff_ms / 1000.0
            if request.leaving:
                self._left()

    def on_unsupported(self, detail: str | None = None) -> None:
        """The coordinator does not serve ShareGroupHeartbeat v1 (not in ApiVersions): fatal."""
        with self._lock:
            self._heartbeat_in_flight = False
            self._fail_unsupported(detail)

    def _left(self) -> None:
        if self.state is ShareMemberState.LEAVING:
            self.state = ShareMemberState.UNSUBSCRIBED
            self.epoch = JOIN_EPOCH

    def _on_error(self, code: ErrorCode, message: str | None, now: float) -> None:
        self._sent_topics = None
        if code in _COORDINATOR_GONE:
            self.coordinator = None
            self._retry_at = self._next_heartbeat = now + self.retry_backoff_ms / 1000.0
        elif code in _FENCED:
            if self.epoch == JOIN_EPOCH:  # refused while joining: rejoin after a backoff, not in a tight loop
                self._retry_at = now + self.retry_backoff_ms / 1000.0
            self._join()
        elif code == ErrorCode.UNSUPPORTED_VERSION:
            self._fail_unsupported(message)
        elif code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            self._pending_error = error_for_code(code, "ShareGroupHeartbeat", detail=message)
            self._retry_at = now + self.retry_backoff_ms / 1000.0
        elif code.retriable:
            self._retry_at = self._next_heartbeat = now + self.retry_backoff_ms / 1000.0
        else:  # GROUP_AUTHORIZATION_FAILED included
            self._fatal(group_member_error(code, "ShareGroupHeartbeat", self.group_id, message, kind="share group"))

    def _fail_unsupported(self, detail: str | None) -> None:
        text = f"share group {self.group_id!r}: {_UNSUPPORTED_HINT}" + (f" ({detail})" if detail else "")
        self._fatal(GroupMemberFatalError(text, error_code=ErrorCode.UNSUPPORTED_VERSION, retriable=False))

    def fail(self, error: KafkaClientError) -> None:
        """The driver met an error the member cannot recover from (FindCoordinator refused): FATAL."""
        with self._lock:
            self._heartbeat_in_flight = False
            self._fatal(error)

    def _fatal(self, error: KafkaClientError) -> None:
        self.fatal_error = error
        self.state = ShareMemberState.FATAL
        self._target = {}

    # leaving and the coordinator ---------------------------------------------------------------------
    def leave(self) -> ShareHeartbeat | None:
        """Drop the subscription and the assignment; returns the leave heartbeat (epoch -1) when the member is in
        the group and its coordinator is known (send it, then ``on_heartbeat``), else None."""
        with self._lock:
            in_group = self.state in _IN_GROUP and self.coordinator is not None and self.epoch > 0
            self.subscription = ()
            self._target = {}
            if self.state is ShareMemberState.FATAL:
                return None
            if not in_group:
                self.state = ShareMemberState.UNSUBSCRIBED
                self.epoch = JOIN_EPOCH
                return None
            self.state = ShareMemberState.LEAVING
            self._heartbeat_in_flight = True
            return ShareHeartbeat(self.group_id, self.member_id, LEAVE_EPOCH)

    def wants_coordinator(self, now: float) -> bool:
        """Whether the driver should look the coordinator up now (in the group, none known, not backing off)."""
        with self._lock:
            return self.coordinator is None and self.state in _IN_GROUP and now >= self._retry_at

    def on_find_coordinator(self, error_code: int, node_id: int, now: float) -> None:
        with self._lock:
            if error_code == ErrorCode.NONE:
                self.coordinator = node_id
            else:
                self._retry_at = now + self.retry_backoff_ms / 1000.0
