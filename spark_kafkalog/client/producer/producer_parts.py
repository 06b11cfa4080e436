"""``ProducerParts``: what the send paths (``send_path``, ``batch_producer``) use of a ``Producer``.

Both paths are functions over a producer's parts - its settings, client, accumulator, sender, partitioner and
per-topic state - rather than methods, so that the per-record path can be one closure (compiled when
``spark_kafkalog._kernels`` is built). They are typed against this protocol, not against ``Producer``, which
imports them: ``producer`` sits above ``send_path`` and ``batch_producer``, and they above this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.metadata import TopicInfo
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.sender import Sender

__all__ = ["ProducerParts"]


class ProducerParts(Protocol):
    """The attributes of a ``Producer`` its send paths read (``Producer`` has them all)."""

    config: ClientConfig
    _client: KafkaClient
    _accumulator: RecordAccumulator
    _sender: Sender
    _partition: Callable[..., int]  # the partitioner's partition(topic, key, value, num_partitions, available)
    _record_appended: Callable[..., None] | None  # its record_appended hook, if any
    _topics: dict[str, list[Any]]  # topic -> its state for send (send_path's TOPIC_* layout)
    _compression_ratios: dict[str, float]  # topic -> batch_producer's compressed/record bytes estimate
    _closed: bool

    def _topic_info(self, topic: str) -> TopicInfo:
        """The topic's metadata, fetched when missing or stale (within ``max.block.ms``)."""
        ...

    def _raise_unusable(self, topic: str) -> None:
        """Raise the error of a closed or failed producer."""
        ...
