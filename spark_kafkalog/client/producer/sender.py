"""The producer's background sender thread: drains the accumulator into Produce requests and completes
batches from the responses (what each answer means is ``sender_core.SenderCore``'s, shared with the asyncio
producer's sender).

One loop, on its own thread, with its own ``ConnectionPool`` (one connection per broker, opened and
dropped as ``KafkaClient``'s are; metadata and InitProducerId go through the producer's ``KafkaClient``):

1. an idempotent producer first obtains a producer id (InitProducerId, retried with backoff);
2. ``accumulator.ready`` names the brokers leading sendable partitions; partitions without a known leader
   trigger a (rate-limited) metadata refresh;
3. each such broker gets Produce requests while it has fewer than
   ``max.in.flight.requests.per.connection`` in flight (one batch per partition per request);
4. queued batches older than ``delivery.timeout.ms`` fail with ``KafkaTimeoutError``;
5. ``select`` waits for responses, a wake-up from ``send``/``flush``/``close``, or the next linger deadline;
   a request unanswered for ``request.timeout.ms`` closes its connection.

Produce uses v3+ (RecordBatch v2; v7+ for zstd) at the highest version the broker supports. With
``acks=0`` no response is expected and records complete with offset -1. Per-partition outcomes:
success completes the batch; DUPLICATE_SEQUENCE_NUMBER (an idempotent retry of an appended batch)
completes it with offset -1; retriable errors (leader moves, lost connections, timeouts, NOT_ENOUGH_REPLICAS)
re-queue it after backoff while ``retries`` and ``delivery.timeout.ms`` allow (the errors of
``errors.REFRESH_METADATA_ERRORS`` refresh the topic's metadata first); MESSAGE_TOO_LARGE fails it with
``RecordTooLargeError``; anything else fails it. Ordering: an idempotent producer keeps up to 5
batches per partition in flight and, after a retriable failure, resends that partition's batches one at a
time in sequence order (OUT_OF_ORDER_SEQUENCE_NUMBER of a later batch is then expected and retried);
a non-idempotent producer preserves order only with ``max.in.flight.requests.per.connection=1``.

Every batch is completed exactly once; on ``close`` the loop runs until every queued batch completed
(or, after a forced close, fails the rest with ``ProducerClosedError``).
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import (
    ConfigError,
    KafkaAuthenticationError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaSslError,
    KafkaTimeoutError,
    NoCommonVersionError,
    ProducerClosedError,
)
from spark_kafkalog.client.network.pool import ConnectionPool
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.producer_batch import ProducerBatch
from spark_kafkalog.client.producer.sender_core import (
    PRODUCE_BY_NAME_MAX,
    PRODUCE_VERSION_WHY,
    SenderCore,
    init_producer_id_request,
)
from spark_kafkalog.client.producer.transactions import TransactionManager
from spark_kafkalog.protocol import ApiKey

__all__ = ["PRODUCE_BY_NAME_MAX", "Sender"]

log = logging.getLogger("kafkalog.producer")

_PRODUCE = int(ApiKey.PRODUCE)
_INIT_PRODUCER_ID = int(ApiKey.INIT_PRODUCER_ID)


class Sender(SenderCore, threading.Thread):
    def __init__(
        self, client: KafkaClient, accumulator: RecordAccumulator, config: ClientConfig, *, idempotent: bool
    ) -> None:
        threading.Thread.__init__(self, name="kafkalog-producer-sender", daemon=True)
        SenderCore.__init__(self, client.metadata, client.name_principal, accumulator, config, idempotent=idempotent)
        self.client = client
        self._pool = ConnectionPool(config, client.metadata)
        self._wakeup_r, self._wakeup_w = socket.socketpair()
        self._wakeup_r.setblocking(False)
        self._wakeup_w.setblocking(False)
        self._wake_pending = False
        self._running = True
        self._last_refresh = 0.0

    # control (any thread) ----------------------------------------------------------------------
    def wakeup(self) -> None:
        if self._wake_pending:
            return
        self._wake_pending = True
        try:
            self._wakeup_w.send(b"\x00")
        except (BlockingIOError, OSError):
            pass

    def initiate_close(self) -> None:
        """Stop after every queued batch completed."""
        self.accumulator.closing = True
        self._running = False
        self.wakeup()

    def force_close(self) -> None:
        """Stop now; queued and in-flight batches fail with ``ProducerClosedError``."""
        self._force = True
        self._running = False
        self.wakeup()

    # loop --------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            while self._running:
                self._run_once()
            while not self._force and (self.accumulator.has_queued() or self._has_in_flight()):
                self._run_once()
        except BaseException as e:  # never die silently: fail every record
            log.exception("producer sender thread failed")
            self.fatal_error = e
        finally:
            reason = self.fatal_error or ProducerClosedError("producer closed before the record was delivered")
            for request in self._pool.close(reason):
                self._on_response(request, final=True)
            for batch in self.accumulator.take_all():
                self._finish(batch, error=reason)
            for batch in self.accumulator.incomplete():
                self._finish(batch, error=reason)
            self._wakeup_r.close()
            self._wakeup_w.close()

    def _run_once(self) -> None:
        now = time.monotonic()
        cfg = self.config
        send_allowed = True
        idem = self.idempotence
        txn = self.transactions
        if idem is not None and not idem.has_producer_id:
            send_allowed = False
            if self._may_init_producer_id(now):
                self._init_producer_id()
                send_allowed = idem.has_producer_id
        if txn is not None and send_allowed:
            self._add_partitions_to_txn(txn)
        check = self.accumulator.ready(now, self._leader, self._muted())
        timeout = min(check.next_check, 1.0)
        if check.unknown_leaders:
            self._refresh_metadata(check.unknown_leaders, now)
            timeout = min(timeout, cfg.retry_backoff_ms / 1000.0)
        if not send_allowed and self.accumulator.has_queued():
            timeout = min(timeout, max(self._pid_retry_at - now, 0.01))
        if send_allowed:
            for node in check.ready_nodes:
                conn = self._connection(node, now)
                if conn is None:
                    timeout = min(timeout, cfg.retry_backoff_ms / 1000.0)
                    continue
                while not conn.closed and conn.in_flight < cfg.max_in_flight:
                    batches = self.accumulator.drain(node, self._leader, cfg.max_request_size, now, self._muted())
                    if not batches:
                        break
                    self._send_produce(conn, batches, now)
        self._expire(now)
        self._poll(max(timeout, 0.0))
        self._check_request_timeouts()

    # transactions ------------------------------------------------------------------------------
    def _add_partitions_to_txn(self, txn: TransactionManager) -> None:
        """AddPartitionsToTxn for the partitions with queued batches not yet in the transaction (they stay
        muted until added); a failure fails their batches and makes the transaction abortable."""
        if txn.transactions_v2:  # Produce v12 adds them (SenderCore._produce_request)
            return
        new = txn.not_added(self.accumulator.queued_partitions())
        if not new:
            return
        try:
            txn.add_partitions(new, self.config.max_block_ms / 1000.0)
        except KafkaClientError as e:
            for batch in self.accumulator.take_partitions(new):
                self._finish(batch, error=e)

    # InitProducerId ----------------------------------------------------------------------------
    def _init_producer_id(self) -> None:
        try:
            _, response = self.client.send_request(_INIT_PRODUCER_ID, init_producer_id_request())
        except KafkaClientError as e:
            self._on_producer_id(None, e)
            return
        self._on_producer_id(response, None)

    # connections and metadata ------------------------------------------------------------------
    def _connection(self, node: int, now: float) -> SocketConnection | None:
        """The connection to ``node``, or ``None`` while it cannot be had (backing off after a failed
        attempt, or the broker's address is not known yet)."""
        conn = self._pool.get(node)
        if conn is not None:
            return conn
        if self._pool.backing_off(node, now):
            return None
        if self.client.metadata.broker(node) is None:
            self._refresh_metadata(None, now)
            return None
        try:
            return self._pool.connection(node)
        except (KafkaAuthenticationError, KafkaSslError, ConfigError) as e:
            self._fatal(e)  # wrong credentials or TLS settings: every record fails now, not at delivery.timeout.ms
            return None
        except KafkaClientError as e:
            log.info("producer cannot connect to broker %d: %s", node, e)
            return None

    def _refresh_metadata(self, topics: Any, now: float) -> None:
        if now - self._last_refresh < self.config.retry_backoff_ms / 1000.0:
            return
        self._last_refresh = now
        try:
            self.client.refresh_metadata_once(sorted(topics) if topics else None)
        except (KafkaAuthenticationError, KafkaSslError, ConfigError) as e:
            self._fatal(e)
        except KafkaClientError as e:
            log.info("producer metadata refresh failed: %s", e)

    # Produce -----------------------------------------------------------------------------------
    def _send_produce(self, conn: SocketConnection, batches: list[ProducerBatch], now: float) -> None:
        body, min_version, max_version = self._produce_request(batches, now)
        try:
            request = conn.send(
                _PRODUCE,
                body,
                min_version=min_version,
                max_version=max_version,
                expect_response=self.config.acks != 0,
                context=(conn.peer, batches),
                why=PRODUCE_VERSION_WHY,
            )
        except NoCommonVersionError as e:
            self._not_sent(batches, e, retriable=False)
            return
        except KafkaConnectionError as e:
            self._drop(conn)  # completes the requests that were in flight, this one included if queued
            self._not_sent(batches, e, retriable=True)  # the request never made it into the connection's queue
            return
        if request is None:  # acks=0: nothing will come back
            for batch in batches:
                self._in_flight[batch.tp] -= 1
                self._finish(batch, base_offset=-1)

    def _on_response(self, request: Any, *, final: bool = False) -> None:
        peer, batches = request.context
        self._on_produce_answer(peer, batches, request.response, request.error, final=final)

    # I/O ---------------------------------------------------------------------------------------
    def _poll(self, timeout: float) -> None:
        conns = [c for c in self._pool.live() if c.in_flight]
        readable: list[Any]
        try:
            watched: list[Any] = [self._wakeup_r, *conns]  # sockets and connections (both have fileno())
            readable, _, _ = select.select(watched, [], [], timeout)
        except (OSError, ValueError):
            readable = [c for c in conns if not c.closed]
        for item in readable:
            if item is self._wakeup_r:
                try:
                    while self._wakeup_r.recv(4096):
                        pass
                except (BlockingIOError, OSError):
                    pass
                # only now: a wakeup() between clearing and draining would have its byte drained and set the
                # flag, and every later wakeup() would then skip writing while nothing wakes this thread up
                self._wake_pending = False
                continue
            for request in item.poll():
                self._on_response(request)
            if item.closed:
                self._drop(item)

    def _check_request_timeouts(self) -> None:
        limit = self.config.request_timeout_ms / 1000.0
        now = time.monotonic()
        for conn in self._pool.live():
            oldest = conn.protocol.oldest_in_flight()
            if oldest is not None and now - oldest.sent_at > limit:
                error = KafkaTimeoutError(
                    f"broker {conn.peer} did not answer a Produce request within request.timeout.ms "
                    f"({self.config.request_timeout_ms} ms)",
                    broker=conn.peer,
                )
                self._drop(conn, error)

    def _drop(self, conn: SocketConnection, reason: BaseException | None = None) -> None:
        """Close ``conn``; its requests in flight are retried or failed (see ``_on_response``)."""
        for request in self._pool.drop(conn, reason):
            self._on_response(request)
