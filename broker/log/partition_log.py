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
"""

from __future__ import annotations

import bisect
import logging
import os
import random
import re
import shutil
import struct
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from broker.log.clock import SYSTEM_CLOCK, Clock
from broker.log.config import LogConfig
from broker.log.errors import LogAppendError, LogClosedError, OffsetOutOfRangeError
from broker.log.file_region import FileRegion
from broker.log.leader_epoch import LEADER_EPOCH_CHECKPOINT, LeaderEpochCache
from broker.log.log_loader import DELETED_SUFFIX, SWAP_SUFFIX, load_segments
from broker.log.producer_state import (
    CompletedTxn,
    EndTxnMarker,
    ProducerStateEntry,
    ProducerStateManager,
    read_end_txn_marker,
)
from broker.log.recompression import check_timestamps, recompress
from broker.log.segment import MAX_RELATIVE_OFFSET, LogSegment
from broker.log.transaction_index import AbortedTxn
from broker.log.validation import validate_follower_batches, validate_leader_batches
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import CorruptRecordError, build_control_batch, decode_batch_records, set_log_append_time
from spark_kafkalog.records.batch import CONTROL_BIT, LOG_OVERHEAD, BatchHeader

__all__ = ["AppendInfo", "FetchData", "PartitionLog", "parse_partition_dir"]

log = logging.getLogger("kafkalog.log")

_DIR_NAME = re.compile(r"^(.+)-(\d+)$")
# base_offset, batch_length, partition_leader_epoch: the first 16 bytes of a batch, outside the CRC
_OFFSET_LENGTH_EPOCH = struct.Struct(">qii")
SNAPSHOTS_TO_KEEP = 3


def _leader_marker(buf, pos: int, header: BatchHeader) -> EndTxnMarker:
    """The marker of a control batch appended as leader; INVALID_RECORD when it is not one."""
    if header.producer_id < 0:
        raise LogAppendError(ErrorCode.INVALID_RECORD, "a control batch needs a producer id")
    try:
        return read_end_txn_marker(memoryview(buf)[pos : pos + header.batch_length + LOG_OVERHEAD], header)
    except (ValueError, CorruptRecordError) as e:
        raise LogAppendError(ErrorCode.INVALID_RECORD, f"control batch: {e}") from None


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


class AppendInfo(NamedTuple):
    """Result of an append. ``log_append_time`` is -1 for CreateTime; ``duplicate`` marks a retried
    idempotent batch answered with its original offsets (nothing appended)."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    num_records: int
    duplicate: bool = False


class FetchData(NamedTuple):
    """Result of ``read``: ``error`` is NONE or OFFSET_OUT_OF_RANGE; ``records`` None when empty."""

    error: ErrorCode
    records: FileRegion | None
    log_start_offset: int
    log_end_offset: int
    high_watermark: int


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """``"orders-3"`` -> ``("orders", 3)``; None for anything else."""
    m = _DIR_NAME.match(name)
    if not m:
        return None
    return m.group(1), int(m.group(2))


class _View(NamedTuple):
    """Immutable snapshot of the segment list with its base offsets (for bisect)."""

    segments: tuple[LogSegment, ...]
    bases: tuple[int, ...]


def _view(segments) -> _View:
    segments = tuple(segments)
    return _View(segments, tuple(s.base_offset for s in segments))


