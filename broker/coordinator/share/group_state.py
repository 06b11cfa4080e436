"""``ShareGroupRecords``: the persisted state of a share group (``group.ShareGroup``'s base): the fields its
records (``records``, types 10-15) set, ``replay`` (their only writer), the record builders, ``snapshot`` /
``restore``; with the names both modules use (``ShareGroupState``, ``ShareGroupMember``, ``TopicsView``,
``metadata_hash``).

Replay rules: 10 creates or updates a member's metadata (tombstone: the member is gone); 14 sets its epochs and
assigned partitions (tombstone: epoch 0, nothing assigned); 11 the group epoch and metadata hash (tombstone: the
group is DEAD); 12 the assignment epoch; 13 a member's target assignment; 15 the initializing, initialized and
deleting topic-partitions (the whole sets; tombstone: none). Not thread-safe (one task per group).
"""

from __future__ import annotations

import copy
import enum
import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from . import records as r

Assignment = dict[uuid.UUID, frozenset[int]]


class ShareGroupState(enum.Enum):
    """Kafka's ``ShareGroupState`` names (ListGroups, DescribeGroups, ShareGroupDescribe)."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


class TopicsView(Protocol):
    """What the group needs of the cluster's topics (``group_consumer_topics.MetadataTopicsView`` fits)."""

    def topic_id(self, name: str) -> uuid.UUID | None: ...

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...

    def partition_count(self, topic_id: uuid.UUID) -> int: ...


