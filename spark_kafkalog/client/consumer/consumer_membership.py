"""``ConsumerMembership``: one consumer's side of the consumer group protocol (KIP-848), as a sans-IO state machine.

The one request is ConsumerGroupHeartbeat (key 68). The driver (``membership_manager``) asks for the heartbeat to
send, sends it, and feeds the answer back; the polling thread resolves the assigned topic ids to names and runs the
rebalance callbacks, which come out as ``RebalanceEvent``s (the classic member's type)::

    request = member.heartbeat_request(now)      # a Heartbeat when one is due, else None
    member.on_heartbeat(request, response, now)  # or on_heartbeat_failed(request, now)
    ids = member.unresolved_topic_ids()          # the polling thread: names wanted from Metadata
    member.on_topic_names({topic_id: name})
    if member.reconcile():                       # revoked/assigned events out; owned is the new assignment
        run(member.take_events())                # callbacks (revocation commits with auto commit)
        member.complete_reconciliation()         # the next heartbeat acknowledges the new assignment

States (``MemberState``)::

    UNSUBSCRIBED --subscribe--> JOINING (epoch 0) --answer--> RECONCILING --callbacks ran--> ACKNOWLEDGING
    ACKNOWLEDGING --heartbeat with the owned partitions sent--> STABLE --new target assignment--> RECONCILING
    any --FENCED_MEMBER_EPOCH/UNKNOWN_MEMBER_ID--> FENCED (partitions lost) --callbacks ran--> JOINING
    STABLE --no poll within max.poll.interval.ms--> LEAVING_STALE --leave sent--> STALE --poll--> JOINING
    any --leave()--> LEAVING --leave sent--> UNSUBSCRIBED;  any --fatal error--> FATAL

Rules, as Kafka's Java client (``ConsumerMembershipManager``, ``ConsumerHeartbeatRequestManager``):

* The member id is made by the client (a random 16-byte id in base64url, KIP-1082) and kept for the consumer's life;
  a join is a heartbeat with epoch 0; the coordinator's answer carries the member epoch and the heartbeat interval,
  and the next heartbeat is due that interval later (at once while joining, acknowledging or leaving).
* A heartbeat carries only the fields that changed since the last one sent (all of them while joining and after any
  error): rebalance timeout (else -1), subscribed topic names, regex (v1; ``""`` drops a regex), server assignor and
  the owned partitions by topic id (null: unchanged); the rack (``client.rack``) with the join only. Group id, member
  id, epoch and instance id always go.
* An answer with an assignment is the new target. Reconciliation resolves its topic ids through Metadata (partitions
  of topics not yet known wait for a later reconciliation), revokes what is owned but no longer assigned (callback
  first; the consumer commits their positions with auto commit) and assigns what is new, then acknowledges by
  sending the owned partitions. Nothing changed: acknowledged without callbacks.
* FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID: every owned partition is lost (``on_partitions_lost``), then the member
  rejoins with epoch 0 (same member id). NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE forget the coordinator;
  COORDINATOR_LOAD_IN_PROGRESS and other retriable codes back off; TOPIC_AUTHORIZATION_FAILED is raised from the next
  poll and the member carries on; UNSUPPORTED_VERSION (a broker without the consumer protocol) and every other code
  is fatal (``GroupMemberFatalError``). Errors of a leave heartbeat are ignored.
* ``leave`` revokes the owned partitions (callbacks first) and sends epoch -1, or -2 for a static member
  (``group.instance.id``; the coordinator keeps its assignment for the session timeout).
* No poll within ``max.poll.interval.ms``: the heartbeat thread leaves the group (-1/-2); the next poll reports the
  partitions lost and rejoins with epoch 0.

Thread safety: every method takes the member's lock, so the heartbeat thread and the polling thread share one member.
Times are ``time.monotonic()`` seconds passed in by the caller.
"""

from __future__ import annotations

import base64
import enum
import os
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.client.consumer.group_membership import (
    GroupMemberFatalError,
    RebalanceEvent,
    group_member_error,
)
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "JOIN_EPOCH",
    "LEAVE_EPOCH",
    "LEAVE_STATIC_EPOCH",
    "ConsumerHeartbeat",
    "ConsumerMembership",
    "MemberState",
    "UnsupportedGroupProtocolError",
    "new_member_id",
]

