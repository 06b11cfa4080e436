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
from spark_kafkalog.client.partitioner import make_partitioner
from spark_kafkalog.client.producer_batch import DeliveryCallback, RecordFuture, estimate_record_size
from spark_kafkalog.client.sender import Sender
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = ["Producer"]


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
        self._serialize_key = cfg.key_serializer_fn()
        self._serialize_value = cfg.value_serializer_fn()
        self._partitions: dict[str, tuple[TopicInfo, int, list[int], float]] = {}
        self._max_block = cfg.max_block_ms / 1000.0
        self._max_request_size = cfg.max_request_size
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
        """Queue one record; returns a future of its ``RecordMetadata`` (see the module docstring)."""
        if self._closed:
            raise ProducerClosedError(f"cannot send to {topic}: the producer is closed")
        if self._sender.fatal_error is not None:
            raise KafkaClientError(
                f"the producer failed: {self._sender.fatal_error}", retriable=False
            ) from self._sender.fatal_error
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic must be a non-empty string, got {topic!r}")
        key_bytes = self._serialize_key(key)
        value_bytes = self._serialize_value(value)
        header_list = _check_headers(headers)
        num_partitions, available = self._partition_info(topic)
        if partition is None:
            partition = self._partition(topic, key_bytes, value_bytes, num_partitions, available)
            if not isinstance(partition, int) or not 0 <= partition < num_partitions:
                raise KafkaClientError(
                    f"partitioner returned {partition!r} for topic {topic} with {num_partitions} partitions",
                    retriable=False,
                    topic=topic,
                )
        elif isinstance(partition, bool) or not isinstance(partition, int) or not 0 <= partition < num_partitions:
            raise KafkaClientError(
                f"partition {partition!r} of topic {topic} does not exist (the topic has {num_partitions} partitions)",
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                retriable=False,
                topic=topic,
                partition=partition if isinstance(partition, int) else None,
            )
        size = estimate_record_size(key_bytes, value_bytes, header_list)
        if size > self._max_request_size:
            raise RecordTooLargeError(
                f"record of about {size} bytes for {topic}-{partition} exceeds max.request.size "
                f"({self.config.max_request_size})",
                topic=topic,
                partition=partition,
            )
        if timestamp_ms is None:
            timestamp_ms = int(time.time() * 1000)
        elif isinstance(timestamp_ms, bool) or not isinstance(timestamp_ms, int) or timestamp_ms < 0:
            raise ValueError(f"timestamp_ms must be a non-negative int (milliseconds), got {timestamp_ms!r}")
        tp = TopicPartition(topic, partition)
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
        if self._record_appended is not None:
            self._record_appended(topic, partition, size, num_partitions, available)
        if result.batch_full or result.new_batch:
            self._sender.wakeup()
        return result.future

    def _partition_info(self, topic: str) -> tuple[int, list[int]]:
        """Partition count and partitions with a leader; cached while the metadata entry is unchanged."""
        info = self._client.metadata.peek(topic)
        cached = self._partitions.get(topic)
        if cached is not None and info is cached[0] and time.monotonic() < cached[3]:
            return cached[1], cached[2]
        info = self._client.topic_info(topic, timeout_ms=self.config.max_block_ms)
        available = sorted(p for p, meta in info.partitions.items() if meta.leader >= 0)
        expires = info.fetched_at + self._client.metadata.max_age
        self._partitions[topic] = (info, len(info.partitions), available, expires)
        return len(info.partitions), available

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
