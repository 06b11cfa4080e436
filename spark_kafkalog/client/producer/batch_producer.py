"""The batch produce path: many records from columns (Arrow arrays or lists) sent as whole v2 record batches.

``send_batch`` (behind ``Producer.send_batch``) partitions every row, groups the rows by partition and
encodes each partition's rows into record batches with ``records.columnar`` (no per-row Python for values
and keys), then hands the finished batches to the producer's accumulator as ``PrebuiltBatch``es: the
sender thread drains, stamps (producer id, epoch, base sequence: one sequence range per batch, per
partition, exactly as for batches filled by ``send``), sends, retries and completes them like any other
batch, with up to ``max.in.flight.requests.per.connection`` produce requests in flight per broker.

Partitions, as ``Producer.send`` picks them:

* an explicit partition (the ``partition`` argument, a number or a per-row column whose null entries
  mean "the partitioner picks");
* with the default partitioner (and ``uniform_sticky``): a non-null key goes to
  ``toPositive(murmur2(key)) % partitions`` (not with ``partitioner.ignore.keys``); null-key rows are
  sticky: consecutive runs of about ``batch.size`` estimated bytes go to the partitioner's current sticky
  partition, which then moves (``record_appended`` once per run rather than once per record: the runs
  can differ from what per-record sends would make, the spread is the same);
* any other partitioner (``round_robin``, a custom one) is called once per row, in row order.

Differences from ``send``: the configured key/value serializers are not applied (values and keys are
bytes, ``str`` (UTF-8) or ``None``, or Arrow binary/string arrays); one timestamp (now) for rows without
one; batches hold up to ``batch_bytes`` (default ``max(batch.size, min(max.request.size / 2, 512 KiB))``)
rather than ``batch.size``, since whole batches are what this path is for; compressed, a batch takes
rows until its *compressed* size should reach that, by a per-topic estimate of the compression ratio
(as Java's producer estimates it; up at once, down halfway, at most 4x the rows), and a batch that
compresses to more than fits in a request is encoded again as two. Each row of one call lands in its
partition in row order. Thread-safe like ``send``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from spark_kafkalog.client.errors import KafkaClientError, ProducerClosedError, RecordTooLargeError
from spark_kafkalog.client.producer.partitioner import DefaultPartitioner
from spark_kafkalog.client.producer.producer_batch import ProducerBatch
from spark_kafkalog.client.producer.producer_parts import ProducerParts
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import Compression
from spark_kafkalog.records.columnar import (
    BinaryColumn,
    encode_batch,
    encode_headers,
    group_rows,
    key_partitions,
    record_sizes,
    split_rows,
)

__all__ = ["BatchMetadata", "BatchSendResult", "PrebuiltBatch", "send_batch"]

log = logging.getLogger("kafkalog.producer")

BatchCallback = Callable[["BatchMetadata | None", "BaseException | None"], None]


class BatchMetadata(NamedTuple):
    """Where one record batch landed: its records have offsets ``base_offset .. base_offset + record_count - 1``."""

    topic: str
    partition: int
    base_offset: int
    record_count: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime


class PrebuiltBatch(ProducerBatch):
    """A closed batch encoded before it reached the accumulator; completes as a whole (no per-record futures)."""

    def __init__(self, tp: TopicPartition, data: bytearray, count: int, now: float) -> None:
        super().__init__(tp, Compression.NONE, len(data), now)
        self.data = data
        self.count = count
        self.full = True
        self.appendable = False  # Producer.send never appends to it
        self.estimated_size = len(data)
        self.batch_callbacks: list[BatchCallback] = []

    def __len__(self) -> int:
        return self.count

    @property
    def record_count(self) -> int:
        return self.count

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + self.count - 1

    def metadata(self) -> BatchMetadata:
        return BatchMetadata(self.tp.topic, self.tp.partition, self.base_offset, self.count, self.log_append_time)

    def _finish(self, base_offset: int, log_append_time: int, error: BaseException | None) -> bool:
        if not super()._finish(base_offset, log_append_time, error):
            return False
        for callback in self.batch_callbacks:
            try:
                callback(None if error else self.metadata(), error)
            except Exception:  # a user callback must not kill the sender thread
                log.exception("batch delivery callback %r raised", callback)
        return True

    def result(self, timeout: float | None = None) -> BatchMetadata:
        """The batch's ``BatchMetadata``; raises its delivery error, or ``TimeoutError`` after ``timeout``."""
        if not self.done.wait(timeout):
            raise TimeoutError(f"batch of {self.count} records for {self.tp} not acknowledged within {timeout}s")
        if self.error is not None:
            raise self.error
        return self.metadata()


