"""``ClientFetchMixin``: ``KafkaClient.fetch_batches``, the Fetch of one partition range with retries, one
request ahead, by topic id when the metadata knows it.

Versions: Fetch v4+ under read_committed; v13+ names the topic by id (KIP-516) when the metadata has the
topic's id (Metadata v10+), else the fetch stays at v12 by name; the request itself is built by
``fetcher.fetch_request`` and the answer walked by ``fetcher.split_fetched``. A topic deleted and created again
answers UNKNOWN_TOPIC_ID or INCONSISTENT_TOPIC_ID, which refresh the metadata before the retry. With
``client.rack`` (KIP-392) a partition may be fetched from its preferred read replica (``read_replicas``).

Concurrency: as ``KafkaClient`` (the generator holds the client's lock only while it talks to a broker).
Mixed into ``KafkaClient`` only: it uses the client's config, lock, metadata, connections and retry plans.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Generator
from typing import Any, NamedTuple

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client_base import ClientBase
from spark_kafkalog.client.core.fetcher import fetch_request, partition_data, split_fetched
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    OffsetOutOfRangeError,
    error_for_code,
)
from spark_kafkalog.client.network.retry import gave_up
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.client.types import FetchedBatch, OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["ClientFetchMixin", "FetchRange", "FetchStep", "checked_range", "fetch_error", "out_of_range_error"]

_FETCH = int(ApiKey.FETCH)


class ClientFetchMixin(ClientBase):
    """The Fetch calls of ``KafkaClient`` (see the module docstring)."""

    _lock: threading.RLock
    connection: Callable[[int], SocketConnection]
    _drop: Callable[..., None]
    _leader_and_epoch: Callable[[TopicPartition], tuple[int, int]]
    list_offsets: Callable[..., dict[TopicPartition, int]]

    def fetch_batches(
        self,
        tp: TopicPartition,
        start: int,
        end: int | None = None,
        *,
        max_bytes: int | None = None,
        isolation_level: int | None = None,
        max_wait_ms: int | None = None,
        timeout_ms: int | None = None,
    ) -> Generator[FetchedBatch, None, int]:
        """Every record batch overlapping ``[start, end)`` of one partition, in offset order.

        ``end=None`` reads up to the high watermark (last stable offset under read_committed) seen in
        the first response. Batches may hold records below ``start`` or at/after ``end``: the caller
        filters by offset. Control batches and (read_committed) aborted batches are not yielded. While
        the range is not yet available (``end`` beyond the high watermark) the fetcher long-polls; no
        progress for ``timeout_ms`` (default ``default.api.timeout.ms``) raises ``KafkaTimeoutError``.
        An offset outside the log raises ``OffsetOutOfRangeError`` with the partition's log start offset
        and high watermark. ``max_bytes`` is the per-partition fetch size (``max.partition.fetch.bytes``).
        The next fetch is sent before the batches of the current one are yielded (one request ahead).
        Run to its end, the generator returns (``StopIteration.value``) the offset after the last batch it
        walked, skipped control and aborted batches included: where the next fetch starts, as Java's
        consumer advances its position past transaction markers.
        """
        tp = checked_range(tp, start, end)
        self.stats["ranges_fetched"].append((tp.topic, tp.partition, start, end))
        return self._fetch_iter(tp, start, end, max_bytes, isolation_level, max_wait_ms, timeout_ms)

    def _fetch_iter(
        self,
        tp: TopicPartition,
        start: int,
        end: int | None,
        max_bytes: int | None,
        isolation_level: int | None,
        max_wait_ms: int | None,
        timeout_ms: int | None,
    ) -> Generator[FetchedBatch, None, int]:
        fetch = FetchRange(self.config, tp, start, end, max_bytes, isolation_level, max_wait_ms, timeout_ms)
        if fetch.finished:
            return fetch.position
        plan = self.retry_plan()
        pending: tuple[SocketConnection, Any, int] | None = None  # (connection, in-flight request, its offset)
        while True:
            try:
                if pending is not None and pending[2] == fetch.position and not pending[0].closed:
                    conn, request, _ = pending
                else:
                    conn, request = self._send_fetch(fetch)
                pending = None
                with self._lock:
                    try:
                        response = conn.wait(request, fetch.response_timeout)
                    except (KafkaConnectionError, KafkaTimeoutError) as e:
                        self._drop(conn, e)
                        self.read_replicas.clear(tp)
                        raise
                data = partition_data(response, tp, self._topic_id(tp.topic))
                if data.error_code:
                    self._raise_fetch_error(tp, fetch.position, data.error_code, conn.peer)
                if data.preferred_read_replica >= 0:  # KIP-392: no data; the next fetch goes to that broker
                    self.read_replicas.update(tp, data.preferred_read_replica)
            except KafkaClientError as e:
                if not e.retriable:
                    raise
                self.stats["retries"] += 1
                if not plan.sleep_or_give_up():
                    e.add_context(gave_up(f"Fetch of {tp} at offset {fetch.position}", plan))
                    raise
                continue
            plan = self.retry_plan()
            step = fetch.advance(data)
            self.stats["fetch_requests"] += 1
            self.stats["bytes_fetched"] += step.bytes
            if step.idle:
                time.sleep(self.config.retry_backoff_ms / 1000.0)  # data should be there but none came: do not spin
            if step.fetch_ahead:
                try:
                    pending = (*self._send_fetch(fetch), fetch.position)
                except KafkaClientError as e:
                    if not e.retriable:
                        raise
                    pending = None
            self.stats["batches_fetched"] += len(step.batches)
            yield from step.batches
            if step.done:
                return fetch.position

    def _topic_id(self, topic: str) -> uuid.UUID | None:
        """``topic``'s id in the metadata (Metadata v10+), None when unknown (Fetch then stays at v12). A topic
        deleted and created again gets a new id: fetches by the old one answer UNKNOWN_TOPIC_ID or
        INCONSISTENT_TOPIC_ID, which refresh the metadata (``REFRESH_METADATA_ERRORS``) before the retry."""
        info = self.metadata.topic(topic)
        return uuid.UUID(info.topic_id) if info is not None and info.topic_id else None

    def _send_fetch(self, fetch: FetchRange) -> tuple[SocketConnection, Any]:
        tp = fetch.tp
        leader, epoch = self._leader_and_epoch(tp)
        with self._lock:
            node = self.read_replicas.node_for(tp, leader, lambda n: self.metadata.broker(n) is not None)
            try:
                conn = self.connection(node)
            except KafkaClientError:
                self.read_replicas.clear(tp)
                raise
            body, bounds = fetch.request(epoch, self._topic_id(tp.topic))
            self.stats["requests"] += 1
            try:
                request = conn.send(_FETCH, body, **bounds)
            except (KafkaConnectionError, KafkaTimeoutError) as e:
                self._drop(conn, e)
                self.read_replicas.clear(tp)
                raise
            assert request is not None
            return conn, request

    def _raise_fetch_error(self, tp: TopicPartition, position: int, code: int, peer: str) -> None:
        error = fetch_error(tp, position, code, peer, self.read_replicas.clear(tp))
        if error is None:  # OFFSET_OUT_OF_RANGE from the leader: name the log's bounds
            bounds = self.list_offsets({tp: OffsetSpec.EARLIEST})
            latest = self.list_offsets({tp: OffsetSpec.LATEST}, isolation_level=0)
            raise out_of_range_error(tp, position, peer, bounds[tp], latest[tp])
        self.on_partition_error(tp, code)
        self.name_principal(error)
        raise error


class FetchStep(NamedTuple):
    """What one Fetch answer gave a ``FetchRange``."""

    batches: list[FetchedBatch]
    done: bool  # the range is read (or, with ``end=None``, the high watermark of the first answer reached)
    fetch_ahead: bool  # more is available now: send the next fetch before yielding ``batches``
    idle: bool  # data should be there but none came: back off ``retry.backoff.ms`` rather than spin
    bytes: int  # record bytes in the answer


def checked_range(tp: tuple[str, int], start: int, end: int | None) -> TopicPartition:
    """``tp`` as a ``TopicPartition`` once ``[start, end)`` is a fetchable range (``ValueError`` naming it if not)."""
    tp = TopicPartition(*tp)
    if start < 0:
        raise ValueError(f"fetch start offset for {tp} must be >= 0, got {start}")
    if end is not None and end < start:
        raise ValueError(f"fetch range for {tp} is empty or reversed: [{start}, {end})")
    return tp


class FetchRange:
    """The progress of one ``fetch_batches`` range (pure apart from the clock), shared by the blocking and
    asyncio clients: the settings resolved once (isolation level, ``max.partition.fetch.bytes``,
    ``fetch.max.wait.ms``, the no-progress timeout, ``default.api.timeout.ms`` by default), the request for
    the current position and the walk of each answer."""

    def __init__(
        self,
        config: ClientConfig,
        tp: TopicPartition,
        start: int,
        end: int | None,
        max_bytes: int | None = None,
        isolation_level: int | None = None,
        max_wait_ms: int | None = None,
        timeout_ms: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.tp = tp
        self.iso = config.isolation_level if isolation_level is None else isolation_level
        self.partition_max = config.max_partition_fetch_bytes if max_bytes is None else max_bytes
        self.wait_ms = config.fetch_max_wait_ms if max_wait_ms is None else max_wait_ms
        self.no_progress_timeout = (config.default_api_timeout_ms if timeout_ms is None else timeout_ms) / 1000.0
        self.position = start
        self.end = end
        self._clock = clock
        self.last_progress = clock()

    @property
    def finished(self) -> bool:
        """The range is empty or read."""
        return self.end is not None and self.position >= self.end

    @property
    def response_timeout(self) -> float:
        """Seconds to wait for an answer: ``request.timeout.ms`` plus the broker's long-poll wait."""
        return (self.config.request_timeout_ms + self.wait_ms) / 1000.0

    def request(self, leader_epoch: int, topic_id: uuid.UUID | None) -> tuple[Any, dict[str, Any]]:
        """The Fetch body for the current position and the version bounds to send it with (v4+ under
        read_committed; at most v12 without a topic id: v13+ name topics by id, KIP-516)."""
        cfg = self.config
        body = fetch_request(
            self.tp,
            self.position,
            partition_max_bytes=self.partition_max,
            max_bytes=max(cfg.fetch_max_bytes, self.partition_max),
            max_wait_ms=self.wait_ms,
            min_bytes=cfg.fetch_min_bytes,
            isolation_level=self.iso,
            leader_epoch=leader_epoch,
            rack_id=cfg.client_rack,
            topic_id=topic_id,
        )
        bounds = {
            "min_version": 4 if self.iso else 0,
            "max_version": 12 if topic_id is None else None,
            "why": "read_committed needs Fetch v4",
        }
        return body, bounds

    def advance(self, data: Any) -> FetchStep:
        """Walk an error-free ``PartitionData`` answer (``fetcher.partition_data``) and move the position;
        raises ``KafkaTimeoutError`` when the position has not moved for the no-progress timeout."""
        cfg, tp, position = self.config, self.tp, self.position
        records = data.records
        limit = data.last_stable_offset if self.iso and data.last_stable_offset >= 0 else data.high_watermark
        if self.end is None:
            self.end = max(limit, position)
        end = self.end
        walk = split_fetched(
            records,
            tp,
            position,
            end,
            log_start_offset=data.log_start_offset,
            high_watermark=data.high_watermark,
            last_stable_offset=data.last_stable_offset,
            read_committed=bool(self.iso),
            aborted=data.aborted_transactions,
            check_crcs=cfg.check_crcs,
        )
        if walk.partial_entry_size is not None and walk.partial_entry_size > self.partition_max:
            self.partition_max = min(walk.partial_entry_size, cfg.max_frame_size)  # pre-KIP-74 broker
        idle = False
        if walk.position > position:
            self.last_progress = self._clock()
        elif (
            position < limit
            and not walk.batches
            and walk.partial_entry_size is None
            and data.preferred_read_replica < 0
        ):
            idle = True
        self.position = position = walk.position
        done = walk.reached_end or position >= end
        if not done and self._clock() - self.last_progress > self.no_progress_timeout:
            raise KafkaTimeoutError(
                f"no records of {tp} at offset {position} for {self.no_progress_timeout:.0f}s (range end {end}, "
                f"high watermark {data.high_watermark}, last stable offset {data.last_stable_offset})",
                topic=tp.topic,
                partition=tp.partition,
            )
        return FetchStep(walk.batches, done, not done and position < limit, idle, len(records) if records else 0)


