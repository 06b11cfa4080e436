"""``MemberUpdates``: the steps every change of a consumer group member goes through (a base class of
``ConsumerGroup``, under ``ClassicMembers``, so the heartbeat and the classic-protocol APIs share them).

Kafka's three steps for a member that heartbeats or joins (``_update_member``): persist its new subscription,
bumping the group epoch when subscriptions, resolved regular expressions or the subscribed topics' metadata
changed (``_refresh_regexes``: Python's ``re`` with ``fullmatch``; ``_compute_metadata_hash``: a blake2b-64
hash of the subscribed topics' ids, names, partition counts and racks, our own function); recompute the target
assignment with the preferred server assignor when the group epoch is ahead (``_update_target_assignment``);
and reconcile the member toward its target (``reconciliation.reconcile``). Also the static-member replacement
(Kafka's ``replaceMember``, ``_replace_static``) and ``preferred_assignor``. Every change is made by emitting
records into ``out`` and replaying them (``GroupRecords._emit``). Pure and not thread-safe, as ``ConsumerGroup``.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Collection, Mapping
from dataclasses import replace

from spark_kafkalog.protocol import ErrorCode

from ..group import GroupError
from . import records as r
from .assignors import MemberSubscriptionSpec, PartitionAssignor, PartitionAssignorError
from .group_state import GroupRecords, TopicsView, assignment_fields, subscription_fields
from .member import ConsumerGroupMember, MemberState, normalize
from .reconciliation import reconcile


def compile_regex(regex: str) -> re.Pattern[str]:
    """``regex`` compiled; GroupError(INVALID_REGULAR_EXPRESSION) naming it when it is not valid."""
    try:
        return re.compile(regex)
    except re.error as exc:
        raise GroupError(
            ErrorCode.INVALID_REGULAR_EXPRESSION,
            f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {exc}",
        ) from None


class MemberUpdates(GroupRecords):
    """The member-update steps of ``ConsumerGroup`` (a base class of it; see the module docstring)."""

    assignors: dict[str, PartitionAssignor]
    default_assignor: str

    def preferred_assignor(self) -> str:
        """The server assignor most members ask for (ties: the name first in sort order), else the default."""
        counts: dict[str, int] = {}
        for m in self.members.values():
            if m.server_assignor:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return self.default_assignor
        return min(counts, key=lambda name: (-counts[name], name))

    def _replace_static(
        self, old: ConsumerGroupMember, member_id: str, out: list[r.CoordinatorRecord]
    ) -> ConsumerGroupMember:
        """Kafka's replaceMember: the new member id takes the old one's subscription, target and partitions."""
        new = replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        target = self.target_assignment.get(old.member_id, {})
        for rec in self._member_tombstones(old.member_id):
            self._emit(out, rec)
        self._emit(out, self._member_metadata_record(new))
        self._emit(out, self._target_member_record(member_id, target))
        self._emit(out, self._current_assignment_record(new))
        return self.members[member_id]

    def _update_member(
        self,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        topics: TopicsView,
        now_ms: int,
        owned: Mapping[uuid.UUID, frozenset[int]] | None,
        out: list[r.CoordinatorRecord],
    ) -> ConsumerGroupMember:
        """Kafka's three steps for a member that heartbeats or joins: persist its new subscription (bumping the
        group epoch when subscriptions, resolved regexes or the subscribed topics' metadata changed), recompute
        the target assignment when the group epoch is ahead, and reconcile the member toward its target
        (``owned``: the partitions it reports, None when it did not). ``member`` is the member before the
        request (as resolved), ``updated`` with the request's fields. Returns the member as it now is."""
        bump = self.group_epoch == 0 or not self._created
        member_id = updated.member_id
        known = self.members.get(member_id)
        if known is None or subscription_fields(known) != subscription_fields(updated):
            self._emit(out, self._member_metadata_record(updated))
            if known is None or known.subscribed_topic_names != updated.subscribed_topic_names:
                bump = True
        if known is not None and (
            known.member_epoch != updated.member_epoch
            or known.assigned_partitions != updated.assigned_partitions
            or known.partitions_pending_revocation != updated.partitions_pending_revocation
        ):
            # A rejoin reset (epoch 0, no partitions): persisted, and the partitions are released.
            self._emit(out, self._current_assignment_record(updated))
        old_regex = member.subscribed_topic_regex if known is not None else None
        if old_regex != updated.subscribed_topic_regex:
            bump = True
            if old_regex and old_regex not in self._subscribed_regexes():
                self._emit(
                    out, r.CoordinatorRecord.tombstone(r.ConsumerGroupRegularExpressionKey(self.group_id, old_regex))
                )
        bump |= self._refresh_regexes(topics, now_ms, out)
        if bump or topics.version != self._metadata_version:
            new_hash = self._compute_metadata_hash(topics)
            self._metadata_version = topics.version
            if new_hash != self.metadata_hash:
                bump = True
            if bump:
                self._emit(out, self._epoch_record(self.group_epoch + 1, new_hash))

        if self.group_epoch > self.assignment_epoch:
            self._update_target_assignment(topics, now_ms, out)

        current = self.members[member_id]
        if not (current.state is MemberState.STABLE and current.member_epoch == self.assignment_epoch):
            reconciled = reconcile(
                current,
                target_epoch=self.assignment_epoch,
                target=self.target_assignment.get(member_id, {}),
                subscribed_topic_ids=self._member_topic_ids(current, topics),
                partition_owner=self.partition_owner,
                owned=owned,
            )
            if assignment_fields(reconciled) != assignment_fields(current):
                self._emit(out, self._current_assignment_record(reconciled))
                current = self.members[member_id]
                if current.state is MemberState.UNREVOKED_PARTITIONS:
                    current = replace(current, rebalance_deadline_ms=now_ms + current.rebalance_timeout_ms)
                else:
                    current = replace(current, rebalance_deadline_ms=None)
        return current

    def _subscribed_regexes(self) -> set[str]:
        return {m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex}

    def _refresh_regexes(self, topics: TopicsView, now_ms: int, out: list[r.CoordinatorRecord]) -> bool:
        """Resolve regexes that are new or stale (``topics.version`` moved); True when a resolution changed."""
        changed = False
        names: Collection[str] | None = None
        for regex in sorted(self._subscribed_regexes()):
            known = self.resolved_regexes.get(regex)
            if known is not None and known.version == topics.version:
                continue
            if names is None:
                names = topics.topic_names()
            pattern = compile_regex(regex)
            matched = frozenset(n for n in names if pattern.fullmatch(n))
            if known is None or known.topics != matched:
                changed = True
            if known is None or known.topics != matched or known.version != topics.version:
                self._emit(
                    out,
                    r.CoordinatorRecord(
                        r.ConsumerGroupRegularExpressionKey(self.group_id, regex),
                        r.ConsumerGroupRegularExpressionValue(tuple(sorted(matched)), topics.version, now_ms),
                    ),
                )
        return changed

    def _compute_metadata_hash(self, topics: TopicsView) -> int:
        h = hashlib.blake2b(digest_size=8)
        for name in sorted(self.subscribed_topic_names()):
            topic_id = topics.topic_id(name)
            if topic_id is None:
                continue
            count = topics.partition_count(topic_id)
            h.update(f"{name}\0{topic_id}\0{count}\0".encode())
            for p in range(max(count, 0)):
                racks = topics.partition_racks(topic_id, p)
                if racks:
                    h.update(f"{p}:{','.join(sorted(racks))}\0".encode())
        if not self.subscribed_topic_names():
            return 0
        return int.from_bytes(h.digest(), "big", signed=True)

    def _update_target_assignment(self, topics: TopicsView, now_ms: int, out: list[r.CoordinatorRecord]) -> None:
        assignor = self.assignors.get(self.preferred_assignor()) or self.assignors[self.default_assignor]
        specs = {
            m.member_id: MemberSubscriptionSpec(
                subscribed_topic_ids=self._member_topic_ids(m, topics),
                assignment=self.target_assignment.get(m.member_id, {}),
                rack_id=m.rack_id,
                instance_id=m.instance_id,
            )
            for m in self.members.values()
        }
        try:
            new_target = assignor.assign(specs, topics)
        except PartitionAssignorError as exc:
            raise GroupError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Failed to compute a new target assignment for epoch {self.group_epoch}: {exc}",
            ) from None
        for member_id in sorted(new_target):
            assignment = normalize(new_target[member_id])
            if member_id not in self.target_assignment or self.target_assignment[member_id] != assignment:
                self._emit(out, self._target_member_record(member_id, assignment))
        self._emit(
            out,
            r.CoordinatorRecord(
                r.ConsumerGroupTargetAssignmentMetadataKey(self.group_id),
                r.ConsumerGroupTargetAssignmentMetadataValue(self.group_epoch, now_ms),
            ),
        )