class BatchSendResult:
    """What one ``send_batch`` call queued: ``batches`` (``PrebuiltBatch``es, each with ``result()``) and
    ``partitions`` (the partition of every row, int32, in row order)."""

    def __init__(self, batches: list[PrebuiltBatch], partitions: np.ndarray) -> None:
        self.batches = batches
        self.partitions = partitions

    @property
    def count(self) -> int:
        return int(sum(b.count for b in self.batches))

    def result(self, timeout: float | None = None) -> list[BatchMetadata]:
        """Every batch's metadata once all are acknowledged; raises the first delivery error."""
        deadline = None if timeout is None else time.monotonic() + timeout
        out = []
        for batch in self.batches:
            out.append(batch.result(None if deadline is None else max(0.0, deadline - time.monotonic())))
        return out


def _timestamps(timestamps: Any, n: int) -> np.ndarray:
    if timestamps is None:
        return np.full(n, int(time.time() * 1000), dtype=np.int64)
    if isinstance(timestamps, (pa.Array, pa.ChunkedArray)):
        if pa.types.is_timestamp(timestamps.type):
            timestamps = timestamps.cast(pa.timestamp("ms", tz=timestamps.type.tz)).cast(pa.int64())
        if timestamps.null_count:
            timestamps = timestamps.fill_null(int(time.time() * 1000))
        ts = timestamps.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    elif isinstance(timestamps, (int, np.integer)) and not isinstance(timestamps, bool):
        ts = np.full(n, int(timestamps), dtype=np.int64)
    else:
        now = int(time.time() * 1000)
        ts = np.asarray([now if t is None else t for t in timestamps], dtype=np.int64)
    if len(ts) != n:
        raise ValueError(f"timestamps has {len(ts)} entries for {n} rows")
    if n and ts.min() < 0:
        raise ValueError("timestamps must be non-negative (milliseconds)")
    return ts


def _explicit_partitions(partition: Any, n: int, num_partitions: int, topic: str) -> tuple[np.ndarray, np.ndarray]:
    """(partition per row, int32, -1 where the partitioner picks)."""
    if partition is None:
        return np.full(n, -1, dtype=np.int32), np.ones(n, dtype=bool)
    if isinstance(partition, (int, np.integer)) and not isinstance(partition, bool):
        parts = np.full(n, int(partition), dtype=np.int64)
    elif isinstance(partition, (pa.Array, pa.ChunkedArray)):
        parts = partition.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        parts = np.asarray([-1 if p is None else p for p in partition], dtype=np.int64)
    if len(parts) != n:
        raise ValueError(f"partition has {len(parts)} entries for {n} rows")
    given = parts >= 0
    bad = given & (parts >= num_partitions)
    if bad.any() or (parts < -1).any():
        p = int(parts[np.flatnonzero(bad | (parts < -1))[0]])
        raise KafkaClientError(
            f"partition {p} of topic {topic} does not exist (the topic has {num_partitions} partitions)",
            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            retriable=False,
            topic=topic,
            partition=p,
        )
    return parts.astype(np.int32), ~given


def _partition_rows(
    producer: ProducerParts,
    topic: str,
    values: BinaryColumn,
    keys: BinaryColumn | None,
    sizes: np.ndarray,
    partition: Any,
    num_partitions: int,
    available: list[int],
) -> np.ndarray:
    n = len(values)
    parts, pick = _explicit_partitions(partition, n, num_partitions, topic)
    if not pick.any():
        return parts
    partitioner = getattr(producer._partition, "__self__", None)
    appended = producer._record_appended
    if not isinstance(partitioner, DefaultPartitioner):
        for row in np.flatnonzero(pick).tolist():
            key = keys.value(row) if keys is not None else None
            p = producer._partition(topic, key, values.value(row), num_partitions, available)
            if not isinstance(p, int) or not 0 <= p < num_partitions:
                raise KafkaClientError(
                    f"partitioner returned {p!r} for topic {topic} with {num_partitions} partitions",
                    retriable=False,
                    topic=topic,
                )
            parts[row] = p
            if appended is not None:
                appended(topic, p, int(sizes[row]), num_partitions, available)
        return parts
    sticky = pick
    if keys is not None and not partitioner.ignore_keys:
        keyed = pick if keys.nulls is None else pick & (keys.nulls == 0)
        if keyed.any():
            hashed = key_partitions(keys, num_partitions)
            parts[keyed] = hashed[keyed]
            sticky = pick & ~keyed
    rows = np.flatnonzero(sticky)
    if len(rows):
        cumulative = np.cumsum(sizes[rows])
        start, base = 0, 0
        while start < len(rows):
            p = partitioner.partition(topic, None, None, num_partitions, available)
            end = int(np.searchsorted(cumulative, base + partitioner._sticky.batch_size, side="left")) + 1
            end = min(max(end, start + 1), len(rows))
            parts[rows[start:end]] = p
            run_bytes = int(cumulative[end - 1]) - base
            partitioner.record_appended(topic, p, run_bytes, num_partitions, available)
            base = int(cumulative[end - 1])
            start = end
    return parts


