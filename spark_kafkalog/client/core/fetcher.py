"""Fetch requests for one partition, and the pure processing of their responses into ``FetchedBatch``es.

``split_fetched`` walks the record data of one partition in a Fetch response:

* entries are cut with ``records.iter_batches``; a partial trailing entry is normal (the broker stops at
  a byte limit) and ends the walk;
* v0/v1 entries (Fetch v0-3, or old data on disk) are converted to v2 batches (``legacy_to_batches``);
* batches entirely below the fetch position are dropped (a compressed batch may start before it);
* the walk stops at the first batch starting at or after ``end``;
* control batches (transaction markers) are consumed, not yielded;
* under ``read_committed``, batches of aborted transactions are consumed, not yielded: an aborted
  transaction listed in the response (producer id, first offset) marks its producer from that offset
  until the producer's ABORT marker, as Java's consumer does;
* v2 CRCs are checked when ``check_crcs``; a bad batch raises ``KafkaClientError`` (CORRUPT_MESSAGE).

The caller's position after a walk is the offset after the last batch consumed. Stateless and thread-safe.
"""

from __future__ import annotations

import heapq
import struct
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import FetchedBatch, TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records import BatchView, CorruptRecordError, iter_batches, legacy_to_batches

__all__ = ["AbortedTransactions", "FetchWalk", "fetch_request", "fetch_request_for", "partition_data", "split_fetched"]

_FETCH = API_BY_KEY[int(ApiKey.FETCH)]
_CONTROL_KEY = struct.Struct(">hh")  # version, type (0 abort, 1 commit)
_ENTRY_PREFIX = struct.Struct(">qi")
_ABORT = 0
_NO_ID = uuid.UUID(int=0)


def fetch_request(
    tp: TopicPartition,
    offset: int,
    *,
    partition_max_bytes: int,
    max_bytes: int,
    max_wait_ms: int,
    min_bytes: int,
    isolation_level: int,
    leader_epoch: int = -1,
    log_start_offset: int = -1,
    replica_id: int = -1,
    rack_id: str = "",
    topic_id: uuid.UUID | None = None,
) -> Any:
    """A sessionless Fetch request body for one partition (valid at every version 0-12, and at 13+ with the
    topic's ``topic_id``, KIP-516; ``rack_id`` is sent from v11, KIP-392)."""
    return fetch_request_for(
        {tp: (offset, leader_epoch, log_start_offset)},
        partition_max_bytes=partition_max_bytes,
        max_bytes=max_bytes,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        isolation_level=isolation_level,
        replica_id=replica_id,
        rack_id=rack_id,
        topic_ids={tp.topic: topic_id} if topic_id is not None else None,
    )


def fetch_request_for(
    partitions: Mapping[TopicPartition, tuple[int, int, int]],
    *,
    partition_max_bytes: int,
    max_bytes: int,
    max_wait_ms: int,
    min_bytes: int,
    isolation_level: int = 0,
    replica_id: int = -1,
    rack_id: str = "",
    topic_ids: Mapping[str, uuid.UUID] | None = None,
) -> Any:
    """A sessionless Fetch body for ``{tp: (fetch offset, current leader epoch, log start offset)}``;
    ``replica_id`` >= 0 makes it a follower's fetch (replication; v15+ carry it in ``replica_state``). Each topic
    carries its name (v0-12) and its id from ``topic_ids`` (v13+): send it at v13+ only when every topic has one."""
    R = _FETCH.Request
    by_topic: dict[str, list[Any]] = {}
    for tp, (offset, epoch, log_start) in partitions.items():
        by_topic.setdefault(tp.topic, []).append(
            R.FetchTopic.FetchPartition(
                partition=tp.partition,
                current_leader_epoch=epoch,
                fetch_offset=offset,
                log_start_offset=log_start,
                partition_max_bytes=partition_max_bytes,
            )
        )
    return R(
        replica_id=replica_id,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation_level,
        session_id=0,
        session_epoch=-1,
        topics=[
            R.FetchTopic(topic=topic, topic_id=(topic_ids or {}).get(topic, _NO_ID), partitions=parts)
            for topic, parts in by_topic.items()
        ],
        forgotten_topics_data=[],
        rack_id=rack_id,
        replica_state=R.ReplicaState(replica_id=replica_id),
    )


