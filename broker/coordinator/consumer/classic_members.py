"""Classic-protocol members inside a KIP-848 consumer group (Kafka's online migration), the model side.

Kafka lets a classic group (JoinGroup/SyncGroup members with protocol type "consumer") become a consumer group
when a ConsumerGroupHeartbeat joins it (an *upgrade*), and lets classic members keep using JoinGroup, SyncGroup,
Heartbeat and LeaveGroup against the consumer group; the coordinator runs the reconciliation for them too.
``ClassicMembers`` (a base class of ``ConsumerGroup``) holds ``classic_join``, ``classic_sync``,
``classic_heartbeat``, ``classic_leave`` and the upgrade behind ``ConsumerGroup.from_classic_group`` (Kafka's
``ConsumerGroup.fromClassicGroup``,
``classicGroupJoinToConsumerGroup``, ``classicGroupSyncToConsumerGroup``, ``classicGroupHeartbeatToConsumerGroup``
and ``classicGroupLeaveToConsumerGroup``):

- Upgrade (``ConsumerGroup.from_classic_group``): the group epoch and the assignment epoch become the classic generation;
  every classic member becomes a STABLE member at that epoch whose assigned and target partitions are its last
  classic assignment (topics unknown by name are dropped), its subscription the one in its JoinGroup metadata,
  with ``classic_member_metadata`` (session timeout, protocols). Records, in Kafka's order: every member's 5,
  the group's 3, every member's 7, the 6, every member's 8. Refused (GROUP_ID_NOT_FOUND, the error the joining
  heartbeat gets, with the reason) when the classic group's protocol type is not "consumer", it has more
  members than ``max_size``, or an assignment carries user data (a custom client assignor's, which the server
  assignors would lose). Which groups to upgrade (``group.consumer.migration.policy``, the group's state) and
  the classic group's tombstone are the coordinator's.
- JoinGroup (``classic_join``): the member (a new member id must already be allocated: MEMBER_ID_REQUIRED is
  the caller's) is created or updated from its protocols' subscription (topics, rack, owned partitions),
  then goes through the same steps as a heartbeat, reconciled with the owned partitions its subscription
  reports (none for eager clients, which revoke everything before rejoining). The answer: member id,
  generation = the member epoch, protocol type "consumer", protocol name = its first protocol; no leader
  duties (the caller answers with an empty leader and no members, as Kafka). INCONSISTENT_GROUP_PROTOCOL when
  no protocol it offers is supported by every classic member (or the type is not "consumer");
  GROUP_MAX_SIZE_REACHED; a static member replaces the member holding its instance id.
- SyncGroup (``classic_sync``): the member's assigned partitions (encode them with
  ``encode_classic_assignment``); UNKNOWN_MEMBER_ID (unknown, or not a classic member), FENCED_INSTANCE_ID,
  ILLEGAL_GENERATION (generation is not its epoch), INCONSISTENT_GROUP_PROTOCOL (type or name differ),
  REBALANCE_IN_PROGRESS (the group epoch moved past it and it is not revoking).
- Heartbeat (``classic_heartbeat``): refreshes the session; REBALANCE_IN_PROGRESS (rejoin) when the group
  epoch is past the member's, it must revoke, or partitions it waits for were released.
- LeaveGroup (``classic_leave``): fences the member (instance id checked).

Sessions: a classic member's session timeout is its own (from JoinGroup), not the group's. Kafka's join and
sync timeouts for classic members (a member that does not rejoin or sync within its rebalance timeout) are not
modelled; the session timeout fences such a member. The downgrade (the group going back to classic when the
last consumer-protocol member leaves) is not done here but by the coordinator (``group_consumer_classic``).

Layout: ``ClassicMembers`` stands on ``member_update.MemberUpdates`` (the steps a heartbeat and a classic
JoinGroup share), itself on ``group_state.GroupRecords``; ``subscription_version`` and
``encode_classic_assignment`` serve the coordinator's SyncGroup answers and downgrade.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from spark_kafkalog.client.consumer.consumer_protocol import (
    Assignment as ProtocolAssignment,
)
from spark_kafkalog.client.consumer.consumer_protocol import (
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

from ..group import GroupError
from . import records as r
from .group_state import GroupSnapshot, TopicsView
from .member import Assignment, ConsumerGroupMember, MemberState, normalize
from .member_update import MemberUpdates

if TYPE_CHECKING:
    from ..group import Group

CONSUMER_PROTOCOL_TYPE = "consumer"


@dataclass(frozen=True)
class ClassicJoinOutcome:
    """A classic member's JoinGroup answer against a consumer group, and the records to persist first."""

    member_id: str
    generation_id: int
    """The member epoch after the join."""
    protocol_name: str
    records: tuple[r.CoordinatorRecord, ...]
    snapshot: GroupSnapshot = field(repr=False, compare=False)
    """The state before the join, for ``ConsumerGroup.revert``."""