def send_batch(
    producer: ProducerParts,
    topic: str,
    values: Any,
    keys: Any = None,
    *,
    partition: Any = None,
    timestamps: Any = None,
    headers: Any = None,
    on_delivery: BatchCallback | None = None,
    batch_bytes: int | None = None,
) -> BatchSendResult:
    """Queue the rows as record batches (see the module docstring and ``Producer.send_batch``)."""
    if producer._closed:
        raise ProducerClosedError(f"cannot send to {topic}: the producer is closed")
    if producer._sender.fatal_error is not None:
        raise KafkaClientError(
            f"the producer failed: {producer._sender.fatal_error}", retriable=False
        ) from producer._sender.fatal_error
    if not isinstance(topic, str) or not topic:
        raise ValueError(f"topic must be a non-empty string, got {topic!r}")
    value_column = BinaryColumn.of(values)
    n = len(value_column)
    key_column = None if keys is None else BinaryColumn.of(keys)
    if key_column is not None and len(key_column) != n:
        raise ValueError(f"keys has {len(key_column)} entries for {n} rows")
    header_column = None
    if headers is not None:
        header_column = headers if isinstance(headers, BinaryColumn) else encode_headers(headers)
        if len(header_column) != n:
            raise ValueError(f"headers has {len(header_column)} entries for {n} rows")
    if not n:
        return BatchSendResult([], np.zeros(0, dtype=np.int32))
    cfg = producer.config
    ts = _timestamps(timestamps, n)
    sizes = record_sizes(value_column, key_column, header_column)
    largest = int(sizes.max())
    if largest > cfg.max_request_size:
        row = int(np.argmax(sizes))
        raise RecordTooLargeError(
            f"record {row} of about {largest} bytes for {topic} exceeds max.request.size ({cfg.max_request_size})",
            topic=topic,
        )
    info = producer._client.topic_info(topic, timeout_ms=cfg.max_block_ms)
    num_partitions = len(info.partitions)
    available = sorted(p for p, meta in info.partitions.items() if meta.leader >= 0)
    parts = _partition_rows(producer, topic, value_column, key_column, sizes, partition, num_partitions, available)
    if batch_bytes is None:
        batch_bytes = max(cfg.batch_size, min(cfg.max_request_size // 2, 512 * 1024))
    batch_bytes = min(batch_bytes, cfg.max_request_size)  # a batch must fit in one request
    compression = cfg.compression_type
    level = cfg.compression_level()
    ratios = producer._compression_ratios
    # compressed: runs of about batch_bytes / ratio estimated record bytes, so that batches come out near
    # batch_bytes (fewer, fuller batches and requests), as Java's producer sizes compressed batches
    run_bytes = int(batch_bytes / ratios.get(topic, 1.0)) if compression else batch_bytes
    accumulator = producer._accumulator
    max_block = cfg.max_block_ms / 1000.0
    batches: list[PrebuiltBatch] = []
    crc = producer._sender.idempotence is None  # else stamping the producer state computes the CRC
    fits = max(batch_bytes, cfg.max_request_size - _REQUEST_OVERHEAD)

    def encoded(run: np.ndarray) -> list[tuple[np.ndarray, bytearray]]:
        data = encode_batch(run, ts[run], value_column, key_column, header_column, compression, level=level, crc=crc)
        if not compression:
            return [(run, data)]
        _observe_ratio(ratios, topic, len(data) / max(int(sizes[run].sum()), 1))
        if len(data) <= fits or len(run) == 1:
            return [(run, data)]
        half = len(run) // 2  # compressed far less than estimated, too large for a request: two batches
        return encoded(run[:half]) + encoded(run[half:])

    for p, rows in group_rows(parts, num_partitions):
        tp = TopicPartition(topic, p)
        for whole_run in split_rows(rows, sizes, run_bytes):
            for run, data in encoded(whole_run):
                batch = PrebuiltBatch(tp, data, len(run), accumulator.clock())
                if on_delivery is not None:
                    batch.batch_callbacks.append(on_delivery)
                accumulator.append_prebuilt(batch, max_block=max_block)
                batches.append(batch)
                producer._sender.wakeup()
    return BatchSendResult(batches, parts)


_REQUEST_OVERHEAD = 1024  # room left in max.request.size for the produce request's own fields
MAX_RUN_FACTOR = 4
"""A compressed batch holds at most ``MAX_RUN_FACTOR`` x ``batch_bytes`` of estimated record bytes."""


def _observe_ratio(ratios: dict[str, float], topic: str, observed: float) -> None:
    """Update ``topic``'s estimated compressed / estimated record bytes: up at once to a worse ratio (so
    that the next batches fit), halfway down to a better one; never below ``1 / MAX_RUN_FACTOR``."""
    estimate = ratios.get(topic, 1.0)
    estimate = observed if observed > estimate else estimate - (estimate - observed) / 2
    ratios[topic] = max(estimate, 1.0 / MAX_RUN_FACTOR)
