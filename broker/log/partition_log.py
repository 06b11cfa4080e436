"""``PartitionLog``: the log of one topic partition, a list of ``LogSegment``s in ``<log.dir>/<topic>-<partition>/``.

State: ``log_start_offset`` (first offset consumers may fetch; moves with retention and DeleteRecords),
``log_end_offset`` (next offset to assign), ``high_watermark`` (set by the replica layer, clamped to
[log start, log end]), ``recovery_point`` (everything below it was fsynced), the leader epoch cache
(``leader-epoch-checkpoint``), and idempotent/transactional producer state (``*.snapshot``). The
checkpoints of the log start, recovery point and high watermark are written by the ``LogManager`` for all
logs of a directory.

Transactions: ``last_stable_offset`` is min(first unstable offset, high watermark): the first offset of
the oldest ongoing transaction, or the high watermark when none is ongoing; read_committed consumers read
below it. Every ABORT marker appends ``(producer id, first offset, marker offset, LSO after the abort)``
to the ``.txnindex`` of the segment holding the marker (leader appends, follower appends, and the replay
of producer state after a crash or truncation, which adds only entries beyond the last one of that
segment, so recomputed entries are never duplicated); ``collect_aborted_transactions`` answers Fetch.

Appends (``append_as_leader``, ``append_as_follower``) validate the whole request first (``validation``),
then write it with one ``pwrite`` per segment, so nothing partial is ever appended. The active (last)
segment rolls on ``segment.bytes``, ``segment.ms`` (broker time since its first append), a full offset
or time index, or a relative offset that would not fit in 31 bits. ``flush.messages`` fsyncs from the
append path; ``flush.ms`` and the flush of rolled segments are done by the LogManager's flush task.

Reads (``read``, ``offset_for_timestamp``, ...) binary-search an immutable snapshot of the segment list
(a tuple replaced copy-on-write), so they never block and never see a half-changed list.

Concurrency contract: ONE writer thread (the broker's event loop) calls appends, ``truncate_to``,
``truncate_fully_and_start_at``, ``delete_records_before``, ``roll``, ``high_watermark =``; readers may
be on any thread. Background threads (LogManager) call ``flush``, ``delete_old_segments``,
``purge_deleted_segments``, the cleaner's segment swap and the checkpoint getters. Every change of the
segment list, the log start or the recovery point happens under ``self.lock`` (an RLock held for
microseconds: renames and list swaps; fsync runs outside it). The append fast path takes no lock unless
it rolls.

Parts (mixins over ``log_state.PartitionLogState``, the shared fields and ``lock``): ``log_recovery``
(``open``, the producer-state rebuild), ``log_append`` (appends, ``roll``), ``log_read`` (reads),
``log_flush`` (``flush``, the recovery point), ``log_retention`` (truncation, DeleteRecords, retention,
``swap_cleaned``). This module puts them together with the getters, leader epochs and the lifecycle.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from broker.log.config import LogConfig
from broker.log.log_append import AppendInfo, LogAppend
from broker.log.log_read import FetchData, LogRead
from broker.log.log_retention import LogRetention
from broker.log.log_state import SNAPSHOTS_TO_KEEP, draw_roll_jitter, parse_partition_dir
from broker.log.producer_state import ProducerStateEntry
from broker.log.segment import LogSegment

__all__ = ["AppendInfo", "FetchData", "PartitionLog", "parse_partition_dir"]


class PartitionLog(LogAppend, LogRead, LogRetention):
    """One partition's log. Open with ``PartitionLog.open``; see the module docstring for the contract."""

    # -- properties ---------------------------------------------------------------------------------
    @property
    def dir(self) -> Path:
        return self._dir

    @property
    def config(self) -> LogConfig:
        return self._config

    def update_config(self, config: LogConfig) -> None:
        """Switch to a new config; it applies to the next append, roll, retention or cleaning."""
        if (config.segment_jitter_ms, config.roll_ms) != (self._config.segment_jitter_ms, self._config.roll_ms):
            self.roll_jitter_ms = draw_roll_jitter(config)
        self._config = config

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._leo

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        self._high_watermark = min(max(offset, self._log_start_offset), self._leo)

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest ongoing transaction (None: none ongoing)."""
        return self._producers.first_unstable_offset

    @property
    def last_stable_offset(self) -> int:
        """min(first unstable offset, high watermark), at least the log start: read_committed reads below it."""
        hw = self._high_watermark
        first_unstable = self._producers.first_unstable_offset
        if first_unstable is None:
            return hw
        return min(max(first_unstable, self._log_start_offset), hw)

    @property
    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._view.segments)

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        """The current segment list (an immutable snapshot)."""
        return self._view.segments

    @property
    def active_segment(self) -> LogSegment:
        return self._view.segments[-1]

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def latest_epoch(self) -> int:
        return self._epochs.latest_epoch

    @property
    def leader_epoch_entries(self) -> list[tuple[int, int]]:
        return self._epochs.entries

    def assign_leader_epoch(self, epoch: int) -> None:
        """A new leader epoch starts at the log end (a replica becoming leader; Kafka's ``makeLeader``), so
        OffsetForLeaderEpoch places older epochs before any record of the new one is appended. No-op for an
        epoch not above the latest."""
        with self.lock:
            if epoch > self._epochs.latest_epoch:
                self._epochs.assign(epoch, self._leo)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """``(epoch, end_offset)`` for OffsetForLeaderEpoch (see ``LeaderEpochCache.end_offset_for``)."""
        return self._epochs.end_offset_for(epoch, self._leo)

    def producer_state(self, producer_id: int) -> ProducerStateEntry | None:
        entry = self._producers.get(producer_id)
        return entry.copy() if entry is not None else None

    def active_producers(self) -> list[ProducerStateEntry]:
        """Copies of every producer's state (DescribeProducers), by producer id; on the writer thread."""
        return [e.copy() for _, e in sorted(self._producers.producers.items())]

    # -- lifecycle ----------------------------------------------------------------------------------
    def close(self, *, flush: bool = True) -> None:
        """Flush (unless told not to), snapshot producer state, close every segment. Idempotent."""
        if self._closed:
            return
        if flush:
            self.flush()
        with self.lock:
            self._closed = True
            try:
                self._producers.write_snapshot(self._leo)
                self._producers.retain_snapshots(SNAPSHOTS_TO_KEEP)
            except FileNotFoundError:
                pass
            for segment in self._view.segments:
                segment.close()
        self.purge_deleted_segments(force=True)

    def delete(self) -> None:
        """Close without flushing and remove the partition directory (regions already read stay valid)."""
        self.close(flush=False)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __repr__(self) -> str:
        return (
            f"PartitionLog({self.topic}-{self.partition}, log_start={self._log_start_offset}, "
            f"hw={self._high_watermark}, leo={self._leo}, segments={len(self._view.segments)})"
        )
