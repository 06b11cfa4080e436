"""Kafka's ``AbstractStickyAssignor``: the algorithm of the ``sticky`` and ``cooperative-sticky`` assignors.

A port (without rack awareness), step for step, so that a group gets the assignment a Java leader would compute,
tie-breaks included (``java_collections`` reproduces the Java iteration orders those depend on):

* All members subscribed to the same topics ("constrained"): each member keeps up to its quota of the partitions
  it owns (quota = partitions / members, the first ``partitions % members`` members to fill up may hold one
  more), the rest are dealt round-robin to members below quota in member-id order.
* Otherwise ("general"): owned partitions of still-subscribed topics are kept, the others go one by one to the
  least-loaded member subscribed to their topic, then partitions move from fuller to emptier members until no
  move improves the balance, preferring to move a partition back to its previous owner.

What each member owned, and in which generation, is the subclass's ``member_data`` (``sticky_assignors``).
When two members claim a partition, the newer generation keeps it; with equal generations neither does. Owned
partitions of topics or partition numbers the cluster lacks are ignored. Where Kafka's code fails with a
NullPointerException (the previous owner of a partition now only holds topics nobody else subscribes to), that
owner is not preferred and the assignment completes.

Like Kafka's, an assignor instance remembers the highest generation it has seen across ``assign`` calls (the
leader's instance lives as long as the consumer). Not thread-safe.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import NamedTuple

from spark_kafkalog.client.consumer.consumer_protocol import DEFAULT_GENERATION, Assignment, Subscription
from spark_kafkalog.client.consumer.java_collections import (
    JavaHashMap,
    java_hash_order,
    java_string_key,
    java_topic_partition_hash,
)
from spark_kafkalog.client.consumer.partition_assignor import PartitionAssignor, partitions_by_topic, to_assignments
from spark_kafkalog.client.types import TopicPartition

__all__ = ["AbstractStickyAssignor", "MemberData", "StickyAssignmentError", "remove_first"]


class StickyAssignmentError(RuntimeError):
    """The sticky algorithm broke one of its own invariants (Kafka raises IllegalStateException there)."""


class MemberData(NamedTuple):
    """What a member says it owned: partitions, and the generation they belong to (None: unknown)."""

    partitions: list[TopicPartition]
    generation: int | None


def _subscription_generation(subscription: Subscription) -> int:
    return subscription.generation_id if subscription.generation_id >= 0 else DEFAULT_GENERATION


def remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    """Java ``List.remove(Object)``: the first occurrence, if any."""
    if tp in items:
        items.remove(tp)


def _tp_key(tp: TopicPartition) -> tuple[bytes, int]:
    return java_string_key(tp.topic), tp.partition


class _SortedMembers:
    """Java's ``TreeSet`` of members ordered by (assigned partition count, member id), over ``current``.

    As in Kafka, a member is removed before its count changes and added back after.
    """

    def __init__(self, current: dict[str, list[TopicPartition]]) -> None:
        self._current = current
        self._entries: list[tuple[int, bytes, str]] = []

    def _entry(self, member: str) -> tuple[int, bytes, str]:
        return len(self._current[member]), java_string_key(member), member

    def add(self, member: str) -> None:
        entry = self._entry(member)
        i = bisect.bisect_left(self._entries, entry)
        if i == len(self._entries) or self._entries[i] != entry:
            self._entries.insert(i, entry)

    def remove(self, member: str) -> None:
        entry = self._entry(member)
        i = bisect.bisect_left(self._entries, entry)
        if i < len(self._entries) and self._entries[i] == entry:
            del self._entries[i]

    def first(self) -> str:
        return self._entries[0][2]

    def last(self) -> str:
        return self._entries[-1][2]

    def __iter__(self) -> Iterator[str]:
        """A snapshot: members in order at the time of the call."""
        return iter([entry[2] for entry in self._entries])


class _PartitionMovements:
    """Kafka's ``PartitionMovements``: which partitions moved between which members during this balance, so that
    a move back along a reversed pair moves the partition that came that way (keeps assignments sticky)."""

    def __init__(self) -> None:
        self._by_topic: dict[str, dict[tuple[str, str], JavaHashMap[TopicPartition, None]]] = {}
        self._movements: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self._movements.pop(tp)
        for_topic = self._by_topic[tp.topic]
        del for_topic[pair][tp]
        if not for_topic[pair]:
            del for_topic[pair]
        if not for_topic:
            del self._by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self._movements[tp] = pair
        pairs = self._by_topic.setdefault(tp.topic, {})
        if pair not in pairs:
            pairs[pair] = JavaHashMap(java_topic_partition_hash)
        pairs[pair][tp] = None

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self._movements:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        if tp.topic not in self._by_topic:
            return tp
        if tp in self._movements:
            old = self._movements[tp][0]
        reverse = self._by_topic[tp.topic].get((new, old))
        if reverse is None:
            return tp
        return next(iter(reverse))


class AbstractStickyAssignor(PartitionAssignor):
    """Kafka's ``AbstractStickyAssignor``: ``assign`` over what ``member_data`` says each member owned."""

    def __init__(self) -> None:
        self._max_generation = DEFAULT_GENERATION
        self.generation = DEFAULT_GENERATION

    def member_data(self, subscription: Subscription) -> MemberData:
        raise NotImplementedError

    def assign(
        self, cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        assignment, _transferring = self.sticky_assign(cluster_partitions, subscriptions)
        return to_assignments(assignment)

    def sticky_assign(
        self, cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str] | None]:
        """Kafka's ``AbstractStickyAssignor.assign``: each member's partitions (Java's list order), and the
        partitions changing owner with their new owner when all subscriptions are equal (else None)."""
        if not subscriptions:
            return {}, {}
        counts = partitions_by_topic(cluster_partitions, subscriptions)
        order = java_hash_order(subscriptions)  # the leader's HashMap of subscriptions
        owned: dict[str, list[TopicPartition]] = {}
        multiple: set[TopicPartition] = set()
        if self._all_subscriptions_equal(counts, subscriptions, order, owned, multiple):
            return _Constrained(counts, owned, multiple).build()
        general = _General(counts, owned, subscriptions, order, self._max_generation, self.member_data)
        return general.build(), None

    def _all_subscriptions_equal(
        self,
        counts: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        order: list[str],
        owned: dict[str, list[TopicPartition]],
        multiple: set[TopicPartition],
    ) -> bool:
        """True iff all members subscribe to the same topics; fills ``owned`` with each member's valid owned
        partitions and ``multiple`` with those claimed by several members of one generation."""
        equal = True
        subscribed: set[str] = set()
        previous_owner: dict[TopicPartition, str] = {}
        for member in order:
            subscription = subscriptions[member]
            if not subscribed:
                subscribed.update(subscription.topics)
            elif equal and not (
                len(subscription.topics) == len(subscribed) and subscribed.issuperset(subscription.topics)
            ):
                equal = False
            data = self.member_data(subscription)
            generation = DEFAULT_GENERATION if data.generation is None else data.generation
            self._max_generation = max(self._max_generation, generation)
            mine: list[TopicPartition] = []
            owned[member] = mine
            for tp in data.partitions:
                if not 0 <= tp.partition < counts.get(tp.topic, 0):
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    mine.append(tp)
                    previous_owner[tp] = member
                    continue
                other_generation = _subscription_generation(subscriptions[other])
                if generation == other_generation:
                    multiple.add(tp)
                    remove_first(owned[other], tp)
                    previous_owner[tp] = member
                elif generation > other_generation:
                    mine.append(tp)
                    remove_first(owned[other], tp)
                    previous_owner[tp] = member
        return equal


