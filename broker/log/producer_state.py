"""Idempotent and transactional producer state of one partition (Kafka's ``ProducerStateManager``) and
its snapshot files.

Per producer id: the current epoch, the max timestamp of its last batch, metadata of its last five
batches ``(first_seq, last_seq, first_offset, last_offset)``, the latest coordinator epoch of its
transaction markers, and ``current_txn_first_offset``: the first offset of its ongoing transaction (-1:
none). A leader append of a batch with ``producer_id >= 0`` is checked against it (``check``):

* an epoch below the current one -> INVALID_PRODUCER_EPOCH;
* a higher epoch must start at sequence 0 (unless the producer was unknown) -> OUT_OF_ORDER_SEQUENCE_NUMBER;
* same epoch: a batch equal to one of the last five is a duplicate (the caller answers with its original
  offsets and appends nothing); otherwise its first sequence must follow the last one (wrapping after
  2^31-1) -> OUT_OF_ORDER_SEQUENCE_NUMBER;
* an unknown producer may start at any sequence (its state may have gone with retention);
* a non-transactional batch while the producer has an ongoing transaction -> INVALID_TXN_STATE;
* a transaction marker (control batch) with an epoch below the current one -> INVALID_PRODUCER_EPOCH,
  with a coordinator epoch below the latest one seen -> TRANSACTION_COORDINATOR_FENCED.

Transactions: a transactional data batch (attributes bit 4) of a producer without an ongoing
transaction starts one at its base offset; a control batch (bit 5) holding an end-transaction marker
(``EndTxnMarker``: COMMIT or ABORT) ends it and yields a ``CompletedTxn`` (an ABORT goes into the
segment's ``.txnindex``, see ``transaction_index``). ``first_unstable_offset`` is the smallest first
offset over the ongoing transactions (None: none), the base of the last stable offset.
Batches without a sequence (``base_sequence`` -1, such as transaction markers) only move the epoch.
Follower appends and recovery replay headers with ``update`` (no checks); control batches need their
marker (``read_end_txn_marker``).

Snapshot file ``<20-digit offset>.snapshot`` (state after every batch below that offset), big-endian:

    | field                         | type  | notes                                       |
    |-------------------------------|-------|---------------------------------------------|
    | version                       | i16   | 2 (1 is still read)                         |
    | crc                           | u32   | CRC-32C of everything after this field      |
    | producer count                | i32   |                                             |
    | per producer: producer_id     | i64   |                                             |
    |   epoch                       | i16   |                                             |
    |   last_timestamp              | i64   | max timestamp of its last batch             |
    |   coordinator_epoch           | i32   | version 2 only (version 1: -1)              |
    |   current_txn_first_offset    | i64   | version 2 only (version 1: -1, none)        |
    |   batch count n (0..5)        | i8    |                                             |
    |   n x (first_seq i32, last_seq i32, first_offset i64, last_offset i64)              |

Apache Kafka's own snapshots (its version 1, found in a log dir Kafka wrote) are read too, told from
kafkalog's version 1 by their size (fixed 46-byte entries): per producer producer_id i64, epoch i16,
last_sequence i32, last_offset i64, offset_delta i32, timestamp i64, coordinator_epoch i32,
current_txn_first_offset i64; one batch each (its last), none when last_offset is -1.

Not thread-safe: used by the log's single writer (appends, truncation, roll) only.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from broker.log.checkpoint import atomic_write
from broker.log.errors import LogAppendError
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch import CONTROL_BIT, TRANSACTIONAL_BIT, BatchHeader
from spark_kafkalog.records.batch_reader import decode_batch_records
from spark_kafkalog.records.crc import crc32c

__all__ = [
    "BatchMetadata",
    "CompletedTxn",
    "EndTxnMarker",
    "ProducerStateEntry",
    "ProducerStateManager",
    "SNAPSHOT_SUFFIX",
    "read_end_txn_marker",
]

log = logging.getLogger("kafkalog.log")

SNAPSHOT_SUFFIX = ".snapshot"
NUM_BATCHES_TO_RETAIN = 5
_INT_MAX = 0x7FFFFFFF
_HEAD = struct.Struct(">hI")  # version, crc
_PRODUCER_V1 = struct.Struct(">qhqb")
_PRODUCER = struct.Struct(">qhqiqb")  # version 2
_BATCH = struct.Struct(">iiqq")
_KAFKA_PRODUCER = struct.Struct(">qhiqiqiq")  # Apache Kafka's version 1 entry
_VERSION = 2
_CONTROL_KEY = struct.Struct(">hh")  # version 0, type (0 ABORT, 1 COMMIT)
_CONTROL_VALUE = struct.Struct(">hi")  # version 0, coordinator epoch
ABORT, COMMIT = 0, 1


class BatchMetadata(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


class EndTxnMarker(NamedTuple):
    """The record of a control batch: ``commit`` (type 1) or abort (type 0), and the coordinator epoch."""

    commit: bool
    coordinator_epoch: int


class CompletedTxn(NamedTuple):
    """A transaction ended by a marker at ``last_offset``; ``first_offset`` is its first data offset (the
    marker's own offset when the producer had no ongoing transaction here)."""

    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool


def read_end_txn_marker(batch, header: BatchHeader | None = None) -> EndTxnMarker:
    """The marker of a control batch (its bytes); raises ``ValueError`` when it holds none."""
    records = decode_batch_records(batch, header=header)
    if len(records) != 1 or records[0].key is None or records[0].value is None:
        raise ValueError(f"a control batch holds one marker record, not {len(records)} records")
    key, value = records[0].key, records[0].value
    assert key is not None and value is not None  # checked above
    try:
        version, kind = _CONTROL_KEY.unpack_from(key)
        _, coordinator_epoch = _CONTROL_VALUE.unpack_from(value)
    except struct.error:
        raise ValueError("control record key or value too short") from None
    if version != 0 or kind not in (ABORT, COMMIT):
        raise ValueError(f"control record version {version} type {kind} is not an end-transaction marker")
    return EndTxnMarker(kind == COMMIT, coordinator_epoch)


class ProducerStateEntry:
    """State of one producer id; ``batches`` is oldest first, at most five."""

    __slots__ = ("producer_id", "epoch", "last_timestamp", "batches", "coordinator_epoch", "current_txn_first_offset")

    def __init__(
        self,
        producer_id: int,
        epoch: int,
        last_timestamp: int = -1,
        batches: Iterable[BatchMetadata] = (),
        coordinator_epoch: int = -1,
        current_txn_first_offset: int = -1,
    ) -> None:
        self.producer_id = producer_id
        self.epoch = epoch
        self.last_timestamp = last_timestamp
        self.batches: list[BatchMetadata] = list(batches)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = current_txn_first_offset

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(
            self.producer_id,
            self.epoch,
            self.last_timestamp,
            self.batches,
            self.coordinator_epoch,
            self.current_txn_first_offset,
        )

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if epoch != self.epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None

    def add(self, epoch: int, metadata: BatchMetadata | None, timestamp: int) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self.batches = []
        if metadata is not None:
            self.batches.append(metadata)
            if len(self.batches) > NUM_BATCHES_TO_RETAIN:
                del self.batches[0]
        self.last_timestamp = timestamp

    def apply_txn(self, header: BatchHeader, base_offset: int, marker: EndTxnMarker | None) -> CompletedTxn | None:
        """Transaction bookkeeping for a batch at ``base_offset`` (after ``add``): a transactional data
        batch starts a transaction when none is ongoing, a marker ends it (returned)."""
        if header.attributes & CONTROL_BIT:
            if marker is None:
                return None
            first = self.current_txn_first_offset if self.current_txn_first_offset >= 0 else base_offset
            self.current_txn_first_offset = -1
            self.coordinator_epoch = marker.coordinator_epoch
            return CompletedTxn(self.producer_id, first, base_offset, not marker.commit)
        if header.attributes & TRANSACTIONAL_BIT and self.current_txn_first_offset < 0:
            self.current_txn_first_offset = base_offset
        return None

    def _key(self) -> tuple:
        return (
            self.producer_id,
            self.epoch,
            self.last_timestamp,
            self.batches,
            self.coordinator_epoch,
            self.current_txn_first_offset,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProducerStateEntry) and self._key() == other._key()

    def __repr__(self) -> str:
        return (
            f"ProducerStateEntry(pid={self.producer_id}, epoch={self.epoch}, batches={self.batches}, "
            f"coordinator_epoch={self.coordinator_epoch}, txn_first_offset={self.current_txn_first_offset})"
        )


def last_sequence(header: BatchHeader) -> int:
    """The batch's last sequence number (sequences wrap to 0 after 2^31-1)."""
    return (header.base_sequence + header.last_offset_delta) & _INT_MAX if header.base_sequence >= 0 else -1


class ProducerStateManager:
    """Producer id -> ``ProducerStateEntry`` for one partition, plus its snapshot files in ``directory``."""

    __slots__ = ("directory", "_producers", "_ongoing", "_first_unstable")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._producers: dict[int, ProducerStateEntry] = {}
        self._ongoing: dict[int, int] = {}  # producer id -> first offset of its ongoing transaction
        self._first_unstable: int | None = None  # min(_ongoing.values()), kept for readers on other threads

    def __len__(self) -> int:
        return len(self._producers)

    def get(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    @property
    def producers(self) -> dict[int, ProducerStateEntry]:
        return dict(self._producers)

    @property
    def first_unstable_offset(self) -> int | None:
        """The smallest first offset of the ongoing transactions (None: no transaction is ongoing).
        Safe from any thread (a value the writer replaces)."""
        return self._first_unstable

    def _refresh_unstable(self) -> None:
        ongoing = self._ongoing
        self._first_unstable = min(ongoing.values()) if ongoing else None

    @property
    def ongoing_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of its ongoing transaction."""
        return dict(self._ongoing)

    def last_stable_offset_after(self, completed: CompletedTxn) -> int:
        """The first unstable offset once ``completed`` is done (Kafka's ``lastStableOffset(completedTxn)``):
        the first offset of another ongoing transaction, else the offset after the marker."""
        others = [first for pid, first in self._ongoing.items() if pid != completed.producer_id]
        return min(others) if others else completed.last_offset + 1

    def _track(self, entry: ProducerStateEntry) -> None:
        if entry.current_txn_first_offset >= 0:
            self._ongoing[entry.producer_id] = entry.current_txn_first_offset
        else:
            self._ongoing.pop(entry.producer_id, None)

    # -- leader checks ------------------------------------------------------------------------------
    def check(
        self, header: BatchHeader, pending: dict[int, ProducerStateEntry], marker: EndTxnMarker | None = None
    ) -> BatchMetadata | None:
        """Check a leader batch against the state (``pending`` holds entries already updated by earlier
        batches of the same request; ``marker`` is the record of a control batch). Returns the original
        metadata of a duplicate, None for a new batch; raises ``LogAppendError`` for an epoch, sequence,
        transaction state or coordinator epoch error."""
        pid = header.producer_id
        entry = pending.get(pid) or self._producers.get(pid)
        if entry is None:
            return None
        epoch = header.producer_epoch
        first_seq = header.base_sequence
        if epoch < entry.epoch:
            raise LogAppendError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"producer {pid}: epoch {epoch} is older than the current epoch {entry.epoch}",
            )
        if marker is not None:
            if marker.coordinator_epoch < entry.coordinator_epoch:
                raise LogAppendError(
                    ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                    f"producer {pid}: marker from coordinator epoch {marker.coordinator_epoch}, older than "
                    f"{entry.coordinator_epoch}",
                )
            return None
        if entry.current_txn_first_offset >= 0 and not header.attributes & TRANSACTIONAL_BIT:
            raise LogAppendError(
                ErrorCode.INVALID_TXN_STATE,
                f"producer {pid}: a non-transactional batch while its transaction from offset "
                f"{entry.current_txn_first_offset} is ongoing",
            )
        if first_seq < 0:
            return None
        if epoch > entry.epoch:
            if first_seq != 0 and entry.epoch >= 0:
                raise LogAppendError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"producer {pid}: new epoch {epoch} must start at sequence 0, not {first_seq}",
                )
            return None
        duplicate = entry.find_duplicate(epoch, first_seq, last_sequence(header))
        if duplicate is not None:
            return duplicate
        last_seq = entry.last_seq
        if last_seq >= 0 and not (first_seq == last_seq + 1 or (first_seq == 0 and last_seq == _INT_MAX)):
            raise LogAppendError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"producer {pid} epoch {epoch}: sequence {first_seq} does not follow {last_seq}",
            )
        return None

    @staticmethod
    def stage(
        pending: dict[int, ProducerStateEntry],
        current: ProducerStateEntry | None,
        header: BatchHeader,
        base_offset: int,
        timestamp: int,
        marker: EndTxnMarker | None = None,
    ) -> CompletedTxn | None:
        """Record an accepted batch (with its assigned ``base_offset``) in ``pending``; returns the
        transaction a marker completes."""
        pid = header.producer_id
        entry = pending.get(pid)
        if entry is None:
            entry = current.copy() if current is not None else ProducerStateEntry(pid, header.producer_epoch)
            pending[pid] = entry
        metadata = None
        if header.base_sequence >= 0:
            metadata = BatchMetadata(
                header.base_sequence, last_sequence(header), base_offset, base_offset + header.last_offset_delta
            )
        entry.add(header.producer_epoch, metadata, timestamp)
        return entry.apply_txn(header, base_offset, marker)

    def commit(self, pending: dict[int, ProducerStateEntry]) -> None:
        self._producers.update(pending)
        for entry in pending.values():
            self._track(entry)
        self._refresh_unstable()

    # -- replay -------------------------------------------------------------------------------------
    def update(self, header: BatchHeader, marker: EndTxnMarker | None = None) -> CompletedTxn | None:
        """Apply a batch header without checks (follower appends, recovery, snapshot replay); a control
        batch needs its ``marker`` to end a transaction. Returns the transaction a marker completes."""
        pid = header.producer_id
        if pid < 0:
            return None
        entry = self._producers.get(pid)
        if entry is None:
            entry = self._producers[pid] = ProducerStateEntry(pid, header.producer_epoch)
        elif header.producer_epoch < entry.epoch:
            return None
        metadata = None
        if header.base_sequence >= 0:
            metadata = BatchMetadata(
                header.base_sequence,
                last_sequence(header),
                header.base_offset,
                header.base_offset + header.last_offset_delta,
            )
        entry.add(header.producer_epoch, metadata, header.max_timestamp)
        completed = entry.apply_txn(header, header.base_offset, marker)
        self._track(entry)
        self._refresh_unstable()
        return completed

    def clear(self) -> None:
        self._producers.clear()
        self._ongoing.clear()
        self._first_unstable = None

    def evict_below(self, log_start_offset: int) -> int:
        """Forget producers whose last batch is below the log start (their data is gone, and with it any
        transaction they left open); returns how many."""
        gone = [pid for pid, e in self._producers.items() if e.batches and e.last_offset < log_start_offset]
        for pid in gone:
            del self._producers[pid]
            self._ongoing.pop(pid, None)
        self._refresh_unstable()
        return len(gone)

    # -- snapshots ----------------------------------------------------------------------------------
    def snapshot_path(self, offset: int) -> Path:
        return self.directory / f"{offset:020d}{SNAPSHOT_SUFFIX}"

    def snapshot_offsets(self) -> list[int]:
        out = []
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        for name in names:
            stem, _, suffix = name.partition(".")
            if "." + suffix == SNAPSHOT_SUFFIX and len(stem) == 20 and stem.isdigit():
                out.append(int(stem))
        return sorted(out)

    def write_snapshot(self, offset: int, *, sync: bool = True) -> None:
        """Write the state (valid after every batch below ``offset``) to ``<offset>.snapshot``."""
        parts = []
        for entry in self._producers.values():
            parts.append(
                _PRODUCER.pack(
                    entry.producer_id,
                    entry.epoch,
                    entry.last_timestamp,
                    entry.coordinator_epoch,
                    entry.current_txn_first_offset,
                    len(entry.batches),
                )
            )
            parts.extend(_BATCH.pack(*b) for b in entry.batches)
        body = struct.pack(">i", len(self._producers)) + b"".join(parts)
        data = _HEAD.pack(_VERSION, crc32c(body)) + body
        atomic_write(self.snapshot_path(offset), data, sync=sync)

    def load_snapshot(self, max_offset: int) -> int | None:
        """Load the newest readable snapshot at or below ``max_offset``; returns its offset (None: none,
        state cleared). Unreadable snapshots are deleted."""
        for offset in reversed(self.snapshot_offsets()):
            if offset > max_offset:
                continue
            path = self.snapshot_path(offset)
            try:
                self._producers = _decode_snapshot(path.read_bytes())
                self._ongoing = {
                    pid: e.current_txn_first_offset
                    for pid, e in self._producers.items()
                    if e.current_txn_first_offset >= 0
                }
                self._refresh_unstable()
                return offset
            except (ValueError, struct.error, OSError) as e:
                log.warning("%s: unreadable producer snapshot (%s); deleting it", path, e)
                path.unlink(missing_ok=True)
        self._producers = {}
        self._ongoing = {}
        self._first_unstable = None
        return None

    def delete_snapshots(self, *, above: int | None = None, below: int | None = None) -> None:
        """Delete snapshots at offsets > ``above`` and/or < ``below``."""
        for offset in self.snapshot_offsets():
            if (above is not None and offset > above) or (below is not None and offset < below):
                self.snapshot_path(offset).unlink(missing_ok=True)

    def retain_snapshots(self, keep: int) -> None:
        offsets = self.snapshot_offsets()
        for offset in offsets[:-keep] if keep else offsets:
            self.snapshot_path(offset).unlink(missing_ok=True)


def _decode_snapshot(data: bytes) -> dict[int, ProducerStateEntry]:
    if len(data) < 10:
        raise ValueError("too short")
    version, crc = _HEAD.unpack_from(data, 0)
    if version not in (1, _VERSION):
        raise ValueError(f"version {version}")
    body = memoryview(data)[6:]
    if crc32c(body) != crc:
        raise ValueError("CRC mismatch")
    (count,) = struct.unpack_from(">i", body, 0)
    if version == 1 and count >= 0 and len(body) == 4 + count * _KAFKA_PRODUCER.size:
        return _decode_kafka_entries(body, count)
    pos = 4
    out: dict[int, ProducerStateEntry] = {}
    for _ in range(count):
        if version == 1:
            pid, epoch, last_ts, n = _PRODUCER_V1.unpack_from(body, pos)
            coordinator_epoch, txn_first = -1, -1
            pos += _PRODUCER_V1.size
        else:
            pid, epoch, last_ts, coordinator_epoch, txn_first, n = _PRODUCER.unpack_from(body, pos)
            pos += _PRODUCER.size
        if not 0 <= n <= NUM_BATCHES_TO_RETAIN:
            raise ValueError(f"batch count {n}")
        batches = []
        for _ in range(n):
            batches.append(BatchMetadata(*_BATCH.unpack_from(body, pos)))
            pos += _BATCH.size
        out[pid] = ProducerStateEntry(pid, epoch, last_ts, batches, coordinator_epoch, txn_first)
    if pos != len(body):
        raise ValueError("trailing bytes")
    return out


def _decode_kafka_entries(body: memoryview, count: int) -> dict[int, ProducerStateEntry]:
    """The entries of Apache Kafka's version 1 snapshot (module docstring): only each producer's last batch."""
    out: dict[int, ProducerStateEntry] = {}
    for i in range(count):
        pid, epoch, last_seq, last_offset, delta, timestamp, coordinator_epoch, txn_first = _KAFKA_PRODUCER.unpack_from(
            body, 4 + i * _KAFKA_PRODUCER.size
        )
        if delta < 0 or last_seq < -1 or last_offset < -1:
            raise ValueError(f"producer {pid}: offset delta {delta}, last sequence {last_seq}, offset {last_offset}")
        batches = []
        if last_offset >= 0 and last_seq >= 0:  # sequences wrap at 2^31 - 1 (Kafka's decrementSequence)
            first_seq = last_seq - delta if last_seq >= delta else _INT_MAX - (delta - last_seq) + 1
            batches.append(BatchMetadata(first_seq, last_seq, last_offset - delta, last_offset))
        out[pid] = ProducerStateEntry(pid, epoch, timestamp, batches, coordinator_epoch, txn_first)
    return out
