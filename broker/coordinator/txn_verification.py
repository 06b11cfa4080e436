"""The leader's side of transaction verification (KIP-890 part 1) and of the implicit add of transactions v2
(KIP-890 part 2): before a partition leader appends a transactional batch of a producer that has no transaction
ongoing on that partition (at that epoch), it asks the transaction coordinator of the request's
``transactional_id`` whether the partition is in the producer's transaction, or, for a v2 client (Produce v12,
TxnOffsetCommit v5), asks it to add the partition. Kafka's ``ReplicaManager``/``AddPartitionsToTxnManager``.

The question goes in-process when this broker coordinates the id (``TransactionCoordinator.verify_partitions``
/ ``add_partitions``), else as AddPartitionsToTxn v4+ (one transaction, ``verify_only`` true to verify, false to
add) to the leader of the id's ``__transaction_state`` partition, over the marker sender's inter-broker
connections. Errors, as Kafka maps them for the producer (``produce_error``): PRODUCER_FENCED ->
INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE kept for Produce v11+ (older clients get INVALID_TXN_STATE);
INVALID_TXN_STATE ("the partition was not added to the transaction"), which Produce v11+ answers as
TRANSACTION_ABORTABLE (as Kafka 4.4 does, seen in tests/compat); CONCURRENT_TRANSACTIONS,
NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR ->
NOT_ENOUGH_REPLICAS (retried by every client without a metadata refresh); a top-level
CLUSTER_AUTHORIZATION_FAILED from the coordinator -> INVALID_TXN_STATE; others as they are.

Guards: verifying takes a round trip, during which the transaction may end (a marker lands) and a new one may
not include the partition. ``start_guard`` records a token per (partition, producer) before the question; a
transaction marker for the producer on the partition drops it (``clear_guard``, WriteTxnMarkers); the append
goes ahead only while ``guard_holds``, as Kafka's ``VerificationGuard``. A voided verification is answered
NOT_ENOUGH_REPLICAS (retriable): the retry asks again, so a late write of the ended transaction is refused
then, while a transactions-v2 producer that began its next transaction at once (its Produce verified while
the previous transaction's markers landed) is not failed. Event-loop only.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch import (
    ATTRIBUTES_OFFSET,
    BATCH_HEADER_SIZE,
    CONTROL_BIT,
    MAGIC_OFFSET,
    TRANSACTIONAL_BIT,
)

from .transaction_log import TRANSACTION_STATE_TOPIC
from .txn_coordinator import TxnError

if TYPE_CHECKING:
    from broker.replication.partition import Partition

    from .txn_coordinator import TransactionCoordinator

log = logging.getLogger("kafkalog.coordinator")

REQUEST_TIMEOUT_S = 30.0
TRANSACTION_ABORTABLE_FROM = 11
"""The first Produce version whose clients know TRANSACTION_ABORTABLE (KIP-890)."""
ADD_PARTITIONS_BROKER_VERSIONS = (4, 5)
"""AddPartitionsToTxn versions brokers send each other (v4+: batched, ``verify_only``)."""

_RETRIABLE_AS_NOT_ENOUGH_REPLICAS = frozenset(
    {
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)

TopicPartitionKey = tuple[str, int]

_guards: weakref.WeakKeyDictionary[Partition, dict[int, object]] = weakref.WeakKeyDictionary()


def start_guard(part: Partition, producer_id: int) -> object:
    """A new verification token for ``producer_id`` on ``part`` (replacing any older one)."""
    token = object()
    _guards.setdefault(part, {})[producer_id] = token
    return token


def clear_guard(part: Partition, producer_id: int) -> None:
    """A transaction marker of ``producer_id`` reached ``part``: verifications started before it are void."""
    tokens = _guards.get(part)
    if tokens is not None:
        tokens.pop(producer_id, None)


def guard_holds(part: Partition, producer_id: int, token: object) -> bool:
    tokens = _guards.get(part)
    return tokens is not None and tokens.get(producer_id) is token


def has_ongoing_transaction(part: Partition, producer_id: int, producer_epoch: int) -> bool:
    """The producer's transaction at ``producer_epoch`` is ongoing on ``part`` (no verification needed)."""
    entry = part.log.producer_state(producer_id)
    return entry is not None and entry.current_txn_first_offset >= 0 and entry.epoch == producer_epoch


