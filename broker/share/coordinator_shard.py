"""The share coordinator's state of one ``__share_group_state`` partition (Kafka's ``ShareCoordinatorShard``):
per share-partition (group, topic id, partition) its state, the checks of the five persister operations and
the records each writes. Pure: it decides and replays, the coordinator (``share_coordinator``) appends.

State per key: snapshot epoch, state epoch, leader epoch, start offset, delivery complete count, creation and
write times, state batches, and how many ShareUpdates followed the last ShareSnapshot. Replaying a ShareSnapshot
sets it whole (the update count back to 0); a ShareUpdate changes the start offset / leader epoch / delivery
complete count it carries (-1: unchanged) and folds its batches in (``batch_combiner``: overlapping offsets
replaced, offsets below the start offset dropped), counting one update; a tombstone of either key removes it.
An update without a state before it (its snapshot compacted away after a delete) is ignored. The shard also
remembers the log offset of each key's last snapshot, so that the coordinator can delete the records before the
oldest of them (``redundant_offset``).

The operations (each returns ``(error, message, records)``; the records take effect once acknowledged and
replayed), with Kafka's checks and messages:

- ``initialize(state_epoch, start_offset)``: a ShareSnapshot with the next snapshot epoch (0 for a new key),
  that state epoch and start offset, leader epoch -1 and no batches. FENCED_STATE_EPOCH when the stored state
  epoch is newer than the request's.
- ``write(state_epoch, leader_epoch, start_offset, batches, delivery_complete_count)``: INVALID_REQUEST for an
  uninitialized key (Kafka's "Write operation on uninitialized share partition not allowed."), or a batch whose
  first offset is past its last; FENCED_LEADER_EPOCH / FENCED_STATE_EPOCH when the stored epoch is newer (-1 in
  the request skips that check). A ShareUpdate of the request, or, once ``updates_per_snapshot`` updates
  followed the last snapshot, a ShareSnapshot of the whole state with this write folded in (snapshot epoch + 1).
- ``read(leader_epoch)``: the state; INVALID_REQUEST for an uninitialized key, FENCED_LEADER_EPOCH for an older
  leader epoch; a newer leader epoch is recorded by a ShareUpdate (no batches, start offset -1) before the
  answer, so that writes of the previous leader are fenced from then on.
- ``read_summary(leader_epoch)``: state epoch, leader epoch, start offset; an uninitialized key answers state
  epoch 0, start offset -1 (no error); FENCED_LEADER_EPOCH for an older leader epoch (-1 skips it).
- ``delete``: tombstones of both keys; nothing for a key without state.

Every operation first refuses a negative partition (INVALID_REQUEST), and initialize/write/read a topic
partition the metadata does not know (UNKNOWN_TOPIC_OR_PARTITION; ``topic_exists`` is the coordinator's
metadata lookup). Not thread-safe: one event loop.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spark_kafkalog.protocol import ErrorCode

from .batch_combiner import combine_state_batches
from .records import ShareRecordType, ShareSnapshotValue, ShareStateKey, ShareStateRecord, ShareUpdateValue
from .state_batches import PersistedState, StateBatch

WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."
NEGATIVE_PARTITION = "The partition id cannot be a negative number."
UNKNOWN_TOPIC_OR_PARTITION = "This server does not host this topic-partition."

ShareKey = tuple[str, uuid.UUID, int]
"""(group id, topic id, partition) of a share-partition."""

Outcome = tuple[ErrorCode, str | None, list[ShareStateRecord]]


@dataclass(frozen=True)
class ShareState:
    """A share-partition's stored state (what the last snapshot and the updates after it add up to)."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    state_batches: tuple[StateBatch, ...] = ()
    delivery_complete_count: int = -1
    create_timestamp: int = 0
    write_timestamp: int = 0
    updates_since_snapshot: int = 0

    def persisted(self) -> PersistedState:
        return PersistedState(
            state_epoch=self.state_epoch,
            start_offset=self.start_offset,
            state_batches=self.state_batches,
            leader_epoch=self.leader_epoch,
        )


def _key(record_type: ShareRecordType, k: ShareKey) -> ShareStateKey:
    return ShareStateKey(record_type, k[0], k[1], k[2])


