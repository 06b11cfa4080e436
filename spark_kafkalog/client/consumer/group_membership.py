"""``GroupMember``: one consumer's side of Kafka's classic group protocol, as a sans-IO state machine.

The driver (``Consumer.poll`` and the heartbeat thread) asks what to send, sends it, and feeds the answer
back; rebalance callbacks come out as ``RebalanceEvent``s for the polling thread to run::

    request = member.next_request(now)        # FindCoordinator, JoinGroup, Metadata, SyncGroup or None
    events = member.take_events()             # revoked / assigned / lost, to run before sending
    member.on_join_group(response, now)       # ... one on_* per request kind
    member.heartbeat_request(now)             # the heartbeat thread: Heartbeat (or LeaveGroup) when due

States (``MemberState``)::

    UNJOINED --JoinGroup sent--> JOINING --answer, follower--> SYNCING --SyncGroup sent--> AWAITING_SYNC
                                         \\--answer, leader--> ASSIGNING (wants Metadata of every member's
                                              topics) --on_metadata--> SYNCING (the leader's assignment)
    AWAITING_SYNC --answer--> STABLE (heartbeats every heartbeat.interval.ms); any --fatal--> FATAL

Rules, as Kafka's ``AbstractCoordinator``/``ConsumerCoordinator``:

* JoinGroup carries one protocol per configured assignor (``partition.assignment.strategy``, preferred first),
  each with a ``ConsumerProtocolSubscription`` v3: topics, the assignor's user data, owned partitions and the
  generation they came from. MEMBER_ID_REQUIRED rejoins at once with the member id the coordinator gave.
* The rebalance protocol is COOPERATIVE when every configured assignor supports it, else EAGER. Before joining,
  an EAGER member revokes everything it owns; a COOPERATIVE one revokes only partitions of topics it no longer
  subscribes to, and after SyncGroup revokes what the new assignment dropped and rejoins when it revoked any.
  A member whose generation was reset (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, poll timeout) reports its
  partitions lost instead of revoked: another member may own them already.
* The leader decodes every member's subscription, runs the assignor the coordinator chose over the partition
  counts it is given and sends one ``ConsumerProtocolAssignment`` per member; followers send none.
* REBALANCE_IN_PROGRESS rejoins keeping the member id; UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION reset it (and
  the generation) and rejoin; NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and lost connections forget the
  coordinator (FindCoordinator next) and COORDINATOR_LOAD_IN_PROGRESS backs off; FENCED_INSTANCE_ID and the
  other errors of a request that cannot succeed by repeating it are fatal (``GroupMemberFatalError``).
* ``leave`` revokes everything owned; a dynamic member then sends LeaveGroup, a static one (``group.instance.id``)
  does not, so the coordinator keeps its assignment until its session times out (Kafka's behaviour).
* No poll within ``max.poll.interval.ms``: the heartbeat thread leaves the group (a dynamic member sends
  LeaveGroup) and the generation is reset; the next poll reports the partitions lost and rejoins.

Thread safety: every method takes the member's lock, so the polling thread and the heartbeat thread may share
one member. Times are ``time.monotonic()`` seconds passed in by the caller.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from spark_kafkalog.client.consumer.consumer_protocol import (
    DEFAULT_GENERATION,
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spark_kafkalog.client.consumer.partition_assignor import PartitionAssignor, RebalanceProtocol
from spark_kafkalog.client.errors import (
    API_OPERATIONS,
    AuthorizationError,
    GroupAuthorizationFailedError,
    KafkaClientError,
    error_for_code,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import ResourceType

__all__ = [
    "CommitFailedError",
    "FindCoordinatorRequest",
    "GroupMember",
    "GroupMemberFatalError",
    "HeartbeatRequest",
    "JoinGroupRequest",
    "LeaveGroupRequest",
    "LookupMember",
    "MemberState",
    "MetadataRequest",
    "RebalanceEvent",
    "SyncGroupRequest",
    "coordinator_lookup_code",
    "coordinator_lookup_failed",
    "group_member_error",
]

UNKNOWN_MEMBER_ID = ""


class GroupMemberFatalError(KafkaClientError):
    """The coordinator refused this member for good (FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL,
    INVALID_SESSION_TIMEOUT, GROUP_MAX_SIZE_REACHED, ...): the consumer cannot take part in the group."""


class GroupMemberAuthorizationError(GroupMemberFatalError, GroupAuthorizationFailedError):
    """GROUP_AUTHORIZATION_FAILED for a member's JoinGroup, SyncGroup or Heartbeat: the principal may not READ
    the group. A ``GroupMemberFatalError`` and a ``GroupAuthorizationFailedError`` (``resource_name`` is the
    group id; the consumer names its principal before raising it)."""


class CommitFailedError(KafkaClientError):
    """An OffsetCommit as a member failed because the group rebalanced (REBALANCE_IN_PROGRESS,
    ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID): the partitions may belong to another member by now."""


class MemberState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"  # JoinGroup in flight
    ASSIGNING = "assigning"  # leader: waiting for the partition counts of the group's topics
    SYNCING = "syncing"  # SyncGroup ready to send
    AWAITING_SYNC = "awaiting-sync"  # SyncGroup in flight
    STABLE = "stable"
    FATAL = "fatal"


# requests the driver sends ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class FindCoordinatorRequest:
    group_id: str


@dataclass(frozen=True)
class JoinGroupRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]  # (assignor name, ConsumerProtocolSubscription bytes), preferred first


@dataclass(frozen=True)
class MetadataRequest:
    """The leader needs the partition count of each of ``topics``; answer with ``on_metadata``."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None
    protocol_name: str
    assignments: tuple[tuple[str, bytes], ...]  # (member id, ConsumerProtocolAssignment bytes); leader only


