"""The consumer group model's ``TopicsView`` over the broker's ``MetadataCache`` (``MetadataTopicsView``) and
the count of topic set changes that is its ``version`` (``TopicsVersion``): the version moves when a topic is
created, deleted or grows, so the groups re-resolve regular expressions and bump their group epoch on the next
heartbeat. Regex subscriptions see only the topics the heartbeat's principal may DESCRIBE (``describable``;
Kafka 4.x filters resolved regexes by the member's authorization); internal topics are never matched.
Event-loop only (one view per request).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache


class MetadataTopicsView:
    """The model's ``TopicsView`` over the broker's ``MetadataCache`` (one per request; cheap). ``version`` is
    the coordinator's count of topic set changes (``TopicsVersion``). ``describable`` filters what a regular
    expression may match (None: every topic)."""

    def __init__(self, metadata: MetadataCache, version: int, describable: Callable[[str], bool] | None = None):
        self._metadata = metadata
        self._topics = metadata.topics  # one consistent snapshot (the cache swaps dicts, never mutates them)
        self._version = version
        self._describable = describable

    @property
    def version(self) -> int:
        return self._version

    def topic_id(self, name: str) -> uuid.UUID | None:
        t = self._topics.get(name)
        return None if t is None else t.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        name = self._metadata.topic_by_id(topic_id)
        return name if name is not None and name in self._topics else None

    def topic_names(self) -> Collection[str]:
        names = [n for n in self._topics if not n.startswith("__")]  # internal topics are never matched
        if self._describable is None:
            return names
        return [n for n in names if self._describable(n)]

    def partition_count(self, topic_id: uuid.UUID) -> int:
        name = self.topic_name(topic_id)
        return -1 if name is None else self._topics[name].num_partitions

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        name = self.topic_name(topic_id)
        if name is None:
            return frozenset()
        replicas = self._topics[name].replicas.get(partition, ())
        brokers = self._metadata.brokers
        return frozenset(r for b in replicas if (info := brokers.get(b)) is not None and (r := info.rack) is not None)


class TopicsVersion:
    """Counts changes of the topic set (names, ids, partition counts) seen in a ``MetadataCache``: the
    ``TopicsView.version`` that tells the groups to re-resolve regexes and re-check their subscriptions."""

    def __init__(self) -> None:
        self._seen: object = None
        self._fingerprint: frozenset[tuple[str, uuid.UUID, int]] = frozenset()
        self.version = 0

    def current(self, metadata: MetadataCache) -> int:
        topics = metadata.topics
        if topics is not self._seen:  # a new snapshot: did the topic set change, or only leaders/ISRs?
            self._seen = topics
            fingerprint = frozenset((n, t.topic_id, t.num_partitions) for n, t in topics.items())
            if fingerprint != self._fingerprint:
                self._fingerprint = fingerprint
                self.version += 1
        return self.version


__all__ = ["MetadataTopicsView", "TopicsVersion"]
