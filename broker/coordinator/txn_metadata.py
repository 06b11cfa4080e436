"""One transactional id's state as the transaction coordinator holds it, and the legal state transitions.

States and codes are Kafka's (``TransactionState``); a transition is legal when the current state is one of
``VALID_PREVIOUS[target]``:

    Empty              <- Empty, CompleteCommit, CompleteAbort        (InitProducerId: new epoch)
    Ongoing            <- Ongoing, Empty, CompleteCommit, CompleteAbort (AddPartitionsToTxn/AddOffsetsToTxn)
    PrepareCommit      <- Ongoing                                      (EndTxn commit)
    PrepareAbort       <- Ongoing, PrepareEpochFence,                  (EndTxn abort, timeout, fencing;
                          Empty, CompleteCommit, CompleteAbort           transactions v2: an empty abort)
    CompleteCommit     <- PrepareCommit                                (every marker written)
    CompleteAbort      <- PrepareAbort
    Dead               <- Empty, CompleteCommit, CompleteAbort         (transactional id expired)
    PrepareEpochFence  <- Ongoing                                      (never written: a pending step only)

Transactions v2 (KIP-890 part 2, ``client_transaction_version`` 2): every PrepareCommit/PrepareAbort bumps the
producer epoch; when the epoch is exhausted the transition carries ``next_producer_id``, which becomes the
producer id (epoch 0) at CompleteCommit/CompleteAbort. ``previous_producer_id`` is the id before the latest
transition (a retried EndTxn of the old id is recognised by it).

A transition is first *prepared* (``prepare``: the target ``TxnLogValue`` is set as ``pending``, so further
requests answer CONCURRENT_TRANSACTIONS), written to ``__transaction_state``, and *completed* once the write
is acknowledged (``complete``) or dropped when it failed (``abandon``). Pure code, event-loop only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum

from .transaction_log import TxnLogValue

MAX_EPOCH = 32767


class TxnState(IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def display(self) -> str:
        """Kafka's name (``Empty``, ``PrepareCommit``...), as DescribeTransactions/ListTransactions answer."""
        return "".join(w.capitalize() for w in self.name.split("_"))

    @classmethod
    def from_display(cls, name: str) -> TxnState | None:
        return next((s for s in cls if s.display == name), None)


_COMPLETED = {TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    TxnState.EMPTY: frozenset(_COMPLETED),
    TxnState.ONGOING: frozenset(_COMPLETED | {TxnState.ONGOING}),
    TxnState.PREPARE_COMMIT: frozenset({TxnState.ONGOING}),
    TxnState.PREPARE_ABORT: frozenset(_COMPLETED | {TxnState.ONGOING, TxnState.PREPARE_EPOCH_FENCE}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.PREPARE_COMMIT}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.PREPARE_ABORT}),
    TxnState.DEAD: frozenset(_COMPLETED),
    TxnState.PREPARE_EPOCH_FENCE: frozenset({TxnState.ONGOING}),
}


class IllegalTransition(RuntimeError):
    """A transition ``VALID_PREVIOUS`` does not allow (a coordinator bug, never a client's error)."""


def can_transition(current: TxnState, target: TxnState) -> bool:
    return current in VALID_PREVIOUS[target]


@dataclass
class TxnMetadata:
    """``partitions`` is the set of (topic, partition) in the transaction; ``last_*`` the id and epoch before
    the latest change of either (KIP-360 retries); ``pending`` the transition being written; the transactions-v2
    fields as in the module docstring (written in ``__transaction_state`` value v1)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int = -1
    timeout_ms: int = 60000
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = -1
    last_update_ms: int = -1
    last_producer_id: int = -1
    last_producer_epoch: int = -1
    pending: TxnLogValue | None = None
    previous_producer_id: int = -1
    next_producer_id: int = -1
    client_transaction_version: int = 0

    @property
    def in_transaction(self) -> bool:
        return self.state in (TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

    def to_value(self) -> TxnLogValue:
        parts: dict[str, list[int]] = {}
        for t, p in self.partitions:
            parts.setdefault(t, []).append(p)
        return TxnLogValue(
            self.producer_id,
            self.producer_epoch,
            self.timeout_ms,
            int(self.state),
            {t: sorted(ps) for t, ps in parts.items()},
            self.last_update_ms,
            self.start_ms,
            self.previous_producer_id,
            self.next_producer_id,
            self.client_transaction_version,
        )

    @property
    def transactions_v2(self) -> bool:
        """The latest transition came from a transactions-v2 client (its EndTxn bumps the epoch)."""
        return self.client_transaction_version >= 2

    @classmethod
    def from_value(cls, transactional_id: str, v: TxnLogValue) -> TxnMetadata:
        return cls(
            transactional_id,
            v.producer_id,
            v.producer_epoch,
            v.timeout_ms,
            TxnState(v.status),
            {(t, p) for t, ps in v.partitions.items() for p in ps},
            v.start_ms,
            v.last_update_ms,
            previous_producer_id=v.previous_producer_id,
            next_producer_id=v.next_producer_id,
            client_transaction_version=v.client_transaction_version,
        )

    # -- transitions -----------------------------------------------------------------------------
    def prepare(self, target: TxnState, now_ms: int, **changes) -> TxnLogValue:
        """Set ``pending`` to this metadata moved to ``target`` with ``changes`` (producer_id,
        producer_epoch, timeout_ms, partitions, start_ms, next_producer_id, client_transaction_version); raises
        ``IllegalTransition``. As Kafka: ``previous_producer_id`` becomes the current id and ``next_producer_id``
        is reset unless given."""
        check_from = TxnState.PREPARE_EPOCH_FENCE if changes.pop("fenced", False) else self.state
        if not can_transition(check_from, target):
            raise IllegalTransition(f"{self.transactional_id}: {self.state.display} -> {target.display}")
        changes.setdefault("next_producer_id", -1)
        changes["previous_producer_id"] = self.producer_id
        staged = replace(self, state=target, last_update_ms=now_ms, pending=None, **changes)
        self.pending = staged.to_value()
        return self.pending

    def complete(self) -> None:
        """The pending transition was acknowledged: take its values."""
        v = self.pending
        if v is None:
            return
        if (v.producer_id, v.producer_epoch) != (self.producer_id, self.producer_epoch):
            self.last_producer_id, self.last_producer_epoch = self.producer_id, self.producer_epoch
        self.producer_id, self.producer_epoch = v.producer_id, v.producer_epoch
        self.timeout_ms, self.state = v.timeout_ms, TxnState(v.status)
        self.partitions = {(t, p) for t, ps in v.partitions.items() for p in ps}
        self.start_ms, self.last_update_ms = v.start_ms, v.last_update_ms
        self.previous_producer_id, self.next_producer_id = v.previous_producer_id, v.next_producer_id
        self.client_transaction_version = v.client_transaction_version
        self.pending = None

    def abandon(self) -> None:
        self.pending = None

    # -- what a transition would be ----------------------------------------------------------------
    def epoch_exhausted(self) -> bool:
        """A bump would reach the last epoch (Kafka keeps Short.MaxValue unused: a new id instead)."""
        return self.producer_epoch >= MAX_EPOCH - 1
