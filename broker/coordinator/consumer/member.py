"""``ConsumerGroupMember``: one member of a KIP-848 consumer group, an immutable value (as Kafka's
``ConsumerGroupMember``): every change builds a new one with ``dataclasses.replace``, so a group's
snapshot is a shallow copy of its member map.

Assignments are ``Assignment`` maps ``{topic_id (uuid.UUID): frozenset[partition]}`` without empty
entries (``normalize`` builds one). ``MemberState`` (re-exported from ``records``) is Kafka's:
STABLE 0 (reconciled with its target), UNREVOKED_PARTITIONS 1 (must revoke ``partitions_pending_revocation``
before its next epoch), UNRELEASED_PARTITIONS 2 (at the target epoch, waiting for partitions other members
still hold), UNKNOWN 127 (written by a newer coordinator).

Epochs: ``member_epoch`` is the epoch the member is at (0 before its first assignment); a member's
``previous_member_epoch`` is the epoch before its last epoch change (-1 if none), which Kafka accepts in a
heartbeat that lost its response (only when the reported owned partitions are a subset of the assigned).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from .records import ClassicMemberMetadata, MemberState

Assignment = Mapping[uuid.UUID, frozenset[int]]
"""Partitions by topic id; no topic maps to an empty set."""

EMPTY_ASSIGNMENT: Assignment = {}

DEFAULT_REBALANCE_TIMEOUT_MS = 300_000
"""Kafka consumer's ``max.poll.interval.ms`` default, the rebalance timeout a member without one gets."""


def member_state(value: int) -> MemberState:
    """The ``MemberState`` of a record's ``state`` byte; a value this version does not know is UNKNOWN (the
    member is then fenced on its next heartbeat, as Kafka does after a downgrade)."""
    try:
        return MemberState(value)
    except ValueError:
        return MemberState.UNKNOWN


def normalize(partitions: Mapping[uuid.UUID, Iterable[int]]) -> dict[uuid.UUID, frozenset[int]]:
    """An ``Assignment`` from any topic -> partitions mapping, dropping empty topics."""
    out: dict[uuid.UUID, frozenset[int]] = {}
    for topic_id, parts in partitions.items():
        frozen = frozenset(parts)
        if frozen:
            out[topic_id] = frozen
    return out


def assignment_size(assignment: Assignment) -> int:
    return sum(len(p) for p in assignment.values())


def assignment_contains(assignment: Assignment, topic_id: uuid.UUID, partition: int) -> bool:
    return partition in assignment.get(topic_id, ())


def is_subset(sub: Mapping[uuid.UUID, Iterable[int]], sup: Assignment) -> bool:
    """Whether every (topic, partition) of ``sub`` is in ``sup``."""
    return all(set(parts) <= sup.get(topic_id, frozenset()) for topic_id, parts in sub.items())


@dataclass(frozen=True)
class ConsumerGroupMember:
    """One member, as Kafka persists it in ConsumerGroupMemberMetadataValue (the subscription part) and
    ConsumerGroupCurrentMemberAssignmentValue (the epoch/state/assignment part); the deadlines are
    in memory only (not compared: a loaded member gets a fresh session)."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    """Sorted, deduplicated (Kafka keeps a set)."""
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = DEFAULT_REBALANCE_TIMEOUT_MS
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned_partitions: Assignment = field(default_factory=dict)
    partitions_pending_revocation: Assignment = field(default_factory=dict)
    classic_member_metadata: ClassicMemberMetadata | None = None
    """Set for a member that joined with the classic protocol (JoinGroup) during an online migration."""
    session_deadline_ms: int = field(default=0, compare=False)
    """When the member is fenced if it sends no heartbeat (last heartbeat + session timeout)."""
    rebalance_deadline_ms: int | None = field(default=None, compare=False)
    """When the member is fenced if it still has not revoked ``partitions_pending_revocation``
    (set on entering UNREVOKED_PARTITIONS: now + rebalance timeout); None otherwise."""

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    def has_subscription(self) -> bool:
        return bool(self.subscribed_topic_names) or bool(self.subscribed_topic_regex)

    def owns(self, topic_id: uuid.UUID, partition: int) -> bool:
        """Whether the member holds the partition (assigned, or pending revocation)."""
        return assignment_contains(self.assigned_partitions, topic_id, partition) or assignment_contains(
            self.partitions_pending_revocation, topic_id, partition
        )

    def with_epoch(self, epoch: int) -> ConsumerGroupMember:
        """Kafka's ``updateMemberEpoch``: the previous epoch becomes the current one, then the epoch changes."""
        return replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch)
