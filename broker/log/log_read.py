"""``LogRead``: reads of a partition log: fetch regions, offsets by timestamp, aborted transactions.

Safe from any thread, lock-free: each read binary-searches one snapshot of the segment list (a tuple
replaced copy-on-write) and holds a segment's file with ``acquire`` while it reads it; a segment deleted
under a ``read`` makes it retry on the new list.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple

from broker.log.file_region import FileRegion
from broker.log.log_state import PartitionLogState
from broker.log.segment import LogSegment
from broker.log.transaction_index import AbortedTxn
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import decode_batch_records

__all__ = ["FetchData", "LogRead"]


class FetchData(NamedTuple):
    """Result of ``read``: ``error`` is NONE or OFFSET_OUT_OF_RANGE; ``records`` None when empty."""

    error: ErrorCode
    records: FileRegion | None
    log_start_offset: int
    log_end_offset: int
    high_watermark: int


class LogRead(PartitionLogState):
    """Reads of a ``PartitionLog`` (a part of it; see ``partition_log``)."""

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
