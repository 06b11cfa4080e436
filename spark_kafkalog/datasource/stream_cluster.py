"""The streaming planner's view of the cluster: the ``StreamSource`` protocol ``StreamPlanner`` talks through,
and ``KafkaStreamSource``, a ``KafkaClient`` behind it that asks Metadata only for the topics the subscription
names and leaves out a topic deleted between listing it and asking for its offsets.

Used by one thread, as the client it wraps (PySpark's streaming source runner calls the reader sequentially in
one Python process). Re-exported by ``stream_planning``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.options import Assign, Subscribe, SubscriptionStrategy
from spark_kafkalog.datasource.planning import OffsetSource
from spark_kafkalog.datasource.topic_ids import kafka_topic_id
from spark_kafkalog.protocol import ErrorCode

__all__ = ["KafkaStreamSource", "StreamSource", "named_topics"]

log = logging.getLogger(__name__)


class StreamSource(OffsetSource, Protocol):
    """``OffsetSource`` plus the fetch used to estimate bytes (``KafkaClient`` provides both)."""

    def fetch_batches(self, tp: TopicPartition, start: int, end: int | None = None, *, max_bytes: int | None = None):
        """Record batches from ``start``; each has ``.batch.data``, ``.base_offset`` and ``.last_offset``."""

    def topic_ids(self) -> dict[str, str]:
        """Topic name -> id (Kafka's text form) of the topics the last ``topics()`` answered, those with an id
        (a source without this method, or a broker before Metadata v10, gives none)."""


def named_topics(strategy: SubscriptionStrategy) -> tuple[str, ...] | None:
    """The topics ``subscribe`` or ``assign`` name, sorted; ``None`` for ``subscribePattern`` (which has to
    see every topic)."""
    if isinstance(strategy, Subscribe):
        return tuple(sorted(set(strategy.topics)))
    if isinstance(strategy, Assign):
        return tuple(sorted({tp.topic for tp in strategy.partitions}))
    return None


class KafkaStreamSource:
    """A ``KafkaClient`` as the ``StreamSource`` of one stream. ``topics()`` asks Metadata only for the
    topics the subscription names, instead of for every topic of the cluster at each trigger (whose cost
    grows with the cluster: ``latestOffset`` of a one-topic stream took 1 ms with 1 topic in the cluster
    and 56 ms with 1,000 topics of 3 partitions); ``subscribePattern`` still asks for every topic. As
    ``KafkaClient.topics``: internal topics and topics answered with an error (being created, deleted)
    are left out. The other calls go straight to the client; used by one thread, as the client."""

    def __init__(self, client, strategy: SubscriptionStrategy) -> None:
        self.client = client
        self.names = named_topics(strategy)

    def topics(self) -> dict[str, int]:
        if self.names is None:
            return self.client.topics()
        self.client.refresh_metadata(self.names)
        known = self.client.metadata.topics()
        return {
            name: len(info.partitions)
            for name in self.names
            if (info := known.get(name)) is not None and not info.error_code and not info.is_internal
        }

    def list_offsets(self, specs: Mapping[TopicPartition, int], **kwargs) -> dict[TopicPartition, int]:
        """The client's ``list_offsets``, except that a topic deleted between listing the topics and asking
        for its offsets (UNKNOWN_TOPIC_OR_PARTITION for it, and Metadata no longer knowing it) is left out
        of the answer, as Spark's offset reader leaves out a topic its next listing no longer finds; the
        caller's data-loss rules then see its partitions as gone."""
        wanted = dict(specs)
        while True:
            try:
                return self.client.list_offsets(wanted, **kwargs) if wanted else {}
            except KafkaClientError as e:
                gone = e.topic if e.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else None
                if gone is None or not any(tp.topic == gone for tp in wanted) or self._still_exists(gone):
                    raise
                log.warning("topic %r was deleted while its offsets were asked for; leaving it out", gone)
                wanted = {tp: spec for tp, spec in wanted.items() if tp.topic != gone}

    def topic_ids(self) -> dict[str, str]:
        known = self.client.metadata.topics()
        names = known if self.names is None else self.names
        return {
            name: kafka_topic_id(info.topic_id)
            for name in names
            if (info := known.get(name)) is not None and not info.error_code and info.topic_id
        }

    def _still_exists(self, topic: str) -> bool:
        self.client.refresh_metadata([topic])
        info = self.client.metadata.topics().get(topic)
        return info is not None and not info.error_code

    def list_offsets_with_timestamps(self, specs: Mapping[TopicPartition, int], **kwargs):
        return self.client.list_offsets_with_timestamps(specs, **kwargs)

    def fetch_batches(self, tp: TopicPartition, start: int, end: int | None = None, **kwargs):
        return self.client.fetch_batches(tp, start, end, **kwargs)
