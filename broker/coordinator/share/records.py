"""The coordinator records a KIP-932 share group is persisted as in ``__consumer_offsets``.

Each record is a key and a value (``None``: a tombstone). The dataclasses mirror Kafka 4.4's share group
coordinator record schemas (group-coordinator's ``common/message``) field for field, names in snake_case;
``record_codec`` turns them into Kafka's bytes. A key's ``RECORD_TYPE`` is the ``int16`` written first in the
key; every value is written at value version 0 (flexible)::

    type  key                                  key fields            value fields
    10    ShareGroupMemberMetadata             group_id, member_id   rack_id?, client_id, client_host,
                                                                     subscribed_topic_names
    11    ShareGroupMetadata                   group_id              epoch, metadata_hash
    12    ShareGroupTargetAssignmentMetadata   group_id              assignment_epoch,
                                                                     assignment_timestamp (tag 0)
    13    ShareGroupTargetAssignmentMember     group_id, member_id   topic_partitions
    14    ShareGroupCurrentMemberAssignment    group_id, member_id   member_epoch, previous_member_epoch,
                                                                     state, assigned_partitions
    15    ShareGroupStatePartitionMetadata     group_id              initializing_topics, initialized_topics,
                                                                     deleting_topics

Replaying a group's records in order rebuilds it: a member's metadata (10) then the group epoch (11); the
target assignment's members (13) then its metadata (12); a member's current assignment (14); the
share-partition state bookkeeping (15, the whole set each time). A group is deleted by tombstoning every
member's 14, every member's 13, then 12, every member's 10, then 15 and last 11 (Kafka's order).

Immutable values; thread-safe. Collections are tuples so records hash and compare by value.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from typing import ClassVar

from ..coordinator_record import GroupRecord


class ShareRecordType(enum.IntEnum):
    """The ``int16`` a share group record's key starts with (Kafka's ``CoordinatorRecordType``)."""

    SHARE_GROUP_MEMBER_METADATA = 10
    SHARE_GROUP_METADATA = 11
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
    SHARE_GROUP_STATE_PARTITION_METADATA = 15


@dataclass(frozen=True)
class TopicPartitions:
    """Partitions of one topic, by id (records 13 and 14)."""

    topic_id: uuid.UUID
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class TopicPartitionsInfo:
    """Partitions of one topic, by id and name (record 15)."""

    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class TopicInfo:
    topic_id: uuid.UUID
    topic_name: str


# --- type 10: a member -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShareGroupMemberMetadataKey:
    RECORD_TYPE: ClassVar[int] = ShareRecordType.SHARE_GROUP_MEMBER_METADATA
    group_id: str
    member_id: str


@dataclass(frozen=True)
class ShareGroupMemberMetadataValue:
    client_id: str
    client_host: str
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] = ()


# --- type 11: the group --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShareGroupMetadataKey:
    RECORD_TYPE: ClassVar[int] = ShareRecordType.SHARE_GROUP_METADATA
    group_id: str


@dataclass(frozen=True)
class ShareGroupMetadataValue:
    """``epoch``: the group epoch; ``metadata_hash``: a hash of the assignable topic-partitions (ours)."""

    epoch: int
    metadata_hash: int = 0


# --- types 12, 13: the target assignment ---------------------------------------------------------------------
@dataclass(frozen=True)
class ShareGroupTargetAssignmentMetadataKey:
    RECORD_TYPE: ClassVar[int] = ShareRecordType.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA
    group_id: str


@dataclass(frozen=True)
class ShareGroupTargetAssignmentMetadataValue:
    assignment_epoch: int
    assignment_timestamp: int = 0


@dataclass(frozen=True)
class ShareGroupTargetAssignmentMemberKey:
    RECORD_TYPE: ClassVar[int] = ShareRecordType.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER
    group_id: str
    member_id: str


@dataclass(frozen=True)
class ShareGroupTargetAssignmentMemberValue:
    topic_partitions: tuple[TopicPartitions, ...] = ()


# --- type 14: a member's current assignment ------------------------------------------------------------------
@dataclass(frozen=True)
class ShareGroupCurrentMemberAssignmentKey:
    RECORD_TYPE: ClassVar[int] = ShareRecordType.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT
    group_id: str
    member_id: str


@dataclass(frozen=True)
class ShareGroupCurrentMemberAssignmentValue:
    """``state``: Kafka's ``MemberState`` (0 STABLE; a share group member is always stable)."""

    member_epoch: int
    previous_member_epoch: int
    state: int = 0
    assigned_partitions: tuple[TopicPartitions, ...] = ()


# --- type 15: which share-partitions have state -----------------------------------------------------------------
@dataclass(frozen=True)
class ShareGroupStatePartitionMetadataKey:
    RECORD_TYPE: ClassVar[int] = ShareRecordType.SHARE_GROUP_STATE_PARTITION_METADATA
    group_id: str


@dataclass(frozen=True)
class ShareGroupStatePartitionMetadataValue:
    initializing_topics: tuple[TopicPartitionsInfo, ...] = ()
    initialized_topics: tuple[TopicPartitionsInfo, ...] = ()
    deleting_topics: tuple[TopicInfo, ...] = ()


ShareGroupRecordKey = (
    ShareGroupMemberMetadataKey
    | ShareGroupMetadataKey
    | ShareGroupTargetAssignmentMetadataKey
    | ShareGroupTargetAssignmentMemberKey
    | ShareGroupCurrentMemberAssignmentKey
    | ShareGroupStatePartitionMetadataKey
)
ShareGroupRecordValue = (
    ShareGroupMemberMetadataValue
    | ShareGroupMetadataValue
    | ShareGroupTargetAssignmentMetadataValue
    | ShareGroupTargetAssignmentMemberValue
    | ShareGroupCurrentMemberAssignmentValue
    | ShareGroupStatePartitionMetadataValue
)

VALUE_CLASS: dict[type, type] = {
    ShareGroupMemberMetadataKey: ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey: ShareGroupMetadataValue,
    ShareGroupTargetAssignmentMetadataKey: ShareGroupTargetAssignmentMetadataValue,
    ShareGroupTargetAssignmentMemberKey: ShareGroupTargetAssignmentMemberValue,
    ShareGroupCurrentMemberAssignmentKey: ShareGroupCurrentMemberAssignmentValue,
    ShareGroupStatePartitionMetadataKey: ShareGroupStatePartitionMetadataValue,
}


class ShareGroupRecord(GroupRecord[ShareGroupRecordKey, ShareGroupRecordValue]):
    """One share group record: ``key`` and its ``value``, or ``None`` for a tombstone (``GroupRecord``)."""

    KIND = "share group"
    VALUE_CLASSES = VALUE_CLASS
