"""``PartitionLogState``: the fields every part of a ``PartitionLog`` shares, and the helpers more than one part calls.

The parts (``log_recovery``, ``log_append``, ``log_read``, ``log_flush``, ``log_retention``) derive from
it; what each field means, and which thread may touch it under which lock, is in ``partition_log``'s
docstring. ``_view`` is a ``SegmentView``: the segment list as an immutable tuple with its base offsets
(for bisect), replaced copy-on-write under ``lock`` so readers on any thread never see a half-changed list.
"""

from __future__ import annotations

import bisect
import random
import re
import threading
from pathlib import Path
from typing import NamedTuple

from broker.log.clock import Clock
from broker.log.config import LogConfig
from broker.log.leader_epoch import LeaderEpochCache
from broker.log.log_loader import DELETED_SUFFIX
from broker.log.producer_state import CompletedTxn, ProducerStateManager
from broker.log.segment import LogSegment
from broker.log.transaction_index import AbortedTxn

__all__ = [
    "SNAPSHOTS_TO_KEEP",
    "PartitionLogState",
    "SegmentView",
    "draw_roll_jitter",
    "parse_partition_dir",
    "segment_view",
]

_DIR_NAME = re.compile(r"^(.+)-(\d+)$")
SNAPSHOTS_TO_KEEP = 3


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """``"orders-3"`` -> ``("orders", 3)``; None for anything else."""
    m = _DIR_NAME.match(name)
    if not m:
        return None
    return m.group(1), int(m.group(2))


class SegmentView(NamedTuple):
    """Immutable snapshot of the segment list with its base offsets (for bisect)."""

    segments: tuple[LogSegment, ...]
    bases: tuple[int, ...]


def segment_view(segments) -> SegmentView:
    segments = tuple(segments)
    return SegmentView(segments, tuple(s.base_offset for s in segments))


def draw_roll_jitter(config: LogConfig) -> int:
    """A segment's random roll jitter, as Kafka draws it: uniform below min(segment.jitter.ms, segment.ms)."""
    bound = min(config.segment_jitter_ms, config.roll_ms)
    return random.randrange(bound) if bound > 0 else 0


class PartitionLogState:
    """The fields of one partition's log (see ``partition_log``); the parts of ``PartitionLog`` derive from it."""

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
        self._view = segment_view(segments)
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
        self.roll_jitter_ms = draw_roll_jitter(config)
        self._trash: list[tuple[int, LogSegment]] = []
        self._closed = False
        #: first offset not yet compacted (the cleaner's checkpoint); the cleaner moves it
        self.first_dirty_offset = self._log_start_offset

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

    def _trash_segments(self, segments, now: int) -> None:
        """Rename segments to ``.deleted``; their files go after ``file.delete.delay.ms`` (caller holds the lock)."""
        for segment in segments:
            try:
                segment.change_suffix(DELETED_SUFFIX)
            except FileNotFoundError:
                pass
            self._trash.append((now + self._config.file_delete_delay_ms, segment))
