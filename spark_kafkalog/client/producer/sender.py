"""The producer's background sender thread: drains the accumulator into Produce requests and completes
batches from the responses.

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
    REFRESH_METADATA_ERRORS,
    ConfigError,
    KafkaAuthenticationError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaSslError,
    KafkaTimeoutError,
    NoCommonVersionError,
    ProducerClosedError,
    RecordTooLargeError,
    error_for_code,
)
from spark_kafkalog.client.network.pool import ConnectionPool
from spark_kafkalog.client.network.retry import backoff_ms
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.idempotence import IdempotenceState
from spark_kafkalog.client.producer.producer_batch import ProducerBatch
from spark_kafkalog.client.producer.transactions import (
    FENCING_ERRORS,
    PRODUCE_V1_MAX,
    PRODUCE_V2,
    TransactionManager,
)
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, SendBuffer
from spark_kafkalog.records import Compression

__all__ = ["Sender"]

log = logging.getLogger("kafkalog.producer")

_PRODUCE = int(ApiKey.PRODUCE)
PRODUCE_BY_NAME_MAX = 12
"""The newest Produce this producer sends: v13 names topics by id (KIP-516), which it does not look up."""
_INIT_PRODUCER_ID = int(ApiKey.INIT_PRODUCER_ID)
_PRODUCE_SPEC = API_BY_KEY[_PRODUCE]
_INIT_SPEC = API_BY_KEY[_INIT_PRODUCER_ID]
_MAX_IDEMPOTENT_IN_FLIGHT = 5

_TOO_LARGE = frozenset((int(ErrorCode.MESSAGE_TOO_LARGE), int(ErrorCode.RECORD_LIST_TOO_LARGE)))
_PRODUCER_STATE_LOST = frozenset((int(ErrorCode.UNKNOWN_PRODUCER_ID), int(ErrorCode.INVALID_PRODUCER_EPOCH)))
_BY_REFERENCE = 32 * 1024  # batches this large go into the request uncopied (sent with sendmsg)


def _records(data: bytearray | None) -> Any:
    """A batch as the ``records`` of a produce request: large ones by reference (the sender is the only one
    touching a batch's bytes while it is in flight; stamping happens before it is queued)."""
    return SendBuffer(data) if data is not None and len(data) >= _BY_REFERENCE else data


class Sender(threading.Thread):
    def __init__(
        self, client: KafkaClient, accumulator: RecordAccumulator, config: ClientConfig, *, idempotent: bool
    ) -> None:
        super().__init__(name="kafkalog-producer-sender", daemon=True)
        self.client = client
        self.accumulator = accumulator
        self.config = config
        self.idempotence = IdempotenceState() if idempotent else None
        self.transactions: TransactionManager | None = None  # set by a transactional Producer before start()
        self.fatal_error: BaseException | None = None
        self._pool = ConnectionPool(config, client.metadata)
        self._in_flight: dict[TopicPartition, int] = {}
        self._wakeup_r, self._wakeup_w = socket.socketpair()
        self._wakeup_r.setblocking(False)
        self._wakeup_w.setblocking(False)
        self._wake_pending = False
        self._running = True
        self._force = False
        self._last_refresh = 0.0
        self._pid_retry_at = 0.0
        self._pid_attempts = 0
        self._min_version = 7 if config.compression_type == Compression.ZSTD else 3
        self.requests_sent = 0

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

    def _has_in_flight(self) -> bool:
        return any(n > 0 for n in self._in_flight.values())

    def _leader(self, tp: TopicPartition) -> int | None:
        """The partition's leader, or ``None`` while unknown or invalidated by an error (the topic's
        metadata is then refreshed before its batches are sent again)."""
        metadata = self.client.metadata
        if metadata.is_invalidated(tp.topic):
            return None
        found = metadata.leader(tp.topic, tp.partition)
        return None if found is None else found[0]

    def _muted(self) -> set[TopicPartition]:
        muted = set()
        txn = self.transactions
        if txn is not None:
            muted = txn.not_added(self.accumulator.queued_partitions())
        idem = self.idempotence
        for tp, n in self._in_flight.items():
            if n <= 0:
                continue
            if idem is None:
                if self.config.max_in_flight == 1:
                    muted.add(tp)
            elif tp in idem.recovering or n >= _MAX_IDEMPOTENT_IN_FLIGHT:
                muted.add(tp)
        return muted

    def _run_once(self) -> None:
        now = time.monotonic()
        cfg = self.config
        send_allowed = True
        idem = self.idempotence
        txn = self.transactions
        if idem is not None and not idem.has_producer_id:
            send_allowed = False
            if txn is None and not self._has_in_flight() and now >= self._pid_retry_at:
                self._init_producer_id()  # a transactional producer's id comes from init_transactions
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
    def fail_unsent(self, batch: ProducerBatch, error: BaseException) -> None:
        """Fail a batch taken from the accumulator before it was sent (an aborted transaction)."""
        batch.fail(error)
        self.accumulator.release(batch)

    def _add_partitions_to_txn(self, txn: TransactionManager) -> None:
        """AddPartitionsToTxn for the partitions with queued batches not yet in the transaction (they stay
        muted until added); a failure fails their batches and makes the transaction abortable."""
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
        idem = self.idempotence
        assert idem is not None
        body = _INIT_SPEC.Request(transactional_id=None, transaction_timeout_ms=-1, producer_id=-1, producer_epoch=-1)
        try:
            _, response = self.client.send_request(_INIT_PRODUCER_ID, body)
            if response.error_code:
                raise error_for_code(response.error_code, "InitProducerId")
        except KafkaClientError as e:
            if not e.retriable:
                self.client.name_principal(e)
                self._fatal(e)
                return
            self._pid_attempts += 1
            delay = backoff_ms(self._pid_attempts, self.config.retry_backoff_ms, self.config.retry_backoff_max_ms)
            self._pid_retry_at = time.monotonic() + delay / 1000.0
            log.info("InitProducerId failed (%s); retrying in %.0f ms", e, delay)
            return
        self._pid_attempts = 0
        idem.set_producer_id(response.producer_id, response.producer_epoch)
        log.debug("producer id %d epoch %d", response.producer_id, response.producer_epoch)

    def _fatal(self, error: BaseException) -> None:
        """A non-retriable producer-wide failure: fail everything queued; later sends raise it."""
        self.fatal_error = error
        for batch in self.accumulator.take_all():
            self._finish(batch, error=error)

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
        idem = self.idempotence
        cfg = self.config
        for batch in batches:  # built here, outside the accumulator's lock; stamped when idempotent
            if idem is not None:
                idem.prepare(batch)
            else:
                batch.close()
        R = _PRODUCE_SPEC.Request
        by_topic: dict[str, list[Any]] = {}
        for batch in batches:
            by_topic.setdefault(batch.tp.topic, []).append(
                R.TopicProduceData.PartitionProduceData(index=batch.tp.partition, records=_records(batch.data))
            )
            batch.attempts += 1
            batch.last_attempt = now
            batch.in_flight = True
            self._in_flight[batch.tp] = self._in_flight.get(batch.tp, 0) + 1
        body = R(
            transactional_id=None if self.transactions is None else self.transactions.transactional_id,
            acks=cfg.acks,
            timeout_ms=cfg.request_timeout_ms,
            topic_data=[R.TopicProduceData(name=name, partition_data=parts) for name, parts in by_topic.items()],
        )
        self.requests_sent += 1
        txn = self.transactions
        min_version, max_version = self._min_version, PRODUCE_BY_NAME_MAX
        if txn is not None:  # Produce v12 is a transactions-v2 client's: the leader adds the partition
            if txn.transactions_v2:
                min_version = max(min_version, PRODUCE_V2)
            else:
                max_version = PRODUCE_V1_MAX
        try:
            request = conn.send(
                _PRODUCE,
                body,
                min_version=min_version,
                max_version=max_version,
                expect_response=cfg.acks != 0,
                context=(conn.peer, batches),
                why="RecordBatch v2 needs Produce v3, zstd needs v7",
            )
        except NoCommonVersionError as e:
            for batch in batches:
                self._in_flight[batch.tp] -= 1
                self._finish(batch, error=e)
            return
        except KafkaConnectionError as e:
            self._drop(conn)  # completes the requests that were in flight, this one included if queued
            for batch in batches:
                if batch.in_flight:  # the request never made it into the connection's queue
                    self._in_flight[batch.tp] -= 1
                    self._retry_or_fail(batch, e, retriable=True)
            return
        if request is None:  # acks=0: nothing will come back
            for batch in batches:
                self._in_flight[batch.tp] -= 1
                self._finish(batch, base_offset=-1)

    def _on_response(self, request: Any, *, final: bool = False) -> None:
        peer, batches = request.context
        for batch in batches:
            self._in_flight[batch.tp] = self._in_flight.get(batch.tp, 1) - 1
        if request.error is not None:
            for batch in batches:
                if final:
                    self._finish(batch, error=request.error)
                else:
                    self._retry_or_fail(batch, request.error, retriable=True)
            return
        answers = {}
        for topic in request.response.responses:
            for p in topic.partition_responses:
                answers[(topic.name, p.index)] = p
        for batch in batches:
            answer = answers.get((batch.tp.topic, batch.tp.partition))
            if answer is None:
                error = KafkaClientError(
                    f"Produce response omits {batch.tp}",
                    retriable=True,
                    topic=batch.tp.topic,
                    partition=batch.tp.partition,
                )
                self._retry_or_fail(batch, error, retriable=True)
                continue
            code = answer.error_code
            if code == ErrorCode.NONE:
                self._finish(batch, base_offset=answer.base_offset, log_append_time=answer.log_append_time_ms)
            elif code == ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
                self._finish(batch, base_offset=-1)
            else:
                self._on_error_code(batch, code, answer.error_message, peer)

    def _on_error_code(self, batch: ProducerBatch, code: int, message: str | None, peer: str | None) -> None:
        tp = batch.tp
        if code in _TOO_LARGE:
            self._finish(
                batch,
                error=RecordTooLargeError(
                    f"broker {peer} rejected a batch of {batch.record_count} records ({batch.size_in_bytes} bytes) "
                    f"for {tp} as too large: {ErrorCode(code).name}" + (f": {message}" if message else ""),
                    topic=tp.topic,
                    partition=tp.partition,
                ),
            )
            return
        error = error_for_code(code, "Produce", broker=peer, topic=tp.topic, partition=tp.partition, detail=message)
        if code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED and self.transactions is not None:
            error = error_for_code(
                code, "Produce", broker=peer, detail=message, resource_name=self.transactions.transactional_id
            )
        self.client.name_principal(error)
        idem = self.idempotence
        retriable = error.retriable
        if self.transactions is not None and (
            code in FENCING_ERRORS or code in _PRODUCER_STATE_LOST or code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        ):
            self._finish(batch, error=error)  # fencing is fatal, a broken sequence aborts the transaction
            return
        if code in REFRESH_METADATA_ERRORS:
            self.client.metadata.invalidate(tp.topic)
            retriable = True
        if idem is not None:
            if code in _PRODUCER_STATE_LOST:
                idem.request_reset()
                retriable = True
            elif code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER:
                if tp not in idem.recovering:
                    idem.request_reset()  # the broker lost our sequence: start a new producer id
                retriable = True
        self._retry_or_fail(batch, error, retriable=retriable)

    def _retry_or_fail(self, batch: ProducerBatch, error: BaseException, *, retriable: bool) -> None:
        cfg = self.config
        now = time.monotonic()
        if (
            retriable
            and not self._force
            and batch.attempts <= cfg.retries
            and now - batch.created < cfg.delivery_timeout_ms / 1000.0
        ):
            delay = backoff_ms(batch.attempts, cfg.retry_backoff_ms, cfg.retry_backoff_max_ms) / 1000.0
            if self.idempotence is not None:
                self.idempotence.recovering.add(batch.tp)
            log.debug("retrying %r after %s", batch, error)
            self.accumulator.reenqueue(batch, now + delay)
            return
        if self.idempotence is not None and batch.base_sequence >= 0 and self.idempotence.is_current(batch):
            self.idempotence.request_reset()  # its sequence numbers now leave a gap
        if retriable and now - batch.created >= cfg.delivery_timeout_ms / 1000.0:
            error = KafkaTimeoutError(
                f"{batch.record_count} records for {batch.tp} not delivered within delivery.timeout.ms "
                f"({cfg.delivery_timeout_ms} ms); last error: {error}",
                topic=batch.tp.topic,
                partition=batch.tp.partition,
            )
        self._finish(batch, error=error)

    def _finish(
        self,
        batch: ProducerBatch,
        *,
        base_offset: int = -1,
        log_append_time: int = -1,
        error: BaseException | None = None,
    ) -> None:
        batch.in_flight = False
        if error is None:
            batch.complete(base_offset, log_append_time)
        else:
            batch.fail(error)
            if self.transactions is not None:
                self.transactions.fail(error)
        self.accumulator.release(batch)
        idem = self.idempotence
        if idem is not None and batch.tp in idem.recovering:
            if self._in_flight.get(batch.tp, 0) <= 0 and not self.accumulator.head_sequences(batch.tp):
                idem.recovering.discard(batch.tp)

    def _expire(self, now: float) -> None:
        timeout = self.config.delivery_timeout_ms / 1000.0
        for batch in self.accumulator.expired(now, timeout):
            if self.idempotence is not None and batch.base_sequence >= 0 and self.idempotence.is_current(batch):
                self.idempotence.request_reset()
            self._finish(
                batch,
                error=KafkaTimeoutError(
                    f"{batch.record_count} records for {batch.tp} expired: not delivered within delivery.timeout.ms "
                    f"({self.config.delivery_timeout_ms} ms)",
                    topic=batch.tp.topic,
                    partition=batch.tp.partition,
                ),
            )

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
