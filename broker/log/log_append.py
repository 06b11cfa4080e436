"""``LogAppend``: appends to a partition log (as leader, as follower, transaction markers) and segment rolls.

An append validates the whole request first (``validation``; on the leader also ``message.timestamp.*``
bounds and the recompression of ``compression.type``), then writes it with one ``pwrite`` per segment, so
nothing partial is ever appended. On the leader the offsets and the leader epoch are rewritten in each
batch header (``_OFFSET_LENGTH_EPOCH``, outside the CRC) and LogAppendTime inside it. The active (last)
segment rolls on ``segment.bytes``, ``segment.ms`` less the segment's jitter (broker time since its first
append), a full offset or time index, or a relative offset that would not fit in 31 bits; a roll
also writes a producer-state snapshot (``*.snapshot``). ``flush.messages`` fsyncs from here.

Writer thread only (the broker's event loop). The fast path takes no lock; a roll swaps the segment list
under ``lock``.
"""

from __future__ import annotations

import logging
import struct
from typing import NamedTuple

from broker.log.errors import LogAppendError, LogClosedError
from broker.log.log_flush import LogFlush
from broker.log.log_state import SNAPSHOTS_TO_KEEP, draw_roll_jitter, segment_view
from broker.log.producer_state import CompletedTxn, EndTxnMarker, ProducerStateEntry, read_end_txn_marker
from broker.log.recompression import check_timestamps, recompress
from broker.log.segment import MAX_RELATIVE_OFFSET, LogSegment
from broker.log.validation import validate_follower_batches, validate_leader_batches
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import CorruptRecordError, build_control_batch, set_log_append_time
from spark_kafkalog.records.batch import CONTROL_BIT, LOG_OVERHEAD, BatchHeader

__all__ = ["AppendInfo", "LogAppend"]

log = logging.getLogger("kafkalog.log")


# base_offset, batch_length, partition_leader_epoch: the first 16 bytes of a batch, outside the CRC
_OFFSET_LENGTH_EPOCH = struct.Struct(">qii")


def _leader_marker(buf, pos: int, header: BatchHeader) -> EndTxnMarker:
    """The marker of a control batch appended as leader; INVALID_RECORD when it is not one."""
    if header.producer_id < 0:
        raise LogAppendError(ErrorCode.INVALID_RECORD, "a control batch needs a producer id")
    try:
        return read_end_txn_marker(memoryview(buf)[pos : pos + header.batch_length + LOG_OVERHEAD], header)
    except (ValueError, CorruptRecordError) as e:
        raise LogAppendError(ErrorCode.INVALID_RECORD, f"control batch: {e}") from None


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


class LogAppend(LogFlush):
    """Appends and rolls of a ``PartitionLog`` (a part of it; see ``partition_log``)."""

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
            self.roll_jitter_ms = draw_roll_jitter(self._config)
            self._view = segment_view(segments + (new,))
            if active.size:
                self._roll_flush_offset = max(self._roll_flush_offset, base)
            self._producers.evict_below(self._log_start_offset)
            self._producers.write_snapshot(state_offset, sync=False)
            self._producers.retain_snapshots(SNAPSHOTS_TO_KEEP)
            log.debug("%s: rolled a new segment at offset %d", self._dir.name, base)
            return new