def produce_error(code: ErrorCode, produce_version: int) -> tuple[ErrorCode, str]:
    """The error and message a producer gets for a failed verification (the module docstring's mapping)."""
    if code == ErrorCode.INVALID_TXN_STATE:
        if produce_version >= TRANSACTION_ABORTABLE_FROM:
            code = ErrorCode.TRANSACTION_ABORTABLE
        return code, "the partition was not added to the transaction"
    if code in _RETRIABLE_AS_NOT_ENOUGH_REPLICAS:
        return (
            ErrorCode.NOT_ENOUGH_REPLICAS,
            f"unable to verify the partition has been added to the transaction: {code.name}",
        )
    if code == ErrorCode.PRODUCER_FENCED:
        code = ErrorCode.INVALID_PRODUCER_EPOCH
    if code == ErrorCode.TRANSACTION_ABORTABLE and produce_version < TRANSACTION_ABORTABLE_FROM:
        code = ErrorCode.INVALID_TXN_STATE
    return code, f"transaction verification failed: {code.name}"


@dataclass
class Verification:
    """The outcome of ``TxnVerifier.verify_produce`` for one request: per (topic, partition) the error to answer
    (with its message), and the guards of the partitions that passed."""

    errors: dict[TopicPartitionKey, tuple[ErrorCode, str]] = field(default_factory=dict)
    guards: dict[TopicPartitionKey, tuple[int, object]] = field(default_factory=dict)

    def refusal(self, tp: TopicPartitionKey, part: Partition) -> tuple[ErrorCode, str] | None:
        """The error for ``tp`` (None: append it), checking its guard still holds right before the append."""
        error = self.errors.get(tp)
        if error is not None:
            return error
        guard = self.guards.get(tp)
        if guard is not None and not guard_holds(part, *guard):
            return (
                ErrorCode.NOT_ENOUGH_REPLICAS,
                "a transaction of the producer ended while the partition was being verified: retry",
            )
        return None


