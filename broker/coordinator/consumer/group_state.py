"""The persisted state of one KIP-848 consumer group and its coordinator records (``records.py``):
``GroupRecords`` holds the group epoch, the members, the target assignment and the resolved regular
expressions, builds the records that change them and applies records (``replay``), the only writer of that
state, so records replayed into a fresh group rebuild it. ``ConsumerGroup`` (``group.py``) adds the protocol.

Also here: ``ConsumerGroupState`` (derived as Kafka does), ``TopicsView`` (what the coordinator provides over
its metadata cache) and ``GroupSnapshot`` (for reverting a change whose records could not be written).
Not thread-safe (one task at a time per group).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from . import records as r
from .assignors import SubscribedTopicDescriber
from .member import Assignment, ConsumerGroupMember, MemberState, member_state, normalize

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class ConsumerGroupState(enum.Enum):
    """Kafka's ``ConsumerGroup.ConsumerGroupState``; the value is the name ListGroups/Describe show."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class TopicsView(SubscribedTopicDescriber, Protocol):
    """The coordinator's view of the cluster's topics (it implements this over the metadata cache)."""

    @property
    def version(self) -> int:
        """Changes whenever a topic is created, deleted or grows (regexes are re-resolved then)."""
        ...

    def topic_id(self, name: str) -> uuid.UUID | None:
        """The topic's id, or None when no such topic exists."""
        ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """The topic's name, or None when no topic has this id."""
        ...

    def topic_names(self) -> Collection[str]:
        """Every topic's name (what a regex is matched against)."""
        ...


@dataclass(frozen=True)
class ResolvedRegex:
    """The topic names a regex matched (record 16), at metadata ``version``, resolved at ``timestamp``."""

    topics: frozenset[str]
    version: int
    timestamp: int


@dataclass(frozen=True)
class GroupSnapshot:
    """The group's whole state at one moment (opaque; for ``restore``)."""

    group_epoch: int
    assignment_epoch: int
    assignment_timestamp: int
    metadata_hash: int
    members: dict[str, ConsumerGroupMember]
    static_members: dict[str, str]
    target: dict[str, Assignment]
    owners: dict[tuple[uuid.UUID, int], str]
    regexes: dict[str, ResolvedRegex]
    partition_metadata: r.ConsumerGroupPartitionMetadataValue | None
    metadata_version: int
    deleted: bool
    created: bool


def _current_partitions(assignment: Assignment) -> tuple[r.TopicPartitions, ...]:
    """Record 8's form of an assignment: sorted by topic id, partitions ascending."""
    return tuple(r.TopicPartitions(t, tuple(sorted(p))) for t, p in sorted(assignment.items()) if p)


def _target_partitions(assignment: Assignment) -> tuple[r.TopicPartition, ...]:
    """Record 7's form of an assignment: sorted by topic id, partitions ascending."""
    return tuple(r.TopicPartition(t, tuple(sorted(p))) for t, p in sorted(assignment.items()) if p)


def _assignment_from_record(entries: Iterable[r.TopicPartition] | Iterable[r.TopicPartitions]) -> Assignment:
    out: dict[uuid.UUID, set[int]] = {}
    for e in entries:
        out.setdefault(e.topic_id, set()).update(e.partitions)
    return normalize(out)


