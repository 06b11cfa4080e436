"""``KafkaStream``: the blocking iterator of Kafka 0.8's high-level consumer over one queue of fetched chunks.

A connector creates one bounded ``queue.Queue`` per stream; its fetcher puts ``Chunk``s (the records fetched for
one partition) into the queue of the stream that owns the partition, so one stream may merge several
partitions while each partition feeds exactly one stream. Iterating yields ``MessageAndMetadata``; yielding a
message advances its partition's consumed offset (the offset a commit writes: the next one to read).

Concurrency: one thread iterates a stream (as in 0.8). The connector's rebalance marks the partitions it gives
up as revoked under the lock shared by the connector and its streams; the iterator pops each message and
advances the consumed offset under that lock and drops what remains of a revoked partition's chunk, so no
message of a partition is handed out after its offsets were committed for the next owner.
``consumer.timeout.ms`` >= 0 makes ``next()`` raise ``ConsumerTimeoutException`` when no message came in that
time (the stream stays usable); the connector's shutdown ends every stream's iteration.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from spark_kafkalog.records.record import Record

__all__ = ["Chunk", "ConsumerTimeoutException", "KafkaStream", "MessageAndMetadata", "PartitionTopicInfo", "SHUTDOWN"]


class ConsumerTimeoutException(Exception):
    """No message arrived within ``consumer.timeout.ms``."""


class MessageAndMetadata(NamedTuple):
    key: bytes | None
    message: bytes | None
    topic: str
    partition: int
    offset: int


@dataclass(eq=False)
class PartitionTopicInfo:
    """A partition owned by a connector: its stream's queue, the offset consumed (next to hand out) and the
    offset fetched (next to ask the broker for). ``revoked`` once a rebalance or shutdown gave it up."""

    topic: str
    partition: int
    chunks: queue.Queue
    consumed_offset: int
    fetched_offset: int
    revoked: bool = field(default=False)


class Chunk(NamedTuple):
    """Records fetched for one partition (offset order), or the error that stopped its fetching."""

    info: PartitionTopicInfo
    records: list[Record]
    error: BaseException | None = None


SHUTDOWN: Any = object()  # queued by the connector's shutdown: ends the iteration


class KafkaStream:
    """Iterator of ``MessageAndMetadata`` over one chunk queue (see the module docstring)."""

    def __init__(self, chunks: queue.Queue, lock: threading.Lock, consumer_timeout_ms: int = -1) -> None:
        self.chunks = chunks
        self._lock = lock
        self._timeout_s = None if consumer_timeout_ms < 0 else consumer_timeout_ms / 1000.0
        self._info: PartitionTopicInfo | None = None
        self._records: deque[Record] = deque()
        self._done = False

    def __iter__(self) -> KafkaStream:
        return self

    def __next__(self) -> MessageAndMetadata:
        deadline = None if self._timeout_s is None else time.monotonic() + self._timeout_s
        while True:
            with self._lock:
                message = self._pop()
            if message is not None:
                return message
            if self._done:
                raise StopIteration
            try:
                if deadline is None:
                    chunk = self.chunks.get()
                else:
                    chunk = self.chunks.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                assert self._timeout_s is not None, "only a get with a timeout raises Empty"
                raise ConsumerTimeoutException(f"no message within {self._timeout_s * 1000:.0f} ms") from None
            if chunk is SHUTDOWN:
                self._done = True
                self.chunks.put(SHUTDOWN)  # stays ended for a later next()
                raise StopIteration
            if chunk.error is not None:
                raise chunk.error
            with self._lock:
                if not chunk.info.revoked:
                    self._info = chunk.info
                    self._records = deque(r for r in chunk.records if r.offset >= chunk.info.consumed_offset)

    def _pop(self) -> MessageAndMetadata | None:
        """The next message of the current chunk (caller holds the lock), or None."""
        info = self._info
        if info is None or info.revoked or not self._records:
            self._info = None
            self._records = deque()
            return None
        record = self._records.popleft()
        info.consumed_offset = record.offset + 1
        return MessageAndMetadata(record.key, record.value, info.topic, info.partition, record.offset)

    def clear(self) -> None:
        """Drop the queued chunks (the connector's rebalance, after its fetcher stopped)."""
        while True:
            try:
                self.chunks.get_nowait()
            except queue.Empty:
                return
