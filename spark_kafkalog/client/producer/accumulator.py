"""The producer's record accumulator: per-partition queues of batches, filled by ``send`` and drained by
the sender thread.

A batch becomes *sendable* when it is full (``batch.size``), when ``linger.ms`` has passed since it was
opened, when a flush or close is in progress, or when a newer batch is queued behind it; a batch waiting
for a retry is not sendable before its backoff ends. ``ready`` groups sendable partitions by leader
(looked up in the metadata cache without I/O) and reports partitions whose leader is unknown; ``drain``
takes at most one batch per partition for one broker, up to ``max.request.size`` bytes, skipping muted
partitions. Memory is bounded by ``buffer.memory`` (estimated uncompressed bytes): ``append`` blocks
until enough batches complete, up to ``max.block.ms``.

Thread-safe: every method takes the accumulator's lock. ``Producer.send`` appends to the open batch of a
partition itself (the common case, no call into the accumulator): it appends to the last batch of
``queues[tp]`` when that batch is ``appendable`` and the record fits (see ``ProducerBatch.try_append``),
and calls ``append`` for everything else. That append holds ``lock``, or - with the compiled
``producer_batch.append_record``, which is atomic under the GIL - no lock at all; so that this is safe,
every append to a batch already in a queue goes through ``append_record`` when it is built, and a batch
leaves its queue (``drain``, ``expired``) before it stops being appendable, so a batch an append finds
at the end of a queue is never one being built or sent. Batches are encoded when sent, by the sender
thread, outside the lock.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import NamedTuple

from spark_kafkalog.client.errors import KafkaTimeoutError
from spark_kafkalog.client.producer.producer_batch import (
    DeliveryCallback,
    ProducerBatch,
    RecordFuture,
    _no_wakeup,
    append_record,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.records import Compression

__all__ = ["AppendResult", "ReadyCheck", "RecordAccumulator"]


class AppendResult(NamedTuple):
    future: RecordFuture
    batch_full: bool  # the record's batch, or the one it closed, is full (wake the sender)
    new_batch: bool  # the record opened a new batch (the sender must learn its linger deadline)


class ReadyCheck(NamedTuple):
    ready_nodes: set[int]
    next_check: float  # seconds until a not-yet-sendable batch may become sendable
    unknown_leaders: set[str]  # topics with a sendable batch whose partition has no known leader


class RecordAccumulator:
    def __init__(
        self,
        *,
        batch_size: int,
        linger_ms: int,
        compression: Compression,
        buffer_memory: int,
        compression_level: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.batch_size = max(batch_size, 1)
        self.linger = linger_ms / 1000.0
        self.compression = compression
        self.compression_level = compression_level
        self.buffer_memory = buffer_memory
        self.clock = clock
        self.lock = threading.Lock()
        self._cond = threading.Condition(self.lock)
        self.queues: dict[TopicPartition, deque[ProducerBatch]] = {}
        self._queues = self.queues
        self._used = 0
        self._flushing = 0
        self._drain_index = 0
        self._incomplete: set[ProducerBatch] = set()
        self.closing = False

    # producer side -----------------------------------------------------------------------------
    def append(
        self,
        tp: TopicPartition,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]],
        record_size: int,
        callback: DeliveryCallback | None,
        *,
        max_block: float,
    ) -> AppendResult:
        """Add a record to the partition's open batch (opening one when needed)."""
        with self.lock:
            queue = self._queues.get(tp)
            if queue:
                last = queue[-1]
                if append_record is not None:  # atomic with the lock-free appends of send()
                    future = append_record(
                        queue,
                        self.batch_size,
                        record_size,
                        timestamp_ms,
                        key,
                        value,
                        headers,
                        callback,
                        RecordFuture,
                        _no_wakeup,
                    )
                else:
                    future = last.try_append(timestamp_ms, key, value, headers, record_size, callback)
                if future is not None:
                    return AppendResult(future, last.full, False)
            need = max(self.batch_size, record_size + 61)
            if self._wait_for_memory(need, max_block, tp, "record"):
                queue = self._queues.get(tp)
            if queue:
                queue[-1].appendable = False
            batch = ProducerBatch(tp, self.compression, self.batch_size, self.clock(), self.compression_level)
            batch.reserved = need
            self._used += need
            self._incomplete.add(batch)
            future = batch.try_append(timestamp_ms, key, value, headers, record_size, callback)
            assert future is not None
            if queue is None:
                queue = self._queues[tp] = deque()
            queue.append(batch)
            previous_full = len(queue) > 1 and queue[-2].full
            return AppendResult(future, batch.full or previous_full, True)

    def release(self, batch: ProducerBatch) -> None:
        """Forget a completed batch and return its memory."""
        with self.lock:
            self._incomplete.discard(batch)
            if batch.reserved:
                self._used -= batch.reserved
                batch.reserved = 0
                self._cond.notify_all()

    # sender side -------------------------------------------------------------------------------
    def ready(
        self, now: float, leader_of: Callable[[TopicPartition], int | None], muted: Collection[TopicPartition] = ()
    ) -> ReadyCheck:
        nodes: set[int] = set()
        unknown: set[str] = set()
        next_check = float("inf")
        with self.lock:
            force = self.closing or self._flushing > 0
            for tp, queue in self._queues.items():
                if not queue or tp in muted:
                    continue
                batch = queue[0]
                if batch.retry_after > now:
                    next_check = min(next_check, batch.retry_after - now)
                    continue
                sendable = force or batch.full or len(queue) > 1 or batch.attempts > 0
                if not sendable:
                    wait = batch.created + self.linger - now
                    if wait <= 0:
                        sendable = True
                    else:
                        next_check = min(next_check, wait)
                if not sendable:
                    continue
                leader = leader_of(tp)
                if leader is None:
                    unknown.add(tp.topic)
                else:
                    nodes.add(leader)
        return ReadyCheck(nodes, next_check, unknown)

    def drain(
        self,
        node: int,
        leader_of: Callable[[TopicPartition], int | None],
        max_request_size: int,
        now: float,
        muted: Collection[TopicPartition] = (),
    ) -> list[ProducerBatch]:
        """Up to one sendable batch per partition led by ``node``, removed from their queues and closed to
        appends (the sender builds their bytes, outside the lock, stamped when idempotent)."""
        out: list[ProducerBatch] = []
        size = 0
        with self.lock:
            force = self.closing or self._flushing > 0
            items = list(self._queues.items())
            if items:  # rotate the starting partition so that max.request.size starves none
                start = self._drain_index % len(items)
                self._drain_index += 1
                items = items[start:] + items[:start]
            for tp, queue in items:
                if not queue or tp in muted or leader_of(tp) != node:
                    continue
                batch = queue[0]
                if batch.retry_after > now:
                    continue
                if not (
                    force or batch.full or len(queue) > 1 or batch.attempts > 0 or now - batch.created >= self.linger
                ):
                    continue
                batch_size = batch.size_in_bytes
                if out and size + batch_size > max_request_size:
                    continue
                queue.popleft()
                batch.appendable = False
                out.append(batch)
                size += batch_size
        return out

    def reenqueue(self, batch: ProducerBatch, retry_after: float) -> None:
        """Put a batch back at the head of its queue for a retry; sequenced batches stay in sequence order."""
        with self.lock:
            batch.retry_after = retry_after
            batch.in_flight = False
            queue = self._queues.setdefault(batch.tp, deque())
            index = 0
            if batch.base_sequence >= 0:
                while index < len(queue) and 0 <= queue[index].base_sequence < batch.base_sequence:
                    index += 1
            queue.insert(index, batch)

    def expired(self, now: float, delivery_timeout: float) -> list[ProducerBatch]:
        """Remove and return queued batches older than ``delivery_timeout`` seconds."""
        out = []
        with self.lock:
            for queue in self._queues.values():
                while queue and now - queue[0].created >= delivery_timeout:
                    batch = queue.popleft()
                    batch.appendable = False
                    out.append(batch)
        return out

    def head_sequences(self, tp: TopicPartition) -> list[int]:
        with self.lock:
            return [b.base_sequence for b in self._queues.get(tp, ()) if b.base_sequence >= 0]

    def all_batches(self) -> list[ProducerBatch]:
        with self.lock:
            return [b for q in self._queues.values() for b in q]

    def take_all(self) -> list[ProducerBatch]:
        """Remove and return every queued batch (for an abort)."""
        with self.lock:
            out = [b for q in self._queues.values() for b in q]
            for batch in out:
                batch.appendable = False
            self._queues.clear()
            return out

    def queued_partitions(self) -> set[TopicPartition]:
        with self.lock:
            return {tp for tp, q in self._queues.items() if q}

    def take_partitions(self, partitions: set[TopicPartition]) -> list[ProducerBatch]:
        """Remove and return the queued batches of ``partitions`` (they failed before being sent)."""
        with self.lock:
            out: list[ProducerBatch] = []
            for tp in partitions:
                queue = self._queues.pop(tp, None)
                if queue:
                    for batch in queue:
                        batch.appendable = False
                    out.extend(queue)
            return out

    def incomplete(self) -> list[ProducerBatch]:
        """Every batch not yet completed (queued or in flight)."""
        with self.lock:
            return list(self._incomplete)

    def has_queued(self) -> bool:
        with self.lock:
            return any(self._queues.values())

    def begin_flush(self) -> None:
        with self.lock:
            self._flushing += 1

    def end_flush(self) -> None:
        with self.lock:
            self._flushing -= 1

    def topics_queued(self) -> Iterable[str]:
        with self.lock:
            return {tp.topic for tp, q in self._queues.items() if q}

    def _wait_for_memory(self, need: int, max_block: float, tp: TopicPartition, what: str) -> bool:
        """Under the lock: wait up to ``max_block`` seconds (real time: the wait is real) until ``need`` more
        bytes fit in ``buffer.memory`` (always when nothing is reserved); True when it had to wait. Raises
        ``KafkaTimeoutError`` naming the ``what`` (record, batch) for ``tp`` that was not sent."""
        if self._used + need <= self.buffer_memory or self._used == 0:
            return False
        deadline = time.monotonic() + max_block
        while self._used + need > self.buffer_memory and self._used > 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KafkaTimeoutError(
                    f"buffer.memory ({self.buffer_memory} bytes) stayed full for max.block.ms; {what} for {tp} not sent",
                    topic=tp.topic,
                    partition=tp.partition,
                )
            self._cond.wait(remaining)
        return True

    # whole batches (client.producer.batch_producer) -----------------------------------------------
    def append_prebuilt(self, batch: ProducerBatch, *, max_block: float) -> None:
        """Queue an already closed, full batch behind the partition's others (waiting up to ``max_block``
        seconds for ``buffer.memory``)."""
        need = batch.size_in_bytes
        with self._cond:
            self._wait_for_memory(need, max_block, batch.tp, "batch")
            batch.reserved = need
            self._used += need
            self._incomplete.add(batch)
            self._queues.setdefault(batch.tp, deque()).append(batch)