class ShareCoordinatorShard:
    """The states of the share-partitions of one ``__share_group_state`` partition."""

    def __init__(self, updates_per_snapshot: int, topic_exists: Callable[[uuid.UUID, int], bool]) -> None:
        self.updates_per_snapshot = updates_per_snapshot
        self.topic_exists = topic_exists
        self.states: dict[ShareKey, ShareState] = {}
        self.snapshot_offsets: dict[ShareKey, int] = {}
        """Per key with state, the log offset of its last ShareSnapshot (when the replay was told it)."""

    def redundant_offset(self, next_offset: int) -> int:
        """The log offset below which no record is needed to rebuild the states: the oldest last snapshot of a
        key with state, or ``next_offset`` (the offset after the last record replayed) when no key has state.
        The records below it can be deleted (Kafka's ``lastRedundantOffset``)."""
        return min(self.snapshot_offsets.values(), default=next_offset)

    # -- replay -------------------------------------------------------------------------------------------------
    def replay(self, record: ShareStateRecord, offset: int | None = None) -> None:
        """Apply one record read from (or acknowledged in) the log at ``offset`` (None: not known)."""
        k = (record.key.group_id, record.key.topic_id, record.key.partition)
        v = record.value
        if v is None:
            self.states.pop(k, None)
            self.snapshot_offsets.pop(k, None)
        elif isinstance(v, ShareSnapshotValue):
            if offset is not None:
                self.snapshot_offsets[k] = offset
            self.states[k] = ShareState(
                snapshot_epoch=v.snapshot_epoch,
                state_epoch=v.state_epoch,
                leader_epoch=v.leader_epoch,
                start_offset=v.start_offset,
                state_batches=combine_state_batches((), v.state_batches, v.start_offset),
                delivery_complete_count=v.delivery_complete_count,
                create_timestamp=v.create_timestamp,
                write_timestamp=v.write_timestamp,
            )
        else:
            old = self.states.get(k)
            if old is not None:
                self.states[k] = self._fold(old, v)

    @staticmethod
    def _fold(old: ShareState, v: ShareUpdateValue) -> ShareState:
        start = old.start_offset if v.start_offset == -1 else v.start_offset
        return dataclasses.replace(
            old,
            leader_epoch=old.leader_epoch if v.leader_epoch == -1 else v.leader_epoch,
            start_offset=start,
            delivery_complete_count=(
                old.delivery_complete_count if v.delivery_complete_count == -1 else v.delivery_complete_count
            ),
            state_batches=combine_state_batches(old.state_batches, v.state_batches, start),
            updates_since_snapshot=old.updates_since_snapshot + 1,
        )

    # -- operations ---------------------------------------------------------------------------------------------
    def _unknown_topic(self, k: ShareKey) -> Outcome | None:
        if k[2] < 0:
            return ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION, []
        if not self.topic_exists(k[1], k[2]):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION, []
        return None

    def initialize(self, k: ShareKey, state_epoch: int, start_offset: int, now_ms: int) -> Outcome:
        if k[2] < 0:
            return ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION, []
        cur = self.states.get(k)
        if cur is not None and cur.state_epoch > state_epoch:
            message = f"state epoch {state_epoch} is older than the stored state epoch {cur.state_epoch}"
            return ErrorCode.FENCED_STATE_EPOCH, message, []
        refused = self._unknown_topic(k)
        if refused is not None:
            return refused
        value = ShareSnapshotValue(
            snapshot_epoch=0 if cur is None else cur.snapshot_epoch + 1,
            state_epoch=state_epoch,
            leader_epoch=-1,
            start_offset=start_offset,
            create_timestamp=now_ms,
            write_timestamp=now_ms,
        )
        return ErrorCode.NONE, None, [ShareStateRecord(_key(ShareRecordType.SHARE_SNAPSHOT, k), value)]

    def write(
        self,
        k: ShareKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[StateBatch],
        now_ms: int,
        delivery_complete_count: int = -1,
    ) -> Outcome:
        if k[2] < 0:
            return ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION, []
        for b in batches:
            if b.first_offset > b.last_offset or b.first_offset < 0:
                message = f"state batch {b.first_offset}-{b.last_offset} is not a range of offsets"
                return ErrorCode.INVALID_REQUEST, message, []
        cur = self.states.get(k)
        if cur is None:
            return ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED, []
        if leader_epoch != -1 and cur.leader_epoch > leader_epoch:
            message = f"leader epoch {leader_epoch} is older than the stored leader epoch {cur.leader_epoch}"
            return ErrorCode.FENCED_LEADER_EPOCH, message, []
        if state_epoch != -1 and cur.state_epoch > state_epoch:
            message = f"state epoch {state_epoch} is older than the stored state epoch {cur.state_epoch}"
            return ErrorCode.FENCED_STATE_EPOCH, message, []
        refused = self._unknown_topic(k)
        if refused is not None:
            return refused
        update = ShareUpdateValue(
            snapshot_epoch=cur.snapshot_epoch,
            leader_epoch=leader_epoch,
            start_offset=start_offset,
            state_batches=combine_state_batches((), batches, start_offset),
            delivery_complete_count=delivery_complete_count,
        )
        if cur.updates_since_snapshot < self.updates_per_snapshot:
            return ErrorCode.NONE, None, [ShareStateRecord(_key(ShareRecordType.SHARE_UPDATE, k), update)]
        folded = self._fold(cur, update)
        snapshot = ShareSnapshotValue(
            snapshot_epoch=cur.snapshot_epoch + 1,
            state_epoch=cur.state_epoch if state_epoch == -1 else state_epoch,
            leader_epoch=folded.leader_epoch,
            start_offset=folded.start_offset,
            create_timestamp=cur.create_timestamp,
            write_timestamp=now_ms,
            state_batches=folded.state_batches,
            delivery_complete_count=folded.delivery_complete_count,
        )
        return ErrorCode.NONE, None, [ShareStateRecord(_key(ShareRecordType.SHARE_SNAPSHOT, k), snapshot)]

    def read(self, k: ShareKey, leader_epoch: int) -> tuple[ErrorCode, str | None, list[ShareStateRecord]]:
        """(error, message, records to write first); the state is ``states[k]`` once they are replayed."""
        if k[2] < 0:
            return ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION, []
        cur = self.states.get(k)
        if cur is None:
            return ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED, []
        if leader_epoch != -1 and cur.leader_epoch > leader_epoch:
            message = f"leader epoch {leader_epoch} is older than the stored leader epoch {cur.leader_epoch}"
            return ErrorCode.FENCED_LEADER_EPOCH, message, []
        refused = self._unknown_topic(k)
        if refused is not None:
            return refused
        if leader_epoch == -1 or leader_epoch == cur.leader_epoch:
            return ErrorCode.NONE, None, []
        update = ShareUpdateValue(snapshot_epoch=cur.snapshot_epoch, leader_epoch=leader_epoch, start_offset=-1)
        return ErrorCode.NONE, None, [ShareStateRecord(_key(ShareRecordType.SHARE_UPDATE, k), update)]

    def read_summary(self, k: ShareKey, leader_epoch: int) -> tuple[ErrorCode, str | None, ShareState | None]:
        if k[2] < 0:
            return ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION, None
        cur = self.states.get(k)
        if cur is None:
            return ErrorCode.NONE, None, ShareState(snapshot_epoch=-1, state_epoch=0, leader_epoch=-1, start_offset=-1)
        if leader_epoch != -1 and cur.leader_epoch > leader_epoch:
            message = f"leader epoch {leader_epoch} is older than the stored leader epoch {cur.leader_epoch}"
            return ErrorCode.FENCED_LEADER_EPOCH, message, None
        return ErrorCode.NONE, None, cur

    def delete(self, k: ShareKey) -> Outcome:
        if k[2] < 0:
            return ErrorCode.INVALID_REQUEST, NEGATIVE_PARTITION, []
        if k not in self.states:
            return ErrorCode.NONE, None, []
        records = [
            ShareStateRecord(_key(t, k), None) for t in (ShareRecordType.SHARE_UPDATE, ShareRecordType.SHARE_SNAPSHOT)
        ]
        return ErrorCode.NONE, None, records
