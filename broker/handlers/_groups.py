"""Helpers shared by the group handlers: the coordinator of a request, the client host as Kafka shows it, and
the offsets of an OffsetCommit or TxnOffsetCommit request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from broker.coordinator.group import GroupError
from broker.coordinator.offset_store import CommittedOffset
from spark_kafkalog.protocol import ErrorCode


def coordinator(ctx):
    """The broker's group coordinator; ``GroupError(COORDINATOR_NOT_AVAILABLE)`` when it has none."""
    gc = ctx.services.group_coordinator
    if gc is None:
        raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker runs no group coordinator")
    return gc


def client_host(ctx) -> str:
    """``/<address>`` of the client, as Kafka reports member hosts."""
    host = ctx.peer.rsplit(":", 1)[0] if ctx.peer.count(":") == 1 or ctx.peer.startswith("[") else ctx.peer
    return "/" + host.strip("[]")


def client_id(ctx) -> str:
    return ctx.header.client_id or ""


def requested_offsets(
    ctx, topics: Any, commit_timestamp: Callable[[Any], int], expire_timestamp: int = -1
) -> tuple[dict[tuple[str, int], CommittedOffset], set[tuple[str, int]]]:
    """The ``(topic, partition) -> CommittedOffset`` of a commit request's ``topics`` that exist, and the
    requested partitions that do not (answered UNKNOWN_TOPIC_OR_PARTITION). ``commit_timestamp(partition)``
    gives each offset's commit time."""
    known = ctx.services.metadata.topics
    offsets: dict[tuple[str, int], CommittedOffset] = {}
    unknown: set[tuple[str, int]] = set()
    for t in topics:
        topic = known.get(t.name)
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            if topic is None or p.partition_index not in topic.replicas:
                unknown.add(tp)
                continue
            offsets[tp] = CommittedOffset(
                p.committed_offset,
                p.committed_leader_epoch,
                p.committed_metadata or "",
                commit_timestamp(p),
                expire_timestamp,
            )
    return offsets, unknown
