"""The classic consumer group: members, generation, protocol and the state machine, as pure code.

States (Kafka's ``GroupState``)::

    Empty --join--> PreparingRebalance --all joined / rebalance timeout--> CompletingRebalance
    CompletingRebalance --leader's SyncGroup--> Stable --join of leader or changed member / leave /
    expiry--> PreparingRebalance;  last member gone --> Empty;  deleted or coordinator moved --> Dead

A rebalance completes (``ready_to_complete``) once every member has sent its JoinGroup, no member id
handed out with MEMBER_ID_REQUIRED is still expected, and the initial delay (``group.initial.rebalance.delay.ms``
for a group that was Empty) has passed; or when the rebalance timeout (the largest of the members') passes,
which removes the members that did not rejoin. ``complete_join`` then bumps the generation, picks the
protocol every member supports (each member votes for its first choice among those; most votes wins, ties
go to the earliest-joined member's preference) and keeps or picks the leader.

Errors raise ``GroupError(error_code, message)`` with the code Kafka answers: UNKNOWN_MEMBER_ID,
ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID, MEMBER_ID_REQUIRED (JoinGroup v4+ with an
empty member id; the error carries the new id), INCONSISTENT_GROUP_PROTOCOL, GROUP_MAX_SIZE_REACHED,
COORDINATOR_NOT_AVAILABLE (a Dead group). Waiting (the JoinGroup long poll, followers waiting for the
leader's SyncGroup) is the coordinator's business: this module only says who is waiting.

Time is passed in (``now`` in milliseconds), so session expiry and rebalance deadlines are plain data.
Not thread-safe: the coordinator uses it from its event loop only.
"""

from __future__ import annotations

import enum
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from spark_kafkalog.protocol import ErrorCode, decode_data


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class GroupError(Exception):
    """A request the group refuses, with the Kafka error code to answer (``member_id`` for MEMBER_ID_REQUIRED)."""

    def __init__(self, error_code: ErrorCode, message: str, *, member_id: str = "") -> None:
        super().__init__(message)
        self.error_code = error_code
        self.member_id = member_id


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: list[tuple[str, bytes]]
    """(protocol name, metadata) in the member's order of preference."""
    last_heartbeat_ms: int = 0
    awaiting_join: bool = False
    """Sent a JoinGroup for the rebalance in progress (its answer is pending)."""
    assignment: bytes = b""

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata_for(self, protocol: str | None) -> bytes:
        return next((m for n, m in self.protocols if n == protocol), b"")

    def session_expired(self, now: int) -> bool:
        return now >= self.last_heartbeat_ms + self.session_timeout_ms


@dataclass(frozen=True)
class JoinRequest:
    """One member's JoinGroup: who joins and what it offers (``GroupCoordinator.join_group``'s arguments), for
    ``Group.join`` and, for a consumer group, ``GroupConsumerClassic.classic_join_consumer_group``.
    The JoinGroupRequest's fields in its order, then the request header's client id, the connection's host and
    ``require_known_member_id``: JoinGroup v4+ (a member without an id gets MEMBER_ID_REQUIRED and one to rejoin
    with)."""

    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Sequence[tuple[str, bytes]]
    client_id: str
    client_host: str
    require_known_member_id: bool


@dataclass(frozen=True)
class JoinResult:
    """The JoinGroup answer of one member: the leader gets every member's metadata for the chosen protocol."""

    member_id: str
    generation: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str
    members: tuple[tuple[str, str | None, bytes], ...] = ()
    """(member id, group instance id, metadata), for the leader only."""


