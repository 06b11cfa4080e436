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
from collections.abc import Callable, Iterable, Mapping, Sequence
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
        counts = _partition_counts(members, topics)
        member_ids = sorted(members)
        owner: dict[tuple[uuid.UUID, int], str] = {}
        load = dict.fromkeys(member_ids, 0)
        held: dict[str, set[tuple[uuid.UUID, int]]] = {m: set() for m in member_ids}

        def give(tp: tuple[uuid.UUID, int], member_id: str) -> None:
            owner[tp] = member_id
            held[member_id].add(tp)
            load[member_id] += 1

        def take(tp: tuple[uuid.UUID, int]) -> None:
            member_id = owner.pop(tp)
            held[member_id].discard(tp)
            load[member_id] -= 1

        # 1. Stickiness: keep what is still valid (subscribed, existing, not already kept by another member).
        for member_id in member_ids:
            spec = members[member_id]
            for topic_id in sorted(spec.assignment):
                if topic_id not in spec.subscribed_topic_ids:
                    continue
                for p in sorted(spec.assignment[topic_id]):
                    tp = (topic_id, p)
                    if p < counts[topic_id] and tp not in owner:
                        give(tp, member_id)

        subscribers: dict[uuid.UUID, list[str]] = {
            t: [m for m in member_ids if t in members[m].subscribed_topic_ids] for t in sorted(counts)
        }

        # 2. Homogeneous subscriptions: a member keeps at most Kafka's quota, ``P // M``, or one more for the
        #    first ``P % M`` members (by id) that already hold more; the highest partitions go back.
        if len({members[m].subscribed_topic_ids for m in member_ids}) == 1:
            base, extra = divmod(sum(counts.values()), len(member_ids))
            for member_id in member_ids:
                quota = base
                if load[member_id] > base and extra > 0:
                    quota, extra = base + 1, extra - 1
                for tp in sorted(held[member_id], key=lambda x: (str(x[0]), x[1]), reverse=True):
                    if load[member_id] <= quota:
                        break
                    take(tp)

        # 3. Hand out the unowned partitions to the least loaded subscriber.
        def rack_match(member_id: str, topic_id: uuid.UUID, p: int) -> bool:
            rack = members[member_id].rack_id
            return rack is not None and rack in topics.partition_racks(topic_id, p)

        for topic_id, subs in subscribers.items():
            if not subs:
                continue
            for p in range(counts[topic_id]):
                tp = (topic_id, p)
                if tp in owner:
                    continue
                best = min(subs, key=lambda m: (load[m], not rack_match(m, topic_id, p), m))
                give(tp, best)

        # 4. Balance: while a member can pass a partition, directly or along a chain of members sharing topics,
        #    to one holding at least two fewer, shift one partition along the shortest such chain.
        while self._shift_once(member_ids, members, held, load, take, give):
            pass

        result: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in member_ids}
        for (topic_id, p), member_id in owner.items():
            result[member_id].setdefault(topic_id, set()).add(p)
        return _freeze(result, member_ids)

    @staticmethod
    def _shift_once(
        member_ids: Sequence[str],
        members: Mapping[str, MemberSubscriptionSpec],
        held: Mapping[str, set[tuple[uuid.UUID, int]]],
        load: Mapping[str, int],
        take: Callable[[tuple[uuid.UUID, int]], None],
        give: Callable[[tuple[uuid.UUID, int], str], None],
    ) -> bool:
        for donor in sorted(member_ids, key=lambda m: (-load[m], m)):
            parent: dict[str, tuple[str, tuple[uuid.UUID, int]]] = {}
            queue = [donor]
            seen = {donor}
            for u in queue:
                by_topic: dict[uuid.UUID, int] = {}
                for topic_id, p in held[u]:
                    by_topic[topic_id] = max(p, by_topic.get(topic_id, -1))
                for topic_id in sorted(by_topic):
                    for v in member_ids:
                        if v not in seen and topic_id in members[v].subscribed_topic_ids:
                            seen.add(v)
                            parent[v] = (u, (topic_id, by_topic[topic_id]))
                            queue.append(v)
            if len(queue) == 1:
                continue
            target = min(queue[1:], key=lambda m: (load[m], m))
            if load[donor] - load[target] <= 1:
                continue
            path: list[tuple[str, tuple[uuid.UUID, int]]] = []
            v = target
            while v != donor:
                u, tp = parent[v]
                path.append((v, tp))
                v = u
            for receiver, tp in reversed(path):
                take(tp)
                give(tp, receiver)
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
