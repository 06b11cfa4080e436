"""The pure parts of a consumer, shared by the blocking ``Consumer`` and the asyncio ``AIOConsumer``.

Both consumers are the same state machine around different I/O: these functions hold what they decide alike -
how a subscription (topics, ``^`` regexes, a pattern) is read, where a partition without a position starts
(``auto.offset.reset``), how a fetched batch becomes ``ConsumerRecord``s (the key and value deserializers), how
offsets to commit are normalized, which offset stores are read and how their answers merge, when ``subscribe`` is
refused, which commit errors mean the group moved on (``CommitFailedError``) and which
rebalance-listener method a ``RebalanceEvent`` calls. Stateless and thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.group_membership import CommitFailedError, RebalanceEvent
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.serialization import DeserializeFn, SerializationError
from spark_kafkalog.client.types import ConsumerRecord, FetchedBatch, OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "COMMIT_FAILED_CODES",
    "SubscriptionSpec",
    "check_can_subscribe",
    "commit_failed",
    "listener_method",
    "merge_committed",
    "not_a_member",
    "offset_stores",
    "offsets_to_commit",
    "parse_subscription",
    "records_of",
    "reset_spec",
]

COMMIT_FAILED_CODES = frozenset(
    {ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID}
)
"""OffsetCommit errors of a classic member that mean the group rebalanced meanwhile (``CommitFailedError``)."""


class SubscriptionSpec(NamedTuple):
    """A parsed ``subscribe(topics, pattern)``: ``topics`` named exactly, ``patterns`` matching names (for the
    classic protocol, resolved by the client), ``regex`` the same patterns as one regular expression (for the consumer
    protocol, resolved by the coordinator; None without patterns)."""

    topics: tuple[str, ...]
    patterns: list[Callable[[str], Any]]
    regex: str | None

    @property
    def empty(self) -> bool:
        return not self.topics and not self.patterns


def parse_subscription(topics: str | Iterable[str], pattern: str | re.Pattern[str] | None) -> SubscriptionSpec:
    """``pattern`` matches a whole topic name (as Java); entries of ``topics`` starting with ``^`` are regular
    expressions searched in the name (as librdkafka)."""
    names = [topics] if isinstance(topics, str) else list(topics)
    patterns: list[Callable[[str], Any]] = [re.compile(n).search for n in names if n.startswith("^")]
    sources = [n for n in names if n.startswith("^")]
    if pattern is not None:
        patterns.append(re.compile(pattern).fullmatch if isinstance(pattern, str) else pattern.fullmatch)
        sources.append(pattern if isinstance(pattern, str) else pattern.pattern)
    regex = None if not sources else sources[0] if len(sources) == 1 else "|".join(f"(?:{p})" for p in sources)
    return SubscriptionSpec(tuple(n for n in names if not n.startswith("^")), patterns, regex)


def reset_spec(policy: str, tps: Iterable[TopicPartition]) -> int:
    """The ListOffsets spec that ``auto.offset.reset`` = ``policy`` gives partitions without a position (``none``
    raises naming them)."""
    if policy == "none":
        raise KafkaClientError(
            f"no position for {', '.join(map(str, tps))} and auto.offset.reset=none; call seek() first",
            retriable=False,
        )
    return OffsetSpec.EARLIEST if policy == "earliest" else OffsetSpec.LATEST


def deserializers(config: ClientConfig) -> tuple[DeserializeFn, DeserializeFn]:
    """The key and value deserializers of ``config`` as functions of ``(data, topic, headers)``
    (``ClientConfig.key_deserializer_for()``: the bytes as they are where none is set)."""
    return config.key_deserializer_for(), config.value_deserializer_for()


def records_of(
    fetched: FetchedBatch,
    position: int,
    deserialize_key: DeserializeFn,
    deserialize_value: DeserializeFn,
) -> Iterator[ConsumerRecord]:
    """The records of one fetched batch at or after ``position``, keys and values deserialized; a
    ``SerializationError`` names the record's partition and offset (the records before it are yielded)."""
    tp = fetched.topic_partition
    topic = tp.topic
    timestamp_type = fetched.batch.header().timestamp_type
    for record in fetched.batch.records():
        if record.offset < position:
            continue
        headers = record.headers
        try:
            key = deserialize_key(record.key, topic, headers)
            value = deserialize_value(record.value, topic, headers)
        except SerializationError as e:
            e.at_record(tp.partition, record.offset)
            raise
        yield ConsumerRecord(topic, tp.partition, record.offset, record.timestamp, timestamp_type, key, value, headers)


def offsets_to_commit(
    offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
) -> dict[TopicPartition, OffsetAndMetadata]:
    """``{tp: offset or OffsetAndMetadata}`` as ``{TopicPartition: OffsetAndMetadata}``."""
    return {
        TopicPartition(*tp): v if isinstance(v, OffsetAndMetadata) else OffsetAndMetadata(int(v))
        for tp, v in offsets.items()
    }


def check_can_subscribe(group_id: str | None, subscribed: bool, assigned: bool) -> None:
    """Raise why ``subscribe`` is refused: no ``group.id``, or partitions assigned by hand (``assign``) while not
    subscribed."""
    if group_id is None:
        raise KafkaClientError("subscribe needs a group.id (or use assign())", retriable=False)
    if not subscribed and assigned:
        raise KafkaClientError(
            "subscribe() and assign() are mutually exclusive; unsubscribe() or assign([]) first", retriable=False
        )


def offset_stores(config: ClientConfig) -> list[str]:
    """The stores committed offsets are read from: ``offsets.storage``, or with ``dual.commit.enabled`` (migrating
    either way) both, "kafka" first."""
    return ["kafka", "zookeeper"] if config.dual_commit_enabled else [config.offsets_storage]


def merge_committed(
    found: dict[TopicPartition, OffsetAndMetadata], stored: Mapping[TopicPartition, OffsetAndMetadata]
) -> None:
    """Add one store's committed offsets to ``found``, the larger offset winning (so a step of a migration between
    stores never reads a record twice)."""
    for tp, om in stored.items():
        if tp not in found or om.offset > found[tp].offset:
            found[tp] = om


def not_a_member(group: str) -> CommitFailedError:
    """A classic member's commit while it has no generation (rebalancing)."""
    return CommitFailedError(
        f"group {group!r}: this consumer is not a member of an active generation (it is rebalancing); "
        "poll() to rejoin, then commit the positions of the partitions it owns then",
        error_code=ErrorCode.REBALANCE_IN_PROGRESS,
        retriable=False,
    )


def commit_failed(group: str, error_code: int) -> CommitFailedError:
    """A classic member's commit refused with one of ``COMMIT_FAILED_CODES``."""
    return CommitFailedError(
        f"group {group!r}: the commit failed because the group rebalanced ({ErrorCode(error_code).name}); "
        "its partitions may be assigned to another member now",
        error_code=error_code,
        retriable=False,
    )


def listener_method(listener: Any, event: RebalanceEvent) -> Callable[[list[TopicPartition]], Any] | None:
    """The rebalance listener's method for ``event`` (``on_partitions_lost`` falls back to
    ``on_partitions_revoked``, as Java's ``ConsumerRebalanceListener``), None when it has none."""
    if event.kind == "lost" and not hasattr(listener, "on_partitions_lost"):
        return getattr(listener, "on_partitions_revoked", None)
    return getattr(listener, f"on_partitions_{event.kind}", None)
