"""The ``range`` and ``roundrobin`` assignors, and ``assignor_by_name``: any assignor by its Kafka name.

``sticky`` and ``cooperative-sticky`` are in ``sticky_assignors``; the base every assignor shares, with the
contract of ``assign``, in ``partition_assignor``.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import cycle

from spark_kafkalog.client.consumer.consumer_protocol import Assignment, Subscription
from spark_kafkalog.client.consumer.java_collections import java_string_key
from spark_kafkalog.client.consumer.partition_assignor import (
    PartitionAssignor,
    UnknownAssignorError,
    member_order,
    partitions_by_topic,
    to_assignments,
)
from spark_kafkalog.client.consumer.sticky_assignors import CooperativeStickyAssignor, StickyAssignor
from spark_kafkalog.client.types import TopicPartition

__all__ = ["RangeAssignor", "RoundRobinAssignor", "assignor_by_name"]


class RangeAssignor(PartitionAssignor):
    """``range``: per topic, partitions in numeric order split into contiguous ranges over the members
    subscribed to it in member order; the first ``partitions % members`` members get one extra.

    Two members C0, C1 and topics t0, t1 of 3 partitions each give C0 [t0p0, t0p1, t1p0, t1p1] and
    C1 [t0p2, t1p2] (Kafka's javadoc example). Co-partitioned topics land together.
    """

    name = "range"

    def assign(
        self, cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        counts = partitions_by_topic(cluster_partitions, subscriptions)
        ordered = member_order(subscriptions)
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        for topic, count in counts.items():
            members = [m for m in ordered if topic in subscriptions[m].topics]
            per_member, extra = divmod(count, len(members))
            start = 0
            for i, member in enumerate(members):
                length = per_member + (1 if i < extra else 0)
                result[member].extend(TopicPartition(topic, p) for p in range(start, start + length))
                start += length
        return to_assignments(result)


class RoundRobinAssignor(PartitionAssignor):
    """``roundrobin``: all partitions of all subscribed topics (topics in name order) dealt one at a time to
    the members in member order, skipping a member not subscribed to the partition's topic.

    With identical subscriptions the counts differ by at most one. Kafka's javadoc example: C0 on t0; C1 on t0,
    t1; C2 on t0, t1, t2 with t0 (1 partition), t1 (2), t2 (3) give C0 [t0p0], C1 [t1p0], C2 [t1p1, t2p0, t2p1,
    t2p2].
    """

    name = "roundrobin"

    def assign(
        self, cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        counts = partitions_by_topic(cluster_partitions, subscriptions)
        result: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
        if not subscriptions:
            return {}
        members = cycle(member_order(subscriptions))
        current = next(members)
        for topic in sorted(counts, key=java_string_key):
            for partition in range(counts[topic]):
                while topic not in subscriptions[current].topics:
                    current = next(members)
                result[current].append(TopicPartition(topic, partition))
                current = next(members)
        return to_assignments(result)


def assignor_by_name(name: str) -> PartitionAssignor:
    """A new assignor for a ``partition.assignment.strategy`` name: range, roundrobin, sticky, cooperative-sticky."""
    known: dict[str, type[PartitionAssignor]] = {
        cls.name: cls for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
    }
    try:
        return known[name]()
    except KeyError:
        raise UnknownAssignorError(f"unknown partition assignor {name!r}; known: {', '.join(sorted(known))}") from None