class GroupRecords:
    """A consumer group's persisted state and its records (see the module docstring)."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        self.metadata_hash = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        self.static_members: dict[str, str] = {}
        """instance id -> member id."""
        self.target_assignment: dict[str, Assignment] = {}
        self._owners: dict[tuple[uuid.UUID, int], str] = {}
        """(topic id, partition) -> the member holding it (assigned or pending revocation)."""
        self.resolved_regexes: dict[str, ResolvedRegex] = {}
        self.partition_metadata: r.ConsumerGroupPartitionMetadataValue | None = None
        """Record 4 as last replayed (written by Kafka before 4.1; read only)."""
        self._metadata_version = -1
        """``TopicsView.version`` the metadata hash was last computed at (in memory only)."""
        self._deleted = False
        self._created = False
        """Whether a group record (3) exists: replayed or written."""

    # -- queries -------------------------------------------------------------------------------------------
    @property
    def is_empty(self) -> bool:
        return not self.members

    @property
    def state(self) -> ConsumerGroupState:
        if self._deleted:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE:
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def partition_owner(self, topic_id: uuid.UUID, partition: int) -> str | None:
        """The member holding the partition now (assigned or pending revocation), or None."""
        return self._owners.get((topic_id, partition))

    def subscribed_topic_names(self) -> set[str]:
        """Every topic a member subscribes to, by name or through a resolved regex."""
        names: set[str] = set()
        for m in self.members.values():
            names.update(self._member_topic_names(m))
        return names

    def _member_topic_names(self, m: ConsumerGroupMember) -> set[str]:
        names = set(m.subscribed_topic_names)
        if m.subscribed_topic_regex:
            resolved = self.resolved_regexes.get(m.subscribed_topic_regex)
            if resolved is not None:
                names |= resolved.topics
        return names

    def _member_topic_ids(self, m: ConsumerGroupMember, topics: TopicsView) -> frozenset[uuid.UUID]:
        ids = set()
        for name in self._member_topic_names(m):
            topic_id = topics.topic_id(name)
            if topic_id is not None:
                ids.add(topic_id)
        return frozenset(ids)

    # -- snapshots -----------------------------------------------------------------------------------------
    def snapshot(self) -> GroupSnapshot:
        return GroupSnapshot(
            group_epoch=self.group_epoch,
            assignment_epoch=self.assignment_epoch,
            assignment_timestamp=self.assignment_timestamp,
            metadata_hash=self.metadata_hash,
            members=dict(self.members),
            static_members=dict(self.static_members),
            target=dict(self.target_assignment),
            owners=dict(self._owners),
            regexes=dict(self.resolved_regexes),
            partition_metadata=self.partition_metadata,
            metadata_version=self._metadata_version,
            deleted=self._deleted,
            created=self._created,
        )

    def restore(self, snap: GroupSnapshot) -> None:
        """Put the group back to ``snap`` (everything since is discarded)."""
        self.group_epoch = snap.group_epoch
        self.assignment_epoch = snap.assignment_epoch
        self.assignment_timestamp = snap.assignment_timestamp
        self.metadata_hash = snap.metadata_hash
        self.members = dict(snap.members)
        self.static_members = dict(snap.static_members)
        self.target_assignment = dict(snap.target)
        self._owners = dict(snap.owners)
        self.resolved_regexes = dict(snap.regexes)
        self.partition_metadata = snap.partition_metadata
        self._metadata_version = snap.metadata_version
        self._deleted = snap.deleted
        self._created = snap.created

    def revert(self, snap: GroupSnapshot) -> None:
        """Undo a heartbeat whose records could not be appended (``outcome.snapshot``)."""
        self.restore(snap)

    # -- replay --------------------------------------------------------------------------------------------
    def replay(self, record: r.CoordinatorRecord) -> None:
        """Apply one record of this group (written by us or read back while loading)."""
        key, value = record.key, record.value
        if isinstance(key, r.ConsumerGroupMetadataKey):
            if value is None:
                self._deleted = True
                self._created = False
                return
            assert isinstance(value, r.ConsumerGroupMetadataValue)
            self.group_epoch = value.epoch
            self.metadata_hash = value.metadata_hash
            self._created = True
            self._deleted = False
        elif isinstance(key, r.ConsumerGroupPartitionMetadataKey):
            assert value is None or isinstance(value, r.ConsumerGroupPartitionMetadataValue)
            self.partition_metadata = value
        elif isinstance(key, r.ConsumerGroupMemberMetadataKey):
            self._replay_member_metadata(key.member_id, value)
        elif isinstance(key, r.ConsumerGroupTargetAssignmentMetadataKey):
            if value is None:
                self.assignment_epoch = 0
                self.assignment_timestamp = 0
                return
            assert isinstance(value, r.ConsumerGroupTargetAssignmentMetadataValue)
            self.assignment_epoch = value.assignment_epoch
            self.assignment_timestamp = value.assignment_timestamp
        elif isinstance(key, r.ConsumerGroupTargetAssignmentMemberKey):
            if value is None:
                self.target_assignment.pop(key.member_id, None)
                return
            assert isinstance(value, r.ConsumerGroupTargetAssignmentMemberValue)
            self.target_assignment[key.member_id] = _assignment_from_record(value.topic_partitions)
        elif isinstance(key, r.ConsumerGroupCurrentMemberAssignmentKey):
            self._replay_current_assignment(key.member_id, value)
        elif isinstance(key, r.ConsumerGroupRegularExpressionKey):
            if value is None:
                self.resolved_regexes.pop(key.regular_expression, None)
                return
            assert isinstance(value, r.ConsumerGroupRegularExpressionValue)
            self.resolved_regexes[key.regular_expression] = ResolvedRegex(
                frozenset(value.topics), value.version, value.timestamp
            )

    def _replay_member_metadata(self, member_id: str, value: r.ConsumerGroupRecordValue | None) -> None:
        old = self.members.get(member_id)
        if value is None:
            if old is not None:
                self._put_member(old, None)
            return
        assert isinstance(value, r.ConsumerGroupMemberMetadataValue)
        base = old if old is not None else ConsumerGroupMember(member_id=member_id)
        new = replace(
            base,
            instance_id=value.instance_id,
            rack_id=value.rack_id,
            client_id=value.client_id,
            client_host=value.client_host,
            subscribed_topic_names=tuple(sorted(set(value.subscribed_topic_names))),
            subscribed_topic_regex=value.subscribed_topic_regex or None,
            rebalance_timeout_ms=value.rebalance_timeout_ms,
            server_assignor=value.server_assignor,
            classic_member_metadata=value.classic_member_metadata,
        )
        self._put_member(old, new)

    def _replay_current_assignment(self, member_id: str, value: r.ConsumerGroupRecordValue | None) -> None:
        old = self.members.get(member_id)
        if value is None:
            if old is not None:
                self._put_member(
                    old,
                    replace(
                        old,
                        member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                        previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                        state=MemberState.STABLE,
                        assigned_partitions={},
                        partitions_pending_revocation={},
                    ),
                )
            return
        assert isinstance(value, r.ConsumerGroupCurrentMemberAssignmentValue)
        base = old if old is not None else ConsumerGroupMember(member_id=member_id)
        new = replace(
            base,
            member_epoch=value.member_epoch,
            previous_member_epoch=value.previous_member_epoch,
            state=member_state(value.state),
            assigned_partitions=_assignment_from_record(value.assigned_partitions),
            partitions_pending_revocation=_assignment_from_record(value.partitions_pending_revocation),
        )
        self._put_member(old, new)

    def _put_member(self, old: ConsumerGroupMember | None, new: ConsumerGroupMember | None) -> None:
        """Replace ``old`` by ``new`` (None: remove), keeping the static and ownership indexes."""
        if old is not None:
            for topic_id, parts in (*old.assigned_partitions.items(), *old.partitions_pending_revocation.items()):
                for p in parts:
                    if self._owners.get((topic_id, p)) == old.member_id:
                        del self._owners[(topic_id, p)]
            if old.instance_id is not None and self.static_members.get(old.instance_id) == old.member_id:
                del self.static_members[old.instance_id]
            if new is None:
                del self.members[old.member_id]
        if new is not None:
            self.members[new.member_id] = new
            if new.instance_id is not None:
                self.static_members[new.instance_id] = new.member_id
            for topic_id, parts in (*new.assigned_partitions.items(), *new.partitions_pending_revocation.items()):
                for p in parts:
                    self._owners[(topic_id, p)] = new.member_id

    # -- record builders -----------------------------------------------------------------------------------
    def _member_metadata_record(self, m: ConsumerGroupMember) -> r.CoordinatorRecord:
        return r.CoordinatorRecord(
            r.ConsumerGroupMemberMetadataKey(self.group_id, m.member_id),
            r.ConsumerGroupMemberMetadataValue(
                client_id=m.client_id,
                client_host=m.client_host,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                subscribed_topic_names=m.subscribed_topic_names,
                subscribed_topic_regex=m.subscribed_topic_regex,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                server_assignor=m.server_assignor,
                classic_member_metadata=m.classic_member_metadata,
            ),
        )

    def _current_assignment_record(self, m: ConsumerGroupMember) -> r.CoordinatorRecord:
        return r.CoordinatorRecord(
            r.ConsumerGroupCurrentMemberAssignmentKey(self.group_id, m.member_id),
            r.ConsumerGroupCurrentMemberAssignmentValue(
                member_epoch=m.member_epoch,
                previous_member_epoch=m.previous_member_epoch,
                state=m.state.value,
                assigned_partitions=_current_partitions(m.assigned_partitions),
                partitions_pending_revocation=_current_partitions(m.partitions_pending_revocation),
            ),
        )

    def _target_member_record(self, member_id: str, assignment: Assignment) -> r.CoordinatorRecord:
        return r.CoordinatorRecord(
            r.ConsumerGroupTargetAssignmentMemberKey(self.group_id, member_id),
            r.ConsumerGroupTargetAssignmentMemberValue(_target_partitions(assignment)),
        )

    def _epoch_record(self, epoch: int, metadata_hash: int) -> r.CoordinatorRecord:
        return r.CoordinatorRecord(
            r.ConsumerGroupMetadataKey(self.group_id), r.ConsumerGroupMetadataValue(epoch, metadata_hash)
        )

    def _member_tombstones(self, member_id: str) -> list[r.CoordinatorRecord]:
        return [
            r.CoordinatorRecord.tombstone(r.ConsumerGroupCurrentMemberAssignmentKey(self.group_id, member_id)),
            r.CoordinatorRecord.tombstone(r.ConsumerGroupTargetAssignmentMemberKey(self.group_id, member_id)),
            r.CoordinatorRecord.tombstone(r.ConsumerGroupMemberMetadataKey(self.group_id, member_id)),
        ]

    def delete_records(self) -> list[r.CoordinatorRecord]:
        """The tombstones that delete the whole group, in Kafka's order (members' 8, 7, 5; then 6, 4 when one
        exists, each resolved regex's 16, and last 3). Not applied: replay them once appended."""
        out: list[r.CoordinatorRecord] = []
        for member_id in sorted(self.members):
            out.extend(self._member_tombstones(member_id))
        out.append(r.CoordinatorRecord.tombstone(r.ConsumerGroupTargetAssignmentMetadataKey(self.group_id)))
        if self.partition_metadata is not None:
            out.append(r.CoordinatorRecord.tombstone(r.ConsumerGroupPartitionMetadataKey(self.group_id)))
        for regex in sorted(self.resolved_regexes):
            out.append(r.CoordinatorRecord.tombstone(r.ConsumerGroupRegularExpressionKey(self.group_id, regex)))
        out.append(r.CoordinatorRecord.tombstone(r.ConsumerGroupMetadataKey(self.group_id)))
        return out

    def _emit(self, out: list[r.CoordinatorRecord], record: r.CoordinatorRecord) -> None:
        out.append(record)
        self.replay(record)


def subscription_fields(m: ConsumerGroupMember) -> tuple[object, ...]:
    """The fields record 5 persists."""
    return (
        m.instance_id,
        m.rack_id,
        m.client_id,
        m.client_host,
        m.subscribed_topic_names,
        m.subscribed_topic_regex,
        m.rebalance_timeout_ms,
        m.server_assignor,
        m.classic_member_metadata,
    )


def assignment_fields(m: ConsumerGroupMember) -> tuple[object, ...]:
    """The fields record 8 persists."""
    return (m.member_epoch, m.previous_member_epoch, m.state, m.assigned_partitions, m.partitions_pending_revocation)
