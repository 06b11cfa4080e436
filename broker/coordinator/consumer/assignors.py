"""The server-side assignors of KIP-848 consumer groups: ``uniform`` (the default) and ``range``, pure and
deterministic (same input, same output; members and topics are visited in sorted order).

An assignor gets every member's ``MemberSubscriptionSpec`` (its subscribed topic ids, rack and current
*target* assignment, which is what stickiness keeps) and a ``SubscribedTopicDescriber`` (partition count
per topic id, -1 for an unknown topic; racks per partition), and returns the new target assignment of
every member (``{member_id: Assignment}``, empty assignments included).

- ``UniformAssignor`` ("uniform", Kafka's ``UniformAssignor``): spreads all partitions of the subscribed
  topics so that members subscribed to the same topics differ by at most one partition, moving as few
  partitions as possible. A member keeps its current partitions that are still valid (subscribed,
  existing, not kept by someone else); the partitions left over go one at a time to the eligible member
  with the fewest partitions (ties: a member in the partition's rack, then the lowest member id); then
  partitions move from the most to the least loaded eligible member while the two differ by more than
  one. With homogeneous subscriptions this gives Kafka's quotas (``P // M``, ``P % M`` members one more)
  and keeps a balanced assignment unchanged; with heterogeneous ones it balances each member against
  the members that share its topics (Kafka's heterogeneous builder can pick a different, equally
  balanced, outcome). Rack preference only breaks ties (Kafka 4.x's uniform builders ignore racks).
- ``RangeAssignor`` ("range", Kafka's server-side ``RangeAssignor``): per topic, the subscribed members
  (sorted by member id) get ``P // M`` partitions each, the first ``P % M`` of those that need one an
  extra; a member keeps the lowest of its current partitions up to its quota (sticky), the rest are
  handed out in ascending ranges. Co-partitioned topics subscribed by the same members get the same
  partition numbers per member on a fresh assignment.

``PartitionAssignorError`` is raised for a member subscribed to a topic the describer does not know
(the group maps it to UNKNOWN_SERVER_ERROR, as Kafka does; the group only passes existing topics).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .member import Assignment

DEFAULT_ASSIGNORS = ("uniform", "range")
"""Kafka's default ``group.consumer.assignors``: the first is the group's default."""


class PartitionAssignorError(Exception):
    """The assignor cannot compute an assignment (a subscribed topic is unknown)."""


@dataclass(frozen=True)
class MemberSubscriptionSpec:
    """What an assignor knows of one member (Kafka's ``MemberSubscriptionAndAssignment``)."""

    subscribed_topic_ids: frozenset[uuid.UUID]
    assignment: Assignment = field(default_factory=dict)
    """The member's current target assignment (what stickiness keeps)."""
    rack_id: str | None = None
    instance_id: str | None = None


class SubscribedTopicDescriber(Protocol):
    """Topic facts an assignor needs (Kafka's ``SubscribedTopicDescriber``)."""

    def partition_count(self, topic_id: uuid.UUID) -> int:
        """The topic's partition count, or -1 when the topic does not exist."""
        ...

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        """The racks of the partition's replicas (empty when unknown)."""
        ...


class PartitionAssignor(Protocol):
    """Kafka's ``ConsumerGroupPartitionAssignor``: a name and ``assign``."""

    @property
    def name(self) -> str: ...

    def assign(
        self, members: Mapping[str, MemberSubscriptionSpec], topics: SubscribedTopicDescriber
    ) -> dict[str, Assignment]: ...


def _partition_counts(
    members: Mapping[str, MemberSubscriptionSpec], topics: SubscribedTopicDescriber
) -> dict[uuid.UUID, int]:
    counts: dict[uuid.UUID, int] = {}
    for member_id in sorted(members):
        for topic_id in members[member_id].subscribed_topic_ids:
            if topic_id not in counts:
                n = topics.partition_count(topic_id)
                if n < 0:
                    raise PartitionAssignorError(f"member {member_id} is subscribed to unknown topic {topic_id}")
                counts[topic_id] = n
    return counts


def _freeze(
    assign: Mapping[str, Mapping[uuid.UUID, Iterable[int]]], member_ids: Iterable[str]
) -> dict[str, Assignment]:
    out: dict[str, Assignment] = {}
    for member_id in member_ids:
        parts = assign.get(member_id, {})
        out[member_id] = {t: frozenset(p) for t, p in parts.items() if p}
    return out


class UniformAssignor:
    """``uniform``: balanced and sticky (see the module docstring)."""

    name = "uniform"

    def assign(
        self, members: Mapping[str, MemberSubscriptionSpec], topics: SubscribedTopicDescriber
    ) -> dict[str, Assignment]:
        return _UniformBuilder(members, topics).build()


class _UniformBuilder:
    """One run of the uniform assignor: who holds what, each member's load, the subscribers of each topic."""

    def __init__(self, members: Mapping[str, MemberSubscriptionSpec], topics: SubscribedTopicDescriber) -> None:
        self.members = members
        self.topics = topics
        self.counts = _partition_counts(members, topics)
        self.member_ids = sorted(members)
        self.subscribers: dict[uuid.UUID, list[str]] = {
            t: [m for m in self.member_ids if t in members[m].subscribed_topic_ids] for t in sorted(self.counts)
        }
        self.owner: dict[tuple[uuid.UUID, int], str] = {}
        self.load = dict.fromkeys(self.member_ids, 0)
        self.held: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in self.member_ids}

    def give(self, topic_id: uuid.UUID, p: int, member_id: str) -> None:
        self.owner[(topic_id, p)] = member_id
        self.held[member_id].setdefault(topic_id, set()).add(p)
        self.load[member_id] += 1

    def take(self, topic_id: uuid.UUID, p: int) -> None:
        member_id = self.owner.pop((topic_id, p))
        parts = self.held[member_id][topic_id]
        parts.discard(p)
        if not parts:
            del self.held[member_id][topic_id]
        self.load[member_id] -= 1

    def build(self) -> dict[str, Assignment]:
        self.keep_current()
        self.trim_homogeneous()
        self.hand_out()
        while self.shift_once():
            pass
        return _freeze(self.held, self.member_ids)

    def keep_current(self) -> None:
        """Stickiness: a member keeps what is still valid (subscribed, existing, not kept by another)."""
        for member_id in self.member_ids:
            spec = self.members[member_id]
            for topic_id in sorted(spec.assignment):
                if topic_id not in spec.subscribed_topic_ids:
                    continue
                for p in sorted(spec.assignment[topic_id]):
                    if p < self.counts[topic_id] and (topic_id, p) not in self.owner:
                        self.give(topic_id, p, member_id)

    def trim_homogeneous(self) -> None:
        """Homogeneous subscriptions: a member keeps at most Kafka's quota, ``P // M``, or one more for the
        first ``P % M`` members (by id) that already hold more; the highest partitions go back."""
        if len({self.members[m].subscribed_topic_ids for m in self.member_ids}) != 1:
            return
        base, extra = divmod(sum(self.counts.values()), len(self.member_ids))
        for member_id in self.member_ids:
            quota = base
            if self.load[member_id] > base and extra > 0:
                quota, extra = base + 1, extra - 1
            held = sorted(((t, p) for t, ps in self.held[member_id].items() for p in ps), reverse=True)
            for topic_id, p in held[: max(0, self.load[member_id] - quota)]:
                self.take(topic_id, p)

    def hand_out(self) -> None:
        """Each unowned partition goes to the least loaded subscriber (ties: one in the partition's rack,
        then the lowest member id)."""
        for topic_id, subs in self.subscribers.items():
            if not subs:
                continue
            for p in range(self.counts[topic_id]):
                if (topic_id, p) in self.owner:
                    continue
                low = min(self.load[m] for m in subs)
                tied = [m for m in subs if self.load[m] == low]
                if len(tied) > 1:
                    racks = self.topics.partition_racks(topic_id, p)
                    in_rack = [m for m in tied if self.members[m].rack_id in racks] if racks else []
                    tied = in_rack or tied
                self.give(topic_id, p, tied[0])

    def shift_once(self) -> bool:
        """Balance: find a member that can pass a partition, directly or along a chain of members sharing
        topics, to one holding at least two fewer, and shift one partition along the shortest such chain.
        Members reachable from a donor that could not improve are not tried as donors again (what they reach,
        the donor reaches, and they hold no more than it)."""
        load = self.load
        if not load:
            return False
        lowest = min(load.values())
        done: set[str] = set()
        for donor in sorted(self.member_ids, key=lambda m: (-load[m], m)):
            if load[donor] - lowest <= 1:
                return False
            if donor in done:
                continue
            parent: dict[str, tuple[str, uuid.UUID]] = {}
            queue = [donor]
            seen = {donor}
            expanded: set[uuid.UUID] = set()
            for u in queue:
                for topic_id in sorted(self.held[u]):
                    if topic_id in expanded:
                        continue
                    expanded.add(topic_id)
                    for v in self.subscribers[topic_id]:
                        if v not in seen:
                            seen.add(v)
                            parent[v] = (u, topic_id)
                            queue.append(v)
            target = min(queue, key=lambda m: (load[m], m))
            if load[donor] - load[target] <= 1:
                done |= seen
                continue
            path: list[tuple[str, str, uuid.UUID]] = []
            v = target
            while v != donor:
                u, topic_id = parent[v]
                path.append((u, v, topic_id))
                v = u
            for u, v, topic_id in reversed(path):
                p = max(self.held[u][topic_id])
                self.take(topic_id, p)
                self.give(topic_id, p, v)
            return True
        return False


