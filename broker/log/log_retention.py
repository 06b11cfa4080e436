"""``LogRetention``: what removes records from a partition log: truncation, DeleteRecords, retention, and
the cleaner's swap of compacted segments.

Removed segments are renamed ``.deleted`` at once (``_trash_segments``) and their files deleted after
``file.delete.delay.ms`` (``purge_deleted_segments``); file regions already read stay valid. The writer
thread calls ``truncate_to``, ``truncate_fully_and_start_at`` and ``delete_records_before``; background
threads (the LogManager's) call ``delete_old_segments``, ``purge_deleted_segments`` and, from the cleaner,
``swap_cleaned``. Every change of the segment list or the log start happens under ``lock``.
"""

from __future__ import annotations

import logging

from broker.log.errors import OffsetOutOfRangeError
from broker.log.log_loader import SWAP_SUFFIX
from broker.log.log_recovery import LogRecovery
from broker.log.log_state import segment_view
from broker.log.segment import LogSegment

log = logging.getLogger("kafkalog.log")


class LogRetention(LogRecovery):
    """Truncation, deletion and segment swaps of a ``PartitionLog`` (a part of it; see ``partition_log``)."""

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
            self._view = segment_view(keep)
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
            self._view = segment_view([LogSegment.create(self._dir, offset, now)])
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
        self._view = segment_view(remaining)
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
            self._view = segment_view(segments[:first] + (new,) + segments[first + len(old) :])
            return True
