"""``ShareGroup``: one KIP-932 share group's state machine, pure (no I/O, no event loop; times are milliseconds
passed in by the caller, so tests drive it with a manual clock).

Kafka 4.4's share groups, simpler than a consumer group's: there is no revocation phase, a member's
assignment takes effect as soon as the member heartbeats, so a member is always STABLE.

- ``ShareGroup(group_id, *, session_timeout_ms, heartbeat_interval_ms, max_size)`` starts EMPTY at epoch 0.
- ``heartbeat(member_id, member_epoch, rack_id, subscribed_topic_names, topics, now_ms, *, client_id,
  client_host) -> ShareHeartbeatOutcome``: one authorized ShareGroupHeartbeat (v1). Kafka's checks:
  INVALID_REQUEST (empty member id, an epoch below -1, no subscription on join, an empty rack id),
  GROUP_MAX_SIZE_REACHED (a new member beyond ``max_size``), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH (an epoch
  greater than the member's, or smaller and not its previous one; epoch 0 always rejoins). Epoch -1 leaves.
- Steps of a heartbeat (Kafka's ``shareGroupHeartbeat``): update the member (record 10 when its metadata
  changed); bump the group epoch (record 11) when a subscription changed or the assignable partitions (the
  *initialized* partitions of the subscribed topics, ``metadata_hash``) changed; when the group epoch is ahead
  of the assignment epoch compute a new target assignment with the ``assignor`` (records 13 for the members
  whose target changed, then 12); then the member takes its target at once (record 14, member epoch = the
  assignment epoch). The answer carries the assignment on a join, a full request (subscription given) or when
  it changed; else null.
- Share-partition state: a partition is assignable only once initialized through the persister
  (``partitions_to_initialize`` lists what the coordinator must initialize first, ``mark_initialized`` records
  the successes in record 15), so no member is assigned a partition whose state does not exist yet.
- ``expire(now_ms)``: members whose session (``session_timeout_ms`` since their last heartbeat) passed are
  removed (tombstones 14, 13, 10 and an epoch bump 11); a member loaded from the log gets a fresh session.
- Every change is made by emitting records and replaying them (``group_state.ShareGroupRecords.replay`` is the
  only writer of persisted state; records replayed into a fresh group rebuild it). ``snapshot``/``restore`` undo a change whose
  records could not be written. Errors leave the group unchanged.
- State: EMPTY without members, STABLE with some, DEAD after the group's tombstone (record 11 with no value).

Not thread-safe: the coordinator calls it from one task at a time per group.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from spark_kafkalog.protocol import ErrorCode

from ..group import GroupError
from . import assignor
from . import records as r
from .group_state import (
    Assignment,
    ShareGroupMember,
    ShareGroupRecords,
    ShareGroupState,
    TopicsView,
    metadata_hash,
)

__all__ = [
    "Assignment",
    "DescribedShareMember",
    "DescribedTopicPartitions",
    "ShareGroup",
    "ShareGroupDescription",
    "ShareGroupMember",
    "ShareGroupState",
    "ShareHeartbeatOutcome",
    "TopicsView",
    "metadata_hash",
    "validate_heartbeat",
]

LEAVE_GROUP_MEMBER_EPOCH = -1
DEFAULT_SESSION_TIMEOUT_MS = 45_000
DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000
DEFAULT_MAX_SIZE = 200


@dataclass(frozen=True)
class ShareHeartbeatOutcome:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Assignment | None
    """The assigned partitions to send, or None to send null (unchanged)."""
    records: tuple[r.ShareGroupRecord, ...]
    snapshot: Any = field(repr=False, compare=False)


@dataclass(frozen=True)
class DescribedTopicPartitions:
    topic_id: uuid.UUID
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedShareMember:
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    assignment: tuple[DescribedTopicPartitions, ...]


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    state: ShareGroupState
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[DescribedShareMember, ...]


class ShareGroup(ShareGroupRecords):
    """One share group (see the module docstring)."""

    def __init__(
        self,
        group_id: str,
        *,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
        max_size: int = DEFAULT_MAX_SIZE,
    ) -> None:
        super().__init__(group_id)
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_size = max_size

    def subscribed_topic_names(self, extra: Collection[str] = ()) -> set[str]:
        names = {n for m in self.members.values() for n in m.subscribed_topic_names}
        return names | set(extra)

    def partitions_to_initialize(
        self, topics: TopicsView, extra_names: Collection[str] = ()
    ) -> dict[uuid.UUID, tuple[str, frozenset[int]]]:
        """The partitions of the subscribed topics (and of ``extra_names``, a joining member's) whose share state
        is not initialized yet: topic id -> (name, partitions). The coordinator initializes them through the
        persister before the heartbeat, then records the successes with ``mark_initialized``."""
        out = {}
        for name in sorted(self.subscribed_topic_names(extra_names)):
            topic_id = topics.topic_id(name)
            if topic_id is None:
                continue
            count = topics.partition_count(topic_id)
            done = self.initialized.get(topic_id, ("", frozenset()))[1]
            missing = frozenset(range(max(count, 0))) - done
            if missing:
                out[topic_id] = (name, missing)
        return out

    def assignable(self, topics: TopicsView) -> dict[uuid.UUID, tuple[str, frozenset[int]]]:
        """The initialized partitions of the topics some member subscribes to (that still exist)."""
        out = {}
        for name in self.subscribed_topic_names():
            topic_id = topics.topic_id(name)
            if topic_id is None or topic_id not in self.initialized:
                continue
            count = topics.partition_count(topic_id)
            parts = frozenset(p for p in self.initialized[topic_id][1] if p < count)
            if parts:
                out[topic_id] = (name, parts)
        return out

    def next_deadline_ms(self) -> int | None:
        deadlines = [m.session_deadline_ms for m in self.members.values() if m.session_deadline_ms > 0]
        return min(deadlines) if deadlines else None

    # -- heartbeat ------------------------------------------------------------------------------------------------
    def heartbeat(
        self,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed_topic_names: Collection[str] | None,
        topics: TopicsView,
        now_ms: int,
        *,
        client_id: str = "",
        client_host: str = "",
    ) -> ShareHeartbeatOutcome:
        """One ShareGroupHeartbeat (see the module docstring); raises ``GroupError``."""
        validate_heartbeat(member_id, member_epoch, rack_id, subscribed_topic_names)
        snap = self.snapshot()
        out: list[r.ShareGroupRecord] = []
        try:
            if member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                if member_id not in self.members:
                    raise GroupError(
                        ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}."
                    )
                self._fence(member_id, topics, out)
                return ShareHeartbeatOutcome(member_id, LEAVE_GROUP_MEMBER_EPOCH, 0, None, tuple(out), snap)
            return self._heartbeat(
                member_id, member_epoch, rack_id, subscribed_topic_names, topics, now_ms, client_id, client_host, out,
                snap,
            )  # fmt: skip
        except BaseException:
            self.restore(snap)
            raise

    def _member(self, member_id: str, member_epoch: int) -> ShareGroupMember:
        member = self.members.get(member_id)
        if member is None and len(self.members) >= self.max_size:  # checked first, as Kafka
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The share group has reached its maximum capacity of {self.max_size} members.",
            )
        if member_epoch == 0:
            return member if member is not None else ShareGroupMember(member_id)
        if member is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {self.group_id}."
            )
        if member_epoch > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a greater member epoch ({member_epoch}) than the one known by the group "
                f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        if member_epoch < member.member_epoch and member_epoch != member.previous_member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a smaller member epoch ({member_epoch}) than the one known by the group "
                f"coordinator ({member.member_epoch}), and it does not match the previous member epoch "
                f"({member.previous_member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        return member

    def _heartbeat(
        self,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed: Collection[str] | None,
        topics: TopicsView,
        now_ms: int,
        client_id: str,
        client_host: str,
        out: list[r.ShareGroupRecord],
        snap: Any,
    ) -> ShareHeartbeatOutcome:
        original = self.members.get(member_id)
        member = self._member(member_id, member_epoch)
        updated = replace(
            member,
            rack_id=rack_id if rack_id is not None else member.rack_id,
            subscribed_topic_names=tuple(sorted(set(subscribed)))
            if subscribed is not None
            else member.subscribed_topic_names,
            client_id=client_id,
            client_host=client_host,
        )
        bump = False
        if original is None or _metadata(updated) != _metadata(original):
            self._emit(out, self._member_record(updated))
            bump = original is None or updated.subscribed_topic_names != original.subscribed_topic_names
        assignable = self.assignable(topics)
        new_hash = metadata_hash(assignable)
        if bump or new_hash != self.metadata_hash:
            self._emit(out, self._epoch_record(self.group_epoch + 1, new_hash))
        if self.group_epoch > self.assignment_epoch:
            self._update_target_assignment(assignable, now_ms, out)
        current = self.members[member_id]
        target = self.target_assignment.get(member_id, {})
        if current.member_epoch != self.assignment_epoch or current.assigned_partitions != target:
            reconciled = replace(
                current,
                previous_member_epoch=current.member_epoch,
                member_epoch=self.assignment_epoch,
                assigned_partitions=dict(target),
            )
            self._emit(out, self._current_assignment_record(reconciled))
        current = replace(self.members[member_id], session_deadline_ms=now_ms + self.session_timeout_ms)
        self.members[member_id] = current
        changed = original is None or original.assigned_partitions != current.assigned_partitions
        full = member_epoch == 0 or subscribed is not None
        return ShareHeartbeatOutcome(
            member_id,
            current.member_epoch,
            self.heartbeat_interval_ms,
            dict(current.assigned_partitions) if (full or changed) else None,
            tuple(out),
            snap,
        )

    def _update_target_assignment(
        self, assignable: Mapping[uuid.UUID, tuple[str, frozenset[int]]], now_ms: int, out: list[r.ShareGroupRecord]
    ) -> None:
        by_name = {name: topic_id for topic_id, (name, _) in assignable.items()}
        subscriptions = {
            m.member_id: frozenset(by_name[n] for n in m.subscribed_topic_names if n in by_name)
            for m in self.members.values()
        }
        partitions = {topic_id: sorted(parts) for topic_id, (_, parts) in assignable.items()}
        target = assignor.assign(subscriptions, partitions, self.target_assignment)
        for member_id in sorted(target):
            if member_id not in self.target_assignment or self.target_assignment[member_id] != target[member_id]:
                self._emit(out, self._target_member_record(member_id, target[member_id]))
        self._emit(
            out,
            r.ShareGroupRecord(
                r.ShareGroupTargetAssignmentMetadataKey(self.group_id),
                r.ShareGroupTargetAssignmentMetadataValue(self.group_epoch, now_ms),
            ),
        )

    # -- leaving and expiry -----------------------------------------------------------------------------------------
    def _fence(self, member_id: str, topics: TopicsView | None, out: list[r.ShareGroupRecord]) -> None:
        """Remove the member (tombstones 14, 13, 10) and bump the group epoch (record 11)."""
        for key in (
            r.ShareGroupCurrentMemberAssignmentKey(self.group_id, member_id),
            r.ShareGroupTargetAssignmentMemberKey(self.group_id, member_id),
            r.ShareGroupMemberMetadataKey(self.group_id, member_id),
        ):
            self._emit(out, r.ShareGroupRecord.tombstone(key))
        new_hash = metadata_hash(self.assignable(topics)) if topics is not None else self.metadata_hash
        self._emit(out, self._epoch_record(self.group_epoch + 1, new_hash))

    def leave(self, member_id: str, topics: TopicsView | None = None) -> list[r.ShareGroupRecord]:
        """Fence ``member_id``; [] when it is not a member."""
        if member_id not in self.members:
            return []
        out: list[r.ShareGroupRecord] = []
        self._fence(member_id, topics, out)
        return out

    def expire(self, now_ms: int, topics: TopicsView | None = None) -> list[r.ShareGroupRecord]:
        """Fence the members whose session passed; a member without a deadline (loaded) gets a fresh session.
        To undo when the append fails: ``snap = snapshot()`` before, ``restore(snap)``."""
        out: list[r.ShareGroupRecord] = []
        for member_id in sorted(self.members):
            m = self.members[member_id]
            if m.session_deadline_ms <= 0:
                self.members[member_id] = replace(m, session_deadline_ms=now_ms + self.session_timeout_ms)
            elif now_ms >= m.session_deadline_ms:
                self._fence(member_id, topics, out)
        return out

    # -- share-partition state ------------------------------------------------------------------------------------
    def deleted_topics(self, topics: TopicsView) -> dict[uuid.UUID, tuple[str, frozenset[int]]]:
        """The initialized topics that no longer exist (deleted; a topic re-created gets a new id)."""
        return {t: v for t, v in self.initialized.items() if topics.topic_name(t) is None}

    def mark_initialized(
        self, done: Mapping[uuid.UUID, tuple[str, Collection[int]]], removed: Collection[uuid.UUID] = ()
    ) -> list[r.ShareGroupRecord]:
        """Record 15 adding ``done`` (topic id -> (name, partitions)) to the initialized partitions and dropping the
        topics ``removed`` (applied); [] when nothing changes."""
        merged = {t: v for t, v in self.initialized.items() if t not in removed}
        for topic_id, (name, parts) in done.items():
            before = merged.get(topic_id, (name, frozenset()))[1]
            merged[topic_id] = (name, before | frozenset(parts))
        if merged == self.initialized:
            return []
        out: list[r.ShareGroupRecord] = []
        self._emit(out, self._state_partition_record(merged))
        return out

    def initialized_partitions(self) -> list[tuple[uuid.UUID, int]]:
        return [(t, p) for t, (_, ps) in sorted(self.initialized.items()) for p in sorted(ps)]

    def delete_records(self) -> list[r.ShareGroupRecord]:
        """The tombstones of the whole group (Kafka's order; not applied)."""
        members = sorted(self.members)
        keys: list[r.ShareGroupRecordKey] = [r.ShareGroupCurrentMemberAssignmentKey(self.group_id, m) for m in members]
        keys += [r.ShareGroupTargetAssignmentMemberKey(self.group_id, m) for m in members]
        keys.append(r.ShareGroupTargetAssignmentMetadataKey(self.group_id))
        keys += [r.ShareGroupMemberMetadataKey(self.group_id, m) for m in members]
        keys += [r.ShareGroupStatePartitionMetadataKey(self.group_id), r.ShareGroupMetadataKey(self.group_id)]
        return [r.ShareGroupRecord.tombstone(key) for key in keys]

    # -- describe ---------------------------------------------------------------------------------------------
    def describe(self, topic_names: Callable[[uuid.UUID], str | None]) -> ShareGroupDescription:
        """ShareGroupDescribe's view; partitions of topics ``topic_names`` does not know are left out."""

        def described(assignment: Assignment) -> tuple[DescribedTopicPartitions, ...]:
            out = []
            for topic_id, parts in sorted(assignment.items()):
                name = topic_names(topic_id)
                if name is not None and parts:
                    out.append(DescribedTopicPartitions(topic_id, name, tuple(sorted(parts))))
            return tuple(out)

        members = tuple(
            DescribedShareMember(
                m.member_id, m.rack_id, m.member_epoch, m.client_id, m.client_host, m.subscribed_topic_names,
                described(m.assigned_partitions),
            )
            for _, m in sorted(self.members.items())
        )  # fmt: skip
        return ShareGroupDescription(
            self.group_id, self.state, self.group_epoch, self.assignment_epoch, assignor.NAME, members
        )


def _metadata(m: ShareGroupMember) -> tuple[Any, ...]:
    return (m.rack_id, m.client_id, m.client_host, m.subscribed_topic_names)


def validate_heartbeat(
    member_id: str, member_epoch: int, rack_id: str | None, subscribed_topic_names: Collection[str] | None
) -> None:
    """Kafka's ``throwIfShareGroupHeartbeatRequestIsInvalid`` (v1): INVALID_REQUEST with its messages."""
    if not member_id:
        raise GroupError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    if member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
        raise GroupError(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
    if member_epoch == 0 and not subscribed_topic_names:
        raise GroupError(ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
    if rack_id is not None and not rack_id.strip():
        raise GroupError(ErrorCode.INVALID_REQUEST, "RackId can't be empty.")
