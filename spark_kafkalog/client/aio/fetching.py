"""``fetch_round``: one Fetch per partition leader for an ``AIOConsumer``'s fetchable partitions, sent concurrently.

Each leader gets one sessionless Fetch (``fetcher.fetch_request_for``) for all of its partitions at their positions;
the answers are walked with ``fetcher.split_fetched`` (control batches and, under read_committed, aborted
transactions consumed, not returned; the position moves past them). Versions: v4+ under read_committed; v13+ (topics
by id, KIP-516) when the metadata knows the id of every topic of the request, else at most v12 by name.

Per-partition outcomes (``PartitionFetch``): the batches and the next position; ``out_of_range`` for
OFFSET_OUT_OF_RANGE (the consumer resets the position per ``auto.offset.reset``); a partition whose leader moved or
whose topic id changed (``REFRESH_METADATA_ERRORS``) refreshes the metadata and is fetched again next round; a lost
connection does the same for every partition of that leader. With ``client.rack`` (KIP-392) a partition is fetched
from the read replica its leader names (``AsyncKafkaClient.read_replicas``, Kafka's rules: until
``metadata.max.age.ms`` passes or a fetch from it fails, an OFFSET_OUT_OF_RANGE from it going back to the leader).
Authorization and other errors that retrying cannot
fix are raised.

Concurrency: coroutines of the client's event loop; stateless apart from the client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.fetcher import fetch_request_for, split_fetched
from spark_kafkalog.client.errors import REFRESH_METADATA_ERRORS, KafkaClientError, error_for_code
from spark_kafkalog.client.types import FetchedBatch, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["PartitionFetch", "fetch_round"]

log = logging.getLogger("kafkalog.consumer")

_BY_NAME_MAX = 12  # Fetch v13+ names topics by id only


@dataclass
class PartitionFetch:
    """What one round fetched of a partition: ``batches`` from ``position`` on, and ``next_position`` (past control
    and aborted batches); ``out_of_range`` when the position is outside the log; ``retry`` when nothing came because
    the leader or topic id changed, the connection broke or the leader named a preferred read replica (fetched again
    next round)."""

    batches: list[FetchedBatch] = field(default_factory=list)
    next_position: int = -1
    out_of_range: bool = False
    retry: bool = False


async def fetch_round(
    client: AsyncKafkaClient,
    positions: Mapping[TopicPartition, int],
    *,
    config: ClientConfig,
    max_wait_ms: int,
) -> dict[TopicPartition, PartitionFetch]:
    """Fetch every partition of ``positions`` once (see the module docstring)."""
    by_leader: dict[int, dict[TopicPartition, tuple[int, int, int]]] = {}
    out: dict[TopicPartition, PartitionFetch] = {}
    for tp, position in positions.items():
        try:
            leader, epoch = await client.leader_and_epoch(tp)
        except KafkaClientError as e:
            if not e.retriable:
                raise
            out[tp] = PartitionFetch(next_position=position, retry=True)
            continue
        node = client.read_replicas.node_for(tp, leader, lambda n: client.metadata.broker(n) is not None)
        by_leader.setdefault(node, {})[tp] = (position, epoch, -1)
    answers = await asyncio.gather(
        *(_fetch_from(client, node, parts, config, max_wait_ms) for node, parts in by_leader.items())
    )
    for answer in answers:
        out.update(answer)
    return out


async def _fetch_from(
    client: AsyncKafkaClient,
    node: int,
    parts: dict[TopicPartition, tuple[int, int, int]],
    config: ClientConfig,
    max_wait_ms: int,
) -> dict[TopicPartition, PartitionFetch]:
    iso = config.isolation_level
    ids = {tp.topic: client.topic_id(tp.topic) for tp in parts}
    by_id = all(i is not None for i in ids.values())
    body = fetch_request_for(
        parts,
        partition_max_bytes=config.max_partition_fetch_bytes,
        max_bytes=max(config.fetch_max_bytes, config.max_partition_fetch_bytes),
        max_wait_ms=max_wait_ms,
        min_bytes=config.fetch_min_bytes,
        isolation_level=iso,
        rack_id=config.client_rack,
        topic_ids={t: i for t, i in ids.items() if i is not None} if by_id else None,
    )
    try:
        _, response = await client.send_request_versioned(
            node,
            ApiKey.FETCH,
            lambda v: body,
            min_version=4 if iso else 0,
            max_version=None if by_id else _BY_NAME_MAX,
            timeout_ms=config.request_timeout_ms + max_wait_ms,
        )
        if response.error_code:
            raise error_for_code(response.error_code, "Fetch", broker=str(node))
    except KafkaClientError as e:
        if not e.retriable:
            raise
        log.debug("Fetch from broker %d failed (%s); fetching again after a metadata refresh", node, e)
        for tp in parts:
            client.read_replicas.clear(tp)
        await _refresh(client, {tp.topic for tp in parts})
        return {tp: PartitionFetch(next_position=p[0], retry=True) for tp, p in parts.items()}
    names = {i: t for t, i in ids.items() if i is not None}
    out: dict[TopicPartition, PartitionFetch] = {}
    stale: set[str] = set()
    for topic in response.responses:
        name = topic.topic or names.get(topic.topic_id, "")
        for p in topic.partitions:
            tp = TopicPartition(name, p.partition_index)
            if tp not in parts:
                continue
            out[tp] = _partition(client, tp, parts[tp][0], p, iso, config, stale)
    for tp, (position, _, _) in parts.items():
        out.setdefault(tp, PartitionFetch(next_position=position, retry=True))
    if stale:
        await _refresh(client, stale)
    return out


def _partition(
    client: AsyncKafkaClient,
    tp: TopicPartition,
    position: int,
    data: Any,
    iso: int,
    config: ClientConfig,
    stale: set[str],
) -> PartitionFetch:
    code = data.error_code
    if code != ErrorCode.NONE and client.read_replicas.clear(tp) is not None:
        return PartitionFetch(next_position=position, retry=True)  # the replica may only be behind: the leader next
    if data.preferred_read_replica >= 0:  # KIP-392: no data from the leader; the next fetch goes to the replica
        client.read_replicas.update(tp, data.preferred_read_replica)
        return PartitionFetch(next_position=position, retry=True)
    if code == ErrorCode.OFFSET_OUT_OF_RANGE:
        return PartitionFetch(next_position=position, out_of_range=True)
    if code in REFRESH_METADATA_ERRORS:
        stale.add(tp.topic)
        return PartitionFetch(next_position=position, retry=True)
    if code != ErrorCode.NONE:
        error = error_for_code(code, "Fetch", topic=tp.topic, partition=tp.partition)
        if not error.retriable:
            raise error
        return PartitionFetch(next_position=position, retry=True)
    walk = split_fetched(
        data.records,
        tp,
        position,
        None,
        log_start_offset=data.log_start_offset,
        high_watermark=data.high_watermark,
        last_stable_offset=data.last_stable_offset,
        read_committed=bool(iso),
        aborted=data.aborted_transactions,
        check_crcs=config.check_crcs,
    )
    return PartitionFetch(walk.batches, walk.position)


async def _refresh(client: AsyncKafkaClient, topics: set[str]) -> None:
    for topic in topics:
        client.metadata.invalidate(topic)
    try:
        await client.refresh_metadata(sorted(topics))
    except KafkaClientError as e:
        if not e.retriable:
            raise
        log.debug("metadata refresh of %s failed: %s", ", ".join(sorted(topics)), e)
