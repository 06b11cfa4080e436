"""``Producer``: thread-safe ``send`` into per-partition batches, delivered by a background sender thread.

``send`` serialises key and value (``key.serializer``/``value.serializer``; by default bytes-like values
pass as they are and ``str`` is UTF-8 encoded), picks the partition (explicit, else the partitioner, see
``partitioner``), appends the record to its partition's open batch and returns a future of its
``RecordMetadata``. Batches are sent when full (``batch.size``), after ``linger.ms``, or on
``flush``/``close``; compressed with ``compression.type``; acknowledged per ``acks``; retried with backoff
(``retries``, ``retry.backoff.ms``, bounded by ``delivery.timeout.ms``); idempotent by default
(``enable.idempotence``; see ``sender`` and ``idempotence`` for ordering and duplicates).

Every record's future completes exactly once - with its metadata or its error - and its ``on_delivery``
callback (called on the sender thread; exceptions it raises are logged) runs once. Errors found in
``send`` itself are raised there: a serializer failure, an unknown topic or partition, a record larger
than ``max.request.size``, metadata or buffer space not available within ``max.block.ms``, a closed producer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from spark_kafkalog.client.accumulator import RecordAccumulator
from spark_kafkalog.client.client import KafkaClient
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import (
    ConfigError,
    KafkaClientError,
    KafkaTimeoutError,
    ProducerClosedError,
    RecordTooLargeError,
)
from spark_kafkalog.client.metadata import TopicInfo
from spark_kafkalog.client.partitioner import DefaultPartitioner, UniformStickyPartitioner, make_partitioner
from spark_kafkalog.client.producer_batch import (
    _RECORD_OVERHEAD,
    DeliveryCallback,
    RecordFuture,
    estimate_record_size,
)
from spark_kafkalog.client.sender import Sender
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = ["Producer"]

_monotonic = time.monotonic
_time = time.time

try:  # Kafka's default partition of one key, compiled (see records.murmur2 for the reference)
    from spark_kafkalog._kernels import key_partition as _key_partition  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # no compiler at install time, or a build from before this kernel
    from spark_kafkalog.records.murmur2 import default_partition as _key_partition


class Producer:
    """``Producer("host:9092", acks="all", linger_ms=5)``; use as a context manager or call ``close``."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(bootstrap_servers, (Mapping, ClientConfig)):
            if config is not None:
                raise ConfigError("pass the settings either as the first argument or as config=, not both")
            config, bootstrap_servers = bootstrap_servers, None
        cfg = ClientConfig.create(config, **kwargs)
        if bootstrap_servers is not None:
            cfg = cfg.with_overrides(bootstrap_servers=bootstrap_servers)
        self.config = cfg
        self.idempotent = cfg.idempotence_enabled()
        self._client = KafkaClient(cfg, _producer=True)
        self._accumulator = RecordAccumulator(
            batch_size=cfg.batch_size,
            linger_ms=cfg.linger_ms,
            compression=cfg.compression_type,
            buffer_memory=cfg.buffer_memory,
        )
        self._partition, self._record_appended = make_partitioner(
            cfg.partitioner, batch_size=cfg.batch_size, ignore_keys=cfg.partitioner_ignore_keys
        )
        partitioner = getattr(self._partition, "__self__", None)
        # Kafka's built-in partitioners learn only of the records they placed stickily (as Java's
        # BuiltInPartitioner); a plugged-in partitioner's hook hears of every record.
        self._builtin_partitioner = type(partitioner) in (DefaultPartitioner, UniformStickyPartitioner)
        self._keyed_murmur2 = type(partitioner) is DefaultPartitioner and not partitioner.ignore_keys
        self._serialize_key = cfg.key_serializer_fn()
        self._serialize_value = cfg.value_serializer_fn()
        self._raw_keys = cfg.key_serializer is None  # bytes and None pass as they are
        self._raw_values = cfg.value_serializer is None
        self._topics: dict[str, tuple[TopicInfo | None, float, int, list[int], list[TopicPartition]]] = {}
        self._peek = self._client.metadata.peek
        self._max_block = cfg.max_block_ms / 1000.0
        self._max_request_size = cfg.max_request_size
        self._batch_size = self._accumulator.batch_size
        self._append_lock = self._accumulator.lock
        self._queues = self._accumulator.queues
        self._close_lock = threading.Lock()
        self._closed = False
        self._sender = Sender(self._client, self._accumulator, cfg, idempotent=self.idempotent)
        self._sender.start()

    # sending -----------------------------------------------------------------------------------
    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        *,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> RecordFuture:
        """Queue one record; returns a future of its ``RecordMetadata`` (see the module docstring).

        The common case (bytes or ``None`` key and value under the default serializers, the default
        partitioner, a record that fits the partition's open batch) takes no call into the accumulator:
        the record tuple is appended to the open batch under the accumulator's lock and encoded with
        the whole batch when the sender drains it.
        """
        if self._closed or self._sender.fatal_error is not None:
            self._raise_unusable(topic)
        state = self._topics.get(topic)
        if state is None or state[0] is not self._peek(topic) or _monotonic() >= state[1]:
            state = self._topic_state(topic)
        _, _, num_partitions, available, tps = state
        if self._raw_keys and (key is None or type(key) is bytes):
            key_bytes = key
        else:
            key_bytes = self._serialize_key(key)
        if self._raw_values and (value is None or type(value) is bytes):
            value_bytes = value
        else:
            value_bytes = self._serialize_value(value)
        header_list = _check_headers(headers) if headers else ()
        sticky = False
        if partition is None:
            if key_bytes is not None and self._keyed_murmur2:
                partition = _key_partition(key_bytes, num_partitions)
            else:
                partition = self._partition(topic, key_bytes, value_bytes, num_partitions, available)
                if type(partition) is not int or not 0 <= partition < num_partitions:
                    raise KafkaClientError(
                        f"partitioner returned {partition!r} for topic {topic} with {num_partitions} partitions",
                        retriable=False,
                        topic=topic,
                    )
                sticky = True
        elif type(partition) is not int or not 0 <= partition < num_partitions:
            raise KafkaClientError(
                f"partition {partition!r} of topic {topic} does not exist (the topic has {num_partitions} partitions)",
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                retriable=False,
                topic=topic,
                partition=partition if isinstance(partition, int) else None,
            )
        size = _RECORD_OVERHEAD
        if key_bytes is not None:
            size += len(key_bytes)
        if value_bytes is not None:
            size += len(value_bytes)
        if header_list:
            size = estimate_record_size(key_bytes, value_bytes, header_list)
        if size > self._max_request_size:
            raise RecordTooLargeError(
                f"record of about {size} bytes for {topic}-{partition} exceeds max.request.size "
                f"({self.config.max_request_size})",
                topic=topic,
                partition=partition,
            )
        if timestamp_ms is None:
            timestamp_ms = int(_time() * 1000)
        elif type(timestamp_ms) is not int or timestamp_ms < 0:
            raise ValueError(f"timestamp_ms must be a non-negative int (milliseconds), got {timestamp_ms!r}")
        tp = tps[partition]
        future = None
        wake = False
        with self._append_lock:  # the accumulator's lock: see RecordAccumulator
            queue = self._queues.get(tp)
            if queue:
                batch = queue[-1]
                if batch.appendable:
                    estimated = batch.estimated_size + size
                    if estimated <= self._batch_size:
                        records = batch.records
                        index = len(records)
                        records.append((timestamp_ms, key_bytes, value_bytes, header_list))
                        batch.estimated_size = estimated
                        if on_delivery is not None:
                            batch.callbacks.append((index, timestamp_ms, on_delivery))
                        if estimated >= self._batch_size:
                            batch.full = True
                            batch.appendable = False
                            wake = True
                        future = RecordFuture((batch, index, timestamp_ms))
        if future is None:
            result = self._accumulator.append(
                tp,
                timestamp_ms,
                key_bytes,
                value_bytes,
                header_list,
                size,
                on_delivery,
                max_block=self._max_block,
            )
            future = result.future
            wake = result.batch_full or result.new_batch
        if self._record_appended is not None and (sticky or not self._builtin_partitioner):
            self._record_appended(topic, partition, size, num_partitions, available)
        if wake:
            self._sender.wakeup()
        return future

    def _raise_unusable(self, topic: str) -> None:
        if self._closed:
            raise ProducerClosedError(f"cannot send to {topic}: the producer is closed")
        error = self._sender.fatal_error
        raise KafkaClientError(f"the producer failed: {error}", retriable=False) from error

    def _topic_state(self, topic: str) -> tuple[TopicInfo | None, float, int, list[int], list[TopicPartition]]:
        """``(metadata entry, expiry, partition count, partitions with a leader, TopicPartition by index)``;
        ``send`` reuses it while the metadata cache holds the same entry and it has not expired."""
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic must be a non-empty string, got {topic!r}")
        info = self._client.topic_info(topic, timeout_ms=self.config.max_block_ms)
        available = sorted(p for p, meta in info.partitions.items() if meta.leader >= 0)
        expires = info.fetched_at + self._client.metadata.max_age
        count = len(info.partitions)
        state = (info, expires, count, available, [TopicPartition(topic, p) for p in range(count)])
        self._topics[topic] = state
        return state

    def partitions_for(self, topic: str) -> list[int]:
        return self._client.partitions_for(topic)

    # flushing and closing ----------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> None:
        """Send every queued record now and wait until each is acknowledged or failed.

        Delivery errors are reported through the futures and callbacks, not raised here; raises
        ``KafkaTimeoutError`` when records are still pending after ``timeout`` seconds.
        """
        self._accumulator.begin_flush()
        try:
            self._sender.wakeup()
            deadline = None if timeout is None else time.monotonic() + timeout
            for batch in self._accumulator.incomplete():
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not batch.done.wait(remaining):
                    pending = sum(b.record_count for b in self._accumulator.incomplete())
                    raise KafkaTimeoutError(
                        f"flush timed out after {timeout}s with {pending} records not yet acknowledged"
                    )
        finally:
            self._accumulator.end_flush()

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (waiting up to ``timeout`` seconds, forever when ``None``), then stop.

        Records still pending after ``timeout`` fail with ``ProducerClosedError``. Idempotent.
        """
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._sender.initiate_close()
        self._sender.join(timeout)
        if self._sender.is_alive():
            self._sender.force_close()
            self._sender.join()
        self._client.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stats(self) -> dict[str, Any]:
        return {"produce_requests": self._sender.requests_sent, **self._client.stats}

    # whole batches -----------------------------------------------------------------------------
    def send_batch(
        self,
        topic: str,
        values: Any,
        keys: Any = None,
        *,
        partition: Any = None,
        timestamps: Any = None,
        headers: Any = None,
        on_delivery: Any = None,
        batch_bytes: int | None = None,
    ) -> Any:
        """Queue many records at once, encoded as whole record batches (``client.batch_producer``).

        ``values``/``keys``: Arrow binary or string arrays, or sequences of bytes/str/None (keys ``None``:
        no keys); ``partition``: one partition, a per-row column (null: the partitioner picks) or ``None``;
        ``timestamps``: ms since the epoch per row (int64 or Arrow timestamp array), one int, or ``None``
        (now); ``headers``: per-row lists of ``(key, value)`` or an Arrow ``list<struct<key, value>>``;
        ``on_delivery(BatchMetadata | None, error | None)`` runs once per batch. Returns a
        ``BatchSendResult`` (``result()`` waits for every batch; ``partitions`` per row).
        """
        from spark_kafkalog.client.batch_producer import send_batch

        return send_batch(
            self,
            topic,
            values,
            keys,
            partition=partition,
            timestamps=timestamps,
            headers=headers,
            on_delivery=on_delivery,
            batch_bytes=batch_bytes,
        )


def _check_headers(headers: Sequence[tuple[str, Any]] | None) -> list[tuple[str, bytes | None]]:
    if not headers:
        return []
    out = []
    for i, item in enumerate(headers):
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError(f"header {i} must be a (str, bytes | None) pair, got {item!r}") from None
        if not isinstance(key, str):
            raise TypeError(f"header {i} key must be a str, got {type(key).__name__}")
        if value is not None and not isinstance(value, bytes):
            if isinstance(value, (bytearray, memoryview)):
                value = bytes(value)
            elif isinstance(value, str):
                value = value.encode("utf-8")
            else:
                raise TypeError(f"header {key!r} value must be bytes or None, got {type(value).__name__}")
        out.append((key, value))
    return out