@dataclass(frozen=True)
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None


@dataclass(frozen=True)
class LeaveGroupRequest:
    group_id: str
    member_id: str
    reason: str


@dataclass(frozen=True)
class RebalanceEvent:
    """A listener callback to run on the polling thread: ``kind`` is revoked, assigned or lost."""

    kind: str
    partitions: tuple[TopicPartition, ...]


_COORDINATOR_GONE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})
_RESET = frozenset({ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION})


def coordinator_lookup_code(error: KafkaClientError) -> int | None:
    """The error code a member's ``on_find_coordinator`` is given for a FindCoordinator call that raised ``error``
    (COORDINATOR_NOT_AVAILABLE when the error names none), or None when the error is fatal: not retriable and
    neither COORDINATOR_NOT_AVAILABLE nor NOT_COORDINATOR. Shared by the blocking and asyncio drivers of both group
    protocols (``GroupMember`` and ``ConsumerMembership``)."""
    code = error.error_code if error.error_code is not None else ErrorCode.COORDINATOR_NOT_AVAILABLE
    if not error.retriable and code not in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
        return None
    return code


def group_member_error(
    code: int, what: str, group_id: str, detail: str | None, *, kind: str = "group"
) -> GroupMemberFatalError:
    """The fatal error of a member whose ``what`` request for ``group_id`` was refused for good with ``code``:
    GROUP_AUTHORIZATION_FAILED gives a ``GroupMemberAuthorizationError`` naming the operation, any other code a
    ``GroupMemberFatalError`` naming the group (``kind``: "group", "share group"). Shared by the members of the
    three group protocols (``GroupMember``, ``ConsumerMembership``, ``ShareMembership``)."""
    if code == ErrorCode.GROUP_AUTHORIZATION_FAILED:
        return GroupMemberAuthorizationError(
            what=what,
            resource_name=group_id,
            operation=API_OPERATIONS.get(what, {}).get(ResourceType.GROUP),
            detail=detail,
        )
    base = error_for_code(code, what, detail=f"{kind} {group_id!r}" + (f": {detail}" if detail else ""))
    return GroupMemberFatalError(str(base), error_code=code, retriable=False)


class LookupMember(Protocol):
    """What ``coordinator_lookup_failed`` tells: a member of the consumer or the share group protocol."""

    def fail(self, error: KafkaClientError, /) -> None: ...

    def on_find_coordinator(self, error_code: int, node_id: int, now: float, /) -> None: ...