class RangeAssignor:
    """``range``: per-topic ranges, sticky up to the quota (see the module docstring)."""

    name = "range"

    def assign(
        self, members: Mapping[str, MemberSubscriptionSpec], topics: SubscribedTopicDescriber
    ) -> dict[str, Assignment]:
        counts = _partition_counts(members, topics)
        member_ids = sorted(members)
        result: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in member_ids}
        for topic_id in sorted(counts):
            subs = [m for m in member_ids if topic_id in members[m].subscribed_topic_ids]
            n = counts[topic_id]
            quota, extra = divmod(n, len(subs))
            kept: set[int] = set()
            unfilled: list[tuple[str, int]] = []
            for member_id in subs:
                current = sorted(p for p in members[member_id].assignment.get(topic_id, ()) if p < n)
                for p in current[:quota]:
                    kept.add(p)
                    result[member_id].setdefault(topic_id, set()).add(p)
                remaining = quota - len(current)
                if remaining < 0 and extra > 0:
                    extra -= 1
                    kept.add(current[quota])
                    result[member_id].setdefault(topic_id, set()).add(current[quota])
                else:
                    unfilled.append((member_id, remaining))
            free = [p for p in range(n) if p not in kept]
            start = 0
            for member_id, remaining in unfilled:
                if extra > 0:
                    remaining += 1
                    extra -= 1
                if remaining > 0:
                    result[member_id].setdefault(topic_id, set()).update(free[start : start + remaining])
                    start += remaining
        return _freeze(result, member_ids)


BUILTIN_ASSIGNORS: Mapping[str, PartitionAssignor] = {a.name: a for a in (UniformAssignor(), RangeAssignor())}


def assignors_from_config(names: Sequence[str]) -> dict[str, PartitionAssignor]:
    """The assignors ``group.consumer.assignors`` names, in order (the first is the default). Raises
    ValueError for an unknown name or an empty list (Kafka accepts class names too; we serve the two
    built-in ones)."""
    if not names:
        raise ValueError("group.consumer.assignors must name at least one assignor")
    out: dict[str, PartitionAssignor] = {}
    for raw in names:
        name = raw.strip()
        short = {
            "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
            "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
        }.get(name, name)
        if short not in BUILTIN_ASSIGNORS:
            raise ValueError(f"unknown consumer group assignor {name!r}; known: {', '.join(BUILTIN_ASSIGNORS)}")
        out[short] = BUILTIN_ASSIGNORS[short]
    return out