def _all_partitions(topics: Iterable[str], counts: Mapping[str, int]) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for topic in topics for p in range(counts[topic])]


class _Constrained:
    """Kafka's ``ConstrainedAssignmentBuilder`` (all members subscribe to the same topics)."""

    def __init__(
        self, counts: Mapping[str, int], owned: dict[str, list[TopicPartition]], multiple: set[TopicPartition]
    ) -> None:
        self.counts = counts
        self.owned = owned
        self.multiple = multiple
        total = sum(counts.values())
        members = len(owned)
        self.min_quota = total // members
        self.max_quota = -(-total // members)
        self.expected_over_min = total % members
        self.current_over_min = 0
        self.assignment: dict[str, list[TopicPartition]] = {member: [] for member in owned}
        self.assigned: list[TopicPartition] = []
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []
        self.transferring: dict[TopicPartition, str] = {}

    def build(self) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str]]:
        self._assign_owned()
        assigned = set(self.assigned)
        topics = sorted(self.counts, key=java_string_key)
        unassigned = [tp for tp in _all_partitions(topics, self.counts) if tp not in assigned]
        self.under_min.sort(key=java_string_key)
        self.exactly_min.sort(key=java_string_key)
        self._assign_round_robin(unassigned)
        self._verify_unfilled()
        return self.assignment, self.transferring

    def _assign_owned(self) -> None:
        for member, partitions in self.owned.items():
            mine = sorted(partitions, key=lambda tp: (tp.partition, java_string_key(tp.topic)))
            for tp in self.multiple:
                remove_first(mine, tp)
            target = self.assignment[member]
            if len(mine) < self.min_quota:
                target.extend(mine)
                self.assigned.extend(mine)
                self.under_min.append(member)
            elif len(mine) >= self.max_quota and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                self._keep(member, mine, self.max_quota)
            else:
                self._keep(member, mine, self.min_quota)
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(member)

    def _keep(self, member: str, mine: list[TopicPartition], quota: int) -> None:
        self.assignment[member].extend(mine[:quota])
        self.assigned.extend(mine[:quota])
        for tp in mine[quota:]:
            self.maybe_revoked[tp] = member

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        position = 0  # Java's iterator over the under-min list: the index of its next member
        for tp in unassigned:
            from_under_min = True
            if position < len(self.under_min):
                member = self.under_min[position]
                position += 1
            elif not self.under_min and not self.exactly_min:
                raise StickyAssignmentError(f"no member left to take {tp} (and {unassigned[-1]} and those between)")
            elif not self.under_min:
                member = self.exactly_min.pop(0)
                from_under_min = False
            else:
                member = self.under_min[0]
                position = 1
            count = self._assign_new(tp, member)
            if count == self.min_quota:
                if not from_under_min:
                    raise StickyAssignmentError(f"member {member} was at {self.min_quota} partitions before {tp}")
                position -= 1
                del self.under_min[position]
                self.exactly_min.append(member)
            elif count == self.max_quota:
                self.current_over_min += 1

    def _assign_new(self, tp: TopicPartition, member: str) -> int:
        target = self.assignment[member]
        target.append(tp)
        previous = self.maybe_revoked.get(tp)
        if (previous is not None and previous != member) or tp in self.multiple:
            self.transferring[tp] = member
        return len(target)

    def _verify_unfilled(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise StickyAssignmentError(
                f"{self.current_over_min} members hold more than {self.min_quota} partitions, "
                f"{self.expected_over_min} should, and none are left for {self.under_min}"
            )
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise StickyAssignmentError(f"member {member} holds fewer than {self.min_quota} partitions")


class _General:
    """Kafka's ``GeneralAssignmentBuilder`` (members subscribe to different topics)."""

    def __init__(
        self,
        counts: Mapping[str, int],
        owned: dict[str, list[TopicPartition]],
        subscriptions: Mapping[str, Subscription],
        order: list[str],
        max_generation: int,
        member_data: Callable[[Subscription], MemberData],
    ) -> None:
        self.counts = counts
        self.total = sum(counts.values())
        self.subscriptions = subscriptions
        self.order = order
        self.max_generation = max_generation
        self.member_data = member_data
        self.current = owned
        self.topic_members: dict[str, list[str]] = {topic: [] for topic in counts}
        self.member_topics: dict[str, list[str]] = {}
        for member in order:
            topics = [topic for topic in subscriptions[member].topics if topic in counts]
            self.member_topics[member] = topics
            for topic in topics:
                self.topic_members[topic].append(member)
            self.current.setdefault(member, [])
        self.partition_owner = {tp: member for member, tps in self.current.items() for tp in tps}
        topics = sorted(self.topic_members, key=lambda t: (len(self.topic_members[t]), java_string_key(t)))
        self.sorted_partitions = _all_partitions(topics, counts)
        self.sorted_members = _SortedMembers(self.current)
        self.revocation_required = False
        self.movements = _PartitionMovements()

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._previous_assignment()
        assigned = set(self._assign_owned())
        unassigned = [tp for tp in self.sorted_partitions if tp not in assigned]
        for member in self.current:
            self.sorted_members.add(member)
        self._balance(previous, unassigned)
        return self.current

    def _previous_assignment(self) -> dict[TopicPartition, tuple[str, int]]:
        """Owners in generations before the newest, newest first (ties: the first member in map order)."""
        previous: dict[TopicPartition, tuple[str, int]] = {}
        for member in self.order:
            data = self.member_data(self.subscriptions[member])
            if data.generation is not None and data.generation < self.max_generation:
                generation = data.generation
            elif data.generation is None and self.max_generation > DEFAULT_GENERATION:
                generation = DEFAULT_GENERATION
            else:
                continue
            for tp in data.partitions:
                if tp not in previous or generation > previous[tp][1]:
                    previous[tp] = (member, generation)
        return previous

    def _assign_owned(self) -> list[TopicPartition]:
        assigned = []
        for member, partitions in self.current.items():
            subscribed = self.subscriptions[member].topics
            for tp in list(partitions):
                if tp.topic not in subscribed:
                    partitions.remove(tp)
                    self.revocation_required = True
                else:
                    assigned.append(tp)
        return assigned

    def _max_assignment_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.counts):
            return self.total
        return sum(self.counts[topic] for topic in topics)

    def _is_balanced(self) -> bool:
        least = len(self.current[self.sorted_members.first()])
        most = len(self.current[self.sorted_members.last()])
        if least >= most - 1:
            return True
        owner = {tp: member for member, tps in self.current.items() for tp in tps}
        for member in self.sorted_members:
            count = len(self.current[member])
            topics = self.member_topics[member]
            if count == self._max_assignment_size(topics):
                continue
            mine = set(self.current[member])
            for topic in topics:
                for p in range(self.counts[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in mine and count + 1 < len(self.current[owner[tp]]):
                        return False
        return True

    def _balance_score(self, assignment: Mapping[str, list[TopicPartition]]) -> int:
        sizes = [len(tps) for tps in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _assign_to_least_loaded(self, tp: TopicPartition) -> None:
        for member in self.sorted_members:
            if tp.topic in self.member_topics[member]:
                self.sorted_members.remove(member)
                self.current[member].append(tp)
                self.partition_owner[tp] = member
                self.sorted_members.add(member)
                return

    def _can_member_participate(self, member: str) -> bool:
        partitions = self.current[member]
        if len(partitions) < self._max_assignment_size(self.member_topics[member]):
            return True
        return any(len(self.topic_members[tp.topic]) >= 2 for tp in partitions)

    def _balance(self, previous: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self.sorted_members.last()]
        for tp in unassigned:
            if self.topic_members[tp.topic]:
                self._assign_to_least_loaded(tp)
        fixed_topics = {topic for topic, members in self.topic_members.items() if len(members) < 2}
        self.sorted_partitions = [tp for tp in self.sorted_partitions if tp.topic not in fixed_topics]
        unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for member in self.member_topics:
            if not self._can_member_participate(member):
                self.sorted_members.remove(member)
                fixed[member] = self.current.pop(member)
        before = {member: list(tps) for member, tps in self.current.items()}
        owners_before = dict(self.partition_owner)
        if not self.revocation_required:
            self._reassign(unassigned, previous)
        moved = self._reassign(self.sorted_partitions, previous)
        if not initializing and moved and self._balance_score(self.current) >= self._balance_score(before):
            self.current.clear()
            self.current.update(before)
            self.partition_owner = owners_before
        self.current.update(fixed)

    def _reassign(self, partitions: list[TopicPartition], previous: dict[TopicPartition, tuple[str, int]]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                member = self.partition_owner[tp]
                size = len(self.current[member])
                earlier = previous.get(tp)
                if earlier is not None and earlier[0] in self.current and size > len(self.current[earlier[0]]) + 1:
                    self._move(tp, earlier[0])
                    performed = modified = True
                    continue
                if any(size > len(self.current[other]) + 1 for other in self.topic_members[tp.topic]):
                    self._move(tp, self._least_loaded_for(tp.topic))
                    performed = modified = True
        return performed

    def _least_loaded_for(self, topic: str) -> str:
        for member in self.sorted_members:
            if topic in self.member_topics[member]:
                return member
        raise StickyAssignmentError(f"no member subscribes to {topic}")

    def _move(self, tp: TopicPartition, new: str) -> None:
        tp = self.movements.partition_to_move(tp, self.partition_owner[tp], new)
        old = self.partition_owner[tp]
        self.sorted_members.remove(old)
        self.sorted_members.remove(new)
        self.movements.move(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.partition_owner[tp] = new
        self.sorted_members.add(new)
        self.sorted_members.add(old)
