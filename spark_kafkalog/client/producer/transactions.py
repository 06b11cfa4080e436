"""The transactional producer's state (Kafka's ``TransactionManager``): ``init_transactions``, ``begin``,
the partitions and group offsets of a transaction, ``commit`` and ``abort``, against the transaction
coordinator of ``transactional.id``.

States (``TxnState``)::

    UNINITIALIZED --init_transactions--> READY --begin--> IN_TRANSACTION --commit--> COMMITTING --> READY
                                                              |  \\--abort--> ABORTING --> READY
                                  a failed send or call ----> ABORTABLE_ERROR --abort--> ABORTING
    fencing (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ...) -> FATAL_ERROR

Requests, as the Java client sends them: FindCoordinator (key type 1) and InitProducerId(transactional id,
``transaction.timeout.ms``; v3+ with the current producer id and epoch, so an abortable error or a restart
bumps the epoch) on the coordinator; AddPartitionsToTxn (v0-3) for every partition before its first batch of
a transaction is sent (from the sender thread: ``add_partitions``); AddOffsetsToTxn then TxnOffsetCommit (to
the group's coordinator) for ``send_offsets``; EndTxn.

Transactions v2 (KIP-890 part 2), used when the coordinator's ApiVersions finalizes ``transaction.version`` >= 2
and serves EndTxn v5 (decided at ``init_transactions`` and again at each ``begin``, as Kafka 4.x's client):
no AddPartitionsToTxn (the sender's Produce v12 makes the leader add the partition) and no AddOffsetsToTxn
(TxnOffsetCommit v5 adds the group's partition); EndTxn v5 answers the producer id and epoch of the next
transaction (the epoch is bumped on every commit or abort), which the producer takes on, its sequences
restarting at 0. Without it: Produce at most v11, TxnOffsetCommit at most v4, EndTxn at most v4. A transaction
that sent nothing ends without an EndTxn either way. Coordinator moves (NOT_COORDINATOR,
COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS) and CONCURRENT_TRANSACTIONS (the previous
transaction's markers are still being written) are retried with backoff until the caller's deadline.

Steps and drivers: each operation that talks to a coordinator (``init_steps``, ``begin_steps``,
``add_partitions_steps``, ``send_offsets_steps``, ``end_steps``) is a generator holding the state changes,
the request bodies, the answer checks and the retry/deadline loop; it does no I/O itself but yields steps
(``txn_steps``: ``Request``, ``Versions``, ``KnowBroker``, ``Sleep``) and a failed step's error is thrown
back into it where it asked. ``TransactionManager``'s methods (``init``, ``begin``, ``add_partitions``, ``send_offsets``,
``end``) run them with the blocking loop (``drive``/``perform``: ``KafkaClient.send_request``,
``time.sleep``); ``aio.transactions.AsyncTransactionManager`` runs the same generators on its
``AsyncKafkaClient`` (``asyncio.sleep``), so both producers keep one state machine and one set of requests.

Threads: the caller's thread runs ``init``/``begin``/``commit``/``abort``/``send_offsets``, the sender
thread ``add_partitions``; ``lock`` guards the state (never held across a step). Coordinator requests go
through a ``KafkaClient`` of this object's own (the sender's client stays free for produce requests).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.core.coordinator import coordinator_error, find_coordinator_request, parse_find_coordinator
from spark_kafkalog.client.errors import KafkaClientError, KafkaTimeoutError, error_for_code
from spark_kafkalog.client.network.retry import backoff_ms
from spark_kafkalog.client.producer.txn_steps import KnowBroker, Request, Sleep, Step, Steps, Versions, run_steps
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = ["TransactionError", "TransactionManager", "TxnState", "ProducerFencedError", "FENCING_ERRORS"]

log = logging.getLogger("kafkalog.producer")
T = TypeVar("T")

_TXN_KEY_TYPE = 1
_INIT_PID_WITH_EPOCH_FROM = 3
_ADD_PARTITIONS_CLIENT_MAX = 3  # v4+ is the brokers' batched form (KIP-890)
TRANSACTION_VERSION_FEATURE = "transaction.version"
_END_TXN_V2 = 5  # EndTxn v5, Produce v12 and TxnOffsetCommit v5 mean transactions v2
PRODUCE_V2, PRODUCE_V1_MAX = 12, 11
_TXN_OFFSET_COMMIT_V2, _TXN_OFFSET_COMMIT_V1_MAX = 5, 4
_TXN_OFFSET_COMMIT_BY_NAME_MAX = 5  # v6 names topics by id (KIP-1319), which this client does not send
_CONCURRENT_TXN_BACKOFF_S = 0.02

_COORDINATOR_MOVED = frozenset(
    (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
)
_RETRY = _COORDINATOR_MOVED | {ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.REQUEST_TIMED_OUT}
FENCING_ERRORS = frozenset(
    (
        ErrorCode.PRODUCER_FENCED,
        ErrorCode.INVALID_PRODUCER_EPOCH,
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        ErrorCode.UNSUPPORTED_VERSION,
    )
)


class TxnState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"
    FATAL_ERROR = "fatal error"


class TransactionError(KafkaClientError):
    """A transaction call not allowed in the current state, or a transaction that must be aborted."""

    def __init__(self, message: str, *, abortable: bool = False, error_code: int | None = None) -> None:
        super().__init__(message, error_code=error_code, retriable=False)
        self.abortable = abortable


class ProducerFencedError(TransactionError):
    """Another producer with the same ``transactional.id`` (a newer epoch) took over: close this one."""


class _ProducerIdentity:
    """The producer id and epoch of a transaction resumed from elsewhere (``TransactionManager.resume``)."""

    def __init__(self, producer_id: int, producer_epoch: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch


class TransactionManager:
    """One transactional id's state; see the module docstring. ``idempotence`` is the sender's
    ``IdempotenceState`` (producer id, epoch, sequences), set here instead of by the sender."""

    def __init__(self, client: KafkaClient, transactional_id: str, timeout_ms: int, idempotence: Any) -> None:
        self.client = client
        self.transactional_id = transactional_id
        self.timeout_ms = timeout_ms
        self.idempotence = idempotence
        self.lock = threading.Lock()
        self.state = TxnState.UNINITIALIZED
        self.last_error: BaseException | None = None
        self.partitions: set[TopicPartition] = set()  # added to the current transaction
        self._offsets_added = False
        self._coordinator: int | None = None
        self._group_coordinators: dict[str, int] = {}
        self.transactions_v2 = False  # see the module docstring; read by the sender for its Produce version
        self._v2_decided = False  # a resumed transaction decides at its EndTxn

    @classmethod
    def resume(
        cls, client: KafkaClient, transactional_id: str, producer_id: int, producer_epoch: int
    ) -> TransactionManager:
        """The open transaction another process started with ``producer_id``/``producer_epoch`` (a Spark task
        that wrote it and left it open), to be ended here with ``end`` (the driver's commit or abort). The
        coordinator refuses the EndTxn (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH) when a newer producer of the
        id took over or the transaction timed out and was aborted."""
        manager = cls(client, transactional_id, -1, _ProducerIdentity(producer_id, producer_epoch))
        manager.state = TxnState.IN_TRANSACTION
        manager._offsets_added = True  # unknown here what it added: always send EndTxn
        return manager

    # state ---------------------------------------------------------------------------------------
    def _require(self, what: str, *allowed: TxnState) -> None:
        if self.state in allowed:
            return
        if self.state is TxnState.FATAL_ERROR:
            raise ProducerFencedError(f"cannot {what}: the producer failed for good ({self.last_error})")
        if self.state is TxnState.ABORTABLE_ERROR:
            raise TransactionError(
                f"cannot {what}: the transaction failed ({self.last_error}); call abort_transaction()", abortable=True
            )
        raise TransactionError(f"cannot {what} in state '{self.state.value}'")

    def fail(self, error: BaseException) -> None:
        """A send or request of the current transaction failed: fatal when fenced, else abortable."""
        with self.lock:
            if self.state is TxnState.FATAL_ERROR:
                return
            self.last_error = error
            code = getattr(error, "error_code", None)
            if isinstance(error, ProducerFencedError) or code in FENCING_ERRORS:
                self.state = TxnState.FATAL_ERROR
            elif self.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING, TxnState.ABORTABLE_ERROR):
                self.state = TxnState.ABORTABLE_ERROR

    @property
    def in_transaction(self) -> bool:
        return self.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING, TxnState.ABORTING)

    # drivers -------------------------------------------------------------------------------------
    def drive(self, steps: Steps[T]) -> T:
        """Run an operation's steps to its result on this thread (``txn_steps.run_steps`` with ``perform``)."""
        return run_steps(steps, self.perform)

    def perform(self, step: Step) -> Any:
        """One step on this object's blocking ``KafkaClient``."""
        client = self.client
        if isinstance(step, Request):
            return client.send_request(
                step.api_key, step.body, node_id=step.node, min_version=step.min_version, max_version=step.max_version
            )
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
        elif isinstance(step, Versions):
            return client.connection(step.node).versions
        elif client.broker_address(step.node) is None:  # KnowBroker
            client.refresh_metadata_once([])
        return None

    # coordinator calls ---------------------------------------------------------------------------
    def _find_coordinator(self, key: str, key_type: int) -> Steps[int]:
        version, response = yield Request(
            ApiKey.FIND_COORDINATOR, lambda v: find_coordinator_request(v, key, key_type), None, min_version=1
        )
        found = parse_find_coordinator(version, response, key)
        if found.error_code != ErrorCode.NONE:
            error = coordinator_error(found, key)
            self.client.name_principal(error)
            raise error
        yield KnowBroker(int(found.node_id))
        return int(found.node_id)

    def _call(self, what: str, deadline: float, attempt: Callable[[], Steps[T]]) -> Steps[T]:
        """Run ``attempt()``'s steps until it succeeds, retrying coordinator moves, lost connections and
        concurrent transactions with backoff until ``deadline`` (monotonic seconds)."""
        cfg = self.client.config
        tries = 0
        while True:
            try:
                return (yield from attempt())
            except KafkaClientError as e:
                code = getattr(e, "error_code", None)
                if code in _COORDINATOR_MOVED or code is None and e.retriable:
                    self._coordinator = None
                    self._group_coordinators.clear()
                if not (e.retriable or code in _RETRY):
                    raise
                tries += 1
                if code == ErrorCode.CONCURRENT_TRANSACTIONS:
                    # the previous transaction's markers are being written (EndTxn answers before they are):
                    # a short fixed wait, as Java's client does after a commit, not retry.backoff.ms
                    delay = _CONCURRENT_TXN_BACKOFF_S
                else:
                    delay = backoff_ms(tries, cfg.retry_backoff_ms, cfg.retry_backoff_max_ms) / 1000.0
                if time.monotonic() + delay > deadline:
                    raise KafkaTimeoutError(
                        f"{what} for transactional id {self.transactional_id!r} timed out: {e}"
                    ) from e
                log.debug("%s: %s; retrying in %.0f ms", what, e, delay * 1000)
                yield Sleep(delay)

    def _update_transactions_v2(self) -> Steps[None]:
        """Use transactions v2 when the coordinator finalizes ``transaction.version`` >= 2 and serves EndTxn v5."""
        if self._coordinator is None:
            self._coordinator = yield from self._find_coordinator(self.transactional_id, _TXN_KEY_TYPE)
        versions = yield Versions(self._coordinator)
        self.transactions_v2 = versions.feature_level(TRANSACTION_VERSION_FEATURE) >= 2 and versions.supports(
            ApiKey.END_TXN, _END_TXN_V2
        )
        self._v2_decided = True

    def _txn_request(self, api_key: int, build: Any, *, max_version: int | None = None) -> Steps[tuple[int, Any]]:
        if self._coordinator is None:
            self._coordinator = yield from self._find_coordinator(self.transactional_id, _TXN_KEY_TYPE)
        try:
            answer: tuple[int, Any] = yield Request(api_key, build, self._coordinator, max_version=max_version)
        except KafkaClientError:
            self._coordinator = None
            raise
        return answer

    def _check(
        self, code: int, what: str, detail: str = "", *, topic: str | None = None, group_id: str | None = None
    ) -> None:
        """Raise the error ``code`` means (nothing for NONE). An authorization error names its resource: the
        transactional id (53), ``group_id`` (30) or ``topic`` (29), and this client's principal."""
        if code == ErrorCode.NONE:
            return
        if code in (ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH):
            raise ProducerFencedError(
                f"{what}: {ErrorCode(code).name}: another producer with the same transactional.id took over{detail}",
                error_code=code,
            )
        resource = {
            ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: self.transactional_id,
            ErrorCode.GROUP_AUTHORIZATION_FAILED: group_id,
        }.get(ErrorCode(code))
        error = error_for_code(code, what, detail=detail or None, topic=topic, resource_name=resource)
        self.client.name_principal(error)
        raise error

    # the blocking operations ---------------------------------------------------------------------
    def init(self, timeout_s: float) -> None:
        """``init_steps`` on this thread."""
        self.drive(self.init_steps(timeout_s))

    def begin(self) -> None:
        """``begin_steps`` on this thread."""
        self.drive(self.begin_steps())

    def add_partitions(self, partitions: Iterable[TopicPartition], timeout_s: float) -> None:
        """``add_partitions_steps`` on this thread (the sender's)."""
        self.drive(self.add_partitions_steps(partitions, timeout_s))

    def send_offsets(
        self, offsets: Mapping[TopicPartition, Any], group_id: str, group_metadata: Any, timeout_s: float
    ) -> None:
        """``send_offsets_steps`` on this thread."""
        self.drive(self.send_offsets_steps(offsets, group_id, group_metadata, timeout_s))

    def end(self, commit: bool, timeout_s: float) -> None:
        """``end_steps`` on this thread."""
        self.drive(self.end_steps(commit, timeout_s))

    # init ----------------------------------------------------------------------------------------
    def init_steps(self, timeout_s: float) -> Steps[None]:
        """InitProducerId with the transactional id: fences older producers of the id and completes (aborts)
        their open transaction; a second call after an abortable error bumps the epoch (KIP-360)."""
        with self.lock:
            self._require("init_transactions", TxnState.UNINITIALIZED, TxnState.READY, TxnState.ABORTABLE_ERROR)
            self.state = TxnState.INITIALIZING
        deadline = time.monotonic() + timeout_s
        idem = self.idempotence
        R = API_BY_KEY[ApiKey.INIT_PRODUCER_ID].Request

        def build(version: int) -> Any:
            known = version >= _INIT_PID_WITH_EPOCH_FROM and idem.producer_id >= 0
            return R(
                transactional_id=self.transactional_id,
                transaction_timeout_ms=self.timeout_ms,
                producer_id=idem.producer_id if known else -1,
                producer_epoch=idem.producer_epoch if known else -1,
            )

        def attempt() -> Steps[Any]:
            _, response = yield from self._txn_request(ApiKey.INIT_PRODUCER_ID, build)
            self._check(response.error_code, "InitProducerId", f" (transactional id {self.transactional_id!r})")
            return response

        try:
            response = yield from self._call("InitProducerId", deadline, attempt)
        except BaseException as e:
            with self.lock:
                self.state = TxnState.UNINITIALIZED
                if isinstance(e, ProducerFencedError):
                    self.state, self.last_error = TxnState.FATAL_ERROR, e
            raise
        idem.set_producer_id(response.producer_id, response.producer_epoch)
        try:
            yield from self._update_transactions_v2()
        except KafkaClientError as e:  # the coordinator just answered: keep the last decision
            log.debug("transactional id %r: features not read: %s", self.transactional_id, e)
        with self.lock:
            self.state = TxnState.READY
            self.partitions.clear()
            self._offsets_added = False
        log.info(
            "transactional id %r: producer id %d epoch %d (transactions v%d)",
            self.transactional_id,
            response.producer_id,
            response.producer_epoch,
            2 if self.transactions_v2 else 1,
        )

    # a transaction -------------------------------------------------------------------------------
    def begin_steps(self) -> Steps[None]:
        with self.lock:
            self._require("begin_transaction", TxnState.READY)
        try:
            yield from self._update_transactions_v2()
        except KafkaClientError as e:
            log.debug("transactional id %r: features not read: %s", self.transactional_id, e)
        with self.lock:
            self._require("begin_transaction", TxnState.READY)
            self.state = TxnState.IN_TRANSACTION
            self.partitions.clear()
            self._offsets_added = False

    def check_can_send(self, what: str = "send") -> None:
        """For ``send`` (and ``commit_transaction``): a transactional producer's records need an open transaction."""
        if self.state is not TxnState.IN_TRANSACTION:
            with self.lock:
                self._require(what, TxnState.IN_TRANSACTION)

    def not_added(self, partitions: Iterable[TopicPartition]) -> set[TopicPartition]:
        return {tp for tp in partitions if tp not in self.partitions}

    def add_partitions_steps(self, partitions: Iterable[TopicPartition], timeout_s: float) -> Steps[None]:
        """AddPartitionsToTxn for ``partitions`` (the sender, before their first batch is sent); raises
        ``TransactionError`` (the transaction is then abortable) or ``ProducerFencedError``. With transactions
        v2 no step: the partitions are only remembered (the Produce adds them)."""
        new = sorted(self.not_added(partitions))
        if not new:
            return
        if self.transactions_v2:  # Produce v12 adds them: only remember the transaction has started
            with self.lock:
                self.partitions.update(new)
            return
        idem = self.idempotence
        R = API_BY_KEY[ApiKey.ADD_PARTITIONS_TO_TXN].Request
        by_topic: dict[str, list[int]] = {}
        for tp in new:
            by_topic.setdefault(tp.topic, []).append(tp.partition)

        def build(version: int) -> Any:
            topics = [R.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in by_topic.items()]
            return R(
                v3_and_below_transactional_id=self.transactional_id,
                v3_and_below_producer_id=idem.producer_id,
                v3_and_below_producer_epoch=idem.producer_epoch,
                v3_and_below_topics=topics,
            )

        def attempt() -> Steps[None]:
            _, response = yield from self._txn_request(
                ApiKey.ADD_PARTITIONS_TO_TXN, build, max_version=_ADD_PARTITIONS_CLIENT_MAX
            )
            errors = {
                TopicPartition(t.name, p.partition_index): p.partition_error_code
                for t in response.results_by_topic_v3_and_below
                for p in t.results_by_partition
            }
            failed = {
                tp: code
                for tp, code in errors.items()
                if code not in (ErrorCode.NONE, ErrorCode.OPERATION_NOT_ATTEMPTED)
            }
            if not failed:
                return
            fencing = [c for c in failed.values() if c in FENCING_ERRORS]  # a fencing error anywhere decides
            code = fencing[0] if fencing else next(iter(failed.values()))
            self._check(
                code,
                "AddPartitionsToTxn",
                f" ({', '.join(f'{tp}: {ErrorCode(c).name}' for tp, c in failed.items())})",
                topic=next(tp.topic for tp, c in failed.items() if c == code),
            )

        try:
            yield from self._call("AddPartitionsToTxn", time.monotonic() + timeout_s, attempt)
        except KafkaClientError as e:
            self.fail(e)
            raise
        with self.lock:
            self.partitions.update(new)

    def send_offsets_steps(
        self, offsets: Mapping[TopicPartition, Any], group_id: str, group_metadata: Any, timeout_s: float
    ) -> Steps[None]:
        """AddOffsetsToTxn, then TxnOffsetCommit of ``offsets`` (``TopicPartition`` -> offset, or an object with
        ``offset`` and ``metadata``/``leader_epoch``) to the group's coordinator: the offsets become the group's
        committed offsets when the transaction commits. ``group_metadata`` (a consumer's ``group_metadata()``:
        generation id, member id, group instance id) fences zombie group members (TxnOffsetCommit v3+)."""
        with self.lock:
            self._require("send_offsets_to_transaction", TxnState.IN_TRANSACTION)
        deadline = time.monotonic() + timeout_s
        idem = self.idempotence
        try:
            if not self._offsets_added and not self.transactions_v2:  # v2: TxnOffsetCommit v5 adds the partition
                R = API_BY_KEY[ApiKey.ADD_OFFSETS_TO_TXN].Request
                body = R(
                    transactional_id=self.transactional_id,
                    producer_id=idem.producer_id,
                    producer_epoch=idem.producer_epoch,
                    group_id=group_id,
                )

                def add() -> Steps[None]:
                    _, response = yield from self._txn_request(ApiKey.ADD_OFFSETS_TO_TXN, body)
                    self._check(response.error_code, "AddOffsetsToTxn", f" (group {group_id!r})", group_id=group_id)

                yield from self._call("AddOffsetsToTxn", deadline, add)
                self._offsets_added = True
            yield from self._call(
                "TxnOffsetCommit", deadline, lambda: self._txn_offset_commit(offsets, group_id, group_metadata)
            )
            self._offsets_added = True
        except KafkaClientError as e:
            self.fail(e)
            raise

    def _txn_offset_commit(
        self, offsets: Mapping[TopicPartition, Any], group_id: str, group_metadata: Any
    ) -> Steps[None]:
        node = self._group_coordinators.get(group_id)
        if node is None:
            node = self._group_coordinators[group_id] = yield from self._find_coordinator(group_id, 0)
        idem = self.idempotence
        R = API_BY_KEY[ApiKey.TXN_OFFSET_COMMIT].Request
        by_topic: dict[str, list[Any]] = {}
        for tp, value in sorted(offsets.items()):
            offset = value if isinstance(value, int) else value.offset
            metadata = "" if isinstance(value, int) else (getattr(value, "metadata", "") or "")
            epoch = -1 if isinstance(value, int) else getattr(value, "leader_epoch", -1)
            by_topic.setdefault(tp.topic, []).append(
                R.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                    partition_index=tp.partition,
                    committed_offset=offset,
                    committed_leader_epoch=-1 if epoch is None else epoch,
                    committed_metadata=metadata,
                )
            )
        generation = getattr(group_metadata, "generation_id", -1)
        member = getattr(group_metadata, "member_id", "") or ""
        instance = getattr(group_metadata, "group_instance_id", None)
        body = R(
            transactional_id=self.transactional_id,
            group_id=group_id,
            producer_id=idem.producer_id,
            producer_epoch=idem.producer_epoch,
            generation_id=generation,
            member_id=member,
            group_instance_id=instance,
            topics=[R.TxnOffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
        )
        try:
            _, response = yield Request(
                ApiKey.TXN_OFFSET_COMMIT,
                body,
                node,
                min_version=_TXN_OFFSET_COMMIT_V2 if self.transactions_v2 else 0,
                max_version=_TXN_OFFSET_COMMIT_BY_NAME_MAX if self.transactions_v2 else _TXN_OFFSET_COMMIT_V1_MAX,
            )
        except KafkaClientError:
            self._group_coordinators.pop(group_id, None)
            raise
        for topic in response.topics:
            for p in topic.partitions:
                if p.error_code in _COORDINATOR_MOVED:
                    self._group_coordinators.pop(group_id, None)
                self._check(
                    p.error_code,
                    "TxnOffsetCommit",
                    f" ({topic.name}-{p.partition_index}, group {group_id!r})",
                    topic=topic.name,
                    group_id=group_id,
                )

    def end_steps(self, commit: bool, timeout_s: float) -> Steps[None]:
        """EndTxn (when the transaction added anything), then READY. The caller has flushed (commit) or
        failed the unsent batches (abort) already."""
        what = "commit_transaction" if commit else "abort_transaction"
        with self.lock:
            if commit:
                self._require(what, TxnState.IN_TRANSACTION, TxnState.COMMITTING)
                self.state = TxnState.COMMITTING
            else:
                self._require(what, TxnState.IN_TRANSACTION, TxnState.ABORTABLE_ERROR, TxnState.ABORTING)
                self.state = TxnState.ABORTING
            started = bool(self.partitions) or self._offsets_added
        if started:
            idem = self.idempotence
            R = API_BY_KEY[ApiKey.END_TXN].Request
            body = R(
                transactional_id=self.transactional_id,
                producer_id=idem.producer_id,
                producer_epoch=idem.producer_epoch,
                committed=commit,
            )

            def attempt() -> Steps[tuple[int, Any]]:
                if not self._v2_decided:  # resumed (EndTxn v5 when the writer used v2: the cluster offers it)
                    yield from self._update_transactions_v2()
                version, response = yield from self._txn_request(
                    ApiKey.END_TXN, body, max_version=None if self.transactions_v2 else _END_TXN_V2 - 1
                )
                self._check(response.error_code, "EndTxn", f" (transactional id {self.transactional_id!r})")
                return version, response

            try:
                version, response = yield from self._call("EndTxn", time.monotonic() + timeout_s, attempt)
            except KafkaClientError as e:
                self.fail(e)
                raise
            if version >= _END_TXN_V2 and response.producer_id >= 0:  # the next transaction's id and epoch
                if isinstance(idem, _ProducerIdentity):
                    idem.producer_id, idem.producer_epoch = response.producer_id, response.producer_epoch
                else:
                    idem.set_producer_id(response.producer_id, response.producer_epoch)
        with self.lock:
            self.state = TxnState.READY
            self.partitions.clear()
            self._offsets_added = False
