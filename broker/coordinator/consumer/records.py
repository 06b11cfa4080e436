"""The coordinator records a KIP-848 consumer group is persisted as in ``__consumer_offsets``.

Each record is a key and a value (``None``: a tombstone, the thing the key names was deleted). The
dataclasses mirror Kafka 4.x's coordinator record schemas (group-coordinator's ``common/message``,
as shipped in Kafka 4.4.0) field for field, names in snake_case; ``record_codec`` turns them into
Kafka's exact bytes. A key's ``RECORD_TYPE`` is the ``int16`` Kafka writes first in the key (its
"key version" before 4.0, the schema's ``apiKey`` since); every value is written at value version 0
(flexible: compact strings and arrays, tagged fields)::

    type  key                                    key fields              value fields
    3     ConsumerGroupMetadata                  group_id                epoch, metadata_hash (tag 0)
    4     ConsumerGroupPartitionMetadata         group_id                topics (replaced by
                                                                         metadata_hash in 4.1; read only)
    5     ConsumerGroupMemberMetadata            group_id, member_id     instance_id?, rack_id?, client_id,
                                                                         client_host, subscribed_topic_names,
                                                                         subscribed_topic_regex?,
                                                                         rebalance_timeout_ms, server_assignor?,
                                                                         classic_member_metadata? (tag 0)
    6     ConsumerGroupTargetAssignmentMetadata  group_id                assignment_epoch,
                                                                         assignment_timestamp (tag 0, 4.3+)
    7     ConsumerGroupTargetAssignmentMember    group_id, member_id     topic_partitions
    8     ConsumerGroupCurrentMemberAssignment   group_id, member_id     member_epoch, previous_member_epoch,
                                                                         state (MemberState),
                                                                         assigned_partitions,
                                                                         partitions_pending_revocation
    16    ConsumerGroupRegularExpression         group_id,               topics, version, timestamp
                                                 regular_expression

Types 0-2 are the classic records (offset commits and classic group metadata, ``offsets_topic``).

Kafka writes a group's records so that replaying them in order rebuilds it: a new member's metadata (5)
then the group epoch (3); a new target assignment's members (7) then its metadata (6); a member's current
assignment (8). A group is deleted by tombstoning, in order, every member's 8, 7 and 5, then 6, 4 (when a
4 exists), 16 for each resolved regex, and last 3.

Immutable values; thread-safe. Collections are tuples so records hash and compare by value.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from typing import ClassVar

from ..coordinator_record import GroupRecord


class CoordinatorRecordType(enum.IntEnum):
    """The ``int16`` a ``__consumer_offsets`` key starts with (Kafka's ``CoordinatorRecordType``)."""

    LEGACY_OFFSET_COMMIT = 0
    OFFSET_COMMIT = 1
    GROUP_METADATA = 2
    CONSUMER_GROUP_METADATA = 3
    CONSUMER_GROUP_PARTITION_METADATA = 4
    CONSUMER_GROUP_MEMBER_METADATA = 5
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
    CONSUMER_GROUP_REGULAR_EXPRESSION = 16


class MemberState(enum.IntEnum):
    """A member's reconciliation state, the ``int8`` ``state`` of record 8 (Kafka's ``MemberState``)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


# --- type 3: the group -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupMetadataKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_METADATA
    group_id: str


@dataclass(frozen=True)
class ConsumerGroupMetadataValue:
    """``epoch``: the group epoch. ``metadata_hash``: KIP-1101's hash of the subscribed topics' metadata
    (tagged, 0 = not computed)."""

    epoch: int
    metadata_hash: int = 0


# --- type 4: subscription metadata (read only since Kafka 4.1) ----------------------------------------


@dataclass(frozen=True)
class ConsumerGroupPartitionMetadataKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_PARTITION_METADATA
    group_id: str


@dataclass(frozen=True)
class PartitionMetadata:
    partition: int
    racks: tuple[str, ...] = ()


@dataclass(frozen=True)
class TopicMetadata:
    topic_id: uuid.UUID
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionMetadata, ...] = ()


@dataclass(frozen=True)
class ConsumerGroupPartitionMetadataValue:
    topics: tuple[TopicMetadata, ...] = ()


# --- type 5: a member ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupMemberMetadataKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_MEMBER_METADATA
    group_id: str
    member_id: str


@dataclass(frozen=True)
class ClassicProtocol:
    """One protocol a classic-protocol member supports: its name and its subscription bytes."""

    name: str
    metadata: bytes


@dataclass(frozen=True)
class ClassicMemberMetadata:
    """Present only for a member that joined with JoinGroup (the classic protocol) in a consumer group."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...] = ()


@dataclass(frozen=True)
class ConsumerGroupMemberMetadataValue:
    client_id: str
    client_host: str
    instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    classic_member_metadata: ClassicMemberMetadata | None = None


# --- types 6, 7: the target assignment -------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMetadataKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA
    group_id: str


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMetadataValue:
    """``assignment_epoch``: the group epoch the target assignment was computed at;
    ``assignment_timestamp`` (tagged, 0 = unknown): when, in ms since the epoch (Kafka 4.3+)."""

    assignment_epoch: int
    assignment_timestamp: int = 0


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMemberKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER
    group_id: str
    member_id: str


@dataclass(frozen=True)
class TopicPartition:
    """Partitions of one topic (by id) in a target assignment (Kafka's struct name, singular)."""

    topic_id: uuid.UUID
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class ConsumerGroupTargetAssignmentMemberValue:
    topic_partitions: tuple[TopicPartition, ...] = ()


# --- type 8: a member's current assignment ---------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupCurrentMemberAssignmentKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT
    group_id: str
    member_id: str


@dataclass(frozen=True)
class TopicPartitions:
    """Partitions of one topic (by id) a member owns or must revoke. ``assignment_epochs`` (tagged, null =
    absent) aligns with ``partitions``: the epoch each was assigned at (KIP-1251; Kafka 4.4 does not write it)."""

    topic_id: uuid.UUID
    partitions: tuple[int, ...]
    assignment_epochs: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ConsumerGroupCurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int = MemberState.STABLE
    assigned_partitions: tuple[TopicPartitions, ...] = ()
    partitions_pending_revocation: tuple[TopicPartitions, ...] = ()


# --- type 16: a resolved regular expression --------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupRegularExpressionKey:
    RECORD_TYPE: ClassVar[int] = CoordinatorRecordType.CONSUMER_GROUP_REGULAR_EXPRESSION
    group_id: str
    regular_expression: str


@dataclass(frozen=True)
class ConsumerGroupRegularExpressionValue:
    """The topics ``regular_expression`` matched, at metadata ``version`` (the metadata image offset Kafka
    resolved it against; ours: the metadata cache's version), resolved at ``timestamp`` (ms)."""

    topics: tuple[str, ...]
    version: int
    timestamp: int


ConsumerGroupRecordKey = (
    ConsumerGroupMetadataKey
    | ConsumerGroupPartitionMetadataKey
    | ConsumerGroupMemberMetadataKey
    | ConsumerGroupTargetAssignmentMetadataKey
    | ConsumerGroupTargetAssignmentMemberKey
    | ConsumerGroupCurrentMemberAssignmentKey
    | ConsumerGroupRegularExpressionKey
)
ConsumerGroupRecordValue = (
    ConsumerGroupMetadataValue
    | ConsumerGroupPartitionMetadataValue
    | ConsumerGroupMemberMetadataValue
    | ConsumerGroupTargetAssignmentMetadataValue
    | ConsumerGroupTargetAssignmentMemberValue
    | ConsumerGroupCurrentMemberAssignmentValue
    | ConsumerGroupRegularExpressionValue
)

# The value class each key class pairs with.
VALUE_CLASS: dict[type, type] = {
    ConsumerGroupMetadataKey: ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey: ConsumerGroupPartitionMetadataValue,
    ConsumerGroupMemberMetadataKey: ConsumerGroupMemberMetadataValue,
    ConsumerGroupTargetAssignmentMetadataKey: ConsumerGroupTargetAssignmentMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey: ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupCurrentMemberAssignmentKey: ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupRegularExpressionKey: ConsumerGroupRegularExpressionValue,
}


class CoordinatorRecord(GroupRecord[ConsumerGroupRecordKey, ConsumerGroupRecordValue]):
    """One consumer-group record: ``key`` and its ``value``, or ``None`` for a tombstone (``GroupRecord``)."""

    KIND = "consumer group"
    VALUE_CLASSES = VALUE_CLASS