JOIN_EPOCH = 0
LEAVE_EPOCH = -1  # a dynamic member leaving
LEAVE_STATIC_EPOCH = -2  # a static member leaving (its assignment is kept until its session times out)

CLASSIC_HINT = (
    'the broker does not support the consumer group protocol (KIP-848, ConsumerGroupHeartbeat); use group_protocol="classic" '
    "(group.protocol=classic) until the cluster is upgraded"
)


class UnsupportedGroupProtocolError(GroupMemberFatalError):
    """The coordinator does not serve ConsumerGroupHeartbeat (UNSUPPORTED_VERSION): use ``group_protocol="classic"``."""


class MemberState(enum.Enum):
    UNSUBSCRIBED = "unsubscribed"
    JOINING = "joining"  # heartbeats with epoch 0 (every field) until the coordinator answers
    RECONCILING = "reconciling"  # a target assignment is being applied (callbacks on the polling thread)
    ACKNOWLEDGING = "acknowledging"  # the next heartbeat, sent at once, reports the new assignment
    STABLE = "stable"
    FENCED = "fenced"  # partitions lost; rejoins once the polling thread ran the callbacks
    LEAVING = "leaving"  # the leave heartbeat is to be sent (close, unsubscribe)
    LEAVING_STALE = "leaving-stale"  # leaving because the application stopped polling
    STALE = "stale"  # left after a poll timeout; the next poll loses the partitions and rejoins
    FATAL = "fatal"


@dataclass(frozen=True)
class ConsumerHeartbeat:
    """One ConsumerGroupHeartbeat request's fields; ``None`` (``-1`` for the rebalance timeout) is "unchanged"."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: tuple[tuple[uuid.UUID, tuple[int, ...]], ...] | None = None
    rack_id: str | None = None  # client.rack, sent with the join

    @property
    def leaving(self) -> bool:
        return self.member_epoch < 0


def new_member_id() -> str:
    """A member id as Kafka's clients make them (KIP-1082): 16 random bytes in unpadded base64url."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode("ascii")


def _code(value: int) -> ErrorCode:
    return ErrorCode(value)


_COORDINATOR_GONE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})
_FENCED = frozenset({ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID})
_IN_GROUP = frozenset({MemberState.JOINING, MemberState.RECONCILING, MemberState.ACKNOWLEDGING, MemberState.STABLE})
_Assignment = dict[uuid.UUID, tuple[int, ...]]


