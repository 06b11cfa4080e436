"""The transaction coordinator: serves InitProducerId (with a transactional id), AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, DescribeTransactions and ListTransactions for the transactional ids whose
``__transaction_state`` partition this broker leads, and the verification a partition leader asks for before
it appends a transactional batch (KIP-890 part 1: ``verify_partitions``; ``txn_verification`` is the leader's
side), with transactions v2 (KIP-890 part 2) for the clients that use it.

Coordination is the group coordinator's (``InternalTopic``): ``__transaction_state`` (compacted,
``transaction.state.log.num.partitions``, replication factor ``transaction.state.log.replication.factor`` and
``min.insync.replicas`` ``transaction.state.log.min.isr``, both capped at the live brokers) is created on the
first FindCoordinator; a broker that starts leading a partition loads it (COORDINATOR_LOAD_IN_PROGRESS
meanwhile) and completes the transactions it finds in PrepareCommit/PrepareAbort (sends their markers again);
losing the leadership drops its ids and cancels their marker sends.

Every state change is one record (``transaction_log``) appended to the id's partition and acknowledged by the
ISR (acks=all) before it takes effect (``TxnMetadata.prepare``/``complete``); while one is in flight, or while
a transaction's markers are, the id answers CONCURRENT_TRANSACTIONS. EndTxn answers once PrepareCommit/
PrepareAbort is written; the markers (``txn_markers``) follow, then CompleteCommit/CompleteAbort is written.

Transactions v2 (an EndTxn v5, a Produce v12 or a TxnOffsetCommit v5 whose leader adds the partition): every
EndTxn bumps the producer epoch (PrepareCommit/PrepareAbort carry epoch + 1, the markers are written with it,
so a late write of the ended transaction is fenced) and answers the id and epoch to use next; an epoch that
would pass 32766 (Kafka keeps 32767 for fencing) moves to a new producer id at epoch 0 once the markers are
written (``next_producer_id``). A retried EndTxn is recognised by its epoch being the previous one (or, after
the move to a new id, by the previous id at epoch 32766): the same outcome answers again (CONCURRENT_TRANSACTIONS
while the markers are written), any other request with an old epoch is PRODUCER_FENCED. A v2 abort with no
transaction open bumps the epoch too (an aborted empty transaction). ``transaction.version`` >= 1 writes
``__transaction_state`` values in v1 with the v2 fields (``transaction_log``).

Timers (a ticker every ``TICK_S``): every ``transaction.abort.timed.out.transaction.cleanup.interval.ms``
an Ongoing transaction older than its timeout is aborted with the epoch bumped (Kafka's PrepareEpochFence),
so the producer is fenced; every ``transaction.remove.expired.transaction.cleanup.interval.ms`` ids idle
(Empty/Complete*) for ``transactional.id.expiration.ms`` are removed (tombstone). ``transactions_by_state``
is the figure ``broker.metrics`` reports. Event-loop only.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from broker.log.clock import SYSTEM_CLOCK, Clock
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch_builder import RecordBatchBuilder

from .internal_topic import InternalTopic
from .offset_store import iter_log_records
from .transaction_log import (
    TRANSACTION_STATE_TOPIC,
    TransactionLogError,
    TxnLogValue,
    decode_txn_key,
    decode_txn_value,
    encode_txn_key,
    encode_txn_value,
    transaction_partition_for,
)
from .txn_markers import TxnMarkerSender
from .txn_metadata import MAX_EPOCH, TxnMetadata, TxnState

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.config_admin.topic_admin import TopicAdmin
    from broker.metadata.cache import MetadataCache
    from broker.producer_ids import ProducerIdAllocator
    from broker.replication.partition import Partition
    from broker.replication.replica_manager import ReplicaManager

log = logging.getLogger("kafkalog.coordinator")

TICK_S = 0.1
_COMPLETE = (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


class TxnError(Exception):
    """A request refused with ``error_code`` (FENCED stands for PRODUCER_FENCED or INVALID_PRODUCER_EPOCH,
    whichever the request's version knows)."""

    def __init__(self, error_code: ErrorCode, message: str = "") -> None:
        super().__init__(message or error_code.name)
        self.error_code = error_code


class TransactionCoordinator:
    def __init__(
        self,
        broker_id: int,
        config: BrokerConfig,
        metadata: MetadataCache,
        replica_manager: ReplicaManager,
        topic_admin: TopicAdmin,
        producer_ids: ProducerIdAllocator,
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.broker_id, self.config, self.clock = broker_id, config, clock
        self.producer_ids = producer_ids
        self.num_partitions = config["transaction.state.log.num.partitions"]
        self.txns: dict[str, TxnMetadata] = {}
        self.topic = InternalTopic(
            TRANSACTION_STATE_TOPIC,
            self.num_partitions,
            replication_factor=config["transaction.state.log.replication.factor"],
            segment_bytes=config["transaction.state.log.segment.bytes"],
            min_isr=config["transaction.state.log.min.isr"],
            # Kafka's transaction topic configs
            topic_configs={"compression.type": "uncompressed", "unclean.leader.election.enable": "false"},
            config=config,
            metadata=metadata,
            replica_manager=replica_manager,
            topic_admin=topic_admin,
            load=self._load,
            unload=self._unload,
            loaded_hook=self._complete_prepared,
        )
        self._completing: dict[str, asyncio.Task] = {}
        """Per transactional id, the task sending its markers and writing CompleteCommit/CompleteAbort."""
        self.markers = TxnMarkerSender(broker_id, metadata)
        self._next_abort_ms = 0
        self._next_expire_ms = 0

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self.topic.start(self._on_tick, TICK_S, "txn-coordinator")

    async def stop(self) -> None:
        """Cancel the timers, loads and marker sends, then close the marker connections."""
        await self.topic.stop()
        sends = list(self._completing.values())
        for t in sends:
            t.cancel()
        await asyncio.gather(*sends, return_exceptions=True)
        await self.markers.close()

    def now(self) -> int:
        return self.clock.milliseconds()

    @property
    def transaction_version(self) -> int:
        """The finalized ``transaction.version`` feature level (2: transactions v2 offered to clients)."""
        return int(self.config["transaction.version"])

    @property
    def log_value_version(self) -> int:
        """The TransactionLogValue version written: 1 (flexible, with the v2 fields) from ``transaction.version``
        1 on, as Kafka."""
        return 1 if self.transaction_version >= 1 else 0

    # -- coordination ------------------------------------------------------------------------------
    def partition_of(self, transactional_id: str) -> int:
        return transaction_partition_for(transactional_id, self.num_partitions)

    def coordinator_error(self, transactional_id: str) -> ErrorCode:
        return self.topic.coordinator_error(self.partition_of(transactional_id))

    def _check(self, transactional_id: str | None) -> None:
        if not transactional_id:
            raise TxnError(ErrorCode.INVALID_REQUEST, "the transactional id is empty")
        code = self.coordinator_error(transactional_id)
        if code != ErrorCode.NONE:
            raise TxnError(code, f"broker {self.broker_id} does not coordinate {transactional_id!r} now")

    async def find_coordinator(self, transactional_id: str) -> tuple[ErrorCode, int]:
        """(error, node id); creates ``__transaction_state`` when missing. COORDINATOR_NOT_AVAILABLE while the
        id's partition has no live leader or is still loading on it (as Kafka answers)."""
        p = self.partition_of(transactional_id)
        code, leader = await self.topic.find_leader(p)
        if code == ErrorCode.NONE and leader == self.broker_id and p not in self.topic.loaded:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1
        return code, leader

    def _unload(self, p: int) -> None:
        """This broker stopped leading ``p``: drop its ids and cancel their marker sends."""
        for tid in [t for t in self.txns if self.partition_of(t) == p]:
            done = self._completing.pop(tid, None)
            if done is not None:
                done.cancel()
            del self.txns[tid]

    async def _load(self, p: int, part: Partition) -> int:
        """Rebuild the ids of partition ``p`` from its log (last record per id wins, tombstones remove it);
        the number of records read."""
        found: dict[str, TxnLogValue | None] = {}
        count = 0
        for key, value in iter_log_records(part.log):
            count += 1
            try:
                tid = decode_txn_key(key)
                found[tid] = None if value is None else decode_txn_value(value)
            except TransactionLogError as e:
                log.warning("skipping a %s record: %s", TRANSACTION_STATE_TOPIC, e)
            if count % 1000 == 0:
                await asyncio.sleep(0)
        for tid, v in found.items():
            if v is not None:
                self.txns[tid] = TxnMetadata.from_value(tid, v)
        return count

    def _complete_prepared(self, p: int) -> None:
        """Once ``p`` is loaded: complete the transactions found in PrepareCommit/PrepareAbort (markers again)."""
        for tid, meta in list(self.txns.items()):
            if self.partition_of(tid) == p and meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                log.info("transaction %s: completing %s found at load", tid, meta.state.display)
                self._start_completion(meta)

    # -- InitProducerId -------------------------------------------------------------------------------
    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected_pid: int = -1, expected_epoch: int = -1
    ) -> tuple[int, int]:
        """(producer id, epoch) for ``transactional_id``; raises ``TxnError``."""
        self._check(transactional_id)
        if not 0 < timeout_ms <= self.config["transaction.max.timeout.ms"]:
            raise TxnError(
                ErrorCode.INVALID_TRANSACTION_TIMEOUT,
                f"transaction timeout {timeout_ms} ms is not in (0, transaction.max.timeout.ms]",
            )
        meta = self.txns.get(transactional_id)
        if meta is None:
            meta = TxnMetadata(transactional_id, self.producer_ids.next_id(), -1, timeout_ms)
            self.txns[transactional_id] = meta
        if meta.pending is not None or transactional_id in self._completing:
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: a state change is in progress")
        if expected_pid >= 0:
            current = (meta.producer_id, meta.producer_epoch) == (expected_pid, expected_epoch)
            retry = (meta.last_producer_id, meta.last_producer_epoch) == (expected_pid, expected_epoch)
            if retry and meta.state is TxnState.EMPTY:
                return meta.producer_id, meta.producer_epoch
            if not current:
                raise TxnError(
                    ErrorCode.PRODUCER_FENCED,
                    f"{transactional_id}: producer {expected_pid} epoch {expected_epoch} is not the current one",
                )
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: markers are being written")
        if meta.state is TxnState.ONGOING:
            await self._fence_and_abort(meta)
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: aborting its open transaction")
        now = self.now()
        if meta.producer_epoch < 0 or not meta.epoch_exhausted():
            pid, epoch = meta.producer_id, meta.producer_epoch + 1
        else:
            pid, epoch = self.producer_ids.next_id(), 0
        meta.prepare(
            TxnState.EMPTY,
            now,
            producer_id=pid,
            producer_epoch=epoch,
            timeout_ms=timeout_ms,
            partitions=set(),
            start_ms=-1,
            client_transaction_version=0,
        )
        await self._write(meta)
        return meta.producer_id, meta.producer_epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------------------
    def _validate(self, transactional_id: str, pid: int, epoch: int) -> TxnMetadata:
        self._check(transactional_id)
        meta = self.txns.get(transactional_id)
        if meta is None or meta.producer_id != pid:
            raise TxnError(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{transactional_id} is not mapped to producer {pid}")
        if meta.producer_epoch != epoch:
            raise TxnError(ErrorCode.PRODUCER_FENCED, f"{transactional_id}: epoch {epoch} is not {meta.producer_epoch}")
        if meta.pending is not None:
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: a state change is in progress")
        return meta

    async def add_partitions(
        self,
        transactional_id: str,
        pid: int,
        epoch: int,
        tps: set[tuple[str, int]],
        *,
        transactions_v2: bool = False,
    ) -> None:
        """Add ``tps`` to the transaction (starting it); raises ``TxnError``. ``transactions_v2``: the add comes
        from a leader for a v2 client's Produce v12 / TxnOffsetCommit v5, so its EndTxn will bump the epoch."""
        meta = self._validate(transactional_id, pid, epoch)
        if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) or transactional_id in self._completing:
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: the previous transaction is ending")
        ongoing = meta.state is TxnState.ONGOING
        version = 2 if transactions_v2 else (meta.client_transaction_version if ongoing else 0)
        if ongoing and tps <= meta.partitions and version == meta.client_transaction_version:
            return
        now = self.now()
        start = meta.start_ms if ongoing else now
        meta.prepare(
            TxnState.ONGOING,
            now,
            partitions=meta.partitions | tps,
            start_ms=start,
            client_transaction_version=version,
        )
        await self._write(meta)

    def verify_partitions(
        self, transactional_id: str, pid: int, epoch: int, tps: set[tuple[str, int]]
    ) -> dict[tuple[str, int], ErrorCode]:
        """KIP-890 part 1 (AddPartitionsToTxn v4+ ``verify_only``): the partitions of ``tps`` that are not in the
        producer's ongoing transaction, each with its error (INVALID_TXN_STATE), or every partition with the
        producer's error (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS while a state
        change or the markers are written, NOT_COORDINATOR...); empty when all are in it. Changes nothing."""
        try:
            meta = self._validate(transactional_id, pid, epoch)
            if meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT) or transactional_id in self._completing:
                raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: the transaction is ending")
        except TxnError as e:
            return dict.fromkeys(tps, e.error_code)
        added = meta.partitions if meta.state is TxnState.ONGOING else set()
        return {tp: ErrorCode.INVALID_TXN_STATE for tp in tps if tp not in added}

    # -- EndTxn -----------------------------------------------------------------------------------------
    async def end_txn(
        self, transactional_id: str, pid: int, epoch: int, commit: bool, *, transactions_v2: bool = False
    ) -> tuple[int, int]:
        """Commit or abort: answers once PrepareCommit/PrepareAbort is written with the producer id and epoch the
        producer goes on with (new ones under ``transactions_v2``, EndTxn v5); raises ``TxnError``. The rules of
        retries and epochs are the module docstring's."""
        self._check(transactional_id)
        meta = self.txns.get(transactional_id)
        if meta is None:
            raise TxnError(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{transactional_id} is not mapped to producer {pid}")
        v2 = meta.transactions_v2
        retry_overflow = (
            v2
            and meta.producer_id != pid
            and meta.previous_producer_id == pid
            and epoch == MAX_EPOCH - 1
            and meta.producer_epoch == 0
        )
        retry_bump = v2 and meta.producer_id == pid and meta.producer_epoch == epoch + 1
        if meta.producer_id != pid and not retry_overflow:
            raise TxnError(ErrorCode.INVALID_PRODUCER_ID_MAPPING, f"{transactional_id} is not mapped to producer {pid}")
        state = meta.state
        if not v2:
            valid = epoch == meta.producer_epoch
        elif state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            valid = retry_bump
        elif state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            valid = retry_bump or retry_overflow or (transactions_v2 and epoch == meta.producer_epoch)
        else:
            valid = epoch == meta.producer_epoch
        if not valid:
            raise TxnError(
                ErrorCode.PRODUCER_FENCED,
                f"{transactional_id}: producer {pid} epoch {epoch} is not the current one "
                f"({meta.producer_id} epoch {meta.producer_epoch})",
            )
        if meta.pending is not None:
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: a state change is in progress")
        want = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        prepared = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
        retry = retry_bump or retry_overflow or (not v2 and not transactions_v2)
        if state is TxnState.ONGOING:
            return await self._prepare_end(meta, prepared, transactions_v2)
        if state is want and retry:
            return meta.producer_id, meta.producer_epoch  # a retry of an EndTxn that succeeded
        if state is prepared and retry:
            raise TxnError(ErrorCode.CONCURRENT_TRANSACTIONS, f"{transactional_id}: markers are being written")
        if transactions_v2 and not commit and not retry and state in (TxnState.EMPTY, *_COMPLETE):
            return await self._prepare_end(meta, prepared, True)  # an empty transaction aborted: bump the epoch
        raise TxnError(
            ErrorCode.INVALID_TXN_STATE,
            f"{transactional_id}: cannot {'commit' if commit else 'abort'} in state {state.display}",
        )

    async def _prepare_end(self, meta: TxnMetadata, prepared: TxnState, bump: bool) -> tuple[int, int]:
        """Write PrepareCommit/PrepareAbort (with the epoch bumped, and a new producer id to move to when the
        epoch is exhausted, under ``bump``) and start the markers; the producer id and epoch to go on with."""
        if not bump:
            meta.prepare(prepared, self.now())
            await self._write(meta)
            self._start_completion(meta)
            return meta.producer_id, meta.producer_epoch
        next_pid = self.producer_ids.next_id() if meta.epoch_exhausted() else -1
        partitions = meta.partitions if meta.state is TxnState.ONGOING else set()
        meta.prepare(
            prepared,
            self.now(),
            producer_epoch=meta.producer_epoch + 1,
            partitions=set(partitions),
            next_producer_id=next_pid,
            client_transaction_version=2,
        )
        await self._write(meta)
        self._start_completion(meta)
        return (next_pid, 0) if next_pid >= 0 else (meta.producer_id, meta.producer_epoch)

    async def _fence_and_abort(self, meta: TxnMetadata) -> None:
        """Abort an Ongoing transaction with the epoch bumped (PrepareEpochFence, then PrepareAbort). A
        transactions-v2 transaction gets the fence's bump and its abort's (+2, as Kafka), so the fenced producer's
        EndTxn (epoch + 1 would look like a retry) is PRODUCER_FENCED; reaching 32766 moves to a new producer id."""
        if meta.transactions_v2:
            epoch = min(meta.producer_epoch + 2, MAX_EPOCH)
            next_pid = self.producer_ids.next_id() if epoch >= MAX_EPOCH - 1 else -1
            meta.prepare(
                TxnState.PREPARE_ABORT, self.now(), producer_epoch=epoch, next_producer_id=next_pid, fenced=True
            )
            await self._write(meta)
            self._start_completion(meta)
            return
        epoch = meta.producer_epoch + 1 if not meta.epoch_exhausted() else meta.producer_epoch
        meta.prepare(TxnState.PREPARE_ABORT, self.now(), producer_epoch=epoch, fenced=True)
        await self._write(meta)
        self._start_completion(meta)

    def _start_completion(self, meta: TxnMetadata) -> None:
        tid = meta.transactional_id
        if tid not in self._completing:
            task = asyncio.get_running_loop().create_task(self._complete(meta), name=f"txn-markers-{tid}")
            self._completing[tid] = task

    async def _complete(self, meta: TxnMetadata) -> None:
        tid = meta.transactional_id
        try:
            commit = meta.state is TxnState.PREPARE_COMMIT
            coordinator_epoch = self.topic.loaded.get(self.partition_of(tid), 0)
            await self.markers.write_markers(
                meta.producer_id, meta.producer_epoch, commit, coordinator_epoch, set(meta.partitions)
            )
            while True:
                try:
                    moved = {}
                    if meta.transactions_v2 and meta.next_producer_id >= 0:  # the epoch was exhausted: a new id
                        moved = {"producer_id": meta.next_producer_id, "producer_epoch": 0}
                    meta.prepare(
                        TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT,
                        self.now(),
                        partitions=set(),
                        **moved,
                    )
                    await self._write(meta)
                    break
                except TxnError as e:
                    if e.error_code in (ErrorCode.NOT_COORDINATOR,):
                        return
                    log.info("transaction %s: writing its completion failed (%s); retrying", tid, e)
                    await asyncio.sleep(0.1)
            log.info("transaction %s: %s", tid, meta.state.display)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("transaction %s: completing failed", tid)
        finally:
            if self._completing.get(tid) is asyncio.current_task():
                del self._completing[tid]

    # -- tools ------------------------------------------------------------------------------------------------
    def describe(self, transactional_id: str) -> TxnMetadata:
        self._check(transactional_id)
        meta = self.txns.get(transactional_id)
        if meta is None or meta.producer_epoch < 0:
            raise TxnError(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, f"{transactional_id} is unknown")
        return meta

    def _coordinated(self) -> list[TxnMetadata]:
        """The transactions of the ids coordinated here (loaded, with a producer epoch), by id."""
        return [
            meta
            for tid, meta in sorted(self.txns.items())
            if self.partition_of(tid) in self.topic.loaded and meta.producer_epoch >= 0
        ]

    def list_transactions(
        self, states: set[TxnState] | None, producer_ids: set[int] | None, min_duration_ms: int = -1
    ) -> list[TxnMetadata]:
        now = self.now()
        out = []
        for meta in self._coordinated():
            if states and meta.state not in states:
                continue
            if producer_ids and meta.producer_id not in producer_ids:
                continue
            if min_duration_ms >= 0 and (meta.start_ms < 0 or now - meta.start_ms < min_duration_ms):
                continue
            out.append(meta)
        return out

    # -- figures for broker.metrics ------------------------------------------------------------------------------
    def transactions_by_state(self) -> dict[str, int]:
        """Kafka's name of every transaction state (``Ongoing``, ``PrepareCommit``...) -> the transactional ids
        coordinated here in it, as ListTransactions lists them (0 for the states none is in)."""
        counts = dict.fromkeys((state.display for state in TxnState), 0)
        for meta in self._coordinated():
            counts[meta.state.display] += 1
        return counts

    # -- timers -------------------------------------------------------------------------------------------------
    async def _on_tick(self) -> None:
        now = self.now()
        if now >= self._next_abort_ms:
            self._next_abort_ms = now + self.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"]
            await self.abort_timed_out(now)
        if now >= self._next_expire_ms:
            self._next_expire_ms = now + self.config["transaction.remove.expired.transaction.cleanup.interval.ms"]
            await self.expire_ids(now)

    async def abort_timed_out(self, now: int) -> int:
        """Abort (fencing the producer) every Ongoing transaction open longer than its timeout."""
        aborted = 0
        for tid, meta in list(self.txns.items()):
            if self.partition_of(tid) not in self.topic.loaded or meta.pending is not None:
                continue
            if meta.state is TxnState.ONGOING and meta.start_ms >= 0 and now - meta.start_ms > meta.timeout_ms:
                log.info("transaction %s: open longer than %d ms, aborting", tid, meta.timeout_ms)
                try:
                    await self._fence_and_abort(meta)
                    aborted += 1
                except TxnError as e:
                    log.info("transaction %s: timeout abort failed: %s", tid, e)
        return aborted

    async def expire_ids(self, now: int) -> int:
        """Remove transactional ids idle for ``transactional.id.expiration.ms`` (a tombstone each)."""
        limit = self.config["transactional.id.expiration.ms"]
        removed = 0
        for tid, meta in list(self.txns.items()):
            p = self.partition_of(tid)
            if p not in self.topic.loaded or meta.pending is not None or tid in self._completing:
                continue
            if meta.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT) and (
                meta.last_update_ms >= 0 and now - meta.last_update_ms >= limit
            ):
                b = RecordBatchBuilder()
                b.append(now, encode_txn_key(tid), None)
                meta.pending = meta.to_value()
                try:
                    await self._append(p, bytearray(b.build()), functools.partial(self.txns.pop, tid, None))
                    removed += 1
                    log.info("transactional id %s expired", tid)
                except TxnError as e:
                    log.info("transactional id %s: expiry failed: %s", tid, e)
                finally:
                    meta.pending = None
        return removed

    # -- writes ---------------------------------------------------------------------------------------------------
    async def _write(self, meta: TxnMetadata) -> None:
        """Append ``meta.pending`` and wait for its acknowledgement, then complete it; raises ``TxnError`` (the
        pending transition is dropped)."""
        v = meta.pending
        assert v is not None
        b = RecordBatchBuilder()
        b.append(self.now(), encode_txn_key(meta.transactional_id), encode_txn_value(v, self.log_value_version))
        try:
            await self._append(self.partition_of(meta.transactional_id), bytearray(b.build()), meta.complete)
        except BaseException:
            if meta.pending is v:
                meta.abandon()
            raise

    async def _append(self, p: int, batch: bytearray, on_commit: Callable[[], object]) -> None:
        """``InternalTopic.append`` (acks=all, ``on_commit`` in log order once acknowledged); raises
        ``TxnError`` with its error."""
        code = await self.topic.append(p, batch, on_commit)
        if code != ErrorCode.NONE:
            raise TxnError(code, f"writing to {TRANSACTION_STATE_TOPIC}-{p} failed: {code.name}")
