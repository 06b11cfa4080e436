"""The base of the client-side partition assignors of the "consumer" protocol and the contract of ``assign``.

The group leader runs the assignor the group agreed on over every member's ``Subscription`` and the partition
counts it knows, and sends each member its ``Assignment`` through SyncGroup. Our assignors give the assignment
Kafka's Java consumer would give as leader (same partitions per member), so a group of Java and Python consumers
behaves the same whoever leads. Contract of ``assign``:

* ``cluster_partitions`` maps a topic to its partition count; subscribed topics missing from it (or with 0
  partitions) are skipped, as Java skips topics without metadata.
* ``subscriptions`` maps member id to ``Subscription`` in the order of the JoinGroup response's member list (a
  Python dict keeps it; Java's leader puts them into a ``HashMap`` in that order, whose iteration order the
  sticky assignors reproduce).
* The result has one ``Assignment`` per member, its partitions sorted by (topic, partition). Static members
  (``group_instance_id``) come before dynamic ones in range and round-robin order, as in Kafka.

Not reproduced: rack-aware assignment (KIP-881), which needs the replicas' racks; members' ``rack_id`` is
carried but ignored. Assignors hold no state between calls except what ``on_assignment`` records for the
member's own next subscription and, in the sticky ones, the highest generation seen (as Kafka's do).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

from spark_kafkalog.client.consumer.consumer_protocol import Assignment, Subscription
from spark_kafkalog.client.consumer.java_collections import java_hash_order, java_string_key
from spark_kafkalog.client.types import TopicPartition

__all__ = [
    "PartitionAssignor",
    "RebalanceProtocol",
    "UnknownAssignorError",
    "member_order",
    "partitions_by_topic",
    "to_assignments",
]


class UnknownAssignorError(ValueError):
    """An assignor name (``partition.assignment.strategy``) that no assignor answers to."""


class RebalanceProtocol(enum.IntEnum):
    """KIP-429: EAGER members revoke everything before rejoining; COOPERATIVE members keep what they own and
    give up only what the leader's assignment no longer lists."""

    EAGER = 0
    COOPERATIVE = 1


def member_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Member ids as Kafka's ``MemberInfo`` orders them: static members by instance id, then dynamic by id
    (members comparing equal, such as a duplicated instance id, stay in the leader's ``HashMap`` order)."""

    def key(member_id: str) -> tuple[int, bytes]:
        instance = subscriptions[member_id].group_instance_id
        return (0, java_string_key(instance)) if instance is not None else (1, java_string_key(member_id))

    return sorted(java_hash_order(subscriptions), key=key)


def partitions_by_topic(cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> dict:
    """Partition counts of the subscribed topics the cluster has (count > 0), as Java's assignors see them."""
    topics = {topic for sub in subscriptions.values() for topic in sub.topics}
    return {t: n for t, n in cluster_partitions.items() if t in topics and n > 0}


def to_assignments(per_member: Mapping[str, Iterable[TopicPartition]]) -> dict[str, Assignment]:
    """One ``Assignment`` per member, its partitions sorted by (topic, partition)."""
    return {
        member: Assignment(sorted(tps, key=lambda tp: (java_string_key(tp.topic), tp.partition)))
        for member, tps in per_member.items()
    }


class PartitionAssignor:
    """Base of the assignors: a Kafka ``name``, the rebalance protocols it supports, ``assign``, and the
    member-side hooks (``subscription_user_data`` for the JoinGroup metadata, ``on_assignment``)."""

    name: str = ""
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def assign(
        self, cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        raise NotImplementedError

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        """The ``user_data`` this member puts into its subscription (none by default)."""
        return None

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        """Called on the member with the assignment it received in ``generation_id``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
