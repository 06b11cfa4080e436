"""Value types of share-partition state shared by the share partition, the share coordinator and the
persister: record states, acknowledgement types, persisted state batches, acquired ranges.

Numeric values are Kafka's wire/storage values (KIP-932): ``RecordState`` is the ``DeliveryState`` byte of a
``__share_group_state`` state batch, ``AcknowledgeType`` the ``AcknowledgeTypes`` byte of ShareFetch /
ShareAcknowledge (RENEW is KIP-1222's lock renewal). All types are immutable.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = ["AckBatch", "AcknowledgeType", "AcquiredRange", "PersistedState", "RecordState", "StateBatch"]


class RecordState(IntEnum):
    """A record's state in a share partition."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    """What a consumer says about an acquired record (GAP: the offset holds no record)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


@dataclass(frozen=True)
class StateBatch:
    """Offsets ``first_offset..last_offset`` (inclusive) in one delivery state with one delivery count."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True)
class PersistedState:
    """What the share coordinator stores for (group, topic id, partition).

    ``start_offset`` -1 means initialized without a start offset yet (the share-partition manager resolves it
    with ``share.auto.offset.reset`` before building a ``SharePartition``).
    """

    state_epoch: int
    start_offset: int
    state_batches: tuple[StateBatch, ...]
    leader_epoch: int = -1


@dataclass(frozen=True)
class AcquiredRange:
    """Offsets handed to one member by one acquire, all with the same delivery count (ShareFetch's
    AcquiredRecords)."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True)
class AckBatch:
    """One acknowledgement batch: ``types`` holds one type for the whole range or one per offset."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]