def _subscription(protocols: Sequence[tuple[str, bytes]]) -> Subscription:
    """The ConsumerProtocolSubscription of the member's first protocol (all carry the same one)."""
    if not protocols:
        raise GroupError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "the member offers no protocol")
    try:
        return decode_subscription(protocols[0][1])
    except Exception as exc:  # a malformed embedded subscription: Kafka refuses the member
        raise GroupError(
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"the member's subscription cannot be read: {exc}"
        ) from None


def _by_ids(partitions: Sequence[TopicPartition], topics: TopicsView) -> dict[uuid.UUID, frozenset[int]]:
    """Partitions named by topic, by topic id; unknown topics are dropped."""
    out: dict[uuid.UUID, set[int]] = {}
    for tp in partitions:
        topic_id = topics.topic_id(tp.topic)
        if topic_id is not None:
            out.setdefault(topic_id, set()).add(tp.partition)
    return normalize(out)


def _classic_metadata(session_timeout_ms: int, protocols: Sequence[tuple[str, bytes]]) -> r.ClassicMemberMetadata:
    return r.ClassicMemberMetadata(
        session_timeout_ms=session_timeout_ms,
        supported_protocols=tuple(r.ClassicProtocol(name, bytes(meta)) for name, meta in protocols),
    )


def _protocol_names(m: ConsumerGroupMember) -> list[str]:
    meta = m.classic_member_metadata
    return [p.name for p in meta.supported_protocols] if meta is not None else []


