"""Reconciliation of one member toward its target assignment (Kafka's ``CurrentAssignmentBuilder``), pure.

Given a member, the group's target assignment epoch and the member's target partitions, ``reconcile``
returns the member's next state:

- STABLE at an older epoch, or UNRELEASED_PARTITIONS, or UNREVOKED_PARTITIONS once the client no longer
  reports the partitions pending revocation: compute the next assignment —
  ``assigned = current ∩ target`` (target empty for topics the member no longer subscribes to),
  ``revoke = current - assigned``, ``pending = target - assigned - partitions another member still
  holds``. With something to revoke that the client still reports owning (or the client did not report
  its partitions): UNREVOKED_PARTITIONS, the epoch stays, assigned shrinks to ``assigned``. Otherwise
  the member moves to the target epoch with ``assigned ∪ pending``: UNRELEASED_PARTITIONS if some target
  partitions are still held by another member, else STABLE.
- UNREVOKED_PARTITIONS with a revoked partition still reported: unchanged.
- STABLE at the target epoch: unchanged (a subscription change always bumps the group epoch, so the member
  is reconciled toward a new target; newer Kafka versions also strip unsubscribed topics at once, which
  that makes unnecessary here).
- UNKNOWN: the member must have reported no partitions (else FENCED_MEMBER_EPOCH); it is reconciled from
  the target epoch.

``partition_owner(topic_id, partition)`` tells who holds a partition now (assigned or pending
revocation), or None; a partition held by the member itself pending revocation is not "unreleased".
Reported owned partitions: ``None`` when the heartbeat did not carry ``topic_partitions``.

The per-partition assignment epochs newer Kafka versions keep are not modelled (4.0's record format).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace

from spark_kafkalog.protocol import ErrorCode

from ..group import GroupError
from .member import Assignment, ConsumerGroupMember, MemberState

PartitionOwner = Callable[[uuid.UUID, int], str | None]
OwnedPartitions = Mapping[uuid.UUID, Collection[int]] | None


def reconcile(
    member: ConsumerGroupMember,
    *,
    target_epoch: int,
    target: Assignment,
    subscribed_topic_ids: Collection[uuid.UUID],
    partition_owner: PartitionOwner,
    owned: OwnedPartitions,
) -> ConsumerGroupMember:
    """The member's next state (the same object when nothing changes). Deadlines are the caller's."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next_assignment(
                member, member.member_epoch, target_epoch, target, subscribed_topic_ids, partition_owner, owned
            )
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.partitions_pending_revocation):
            return member
        return _next_assignment(
            member, member.member_epoch, target_epoch, target, subscribed_topic_ids, partition_owner, owned
        )
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next_assignment(
            member, member.member_epoch, target_epoch, target, subscribed_topic_ids, partition_owner, owned
        )
    if owned is None or any(owned.values()):
        raise GroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"member {member.member_id} is in an unknown state; it must abandon its partitions and rejoin",
        )
    return _next_assignment(member, target_epoch, target_epoch, target, subscribed_topic_ids, partition_owner, owned)


def _owns_any(owned: OwnedPartitions, pending: Assignment) -> bool:
    """Whether the client still reports a partition of ``pending`` (not reporting counts as owning)."""
    if owned is None:
        return True
    return any(p in pending.get(topic_id, ()) for topic_id, parts in owned.items() for p in parts)


def _next_assignment(
    member: ConsumerGroupMember,
    member_epoch: int,
    target_epoch: int,
    target: Assignment,
    subscribed: Collection[uuid.UUID],
    partition_owner: PartitionOwner,
    owned: OwnedPartitions,
) -> ConsumerGroupMember:
    current = member.assigned_partitions
    unreleased = False
    new_assigned: dict[uuid.UUID, frozenset[int]] = {}
    new_revoking: dict[uuid.UUID, frozenset[int]] = {}
    new_pending: dict[uuid.UUID, frozenset[int]] = {}
    for topic_id in sorted(set(target) | set(current)):
        want = target.get(topic_id, frozenset()) if topic_id in subscribed else frozenset()
        have = current.get(topic_id, frozenset())
        keep = have & want
        revoke = have - keep
        pending = set(want - keep)
        held = {p for p in pending if partition_owner(topic_id, p) not in (None, member.member_id)}
        if held:
            unreleased = True
            pending -= held
        if keep:
            new_assigned[topic_id] = keep
        if revoke:
            new_revoking[topic_id] = revoke
        if pending:
            new_pending[topic_id] = frozenset(pending)
    if new_revoking and _owns_any(owned, new_revoking):
        return replace(
            member.with_epoch(member_epoch),
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned_partitions=new_assigned,
            partitions_pending_revocation=new_revoking,
        )
    for topic_id, parts in new_pending.items():
        new_assigned[topic_id] = new_assigned.get(topic_id, frozenset()) | parts
    return replace(
        member.with_epoch(target_epoch),
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        assigned_partitions=new_assigned,
        partitions_pending_revocation={},
    )
