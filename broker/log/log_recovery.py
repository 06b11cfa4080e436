"""``LogRecovery``: opening a partition log: segments loaded and recovered, checkpointed offsets checked
against the log, the leader epochs and producer state rebuilt.

``open`` runs before the log is shared (the LogManager opens logs on its recovery threads). The producer
state is rebuilt from the newest ``*.snapshot`` at or below the log end, then from the batch headers after
it (``_rebuild_producer_state``, also run by truncation on the writer thread, under ``lock``); every ABORT
marker replayed adds its ``.txnindex`` entry unless the segment's index already ends beyond it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from broker.log.clock import SYSTEM_CLOCK, Clock
from broker.log.config import LogConfig
from broker.log.leader_epoch import LEADER_EPOCH_CHECKPOINT, LeaderEpochCache
from broker.log.log_loader import load_segments
from broker.log.log_state import PartitionLogState, parse_partition_dir
from broker.log.producer_state import EndTxnMarker, read_end_txn_marker
from broker.log.segment import LogSegment
from spark_kafkalog.records import CorruptRecordError
from spark_kafkalog.records.batch import CONTROL_BIT, LOG_OVERHEAD, BatchHeader

log = logging.getLogger("kafkalog.log")


def _segment_marker(segment: LogSegment, position: int, header: BatchHeader) -> EndTxnMarker | None:
    """The marker of the control batch at ``position`` of ``segment`` (None, logged, when unreadable)."""
    fd = segment.file.pin()
    try:
        data = os.pread(fd, header.batch_length + LOG_OVERHEAD, position)
    finally:
        segment.file.release()
    try:
        return read_end_txn_marker(data, header)
    except (ValueError, CorruptRecordError) as e:
        log.warning("%s: control batch at offset %d: %s", segment.file.path, header.base_offset, e)
        return None


class LogRecovery(PartitionLogState):
    """Opening and producer-state rebuild of a ``PartitionLog`` (a part of it; see ``partition_log``)."""

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        *,
        time: Clock = SYSTEM_CLOCK,
        recover: bool,
        recovery_point: int | None = None,
        log_start_offset: int | None = None,
        high_watermark: int | None = None,
        first_dirty_offset: int | None = None,
        checkpoint_files: Mapping[str, Path] | None = None,
    ) -> Self:
        """Open (creating if needed) the log in ``directory``.

        ``recover`` (an unclean shutdown): re-validate everything from ``recovery_point`` (default 0: the
        whole log). The optional offsets come from the LogManager's checkpoint files; ``checkpoint_files``
        names the file of each (keys are these parameter names) for the warnings about offsets beyond the
        log end (a damaged or foreign file; for the high watermark also a crash that lost unflushed records),
        which never hide or delete a record: such a recovery point makes the whole log recovered, a log start offset is ignored (the log starts at its
        first segment), a high watermark is clamped to the log end, and a first dirty offset falls back to
        the log start. After a clean shutdown (no ``recover``) a leader epoch starting beyond the log end
        likewise makes the whole log recovered, which rebuilds the epochs from the batches; after a crash
        such epochs are expected (unflushed batches lost) and dropped."""
        directory = Path(directory)
        if parse_partition_dir(directory.name) is None:
            raise ValueError(f"{directory}: a partition directory is named <topic>-<partition>")
        directory.mkdir(parents=True, exist_ok=True)
        now = time.milliseconds()
        epochs = LeaderEpochCache.load(directory / LEADER_EPOCH_CHECKPOINT)
        if epochs.unreadable:  # the log is the truth: rebuild the epochs from every batch
            recover, recovery_point = True, 0
        first_recovered: list[int] = []

        def on_batch(header: BatchHeader) -> None:
            if not first_recovered:
                first_recovered.append(header.base_offset)
            if header.partition_leader_epoch >= 0:
                epochs.assign(header.partition_leader_epoch, header.base_offset)

        def load(recover: bool, recovery_point: int | None) -> tuple[list[LogSegment], bool]:
            return load_segments(
                directory,
                now_ms=now,
                recover=recover,
                recovery_point=recovery_point if recovery_point is not None else 0,
                index_interval_bytes=config.index_interval_bytes,
                on_recovered_batch=on_batch,
            )

        files = checkpoint_files or {}
        name = directory.name

        def beyond(what: str, key: str, value: int, end: int, action: str) -> None:
            log.warning(
                "%s: %s: %s %d is beyond the log end offset %d; %s",
                files.get(key, "checkpoint"),
                name,
                what,
                value,
                end,
                action,
            )

        segments, recovered = load(recover, recovery_point)
        if segments and (not recover or recovery_point):  # not already recovered in full
            end = segments[-1].next_offset
            again = False
            if recovery_point is not None and recovery_point > end:
                beyond("recovery point", "recovery_point", recovery_point, end, "recovering the whole log")
                again = True
            elif not recover and any(start > end for _, start in epochs.entries):
                epoch, start = next(e for e in epochs.entries if e[1] > end)
                log.warning(
                    "%s: epoch %d starts at offset %d, beyond the log end offset %d after a clean shutdown; "
                    "rebuilding the epochs from the log",
                    epochs.path,
                    epoch,
                    start,
                    end,
                )
                epochs = LeaderEpochCache(epochs.path)
                epochs.unreadable = True  # rewritten with the rebuilt entries below
                again = True
            if again:
                for segment in segments:
                    segment.close()
                recover, recovery_point = True, 0
                segments, recovered = load(recover, recovery_point)
        if not segments:
            segments = [LogSegment.create(directory, max(log_start_offset or 0, 0), now)]
        plog = cls(directory, config, time, segments, epochs)
        leo = plog._leo
        if log_start_offset is not None and log_start_offset > leo:
            first = segments[0].base_offset
            beyond("log start offset", "log_start_offset", log_start_offset, leo, f"ignored: the log starts at {first}")
            log_start_offset = None
        start = max(segments[0].base_offset, log_start_offset if log_start_offset is not None else 0)
        plog._log_start_offset = start
        if recovered:
            for segment in segments:
                if recovery_point is None or segment.next_offset > recovery_point:
                    segment.flush()
        plog._recovery_point = leo
        if high_watermark is not None and high_watermark > leo:
            beyond("high watermark", "high_watermark", high_watermark, leo, "clamped to the log end")
        plog._high_watermark = min(max(high_watermark if high_watermark is not None else start, start), leo)
        if first_dirty_offset is not None and first_dirty_offset > leo:  # Kafka's LogCleanerManager does the same
            beyond("first dirty offset", "first_dirty_offset", first_dirty_offset, leo, f"cleaning again from {start}")
            first_dirty_offset = None
        plog.first_dirty_offset = min(max(first_dirty_offset if first_dirty_offset is not None else start, start), leo)
        epochs.truncate_from_end(leo)
        epochs.truncate_from_start(start)
        if epochs.unreadable:
            epochs.flush()  # replaces the unreadable file
        if first_recovered:
            # the recovered segments' .txnindex files were reset: replay them from a snapshot below them
            plog._producers.delete_snapshots(above=first_recovered[0])
        plog._rebuild_producer_state()
        return plog

    def _rebuild_producer_state(self) -> None:
        """Producer state at the log end: the newest snapshot at or below it, then the headers after it."""
        leo = self._leo
        producers = self._producers
        producers.delete_snapshots(above=leo)
        loaded = producers.load_snapshot(leo)
        start = loaded if loaded is not None else self._view.segments[0].base_offset
        if start < leo:
            for segment in self._view.segments:
                if segment.next_offset <= start:
                    continue
                found = segment.translate_offset(start)
                if found is None:
                    continue
                for position, header in segment.iter_headers(found[0]):
                    if header.producer_id >= 0 and header.base_offset >= start:
                        marker = None
                        if header.attributes & CONTROL_BIT:
                            marker = _segment_marker(segment, position, header)
                        completed = producers.update(header, marker)
                        if completed is not None and completed.aborted:
                            self._index_abort(completed, segment)
        producers.evict_below(self._log_start_offset)