class TxnVerifier:
    """Asks the transaction coordinator about partitions (see the module docstring)."""

    def __init__(self, coordinator: TransactionCoordinator) -> None:
        self.coordinator = coordinator

    @property
    def enabled(self) -> bool:
        return bool(self.coordinator.config["transaction.partition.verification.enable"])

    async def check(
        self, transactional_id: str, producer_id: int, producer_epoch: int, tps: set[TopicPartitionKey], add: bool
    ) -> dict[TopicPartitionKey, ErrorCode]:
        """The coordinator's errors for ``tps`` (empty: all in the transaction, or added when ``add``)."""
        coordinator = self.coordinator
        if coordinator.coordinator_error(transactional_id) == ErrorCode.NONE:
            if not add:
                return coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, tps)
            try:
                await coordinator.add_partitions(
                    transactional_id, producer_id, producer_epoch, tps, transactions_v2=True
                )
            except TxnError as e:
                return dict.fromkeys(tps, e.error_code)
            return {}
        return await self._ask_remote(transactional_id, producer_id, producer_epoch, tps, add)

    async def _ask_remote(
        self, transactional_id: str, producer_id: int, producer_epoch: int, tps: set[TopicPartitionKey], add: bool
    ) -> dict[TopicPartitionKey, ErrorCode]:
        coordinator = self.coordinator
        metadata = coordinator.topic.metadata
        state = metadata.topics.get(TRANSACTION_STATE_TOPIC)
        p = coordinator.partition_of(transactional_id)
        leader = state.leader(p) if state is not None and p in state.replicas else -1
        if leader < 0 or leader not in metadata.brokers or leader == coordinator.broker_id:
            return dict.fromkeys(tps, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        Req = API_BY_KEY[ApiKey.ADD_PARTITIONS_TO_TXN].Request
        by_topic: dict[str, list[int]] = {}
        for t, i in sorted(tps):
            by_topic.setdefault(t, []).append(i)
        Txn = Req.AddPartitionsToTxnTransaction
        request = Req(
            transactions=[
                Txn(
                    transactional_id=transactional_id,
                    producer_id=producer_id,
                    producer_epoch=producer_epoch,
                    verify_only=not add,
                    topics=[Txn.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
                )
            ]
        )
        try:
            conn = await coordinator.markers.connection(leader)
            versions = conn.versions
            lo, hi = ADD_PARTITIONS_BROKER_VERSIONS
            if not versions.supports(ApiKey.ADD_PARTITIONS_TO_TXN, lo, hi):
                log.warning("broker %d does not verify transactions (no AddPartitionsToTxn v4+): appending", leader)
                return {}
            version = versions.pick(ApiKey.ADD_PARTITIONS_TO_TXN, lo, hi)
            response = await conn.request(
                ApiKey.ADD_PARTITIONS_TO_TXN, request, version=version, timeout=REQUEST_TIMEOUT_S
            )
        except (KafkaClientError, OSError, TimeoutError) as e:
            log.info("transaction verification with broker %d failed: %s", leader, e)
            await coordinator.markers.drop_connection(leader)
            return dict.fromkeys(tps, ErrorCode.NETWORK_EXCEPTION)
        if response.error_code != ErrorCode.NONE:
            top = ErrorCode(response.error_code)
            if top == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
                top = ErrorCode.INVALID_TXN_STATE
            return dict.fromkeys(tps, top)
        errors: dict[TopicPartitionKey, ErrorCode] = {}
        for result in response.results_by_transaction:
            for topic in result.topic_results:
                for pr in topic.results_by_partition:
                    if pr.partition_error_code != ErrorCode.NONE:
                        errors[(topic.name, pr.partition_index)] = ErrorCode(pr.partition_error_code)
        return errors

    async def verify_produce(self, request, version: int, leaders) -> Verification:
        """Verify (or, Produce v12, add) the partitions of a Produce ``request`` whose first batch is transactional
        and whose producer has no transaction ongoing there; ``leaders(topic, index)`` is the partition this broker
        leads (or None: the append answers that partition's error). Nothing to do without a
        ``transactional_id``, below v3, or with ``transaction.partition.verification.enable`` false."""
        outcome = Verification()
        tid = request.transactional_id
        if tid is None or version < 3 or not self.enabled:
            return outcome
        pending: dict[TopicPartitionKey, Partition] = {}
        producer: tuple[int, int] | None = None
        for topic in request.topic_data:
            for pd in topic.partition_data:
                first = transactional_producer(pd.records)
                if first is None:
                    continue
                part = leaders(topic.name, pd.index)
                if part is None:
                    continue
                if producer is not None and first != producer:
                    outcome.errors[(topic.name, pd.index)] = (
                        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                        "transactional records of more than one producer id or epoch in one request",
                    )
                    continue
                producer = first
                if not has_ongoing_transaction(part, *first):
                    pending[(topic.name, pd.index)] = part
        if not pending or producer is None:
            return outcome
        pid, epoch = producer
        for tp, part in pending.items():
            outcome.guards[tp] = (pid, start_guard(part, pid))
        errors = await self.check(tid, pid, epoch, set(pending), add=version >= 12)
        for tp, code in errors.items():
            if tp in pending:
                outcome.errors[tp] = produce_error(code, version)
        return outcome


_PRODUCER_ID_POS = 43  # after base offset, length, leader epoch, magic, crc, attributes, deltas, timestamps


def transactional_producer(records) -> tuple[int, int] | None:
    """(producer id, epoch) of ``records``' first batch when it is a v2 transactional data batch, else None."""
    if records is None or len(records) < BATCH_HEADER_SIZE or records[MAGIC_OFFSET] != 2:
        return None
    attributes = int.from_bytes(records[ATTRIBUTES_OFFSET : ATTRIBUTES_OFFSET + 2], "big")
    if not attributes & TRANSACTIONAL_BIT or attributes & CONTROL_BIT:
        return None
    pid = int.from_bytes(records[_PRODUCER_ID_POS : _PRODUCER_ID_POS + 8], "big", signed=True)
    epoch = int.from_bytes(records[_PRODUCER_ID_POS + 8 : _PRODUCER_ID_POS + 10], "big", signed=True)
    return (pid, epoch) if pid >= 0 else None
