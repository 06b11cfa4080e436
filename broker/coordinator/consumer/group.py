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
  base class); this module adds the protocol and re-exports those names.

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
import hashlib
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.protocol.apis.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

from ..group import GroupError
from . import records as r
from .assignors import MemberSubscriptionSpec, PartitionAssignor, PartitionAssignorError
from .classic_members import ClassicJoinOutcome, ClassicMembers, encode_classic_assignment
from .group_state import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupState,
    GroupSnapshot,
    ResolvedRegex,
    TopicsView,
    assignment_fields,
    subscription_fields,
)
from .member import Assignment, ConsumerGroupMember, MemberState, normalize
from .reconciliation import reconcile

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


def _owned_from_request(
    topic_partitions: Iterable[ConsumerGroupHeartbeatRequest.TopicPartitions] | None,
) -> dict[uuid.UUID, frozenset[int]] | None:
    if topic_partitions is None:
        return None
    out: dict[uuid.UUID, set[int]] = {}
    for tp in topic_partitions:
        out.setdefault(tp.topic_id, set()).update(tp.partitions)
    return {t: frozenset(p) for t, p in out.items()}


def _compile(regex: str) -> re.Pattern[str]:
    try:
        return re.compile(regex)
    except re.error as exc:
        raise GroupError(
            ErrorCode.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}",
        ) from None


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

    def preferred_assignor(self) -> str:
        """The server assignor most members ask for (ties: the name first in sort order), else the default."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return self.default_assignor
        return min(counts, key=lambda name: (-counts[name], name))

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
        self._validate_request(request, version)
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

    def _validate_request(self, req: ConsumerGroupHeartbeatRequest, version: int) -> None:
        def invalid(message: str) -> GroupError:
            return GroupError(ErrorCode.INVALID_REQUEST, message)

        epoch = req.member_epoch
        if (version >= 1 or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH) and req.member_id == "":
            raise invalid("MemberId can't be empty.")
        if req.instance_id == "":
            raise invalid("InstanceId can't be empty.")
        if req.rack_id == "":
            raise invalid("RackId can't be empty.")
        if epoch == 0:
            if req.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if req.topic_partitions is None or req.topic_partitions:
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
                raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if req.instance_id is None:
                raise invalid("InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise invalid("MemberEpoch is invalid.")
        if req.server_assignor is not None and req.server_assignor not in self.assignors:
            raise GroupError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {req.server_assignor} is not supported. "
                f"Supported assignors: {', '.join(self.assignors)}.",
            )

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

    def _replace_static(
        self, old: ConsumerGroupMember, member_id: str, out: list[r.CoordinatorRecord]
    ) -> ConsumerGroupMember:
        """Kafka's replaceMember: the new member id takes the old one's subscription, target and partitions."""
        new = replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        target = self.target_assignment.get(old.member_id, {})
        for rec in self._member_tombstones(old.member_id):
            self._emit(out, rec)
        self._emit(out, self._member_metadata_record(new))
        self._emit(out, self._target_member_record(member_id, target))
        self._emit(out, self._current_assignment_record(new))
        return self.members[member_id]

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
        owned = _owned_from_request(req.topic_partitions)
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
            _compile(updated.subscribed_topic_regex)

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

    def _update_member(
        self,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        topics: TopicsView,
        now_ms: int,
        owned: Mapping[uuid.UUID, frozenset[int]] | None,
        out: list[r.CoordinatorRecord],
    ) -> ConsumerGroupMember:
        """Kafka's three steps for a member that heartbeats or joins: persist its new subscription (bumping the
        group epoch when subscriptions, resolved regexes or the subscribed topics' metadata changed), recompute
        the target assignment when the group epoch is ahead, and reconcile the member toward its target
        (``owned``: the partitions it reports, None when it did not). ``member`` is the member before the
        request (as resolved), ``updated`` with the request's fields. Returns the member as it now is."""
        bump = self.group_epoch == 0 or not self._created
        member_id = updated.member_id
        known = self.members.get(member_id)
        if known is None or subscription_fields(known) != subscription_fields(updated):
            self._emit(out, self._member_metadata_record(updated))
            if known is None or known.subscribed_topic_names != updated.subscribed_topic_names:
                bump = True
        if known is not None and (
            known.member_epoch != updated.member_epoch
            or known.assigned_partitions != updated.assigned_partitions
            or known.partitions_pending_revocation != updated.partitions_pending_revocation
        ):
            # A rejoin reset (epoch 0, no partitions): persisted, and the partitions are released.
            self._emit(out, self._current_assignment_record(updated))
        old_regex = member.subscribed_topic_regex if known is not None else None
        if old_regex != updated.subscribed_topic_regex:
            bump = True
            if old_regex and old_regex not in self._subscribed_regexes():
                self._emit(
                    out, r.CoordinatorRecord.tombstone(r.ConsumerGroupRegularExpressionKey(self.group_id, old_regex))
                )
        bump |= self._refresh_regexes(topics, now_ms, out)
        if bump or topics.version != self._metadata_version:
            new_hash = self._compute_metadata_hash(topics)
            self._metadata_version = topics.version
            if new_hash != self.metadata_hash:
                bump = True
            if bump:
                self._emit(out, self._epoch_record(self.group_epoch + 1, new_hash))

        if self.group_epoch > self.assignment_epoch:
            self._update_target_assignment(topics, now_ms, out)

        current = self.members[member_id]
        if not (current.state is MemberState.STABLE and current.member_epoch == self.assignment_epoch):
            reconciled = reconcile(
                current,
                target_epoch=self.assignment_epoch,
                target=self.target_assignment.get(member_id, {}),
                subscribed_topic_ids=self._member_topic_ids(current, topics),
                partition_owner=self.partition_owner,
                owned=owned,
            )
            if assignment_fields(reconciled) != assignment_fields(current):
                self._emit(out, self._current_assignment_record(reconciled))
                current = self.members[member_id]
                if current.state is MemberState.UNREVOKED_PARTITIONS:
                    current = replace(current, rebalance_deadline_ms=now_ms + current.rebalance_timeout_ms)
                else:
                    current = replace(current, rebalance_deadline_ms=None)
        return current

    def _subscribed_regexes(self) -> set[str]:
        return {m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex}

    def _refresh_regexes(self, topics: TopicsView, now_ms: int, out: list[r.CoordinatorRecord]) -> bool:
        """Resolve regexes that are new or stale (``topics.version`` moved); True when a resolution changed."""
        changed = False
        names: Collection[str] | None = None
        for regex in sorted(self._subscribed_regexes()):
            known = self.resolved_regexes.get(regex)
            if known is not None and known.version == topics.version:
                continue
            if names is None:
                names = topics.topic_names()
            pattern = _compile(regex)
            matched = frozenset(n for n in names if pattern.fullmatch(n))
            if known is None or known.topics != matched:
                changed = True
            if known is None or known.topics != matched or known.version != topics.version:
                self._emit(
                    out,
                    r.CoordinatorRecord(
                        r.ConsumerGroupRegularExpressionKey(self.group_id, regex),
                        r.ConsumerGroupRegularExpressionValue(tuple(sorted(matched)), topics.version, now_ms),
                    ),
                )
        return changed

    def _compute_metadata_hash(self, topics: TopicsView) -> int:
        h = hashlib.blake2b(digest_size=8)
        for name in sorted(self.subscribed_topic_names()):
            topic_id = topics.topic_id(name)
            if topic_id is None:
                continue
            count = topics.partition_count(topic_id)
            h.update(f"{name}\0{topic_id}\0{count}\0".encode())
            for p in range(max(count, 0)):
                racks = topics.partition_racks(topic_id, p)
                if racks:
                    h.update(f"{p}:{','.join(sorted(racks))}\0".encode())
        if not self.subscribed_topic_names():
            return 0
        return int.from_bytes(h.digest(), "big", signed=True)

    def _update_target_assignment(self, topics: TopicsView, now_ms: int, out: list[r.CoordinatorRecord]) -> None:
        assignor = self.assignors.get(self.preferred_assignor()) or self.assignors[self.default_assignor]
        specs = {
            m.member_id: MemberSubscriptionSpec(
                subscribed_topic_ids=self._member_topic_ids(m, topics),
                assignment=self.target_assignment.get(m.member_id, {}),
                rack_id=m.rack_id,
                instance_id=m.instance_id,
            )
            for m in self.members.values()
        }
        try:
            new_target = assignor.assign(specs, topics)
        except PartitionAssignorError as exc:
            raise GroupError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Failed to compute a new target assignment for epoch {self.group_epoch}: {exc}",
            ) from None
        for member_id in sorted(new_target):
            assignment = normalize(new_target[member_id])
            if member_id not in self.target_assignment or self.target_assignment[member_id] != assignment:
                self._emit(out, self._target_member_record(member_id, assignment))
        self._emit(
            out,
            r.CoordinatorRecord(
                r.ConsumerGroupTargetAssignmentMetadataKey(self.group_id),
                r.ConsumerGroupTargetAssignmentMetadataValue(self.group_epoch, now_ms),
            ),
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
        cls,
        classic: Group,
        topics: TopicsView,
        now_ms: int,
        *,
        assignors: Mapping[str, PartitionAssignor],
        default_assignor: str,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
        max_size: int = DEFAULT_MAX_SIZE,
        member_id_factory: Callable[[], str] = new_member_id,
    ) -> tuple[ConsumerGroup, list[r.CoordinatorRecord]]:
        """The consumer group a classic group with members becomes (Kafka's online upgrade), and the records
        that create it (already applied); GroupError(GROUP_ID_NOT_FOUND) when it cannot. See
        ``classic_members``."""
        group = cls(
            classic.group_id,
            assignors=assignors,
            default_assignor=default_assignor,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            max_size=max_size,
            member_id_factory=member_id_factory,
        )
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
