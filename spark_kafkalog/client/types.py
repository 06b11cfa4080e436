"""Plain value types of the client API: topic-partitions, offset specs, fetched batches, metadata results.

All are immutable (``NamedTuple`` or frozen dataclasses) and safe to share between threads, except that a
``FetchedBatch`` views the response buffer it came from (kept alive by the view).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from spark_kafkalog.records import BatchView

__all__ = [
    "ConsumerRecord",
    "FetchedBatch",
    "NewTopic",
    "OffsetSpec",
    "PartitionDescription",
    "RecordMetadata",
    "TopicDescription",
    "TopicPartition",
]


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class OffsetSpec:
    """The special ListOffsets timestamps; any value >= 0 is a timestamp in milliseconds.

    ``LATEST`` is the high watermark (the last stable offset under ``read_committed``), ``EARLIEST``
    the log start offset, ``MAX_TIMESTAMP`` the offset of the record with the largest timestamp
    (ListOffsets v7+).
    """

    LATEST = -1
    EARLIEST = -2
    MAX_TIMESTAMP = -3


class FetchedBatch(NamedTuple):
    """One record batch of a fetch response, with the partition's state at the time of the fetch.

    ``batch`` is a ``BatchView`` of a v2 batch (v0/v1 entries arrive converted to v2), possibly
    compressed; its bytes are a view into the response frame (or into the converted copy).
    """

    topic_partition: TopicPartition
    batch: BatchView
    log_start_offset: int
    high_watermark: int
    last_stable_offset: int

    @property
    def base_offset(self) -> int:
        return self.batch.base_offset

    @property
    def last_offset(self) -> int:
        return self.batch.last_offset


class RecordMetadata(NamedTuple):
    """Where a produced record landed. ``offset`` is -1 with acks=0 (the broker does not answer);
    ``timestamp`` is the broker's LogAppendTime when the topic uses it, else the record's CreateTime."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class ConsumerRecord(NamedTuple):
    """One consumed record; ``delivery_count`` is set by the ``ShareConsumer`` (how many times a share group has
    delivered it, this delivery included: Kafka's ``ConsumerRecord.deliveryCount()``), None elsewhere."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int  # 0 CreateTime, 1 LogAppendTime, -1 none (v0 messages)
    key: object
    value: object
    headers: list[tuple[str, bytes | None]]
    delivery_count: int | None = None


@dataclass(frozen=True)
class NewTopic:
    """A topic to create; ``num_partitions``/``replication_factor`` -1 mean the broker's defaults
    (CreateTopics v4+); ``replica_assignment`` maps partition -> broker ids and excludes both counts."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    config: dict[str, str] = field(default_factory=dict)
    replica_assignment: dict[int, list[int]] | None = None


@dataclass(frozen=True)
class PartitionDescription:
    partition: int
    leader: int  # -1 when there is no leader
    leader_epoch: int  # -1 when the broker does not report it (Metadata < v7)
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True)
class TopicDescription:
    name: str
    partitions: tuple[PartitionDescription, ...]
    is_internal: bool = False
    topic_id: str | None = None

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)
