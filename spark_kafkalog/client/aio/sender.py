"""``AsyncSender``: the asyncio producer's sender, a task on the producer's event loop.

The same loop as the blocking ``producer.sender.Sender``, with the same decisions (``SenderCore``: muting,
Produce requests, retries with backoff, ``delivery.timeout.ms``, idempotent sequences and producer-id
resets, completion), but its I/O is asyncio's:

1. an idempotent producer first obtains a producer id (InitProducerId through the ``AsyncKafkaClient``,
   retried with backoff);
2. ``accumulator.ready`` names the brokers leading sendable partitions; partitions without a known leader
   start a (rate-limited) metadata refresh in the background;
3. each such broker gets Produce requests while it has fewer than ``max.in.flight.requests.per.connection``
   in flight, each request its own task on the broker's shared ``AsyncKafkaConnection`` (connections are
   opened in the background; a failed attempt is retried after ``retry.backoff.ms``);
4. queued batches older than ``delivery.timeout.ms`` fail with ``KafkaTimeoutError``;
5. the loop then waits for a wake-up (``wakeup``: a full or new batch, a flush, a finished request) or the
   next linger deadline.

A request unanswered within ``request.timeout.ms`` closes its connection (``AsyncKafkaConnection``); every
request in flight on it fails and its batches are retried. Transactional producers add partitions to the
transaction (AddPartitionsToTxn: ``AsyncTransactionManager.add_partitions_async``, a task on the loop) unless
transactions v2 adds them with Produce v12.

Concurrency: every method runs on the producer's event loop; ``on_batch_done`` (set by the producer) is
called there once per completed batch.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, cast

from spark_kafkalog.client.aio.transactions import AsyncTransactionManager
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import (
    ConfigError,
    KafkaAuthenticationError,
    KafkaClientError,
    KafkaSslError,
    NoCommonVersionError,
    ProducerClosedError,
)
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.producer_batch import ProducerBatch
from spark_kafkalog.client.producer.sender_core import PRODUCE_VERSION_WHY, SenderCore, init_producer_id_request
from spark_kafkalog.client.producer.transactions import TransactionManager
from spark_kafkalog.protocol import ApiKey

__all__ = ["AsyncSender"]

log = logging.getLogger("kafkalog.producer")

_PRODUCE = int(ApiKey.PRODUCE)
_INIT_PRODUCER_ID = int(ApiKey.INIT_PRODUCER_ID)
_FATAL_CONNECT_ERRORS = (KafkaAuthenticationError, KafkaSslError, ConfigError)


class AsyncSender(SenderCore):
    """See the module docstring. ``client`` is the producer's ``AsyncKafkaClient``."""

    def __init__(self, client: Any, accumulator: RecordAccumulator, config: ClientConfig, *, idempotent: bool) -> None:
        super().__init__(client.metadata, client.name_principal, accumulator, config, idempotent=idempotent)
        self.client = client
        self.on_batch_done: Callable[[ProducerBatch], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._waiter: asyncio.Future | None = None
        self._wake_pending = False
        self.woken = False
        self._running = True
        self._connections: dict[int, Any] = {}  # node -> AsyncKafkaConnection
        self._connecting: set[int] = set()
        self._connect_retry_at: dict[int, float] = {}
        self._node_in_flight: dict[int, int] = {}
        self._requests: set[asyncio.Task] = set()
        self._refreshing: asyncio.Task | None = None
        self._last_refresh = 0.0
        self._adding_partitions: asyncio.Task | None = None
        self._background: set[asyncio.Task] = set()

    # control -----------------------------------------------------------------------------------
    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._run(), name="kafkalog-aio-producer-sender")

    def wakeup(self) -> None:
        """Make the loop look at the accumulator again (cheap; called by ``send`` on a new or full batch).
        Sets ``woken``, which ``AIOProducer.send`` clears when it yields to the loop."""
        self.woken = True
        waiter = self._waiter
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
        else:
            self._wake_pending = True

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def close(self, timeout: float | None) -> None:
        """Deliver what is queued (within ``timeout`` seconds, forever when ``None``), then stop; records
        still pending fail with ``ProducerClosedError``."""
        self.accumulator.closing = True
        self._running = False
        self.wakeup()
        task = self._task
        if task is None:
            self._fail_everything(ProducerClosedError("producer closed before the record was delivered"))
            return
        done, _ = await asyncio.wait([task], timeout=timeout)
        if not done:
            self._force = True
            self.wakeup()
            await asyncio.wait([task])

    # loop --------------------------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            while self._running:
                await self._run_once()
            while not self._force and (self.accumulator.has_queued() or self._has_in_flight()):
                await self._run_once()
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # never die silently: fail every record
            log.exception("producer sender task failed")
            self.fatal_error = e
        finally:
            await self._shutdown()

    async def _shutdown(self) -> None:
        reason = self.fatal_error or ProducerClosedError("producer closed before the record was delivered")
        for task in (*self._requests, *self._background):
            task.cancel()
        pending = [t for t in (*self._requests, *self._background) if not t.done()]
        if pending:
            await asyncio.wait(pending)
        self._fail_everything(reason)

    def _fail_everything(self, reason: BaseException) -> None:
        for batch in self.accumulator.take_all():
            self._finish(batch, error=reason)
        for batch in self.accumulator.incomplete():
            self._finish(batch, error=reason)

    async def _run_once(self) -> None:
        now = time.monotonic()
        cfg = self.config
        backoff = cfg.retry_backoff_ms / 1000.0
        send_allowed = True
        idem = self.idempotence
        txn = self.transactions
        if idem is not None and not idem.has_producer_id:
            send_allowed = False
            if self._may_init_producer_id(now):
                await self._init_producer_id()
                send_allowed = idem.has_producer_id
                now = time.monotonic()
        if txn is not None and send_allowed:
            send_allowed = self._add_partitions_to_txn(txn)
        muted = self._muted()
        check = self.accumulator.ready(now, self._leader, muted)
        timeout = min(check.next_check, 1.0)
        if check.unknown_leaders:
            self._refresh_metadata(check.unknown_leaders, now)
            timeout = min(timeout, backoff)
        if not send_allowed and self.accumulator.has_queued():
            timeout = min(timeout, max(self._pid_retry_at - now, 0.01))
        if send_allowed and not self._force:
            max_in_flight = cfg.max_in_flight
            for node in check.ready_nodes:
                conn = self._connection(node, now)
                if conn is None:
                    timeout = min(timeout, backoff)
                    continue
                while self._node_in_flight.get(node, 0) < max_in_flight:
                    batches = self.accumulator.drain(node, self._leader, cfg.max_request_size, now, muted)
                    if not batches:
                        break
                    self._send_produce(node, conn, batches, now)
                    muted = self._muted()
        self._expire(now)
        if self._running or not self._force:
            await self._wait(max(timeout, 0.0))

    async def _wait(self, timeout: float) -> None:
        if self._wake_pending:
            self._wake_pending = False
            await asyncio.sleep(0)  # let send() and the request tasks run between rounds
            return
        loop = self._loop
        assert loop is not None
        waiter = self._waiter = loop.create_future()
        handle = loop.call_later(timeout, _wake, waiter)
        try:
            await waiter
        finally:
            handle.cancel()
            self._waiter = None
            self._wake_pending = False

    # transactions ------------------------------------------------------------------------------
    def _add_partitions_to_txn(self, txn: TransactionManager) -> bool:
        """Partitions with queued batches not yet in the transaction are added (muted until then) by
        AddPartitionsToTxn in a task; with transactions v2 the Produce adds them. False while an
        AddPartitionsToTxn runs."""
        if self._adding_partitions is not None:
            return False
        if txn.transactions_v2:  # Produce v12 adds them (SenderCore._produce_request)
            return True
        new = txn.not_added(self.accumulator.queued_partitions())
        if not new:
            return True
        self._adding_partitions = self._spawn(self._add_partitions(txn, new))
        return False

    async def _add_partitions(self, txn: TransactionManager, new: set[Any]) -> None:
        try:
            await cast(AsyncTransactionManager, txn).add_partitions_async(new, self.config.max_block_ms / 1000.0)
        except KafkaClientError as e:
            for batch in self.accumulator.take_partitions(new):
                self._finish(batch, error=e)
        finally:
            self._adding_partitions = None
            self.wakeup()

    # InitProducerId ----------------------------------------------------------------------------
    async def _init_producer_id(self) -> None:
        try:
            response = await self.client.send_request(None, _INIT_PRODUCER_ID, init_producer_id_request())
        except KafkaClientError as e:
            self._on_producer_id(None, e)
            return
        self._on_producer_id(response, None)

    # connections and metadata ------------------------------------------------------------------
    def _connection(self, node: int, now: float) -> Any:
        """The live connection to ``node``, or ``None`` while one is being opened (in the background) or
        the last attempt's backoff lasts."""
        conn = self._connections.get(node)
        if conn is not None:
            if not conn.closed:
                return conn
            del self._connections[node]
        if node in self._connecting or now < self._connect_retry_at.get(node, 0.0):
            return None
        self._connecting.add(node)
        self._spawn(self._connect(node))
        return None

    async def _connect(self, node: int) -> None:
        try:
            self._connections[node] = await self.client.connection(node)
        except _FATAL_CONNECT_ERRORS as e:
            self._fatal(e)  # wrong credentials or TLS settings: every record fails now, not at delivery.timeout.ms
        except KafkaClientError as e:
            log.info("producer cannot connect to broker %d: %s", node, e)
            self._connect_retry_at[node] = time.monotonic() + self.config.retry_backoff_ms / 1000.0
            self.metadata.invalidate_broker(node)
        finally:
            self._connecting.discard(node)
            self.wakeup()

    def _refresh_metadata(self, topics: Iterable[str] | None, now: float) -> None:
        if self._refreshing is not None or now - self._last_refresh < self.config.retry_backoff_ms / 1000.0:
            return
        self._last_refresh = now
        self._refreshing = self._spawn(self._refresh(sorted(topics) if topics else None))

    async def _refresh(self, topics: list[str] | None) -> None:
        try:
            await self.client.refresh_metadata(topics)
        except _FATAL_CONNECT_ERRORS as e:
            self._fatal(e)
        except KafkaClientError as e:
            log.info("producer metadata refresh failed: %s", e)
        finally:
            self._refreshing = None
            self.wakeup()

    def _spawn(self, coro: Any) -> asyncio.Task:
        assert self._loop is not None
        task = self._loop.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # Produce -----------------------------------------------------------------------------------
    def _send_produce(self, node: int, conn: Any, batches: list[ProducerBatch], now: float) -> None:
        body, min_version, max_version = self._produce_request(batches, now)
        self._node_in_flight[node] = self._node_in_flight.get(node, 0) + 1
        assert self._loop is not None
        task = self._loop.create_task(self._produce(node, conn, body, min_version, max_version, batches))
        self._requests.add(task)
        task.add_done_callback(self._requests.discard)

    async def _produce(
        self, node: int, conn: Any, body: Any, min_version: int, max_version: int, batches: list[ProducerBatch]
    ) -> None:
        cfg = self.config
        try:
            response = await conn.request(
                _PRODUCE,
                body,
                timeout=cfg.request_timeout_ms / 1000.0,
                min_version=min_version,
                max_version=max_version,
                expect_response=cfg.acks != 0,
                why=PRODUCE_VERSION_WHY,
            )
        except NoCommonVersionError as e:
            self._not_sent(batches, e, retriable=False)
        except asyncio.CancelledError:  # the producer is closing for good
            self._on_produce_answer(conn.peer, batches, None, ProducerClosedError("the producer closed"), final=True)
            raise
        except KafkaClientError as e:  # connection lost or request timed out: the connection is closed
            if self._connections.get(node) is conn:
                del self._connections[node]
            self._on_produce_answer(conn.peer, batches, None, e)
            await self.client.drop(conn, e)  # the pool forgets it; what its broker led is refreshed
        else:
            if response is None:  # acks=0: nothing comes back
                for batch in batches:
                    self._in_flight[batch.tp] -= 1
                    self._finish(batch, base_offset=-1)
            else:
                self._on_produce_answer(conn.peer, batches, response, None)
        finally:
            self._node_in_flight[node] -= 1
            self.wakeup()

    def _finish(
        self,
        batch: ProducerBatch,
        *,
        base_offset: int = -1,
        log_append_time: int = -1,
        error: BaseException | None = None,
    ) -> None:
        super()._finish(batch, base_offset=base_offset, log_append_time=log_append_time, error=error)
        if self.on_batch_done is not None:
            self.on_batch_done(batch)


def _wake(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(None)
