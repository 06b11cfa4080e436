"""Idempotent-producer state of one partition (Kafka's ``ProducerStateManager``) and its snapshot files.

Per producer id: the current epoch, the max timestamp of its last batch, and metadata of its last five
batches ``(first_seq, last_seq, first_offset, last_offset)``. A leader append of a batch with
``producer_id >= 0`` is checked against it (``check``):

* an epoch below the current one -> INVALID_PRODUCER_EPOCH;
* a higher epoch must start at sequence 0 (unless the producer was unknown) -> OUT_OF_ORDER_SEQUENCE_NUMBER;
* same epoch: a batch equal to one of the last five is a duplicate (the caller answers with its original
  offsets and appends nothing); otherwise its first sequence must follow the last one (wrapping after
  2^31-1) -> OUT_OF_ORDER_SEQUENCE_NUMBER;
* an unknown producer may start at any sequence (its state may have gone with retention).

Batches without a sequence (``base_sequence`` -1, such as transaction markers) only move the epoch.
Follower appends and recovery replay headers with ``update`` (no checks).

Snapshot file ``<20-digit offset>.snapshot`` (state after every batch below that offset), big-endian:

    | field                         | type  | notes                                       |
    |-------------------------------|-------|---------------------------------------------|
    | version                       | i16   | 1                                           |
    | crc                           | u32   | CRC-32C of everything after this field      |
    | producer count                | i32   |                                             |
    | per producer: producer_id     | i64   |                                             |
    |   epoch                       | i16   |                                             |
    |   last_timestamp              | i64   | max timestamp of its last batch             |
    |   batch count n (0..5)        | i8    |                                             |
    |   n x (first_seq i32, last_seq i32, first_offset i64, last_offset i64)              |

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
from spark_kafkalog.records.batch import BatchHeader
from spark_kafkalog.records.crc import crc32c

__all__ = ["BatchMetadata", "ProducerStateEntry", "ProducerStateManager", "SNAPSHOT_SUFFIX"]

log = logging.getLogger("kafkalog.log")

SNAPSHOT_SUFFIX = ".snapshot"
NUM_BATCHES_TO_RETAIN = 5
_INT_MAX = 0x7FFFFFFF
_HEAD = struct.Struct(">hI")  # version, crc
_PRODUCER = struct.Struct(">qhqb")
_BATCH = struct.Struct(">iiqq")
_VERSION = 1


class BatchMetadata(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


class ProducerStateEntry:
    """State of one producer id; ``batches`` is oldest first, at most five."""

    __slots__ = ("producer_id", "epoch", "last_timestamp", "batches")

    def __init__(
        self, producer_id: int, epoch: int, last_timestamp: int = -1, batches: Iterable[BatchMetadata] = ()
    ) -> None:
        self.producer_id = producer_id
        self.epoch = epoch
        self.last_timestamp = last_timestamp
        self.batches: list[BatchMetadata] = list(batches)

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.epoch, self.last_timestamp, self.batches)

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

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProducerStateEntry) and (
            self.producer_id,
            self.epoch,
            self.last_timestamp,
            self.batches,
        ) == (other.producer_id, other.epoch, other.last_timestamp, other.batches)

    def __repr__(self) -> str:
        return f"ProducerStateEntry(pid={self.producer_id}, epoch={self.epoch}, batches={self.batches})"


def last_sequence(header: BatchHeader) -> int:
    """The batch's last sequence number (sequences wrap to 0 after 2^31-1)."""
    return (header.base_sequence + header.last_offset_delta) & _INT_MAX if header.base_sequence >= 0 else -1


class ProducerStateManager:
    """Producer id -> ``ProducerStateEntry`` for one partition, plus its snapshot files in ``directory``."""

    __slots__ = ("directory", "_producers")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._producers: dict[int, ProducerStateEntry] = {}

    def __len__(self) -> int:
        return len(self._producers)

    def get(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    @property
    def producers(self) -> dict[int, ProducerStateEntry]:
        return dict(self._producers)

    # -- leader checks ------------------------------------------------------------------------------
    def check(self, header: BatchHeader, pending: dict[int, ProducerStateEntry]) -> BatchMetadata | None:
        """Check a leader batch against the state (``pending`` holds entries already updated by earlier
        batches of the same request). Returns the original metadata of a duplicate, None for a new batch;
        raises ``LogAppendError`` for an epoch or sequence error."""
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
    ) -> None:
        """Record an accepted batch (with its assigned ``base_offset``) in ``pending``."""
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

    def commit(self, pending: dict[int, ProducerStateEntry]) -> None:
        self._producers.update(pending)

    # -- replay -------------------------------------------------------------------------------------
    def update(self, header: BatchHeader) -> None:
        """Apply a batch header without checks (follower appends, recovery, snapshot replay)."""
        pid = header.producer_id
        if pid < 0:
            return
        entry = self._producers.get(pid)
        if entry is None:
            entry = self._producers[pid] = ProducerStateEntry(pid, header.producer_epoch)
        elif header.producer_epoch < entry.epoch:
            return
        metadata = None
        if header.base_sequence >= 0:
            metadata = BatchMetadata(
                header.base_sequence,
                last_sequence(header),
                header.base_offset,
                header.base_offset + header.last_offset_delta,
            )
        entry.add(header.producer_epoch, metadata, header.max_timestamp)

    def clear(self) -> None:
        self._producers.clear()

    def evict_below(self, log_start_offset: int) -> int:
        """Forget producers whose last batch is below the log start (their data is gone); returns how many."""
        gone = [pid for pid, e in self._producers.items() if e.batches and e.last_offset < log_start_offset]
        for pid in gone:
            del self._producers[pid]
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
            parts.append(_PRODUCER.pack(entry.producer_id, entry.epoch, entry.last_timestamp, len(entry.batches)))
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
                return offset
            except (ValueError, struct.error, OSError) as e:
                log.warning("%s: unreadable producer snapshot (%s); deleting it", path, e)
                path.unlink(missing_ok=True)
        self._producers = {}
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
    if version != _VERSION:
        raise ValueError(f"version {version}")
    body = memoryview(data)[6:]
    if crc32c(body) != crc:
        raise ValueError("CRC mismatch")
    (count,) = struct.unpack_from(">i", body, 0)
    pos = 4
    out: dict[int, ProducerStateEntry] = {}
    for _ in range(count):
        pid, epoch, last_ts, n = _PRODUCER.unpack_from(body, pos)
        pos += _PRODUCER.size
        if not 0 <= n <= NUM_BATCHES_TO_RETAIN:
            raise ValueError(f"batch count {n}")
        batches = []
        for _ in range(n):
            batches.append(BatchMetadata(*_BATCH.unpack_from(body, pos)))
            pos += _BATCH.size
        out[pid] = ProducerStateEntry(pid, epoch, last_ts, batches)
    if pos != len(body):
        raise ValueError("trailing bytes")
    return out
