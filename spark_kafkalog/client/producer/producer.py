"""``Producer``: thread-safe ``send`` into per-partition batches, delivered by a background sender thread.

``send`` serialises key and value (``key.serializer``/``value.serializer``; by default bytes-like values
pass as they are and ``str`` is UTF-8 encoded), picks the partition (explicit, else the partitioner, see
``partitioner``), appends the record to its partition's open batch and returns a future of its
``RecordMetadata``. Batches are sent when full (``batch.size``), after ``linger.ms``, or on
``flush``/``close``; compressed with ``compression.type``; acknowledged per ``acks``; retried with backoff
(``retries``, ``retry.backoff.ms``, bounded by ``delivery.timeout.ms``); idempotent by default
(``enable.idempotence``; see ``sender`` and ``idempotence`` for ordering and duplicates).

The per-record path is ``send_path``'s (a closure; the record is appended as a tuple to its partition's
open batch, compiled and lock-free when ``spark_kafkalog._kernels`` is built) and records are encoded a
whole batch at a time when the sender sends it (``records.build_batch``). Placement follows Java's
built-in partitioner: murmur2 of the key, else sticky; the sticky partition moves after ``batch.size``
bytes of the records it placed itself (keyed and explicit-partition records do not count).

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

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import ConfigError, KafkaTimeoutError
from spark_kafkalog.client.metadata import TopicInfo
from spark_kafkalog.client.producer.producer_batch import DeliveryCallback, RecordFuture
from spark_kafkalog.client.producer.producer_setup import (
    ProducerCommon,
    new_accumulator,
    new_partitioner,
    new_transactions,
    transaction_offsets,
)
from spark_kafkalog.client.producer.send_path import make_send
from spark_kafkalog.client.producer.sender import Sender
from spark_kafkalog.client.producer.transactions import TransactionError

__all__ = ["Producer"]


class Producer(ProducerCommon):
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
        self._accumulator = new_accumulator(cfg)
        self._partition, self._record_appended = new_partitioner(cfg)
        # topic -> its state for send (a list laid out as send_path's TOPIC_* indices)
        self._topics: dict[str, list[Any]] = {}
        # topic -> estimated compressed / record bytes of send_batch's batches (client.producer.batch_producer)
        self._compression_ratios: dict[str, float] = {}
        self._close_lock = threading.Lock()
        self._closed = False
        self._sender = Sender(self._client, self._accumulator, cfg, idempotent=self.idempotent)
        self._send = make_send(self)
        self._transactions = new_transactions(cfg, self._sender)
        if self._transactions is None and type(self).send is Producer.send:
            self.send = self._send  # type: ignore[method-assign]  # one call per record instead of two
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

        The per-record path is ``send_path.make_send``'s closure (an instance's ``send`` is that function,
        unless the producer is transactional: records then need an open transaction).
        """
        if self._transactions is not None:
            self._transactions.check_can_send()
        return self._send(
            topic,
            value,
            key,
            partition=partition,
            timestamp_ms=timestamp_ms,
            headers=headers,
            on_delivery=on_delivery,
        )

    def _topic_info(self, topic: str) -> TopicInfo:
        """The topic's metadata (fetched when missing or stale, waiting up to ``max.block.ms``)."""
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic must be a non-empty string, got {topic!r}")
        return self._client.topic_info(topic, timeout_ms=self.config.max_block_ms)

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
        if self._transactions is not None:
            self._transactions.client.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stats(self) -> dict[str, Any]:
        return {"produce_requests": self._sender.requests_sent, **self._client.stats}

    # transactions ------------------------------------------------------------------------------
    def init_transactions(self, timeout: float | None = None) -> None:
        """Register ``transactional.id`` with its transaction coordinator (InitProducerId): fences every
        older producer of the id and aborts its open transaction. Call once before ``begin_transaction``;
        waits up to ``timeout`` seconds (``max.block.ms`` by default)."""
        txn = self._txn()
        txn.init(self._timeout(timeout))
        self._sender.wakeup()

    @property
    def transaction_identity(self) -> tuple[str, int, int]:
        """``(transactional id, producer id, epoch)`` after ``init_transactions``: what another process needs
        to end this producer's open transaction (``TransactionManager.resume``)."""
        txn = self._txn()
        idem = txn.idempotence
        return txn.transactional_id, idem.producer_id, idem.producer_epoch

    def begin_transaction(self) -> None:
        """Start a transaction: records sent from now on are committed or aborted together."""
        self._txn().begin()

    def send_offsets_to_transaction(
        self, offsets: Mapping[Any, Any], group_metadata: Any, timeout: float | None = None
    ) -> None:
        """Commit consumer offsets as part of the transaction (consume-transform-produce): ``offsets`` maps
        ``TopicPartition`` to the next offset to read (an int, or an object with ``offset`` and ``metadata``);
        ``group_metadata`` is the group id or a consumer's ``group_metadata()``. The group sees them when the
        transaction commits."""
        txn = self._txn()
        tps, group_id, metadata = transaction_offsets(offsets, group_metadata)
        txn.send_offsets(tps, group_id, metadata, self._timeout(timeout))

    def commit_transaction(self, timeout: float | None = None) -> None:
        """Flush, then commit the transaction (EndTxn). Raises ``TransactionError`` with ``abortable`` set when
        a record of the transaction failed (call ``abort_transaction``), ``ProducerFencedError`` when another
        producer took over the transactional id (close this one)."""
        txn = self._txn()
        txn.check_can_send("commit_transaction")  # raises if not in a transaction or already failed
        seconds = self._timeout(timeout)
        self.flush(seconds)
        txn.end(True, seconds)

    def abort_transaction(self, timeout: float | None = None) -> None:
        """Abort the transaction: records not yet sent fail with ``TransactionError``, sent ones are discarded
        by read_committed consumers (EndTxn writes abort markers). After an abortable error the producer id's
        epoch is bumped (KIP-360) so the producer can go on."""
        txn = self._txn()
        seconds = self._timeout(timeout)
        aborted = TransactionError("the transaction was aborted before this record was sent")
        for batch in self._accumulator.take_all():
            self._sender.fail_unsent(batch, aborted)
        deadline = time.monotonic() + seconds
        for batch in self._accumulator.incomplete():  # in flight: wait for their answers
            batch.done.wait(max(0.0, deadline - time.monotonic()))
        txn.end(False, max(0.0, deadline - time.monotonic()))
        if self._sender.idempotence is not None and self._sender.idempotence.needs_reset:
            txn.init(max(0.1, deadline - time.monotonic()))
            self._sender.wakeup()

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
        """Queue many records at once, encoded as whole record batches (``client.producer.batch_producer``).

        ``values``/``keys``: Arrow binary or string arrays, or sequences of bytes/str/None (keys ``None``:
        no keys); ``partition``: one partition, a per-row column (null: the partitioner picks) or ``None``;
        ``timestamps``: ms since the epoch per row (int64 or Arrow timestamp array), one int, or ``None``
        (now); ``headers``: per-row lists of ``(key, value)`` or an Arrow ``list<struct<key, value>>``;
        ``on_delivery(BatchMetadata | None, error | None)`` runs once per batch. Returns a
        ``BatchSendResult`` (``result()`` waits for every batch; ``partitions`` per row).
        """
        from spark_kafkalog.client.producer.batch_producer import send_batch

        if self._transactions is not None:
            self._transactions.check_can_send()

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
