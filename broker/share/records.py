"""The records of ``__share_group_state`` (KIP-932): a share-partition's persisted state as a ShareSnapshot (the
whole state) followed by ShareUpdates (what one write changed), and which partition of the topic holds a key.

The dataclasses mirror Kafka 4.4's share-coordinator schemas (``common/message/ShareSnapshot*``,
``ShareUpdate*``) field for field, in snake_case; ``record_codec`` turns them into Kafka's bytes. A key's
``record_type`` is the ``int16`` written first in the key (the schema's ``apiKey``)::

    type  key            key fields                       value fields (value version 0)
    0     ShareSnapshot  group_id, topic_id, partition    snapshot_epoch, state_epoch, leader_epoch, start_offset,
                                                          delivery_complete_count (tag 0, default -1),
                                                          create_timestamp, write_timestamp, state_batches
    1     ShareUpdate    group_id, topic_id, partition    snapshot_epoch, leader_epoch, start_offset (-1: unchanged),
                                                          delivery_complete_count (tag 0, default -1), state_batches

A state batch is (first_offset int64, last_offset int64, delivery_state int8: 0 available, 2 acknowledged,
4 archived, delivery_count int16). A value of ``None`` is a tombstone: the key's state was deleted.

The coordinator key of a share-partition is ``"<group>:<topic id in Kafka's base64>:<partition>"`` (Kafka's
``SharePartitionKey.asCoordinatorKey``); its ``__share_group_state`` partition is ``abs(String.hashCode(key)) %
partitions`` (``Utils.abs``: ``Integer.MIN_VALUE`` is 0), as Kafka's ``ShareCoordinatorService.partitionFor``.

Immutable values; thread-safe.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass

from broker.cluster.registry import uuid_from_base64, uuid_to_base64
from broker.coordinator.offsets_topic import java_string_hash

from .state_batches import StateBatch

SHARE_GROUP_STATE_TOPIC = "__share_group_state"


class ShareRecordType(enum.IntEnum):
    """The ``int16`` a ``__share_group_state`` key starts with (Kafka's share ``CoordinatorRecordType``)."""

    SHARE_SNAPSHOT = 0
    SHARE_UPDATE = 1


@dataclass(frozen=True)
class ShareStateKey:
    """The key of both record types: which share-partition (``record_type`` says which record)."""

    record_type: ShareRecordType
    group_id: str
    topic_id: uuid.UUID
    partition: int


@dataclass(frozen=True)
class ShareSnapshotValue:
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    state_batches: tuple[StateBatch, ...] = ()
    delivery_complete_count: int = -1


@dataclass(frozen=True)
class ShareUpdateValue:
    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    state_batches: tuple[StateBatch, ...] = ()
    delivery_complete_count: int = -1


ShareStateValue = ShareSnapshotValue | ShareUpdateValue


@dataclass(frozen=True)
class ShareStateRecord:
    key: ShareStateKey
    value: ShareStateValue | None
    """None: a tombstone."""


def coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """``"group:topic_id:partition"``, the FindCoordinator key type 2 of a share-partition."""
    return f"{group_id}:{uuid_to_base64(topic_id)}:{partition}"


class InvalidCoordinatorKey(ValueError):
    """A FindCoordinator key type 2 that is not ``group:topic_id:partition``."""


def parse_coordinator_key(key: str) -> tuple[str, uuid.UUID, int]:
    """(group, topic id, partition) of ``key``; raises InvalidCoordinatorKey naming what is wrong. The group may
    hold ``:`` (the last two fields are split off, as Kafka's ``SharePartitionKey.getInstance(String)``)."""
    parts = key.rsplit(":", 2)
    if len(parts) != 3:
        raise InvalidCoordinatorKey(f"share coordinator key {key!r} is not group:topic_id:partition")
    group, topic, partition = parts
    if not group:
        raise InvalidCoordinatorKey(f"share coordinator key {key!r} has an empty group id")
    try:
        topic_id = uuid_from_base64(topic)
    except ValueError:
        raise InvalidCoordinatorKey(f"share coordinator key {key!r}: {topic!r} is not a topic id") from None
    try:
        p = int(partition)
    except ValueError:
        p = -1
    if p < 0 or not partition.isdigit():
        raise InvalidCoordinatorKey(f"share coordinator key {key!r}: {partition!r} is not a partition") from None
    return group, topic_id, p


def share_state_partition_for(key: str, num_partitions: int) -> int:
    """The ``__share_group_state`` partition of coordinator key ``key``."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions
