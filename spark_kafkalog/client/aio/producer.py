"""``AIOProducer``: the asyncio producer, with the blocking ``Producer``'s settings and semantics.

    async with AIOProducer("localhost:9092", linger_ms=5, acks="all") as producer:
        future = await producer.send("events", b"value", key=b"key")   # queued
        metadata = await future                                         # acknowledged: RecordMetadata

``await send(...)`` returns once the record is queued, with an ``asyncio.Future[RecordMetadata]`` completed
on the producer's loop when its batch is acknowledged or failed (aiokafka's shape); ``send_and_wait`` awaits
both. Everything between is the blocking producer's: serializers (``key.serializer``/``value.serializer``,
``Serializer`` objects included), the partitioner (murmur2 of the key, else sticky: records land where the
blocking ``Producer`` puts them), the per-record append (``send_path.make_send``, compiled when
``spark_kafkalog._kernels`` is built) into the ``RecordAccumulator``'s ``ProducerBatch``es, ``batch.size``,
``linger.ms``, ``compression.type``, ``acks``, retries with backoff within ``delivery.timeout.ms``,
idempotence (on by default) and ``max.in.flight.requests.per.connection``. The sender is an asyncio task
(``aio.sender.AsyncSender``) sharing ``SenderCore``'s decisions with the blocking sender thread.

Waiting never blocks the loop: a topic's metadata is fetched (``await``) before its first record, and when
``buffer.memory`` is full ``send`` awaits completed batches (up to ``max.block.ms``, then
``KafkaTimeoutError``). A ``send`` that opens or fills a batch yields to the loop (at most once a
millisecond), so the sender sends while a tight ``send`` loop goes on.

Errors raised by ``send`` itself: a serializer failure, an unknown topic (with auto-creation off) or
partition, a record larger than ``max.request.size``, buffer space not available within ``max.block.ms``, a
closed or failed producer, a transactional producer outside a transaction. Delivery errors complete the
record's future (marked retrieved: a future nobody awaits does not log them).

Transactions (``transactional.id``): ``init_transactions``, ``begin_transaction``,
``send_offsets_to_transaction``, ``commit_transaction``, ``abort_transaction`` keep the blocking producer's
state machine, requests and retries (``producer.transactions.TransactionManager``'s operations, transactions
v2 when the coordinator offers it), run natively on the loop over the producer's ``AsyncKafkaClient``
(``aio.transactions.AsyncTransactionManager``: no thread, no second client); ``begin_transaction`` is
synchronous and reads the coordinator's features from its open connection when there is one.

Concurrency: one event loop - the one ``start`` runs on; no method is thread-safe.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.aio.sender import AsyncSender
from spark_kafkalog.client.aio.transactions import AsyncTransactionManager, new_async_transactions
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import client_config
from spark_kafkalog.client.errors import (
    KafkaClientError,
    KafkaTimeoutError,
    ProducerClosedError,
    error_for_code,
)
from spark_kafkalog.client.metadata import TopicInfo
from spark_kafkalog.client.producer.producer_batch import ProducerBatch
from spark_kafkalog.client.producer.producer_parts import ProducerParts
from spark_kafkalog.client.producer.producer_setup import (
    ProducerCommon,
    new_accumulator,
    new_partitioner,
    transaction_offsets,
)
from spark_kafkalog.client.producer.send_path import make_send
from spark_kafkalog.client.producer.transactions import TransactionError
from spark_kafkalog.client.types import RecordMetadata
from spark_kafkalog.protocol import ErrorCode

__all__ = ["AIOProducer"]

_YIELD_INTERVAL_S = 0.001
_Future = asyncio.Future  # loop.create_future() is a Python-level call around it: this runs per record


class _MetadataNeeded(Exception):
    """Raised by ``_SendParts._topic_info`` inside the append: ``AIOProducer.send`` awaits the topic's
    metadata and appends again."""


class _SendParts:
    """What ``send_path.make_send`` reads of a producer (``ProducerParts``), for the async producer: its
    ``max.block.ms`` is 0 (the append never waits: ``AIOProducer.send`` awaits buffer space instead), and its
    topic lookup answers from the metadata cache or raises ``_MetadataNeeded`` (``send`` awaits the metadata,
    then appends again with ``fresh`` naming the topic: the cache's answer is then taken as it is)."""

    def __init__(self, producer: AIOProducer) -> None:
        self._producer = producer
        self.config = producer.config.with_overrides(max_block_ms=0)
        self._client = producer._client
        self._accumulator = producer._accumulator
        self._sender = producer._sender
        self._partition = producer._partition
        self._record_appended = producer._record_appended
        self._topics = producer._topics
        self._compression_ratios: dict[str, float] = {}
        self._closed = False  # read per record (the compiled send too): a plain attribute, set by close()
        self.fresh: str | None = None

    def _topic_info(self, topic: str) -> TopicInfo:
        if not isinstance(topic, str) or not topic:
            raise ValueError(f"topic must be a non-empty string, got {topic!r}")
        metadata = self._client.metadata
        if topic != self.fresh and metadata.needs_refresh(topic):
            raise _MetadataNeeded(topic)
        info = metadata.peek(topic)
        if info is None or info.error_code:  # fetched just before: gone again meanwhile
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if info is None else info.error_code
            raise error_for_code(code, "Metadata", topic=topic)
        return info

    def _raise_unusable(self, topic: str) -> None:
        self._producer._raise_unusable(topic)


class AIOProducer(ProducerCommon):
    """``AIOProducer("host:9092", acks="all", linger_ms=5)``; ``await start()`` (or ``async with``), then
    ``await send(...)``; ``await close()``. Settings as ``Producer``'s (see the module docstring)."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **settings: Any,
    ) -> None:
        cfg = client_config(bootstrap_servers, config, **settings)
        self.config = cfg
        self.idempotent = cfg.idempotence_enabled()
        self._client = AsyncKafkaClient(cfg, _producer=True)
        self._accumulator = new_accumulator(cfg)
        self._partition, self._record_appended = new_partitioner(cfg)
        self._topics: dict[str, list[Any]] = {}  # topic -> its state for send (send_path's TOPIC_* layout)
        self._closed = False
        self._started = False
        self._sender = AsyncSender(self._client, self._accumulator, cfg, idempotent=self.idempotent)
        self._sender.on_batch_done = self._batch_done
        # batch -> [its completion future, then (record future, RecordFuture) pairs flattened]
        self._pending: dict[ProducerBatch, list[Any]] = {}
        self._memory_waiters: list[asyncio.Future[None]] = []  # sends waiting for buffer.memory
        self._next_yield = 0.0  # monotonic s: send yields to the loop on a new or full batch from then on
        self._loop: asyncio.AbstractEventLoop | None = None
        self._parts = _SendParts(self)
        self._append = make_send(cast(ProducerParts, self._parts))
        self._transactions: AsyncTransactionManager | None = new_async_transactions(cfg, self._sender, self._client)

    # lifecycle ---------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect (learning the cluster's brokers) and start the sender task on the running loop."""
        if self._closed:
            raise ProducerClosedError("the producer is closed")
        if self._started:
            return
        self._loop = asyncio.get_running_loop()
        await self._client.start()
        self._sender.start()
        self._started = True

    async def __aenter__(self) -> AIOProducer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (waiting up to ``timeout`` seconds, forever when ``None``), then stop:
        records still pending fail with ``ProducerClosedError``. Idempotent."""
        if self._closed:
            return
        self._closed = self._parts._closed = True
        try:
            await self._sender.close(timeout)
        finally:
            await self._client.close()

    @property
    def stats(self) -> dict[str, Any]:
        return {"produce_requests": self._sender.requests_sent, **self._client.stats}

    # sending -----------------------------------------------------------------------------------
    async def send(
        self,
        topic: str,
        value: Any = None,
        *,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
    ) -> asyncio.Future[RecordMetadata]:
        """Queue one record; returns the future of its ``RecordMetadata`` (see the module docstring)."""
        if self._transactions is not None:
            self._transactions.check_can_send()
        loop = self._loop
        if loop is None:
            if self._closed:
                self._raise_unusable(topic)
            raise KafkaClientError("AIOProducer.send before start(): await producer.start() or use 'async with'")
        accumulator = self._accumulator
        if accumulator._used + accumulator.batch_size > accumulator.buffer_memory and accumulator._used:
            await self._wait_for_memory(topic)
        try:
            if partition is None and timestamp_ms is None and headers is None:
                record = self._append(topic, value, key)  # the compiled send's case
            else:
                record = self._append(
                    topic, value, key, partition=partition, timestamp_ms=timestamp_ms, headers=headers
                )
        except (_MetadataNeeded, KafkaTimeoutError):  # KafkaTimeoutError: buffer.memory (the append never waits)
            record = await self._append_slowly(topic, value, key, partition, timestamp_ms, headers)
        future: asyncio.Future[RecordMetadata] = _Future(loop=loop)
        batch = record[0]
        entry = self._pending.get(batch)
        if entry is None:
            entry = self._pending[batch] = [_Future(loop=loop)]
        entry.append(future)
        entry.append(record)
        sender = self._sender
        if sender.woken:  # the record opened or filled a batch: let the sender run (at most once a millisecond)
            sender.woken = False
            now = time.monotonic()
            if now >= self._next_yield:
                self._next_yield = now + _YIELD_INTERVAL_S
                await asyncio.sleep(0)
        return future

    async def send_and_wait(
        self,
        topic: str,
        value: Any = None,
        *,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
    ) -> RecordMetadata:
        """``send``, then await the record's acknowledgement; raises its delivery error."""
        future = await self.send(topic, value, key=key, partition=partition, timestamp_ms=timestamp_ms, headers=headers)
        return await future

    async def _wait_for_memory(self, topic: str) -> None:
        """Until a completed batch frees ``buffer.memory`` for another batch (``max.block.ms`` at most)."""
        accumulator = self._accumulator
        deadline = time.monotonic() + self.config.max_block_ms / 1000.0
        while accumulator._used + accumulator.batch_size > accumulator.buffer_memory and accumulator._used:
            await self._batch_completion(topic, deadline)

    async def _batch_completion(self, topic: str, deadline: float) -> None:
        """Wait for the next completed batch (every waiting ``send`` is woken by it); ``KafkaTimeoutError``
        once ``deadline`` (monotonic s) has passed: ``buffer.memory`` stayed full for ``max.block.ms``."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            buffer_memory = self._accumulator.buffer_memory
            raise KafkaTimeoutError(
                f"buffer.memory ({buffer_memory} bytes) stayed full for max.block.ms "
                f"({self.config.max_block_ms} ms); record for {topic} not sent",
                topic=topic,
            )
        waiter: asyncio.Future[None] = _Future(loop=self._loop)
        self._memory_waiters.append(waiter)
        self._sender.wakeup()
        try:
            await asyncio.wait([waiter], timeout=remaining)
        finally:
            if not waiter.done():
                self._memory_waiters.remove(waiter)
        if self._closed or self._sender.fatal_error is not None:
            self._raise_unusable(topic)

    async def _append_slowly(
        self, topic: str, value: Any, key: Any, partition: Any, timestamp_ms: Any, headers: Any
    ) -> Any:
        """The append of a record that needs its topic's metadata first (awaited, up to ``max.block.ms`` for a
        topic being created; an unknown topic raises), or a record larger than ``batch.size`` that did not fit
        in ``buffer.memory`` (retried as batches complete, up to ``max.block.ms``)."""
        deadline = time.monotonic() + self.config.max_block_ms / 1000.0
        parts = self._parts
        while True:
            try:
                try:
                    return self._append(
                        topic, value, key, partition=partition, timestamp_ms=timestamp_ms, headers=headers
                    )
                finally:
                    parts.fresh = None
            except _MetadataNeeded:
                await self._client.topic_info(topic, timeout_ms=self.config.max_block_ms)
                parts.fresh = topic
            except KafkaTimeoutError:  # buffer.memory: the append never waits
                await self._batch_completion(topic, deadline)

    def _batch_done(self, batch: ProducerBatch) -> None:
        """The sender completed ``batch``: complete its records' futures (on the loop, in one pass)."""
        if self._memory_waiters:
            for waiter in self._memory_waiters:
                if not waiter.done():
                    waiter.set_result(None)
            self._memory_waiters.clear()
        entry = self._pending.pop(batch, None)
        if entry is None:
            return
        records = iter(entry)
        done = next(records)
        done.set_result(None)
        error = batch.error
        if error is None:
            topic, partition = batch.tp
            base = batch.base_offset
            append_time = batch.log_append_time
            new = tuple.__new__  # RecordMetadata without its Python-level __new__: this runs per record
            for future, (_, delta, timestamp) in zip(records, records):
                if not future.done():
                    future.set_result(
                        new(
                            RecordMetadata,
                            (
                                topic,
                                partition,
                                base + delta if base >= 0 else -1,
                                append_time if append_time >= 0 else timestamp,
                            ),
                        )
                    )
        else:
            for future, _ in zip(records, records):
                if not future.done():
                    future.set_exception(error)
                    future.exception()  # retrieved: an unawaited record's failure is not logged at exit

    async def partitions_for(self, topic: str) -> list[int]:
        """Partition ids of ``topic``, sorted (metadata fetched when missing or stale)."""
        return sorted((await self._client.topic_info(topic)).partitions)

    # flushing ----------------------------------------------------------------------------------
    async def flush(self, timeout: float | None = None) -> None:
        """Send every queued record now and wait until each is acknowledged or failed.

        Delivery errors are reported through the futures, not raised here; raises ``KafkaTimeoutError``
        when records are still pending after ``timeout`` seconds.
        """
        self._accumulator.begin_flush()
        try:
            self._sender.wakeup()
            waiters = [entry[0] for entry in self._pending.values()]
            if not waiters:
                return
            _, pending = await asyncio.wait(waiters, timeout=timeout)
            if pending:
                count = sum((len(entry) - 1) // 2 for entry in self._pending.values())
                raise KafkaTimeoutError(f"flush timed out after {timeout}s with {count} records not yet acknowledged")
        finally:
            self._accumulator.end_flush()

    # transactions ------------------------------------------------------------------------------
    async def init_transactions(self, timeout: float | None = None) -> None:
        """Register ``transactional.id`` with its coordinator (InitProducerId): fences older producers of the
        id and aborts their open transaction. Call once, after ``start``, before ``begin_transaction``."""
        txn = self._atxn()
        await txn.init_async(self._timeout(timeout))
        self._sender.wakeup()

    def begin_transaction(self) -> None:
        """Start a transaction: records sent from now on are committed or aborted together."""
        self._txn().begin()

    async def send_offsets_to_transaction(
        self, offsets: Mapping[Any, Any], group_metadata: Any, timeout: float | None = None
    ) -> None:
        """Commit consumer offsets with the transaction (``Producer.send_offsets_to_transaction``): ``offsets``
        maps ``TopicPartition`` to the next offset to read; ``group_metadata`` is the group id or a
        consumer's ``group_metadata()``."""
        txn = self._atxn()
        tps, group_id, metadata = transaction_offsets(offsets, group_metadata)
        await txn.send_offsets_async(tps, group_id, metadata, self._timeout(timeout))

    async def commit_transaction(self, timeout: float | None = None) -> None:
        """Flush, then commit (EndTxn). Raises ``TransactionError`` with ``abortable`` set when a record of
        the transaction failed (call ``abort_transaction``), ``ProducerFencedError`` when another producer
        took over the transactional id."""
        txn = self._atxn()
        txn.check_can_send("commit_transaction")
        seconds = self._timeout(timeout)
        await self.flush(seconds)
        await txn.end_async(True, seconds)

    async def abort_transaction(self, timeout: float | None = None) -> None:
        """Abort: records not yet sent fail with ``TransactionError``; sent ones are discarded by
        read_committed consumers. After an abortable error the epoch is bumped (KIP-360)."""
        txn = self._atxn()
        deadline = time.monotonic() + self._timeout(timeout)
        aborted = TransactionError("the transaction was aborted before this record was sent")
        for batch in self._accumulator.take_all():
            self._sender.fail_unsent(batch, aborted)
            self._batch_done(batch)
        waiters = [entry[0] for entry in self._pending.values()]  # in flight: wait for their answers
        if waiters:
            await asyncio.wait(waiters, timeout=max(0.0, deadline - time.monotonic()))
        await txn.end_async(False, max(0.0, deadline - time.monotonic()))
        idem = self._sender.idempotence
        if idem is not None and idem.needs_reset:
            await txn.init_async(max(0.1, deadline - time.monotonic()))
            self._sender.wakeup()

    def _atxn(self) -> AsyncTransactionManager:
        """``_txn()`` as the asyncio manager this producer holds."""
        return cast(AsyncTransactionManager, self._txn())
