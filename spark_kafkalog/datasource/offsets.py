"""Spark's offset JSON and the starting/ending limits of a Kafka read (pure: no pyspark, no I/O).

Formats, as Spark's ``JsonUtils`` writes and reads them (partition keys are strings; output sorted by
topic, then partition):

    | what                 | example                                        | sentinels                 |
    |----------------------|------------------------------------------------|---------------------------|
    | partition offsets    | ``{"topicA":{"0":23,"1":-2},"topicB":{"0":-1}}`` | -2 earliest, -1 latest    |
    | offsets option value | ``{"topicA":"earliest","topicB":{"0":23}}``    | also per topic (any case) |
    | partition timestamps | ``{"topicA":{"0":1700000000000}}``             | none: milliseconds >= 0   |
    | assign               | ``{"topicA":[0,1],"topicB":[2,4]}``            |                           |

An offset is always the *next* offset to read: a range ``[start, end)`` ends before ``end``, as
``KafkaConsumer.position()`` does. The limit classes say how a starting or ending position is given
(``startingOffsets``, ``startingOffsetsByTimestamp``, ``startingTimestamp`` and their ending twins);
``planning`` resolves them against a cluster. Everything here is immutable and thread-safe; the
offsets JSON is the same a later streaming reader stores in its checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from spark_kafkalog.client.types import TopicPartition

__all__ = [
    "ASSIGN_EXAMPLE",
    "EARLIEST",
    "LATEST",
    "OFFSETS_EXAMPLE",
    "TIMESTAMPS_EXAMPLE",
    "EarliestLimit",
    "GlobalTimestampLimit",
    "LatestLimit",
    "OffsetLimit",
    "OffsetsJsonError",
    "SpecificOffsetsLimit",
    "SpecificTimestampsLimit",
    "TimestampStrategy",
    "TopicPartition",
    "format_assign",
    "format_partition_offsets",
    "parse_assign",
    "parse_partition_offsets",
    "parse_partition_timestamps",
    "parse_specific_offsets",
]

EARLIEST = -2
"""Sentinel offset: the partition's log start offset (``OffsetSpec.earliest()``)."""
LATEST = -1
"""Sentinel offset: the high watermark (the last stable offset under ``read_committed``)."""

OFFSETS_EXAMPLE = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
TIMESTAMPS_EXAMPLE = '{"topicA":{"0":1700000000000,"1":1700000000000}}'
ASSIGN_EXAMPLE = '{"topicA":[0,1],"topicB":[2,4]}'


class OffsetsJsonError(ValueError):
    """A malformed offsets, timestamps or assign JSON value; the message names the option."""


class TimestampStrategy:
    """``startingOffsetsByTimestampStrategy``: what a starting timestamp with no matching offset means."""

    ERROR = "error"
    LATEST = "latest"
    ALL = (ERROR, LATEST)


@dataclass(frozen=True)
class EarliestLimit:
    """Every partition from its log start offset."""


@dataclass(frozen=True)
class LatestLimit:
    """Every partition at its high watermark (last stable offset under ``read_committed``)."""


