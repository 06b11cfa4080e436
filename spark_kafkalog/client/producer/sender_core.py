"""The decisions both producer senders make, without I/O: ``SenderCore``.

The blocking ``sender.Sender`` (a thread over ``ConnectionPool``) and the asyncio ``aio.sender.AsyncSender``
(a task over ``AsyncKafkaConnection``) differ only in how they wait and talk to brokers. What a batch's
answer means is shared, here: which partitions are muted (idempotent ordering, ``max.in.flight``, partitions
not yet in the transaction), the Produce request of a list of batches (version bounds for zstd and
transactions v2), the outcome of each partition's answer (complete, retry after backoff, fail, reset the
producer id), ``delivery.timeout.ms`` expiry, and completing a batch exactly once. See ``sender``'s module
docstring for the rules themselves.

Not thread-safe: the owning sender's thread (or event loop) calls every method, except that
``Producer.abort_transaction`` calls ``fail_unsent`` (the batch it fails is no longer in any queue).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    KafkaClientError,
    KafkaTimeoutError,
    RecordTooLargeError,
    error_for_code,
)
from spark_kafkalog.client.metadata import MetadataCache
from spark_kafkalog.client.network.retry import backoff_ms
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

__all__ = ["PRODUCE_BY_NAME_MAX", "PRODUCE_VERSION_WHY", "SenderCore", "init_producer_id_request"]

log = logging.getLogger("kafkalog.producer")

_PRODUCE = int(ApiKey.PRODUCE)
PRODUCE_BY_NAME_MAX = 12
"""The newest Produce this producer sends: v13 names topics by id (KIP-516), which it does not look up."""
PRODUCE_VERSION_WHY = "RecordBatch v2 needs Produce v3, zstd needs v7"
_PRODUCE_SPEC = API_BY_KEY[_PRODUCE]
_INIT_SPEC = API_BY_KEY[int(ApiKey.INIT_PRODUCER_ID)]
_MAX_IDEMPOTENT_IN_FLIGHT = 5

_TOO_LARGE = frozenset((int(ErrorCode.MESSAGE_TOO_LARGE), int(ErrorCode.RECORD_LIST_TOO_LARGE)))
_PRODUCER_STATE_LOST = frozenset((int(ErrorCode.UNKNOWN_PRODUCER_ID), int(ErrorCode.INVALID_PRODUCER_EPOCH)))
_BY_REFERENCE = 32 * 1024  # batches this large go into the request uncopied (sent with sendmsg)


def _records(data: bytearray | None) -> Any:
    """A batch as the ``records`` of a produce request: large ones by reference (the sender is the only one
    touching a batch's bytes while it is in flight; stamping happens before it is queued)."""
    return SendBuffer(data) if data is not None and len(data) >= _BY_REFERENCE else data


def init_producer_id_request() -> Any:
    """InitProducerId of a non-transactional idempotent producer (any broker answers it)."""
    return _INIT_SPEC.Request(transactional_id=None, transaction_timeout_ms=-1, producer_id=-1, producer_epoch=-1)


class SenderCore:
    """A sender's state and decisions; subclasses do the I/O (see the module docstring).

    ``metadata`` is the producer client's cache (leaders; invalidated on leader errors); ``name_principal``
    names the client's principal in an authorization error (``KafkaClient.name_principal``).
    """

    def __init__(
        self,
        metadata: MetadataCache,
        name_principal: Callable[[BaseException], None],
        accumulator: RecordAccumulator,
        config: ClientConfig,
        *,
        idempotent: bool,
    ) -> None:
        self.metadata = metadata
        self.name_principal = name_principal
        self.accumulator = accumulator
        self.config = config
        self.idempotence = IdempotenceState() if idempotent else None
        self.transactions: TransactionManager | None = None  # set by a transactional producer before it starts
        self.fatal_error: BaseException | None = None
        self._in_flight: dict[TopicPartition, int] = {}
        self._force = False
        self._pid_retry_at = 0.0
        self._pid_attempts = 0
        self._min_version = 7 if config.compression_type == Compression.ZSTD else 3
        self.requests_sent = 0

    # what may be sent --------------------------------------------------------------------------
    def _has_in_flight(self) -> bool:
        return any(n > 0 for n in self._in_flight.values())

    def _leader(self, tp: TopicPartition) -> int | None:
        """The partition's leader, or ``None`` while unknown or invalidated by an error (the topic's
        metadata is then refreshed before its batches are sent again)."""
        metadata = self.metadata
        if metadata.is_invalidated(tp.topic):
            return None
        found = metadata.leader(tp.topic, tp.partition)
        return None if found is None else found[0]

    def _muted(self) -> set[TopicPartition]:
        muted = set()
        txn = self.transactions
        if txn is not None and not txn.transactions_v2:  # v2: the Produce adds them (see _produce_request)
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

    def _may_init_producer_id(self, now: float) -> bool:
        """True when an idempotent, non-transactional producer should ask for a producer id now (a
        transactional producer's id comes from ``init_transactions``)."""
        return self.transactions is None and not self._has_in_flight() and now >= self._pid_retry_at

    def _on_producer_id(self, response: Any, error: KafkaClientError | None) -> None:
        """The outcome of an InitProducerId: the new id, a retry after backoff, or a fatal error."""
        idem = self.idempotence
        assert idem is not None
        if error is None and response.error_code:
            error = error_for_code(response.error_code, "InitProducerId")
        if error is not None:
            if not error.retriable:
                self.name_principal(error)
                self._fatal(error)
                return
            self._pid_attempts += 1
            delay = backoff_ms(self._pid_attempts, self.config.retry_backoff_ms, self.config.retry_backoff_max_ms)
            self._pid_retry_at = time.monotonic() + delay / 1000.0
            log.info("InitProducerId failed (%s); retrying in %.0f ms", error, delay)
            return
        self._pid_attempts = 0
        idem.set_producer_id(response.producer_id, response.producer_epoch)
        log.debug("producer id %d epoch %d", response.producer_id, response.producer_epoch)

    # transactions ------------------------------------------------------------------------------
    def fail_unsent(self, batch: ProducerBatch, error: BaseException) -> None:
        """Fail a batch taken from the accumulator before it was sent (an aborted transaction)."""
        batch.fail(error)
        self.accumulator.release(batch)

    def _fatal(self, error: BaseException) -> None:
        """A non-retriable producer-wide failure: fail everything queued; later sends raise it."""
        self.fatal_error = error
        for batch in self.accumulator.take_all():
            self._finish(batch, error=error)

    # Produce -----------------------------------------------------------------------------------
    def _produce_request(self, batches: list[ProducerBatch], now: float) -> tuple[Any, int, int]:
        """``(body, min version, max version)`` of the Produce request carrying ``batches`` (built and, when
        idempotent, stamped here); the batches count as in flight from now on."""
        idem = self.idempotence
        cfg = self.config
        for batch in batches:  # built here, outside the accumulator's lock; stamped when idempotent
            if idem is not None:
                idem.prepare(batch)
            else:
                batch.close()
        R = _PRODUCE_SPEC.Request
        by_topic: dict[str, list[Any]] = {}
        in_flight = self._in_flight
        for batch in batches:
            by_topic.setdefault(batch.tp.topic, []).append(
                R.TopicProduceData.PartitionProduceData(index=batch.tp.partition, records=_records(batch.data))
            )
            batch.attempts += 1
            batch.last_attempt = now
            batch.in_flight = True
            in_flight[batch.tp] = in_flight.get(batch.tp, 0) + 1
        txn = self.transactions
        if txn is not None and txn.transactions_v2:
            # the transaction includes a partition once a Produce (v12) carries it there, not before: an abort
            # before anything was sent then ends no transaction at the coordinator
            new = txn.not_added([batch.tp for batch in batches])
            if new:
                txn.add_partitions(new, 0.0)  # no request with transactions v2
        body = R(
            transactional_id=None if txn is None else txn.transactional_id,
            acks=cfg.acks,
            timeout_ms=cfg.request_timeout_ms,
            topic_data=[R.TopicProduceData(name=name, partition_data=parts) for name, parts in by_topic.items()],
        )
        self.requests_sent += 1
        min_version, max_version = self._min_version, PRODUCE_BY_NAME_MAX
        if txn is not None:  # Produce v12 is a transactions-v2 client's: the leader adds the partition
            if txn.transactions_v2:
                min_version = max(min_version, PRODUCE_V2)
            else:
                max_version = PRODUCE_V1_MAX
        return body, min_version, max_version

    def _not_sent(self, batches: list[ProducerBatch], error: BaseException, *, retriable: bool) -> None:
        """The request carrying ``batches`` never reached the broker: retry (or fail) each."""
        for batch in batches:
            if batch.in_flight:
                self._in_flight[batch.tp] -= 1
                if retriable:
                    self._retry_or_fail(batch, error, retriable=True)
                else:
                    self._finish(batch, error=error)

    def _on_produce_answer(
        self,
        peer: str | None,
        batches: list[ProducerBatch],
        response: Any,
        error: BaseException | None,
        *,
        final: bool = False,
    ) -> None:
        """Complete, retry or fail each of ``batches`` from the Produce ``response`` (or the request's
        ``error``; ``final``: no retries, the producer is closing)."""
        in_flight = self._in_flight
        for batch in batches:
            in_flight[batch.tp] = in_flight.get(batch.tp, 1) - 1
        if error is not None:
            for batch in batches:
                if final:
                    self._finish(batch, error=error)
                else:
                    self._retry_or_fail(batch, error, retriable=True)
            return
        if len(batches) == 1 and len(response.responses) == 1:  # the common case: one partition per request
            parts = response.responses[0].partition_responses
            batch = batches[0]
            if (
                len(parts) == 1
                and parts[0].index == batch.tp.partition
                and response.responses[0].name == batch.tp.topic
            ):
                self._on_partition_answer(batch, parts[0], peer)
                return
        answers = {}
        for topic in response.responses:
            for p in topic.partition_responses:
                answers[(topic.name, p.index)] = p
        for batch in batches:
            answer = answers.get((batch.tp.topic, batch.tp.partition))
            if answer is None:
                missing = KafkaClientError(
                    f"Produce response omits {batch.tp}",
                    retriable=True,
                    topic=batch.tp.topic,
                    partition=batch.tp.partition,
                )
                self._retry_or_fail(batch, missing, retriable=True)
                continue
            self._on_partition_answer(batch, answer, peer)

    def _on_partition_answer(self, batch: ProducerBatch, answer: Any, peer: str | None) -> None:
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
        self.name_principal(error)
        idem = self.idempotence
        retriable = error.retriable
        if self.transactions is not None and (
            code in FENCING_ERRORS or code in _PRODUCER_STATE_LOST or code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        ):
            self._finish(batch, error=error)  # fencing is fatal, a broken sequence aborts the transaction
            return
        if code in REFRESH_METADATA_ERRORS:
            self.metadata.invalidate(tp.topic)
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