class PartitionLog:
    """One partition's log. Open with ``PartitionLog.open``; see the module docstring for the contract."""

    def __init__(
        self, directory: Path, config: LogConfig, time: Clock, segments: list[LogSegment], epochs: LeaderEpochCache
    ) -> None:
        parsed = parse_partition_dir(directory.name)
        if parsed is None:
            raise ValueError(f"{directory}: a partition directory is named <topic>-<partition>")
        self.topic, self.partition = parsed
        self._dir = directory
        self._config = config
        self._time = time
        self.lock = threading.RLock()
        self._view = _view(segments)
        self._leo = segments[-1].next_offset
        self._log_start_offset = segments[0].base_offset
        self._high_watermark = self._log_start_offset
        self._recovery_point = self._leo
        self._epochs = epochs
        self._producers = ProducerStateManager(directory)
        self._unflushed_messages = 0
        self._last_flush_ms = time.milliseconds()
        self._roll_flush_offset = -1  # rolled segments below this offset await their fsync
        #: the active segment rolls this much before segment.ms (segment.jitter.ms; drawn per segment)
        self.roll_jitter_ms = _roll_jitter(config)
        self._trash: list[tuple[int, LogSegment]] = []
        self._closed = False
        #: first offset not yet compacted (the cleaner's checkpoint); the cleaner moves it
        self.first_dirty_offset = self._log_start_offset

    # -- opening ------------------------------------------------------------------------------------
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
    ) -> PartitionLog:
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

    def _index_abort(self, completed: CompletedTxn, segment: LogSegment | None = None) -> None:
        """Add an ABORT marker's entry to the ``.txnindex`` of its segment unless it is already there."""
        if segment is None:
            view = self._view
            segment = view.segments[max(bisect.bisect_right(view.bases, completed.last_offset) - 1, 0)]
        index = segment.txn_index
        if completed.last_offset <= index.last_offset():
            return
        lso = self._producers.last_stable_offset_after(completed)
        index.append(AbortedTxn(completed.producer_id, completed.first_offset, completed.last_offset, lso))

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
            self.roll_jitter_ms = _roll_jitter(config)
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

    def aborted_transactions(self, start: int, upper: int) -> list[AbortedTxn]:
        """The ``.txnindex`` entries with ``last_offset >= start`` and ``first_offset < upper``, walking the
        segments from the one holding ``start`` until an entry's last stable offset reaches ``upper``
        (Kafka's ``collectAbortedTransactions``). Safe from any thread."""
        view = self._view
        out: list[AbortedTxn] = []
        for segment in view.segments[max(bisect.bisect_right(view.bases, start) - 1, 0) :]:
            found, complete = segment.txn_index.collect(start, upper)
            out.extend(found)
            if complete:
                break
        return out

    def collect_aborted_transactions(self, start: int, upper: int) -> list[tuple[int, int]]:
        """``[(producer_id, first_offset)]`` of the aborted transactions a read of [start, upper) may hold
        (Fetch's ``aborted_transactions``)."""
        return [(t.producer_id, t.first_offset) for t in self.aborted_transactions(start, upper)]

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

    # -- appends ------------------------------------------------------------------------------------
    def append_as_leader(self, records, *, leader_epoch: int, is_from_client: bool = True) -> AppendInfo:
        """Validate, assign offsets (and the leader epoch) in place, and append one or more v2 batches.

        ``records`` is modified in place when writable (bytearray, writable memoryview), else copied.
        Raises ``LogAppendError``; a retried idempotent batch returns its original offsets with
        ``duplicate=True``. ``is_from_client=False`` lets coordinators append control batches."""
        if self._closed:
            raise LogClosedError(f"{self._dir.name}: log closed")
        if isinstance(records, memoryview):
            buf = records if not records.readonly else bytearray(records)
        elif isinstance(records, bytearray):
            buf = records
        else:
            buf = bytearray(records)
        config = self._config
        batches = validate_leader_batches(
            buf,
            max_message_bytes=config.max_message_bytes,
            segment_bytes=config.segment_bytes,
            compacted="compact" in config.cleanup_policy,
            allow_control=not is_from_client,
        )
        now = self._time.milliseconds()
        append_time = now if config.message_timestamp_type == "LogAppendTime" else -1
        if append_time < 0 and config.timestamp_bounds is not None:
            check_timestamps(buf, batches, now, *config.timestamp_bounds)
        codec = config.recompression_codec
        if codec is not None:  # compression.type other than producer: store every batch with that codec
            recompressed = recompress(buf, batches, codec, config.recompression_level)
            if recompressed is not None:
                buf, batches = recompressed
                _check_recompressed_sizes(batches, config.max_message_bytes, config.segment_bytes)
        offset = first_offset = self._leo
        producers = self._producers
        pending: dict[int, ProducerStateEntry] = {}
        duplicates = []
        entries = []  # (position, size, base offset, last offset, max timestamp)
        max_timestamp = offset_of_max = -1
        num_records = 0
        aborts: list[CompletedTxn] = []
        for pos, header in batches:
            batch_max = append_time if append_time >= 0 else header.max_timestamp
            marker = None
            if header.attributes & CONTROL_BIT:
                marker = _leader_marker(buf, pos, header)
            if header.producer_id >= 0:
                duplicate = producers.check(header, pending, marker)
                if duplicate is not None:
                    duplicates.append(duplicate)
                    continue
                completed = producers.stage(
                    pending, producers.get(header.producer_id), header, offset, batch_max, marker
                )
                if completed is not None and completed.aborted:
                    aborts.append(completed)
            last = offset + header.last_offset_delta
            entries.append((pos, header.batch_length + LOG_OVERHEAD, offset, last, batch_max))
            if batch_max > max_timestamp:
                max_timestamp, offset_of_max = batch_max, last
            num_records += header.records_count
            offset = last + 1
        if duplicates:
            if entries:
                raise LogAppendError(
                    ErrorCode.DUPLICATE_SEQUENCE_NUMBER, "the request mixes already-appended and new batches"
                )
            first_dup, last_dup = duplicates[0], duplicates[-1]
            return AppendInfo(
                first_dup.first_offset, last_dup.last_offset, -1, -1, append_time, self._log_start_offset, 0, True
            )
        # the request is accepted: rewrite offsets and epochs (outside the CRC) and LogAppendTime (inside it)
        pack_header = _OFFSET_LENGTH_EPOCH.pack_into
        for pos, size, base, _, _ in entries:
            pack_header(buf, pos, base, size - LOG_OVERHEAD, leader_epoch)
            if append_time >= 0:
                set_log_append_time(buf, pos, append_time)
        if leader_epoch > self._epochs.latest_epoch:
            self._epochs.assign(leader_epoch, first_offset)
        self._write(buf, entries, now)
        if pending:
            producers.commit(pending)
        for completed in aborts:
            self._index_abort(completed)
        self._unflushed_messages += num_records
        if self._unflushed_messages >= config.flush_interval_messages:
            self.flush()
        return AppendInfo(
            first_offset, offset - 1, max_timestamp, offset_of_max, append_time, self._log_start_offset, num_records
        )

    def append_control_marker(
        self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, leader_epoch: int
    ) -> AppendInfo:
        """Append an end-transaction marker (WriteTxnMarkers on the leader): a v2 control batch with one
        COMMIT or ABORT record, base sequence -1, transactional and control attributes, timestamp now.
        Raises ``LogAppendError``: INVALID_PRODUCER_EPOCH (epoch below the producer's current one),
        TRANSACTION_COORDINATOR_FENCED (coordinator epoch below the latest marker's)."""
        batch = build_control_batch(
            "commit" if commit else "abort",
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            coordinator_epoch=coordinator_epoch,
            timestamp_ms=self._time.milliseconds(),
        )
        return self.append_as_leader(bytearray(batch), leader_epoch=leader_epoch, is_from_client=False)

    def append_as_follower(self, records) -> AppendInfo:
        """Append batches copied from the leader (offsets and epochs already set; must start at or after
        the log end and increase). Raises ``LogAppendError`` (``InvalidOffsetError`` for offsets)."""
        if self._closed:
            raise LogClosedError(f"{self._dir.name}: log closed")
        batches = validate_follower_batches(records, self._leo)
        if not batches:
            return AppendInfo(-1, -1, -1, -1, -1, self._log_start_offset, 0)
        now = self._time.milliseconds()
        entries = []
        max_timestamp = offset_of_max = -1
        num_records = 0
        for pos, header in batches:
            last = header.base_offset + header.last_offset_delta
            if header.max_timestamp > max_timestamp:
                max_timestamp, offset_of_max = header.max_timestamp, last
            num_records += header.records_count
            entries.append((pos, header.batch_length + LOG_OVERHEAD, header.base_offset, last, header.max_timestamp))
            epoch = header.partition_leader_epoch
            if epoch >= 0 and epoch > self._epochs.latest_epoch:
                self._epochs.assign(epoch, header.base_offset)
        self._write(records, entries, now)
        for pos, header in batches:
            marker = None
            if header.attributes & CONTROL_BIT and header.producer_id >= 0:
                try:
                    marker = read_end_txn_marker(
                        memoryview(records)[pos : pos + header.batch_length + LOG_OVERHEAD], header
                    )
                except (ValueError, CorruptRecordError) as e:
                    log.warning("%s: control batch at offset %d: %s", self._dir.name, header.base_offset, e)
            completed = self._producers.update(header, marker)
            if completed is not None and completed.aborted:
                self._index_abort(completed)
        self._unflushed_messages += num_records
        if self._unflushed_messages >= self._config.flush_interval_messages:
            self.flush()
        first = batches[0][1]
        return AppendInfo(
            first.base_offset, entries[-1][3], max_timestamp, offset_of_max, -1, self._log_start_offset, num_records
        )

    def _write(self, buf, entries: list[tuple[int, int, int, int, int]], now: int) -> None:
        """Write contiguous batches ``(position, size, base, last, max_ts)``, rolling where needed."""
        config = self._config
        state_offset = self._leo  # producer state covers the batches below this until the write is done
        n = len(entries)
        i = 0
        while i < n:
            segment = self._view.segments[-1]
            _, size, _, last, _ = entries[i]
            if not (  # the common case, checked inline; _maybe_roll decides the rest
                segment.size
                and segment.size + size <= config.segment_bytes
                and now - segment.first_append_ms <= config.roll_ms - self.roll_jitter_ms
                and last - segment.base_offset <= MAX_RELATIVE_OFFSET
                and len(segment.index._keys) < config.max_index_entries
                and len(segment.time_index._keys) < config.max_time_index_entries
            ):
                segment = self._maybe_roll(entries[i], now, state_offset)
            # as many following batches as fit in this segment
            j = i + 1
            start = entries[i][0]
            size = entries[i][1]
            while j < n:
                entry = entries[j]
                if segment.size + size + entry[1] > config.segment_bytes or not segment.can_fit(entry[3]):
                    break
                size += entry[1]
                j += 1
            data = buf if size == len(buf) else memoryview(buf)[start : start + size]
            try:
                segment.append(data, entries[i:j] if i or j < n else entries, start, now, config.index_interval_bytes)
            except OSError as e:
                raise LogAppendError(ErrorCode.KAFKA_STORAGE_ERROR, f"{segment.file.path}: write failed: {e}") from e
            self._leo = entries[j - 1][3] + 1
            i = j

    def _maybe_roll(self, entry: tuple[int, int, int, int, int], now: int, state_offset: int) -> LogSegment:
        segment = self._view.segments[-1]
        config = self._config
        _, size, base, last, _ = entry
        if segment.size == 0:
            if segment.can_fit(last) and base >= segment.base_offset:
                return segment
        elif (
            segment.size + size <= config.segment_bytes
            and now - segment.first_append_ms <= config.roll_ms - self.roll_jitter_ms
            and len(segment.index._keys) < config.max_index_entries
            and len(segment.time_index._keys) < config.max_time_index_entries
            and last - segment.base_offset <= MAX_RELATIVE_OFFSET
        ):
            return segment
        return self._roll_at(base, now, state_offset)

    # -- roll ---------------------------------------------------------------------------------------
    def roll(self) -> LogSegment:
        """Start a new active segment at the log end (no-op when the active segment is empty)."""
        with self.lock:
            active = self._view.segments[-1]
            if active.size == 0:
                return active
            return self._roll_at(self._leo, self._time.milliseconds(), self._leo)

    def _roll_at(self, base: int, now: int, state_offset: int) -> LogSegment:
        """New active segment at ``base``; the producer state (valid below ``state_offset``) is snapshot."""
        with self.lock:
            segments = self._view.segments
            active = segments[-1]
            if active.size == 0:
                # an empty active segment cannot hold this offset: replace it
                segments = segments[:-1]
                self._trash_segments([active], now)
            else:
                active.on_become_inactive()
            new = LogSegment.create(self._dir, base, now)
            self.roll_jitter_ms = _roll_jitter(self._config)
            self._view = _view(segments + (new,))
            if active.size:
                self._roll_flush_offset = max(self._roll_flush_offset, base)
            self._producers.evict_below(self._log_start_offset)
            self._producers.write_snapshot(state_offset, sync=False)
            self._producers.retain_snapshots(SNAPSHOTS_TO_KEEP)
            log.debug("%s: rolled a new segment at offset %d", self._dir.name, base)
            return new

    # -- reads --------------------------------------------------------------------------------------
    def read(
        self, fetch_offset: int, max_bytes: int, *, max_offset: int | None = None, min_one_batch: bool = True
    ) -> FetchData:
        """A file region of whole batches starting with the one holding ``fetch_offset``.

        At most ``max_bytes`` (but the whole first batch when ``min_one_batch``), below ``max_offset``
        (exclusive; the broker passes the high watermark); data of one segment only. ``fetch_offset``
        outside [log start, log end] is OFFSET_OUT_OF_RANGE; at the end (or at ``max_offset``) the result
        is NONE with ``records`` None."""
        for _ in range(4):  # retried only when a segment was deleted under us
            view = self._view
            leo = self._leo
            start = self._log_start_offset
            hw = self._high_watermark
            if fetch_offset < start or fetch_offset > leo:
                return FetchData(ErrorCode.OFFSET_OUT_OF_RANGE, None, start, leo, hw)
            limit = leo if max_offset is None else min(max_offset, leo)
            if fetch_offset >= limit:
                return FetchData(ErrorCode.NONE, None, start, leo, hw)
            segments = view.segments
            i = max(bisect.bisect_right(view.bases, fetch_offset) - 1, 0)
            stale = False
            while i < len(segments):
                segment = segments[i]
                if segment.base_offset >= limit:
                    break
                if not segment.file.acquire():
                    stale = True
                    break
                try:
                    max_position = None
                    if limit < segment.next_offset:
                        found = segment.translate_offset(limit)
                        max_position = found[0] if found is not None else None
                    region = segment.read(
                        fetch_offset, max_bytes, max_position=max_position, min_one_batch=min_one_batch
                    )
                finally:
                    segment.file.release()
                if region is not None:
                    return FetchData(ErrorCode.NONE, region, start, leo, hw)
                i += 1
            if not stale:
                return FetchData(ErrorCode.NONE, None, start, leo, hw)
        return FetchData(ErrorCode.NONE, None, self._log_start_offset, self._leo, self._high_watermark)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the earliest record (at or after the log start) whose timestamp is
        >= ``timestamp``; None when there is none. Exact for non-monotonic CreateTime timestamps."""
        start = self._log_start_offset
        for segment in self._view.segments:
            if segment.largest_timestamp < timestamp or segment.next_offset <= start:
                continue
            if not segment.file.acquire():
                continue
            try:
                found = segment.find_offset_by_timestamp(timestamp, start)
            finally:
                segment.file.release()
            if found is not None:
                return found
        return None

    def offset_for_max_timestamp(self) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the first record (at or after the log start) carrying the largest
        timestamp (ListOffsets -3); None for an empty log."""
        start = self._log_start_offset
        best: tuple[int, int, LogSegment] | None = None  # (timestamp, offset of its batch's last record, segment)
        for segment in self._view.segments:
            if segment.next_offset <= start or segment.largest_timestamp < 0:
                continue
            candidate: tuple[int, int] | None
            if segment.base_offset >= start:
                candidate = (segment.largest_timestamp, segment.offset_of_largest_timestamp)
            else:  # the segment holding the log start: only its records from there count
                if not segment.file.acquire():
                    continue
                try:
                    candidate = segment.max_timestamp_from(start)
                finally:
                    segment.file.release()
                if candidate is None:
                    continue
            if best is None or candidate[0] > best[0]:
                best = (candidate[0], candidate[1], segment)
        if best is None:
            return None
        timestamp, offset, segment = best
        if not segment.file.acquire():
            return None
        try:
            data = segment.batch_at(offset)
        finally:
            segment.file.release()
        if data is not None:
            for record in decode_batch_records(data):
                if record.offset >= start and record.timestamp == timestamp:
                    return record.offset, record.timestamp
        return offset, timestamp

    def legacy_offsets_before(
        self, timestamp: int, max_num_offsets: int, *, end_offset: int | None = None
    ) -> list[int]:
        """Kafka 0.8 ``getOffsetsBefore``: segment base offsets (the first one replaced by the log start)
        whose segment was last written at or before ``timestamp``, plus the log end (``end_offset``,
        default the log end offset) when the active segment is not empty; -1 means latest, -2 earliest.
        Descending without repeats, at most ``max_num_offsets``."""
        segments = self._view.segments
        end = self._leo if end_offset is None else end_offset
        pairs = [(max(s.base_offset, self._log_start_offset), s.last_modified_ms) for s in segments]
        if segments[-1].size > 0:
            pairs.append((end, self._time.milliseconds()))
        if timestamp == -1:
            index = len(pairs) - 1
        elif timestamp == -2:
            index = 0
        else:
            index = len(pairs) - 1
            while index >= 0 and pairs[index][1] > timestamp:
                index -= 1
        count = min(max_num_offsets, index + 1)
        return sorted({pairs[index - j][0] for j in range(count)}, reverse=True)

    # -- flush --------------------------------------------------------------------------------------
    def needs_flush(self, now_ms: int) -> bool:
        """Whether the flush task should flush now (``flush.ms`` elapsed with unflushed data, or a rolled
        segment awaits its fsync)."""
        if self._roll_flush_offset > self._recovery_point:
            return True
        return self._leo > self._recovery_point and now_ms - self._last_flush_ms >= self._config.flush_interval_ms

    def flush(self, offset: int | None = None) -> None:
        """fsync every segment holding offsets in [recovery point, ``offset``) (default: the log end),
        then move the recovery point there. Safe from any thread."""
        target = self._leo if offset is None else min(offset, self._leo)
        with self.lock:
            if self._closed:
                return
            segments = [
                s for s in self._view.segments if s.next_offset > self._recovery_point and s.base_offset < target
            ]
            held = [s for s in segments if s.file.acquire()]
            for segment in held:
                segment.index.flush(fsync=True)
                segment.time_index.flush(fsync=True)
        try:
            for segment in held:
                os.fsync(segment.file.fd)
                segment.txn_index.flush()
        finally:
            for segment in held:
                segment.file.release()
        with self.lock:
            if target > self._recovery_point:
                self._recovery_point = target
            if offset is None:
                self._unflushed_messages = 0
            self._last_flush_ms = self._time.milliseconds()

    def flush_if_due(self, now_ms: int) -> None:
        """The flush task's step: everything when ``flush.ms`` passed, else just the rolled segments."""
        if self._leo > self._recovery_point and now_ms - self._last_flush_ms >= self._config.flush_interval_ms:
            self.flush()
        else:
            self.flush_rolled()

    def flush_rolled(self) -> None:
        """fsync segments rolled since the last flush (the LogManager's flush task)."""
        if self._roll_flush_offset > self._recovery_point:
            self.flush(self._roll_flush_offset)

    # -- truncation (replication) -------------------------------------------------------------------
    def truncate_to(self, offset: int) -> None:
        """Remove every batch that ends at or after ``offset`` (a follower diverging from its leader).

        The log end becomes ``offset`` when it is a batch boundary, else the base offset of the batch
        holding it. Below the log start this is ``truncate_fully_and_start_at(offset)``."""
        if offset < 0:
            raise OffsetOutOfRangeError(f"cannot truncate to negative offset {offset}")
        with self.lock:
            if offset >= self._leo:
                return
            if offset < self._log_start_offset:
                self.truncate_fully_and_start_at(offset)
                return
            now = self._time.milliseconds()
            segments = self._view.segments
            keep = [s for s in segments if s.base_offset < offset] or [segments[0]]
            removed = [s for s in segments if s not in keep]
            keep[-1].truncate_to(offset)
            self._view = _view(keep)
            self._trash_segments(removed, now)
            self._leo = keep[-1].next_offset
            self._after_truncation()

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete everything and continue empty at ``offset`` (log start = log end = high watermark)."""
        if offset < 0:
            raise OffsetOutOfRangeError(f"cannot start a log at negative offset {offset}")
        with self.lock:
            now = self._time.milliseconds()
            self._trash_segments(list(self._view.segments), now)  # renamed first: the new name is free
            self._view = _view([LogSegment.create(self._dir, offset, now)])
            self._leo = self._log_start_offset = offset
            self._epochs.clear()
            self._producers.clear()
            self._producers.delete_snapshots(above=-1)
            self._after_truncation()

    def _after_truncation(self) -> None:
        leo = self._leo
        self._high_watermark = min(max(self._high_watermark, self._log_start_offset), leo)
        self._recovery_point = min(self._recovery_point, leo)
        self._roll_flush_offset = min(self._roll_flush_offset, leo)
        self.first_dirty_offset = min(max(self.first_dirty_offset, self._log_start_offset), leo)
        self._epochs.truncate_from_end(leo)
        self._rebuild_producer_state()

    # -- deletes ------------------------------------------------------------------------------------
    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start up to ``offset`` (-1: the high watermark) and delete segments
        wholly below it. Raises ``OffsetOutOfRangeError`` beyond the high watermark. Returns the log start."""
        hw = self._high_watermark
        if offset == -1:
            offset = hw
        if offset < 0 or offset > hw:
            raise OffsetOutOfRangeError(
                f"{self._dir.name}: cannot delete records before {offset}: beyond the high watermark {hw}"
            )
        with self.lock:
            if offset > self._log_start_offset:
                self._log_start_offset = offset
                self._epochs.truncate_from_start(offset)
                self.first_dirty_offset = max(self.first_dirty_offset, offset)
            self._delete_below_log_start(self._time.milliseconds())
            return self._log_start_offset

    def delete_old_segments(self) -> int:
        """Retention: delete the oldest segments (never the active one) that are wholly below the log
        start, or, with ``cleanup.policy`` delete, older than ``retention.ms`` (by their largest record
        timestamp, or last write when they have none) or beyond ``retention.bytes``. Only segments wholly
        below the high watermark go. Returns how many were deleted; also purges due ``.deleted`` files."""
        now = self._time.milliseconds()
        config = self._config
        with self.lock:
            deleted = self._delete_below_log_start(now)
            segments = self._view.segments
            if "delete" in config.cleanup_policy:
                total = sum(s.size for s in segments)
                doomed = []
                for segment, following in zip(segments, segments[1:]):
                    if following.base_offset > self._high_watermark:
                        break
                    ts = segment.largest_timestamp if segment.largest_timestamp >= 0 else segment.last_modified_ms
                    by_time = config.retention_ms >= 0 and now - ts > config.retention_ms
                    by_size = config.retention_bytes >= 0 and total - segment.size >= config.retention_bytes
                    if not (by_time or by_size):
                        break
                    doomed.append(segment)
                    total -= segment.size
                if doomed:
                    self._delete_head(doomed, now)
                    deleted += len(doomed)
        self.purge_deleted_segments(now)
        return deleted

    def _delete_below_log_start(self, now: int) -> int:
        segments = self._view.segments
        doomed = []
        for segment, following in zip(segments, segments[1:]):
            if following.base_offset > self._log_start_offset:
                break
            doomed.append(segment)
        if doomed:
            self._delete_head(doomed, now)
        return len(doomed)

    def _delete_head(self, doomed: list[LogSegment], now: int) -> None:
        """Remove the first ``len(doomed)`` segments (caller holds the lock)."""
        remaining = self._view.segments[len(doomed) :]
        self._view = _view(remaining)
        if remaining[0].base_offset > self._log_start_offset:
            self._log_start_offset = remaining[0].base_offset
            self._epochs.truncate_from_start(self._log_start_offset)
        self._high_watermark = max(self._high_watermark, self._log_start_offset)
        self._recovery_point = max(self._recovery_point, self._log_start_offset)
        self.first_dirty_offset = max(self.first_dirty_offset, self._log_start_offset)
        self._trash_segments(doomed, now)
        for segment in doomed:
            log.info(
                "%s: deleted segment %d (offsets below %d)", self._dir.name, segment.base_offset, segment.next_offset
            )

    def _trash_segments(self, segments, now: int) -> None:
        """Rename segments to ``.deleted``; their files go after ``file.delete.delay.ms`` (caller holds the lock)."""
        for segment in segments:
            try:
                segment.change_suffix(DELETED_SUFFIX)
            except FileNotFoundError:
                pass
            self._trash.append((now + self._config.file_delete_delay_ms, segment))

    def purge_deleted_segments(self, now: int | None = None, *, force: bool = False) -> int:
        """Delete the files of removed segments whose delay has passed (all with ``force``)."""
        now = self._time.milliseconds() if now is None else now
        with self.lock:
            due = [seg for when, seg in self._trash if force or when <= now]
            self._trash = [(when, seg) for when, seg in self._trash if not (force or when <= now)]
        for segment in due:
            segment.file.close()  # the descriptor lives on while file regions hold it
            segment.delete_files()
        return len(due)

    def swap_cleaned(self, old: list[LogSegment], new: LogSegment) -> bool:
        """Put the compacted segment ``new`` (files ``*.cleaned``) in place of ``old``, a run of inactive
        segments: ``new`` -> ``.swap``, ``old`` -> ``.deleted``, ``new`` -> final names, then the list swap.
        Returns False, changing nothing, if ``old`` is no longer such a run (the list changed meanwhile)."""
        with self.lock:
            segments = self._view.segments
            try:
                first = segments.index(old[0])
            except ValueError:
                return False
            if segments[first : first + len(old)] != tuple(old) or first + len(old) >= len(segments):
                return False
            new.change_suffix(SWAP_SUFFIX)
            self._trash_segments(old, self._time.milliseconds())
            new.change_suffix("")
            self._view = _view(segments[:first] + (new,) + segments[first + len(old) :])
            return True

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


def _roll_jitter(config: LogConfig) -> int:
    """A segment's random roll jitter, as Kafka draws it: uniform below min(segment.jitter.ms, segment.ms)."""
    bound = min(config.segment_jitter_ms, config.roll_ms)
    return random.randrange(bound) if bound > 0 else 0


def _check_recompressed_sizes(batches, max_message_bytes: int, segment_bytes: int) -> None:
    """The size limits again, on the batches as recompressed (``compression.type``), as Kafka checks them."""
    for _, header in batches:
        size = header.batch_length + LOG_OVERHEAD
        if size > max_message_bytes:
            raise LogAppendError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"batch of {size} bytes once recompressed (compression.type) exceeds max.message.bytes={max_message_bytes}",
            )
        if size > segment_bytes:
            raise LogAppendError(
                ErrorCode.RECORD_LIST_TOO_LARGE,
                f"batch of {size} bytes once recompressed (compression.type) exceeds segment.bytes={segment_bytes}",
            )