def coordinator_lookup_failed(member: LookupMember, error: KafkaClientError, now: float) -> None:
    """Tell ``member`` its FindCoordinator failed with ``error``: an ``AuthorizationError`` or a fatal error
    (``coordinator_lookup_code``) fails the member, any other is retried after the member's backoff. Shared by
    the drivers of ``ConsumerMembership`` (blocking and asyncio) and ``ShareMembership``."""
    code = None if isinstance(error, AuthorizationError) else coordinator_lookup_code(error)
    if code is None:
        member.fail(error)
    else:
        member.on_find_coordinator(code, -1, now)


def _sorted(tps: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
    return tuple(sorted(set(tps)))


class GroupMember:
    """One member of ``group_id`` using ``assignors`` (preferred first); see the module docstring."""

    def __init__(
        self,
        group_id: str,
        assignors: Sequence[PartitionAssignor],
        *,
        session_timeout_ms: int = 45000,
        rebalance_timeout_ms: int = 300000,
        heartbeat_interval_ms: int = 3000,
        retry_backoff_ms: int = 100,
        group_instance_id: str | None = None,
    ) -> None:
        if not assignors:
            raise ValueError("a group member needs at least one partition assignor")
        self.group_id = group_id
        self.assignors = {a.name: a for a in assignors}
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.group_instance_id = group_instance_id
        common = set(RebalanceProtocol)
        for a in assignors:
            common &= set(a.supported_protocols)
        self.protocol = max(common) if common else RebalanceProtocol.EAGER
        self.state = MemberState.UNJOINED
        self.member_id = UNKNOWN_MEMBER_ID
        self.generation = DEFAULT_GENERATION
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.coordinator: int | None = None
        self.owned: tuple[TopicPartition, ...] = ()
        self.subscription: tuple[str, ...] = ()
        self.fatal_error: GroupMemberFatalError | None = None
        self._joined_topics: tuple[str, ...] = ()
        self._rejoin_needed = False
        self._prepared = False  # the revocations before this join have been made
        self._retry_at = 0.0
        self._members: dict[str, Subscription] = {}
        self._sync_assignments: tuple[tuple[str, bytes], ...] = ()
        self._events: list[RebalanceEvent] = []
        self._last_heartbeat = 0.0
        self._heartbeat_in_flight = False
        self._last_poll: float | None = None
        self._poll_timeout_ms = rebalance_timeout_ms
        self._lock = threading.RLock()

    # subscription and queries -----------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str]) -> bool:
        """Set the subscribed topics; returns whether they changed (then the member rejoins)."""
        with self._lock:
            wanted = tuple(sorted(set(topics)))
            if wanted == self.subscription:
                return False
            self.subscription = wanted
            if self.state is not MemberState.UNJOINED:
                self._rejoin_needed = True
            return True

    @property
    def stable(self) -> bool:
        with self._lock:
            return self.state is MemberState.STABLE and not self._rejoin_needed

    @property
    def is_leader(self) -> bool:
        with self._lock:
            return self.leader_id is not None and self.leader_id == self.member_id

    def commit_identity(self) -> tuple[int, str, str | None]:
        """(generation, member id, group instance id) to commit offsets with: the generation this member last
        joined (the coordinator accepts it until the next rebalance completes, so revocations before a
        rejoin can still commit), -1 after a reset."""
        with self._lock:
            return self.generation, self.member_id, self.group_instance_id

    def take_events(self) -> list[RebalanceEvent]:
        """The callbacks produced since the last call, oldest first."""
        with self._lock:
            events, self._events = self._events, []
            return events

    def retry_in(self, now: float) -> float:
        """Seconds until a backed-off request may be sent (0 when nothing waits)."""
        with self._lock:
            return max(0.0, self._retry_at - now)

    def request_rejoin(self) -> None:
        with self._lock:
            if self.state is not MemberState.FATAL:
                self._rejoin_needed = True

    def coordinator_unknown(self) -> None:
        """Forget the coordinator (it moved, or its connection broke): FindCoordinator is sent next."""
        with self._lock:
            self.coordinator = None

    # the polling thread's requests ------------------------------------------------------------------
    def next_request(
        self, now: float
    ) -> FindCoordinatorRequest | JoinGroupRequest | MetadataRequest | SyncGroupRequest | None:
        """What to send next from the polling thread, or None (stable, in flight, or backing off).

        Raises the fatal error once the member failed for good. Call ``take_events`` after it: starting a join
        may produce revocations, which must run before the JoinGroup is sent.
        """
        with self._lock:
            if self.fatal_error is not None:
                raise self.fatal_error
            if not self.subscription or now < self._retry_at:
                return None
            if self.state in (MemberState.JOINING, MemberState.AWAITING_SYNC):
                return None
            if self.coordinator is None:
                return FindCoordinatorRequest(self.group_id)
            if self.state is MemberState.ASSIGNING:
                return MetadataRequest(tuple(sorted({t for s in self._members.values() for t in s.topics})))
            if self.state is MemberState.SYNCING:
                self.state = MemberState.AWAITING_SYNC
                assert self.protocol_name is not None
                return SyncGroupRequest(
                    self.group_id,
                    self.generation,
                    self.member_id,
                    self.group_instance_id,
                    self.protocol_name,
                    self._sync_assignments,
                )
            if self.state is MemberState.STABLE and not self._rejoin_needed:
                return None
            return self._join(now)

    def _join(self, now: float) -> JoinGroupRequest:
        if not self._prepared:
            self._prepare_join()
            self._prepared = True
        self.state = MemberState.JOINING
        self._rejoin_needed = False
        self._joined_topics = self.subscription
        protocols = []
        for name, assignor in self.assignors.items():
            subscription = Subscription(
                topics=self.subscription,
                user_data=assignor.subscription_user_data(self.subscription),
                owned_partitions=self.owned,
                generation_id=self.generation,
            )
            protocols.append((name, encode_subscription(subscription)))
        return JoinGroupRequest(
            self.group_id,
            self.member_id,
            self.group_instance_id,
            self.session_timeout_ms,
            self.rebalance_timeout_ms,
            tuple(protocols),
        )

    def _prepare_join(self) -> None:
        if self.generation == DEFAULT_GENERATION and self.owned:
            self._lose_all()
        elif self.protocol is RebalanceProtocol.EAGER:
            self._revoke(self.owned)
        else:
            self._revoke(tp for tp in self.owned if tp.topic not in self.subscription)

    def _revoke(self, partitions: Iterable[TopicPartition]) -> None:
        revoked = _sorted(partitions)
        if revoked:
            self.owned = tuple(tp for tp in self.owned if tp not in revoked)
            self._events.append(RebalanceEvent("revoked", revoked))

    def _lose_all(self) -> None:
        if self.owned:
            self._events.append(RebalanceEvent("lost", self.owned))
            self.owned = ()

    # responses --------------------------------------------------------------------------------------
    def on_find_coordinator(self, error_code: int, node_id: int, now: float) -> None:
        with self._lock:
            if error_code == ErrorCode.NONE:
                self.coordinator = node_id
            else:
                self._back_off(now)

    def on_join_group(self, response: Any, now: float) -> None:
        """A JoinGroup response (the wire object: error_code, generation_id, protocol_name, leader, member_id,
        members[member_id, group_instance_id, metadata])."""
        with self._lock:
            code = ErrorCode(response.error_code)
            if code == ErrorCode.NONE:
                self.member_id = response.member_id
                self.generation = response.generation_id
                self.protocol_name = response.protocol_name
                self.leader_id = response.leader
                if self.protocol_name not in self.assignors:
                    self._fail(
                        code,
                        "JoinGroup",
                        f"the coordinator chose protocol {self.protocol_name!r}, which is not one of ours "
                        f"({', '.join(self.assignors)})",
                    )
                    return
                if self.is_leader:
                    self._members = {
                        m.member_id: decode_subscription(m.metadata, m.group_instance_id) for m in response.members
                    }
                    self.state = MemberState.ASSIGNING
                else:
                    self._sync_assignments = ()
                    self.state = MemberState.SYNCING
                return
            self.state = MemberState.UNJOINED
            if code == ErrorCode.MEMBER_ID_REQUIRED:
                self.member_id = response.member_id
            elif code in _RESET:
                self._reset_generation()
            elif code == ErrorCode.REBALANCE_IN_PROGRESS:
                pass
            elif code in _COORDINATOR_GONE:
                self.coordinator = None
                self._back_off(now)
            elif code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                self._back_off(now)
            else:
                self._fail(code, "JoinGroup")

    def on_metadata(self, partition_counts: Mapping[str, int]) -> None:
        """The leader's assignment over ``partition_counts`` (topic -> partitions; missing topics are skipped)."""
        with self._lock:
            if self.state is not MemberState.ASSIGNING:
                return
            assert self.protocol_name is not None
            assignor = self.assignors[self.protocol_name]
            assignments = assignor.assign(partition_counts, self._members)
            self._sync_assignments = tuple(
                (member, encode_assignment(assignments.get(member, Assignment(())))) for member in self._members
            )
            self.state = MemberState.SYNCING

    def on_sync_group(self, response: Any, now: float) -> None:
        """A SyncGroup response (error_code, assignment bytes; empty bytes: nothing assigned)."""
        with self._lock:
            code = ErrorCode(response.error_code)
            if code != ErrorCode.NONE:
                self.state = MemberState.UNJOINED
                self._on_group_error(code, "SyncGroup", now)
                return
            data = bytes(response.assignment)
            assignment = decode_assignment(data) if data else Assignment(())
            assigned = _sorted(assignment.partitions)
            assert self.protocol_name is not None
            self.assignors[self.protocol_name].on_assignment(assignment, self.generation)
            self.state = MemberState.STABLE
            self._prepared = False
            self._last_heartbeat = now
            if self.protocol is RebalanceProtocol.COOPERATIVE:
                revoked = [tp for tp in self.owned if tp not in assigned]
                added = _sorted(tp for tp in assigned if tp not in self.owned)
                if revoked:
                    self._revoke(revoked)
                    self._rejoin_needed = True
                self.owned = assigned
                self._events.append(RebalanceEvent("assigned", added))
            else:
                self.owned = assigned
                self._events.append(RebalanceEvent("assigned", assigned))
            if self._joined_topics != self.subscription:
                self._rejoin_needed = True

    def on_request_failed(self, request: object, now: float) -> None:
        """The connection to the coordinator broke or timed out while ``request`` was in flight."""
        with self._lock:
            self.coordinator = None
            self._back_off(now)
            if isinstance(request, JoinGroupRequest) and self.state is MemberState.JOINING:
                self.state = MemberState.UNJOINED
            elif isinstance(request, SyncGroupRequest) and self.state is MemberState.AWAITING_SYNC:
                self.state = MemberState.UNJOINED
            elif isinstance(request, HeartbeatRequest):
                self._heartbeat_in_flight = False

    def on_commit_error(self, error_code: int) -> None:
        """An OffsetCommit as this member failed with ``error_code``: rejoin (after a reset where the member
        or generation is unknown)."""
        with self._lock:
            code = ErrorCode(error_code)
            if code in _RESET:
                self._reset_generation()
            elif code == ErrorCode.REBALANCE_IN_PROGRESS:
                self._rejoin_needed = True
            elif code in _COORDINATOR_GONE:
                self.coordinator = None

    def _on_group_error(self, code: ErrorCode, what: str, now: float) -> None:
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            self._rejoin_needed = True
        elif code in _RESET:
            self._reset_generation()
        elif code in _COORDINATOR_GONE:
            self.coordinator = None
            self._back_off(now)
        elif code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            self._back_off(now)
        else:
            self._fail(code, what)

    def _reset_generation(self) -> None:
        self.generation = DEFAULT_GENERATION
        self.member_id = UNKNOWN_MEMBER_ID
        self.leader_id = None
        self._rejoin_needed = True
        self._prepared = False
        if self.state is MemberState.STABLE:
            self.state = MemberState.UNJOINED

    def _fail(self, code: ErrorCode, what: str, detail: str | None = None) -> None:
        self.fatal_error = group_member_error(code, what, self.group_id, detail)
        self.state = MemberState.FATAL

    def _back_off(self, now: float) -> None:
        self._retry_at = now + self.retry_backoff_ms / 1000.0

    # heartbeats (the heartbeat thread) --------------------------------------------------------------
    def polled(self, now: float) -> None:
        """The application called poll: restarts the ``max.poll.interval.ms`` timer."""
        with self._lock:
            self._last_poll = now

    def heartbeat_request(self, now: float) -> HeartbeatRequest | LeaveGroupRequest | None:
        """A Heartbeat when one is due (stable, coordinator known, none in flight), or a LeaveGroup when the
        application has not polled within the rebalance timeout; None otherwise."""
        with self._lock:
            if self.state is not MemberState.STABLE or self.coordinator is None:
                return None
            if self._last_poll is not None and now - self._last_poll > self._poll_timeout_ms / 1000.0:
                return self._leave_for_poll_timeout()
            if self._heartbeat_in_flight or now < self._last_heartbeat + self.heartbeat_interval_ms / 1000.0:
                return None
            self._heartbeat_in_flight = True
            self._last_heartbeat = now
            return HeartbeatRequest(self.group_id, self.generation, self.member_id, self.group_instance_id)

    def heartbeat_wait(self, now: float) -> float:
        """Seconds until ``heartbeat_request`` may have something to send."""
        with self._lock:
            if self.state is not MemberState.STABLE or self.coordinator is None:
                return self.heartbeat_interval_ms / 1000.0
            return max(0.0, self._last_heartbeat + self.heartbeat_interval_ms / 1000.0 - now)

    def on_heartbeat(self, request: HeartbeatRequest, error_code: int, now: float) -> None:
        with self._lock:
            self._heartbeat_in_flight = False
            code = ErrorCode(error_code)
            if code == ErrorCode.NONE:
                return
            if code in _COORDINATOR_GONE:
                self.coordinator = None
                return
            stale = request.generation_id != self.generation or request.member_id != self.member_id
            if stale or self.state is not MemberState.STABLE:
                return  # about a generation this member has left, or a rejoin has begun already
            if code == ErrorCode.REBALANCE_IN_PROGRESS:
                self._rejoin_needed = True
            elif code in _RESET:
                self._reset_generation()
            elif code == ErrorCode.FENCED_INSTANCE_ID:
                self._fail(code, "Heartbeat")
            elif not code.retriable:
                self._fail(code, "Heartbeat")

    def _leave_for_poll_timeout(self) -> LeaveGroupRequest | None:
        member_id = self.member_id
        self._reset_generation()
        self._last_poll = None
        if self.group_instance_id is not None:
            return None
        return LeaveGroupRequest(self.group_id, member_id, "consumer poll timeout has expired (max.poll.interval.ms)")

    # leaving ----------------------------------------------------------------------------------------
    def prepare_leave(self) -> None:
        """Give up the assignment (revoked, or lost after a reset) while the generation is still valid, so the
        revocation callbacks (taken with ``take_events``) can still commit; ``leave`` follows."""
        with self._lock:
            if self.generation == DEFAULT_GENERATION:
                self._lose_all()
            else:
                self._revoke(self.owned)

    def leave(self, reason: str = "the consumer is being closed") -> LeaveGroupRequest | None:
        """Give up the assignment (as ``prepare_leave``) and, for a dynamic member that has a member id and a
        coordinator, the LeaveGroup to send. The member is UNJOINED and unsubscribed afterwards."""
        self.prepare_leave()
        with self._lock:
            request = None
            if self.group_instance_id is None and self.member_id and self.coordinator is not None:
                request = LeaveGroupRequest(self.group_id, self.member_id, reason)
            self.member_id = UNKNOWN_MEMBER_ID
            self.generation = DEFAULT_GENERATION
            self.leader_id = None
            self.subscription = ()
            self.state = MemberState.UNJOINED if self.state is not MemberState.FATAL else self.state
            self._rejoin_needed = False
            self._prepared = False
            return request