@dataclass(frozen=True)
class SpecificOffsetsLimit:
    """Offsets per partition; values may be the ``EARLIEST``/``LATEST`` sentinels. ``topics`` holds
    topic-level sentinels (``{"t":"earliest"}``, SPARK-58774): every partition of such a topic, whichever
    exist when the limit is resolved."""

    offsets: Mapping[TopicPartition, int]
    topics: Mapping[str, int] = field(default_factory=dict)

    def named(self, partitions: Iterable[TopicPartition]) -> set[TopicPartition]:
        """The partitions this limit gives an offset for, among ``partitions`` for topic-level entries."""
        return set(self.offsets) | {tp for tp in partitions if tp.topic in self.topics}

    def missing_topics(self, partitions: Iterable[TopicPartition]) -> list[str]:
        """Topic-level entries naming a topic none of ``partitions`` belongs to."""
        present = {tp.topic for tp in partitions}
        return sorted(t for t in self.topics if t not in present)

    def for_partitions(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset of each of ``partitions`` this limit names (explicit entries first)."""
        out: dict[TopicPartition, int] = {}
        for tp in partitions:
            if tp in self.offsets:
                out[tp] = self.offsets[tp]
            elif tp.topic in self.topics:
                out[tp] = self.topics[tp.topic]
        return out

    def restricted(self, partitions: Iterable[TopicPartition]) -> SpecificOffsetsLimit:
        """This limit without the partitions (and topics) outside ``partitions``."""
        keep = set(partitions)
        topics = {tp.topic for tp in keep}
        return SpecificOffsetsLimit(
            {tp: o for tp, o in self.offsets.items() if tp in keep},
            {t: o for t, o in self.topics.items() if t in topics},
        )


@dataclass(frozen=True)
class SpecificTimestampsLimit:
    """A timestamp (ms) per partition: the first offset whose record timestamp is >= it."""

    timestamps: Mapping[TopicPartition, int]
    strategy: str = TimestampStrategy.ERROR


@dataclass(frozen=True)
class GlobalTimestampLimit:
    """One timestamp (ms) for every partition (``startingTimestamp`` / ``endingTimestamp``)."""

    timestamp: int
    strategy: str = TimestampStrategy.ERROR


OffsetLimit = EarliestLimit | LatestLimit | SpecificOffsetsLimit | SpecificTimestampsLimit | GlobalTimestampLimit


def _load_object(text: str, option: str, example: str) -> dict:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if not isinstance(value, dict):
        raise OffsetsJsonError(f"Invalid value for option '{option}': expected e.g. {example}, got {text!r}")
    return value


def _partition_number(key, topic: str, option: str, example: str, text: str) -> int:
    try:
        partition = int(key)
    except (TypeError, ValueError):
        partition = -1
    if partition < 0 or (isinstance(key, str) and key.strip() != str(partition)):
        raise OffsetsJsonError(
            f"Invalid value for option '{option}': partition {key!r} of topic {topic!r} is not a "
            f"non-negative integer; expected e.g. {example}, got {text!r}"
        )
    return partition


def _parse_per_partition(
    text: str, option: str, example: str, what: str, loaded: dict | None = None
) -> dict[TopicPartition, int]:
    result: dict[TopicPartition, int] = {}
    for topic, partitions in (_load_object(text, option, example) if loaded is None else loaded).items():
        if not isinstance(partitions, dict) or not topic:
            raise OffsetsJsonError(f"Invalid value for option '{option}': expected e.g. {example}, got {text!r}")
        for key, value in partitions.items():
            partition = _partition_number(key, topic, option, example, text)
            if isinstance(value, bool) or not isinstance(value, int):
                raise OffsetsJsonError(
                    f"Invalid value for option '{option}': the {what} of {topic}-{partition} must be a whole "
                    f"number, got {value!r}; expected e.g. {example}"
                )
            result[TopicPartition(topic, partition)] = value
    return result


def parse_partition_offsets(
    text: str, option: str = "startingOffsets", *, _loaded: dict | None = None
) -> dict[TopicPartition, int]:
    """``{"t":{"0":23}}`` -> ``{TopicPartition("t", 0): 23}``; offsets below -2 are rejected."""
    offsets = _parse_per_partition(text, option, OFFSETS_EXAMPLE, "offset", _loaded)
    for tp, offset in offsets.items():
        if offset < EARLIEST:
            raise OffsetsJsonError(
                f"Invalid value for option '{option}': offset {offset} of {tp} is neither an offset >= 0 nor "
                f"-2 (earliest) or -1 (latest); expected e.g. {OFFSETS_EXAMPLE}"
            )
    return offsets


_TOPIC_SENTINELS = {"earliest": EARLIEST, "latest": LATEST}


def parse_specific_offsets(text: str, option: str = "startingOffsets") -> SpecificOffsetsLimit:
    """The JSON form of ``startingOffsets`` / ``endingOffsets``: per partition as ``parse_partition_offsets``,
    or per topic as ``"earliest"`` / ``"latest"`` (case-insensitive), mixed freely:
    ``{"a":"earliest","b":{"0":23}}``."""
    per_topic: dict[str, int] = {}
    per_partition: dict[str, object] = {}
    for topic, value in _load_object(text, option, OFFSETS_EXAMPLE).items():
        if isinstance(value, str):
            sentinel = _TOPIC_SENTINELS.get(value.strip().lower())
            if sentinel is None or not topic:
                raise OffsetsJsonError(
                    f"Invalid value for option '{option}': topic {topic!r} has {value!r}; a topic takes "
                    f'"earliest", "latest" or offsets per partition, e.g. {{"{topic or "topicA"}":"earliest",'
                    f'"topicB":{{"0":23}}}}'
                )
            per_topic[topic] = sentinel
        else:
            per_partition[topic] = value
    offsets = parse_partition_offsets(text, option, _loaded=per_partition) if per_partition else {}
    return SpecificOffsetsLimit(offsets, per_topic)


def parse_partition_timestamps(text: str, option: str = "startingOffsetsByTimestamp") -> dict[TopicPartition, int]:
    """``{"t":{"0":1700000000000}}`` -> ``{TopicPartition("t", 0): 1700000000000}`` (ms, >= 0)."""
    timestamps = _parse_per_partition(text, option, TIMESTAMPS_EXAMPLE, "timestamp")
    for tp, ts in timestamps.items():
        if ts < 0:
            raise OffsetsJsonError(
                f"Invalid value for option '{option}': timestamp {ts} of {tp} is negative; timestamps are "
                f"milliseconds since the epoch, e.g. {TIMESTAMPS_EXAMPLE}"
            )
    return timestamps


def format_partition_offsets(offsets: Mapping[TopicPartition, int]) -> str:
    """Spark's compact JSON for offsets (or timestamps), sorted by topic then partition."""
    by_topic: dict[str, dict[str, int]] = {}
    for topic, partition in sorted(offsets):
        by_topic.setdefault(topic, {})[str(partition)] = offsets[TopicPartition(topic, partition)]
    return json.dumps(by_topic, separators=(",", ":"))


def parse_assign(text: str, option: str = "assign") -> list[TopicPartition]:
    """``{"t":[0,1]}`` -> topic-partitions in the given order, duplicates removed."""
    if not text.strip().startswith("{"):
        raise OffsetsJsonError(
            f"No topicpartitions to assign as specified value for option '{option}' is {text!r}; "
            f"expected e.g. {ASSIGN_EXAMPLE}"
        )
    result: list[TopicPartition] = []
    for topic, partitions in _load_object(text, option, ASSIGN_EXAMPLE).items():
        if not topic or not isinstance(partitions, list):
            raise OffsetsJsonError(f"Invalid value for option '{option}': expected e.g. {ASSIGN_EXAMPLE}, got {text!r}")
        for partition in partitions:
            if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
                raise OffsetsJsonError(
                    f"Invalid value for option '{option}': partition {partition!r} of topic {topic!r} is not a "
                    f"non-negative integer; expected e.g. {ASSIGN_EXAMPLE}"
                )
            tp = TopicPartition(topic, partition)
            if tp not in result:
                result.append(tp)
    if not result:
        raise OffsetsJsonError(
            f"No topicpartitions to assign as specified value for option '{option}' is {text!r}; "
            f"expected e.g. {ASSIGN_EXAMPLE}"
        )
    return result


def format_assign(partitions) -> str:
    """Spark's ``assign`` JSON for topic-partitions, sorted."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(set(partitions)):
        by_topic.setdefault(topic, []).append(partition)
    return json.dumps(by_topic, separators=(",", ":"))
