"""The client's cluster metadata cache: brokers, controller, topics, partition leaders and epochs.

Filled from Metadata responses (any version 0-12). A topic entry is *stale* when it is older than
``metadata.max.age.ms``, was invalidated, or has a partition without a leader or with an error of
``errors.REFRESH_METADATA_ERRORS``: the client invalidates a topic when a broker answers one of those
errors for it, and everything led by a broker it could not reach or whose connection was lost. Snapshots (``TopicInfo``) are immutable; the
cache itself is guarded by a lock and safe to use from several threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from spark_kafkalog.client.errors import REFRESH_METADATA_ERRORS
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = ["BrokerAddress", "MetadataCache", "PartitionInfo", "TopicInfo", "metadata_request"]

_METADATA = API_BY_KEY[int(ApiKey.METADATA)]


class BrokerAddress(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None = None

    def __str__(self) -> str:
        return f"{self.node_id} ({self.host}:{self.port})"


class PartitionInfo(NamedTuple):
    partition: int
    leader: int  # -1: no leader right now
    leader_epoch: int  # -1: unknown (Metadata < v7)
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    error_code: int

    @classmethod
    def from_wire(cls, p: Any) -> PartitionInfo:
        """A partition of a Metadata response, or of a DescribeTopicPartitions response (same field names)."""
        return cls(
            p.partition_index,
            p.leader_id,
            p.leader_epoch,
            tuple(p.replica_nodes),
            tuple(p.isr_nodes),
            tuple(p.offline_replicas),
            p.error_code,
        )


@dataclass(frozen=True)
class TopicInfo:
    name: str
    error_code: int
    partitions: dict[int, PartitionInfo]
    is_internal: bool = False
    topic_id: str | None = None
    fetched_at: float = field(default=0.0, compare=False)


def metadata_request(version: int, topics: Iterable[str] | None, allow_auto_topic_creation: bool) -> Any:
    """A Metadata request body for ``version``; ``topics=None`` asks for every topic."""
    entries: list[Any] | None
    if topics is None:
        entries = [] if version == 0 else None
    else:
        entries = [_METADATA.Request.MetadataRequestTopic(name=t) for t in topics]
    return _METADATA.Request(topics=entries, allow_auto_topic_creation=allow_auto_topic_creation)


class MetadataCache:
    """Brokers, controller and per-topic partition metadata, with staleness tracking."""

    def __init__(self, max_age_ms: int = 300000) -> None:
        self.max_age = max_age_ms / 1000.0
        self._lock = threading.Lock()
        self.brokers: dict[int, BrokerAddress] = {}
        self.controller_id: int = -1
        self.cluster_id: str | None = None
        self._topics: dict[str, TopicInfo] = {}
        self._stale: set[str] = set()
        self._all_topics_at: float | None = None
        self.updated_at = 0.0

    # updates -----------------------------------------------------------------------------------
    def update(self, response: Any, *, all_topics: bool, now: float | None = None) -> None:
        """Apply a Metadata response body. With ``all_topics`` the topic list replaces ours."""
        now = time.monotonic() if now is None else now
        brokers = {b.node_id: BrokerAddress(b.node_id, b.host, b.port, b.rack) for b in response.brokers}
        topics = {}
        for t in response.topics:
            if t.name is None:
                continue
            partitions = {p.partition_index: PartitionInfo.from_wire(p) for p in t.partitions}
            topic_id = str(t.topic_id) if getattr(t, "topic_id", None) and int(t.topic_id) != 0 else None
            topics[t.name] = TopicInfo(t.name, t.error_code, partitions, t.is_internal, topic_id, now)
        with self._lock:
            if brokers:
                self.brokers = brokers
            self.controller_id = response.controller_id
            self.cluster_id = response.cluster_id
            if all_topics:
                self._topics = topics
                self._stale.clear()
                self._all_topics_at = now
            else:
                self._topics.update(topics)
                self._stale.difference_update(topics)
            self.updated_at = now

    def invalidate(self, topic: str | None = None) -> None:
        """Mark one topic (or everything) for refresh before its next use."""
        with self._lock:
            if topic is None:
                self._stale.update(self._topics)
                self._all_topics_at = None
            else:
                self._stale.add(topic)

    def invalidate_broker(self, node_id: int) -> None:
        """Mark every topic with a partition led by ``node_id`` (after losing its connection)."""
        with self._lock:
            for name, info in self._topics.items():
                if any(p.leader == node_id for p in info.partitions.values()):
                    self._stale.add(name)

    def forget(self, topic: str) -> None:
        with self._lock:
            self._topics.pop(topic, None)
            self._stale.discard(topic)

    # queries -----------------------------------------------------------------------------------
    def topic(self, name: str) -> TopicInfo | None:
        with self._lock:
            return self._topics.get(name)

    def peek(self, name: str) -> TopicInfo | None:
        """``topic`` without taking the lock (a single dict read is atomic): for per-record hot paths
        that only compare the returned snapshot's identity."""
        return self._topics.get(name)

    def topics(self) -> dict[str, TopicInfo]:
        with self._lock:
            return dict(self._topics)

    def needs_refresh(self, topic: str, now: float | None = None) -> bool:
        """True when ``topic`` is unknown, invalidated, older than the maximum age, or has an error or a
        partition without a leader."""
        now = time.monotonic() if now is None else now
        with self._lock:
            info = self._topics.get(topic)
            if info is None or topic in self._stale or now - info.fetched_at > self.max_age:
                return True
            if info.error_code:
                return True
            return any(p.leader < 0 or p.error_code in REFRESH_METADATA_ERRORS for p in info.partitions.values())

    def all_topics_fresh(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            at = self._all_topics_at
            return at is not None and not self._stale and now - at <= self.max_age

    def is_invalidated(self, topic: str) -> bool:
        """True after ``invalidate`` until the next update naming the topic."""
        with self._lock:
            return topic in self._stale

    def broker(self, node_id: int) -> BrokerAddress | None:
        with self._lock:
            return self.brokers.get(node_id)

    def leader(self, topic: str, partition: int) -> tuple[int, int] | None:
        """``(leader id, leader epoch)`` of a partition, ``None`` when unknown or leaderless."""
        with self._lock:
            info = self._topics.get(topic)
            if info is None:
                return None
            p = info.partitions.get(partition)
            if p is None or p.leader < 0:
                return None
            return p.leader, p.leader_epoch