@dataclass
class Group:
    group_id: str
    initial_rebalance_delay_ms: int = 0
    max_size: int | None = None
    state: GroupState = GroupState.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    """group.instance.id -> member id."""
    pending_members: dict[str, int] = field(default_factory=dict)
    """Member ids handed out with MEMBER_ID_REQUIRED -> when (their join must follow within a session timeout)."""
    pending_session_ms: dict[str, int] = field(default_factory=dict)
    rebalance_started_ms: int = 0
    initial_delay_until_ms: int = 0
    state_timestamp_ms: int = -1

    # -- queries -----------------------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        return not self.members

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def rebalance_deadline_ms(self) -> int:
        return self.rebalance_started_ms + self.rebalance_timeout_ms()

    def ready_to_complete(self, now: int) -> bool:
        """PreparingRebalance may complete: everyone rejoined (and the initial delay passed), or time is up."""
        if self.state is not GroupState.PREPARING_REBALANCE:
            return False
        if now >= self.rebalance_deadline_ms():
            return True
        all_joined = all(m.awaiting_join for m in self.members.values()) and not self.pending_members
        return all_joined and now >= self.initial_delay_until_ms

    def _transition(self, state: GroupState, now: int) -> None:
        self.state = state
        self.state_timestamp_ms = now

    def _check_alive(self) -> None:
        if self.state is GroupState.DEAD:
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"group {self.group_id} is being removed")

    def _check_member(self, member_id: str, group_instance_id: str | None) -> Member:
        """The member, after Kafka's static-membership fencing and unknown-member checks."""
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is not None and known != member_id:
                raise GroupError(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"group.instance.id {group_instance_id} belongs to member {known}, not {member_id}",
                )
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id!r} is not in group {self.group_id}")
        return member

    def _check_generation(self, generation: int) -> None:
        if generation != self.generation:
            raise GroupError(
                ErrorCode.ILLEGAL_GENERATION,
                f"generation {generation} is not group {self.group_id}'s current generation {self.generation}",
            )

    # -- JoinGroup -----------------------------------------------------------------------------
    def join(self, request: JoinRequest, *, now: int) -> tuple[str, JoinResult | None]:
        """Admit a JoinGroup. Returns (member id, an immediate answer or None when it must wait for the
        rebalance to complete). Raises ``GroupError``."""
        self._check_alive()
        member_id, group_instance_id = request.member_id, request.group_instance_id
        client_id, client_host = request.client_id, request.client_host
        session_timeout_ms, rebalance_timeout_ms = request.session_timeout_ms, request.rebalance_timeout_ms
        protocol_type, protocols = request.protocol_type, list(request.protocols)
        require_known_member_id = request.require_known_member_id
        if not protocols or not protocol_type:
            raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "a JoinGroup needs a protocol type and protocols")
        if not self.is_empty and (
            protocol_type != self.protocol_type or not self._supported_by_all({n for n, _ in protocols})
        ):
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"protocols {[n for n, _ in protocols]} ({protocol_type}) share none with group {self.group_id}'s "
                f"members ({self.protocol_type})",
            )
        if not member_id:
            static_id = self.static_members.get(group_instance_id) if group_instance_id is not None else None
            new_id = (
                f"{client_id}-{uuid.uuid4()}" if group_instance_id is None else f"{group_instance_id}-{uuid.uuid4()}"
            )
            if static_id is not None:  # a static member restarted: it takes over its old slot
                assert group_instance_id is not None, "static_id is looked up by the instance id"
                old = self.members.pop(static_id)
                if self.leader_id == static_id:
                    self.leader_id = new_id
                old.member_id = new_id
                self.members[new_id] = old
                self.static_members[group_instance_id] = new_id
                same = _same_subscription(
                    self.protocol_type,
                    old.metadata_for(self.protocol_name),
                    dict(protocols).get(self.protocol_name or ""),
                )
                if self.state is GroupState.STABLE and same:  # KIP-345: no rebalance, the old assignment stays
                    old.protocols = protocols
                    old.session_timeout_ms, old.rebalance_timeout_ms = session_timeout_ms, rebalance_timeout_ms
                    old.last_heartbeat_ms = now
                    # a restarted leader is named leader with every member (JoinGroup v9+ adds skip_assignment,
                    # KIP-814); SyncGroup in the Stable group hands it its current assignment whatever it sends
                    return new_id, self._result_for(new_id)
                return self._join_known(old, protocols, session_timeout_ms, rebalance_timeout_ms, now, force=True)
            if self.max_size is not None and len(self.members) + len(self.pending_members) >= self.max_size:
                raise GroupError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"group {self.group_id} has reached group.max.size={self.max_size}",
                )
            if require_known_member_id and group_instance_id is None:
                self.pending_members[new_id] = now
                self.pending_session_ms[new_id] = session_timeout_ms
                raise GroupError(ErrorCode.MEMBER_ID_REQUIRED, "rejoin with the assigned member id", member_id=new_id)
            self._add_member(
                new_id, group_instance_id, client_id, client_host, session_timeout_ms, rebalance_timeout_ms,
                protocol_type, protocols, now,
            )  # fmt: skip
            return new_id, None  # the new member waits for the rebalance
        if member_id in self.pending_members:
            del self.pending_members[member_id]
            self.pending_session_ms.pop(member_id, None)
            self._add_member(
                member_id, group_instance_id, client_id, client_host, session_timeout_ms, rebalance_timeout_ms,
                protocol_type, protocols, now,
            )  # fmt: skip
            return member_id, None
        member = self._check_member(member_id, group_instance_id)
        return self._join_known(member, protocols, session_timeout_ms, rebalance_timeout_ms, now)

    def _supported_by_all(self, names: set[str]) -> bool:
        common = set(names)
        for m in self.members.values():
            common &= set(m.protocol_names())
        return bool(common)

    def _add_member(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_ms: int,
        rebalance_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        now: int,
    ) -> None:
        if self.is_empty:
            self.protocol_type = protocol_type
        member = Member(
            member_id, group_instance_id, client_id, client_host, session_ms, rebalance_ms, protocols, now, True
        )
        self.members[member_id] = member
        if group_instance_id is not None:
            self.static_members[group_instance_id] = member_id
        if self.state is not GroupState.PREPARING_REBALANCE:
            self.prepare_rebalance(now)

    def _join_known(
        self,
        member: Member,
        protocols: list[tuple[str, bytes]],
        session_ms: int,
        rebalance_ms: int,
        now: int,
        *,
        force: bool = False,
    ) -> tuple[str, JoinResult | None]:
        member.session_timeout_ms = session_ms
        member.rebalance_timeout_ms = rebalance_ms
        member.last_heartbeat_ms = now
        changed = member.protocols != protocols
        member.protocols = protocols
        if self.state is GroupState.PREPARING_REBALANCE:
            member.awaiting_join = True
            return member.member_id, None
        if (
            not force
            and not changed
            and member.member_id != self.leader_id
            and self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE)
        ):  # a follower asking again with the same metadata gets the current generation
            return member.member_id, self._result_for(member.member_id)
        member.awaiting_join = True
        self.prepare_rebalance(now)
        return member.member_id, None

    def prepare_rebalance(self, now: int) -> None:
        """Enter PreparingRebalance (members must rejoin); a group that was Empty waits the initial delay."""
        if self.state is GroupState.PREPARING_REBALANCE:
            return
        delay = self.initial_rebalance_delay_ms if self.state is GroupState.EMPTY else 0
        self.initial_delay_until_ms = now + delay
        self.rebalance_started_ms = now
        for m in self.members.values():
            m.assignment = b""
        self._transition(GroupState.PREPARING_REBALANCE, now)

    def complete_join(self, now: int) -> dict[str, JoinResult]:
        """Finish PreparingRebalance: drop members that did not rejoin, new generation, protocol and leader.

        Returns the JoinGroup answer of every remaining member (empty when the group became Empty)."""
        for m in [m for m in self.members.values() if not m.awaiting_join]:
            self._remove(m.member_id)
        self.pending_members.clear()
        self.pending_session_ms.clear()
        self.generation += 1
        if self.is_empty:
            self.protocol_name = None
            self.leader_id = None
            self._transition(GroupState.EMPTY, now)
            return {}
        self.protocol_name = select_protocol([m.protocol_names() for m in self.members.values()])
        if self.leader_id not in self.members:
            self.leader_id = next(iter(self.members))
        for m in self.members.values():
            m.awaiting_join = False
            m.last_heartbeat_ms = now
        self._transition(GroupState.COMPLETING_REBALANCE, now)
        return {mid: self._result_for(mid) for mid in self.members}

    def _result_for(self, member_id: str) -> JoinResult:
        members: tuple = ()
        if member_id == self.leader_id:
            members = tuple(
                (m.member_id, m.group_instance_id, m.metadata_for(self.protocol_name)) for m in self.members.values()
            )
        return JoinResult(
            member_id, self.generation, self.protocol_type, self.protocol_name, self.leader_id or "", members
        )

    # -- SyncGroup -----------------------------------------------------------------------------
    def sync(
        self,
        *,
        member_id: str,
        group_instance_id: str | None,
        generation: int,
        assignments: dict[str, bytes],
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        now: int,
    ) -> bytes | None:
        """Admit a SyncGroup: the member's assignment when known now (Stable, or this is the leader's sync,
        which makes the group Stable), None when it must wait for the leader. Raises ``GroupError``."""
        self._check_alive()
        if self.state is GroupState.EMPTY:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {self.group_id} has no members")
        member = self._check_member(member_id, group_instance_id)
        self._check_generation(generation)
        if (protocol_type is not None and protocol_type != self.protocol_type) or (
            protocol_name is not None and protocol_name != self.protocol_name
        ):
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"SyncGroup for {protocol_type}/{protocol_name}, but the group uses "
                f"{self.protocol_type}/{self.protocol_name}",
            )
        if self.state is GroupState.PREPARING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"group {self.group_id} is rebalancing")
        member.last_heartbeat_ms = now
        if self.state is GroupState.STABLE:
            return member.assignment
        if member_id != self.leader_id:
            return None
        for mid, m in self.members.items():
            m.assignment = assignments.get(mid, b"")
        self._transition(GroupState.STABLE, now)
        return member.assignment

    def assignment_of(self, member_id: str) -> bytes:
        m = self.members.get(member_id)
        return b"" if m is None else m.assignment

    # -- Heartbeat, LeaveGroup, expiry --------------------------------------------------------
    def heartbeat(self, *, member_id: str, group_instance_id: str | None, generation: int, now: int) -> None:
        """Keep the member alive. Raises ``GroupError``; REBALANCE_IN_PROGRESS tells it to rejoin."""
        self._check_alive()
        if self.state is GroupState.EMPTY:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {self.group_id} has no members")
        member = self._check_member(member_id, group_instance_id)
        self._check_generation(generation)
        member.last_heartbeat_ms = now
        if self.state is GroupState.PREPARING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"group {self.group_id} is rebalancing; rejoin")

    def leave(self, *, member_id: str, group_instance_id: str | None, now: int) -> str:
        """Remove a member (by member id, or by group.instance.id when the member id is empty); returns its id."""
        self._check_alive()
        if not member_id and group_instance_id is not None:
            member_id = self.static_members.get(group_instance_id, "")
        if member_id in self.pending_members:
            del self.pending_members[member_id]
            return member_id
        self._check_member(member_id, group_instance_id)
        self.remove_member(member_id, now)
        return member_id

    def remove_member(self, member_id: str, now: int) -> None:
        """Remove a member and rebalance the rest (or become Empty)."""
        self._remove(member_id)
        if self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self.prepare_rebalance(now)
        if self.is_empty and self.state is not GroupState.PREPARING_REBALANCE:
            self._transition(GroupState.EMPTY, now)

    def _remove(self, member_id: str) -> None:
        m = self.members.pop(member_id, None)
        if m is not None and m.group_instance_id is not None:
            if self.static_members.get(m.group_instance_id) == member_id:
                del self.static_members[m.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)

    def expired_members(self, now: int) -> list[str]:
        """Members whose session timed out (those waiting in a JoinGroup are kept alive, as in Kafka)."""
        return [mid for mid, m in self.members.items() if not m.awaiting_join and m.session_expired(now)]

    def expire_pending(self, now: int) -> None:
        """Forget member ids handed out with MEMBER_ID_REQUIRED whose join never came within a session timeout."""
        for mid, since in list(self.pending_members.items()):
            if now >= since + self.pending_session_ms.get(mid, 0):
                del self.pending_members[mid]
                self.pending_session_ms.pop(mid, None)

    # -- OffsetCommit ---------------------------------------------------------------------------
    def validate_commit(self, *, member_id: str, group_instance_id: str | None, generation: int) -> None:
        """May this commit be stored? Generation -1 is a simple (assign-mode) commit, allowed while the group
        has no members whatever member id it names (Kafka's rule). Raises ``GroupError``."""
        self._check_alive()
        if generation < 0 and self.is_empty:
            return
        if self.state is GroupState.COMPLETING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"group {self.group_id} is completing a rebalance")
        self._check_member(member_id, group_instance_id)
        self._check_generation(generation)

    def mark_dead(self, now: int) -> None:
        self.members.clear()
        self.static_members.clear()
        self.pending_members.clear()
        self._transition(GroupState.DEAD, now)


