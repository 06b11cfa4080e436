"""``LogFlush``: fsync of a partition log's segments and the recovery point (everything below it was fsynced).

``flush.messages`` flushes from the append path (the writer thread); ``flush.ms`` and the fsync of rolled
segments are the LogManager's flush task (``needs_flush``, ``flush_if_due``, ``flush_rolled``). ``flush``
is safe from any thread: it picks the segments and flushes their indexes under ``lock``, fsyncs the
``.log`` files outside it (holding each file with ``acquire``), then moves the recovery point under it.
"""

from __future__ import annotations

import os

from broker.log.log_state import PartitionLogState


class LogFlush(PartitionLogState):
    """fsync and the recovery point of a ``PartitionLog`` (a part of it; see ``partition_log``)."""

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
