"""The ``sticky`` and ``cooperative-sticky`` assignors: balanced assignments that keep members' partitions.

Both run Kafka's ``AbstractStickyAssignor`` (``sticky_assignment``); they differ in where a member's owned
partitions come from. As in Kafka, for ``cooperative-sticky`` from ``Subscription.owned_partitions`` and
``generation_id`` (subscription v2+; older ones carry the generation as an int32 user data), for ``sticky``
from its user data only, ``StickyAssignorUserData``: ``[](topic string, partitions []int32) | generation int32``
(the generation from v1).

``cooperative-sticky`` then leaves out of the assignment every partition that moves from one member to another
(KIP-429): its owner revokes it on seeing the assignment, rejoins, and the next rebalance hands it over. So a
partition is never assigned to a new member in the generation in which another member still owns it.

Members keep their own last assignment and generation for ``subscription_user_data``. Not thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from spark_kafkalog.client.consumer.consumer_protocol import DEFAULT_GENERATION, Assignment, Subscription
from spark_kafkalog.client.consumer.java_collections import java_hash_order
from spark_kafkalog.client.consumer.partition_assignor import RebalanceProtocol, to_assignments
from spark_kafkalog.client.consumer.sticky_assignment import AbstractStickyAssignor, MemberData, remove_first
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import DecodeError
from spark_kafkalog.protocol.primitives import Reader, Writer

__all__ = [
    "CooperativeStickyAssignor",
    "StickyAssignor",
    "decode_sticky_user_data",
    "encode_sticky_user_data",
]


def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int | None) -> bytes:
    """``StickyAssignorUserData`` v1 (v0 when ``generation`` is None): topics in Java's ``HashMap`` order of
    ``CollectionUtils.groupPartitionsByTopic``, partitions in the given order."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    w = Writer()
    w.int32(len(by_topic))
    for topic in java_hash_order(by_topic):
        w.string(topic)
        w.int32(len(by_topic[topic]))
        for p in by_topic[topic]:
            w.int32(p)
    if generation is not None:
        w.int32(generation)
    return w.getvalue()


def _read_previous_assignment(r: Reader) -> list[TopicPartition]:
    partitions: list[TopicPartition] = []
    for _ in range(r.count(r.int32())):
        topic = r.string()
        partitions.extend(TopicPartition(topic, r.int32()) for _ in range(r.count(r.int32())))
    return partitions


def decode_sticky_user_data(user_data: bytes | None) -> MemberData:
    """A ``sticky`` member's user data as Kafka's StickyAssignor reads it: v1, else v0 (no generation), else
    nothing owned in generation -1; none or empty is nothing owned in no known generation. Trailing bytes
    are ignored."""
    if not user_data:
        return MemberData([], None)
    try:
        r = Reader(user_data, where="StickyAssignorUserData")
        return MemberData(_read_previous_assignment(r), r.int32())
    except DecodeError:
        pass
    try:
        return MemberData(_read_previous_assignment(Reader(user_data, where="StickyAssignorUserData")), None)
    except DecodeError:
        return MemberData([], DEFAULT_GENERATION)


class StickyAssignor(AbstractStickyAssignor):
    """``sticky`` (KIP-54, eager): members carry their last assignment and generation in the user data."""

    name = "sticky"

    def __init__(self) -> None:
        super().__init__()
        self.member_assignment: list[TopicPartition] | None = None

    def member_data(self, subscription: Subscription) -> MemberData:
        return decode_sticky_user_data(subscription.user_data)

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, self.generation)

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        self.member_assignment = list(assignment.partitions)
        self.generation = generation_id


class CooperativeStickyAssignor(AbstractStickyAssignor):
    """``cooperative-sticky`` (KIP-429): owned partitions from the subscription; moving partitions are left out
    of the first rebalance's assignment. Supports the cooperative protocol and, for upgrades, the eager one."""

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def member_data(self, subscription: Subscription) -> MemberData:
        if subscription.generation_id >= 0:  # subscription v2+
            return MemberData(list(subscription.owned_partitions), subscription.generation_id)
        if subscription.user_data is None:
            return MemberData(list(subscription.owned_partitions), None)
        if len(subscription.user_data) < 4:
            return MemberData(list(subscription.owned_partitions), DEFAULT_GENERATION)
        return MemberData(list(subscription.owned_partitions), Reader(subscription.user_data).int32())

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        """The generation as an int32 (CooperativeStickyAssignor user data v0), for leaders reading v0/v1."""
        w = Writer()
        w.int32(self.generation)
        return w.getvalue()

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        self.generation = generation_id

    def assign(
        self, cluster_partitions: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        assignment, transferring = self.sticky_assign(cluster_partitions, subscriptions)
        if transferring is None:
            transferring = _transferring_ownership(subscriptions, assignment)
        for tp, member in transferring.items():
            remove_first(assignment[member], tp)
        return to_assignments(assignment)


def _transferring_ownership(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, list[TopicPartition]]
) -> dict[TopicPartition, str]:
    """Partitions that some member owned, no longer gets, and another member now gets."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, assigned in assignment.items():
        owned = set(subscriptions[member].owned_partitions)
        added.update((tp, member) for tp in assigned if tp not in owned)
        revoked.update(set(subscriptions[member].owned_partitions) - set(assigned))
    return {tp: member for tp, member in added.items() if tp in revoked}