@dataclass(frozen=True)
class ShareGroupMember:
    """A member: persisted in records 10 (metadata) and 14 (epochs, assignment); ``session_deadline_ms`` is
    not persisted (0: none yet, e.g. loaded from the log)."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    assigned_partitions: Assignment = field(default_factory=dict)
    session_deadline_ms: int = 0


def _tps(assignment: Mapping[uuid.UUID, frozenset[int]]) -> tuple[r.TopicPartitions, ...]:
    return tuple(r.TopicPartitions(t, tuple(sorted(ps))) for t, ps in sorted(assignment.items()) if ps)


def _from_tps(items: tuple[r.TopicPartitions, ...]) -> Assignment:
    return {t.topic_id: frozenset(t.partitions) for t in items if t.partitions}


def metadata_hash(assignable: Mapping[uuid.UUID, tuple[str, frozenset[int]]]) -> int:
    """Our hash of the assignable topic-partitions (blake2b-64, signed): moves when one is added or removed."""
    h = hashlib.blake2b(digest_size=8)
    for topic_id, (name, parts) in sorted(assignable.items()):
        h.update(topic_id.bytes + name.encode() + b"\0" + ",".join(map(str, sorted(parts))).encode() + b";")
    return int.from_bytes(h.digest(), "big", signed=True)


class ShareGroupRecords:
    """The persisted state of one share group and its replay (see the module docstring)."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.metadata_hash = 0
        self.assignment_epoch = 0
        self.assignment_timestamp = 0
        self.members: dict[str, ShareGroupMember] = {}
        self.target_assignment: dict[str, Assignment] = {}
        self.initialized: dict[uuid.UUID, tuple[str, frozenset[int]]] = {}
        """Topic id -> (name, partitions) whose share-partition state was initialized (record 15)."""
        self.initializing: dict[uuid.UUID, tuple[str, frozenset[int]]] = {}
        self.deleting: dict[uuid.UUID, str] = {}
        self.dead = False

    # -- derived --------------------------------------------------------------------------------------------
    @property
    def state(self) -> ShareGroupState:
        if self.dead:
            return ShareGroupState.DEAD
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    @property
    def is_empty(self) -> bool:
        return not self.members

    # -- snapshot ---------------------------------------------------------------------------------------------
    _STATE = (
        "group_epoch", "metadata_hash", "assignment_epoch", "assignment_timestamp", "members",
        "target_assignment", "initialized", "initializing", "deleting", "dead",
    )  # fmt: skip

    def snapshot(self) -> dict[str, Any]:
        return {name: copy.copy(getattr(self, name)) for name in self._STATE}

    def restore(self, snap: Mapping[str, Any]) -> None:
        for name, value in snap.items():
            setattr(self, name, copy.copy(value))

    def _emit(self, out: list[r.ShareGroupRecord], rec: r.ShareGroupRecord) -> None:
        out.append(rec)
        self.replay(rec)

    # -- record builders ------------------------------------------------------------------------------------------
    def _member_record(self, m: ShareGroupMember) -> r.ShareGroupRecord:
        return r.ShareGroupRecord(
            r.ShareGroupMemberMetadataKey(self.group_id, m.member_id),
            r.ShareGroupMemberMetadataValue(m.client_id, m.client_host, m.rack_id, m.subscribed_topic_names),
        )

    def _target_member_record(self, member_id: str, assignment: Assignment) -> r.ShareGroupRecord:
        return r.ShareGroupRecord(
            r.ShareGroupTargetAssignmentMemberKey(self.group_id, member_id),
            r.ShareGroupTargetAssignmentMemberValue(_tps(assignment)),
        )

    def _epoch_record(self, epoch: int, hash_: int) -> r.ShareGroupRecord:
        return r.ShareGroupRecord(r.ShareGroupMetadataKey(self.group_id), r.ShareGroupMetadataValue(epoch, hash_))

    def _current_assignment_record(self, m: ShareGroupMember) -> r.ShareGroupRecord:
        return r.ShareGroupRecord(
            r.ShareGroupCurrentMemberAssignmentKey(self.group_id, m.member_id),
            r.ShareGroupCurrentMemberAssignmentValue(
                m.member_epoch, m.previous_member_epoch, 0, _tps(m.assigned_partitions)
            ),
        )

    def _state_partition_record(
        self, initialized: Mapping[uuid.UUID, tuple[str, frozenset[int]]]
    ) -> r.ShareGroupRecord:
        def infos(d: Mapping[uuid.UUID, tuple[str, frozenset[int]]]) -> tuple[r.TopicPartitionsInfo, ...]:
            return tuple(r.TopicPartitionsInfo(t, n, tuple(sorted(ps))) for t, (n, ps) in sorted(d.items()))

        return r.ShareGroupRecord(
            r.ShareGroupStatePartitionMetadataKey(self.group_id),
            r.ShareGroupStatePartitionMetadataValue(
                infos(self.initializing),
                infos(initialized),
                tuple(r.TopicInfo(t, n) for t, n in sorted(self.deleting.items())),
            ),
        )

    # -- replay -------------------------------------------------------------------------------------------------
    def replay(self, rec: r.ShareGroupRecord) -> None:
        """Apply one record (written by this group, or read back while loading)."""
        key, value = rec.key, rec.value
        if isinstance(key, r.ShareGroupMetadataKey):
            if value is None:
                self.dead = True
            else:
                assert isinstance(value, r.ShareGroupMetadataValue)
                self.group_epoch, self.metadata_hash, self.dead = value.epoch, value.metadata_hash, False
        elif isinstance(key, r.ShareGroupMemberMetadataKey):
            if value is None:
                self.members.pop(key.member_id, None)
            else:
                assert isinstance(value, r.ShareGroupMemberMetadataValue)
                m = self.members.get(key.member_id) or ShareGroupMember(key.member_id)
                self.members[key.member_id] = replace(
                    m,
                    client_id=value.client_id,
                    client_host=value.client_host,
                    rack_id=value.rack_id,
                    subscribed_topic_names=tuple(value.subscribed_topic_names),
                )
        elif isinstance(key, r.ShareGroupTargetAssignmentMemberKey):
            if value is None:
                self.target_assignment.pop(key.member_id, None)
            else:
                assert isinstance(value, r.ShareGroupTargetAssignmentMemberValue)
                self.target_assignment[key.member_id] = _from_tps(value.topic_partitions)
        elif isinstance(key, r.ShareGroupTargetAssignmentMetadataKey):
            if value is None:
                self.assignment_epoch = self.assignment_timestamp = 0
            else:
                assert isinstance(value, r.ShareGroupTargetAssignmentMetadataValue)
                self.assignment_epoch, self.assignment_timestamp = value.assignment_epoch, value.assignment_timestamp
        elif isinstance(key, r.ShareGroupCurrentMemberAssignmentKey):
            current = self.members.get(key.member_id)
            if value is None:
                if current is not None:
                    self.members[key.member_id] = replace(
                        current, member_epoch=0, previous_member_epoch=0, assigned_partitions={}
                    )
                return
            assert isinstance(value, r.ShareGroupCurrentMemberAssignmentValue)
            self.members[key.member_id] = replace(
                current or ShareGroupMember(key.member_id),
                member_epoch=value.member_epoch,
                previous_member_epoch=value.previous_member_epoch,
                assigned_partitions=_from_tps(value.assigned_partitions),
            )
        elif isinstance(key, r.ShareGroupStatePartitionMetadataKey):
            if value is None:
                self.initialized, self.initializing, self.deleting = {}, {}, {}
                return
            assert isinstance(value, r.ShareGroupStatePartitionMetadataValue)

            def parts(items: tuple[r.TopicPartitionsInfo, ...]) -> dict[uuid.UUID, tuple[str, frozenset[int]]]:
                return {t.topic_id: (t.topic_name, frozenset(t.partitions)) for t in items}

            self.initializing = parts(value.initializing_topics)
            self.initialized = parts(value.initialized_topics)
            self.deleting = {t.topic_id: t.topic_name for t in value.deleting_topics}
