"""Test doubles for the KIP-848 group model: an in-memory ``TopicsView`` and request builders."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping

from broker.coordinator.consumer.assignors import BUILTIN_ASSIGNORS
from broker.coordinator.consumer.group import ConsumerGroup
from spark_kafkalog.protocol.apis.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

_UNSET = object()


class FakeTopics:
    """Topics by name with deterministic ids; ``version`` moves on every change."""

    def __init__(self, partitions: Mapping[str, int] | None = None) -> None:
        self._ids: dict[str, uuid.UUID] = {}
        self._counts: dict[uuid.UUID, int] = {}
        self._racks: dict[tuple[uuid.UUID, int], frozenset[str]] = {}
        self.version = 0
        for name, n in (partitions or {}).items():
            self.create(name, n)

    def create(self, name: str, partitions: int) -> uuid.UUID:
        topic_id = uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.{self.version}")
        self._ids[name] = topic_id
        self._counts[topic_id] = partitions
        self.version += 1
        return topic_id

    def delete(self, name: str) -> None:
        topic_id = self._ids.pop(name)
        del self._counts[topic_id]
        self.version += 1

    def grow(self, name: str, partitions: int) -> None:
        self._counts[self._ids[name]] = partitions
        self.version += 1

    def set_racks(self, name: str, partition: int, racks: Iterable[str]) -> None:
        self._racks[(self._ids[name], partition)] = frozenset(racks)
        self.version += 1

    def id(self, name: str) -> uuid.UUID:
        return self._ids[name]

    # TopicsView
    def topic_id(self, name: str) -> uuid.UUID | None:
        return self._ids.get(name)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return next((n for n, i in self._ids.items() if i == topic_id), None)

    def topic_names(self) -> Collection[str]:
        return list(self._ids)

    def partition_count(self, topic_id: uuid.UUID) -> int:
        return self._counts.get(topic_id, -1)

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        return self._racks.get((topic_id, partition), frozenset())


def make_group(**kwargs: object) -> ConsumerGroup:
    counter = iter(range(1, 1_000_000))
    kwargs.setdefault("assignors", BUILTIN_ASSIGNORS)
    kwargs.setdefault("default_assignor", "uniform")
    kwargs.setdefault("member_id_factory", lambda: f"gen-{next(counter)}")
    return ConsumerGroup("g", **kwargs)  # type: ignore[arg-type]  # kwargs typed loosely for table tests


def hb(
    member_id: str,
    epoch: int,
    *,
    topics: list[str] | None = None,
    regex: str | None = None,
    owned: Mapping[uuid.UUID, Iterable[int]] | None = None,
    instance_id: str | None = None,
    rack_id: str | None = None,
    rebalance_timeout_ms: int | None = None,
    server_assignor: str | None = None,
) -> ConsumerGroupHeartbeatRequest:
    """A heartbeat; epoch 0 defaults to a full join (rebalance timeout 300 s, no owned partitions)."""
    if epoch == 0:
        if rebalance_timeout_ms is None:
            rebalance_timeout_ms = 300_000
        if owned is None:
            owned = {}
    return ConsumerGroupHeartbeatRequest(
        group_id="g",
        member_id=member_id,
        member_epoch=epoch,
        instance_id=instance_id,
        rack_id=rack_id,
        rebalance_timeout_ms=-1 if rebalance_timeout_ms is None else rebalance_timeout_ms,
        subscribed_topic_names=topics,
        subscribed_topic_regex=regex,
        server_assignor=server_assignor,
        topic_partitions=None
        if owned is None
        else [
            ConsumerGroupHeartbeatRequest.TopicPartitions(topic_id=t, partitions=sorted(p)) for t, p in owned.items()
        ],
    )