def partition_data(response: Any, tp: TopicPartition, topic_id: uuid.UUID | None = None) -> Any:
    """The ``PartitionData`` of ``tp`` in a Fetch response (v13+ answers name the topic by ``topic_id`` only);
    raises when the broker left it out."""
    if response.error_code:
        code = ErrorCode(response.error_code)
        raise KafkaClientError(
            f"Fetch of {tp} failed: {code.name} ({int(code)}) for the whole request", error_code=code
        )
    for topic in response.responses:
        if topic.topic != tp.topic and (topic_id is None or topic.topic_id != topic_id):
            continue
        for p in topic.partitions:
            if p.partition_index == tp.partition:
                return p
    raise KafkaClientError(
        f"Fetch response does not include {tp}", retriable=True, topic=tp.topic, partition=tp.partition
    )


class AbortedTransactions:
    """Read-committed filtering state for the record data of one Fetch response."""

    __slots__ = ("_pending", "_aborted_producers")

    def __init__(self, aborted: Any) -> None:
        self._pending: list[tuple[int, int]] = [(a.first_offset, a.producer_id) for a in (aborted or ())]
        heapq.heapify(self._pending)
        self._aborted_producers: set[int] = set()

    def skip(self, view: BatchView) -> bool:
        """Whether the v2 batch ``view`` belongs to an aborted transaction (consumes markers)."""
        header = view.header()
        if header.producer_id < 0:
            return False
        pending = self._pending
        while pending and pending[0][0] <= header.last_offset:
            self._aborted_producers.add(heapq.heappop(pending)[1])
        if header.is_control:
            records = view.records()
            if records and records[0].key is not None and len(records[0].key) >= 4:
                if _CONTROL_KEY.unpack_from(records[0].key)[1] == _ABORT:
                    self._aborted_producers.discard(header.producer_id)
            return True
        return header.is_transactional and header.producer_id in self._aborted_producers


class FetchWalk(NamedTuple):
    batches: list[FetchedBatch]
    position: int  # offset after the last batch consumed (the next fetch offset)
    reached_end: bool  # a batch at or beyond ``end`` was seen
    partial_entry_size: int | None  # size of a trailing entry cut short when nothing whole was found


def split_fetched(
    records: Any,
    tp: TopicPartition,
    position: int,
    end: int | None,
    *,
    log_start_offset: int,
    high_watermark: int,
    last_stable_offset: int,
    read_committed: bool = False,
    aborted: Any = None,
    check_crcs: bool = True,
) -> FetchWalk:
    """Walk the record data of one partition (see the module docstring)."""
    out: list[FetchedBatch] = []
    if not records:
        return FetchWalk(out, position, False, None)
    txn = AbortedTransactions(aborted) if read_committed else None
    consumed_any = False
    try:
        for view in _v2_views(records):
            consumed_any = True
            if view.last_offset < position:
                continue
            if end is not None and view.base_offset >= end:
                return FetchWalk(out, position, True, None)
            if check_crcs:
                view.validate()
            next_position = view.last_offset + 1
            skip = txn.skip(view) or view.is_control if txn is not None else view.is_control
            if skip:
                position = next_position
                continue
            out.append(FetchedBatch(tp, view, log_start_offset, high_watermark, last_stable_offset))
            position = next_position
    except CorruptRecordError as e:
        raise KafkaClientError(
            f"corrupt record data fetched from {tp} near offset {position}: {e}",
            error_code=ErrorCode.CORRUPT_MESSAGE,
            retriable=False,
            topic=tp.topic,
            partition=tp.partition,
        ) from None
    partial = None
    if not consumed_any and len(records) >= _ENTRY_PREFIX.size:
        partial = _ENTRY_PREFIX.unpack_from(records, 0)[1] + _ENTRY_PREFIX.size
    return FetchWalk(out, position, False, partial)


def _v2_views(records: Any):
    """Views of the complete entries of ``records`` as v2 batches (v0/v1 entries converted)."""
    for view in iter_batches(records):
        if view.magic == 2:
            yield view
        else:
            converted = b"".join(legacy_to_batches(view.data))
            yield from iter_batches(converted)
