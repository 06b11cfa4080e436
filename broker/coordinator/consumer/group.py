"""``ConsumerGroup``: one KIP-848 consumer group's state machine, pure (no I/O, no event loop; times are
milliseconds passed in by the caller, so tests drive it with a manual clock).

Contract (the lead's; the coordinator integration codes against it):

- ``ConsumerGroup(group_id, *, assignors, default_assignor)`` starts EMPTY at group epoch 0.
- ``heartbeat(request, topics, now_ms) -> HeartbeatOutcome``: one ConsumerGroupHeartbeat, already
  authorized, for a group this coordinator owns. ``topics`` resolves subscriptions (names and the regex)
  to topic ids and partition counts. Raises ``GroupError`` (broker.coordinator.group) with Kafka's codes:
  UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, INVALID_REQUEST,
  UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, GROUP_MAX_SIZE_REACHED. The outcome's ``records`` are
  the coordinator records (``records.py``) the change must persist, in order; the caller appends them and
  only then answers (on failure it calls ``revert``... see ``HeartbeatOutcome``).
- ``expire(now_ms) -> list[CoordinatorRecord]``: members whose session (``session_timeout_ms`` since their
  last heartbeat) or rebalance timeout (revocation not acknowledged in time) expired are fenced and removed;
  the records to persist.
- ``leave(member_id) -> list[CoordinatorRecord]`` for a member fenced by other means (e.g. DeleteGroups).
- ``validate_offset_commit(member_id, member_epoch)`` / ``validate_offset_fetch(member_id, member_epoch)``:
  OffsetCommit/OffsetFetch v9 checks (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, as Kafka).
- ``replay(record)``: apply one record read back from ``__consumer_offsets`` while loading (tombstones:
  ``value is None``); the state afterwards equals the state that wrote them.
- ``describe(topic_names) -> ConsumerGroupDescription``; ``state`` (ConsumerGroupState), ``group_epoch``,
  ``assignment_epoch``, ``members`` (member id -> ConsumerGroupMember), ``is_empty``,
  ``subscribed_topic_names()`` (for offset expiry).

Details of this implementation (cg-model's, refining the contract):

- Layout: the persisted state, ``replay``, the record builders, ``snapshot``/``restore``, ``state``,
  ``ConsumerGroupState``, ``TopicsView`` and ``GroupSnapshot`` are in ``group_state`` (``GroupRecords``, the
  base class); the member-update steps (subscription, regexes, metadata hash, target assignment,
  reconciliation, static-member replacement, ``preferred_assignor``) in ``member_update`` (``MemberUpdates``,
  on ``GroupRecords``); the classic-protocol members in ``classic_members`` (``ClassicMembers``, on
  ``MemberUpdates``, the direct base); the heartbeat's request checks in ``heartbeat_request``. This module
  adds the heartbeat, leaving, expiry, offsets and describe, and re-exports those names.

- Constructor: ``ConsumerGroup(group_id, *, assignors: Mapping[str, PartitionAssignor], default_assignor:
  str, session_timeout_ms=45000, heartbeat_interval_ms=5000, max_size=2**31-1, member_id_factory=
  new_member_id)`` (``group.consumer.session.timeout.ms``, ``group.consumer.heartbeat.interval.ms``,
  ``group.consumer.max.size``; ``assignors`` from ``assignors.assignors_from_config``).
- ``heartbeat(request, topics, now_ms, *, client_id="", client_host="", version=1)``: ``request`` is the
  decoded ConsumerGroupHeartbeatRequest (only its fields are read); ``client_id``/``client_host`` come
  from the request header and the connection, ``version`` is the request's API version (v0: an empty
  member id on join gets a coordinator-generated one, ``new_member_id()``, 22 characters of URL-safe
  base64 as Kafka's ``Uuid.toString()``; v1+: the client generates it and an empty one is
  INVALID_REQUEST, as KIP-1082).
- Every change is made by emitting records and replaying them into this group (so ``replay`` is the
  only writer of persisted state, and records replayed into a fresh group rebuild it). The outcome
  carries ``snapshot``, the state before the heartbeat; ``revert(outcome.snapshot)`` (or
  ``restore(snapshot())`` around ``expire``/``leave``) undoes it when the append fails. Reverting
  discards every later change too, so the caller must append a group's records in order and fail or
  redo later outcomes whose records were not written (serialize per group).
- ``HeartbeatOutcome.assignment``: the member's assigned partitions to send (``None``: send null, no
  change). Sent on a full request (epoch 0, or rebalance timeout, a subscription and topic_partitions
  all present) or when the assigned partitions changed, as Kafka (not merely because the reported
  partitions lag behind the assigned ones: the client has them from an earlier answer, and a client that
  lost an answer sends a full request). ``member_epoch`` is -1/-2 for a leave.
- Errors: any ``GroupError`` leaves the group unchanged (the state is restored before raising).
- A known dynamic member sending epoch 0 (it lost its state, e.g. after FENCED_MEMBER_EPOCH, and rejoins
  with the same id, as KIP-1082 clients do) is reset to epoch 0 with no partitions and reconciled again,
  rather than fenced; likewise a static member rejoining with its own member id.
- Static membership: a join with an instance id held by another member id is UNRELEASED_INSTANCE_ID unless
  that member left with epoch -2, in which case the new member id takes over its target assignment and
  partitions (records: the old member's tombstones, then the new member's 5, 7, 8). A heartbeat with the
  instance id from a member id that does not hold it is FENCED_INSTANCE_ID. A -2 leave keeps the member
  (epoch -2, partitions reserved) until its session times out.
- Regular expressions (``subscribed_topic_regex``): Kafka compiles RE2/J patterns; we use Python's ``re``
  with ``fullmatch`` (Java's ``matches()``), so RE2/J-only syntax fails and Python-only constructs
  (lookarounds, backreferences, which RE2 refuses) are accepted. A bad one is INVALID_REGULAR_EXPRESSION.
  Kafka resolves regexes asynchronously (at most every 10 s); we resolve them synchronously in the
  heartbeat, when the regex is new or ``topics.version`` changed since the last resolution, and persist
  each resolution in a ConsumerGroupRegularExpression record (16).
- Subscription metadata: the group epoch is also bumped when the subscribed topics' metadata (ids, names,
  partition counts, racks) change; the group's ``metadata_hash`` (record 3's tagged field) is a
  blake2b-64 hash of it, our own function (Kafka 4.1+'s KIP-1101 hash uses a different algorithm; the
  value only needs to be stable within kafkalog). It is recomputed when a subscription changes or
  ``topics.version`` moved.
- Group state (Kafka's derivation): EMPTY without members; ASSIGNING while the group epoch is ahead of
  the assignment epoch; RECONCILING while a member is not STABLE at the assignment epoch (a static member
  away with epoch -2 counts); else STABLE. DEAD after ``replay`` of the group's tombstone (record 3 with
  no value).
- Leaving, fencing and expiry bump the group epoch at once (record 3) but recompute the target assignment
  only on the next heartbeat of any member, as Kafka. ``leave``/``expire`` take an optional ``topics`` so
  the epoch record carries the new metadata hash. ``next_deadline_ms()`` tells when ``expire`` next has
  work; ``delete_records()`` are the tombstones of the whole group (Kafka's order), not applied.
- Offsets: ``validate_offset_commit(member_id, member_epoch, *, api_version=None, transactional=False)``:
  STALE_MEMBER_EPOCH (ILLEGAL_GENERATION for a classic-protocol member), UNKNOWN_MEMBER_ID, and with
  ``api_version`` a consumer member's non-transactional OffsetCommit below v9 is UNSUPPORTED_VERSION.
- Classic-protocol members (Kafka's online migration, ``classic_members``): ``from_classic_group`` (the
  upgrade), ``classic_join``, ``classic_sync``, ``classic_heartbeat``, ``classic_leave``,
  ``encode_classic_assignment``.
- Assignor: the server assignor most members name (ties: first by name), else ``default_assignor``
  (``preferred_assignor()``, also ConsumerGroupDescribe's ``assignor_name``).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.protocol.apis.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

from ..group import GroupError
from . import records as r
from .assignors import PartitionAssignor
from .classic_members import ClassicJoinOutcome, ClassicMembers, encode_classic_assignment
from .group_state import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupState,
    GroupSnapshot,
    ResolvedRegex,
    TopicsView,
)
from .heartbeat_request import owned_partitions, validate_heartbeat_request
from .member import Assignment, ConsumerGroupMember, MemberState
from .member_update import compile_regex

if TYPE_CHECKING:
    from ..group import Group

__all__ = [
    "ClassicJoinOutcome",
    "encode_classic_assignment",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "ConsumerGroup",
    "ConsumerGroupDescription",
    "ConsumerGroupState",
    "DescribedMember",
    "DescribedTopicPartitions",
    "GroupSnapshot",
    "HeartbeatOutcome",
    "ResolvedRegex",
    "TopicsView",
    "new_member_id",
]

DEFAULT_SESSION_TIMEOUT_MS = 45_000
DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000
DEFAULT_MAX_SIZE = 2**31 - 1


def new_member_id() -> str:
    """A member id as Kafka's coordinator makes one: a random UUID in URL-safe base64 without padding
    (22 characters), never starting with '-' (Kafka's ``Uuid.randomUuid()`` draws again then)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


@dataclass(frozen=True)
class HeartbeatOutcome:
    """What a heartbeat answers and must persist first (see the module docstring)."""

    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Assignment | None
    """The assigned partitions to send, or None to send null (unchanged)."""
    records: tuple[r.CoordinatorRecord, ...]
    snapshot: GroupSnapshot = field(repr=False, compare=False)
    """The state before this heartbeat, for ``ConsumerGroup.revert``."""


@dataclass(frozen=True)
class DescribedTopicPartitions:
    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedMember:
    """One member as ConsumerGroupDescribe (69) shows it. ``member_type``: 1 consumer protocol, 0 classic."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: tuple[DescribedTopicPartitions, ...]
    target_assignment: tuple[DescribedTopicPartitions, ...]
    member_type: int


@dataclass(frozen=True)
class ConsumerGroupDescription:
    group_id: str
    state: ConsumerGroupState
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[DescribedMember, ...]


class ConsumerGroup(ClassicMembers):
    """One consumer group (see the module docstring). Not thread-safe: the coordinator calls it from one
    task at a time per group."""

    def __init__(
        self,
        group_id: str,
        *,
        assignors: Mapping[str, PartitionAssignor],
        default_assignor: str,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
        max_size: int = DEFAULT_MAX_SIZE,
        member_id_factory: Callable[[], str] = new_member_id,
    ) -> None:
        if default_assignor not in assignors:
            raise ValueError(f"default assignor {default_assignor!r} is not among {sorted(assignors)}")
        super().__init__(group_id)
        self.assignors = dict(assignors)
        self.default_assignor = default_assignor
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_size = max_size
        self._new_member_id = member_id_factory

    # -- heartbeat -----------------------------------------------------------------------------------------
    def heartbeat(
        self,
        request: ConsumerGroupHeartbeatRequest,
        topics: TopicsView,
        now_ms: int,
        *,
        client_id: str = "",
        client_host: str = "",
        version: int = 1,
    ) -> HeartbeatOutcome:
        """Handle one ConsumerGroupHeartbeat (see the module docstring)."""
        validate_heartbeat_request(request, version, self.assignors)
        snap = self.snapshot()
        out: list[r.CoordinatorRecord] = []
        try:
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                epoch = self._leave_request(request, topics, out)
                return HeartbeatOutcome(request.member_id, epoch, 0, None, tuple(out), snap)
            return self._heartbeat(request, topics, now_ms, client_id, client_host, out, snap)
        except BaseException:
            self.restore(snap)
            raise

    def _check_epoch(
        self, member: ConsumerGroupMember, epoch: int, owned: Mapping[uuid.UUID, frozenset[int]] | None
    ) -> None:
        if epoch > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a greater member epoch ({epoch}) than the one known by the group "
                f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        if epoch < member.member_epoch:
            subset = owned is not None and all(
                parts <= member.assigned_partitions.get(t, frozenset()) for t, parts in owned.items() if parts
            )
            if epoch != member.previous_member_epoch or not subset:
                raise GroupError(
                    ErrorCode.FENCED_MEMBER_EPOCH,
                    f"The consumer group member has a smaller member epoch ({epoch}) than the one known by the group "
                    f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
                )

    def _resolve_member(
        self,
        req: ConsumerGroupHeartbeatRequest,
        member_id: str,
        owned: Mapping[uuid.UUID, frozenset[int]] | None,
        out: list[r.CoordinatorRecord],
    ) -> ConsumerGroupMember:
        """The member the heartbeat is from (a new one on join), after Kafka's identity and epoch checks."""
        joining = req.member_epoch == 0
        instance_id = req.instance_id
        if instance_id is None:
            member = self.members.get(member_id)
            if member is None:
                if not joining:
                    raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of the group.")
                return ConsumerGroupMember(member_id=member_id)
            if joining:
                return self._reset_for_rejoin(member)
            self._check_epoch(member, req.member_epoch, owned)
            return member
        existing_id = self.static_members.get(instance_id)
        existing = self.members.get(existing_id) if existing_id is not None else None
        if joining:
            if existing is None:
                member = self.members.get(member_id)
                return (
                    self._reset_for_rejoin(member) if member is not None else ConsumerGroupMember(member_id=member_id)
                )
            if existing.member_id == member_id:
                return self._reset_for_rejoin(existing)
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} cannot join the group because the "
                    f"instance id is owned by {existing.member_id} member.",
                )
            return self._replace_static(existing, member_id, out)
        if existing is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member {existing.member_id}.",
            )
        self._check_epoch(existing, req.member_epoch, owned)
        return existing

    @staticmethod
    def _reset_for_rejoin(member: ConsumerGroupMember) -> ConsumerGroupMember:
        return replace(
            member,
            member_epoch=0,
            previous_member_epoch=0,
            state=MemberState.STABLE,
            assigned_partitions={},
            partitions_pending_revocation={},
            rebalance_deadline_ms=None,
        )

    def _heartbeat(
        self,
        req: ConsumerGroupHeartbeatRequest,
        topics: TopicsView,
        now_ms: int,
        client_id: str,
        client_host: str,
        out: list[r.CoordinatorRecord],
        snap: GroupSnapshot,
    ) -> HeartbeatOutcome:
        joining = req.member_epoch == 0
        member_id = req.member_id
        if len(self.members) >= self.max_size and (not member_id or member_id not in self.members):
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {self.max_size} members.",
            )
        if not member_id:
            member_id = self._new_member_id()
        owned = owned_partitions(req.topic_partitions)
        original = self.members.get(member_id)
        member = self._resolve_member(req, member_id, owned, out)

        updated = replace(
            member,
            instance_id=req.instance_id if req.instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=req.rebalance_timeout_ms
            if req.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor=req.server_assignor if req.server_assignor is not None else member.server_assignor,
            subscribed_topic_names=tuple(sorted(set(req.subscribed_topic_names)))
            if req.subscribed_topic_names is not None
            else member.subscribed_topic_names,
            subscribed_topic_regex=(req.subscribed_topic_regex or None)
            if req.subscribed_topic_regex is not None
            else member.subscribed_topic_regex,
            client_id=client_id,
            client_host=client_host,
        )
        if updated.subscribed_topic_regex and updated.subscribed_topic_regex != member.subscribed_topic_regex:
            compile_regex(updated.subscribed_topic_regex)

        current = self._update_member(member, updated, topics, now_ms, owned, out)
        current = replace(current, session_deadline_ms=now_ms + self.session_timeout_ms)
        self.members[member_id] = current

        full = joining or (
            req.rebalance_timeout_ms != -1
            and (req.subscribed_topic_names is not None or req.subscribed_topic_regex is not None)
            and req.topic_partitions is not None
        )
        changed = original is None or original.assigned_partitions != current.assigned_partitions
        assignment = current.assigned_partitions if (full or changed) else None
        return HeartbeatOutcome(
            current.member_id, current.member_epoch, self.heartbeat_interval_ms, assignment, tuple(out), snap
        )

    # -- leaving and expiry ---------------------------------------------------------------------------------
    def _leave_request(
        self, req: ConsumerGroupHeartbeatRequest, topics: TopicsView, out: list[r.CoordinatorRecord]
    ) -> int:
        member_id, instance_id = req.member_id, req.instance_id
        if instance_id is None:
            if member_id not in self.members:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of the group.")
            self._fence(member_id, out, topics)
            return req.member_epoch
        existing_id = self.static_members.get(instance_id)
        if existing_id is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing_id != member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} was fenced by member {existing_id}.",
            )
        if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            member = self.members[member_id]
            leaving = replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitions_pending_revocation={})
            self._emit(out, self._current_assignment_record(leaving))
            self.members[member_id] = replace(self.members[member_id], rebalance_deadline_ms=None)
            return LEAVE_GROUP_STATIC_MEMBER_EPOCH
        self._fence(member_id, out, topics)
        return req.member_epoch

    def _fence(self, member_id: str, out: list[r.CoordinatorRecord], topics: TopicsView | None = None) -> None:
        """Remove the member (8, 7, 5 tombstones; its regex's 16 when it was the last subscriber) and bump the
        group epoch, with the metadata hash of the remaining subscriptions when ``topics`` is given (else the
        hash is recomputed on the next heartbeat, which may bump the epoch once more)."""
        member = self.members[member_id]
        for rec in self._member_tombstones(member_id):
            self._emit(out, rec)
        regex = member.subscribed_topic_regex
        if regex and regex not in self._subscribed_regexes() and regex in self.resolved_regexes:
            self._emit(out, r.CoordinatorRecord.tombstone(r.ConsumerGroupRegularExpressionKey(self.group_id, regex)))
        if topics is not None:
            new_hash = self._compute_metadata_hash(topics)
            self._metadata_version = topics.version
        else:
            new_hash = self.metadata_hash
            self._metadata_version = -1
        self._emit(out, self._epoch_record(self.group_epoch + 1, new_hash))

    def leave(self, member_id: str, topics: TopicsView | None = None) -> list[r.CoordinatorRecord]:
        """Fence ``member_id`` (e.g. DeleteGroups, a classic leave); [] when it is not a member. ``topics``
        (optional) lets the epoch record carry the new metadata hash at once."""
        if member_id not in self.members:
            return []
        out: list[r.CoordinatorRecord] = []
        self._fence(member_id, out, topics)
        return out

    def expire(self, now_ms: int, topics: TopicsView | None = None) -> list[r.CoordinatorRecord]:
        """Fence members whose session or rebalance timeout passed (``topics`` as in ``leave``). A member
        without a session deadline (loaded from the log) gets one now (a fresh session, as Kafka schedules
        on load). To undo when the append fails: ``snap = group.snapshot()`` before, ``restore(snap)``."""
        out: list[r.CoordinatorRecord] = []
        for member_id in sorted(self.members):
            m = self.members.get(member_id)
            if m is None:
                continue
            if m.session_deadline_ms <= 0:
                deadline = None
                if m.state is MemberState.UNREVOKED_PARTITIONS and m.rebalance_deadline_ms is None:
                    deadline = now_ms + m.rebalance_timeout_ms
                self.members[member_id] = replace(
                    m,
                    session_deadline_ms=now_ms + self.session_timeout_ms,
                    rebalance_deadline_ms=deadline if deadline is not None else m.rebalance_deadline_ms,
                )
                continue
            session_over = now_ms >= m.session_deadline_ms
            rebalance_over = (
                m.state is MemberState.UNREVOKED_PARTITIONS
                and m.rebalance_deadline_ms is not None
                and now_ms >= m.rebalance_deadline_ms
            )
            if session_over or rebalance_over:
                self._fence(member_id, out, topics)
        return out

    def next_deadline_ms(self) -> int | None:
        """The earliest session or rebalance deadline (when ``expire`` next has work), or None."""
        deadlines = [m.session_deadline_ms for m in self.members.values() if m.session_deadline_ms > 0]
        deadlines += [
            m.rebalance_deadline_ms
            for m in self.members.values()
            if m.rebalance_deadline_ms is not None and m.state is MemberState.UNREVOKED_PARTITIONS
        ]
        return min(deadlines) if deadlines else None

    # -- classic-protocol members (online migration; ``classic_members``) ------------------------------------
    @classmethod
    def from_classic_group(
        cls, classic: Group, topics: TopicsView, now_ms: int, **settings: Any
    ) -> tuple[ConsumerGroup, list[r.CoordinatorRecord]]:
        """The consumer group a classic group with members becomes (Kafka's online upgrade), and the records
        that create it (already applied); GroupError(GROUP_ID_NOT_FOUND) when it cannot. ``settings``: the
        constructor's keyword arguments (``assignors``, ``default_assignor``, ...). See ``classic_members``."""
        group = cls(classic.group_id, **settings)
        return group, group._adopt_classic_group(classic, topics, now_ms)

    # -- offsets --------------------------------------------------------------------------------------------
    def validate_offset_commit(
        self, member_id: str, member_epoch: int, *, api_version: int | None = None, transactional: bool = False
    ) -> None:
        """OffsetCommit (and TxnOffsetCommit) against this group: epoch < 0 commits (admin tools, manual
        assignment) are allowed only while the group has no members; otherwise the member must exist
        (UNKNOWN_MEMBER_ID) and send exactly its current epoch: STALE_MEMBER_EPOCH for a consumer-protocol
        member, ILLEGAL_GENERATION for a classic one (its generation is its epoch). With ``api_version``
        given, a consumer-protocol member's non-transactional OffsetCommit below v9 is UNSUPPORTED_VERSION."""
        if member_epoch < 0 and not self.members:
            return
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of the group.")
        classic = member.classic_member_metadata is not None
        if not transactional and not classic and api_version is not None and api_version < 9:
            raise GroupError(
                ErrorCode.UNSUPPORTED_VERSION,
                f"OffsetCommit v{api_version} from member {member_id} of a consumer group: v9 or later is required.",
            )
        if member_epoch != member.member_epoch:
            raise GroupError(
                ErrorCode.ILLEGAL_GENERATION if classic else ErrorCode.STALE_MEMBER_EPOCH,
                f"The received member epoch {member_epoch} does not match the expected member epoch "
                f"{member.member_epoch}.",
            )

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        """OffsetFetch v9+: without a member id and with epoch -1 (admin tools) always allowed; otherwise as
        ``validate_offset_commit`` for a known member."""
        if member_epoch < 0 and not member_id:
            return
        member = self.members.get(member_id or "")
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of the group.")
        if member_epoch != member.member_epoch:
            raise GroupError(
                ErrorCode.STALE_MEMBER_EPOCH,
                f"The received member epoch {member_epoch} does not match the expected member epoch "
                f"{member.member_epoch}.",
            )

    # -- describe -------------------------------------------------------------------------------------------
    def describe(self, topic_names: Callable[[uuid.UUID], str | None]) -> ConsumerGroupDescription:
        """ConsumerGroupDescribe's view; ``topic_names`` maps a topic id to its name (``TopicsView.topic_name``);
        partitions of topics it does not know are left out, as Kafka does."""

        def described(assignment: Assignment) -> tuple[DescribedTopicPartitions, ...]:
            out = []
            for topic_id, parts in sorted(assignment.items()):
                name = topic_names(topic_id)
                if name is not None:
                    out.append(DescribedTopicPartitions(topic_id, name, tuple(sorted(parts))))
            return tuple(out)

        members = tuple(
            DescribedMember(
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=m.subscribed_topic_names,
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=described(m.assigned_partitions),
                target_assignment=described(self.target_assignment.get(m.member_id, {})),
                member_type=0 if m.classic_member_metadata is not None else 1,
            )
            for _, m in sorted(self.members.items())
        )
        return ConsumerGroupDescription(
            group_id=self.group_id,
            state=self.state,
            group_epoch=self.group_epoch,
            assignment_epoch=self.assignment_epoch,
            assignor_name=self.preferred_assignor(),
            members=members,
        )