class _SentFields:
    """What the last heartbeat carried (Java's ``SentFields``); ``reset`` makes the next one carry everything."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.rebalance_timeout_ms = -1
        self.topic_names: tuple[str, ...] | None = None
        self.regex: str | None = None
        self.server_assignor: str | None = None
        self.owned: tuple[int, tuple[tuple[uuid.UUID, tuple[int, ...]], ...]] | None = None  # (local epoch, parts)


class ConsumerMembership:
    """One member of ``group_id`` under the consumer protocol; see the module docstring."""

    def __init__(
        self,
        group_id: str,
        *,
        rebalance_timeout_ms: int = 300000,
        retry_backoff_ms: int = 100,
        group_instance_id: str | None = None,
        server_assignor: str | None = None,
        member_id: str | None = None,
        rack_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.group_instance_id = group_instance_id
        self.server_assignor = server_assignor
        self.rack_id = rack_id or None
        self.member_id = member_id or new_member_id()
        self.epoch = JOIN_EPOCH
        self.state = MemberState.UNSUBSCRIBED
        self.coordinator: int | None = None
        self.heartbeat_interval_ms = 0  # the coordinator's (group.consumer.heartbeat.interval.ms)
        self.subscription: tuple[str, ...] = ()  # topic names
        self.regex: str | None = None  # subscribed_topic_regex (resolved by the coordinator)
        self.owned: tuple[TopicPartition, ...] = ()
        self.fatal_error: KafkaClientError | None = None  # raised from every poll once set
        self._owned_ids: _Assignment = {}  # what the heartbeats report (after the callbacks ran)
        self._local_epoch = 0  # bumped per completed reconciliation: the owned partitions are sent again
        self._target: _Assignment | None = None  # the coordinator's latest assignment
        self._reconciled: tuple[_Assignment, frozenset[uuid.UUID]] | None = None  # (target, ids it resolved)
        self._in_callbacks: tuple[_Assignment, int] | None = None  # (resolved part of the target, epoch)
        self._names: dict[uuid.UUID, str] = {}
        self._ids: dict[str, uuid.UUID] = {}
        self._sent = _SentFields()
        self._events: list[RebalanceEvent] = []
        self._heartbeat_in_flight = False
        self._next_heartbeat = 0.0
        self._retry_at = 0.0
        self._last_poll: float | None = None
        self._pending_error: KafkaClientError | None = None
        self._lock = threading.RLock()

    # subscription and queries -----------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str], regex: str | None = None) -> bool:
        """Subscribe to ``topics`` and/or the topics matching ``regex`` (resolved by the coordinator); returns
        whether the subscription changed. The next heartbeat carries it (the first one joins)."""
        with self._lock:
            wanted = tuple(sorted(set(topics)))
            if (wanted, regex) == (self.subscription, self.regex) and self.state is not MemberState.UNSUBSCRIBED:
                return False
            self.subscription, self.regex = wanted, regex
            if self.state is MemberState.UNSUBSCRIBED and (wanted or regex):
                self._join()
            return True

    @property
    def stable(self) -> bool:
        """In the group with the coordinator's latest assignment reconciled (nothing left to resolve)."""
        with self._lock:
            unresolved = self._target is not None and any(t not in self._names for t in self._target)
            return self.state is MemberState.STABLE and not self._reconcile_pending() and not unresolved

    def commit_identity(self) -> tuple[int, str, str | None]:
        """(member epoch, member id, group instance id) to commit offsets with (OffsetCommit v9); epoch -1: not
        in the group (joining, fenced, left)."""
        with self._lock:
            epoch = self.epoch if self.state in _IN_GROUP and self.epoch > 0 else -1
            return epoch, self.member_id, self.group_instance_id

    def fetch_identity(self) -> tuple[str | None, int]:
        """(member id, member epoch) for OffsetFetch v9; (None, -1) outside the group (no epoch check then)."""
        with self._lock:
            if self.state in _IN_GROUP and self.epoch > 0:
                return self.member_id, self.epoch
            return None, -1

    def take_events(self) -> list[RebalanceEvent]:
        """The callbacks produced since the last call, oldest first. A fenced or stale member rejoins once its
        lost partitions have been taken (so their callback runs before anything new is assigned)."""
        with self._lock:
            events, self._events = self._events, []
            if self.state in (MemberState.FENCED, MemberState.STALE) and self.subscription + self._regex_tuple():
                self._join()
            return events

    def take_error(self) -> KafkaClientError | None:
        """An error to raise from the next poll without leaving the group (TOPIC_AUTHORIZATION_FAILED)."""
        with self._lock:
            error, self._pending_error = self._pending_error, None
            return error

    def _regex_tuple(self) -> tuple[str, ...]:
        return (self.regex,) if self.regex else ()

    def _join(self) -> None:
        self.state = MemberState.JOINING
        self.epoch = JOIN_EPOCH
        self._sent.reset()
        self._target = None
        self._reconciled = None
        self._in_callbacks = None
        self._next_heartbeat = 0.0

    # heartbeats (the heartbeat thread) --------------------------------------------------------------
    def polled(self, now: float) -> None:
        """The application called poll: restarts the ``max.poll.interval.ms`` timer; a stale member rejoins (its
        partitions reported lost first)."""
        with self._lock:
            self._last_poll = now
            if self.state is MemberState.STALE:
                self._lose_all()
                if not self._events:
                    self._join()

    def heartbeat_request(self, now: float) -> ConsumerHeartbeat | None:
        """The heartbeat to send now, or None (not due, one in flight, no coordinator, not in the group)."""
        with self._lock:
            if self.coordinator is None or self._heartbeat_in_flight or self.state is MemberState.FATAL:
                return None
            if self.state not in _IN_GROUP or now < self._retry_at:
                return None
            poll_timeout = self._last_poll is not None and now - self._last_poll > self.rebalance_timeout_ms / 1000.0
            if poll_timeout and self.state is not MemberState.JOINING:
                self.state = MemberState.LEAVING_STALE
                self._last_poll = None
                return self._leave_request()
            urgent = self.state in (MemberState.JOINING, MemberState.ACKNOWLEDGING)
            if not urgent and now < self._next_heartbeat:
                return None
            request = self._build(now)
            if self.state is MemberState.ACKNOWLEDGING:
                self.state = MemberState.STABLE if not self._reconcile_pending() else MemberState.RECONCILING
            return request

    def heartbeat_wait(self, now: float) -> float:
        """Seconds until ``heartbeat_request`` may have something to send (an upper bound for a sleep)."""
        with self._lock:
            if self.state in (MemberState.JOINING, MemberState.ACKNOWLEDGING):
                return max(0.0, self._retry_at - now)
            if self.state in _IN_GROUP:
                due = max(self._next_heartbeat, self._retry_at)
                if self._last_poll is not None:
                    due = min(due, self._last_poll + self.rebalance_timeout_ms / 1000.0)
                return max(0.0, due - now)
            return 1.0

    def _build(self, now: float) -> ConsumerHeartbeat:
        sent = self._sent
        everything = self.state is MemberState.JOINING
        rebalance_timeout = -1
        if everything or sent.rebalance_timeout_ms != self.rebalance_timeout_ms:
            rebalance_timeout = sent.rebalance_timeout_ms = self.rebalance_timeout_ms
        names = None
        if everything or sent.topic_names != self.subscription:
            names = sent.topic_names = self.subscription
        regex = None
        if (everything and self.regex is not None) or sent.regex != self.regex:
            regex = self.regex if self.regex is not None else ""
            sent.regex = self.regex
        assignor = None
        if self.server_assignor is not None and (everything or sent.server_assignor != self.server_assignor):
            assignor = sent.server_assignor = self.server_assignor
        owned = tuple(sorted(self._owned_ids.items()))
        partitions = None
        if everything or sent.owned != (self._local_epoch, owned):
            partitions = owned
            sent.owned = (self._local_epoch, owned)
        self._heartbeat_in_flight = True
        self._next_heartbeat = now + max(self.heartbeat_interval_ms, 0) / 1000.0
        return ConsumerHeartbeat(
            self.group_id,
            self.member_id,
            self.epoch,
            self.group_instance_id,
            rebalance_timeout,
            names,
            regex,
            assignor,
            partitions,
            self.rack_id if everything else None,
        )

    def _leave_request(self) -> ConsumerHeartbeat:
        self._heartbeat_in_flight = True
        epoch = LEAVE_STATIC_EPOCH if self.group_instance_id is not None else LEAVE_EPOCH
        return ConsumerHeartbeat(self.group_id, self.member_id, epoch, self.group_instance_id)

    def on_heartbeat(self, request: ConsumerHeartbeat, response: Any, now: float) -> None:
        """A ConsumerGroupHeartbeat response (the wire object: error_code, error_message, member_id, member_epoch,
        heartbeat_interval_ms, assignment[topic_partitions[topic_id, partitions]] or None)."""
        with self._lock:
            self._heartbeat_in_flight = False
            if request.leaving:
                self._left()
                return
            if self.state not in _IN_GROUP or request.member_epoch != self.epoch:
                return  # answers a heartbeat of a membership this member has since given up
            code = _code(response.error_code)
            if code != ErrorCode.NONE:
                self._on_error(code, getattr(response, "error_message", None), now)
                return
            if response.member_id:
                self.member_id = response.member_id
            self.epoch = response.member_epoch
            if response.heartbeat_interval_ms > 0:
                self.heartbeat_interval_ms = response.heartbeat_interval_ms
                self._next_heartbeat = now + self.heartbeat_interval_ms / 1000.0
            if response.assignment is not None:
                self._target = {
                    t.topic_id: tuple(sorted(set(t.partitions))) for t in response.assignment.topic_partitions
                }
            if self.state is MemberState.JOINING or self._reconcile_pending():
                if self.state is not MemberState.ACKNOWLEDGING:
                    self.state = MemberState.RECONCILING

    def on_heartbeat_failed(self, request: ConsumerHeartbeat, now: float) -> None:
        """The connection to the coordinator broke or timed out while ``request`` was in flight."""
        with self._lock:
            self._heartbeat_in_flight = False
            self.coordinator = None
            self._sent.reset()
            self._retry_at = now + self.retry_backoff_ms / 1000.0
            if request.leaving:
                self._left()

    def on_unsupported(self, detail: str | None = None) -> None:
        """The coordinator does not serve ConsumerGroupHeartbeat (no API 68 in ApiVersions): fatal."""
        with self._lock:
            self._heartbeat_in_flight = False
            self._fail_unsupported(detail)

    def _left(self) -> None:
        if self.state not in (MemberState.LEAVING, MemberState.LEAVING_STALE):
            return
        self.state = MemberState.STALE if self.state is MemberState.LEAVING_STALE else MemberState.UNSUBSCRIBED
        self.epoch = JOIN_EPOCH
        self._sent.reset()

    def _on_error(self, code: ErrorCode, message: str | None, now: float) -> None:
        self._sent.reset()
        if code in _COORDINATOR_GONE:
            self.coordinator = None
            self._retry_at = now + self.retry_backoff_ms / 1000.0
        elif code in _FENCED:
            if self.epoch == JOIN_EPOCH:  # refused while joining: rejoin after a backoff, not in a tight loop
                self._retry_at = now + self.retry_backoff_ms / 1000.0
            self._fence()
        elif code == ErrorCode.UNSUPPORTED_VERSION:
            self._fail_unsupported(message)
        elif code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            self._pending_error = error_for_code(code, "ConsumerGroupHeartbeat", detail=message)
            self._retry_at = now + self.retry_backoff_ms / 1000.0
        elif code.retriable:
            self._retry_at = now + self.retry_backoff_ms / 1000.0
        else:  # GROUP_AUTHORIZATION_FAILED included
            self._fatal(group_member_error(code, "ConsumerGroupHeartbeat", self.group_id, message))

    def _fail_unsupported(self, detail: str | None) -> None:
        text = f"group {self.group_id!r}: {CLASSIC_HINT}" + (f" ({detail})" if detail else "")
        self._fatal(UnsupportedGroupProtocolError(text, error_code=ErrorCode.UNSUPPORTED_VERSION, retriable=False))

    def fail(self, error: KafkaClientError) -> None:
        """The driver met an error the member cannot recover from (FindCoordinator refused, a regex subscription
        the coordinator cannot take): FATAL, and ``error`` is raised from every poll."""
        with self._lock:
            self._heartbeat_in_flight = False
            self._fatal(error)

    def _fatal(self, error: KafkaClientError) -> None:
        self.fatal_error = error
        self.state = MemberState.FATAL

    def _fence(self) -> None:
        """Every owned partition is lost; the member rejoins with epoch 0 once the callbacks ran."""
        self._lose_all()
        self.epoch = JOIN_EPOCH
        self.state = MemberState.FENCED
        self._target = None
        self._reconciled = None
        self._in_callbacks = None
        if not self._events:
            self._join()

    def _lose_all(self) -> None:
        if self.owned:
            self._events.append(RebalanceEvent("lost", self.owned))
        self.owned = ()
        self._owned_ids = {}
        self._local_epoch += 1

    # reconciliation (the polling thread) --------------------------------------------------------------
    def _reconcile_pending(self) -> bool:
        if self._target is None or self._in_callbacks is not None:
            return self._in_callbacks is not None
        if self._reconciled is None or self._reconciled[0] != self._target:
            return True
        return any(t in self._names for t in self._target if t not in self._reconciled[1])

    def unresolved_topic_ids(self) -> set[uuid.UUID]:
        """Topic ids of the target assignment whose names are not known yet (ask Metadata, then
        ``on_topic_names``)."""
        with self._lock:
            if self._target is None:
                return set()
            return {t for t in self._target if t not in self._names}

    def on_topic_names(self, names: Mapping[uuid.UUID, str]) -> None:
        with self._lock:
            for topic_id, name in names.items():
                self._names[topic_id] = name
                self._ids[name] = topic_id

    def reconcile(self) -> bool:
        """Apply the target assignment's resolved part: revoked and assigned events out (take them with
        ``take_events`` and run them), ``owned`` becomes the new assignment. Returns whether callbacks are to run
        (then call ``complete_reconciliation`` after them); an unchanged assignment is acknowledged at once."""
        with self._lock:
            reconcilable = (MemberState.RECONCILING, MemberState.ACKNOWLEDGING, MemberState.STABLE)
            if self.state not in reconcilable or self._target is None or self._in_callbacks is not None:
                return False
            if not self._reconcile_pending():
                return False
            target = dict(self._target)
            resolved = {t: ps for t, ps in target.items() if t in self._names}
            self._reconciled = (target, frozenset(resolved))
            assigned = tuple(sorted(TopicPartition(self._names[t], p) for t, ps in resolved.items() for p in ps))
            revoked = tuple(tp for tp in self.owned if tp not in set(assigned))
            added = tuple(tp for tp in assigned if tp not in set(self.owned))
            self._in_callbacks = (resolved, self.epoch)
            if not revoked and not added:
                self._finish()
                return False
            if revoked:
                self._events.append(RebalanceEvent("revoked", revoked))
            self.owned = assigned
            self._events.append(RebalanceEvent("assigned", added))
            return True

    def complete_reconciliation(self) -> None:
        """The callbacks of the last ``reconcile`` ran: the next heartbeat (sent at once) reports the owned
        partitions. Discarded when the member was fenced or left meanwhile."""
        with self._lock:
            self._finish()

    def _finish(self) -> None:
        if self._in_callbacks is None:
            return
        resolved, epoch = self._in_callbacks
        self._in_callbacks = None
        if self.state not in _IN_GROUP or self.state is MemberState.JOINING or epoch > self.epoch:
            return
        self._owned_ids = {t: ps for t, ps in resolved.items() if ps}
        self._local_epoch += 1
        self.state = MemberState.ACKNOWLEDGING

    # leaving ----------------------------------------------------------------------------------------
    def prepare_leave(self) -> None:
        """Revoke everything owned while the epoch is still valid, so the callbacks (taken with ``take_events``)
        can still commit; ``leave`` follows."""
        with self._lock:
            if self.state in _IN_GROUP and self.owned:
                self._events.append(RebalanceEvent("revoked", self.owned))
            elif self.owned:
                self._events.append(RebalanceEvent("lost", self.owned))
            self.owned = ()

    def leave(self) -> ConsumerHeartbeat | None:
        """Give up the assignment (as ``prepare_leave``) and return the leave heartbeat (epoch -1, -2 for a static
        member) when the member is in the group and its coordinator is known; the member is unsubscribed after."""
        self.prepare_leave()
        with self._lock:
            in_group = self.state in _IN_GROUP and self.coordinator is not None
            self.subscription, self.regex = (), None
            self._owned_ids = {}
            self._target = None
            self._reconciled = None
            self._in_callbacks = None
            if self.state is MemberState.FATAL:
                return None
            if not in_group:
                self.state = MemberState.UNSUBSCRIBED
                self.epoch = JOIN_EPOCH
                return None
            self.state = MemberState.LEAVING
            self._heartbeat_in_flight = True
            epoch = LEAVE_STATIC_EPOCH if self.group_instance_id is not None else LEAVE_EPOCH
            return ConsumerHeartbeat(self.group_id, self.member_id, epoch, self.group_instance_id)

    def wants_coordinator(self, now: float) -> bool:
        """Whether the driver should look the coordinator up now (in the group, none known, not backing off)."""
        with self._lock:
            return (
                self.coordinator is None
                and self.state in _IN_GROUP | {MemberState.LEAVING, MemberState.LEAVING_STALE}
                and now >= self._retry_at
            )

    def on_find_coordinator(self, error_code: int, node_id: int, now: float) -> None:
        with self._lock:
            if error_code == ErrorCode.NONE:
                self.coordinator = node_id
            else:
                self._retry_at = now + self.retry_backoff_ms / 1000.0