def select_protocol(preferences: Sequence[Sequence[str]]) -> str:
    """Kafka's vote: among the protocols every member supports, each member votes for its first choice;
    the most votes win, a tie goes to the protocol the earliest member prefers. ``ValueError`` if none."""
    if not preferences:
        raise ValueError("no members to select a protocol for")
    common = set(preferences[0])
    for p in preferences[1:]:
        common &= set(p)
    if not common:
        raise ValueError(f"no protocol is supported by every member: {list(preferences)}")
    votes = Counter(next(n for n in p if n in common) for p in preferences)
    best = max(votes.values())
    return next(n for n in preferences[0] if n in common and votes[n] == best)


def _same_subscription(protocol_type: str | None, old: bytes, new: bytes | None) -> bool:
    """Whether a restarted static member asks for what it had: for the consumer protocol the subscribed topics
    (its owned partitions and generation naturally differ after a restart, as Kafka compares since KAFKA-13435);
    for other protocols the metadata bytes."""
    if new is None:
        return False
    if protocol_type != "consumer":
        return old == new
    try:
        return sorted(decode_data("ConsumerProtocolSubscription", old)[1].topics) == sorted(
            decode_data("ConsumerProtocolSubscription", new)[1].topics
        )
    except Exception:  # not a consumer subscription after all: compare the bytes
        return old == new