def fetch_error(
    tp: TopicPartition, position: int, code: int, peer: str, replica: int | None
) -> KafkaClientError | None:
    """The error for a Fetch answer's partition ``code`` at ``position`` from broker ``peer`` (``replica``: the
    preferred read replica it was fetched from, KIP-392, else None). None for OFFSET_OUT_OF_RANGE from the
    leader: the caller looks the log's bounds up for ``out_of_range_error``. Out of range on a read replica
    (it may only be behind) and ``REFRESH_METADATA_ERRORS`` are retriable."""
    if replica is not None and code == ErrorCode.OFFSET_OUT_OF_RANGE:
        return KafkaClientError(
            f"offset {position} of {tp} is out of range on its read replica, broker {replica} ({peer}); "
            "fetching from the leader",
            error_code=code,
            retriable=True,
            topic=tp.topic,
            partition=tp.partition,
        )
    if code == ErrorCode.OFFSET_OUT_OF_RANGE:
        return None
    error = error_for_code(code, "Fetch", broker=peer, topic=tp.topic, partition=tp.partition)
    if code in REFRESH_METADATA_ERRORS:
        error.retriable = True
    return error


def out_of_range_error(
    tp: TopicPartition, position: int, peer: str, log_start: int, high_watermark: int
) -> OffsetOutOfRangeError:
    """``OffsetOutOfRangeError`` for ``position`` naming the log's ``[log_start, high_watermark)``."""
    return OffsetOutOfRangeError(
        f"offset {position} of {tp} is out of range on broker {peer}: the log holds [{log_start}, {high_watermark})",
        topic=tp.topic,
        partition=tp.partition,
        offset=position,
        log_start_offset=log_start,
        high_watermark=high_watermark,
    )
