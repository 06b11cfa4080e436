"""Partition reassignment for ``AdminClient`` (KIP-455): AlterPartitionReassignments and
ListPartitionReassignments (v0), both sent to the controller named by Metadata (a top-level NOT_CONTROLLER
refreshes it and retries).

``alter_partition_reassignments({tp: [broker ids] | None})`` starts (or, with None, cancels) reassignments
and returns once the controller has started them; per-partition failures raise one ``AdminOperationError``
keyed by ``TopicPartition``. ``list_partition_reassignments`` returns the ongoing ones. Thread-safe like
``KafkaClient``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive, fixed
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = [
    "PartitionReassignment",
    "alter_partition_reassignments",
    "alter_partition_reassignments_steps",
    "list_partition_reassignments",
    "list_partition_reassignments_steps",
]

ALTER = int(ApiKey.ALTER_PARTITION_REASSIGNMENTS)
LIST = int(ApiKey.LIST_PARTITION_REASSIGNMENTS)

ControllerRequest = Callable[..., tuple[int, Any, str]]
"""``AdminClient._controller_request``: (api key, build(version), timeout_ms=, what=) -> (version, response, peer)."""


@dataclass(frozen=True)
class PartitionReassignment:
    """An ongoing reassignment: the partition's replicas (target first, then the original ones) and the
    replicas being added and removed."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing_replicas)


def alter_partition_reassignments(
    send: ControllerRequest, reassignments: Mapping[TopicPartition, Sequence[int] | None], timeout_ms: int
) -> dict[TopicPartition, KafkaClientError]:
    """``alter_partition_reassignments_steps`` driven by the blocking ``send``."""
    return drive(alter_partition_reassignments_steps(reassignments, timeout_ms), send)


def alter_partition_reassignments_steps(
    reassignments: Mapping[TopicPartition, Sequence[int] | None], timeout_ms: int
) -> AdminSteps[dict[TopicPartition, KafkaClientError]]:
    """Send one AlterPartitionReassignments; returns the failed partitions with their errors."""
    R = API_BY_KEY[ALTER].Request
    by_topic: dict[str, list[Any]] = {}
    for tp, replicas in reassignments.items():
        tp = TopicPartition(*tp)
        by_topic.setdefault(tp.topic, []).append(
            R.ReassignableTopic.ReassignablePartition(
                partition_index=tp.partition, replicas=None if replicas is None else [int(r) for r in replicas]
            )
        )
    body = R(timeout_ms=timeout_ms, topics=[R.ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()])
    _, response, peer = yield AdminRequest(ALTER, fixed(body), "AlterPartitionReassignments", timeout_ms=timeout_ms)
    if response.error_code:
        raise error_for_code(
            response.error_code, "AlterPartitionReassignments", broker=peer, detail=response.error_message
        )
    errors = {}
    for topic in response.responses:
        for p in topic.partitions:
            if p.error_code:
                errors[TopicPartition(topic.name, p.partition_index)] = error_for_code(
                    p.error_code,
                    "AlterPartitionReassignments",
                    broker=peer,
                    topic=topic.name,
                    partition=p.partition_index,
                    detail=p.error_message,
                )
    return errors


def list_partition_reassignments(
    send: ControllerRequest, partitions: Iterable[TopicPartition] | None, timeout_ms: int
) -> dict[TopicPartition, PartitionReassignment]:
    """``list_partition_reassignments_steps`` driven by the blocking ``send``."""
    return drive(list_partition_reassignments_steps(partitions, timeout_ms), send)


def list_partition_reassignments_steps(
    partitions: Iterable[TopicPartition] | None, timeout_ms: int
) -> AdminSteps[dict[TopicPartition, PartitionReassignment]]:
    """The ongoing reassignments of ``partitions`` (all when None)."""
    R = API_BY_KEY[LIST].Request
    topics = None
    if partitions is not None:
        wanted: dict[str, list[int]] = {}
        for tp in partitions:
            wanted.setdefault(tp[0], []).append(tp[1])
        topics = [R.ListPartitionReassignmentsTopics(name=t, partition_indexes=ps) for t, ps in wanted.items()]
    body = R(timeout_ms=timeout_ms, topics=topics)
    _, response, peer = yield AdminRequest(LIST, fixed(body), "ListPartitionReassignments", timeout_ms=timeout_ms)
    if response.error_code:
        raise error_for_code(
            response.error_code, "ListPartitionReassignments", broker=peer, detail=response.error_message
        )
    return {
        TopicPartition(t.name, p.partition_index): PartitionReassignment(
            tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas)
        )
        for t in response.topics
        for p in t.partitions
    }