class ClassicMembers(MemberUpdates):
    """The classic-protocol side of ``ConsumerGroup`` (its base; see the module docstring)."""

    if TYPE_CHECKING:  # provided by ConsumerGroup
        max_size: int
        session_timeout_ms: int

        def leave(self, member_id: str, topics: TopicsView | None = None) -> list[r.CoordinatorRecord]: ...

    def _adopt_classic_group(self, classic: Group, topics: TopicsView, now_ms: int) -> list[r.CoordinatorRecord]:
        """Make this empty group the upgrade of ``classic`` (see the module docstring); the records to persist,
        already applied."""
        if classic.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Group {classic.group_id} is a classic group of protocol type {classic.protocol_type!r}, not "
                f"{CONSUMER_PROTOCOL_TYPE!r}: it cannot become a consumer self.",
            )
        if len(classic.members) > self.max_size:
            raise GroupError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Group {classic.group_id} has {len(classic.members)} members, more than self.consumer.max.size "
                f"({self.max_size}): it cannot become a consumer self.",
            )
        epoch = classic.generation
        members: list[ConsumerGroupMember] = []
        for cm in sorted(classic.members.values(), key=lambda m: m.member_id):
            assigned: Assignment = {}
            if cm.assignment:
                assignment = decode_assignment(cm.assignment)
                if assignment.user_data:
                    raise GroupError(
                        ErrorCode.GROUP_ID_NOT_FOUND,
                        f"Group {classic.group_id}: member {cm.member_id}'s assignment carries user data of a client "
                        "assignor, which the server-side assignors would lose.",
                    )
                assigned = _by_ids(assignment.partitions, topics)
            protocols = [(name, meta) for name, meta in cm.protocols if name == classic.protocol_name] or list(
                cm.protocols
            )
            subscription = _subscription(protocols)
            members.append(
                ConsumerGroupMember(
                    member_id=cm.member_id,
                    instance_id=cm.group_instance_id,
                    rack_id=subscription.rack_id,
                    client_id=cm.client_id,
                    client_host=cm.client_host,
                    subscribed_topic_names=tuple(sorted(set(subscription.topics))),
                    rebalance_timeout_ms=cm.rebalance_timeout_ms,
                    member_epoch=epoch,
                    previous_member_epoch=epoch,
                    state=MemberState.STABLE,
                    assigned_partitions=assigned,
                    classic_member_metadata=_classic_metadata(cm.session_timeout_ms, cm.protocols),
                )
            )
        out: list[r.CoordinatorRecord] = []
        for m in members:
            self._emit(out, self._member_metadata_record(m))
        metadata_hash = self._compute_metadata_hash(topics)
        self._metadata_version = topics.version
        self._emit(out, self._epoch_record(epoch, metadata_hash))
        for m in members:
            self._emit(out, self._target_member_record(m.member_id, m.assigned_partitions))
        self._emit(
            out,
            r.CoordinatorRecord(
                r.ConsumerGroupTargetAssignmentMetadataKey(self.group_id),
                r.ConsumerGroupTargetAssignmentMetadataValue(epoch, now_ms),
            ),
        )
        for m in members:
            self._emit(out, self._current_assignment_record(m))
            meta = m.classic_member_metadata
            assert meta is not None
            self.members[m.member_id] = replace(
                self.members[m.member_id], session_deadline_ms=now_ms + meta.session_timeout_ms
            )
        return out

    def _supports(self, protocol_type: str | None, names: Sequence[str]) -> bool:
        """Kafka's ``supportsClassicProtocols``: type "consumer", and (no classic member yet and some protocol) or
        a protocol every classic member supports."""
        if protocol_type != CONSUMER_PROTOCOL_TYPE:
            return False
        classic = [m for m in self.members.values() if m.classic_member_metadata is not None]
        if not classic:
            return bool(names)
        return any(all(name in _protocol_names(m) for m in classic) for name in names)

    def classic_join(
        self,
        *,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocols: Sequence[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
        client_host: str,
        topics: TopicsView,
        now_ms: int,
    ) -> ClassicJoinOutcome:
        """JoinGroup of a classic member against the consumer group (see the module docstring)."""
        if not member_id:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, "a classic member joins a consumer group with a member id")
        snap = self.snapshot()
        out: list[r.CoordinatorRecord] = []
        try:
            if len(self.members) >= self.max_size and member_id not in self.members:
                raise GroupError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The consumer group has reached its maximum capacity of {self.max_size} members.",
                )
            if not self._supports(protocol_type, [name for name, _ in protocols]):
                raise GroupError(
                    ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Member {member_id}'s protocols are not supported."
                )
            subscription = _subscription(protocols)
            if instance_id is None:
                member = self.members.get(member_id) or ConsumerGroupMember(member_id=member_id)
            else:
                holder = self.static_members.get(instance_id)
                if holder is None or holder == member_id:
                    member = self.members.get(member_id) or ConsumerGroupMember(member_id=member_id)
                else:
                    member = self._replace_static(self.members[holder], member_id, out)
            owned = _by_ids(subscription.owned_partitions, topics)
            updated = replace(
                member,
                instance_id=instance_id if instance_id is not None else member.instance_id,
                rack_id=subscription.rack_id or member.rack_id,
                rebalance_timeout_ms=rebalance_timeout_ms
                if rebalance_timeout_ms != -1
                else member.rebalance_timeout_ms,
                subscribed_topic_names=tuple(sorted(set(subscription.topics))),
                client_id=client_id,
                client_host=client_host,
                classic_member_metadata=_classic_metadata(session_timeout_ms, protocols),
            )
            current = self._update_member(member, updated, topics, now_ms, owned, out)
            current = replace(current, session_deadline_ms=now_ms + session_timeout_ms)
            self.members[member_id] = current
            return ClassicJoinOutcome(member_id, current.member_epoch, protocols[0][0], tuple(out), snap)
        except BaseException:
            self.restore(snap)
            raise

    def _classic_member(self, member_id: str, instance_id: str | None) -> ConsumerGroupMember:
        """Kafka's ``validateConsumerGroupMember`` plus ``throwIfMemberDoesNotUseClassicProtocol``."""
        if instance_id is None:
            member = self.members.get(member_id)
            if member is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of the self.")
        else:
            holder = self.static_members.get(instance_id)
            if holder is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member with instance id {instance_id} is not a member of group {self.group_id}.",
                )
            if holder != member_id:
                raise GroupError(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} was fenced by member {holder}.",
                )
            member = self.members[holder]
        if member.classic_member_metadata is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} does not use the classic protocol.")
        return member

    @staticmethod
    def _check_generation(member: ConsumerGroupMember, generation_id: int) -> None:
        if generation_id != member.member_epoch:
            raise GroupError(
                ErrorCode.ILLEGAL_GENERATION,
                f"The request generation id {generation_id} is not equal to the member epoch {member.member_epoch} "
                f"of member {member.member_id}.",
            )

    def _touch(self, member: ConsumerGroupMember, now_ms: int) -> None:
        meta = member.classic_member_metadata
        timeout = meta.session_timeout_ms if meta is not None else self.session_timeout_ms
        self.members[member.member_id] = replace(member, session_deadline_ms=now_ms + timeout)

    def classic_sync(
        self,
        *,
        member_id: str,
        instance_id: str | None,
        generation_id: int,
        protocol_type: str | None,
        protocol_name: str | None,
        now_ms: int,
    ) -> Assignment:
        """SyncGroup of a classic member: its assigned partitions (see the module docstring)."""
        member = self._classic_member(member_id, instance_id)
        self._check_generation(member, generation_id)
        names = _protocol_names(member)
        if protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"The protocol type {protocol_type} from member {member_id} request is not equal to the group protocol "
                f"type {CONSUMER_PROTOCOL_TYPE}.",
            )
        if protocol_name is not None and names and protocol_name != names[0]:
            raise GroupError(
                ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                f"The protocol name {protocol_name} from member {member_id} request is not equal to the protocol name "
                f"{names[0]} returned in the join response.",
            )
        if self.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            raise GroupError(
                ErrorCode.REBALANCE_IN_PROGRESS,
                f"A new rebalance is triggered in group {self.group_id} and member {member_id} should rejoin to catch up.",
            )
        self._touch(member, now_ms)
        return member.assigned_partitions

    def _waiting_on_unreleased(self, member: ConsumerGroupMember) -> bool:
        """Kafka's ``waitingOnUnreleasedPartition``: a target partition it lacks is still held by someone."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        for topic_id, parts in self.target_assignment.get(member.member_id, {}).items():
            have = member.assigned_partitions.get(topic_id, frozenset())
            for p in parts:
                if p not in have and self.partition_owner(topic_id, p) is not None:
                    return True
        return False

    def classic_heartbeat(self, *, member_id: str, instance_id: str | None, generation_id: int, now_ms: int) -> None:
        """Heartbeat of a classic member: refreshes its session (even when the answer is REBALANCE_IN_PROGRESS)."""
        member = self._classic_member(member_id, instance_id)
        self._check_generation(member, generation_id)
        self._touch(member, now_ms)
        if (
            member.member_epoch < self.group_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (member.state is MemberState.UNRELEASED_PARTITIONS and not self._waiting_on_unreleased(member))
        ):
            raise GroupError(
                ErrorCode.REBALANCE_IN_PROGRESS,
                f"A new rebalance is triggered in group {self.group_id} and member {member_id} should rejoin to catch up.",
            )

    def classic_leave(
        self, *, member_id: str, instance_id: str | None, topics: TopicsView | None = None
    ) -> list[r.CoordinatorRecord]:
        """LeaveGroup of one member (classic or not, as Kafka) from the consumer group: fenced, the records."""
        if instance_id is None:
            if member_id not in self.members:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of the self.")
            target = member_id
        else:
            holder = self.static_members.get(instance_id)
            if holder is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
            if member_id and holder != member_id:
                raise GroupError(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"Static member {member_id} with instance id {instance_id} was fenced by member {holder}.",
                )
            target = holder
        return self.leave(target, topics)


def subscription_version(metadata: bytes) -> int:
    """The ConsumerProtocol version a classic member's subscription (its JoinGroup protocol metadata) starts
    with, its ``int16`` header, clamped to 0-3 (the versions ``encode_classic_assignment`` writes); 0 when the
    metadata is shorter than the header. Its assignment is answered at that version."""
    if len(metadata) < 2:
        return 0
    return min(max(int.from_bytes(metadata[:2], "big", signed=True), 0), 3)


def encode_classic_assignment(
    assignment: Mapping[uuid.UUID, frozenset[int]], topic_name: Callable[[uuid.UUID], str | None], version: int = 0
) -> bytes:
    """SyncGroup's ``assignment`` bytes: a ConsumerProtocolAssignment (topics by name, sorted, partitions
    ascending; unknown ids left out) at ``version`` (0-3; all share one layout)."""
    partitions: list[TopicPartition] = []
    for topic_id, parts in assignment.items():
        name = topic_name(topic_id)
        if name is not None:
            partitions.extend(TopicPartition(name, p) for p in sorted(parts))
    partitions.sort()
    return encode_assignment(ProtocolAssignment(partitions), version)
