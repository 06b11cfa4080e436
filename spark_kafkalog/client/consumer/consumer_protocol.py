"""The "consumer" protocol type of the classic group protocol: member subscriptions and assignments as bytes.

A consumer's JoinGroup carries, per assignor, a ``ConsumerProtocolSubscription`` as the protocol metadata; the
leader's SyncGroup carries a ``ConsumerProtocolAssignment`` per member. Both are ``int16 version`` followed by the
struct at that version (declared in ``spark_kafkalog.protocol.apis.consumer_protocol_*``)::

    ConsumerProtocolSubscription
      v0: topics []string | user_data nullable bytes
      v1: v0 | owned_partitions [](topic string, partitions []int32)     (KIP-429, cooperative rebalancing)
      v2: v1 | generation_id int32 (-1: none)                              (KIP-792)
      v3: v2 | rack_id nullable string                                     (KIP-881)
    ConsumerProtocolAssignment v0-v3
      assigned_partitions [](topic string, partitions []int32) | user_data nullable bytes

Encoding follows Kafka's ``ConsumerProtocol``: subscribed topics and owned partitions are written sorted,
assigned partitions are grouped by topic in order of first appearance. Decoding accepts any version from 0 up;
a version newer than v3 is read by its v3 prefix, as Kafka does. Fields a version lacks decode to their defaults
(no owned partitions, generation -1, no rack). Pure functions over immutable values; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import DATA_BY_NAME, decode_data, encode_data

__all__ = [
    "ASSIGNMENT_VERSION",
    "DEFAULT_GENERATION",
    "PROTOCOL_TYPE",
    "SUBSCRIPTION_VERSION",
    "Assignment",
    "Subscription",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

PROTOCOL_TYPE = "consumer"
"""JoinGroup ``protocol_type`` of Kafka consumers."""

DEFAULT_GENERATION = -1
"""The generation of a member that has none (never joined, or an old subscription version)."""

_SUBSCRIPTION = "ConsumerProtocolSubscription"
_ASSIGNMENT = "ConsumerProtocolAssignment"
SUBSCRIPTION_VERSION = DATA_BY_NAME[_SUBSCRIPTION].versions.hi
"""The newest subscription version we write (3), as Kafka's consumer does whatever the assignor."""
ASSIGNMENT_VERSION = DATA_BY_NAME[_ASSIGNMENT].versions.hi


@dataclass(frozen=True)
class Subscription:
    """One member's subscription as the group leader sees it.

    ``owned_partitions`` are the partitions the member holds now (cooperative rebalancing);
    ``generation_id`` the generation they were assigned in (-1: unknown). ``group_instance_id`` is not part of
    the payload: the leader takes it from the JoinGroup member list (static membership) and assignors order
    static members by it. Sequences are stored as tuples.
    """

    topics: Sequence[str]
    user_data: bytes | None = None
    owned_partitions: Sequence[TopicPartition] = ()
    generation_id: int = DEFAULT_GENERATION
    rack_id: str | None = None
    group_instance_id: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "topics", tuple(self.topics))
        object.__setattr__(self, "owned_partitions", tuple(TopicPartition(*tp) for tp in self.owned_partitions))


@dataclass(frozen=True)
class Assignment:
    """The partitions the leader gives one member, in the leader's order, plus optional assignor data."""

    partitions: Sequence[TopicPartition]
    user_data: bytes | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", tuple(TopicPartition(*tp) for tp in self.partitions))


def _sorted_by_topic(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    """``[(topic, [partition, ...]), ...]`` with topics and partitions ascending."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return [(topic, sorted(by_topic[topic])) for topic in sorted(by_topic)]


def _first_appearance_by_topic(partitions: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    """``[(topic, [partition, ...]), ...]`` grouped by topic in order of first appearance, partitions as given."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return list(by_topic.items())


def encode_subscription(subscription: Subscription, version: int = SUBSCRIPTION_VERSION) -> bytes:
    """JoinGroup protocol metadata for ``subscription`` at ``version`` (0-3); fields newer than it are dropped.

    Raises ``UnsupportedVersionError`` for a version outside 0-3.
    """
    cls = DATA_BY_NAME[_SUBSCRIPTION].cls
    owned = [
        cls.TopicPartition(topic=topic, partitions=partitions)
        for topic, partitions in _sorted_by_topic(subscription.owned_partitions)
    ]
    value = cls(
        topics=sorted(subscription.topics),
        user_data=subscription.user_data,
        owned_partitions=owned,
        generation_id=subscription.generation_id,
        rack_id=subscription.rack_id,
    )
    return encode_data(_SUBSCRIPTION, version, value)


def decode_subscription(data: Any, group_instance_id: str | None = None) -> Subscription:
    """The subscription in JoinGroup member metadata ``data`` (bytes-like, version-prefixed).

    An empty rack id reads as none, as in Kafka. Raises ``DecodeError`` on truncated or malformed data.
    """
    _version, value = decode_data(_SUBSCRIPTION, data)
    return Subscription(
        topics=value.topics,
        user_data=value.user_data,
        owned_partitions=[TopicPartition(tp.topic, p) for tp in value.owned_partitions for p in tp.partitions],
        generation_id=value.generation_id,
        rack_id=value.rack_id or None,
        group_instance_id=group_instance_id,
    )


def encode_assignment(assignment: Assignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    """SyncGroup member assignment for ``assignment`` at ``version`` (0-3; all share one layout)."""
    cls = DATA_BY_NAME[_ASSIGNMENT].cls
    assigned = [
        cls.TopicPartition(topic=topic, partitions=partitions)
        for topic, partitions in _first_appearance_by_topic(assignment.partitions)
    ]
    return encode_data(_ASSIGNMENT, version, cls(assigned_partitions=assigned, user_data=assignment.user_data))


def decode_assignment(data: Any) -> Assignment:
    """The assignment in a SyncGroup response's ``assignment`` bytes (version-prefixed).

    Raises ``DecodeError`` on truncated or malformed data. (An empty byte string, which a coordinator sends
    to a member the leader gave nothing, is malformed here: callers treat it as "no assignment" first.)
    """
    _version, value = decode_data(_ASSIGNMENT, data)
    return Assignment(
        partitions=[TopicPartition(tp.topic, p) for tp in value.assigned_partitions for p in tp.partitions],
        user_data=value.user_data,
    )
