"""The driver's share-group membership of a share-group read: acquiring batches, acknowledging them (no pyspark).

``ShareMember`` wraps one share consumer in explicit acknowledgement mode (``ShareConsumerLike``: the
client's ``ShareConsumer``, or a fake in tests) and keeps the bookkeeping of the share batches this
process acquired (``ledger``: batch sequence -> acquired (topic, partition, offset)s):

- ``next_batch(start)``: first acknowledges (ACCEPT) every own batch up to ``start.batch`` - Spark passes
  as ``start`` the end of the last batch it finished (sink committed, commit log written) - then, when the
  batch after ``start`` was already acquired but not yet recorded by Spark, returns it again (same offset:
  Spark may ask twice); otherwise polls once, up to ``shareMaxWaitMs``, for up to ``maxRecordsPerTrigger``
  records (the consumer's ``max_poll_records``; the member's first poll waits at least ``JOIN_WAIT_MS``, the
  time to join the group, and so does every trigger of a ``Trigger.AvailableNow`` run, ``available_now``) and
  returns ``start`` itself when nothing came (no batch
  is due) or the new batch ``start.batch + 1`` with the acquired offsets. One poll per trigger, after the
  previous poll's records are acknowledged: the rule of Kafka's explicit mode.
- ``acknowledge_through(batch)``: ACCEPT every offset of the own batches up to ``batch`` and
  ``commit_sync``; a partition the broker refused (locks expired and the records went to another member,
  the share session was lost, ...), one the consumer would not acknowledge a record of, or one without an
  answer is logged: its records may be delivered again (at-least-once). The batches leave the ledger either way.
- Batches of a checkpoint written by an earlier run of the query (``note_replayed``) were acquired by a
  member that is gone: they are processed again by Spark but cannot be acknowledged by this member, so the
  broker delivers them again once their locks expire (``share.record.lock.duration.ms``) - logged once each.
- ``close()`` closes the consumer: the records it still holds unacknowledged are released to the group.

Only offsets this member acquired are ever acknowledged, and only once the batch holding them is done:
an acknowledged record was processed. Not thread-safe: Spark calls the stream reader one call at a time
(the client's heartbeat thread is its own business).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.share_planning import Ranges, ShareBatchOffset, merge_offset_ranges

__all__ = ["AcknowledgeResult", "ShareConsumerLike", "ShareMember", "offsets_to_ranges"]

log = logging.getLogger(__name__)

ACCEPT = 1  # AcknowledgeType.ACCEPT (Kafka's value)
JOIN_WAIT_MS = 5000
"""How long the first poll of a member waits at least: the join (heartbeat, assignment, share sessions) comes
first, and a ``Trigger.AvailableNow`` run ends at the first trigger that acquires nothing."""


class ShareConsumerLike(Protocol):
    """What ``ShareMember`` uses of ``spark_kafkalog.client.ShareConsumer`` (explicit acknowledgement mode)."""

    def subscribe(self, topics: Sequence[str]) -> None: ...

    def poll(self, timeout_ms: int) -> Sequence[Any]:
        """Records with ``topic``, ``partition`` and ``offset``."""
        ...

    def acknowledge(self, record: Any, type: Any = ...) -> None: ...

    def commit_sync(self, timeout_ms: int) -> dict[Any, Any]:
        """``{TopicPartition: error or None}``."""
        ...

    def close(self) -> None: ...


def offsets_to_ranges(offsets: Sequence[tuple[str, int, int]]) -> dict[TopicPartition, Ranges]:
    """(topic, partition, offset)s -> merged inclusive ranges per topic-partition."""
    by_tp: dict[TopicPartition, list[tuple[int, int]]] = {}
    for topic, partition, offset in offsets:
        by_tp.setdefault(TopicPartition(topic, partition), []).append((offset, offset))
    return {tp: merge_offset_ranges(r) for tp, r in by_tp.items()}


@dataclass
class AcknowledgeResult:
    """What one ``acknowledge_through`` did: batches and offsets acknowledged, partitions refused."""

    batches: tuple[int, ...] = ()
    accepted: int = 0
    failed: dict[TopicPartition, str] = field(default_factory=dict)


class ShareMember:
    """One share-group member for one streaming query (see the module docstring)."""

    def __init__(
        self,
        group_id: str,
        topics: Sequence[str],
        open_consumer: Callable[[], ShareConsumerLike],
        *,
        max_wait_ms: int,
        acknowledge_timeout_ms: int,
        join_wait_ms: int = JOIN_WAIT_MS,
        acknowledge_type: Any = ACCEPT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.group_id = group_id
        self.topics = tuple(topics)
        self._open_consumer = open_consumer
        self.max_wait_ms = max_wait_ms
        self.join_wait_ms = join_wait_ms
        self._polled = False
        self.available_now = False
        """``Trigger.AvailableNow``: a trigger reports "no batch" (ending the run) only after polling for at least
        ``join_wait_ms`` (a partition's share state may still be loading on its leader, an assignment arriving)."""
        self.acknowledge_timeout_ms = acknowledge_timeout_ms
        self._accept = acknowledge_type
        self._clock = clock
        self._consumer: ShareConsumerLike | None = None
        self.ledger: dict[int, list[tuple[str, int, int]]] = {}
        self._offsets: dict[int, ShareBatchOffset] = {}
        self._replayed: set[int] = set()
        self.acquired_at: dict[int, float] = {}

    @property
    def consumer(self) -> ShareConsumerLike:
        if self._consumer is None:
            consumer = self._open_consumer()
            consumer.subscribe(list(self.topics))
            self._consumer = consumer
        return self._consumer

    def initial_offset(self) -> ShareBatchOffset:
        return ShareBatchOffset(self.group_id, 0, {})

    def next_batch(self, start: ShareBatchOffset) -> ShareBatchOffset:
        """The end offset of the batch after ``start`` (``start`` itself when no record is due)."""
        self.acknowledge_through(start.batch)
        pending = self._offsets.get(start.batch + 1)
        if pending is not None:
            return pending
        wait_ms = (
            self.max_wait_ms if self._polled and not self.available_now else max(self.max_wait_ms, self.join_wait_ms)
        )
        deadline = self._clock() + wait_ms / 1000
        records = self.consumer.poll(wait_ms)
        self._polled = True
        while not records and self.available_now and (left := deadline - self._clock()) > 0:
            records = self.consumer.poll(max(1, int(left * 1000)))
        if not records:
            return start
        acquired = [(r.topic, r.partition, r.offset) for r in records]
        batch = ShareBatchOffset(self.group_id, start.batch + 1, offsets_to_ranges(acquired))
        self.ledger[batch.batch] = acquired
        self._offsets[batch.batch] = batch
        self.acquired_at[batch.batch] = self._clock()
        return batch

    def note_replayed(self, end: ShareBatchOffset) -> None:
        """Spark plans ``end``'s batch: when this member did not acquire it (a batch of an earlier run of the
        query, replayed from the checkpoint), log once that its records will be delivered again."""
        if end.batch in self.ledger or end.batch in self._replayed or not end.acquired:
            return
        self._replayed.add(end.batch)
        log.warning(
            "share group %r: batch %d (%d offsets) was acquired by an earlier run of this query; it is processed "
            "again now, and since the member holding its locks is gone, the broker delivers its records once more "
            "when the locks expire (share.record.lock.duration.ms): at-least-once",
            self.group_id,
            end.batch,
            end.records,
        )

    def acknowledge_through(self, batch: int) -> AcknowledgeResult:
        """ACCEPT the own batches up to ``batch`` (see the module docstring)."""
        done = sorted(b for b in self.ledger if b <= batch)
        result = AcknowledgeResult(tuple(done))
        if not done or self._consumer is None:
            return result
        consumer = self._consumer
        by_tp: dict[TopicPartition, int] = {}
        unmarked: dict[TopicPartition, str] = {}  # the consumer refused to acknowledge one of its records
        for b in done:
            for topic, partition, offset in self.ledger[b]:
                tp = TopicPartition(topic, partition)
                by_tp[tp] = by_tp.get(tp, 0) + 1
                try:
                    consumer.acknowledge((topic, partition, offset), self._accept)
                except Exception as e:  # noqa: BLE001 - e.g. the consumer dropped it with a lost share session
                    unmarked.setdefault(tp, f"offset {offset} could not be acknowledged: {e}")
        for b in done:
            del self.ledger[b]
            self._offsets.pop(b, None)
            self.acquired_at.pop(b, None)
        try:
            errors = consumer.commit_sync(self.acknowledge_timeout_ms)
        except Exception as e:  # noqa: BLE001 - the records come back to the group: at-least-once
            log.warning(
                "share group %r: acknowledging batches %s failed (%s); their records will be delivered again",
                self.group_id,
                done,
                e,
            )
            result.failed = {tp: str(e) for tp in by_tp}
            return result
        errors = errors or {}
        for tp, count in by_tp.items():
            error = unmarked.get(tp) or errors.get(tp)
            if error is None and tp not in errors:
                error = "the consumer reported no answer for this partition"
            if error is None:
                result.accepted += count
                continue
            result.failed[tp] = str(error)
            log.warning(
                "share group %r: the broker refused the acknowledgement of %d records of %s from batches %s (%s); "
                "their locks had expired or the member lost them, so they will be delivered again (at-least-once)",
                self.group_id,
                count,
                tp,
                done,
                error,
            )
        return result

    def close(self) -> None:
        """Close the consumer (unacknowledged records go back to the group); the ledger is forgotten."""
        consumer, self._consumer = self._consumer, None
        self._polled = False
        self.ledger.clear()
        self._offsets.clear()
        self.acquired_at.clear()
        if consumer is not None:
            consumer.close()
