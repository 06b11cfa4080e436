"""``LeaderEpochCache``: the first offset written in each leader epoch, kept in ``leader-epoch-checkpoint``.

Entries are ``(epoch, start_offset)`` with both strictly increasing. The leader adds an entry when it
appends the first batch of a new epoch; a follower when it copies one; recovery re-adds them from batch
headers. ``end_offset_for`` answers OffsetForLeaderEpoch: the end offset of an epoch is the start of the
next higher epoch, or the log end for the latest epoch (Kafka's ``LeaderEpochFileCache.endOffsetFor``).

Every change rewrites the checkpoint file atomically (``checkpoint.atomic_write``). Thread-safe: a lock
guards the entries (the writer assigns and truncates the end; retention truncates the start).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from broker.log.checkpoint import CorruptCheckpointError, read_epoch_checkpoint, write_epoch_checkpoint

__all__ = ["LEADER_EPOCH_CHECKPOINT", "LeaderEpochCache", "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET"]

log = logging.getLogger("kafkalog.log")

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    __slots__ = ("path", "unreadable", "_entries", "_lock", "_sync")

    def __init__(self, path: Path, entries: list[tuple[int, int]] | None = None, *, sync: bool = True) -> None:
        self.path = path
        #: the file existed but was rejected by ``read_epoch_checkpoint``: the entries must be rebuilt from
        #: the log's batches (``PartitionLog.open`` then recovers the whole log)
        self.unreadable = False
        self._entries: list[tuple[int, int]] = list(entries or [])
        self._lock = threading.Lock()
        self._sync = sync

    @classmethod
    def load(cls, path: Path) -> LeaderEpochCache:
        """The cache in ``path``. A file that cannot be read or parsed (not UTF-8, negative or non-increasing
        entries, a wrong count, ...) is treated as missing: a warning names it and the reason, the cache
        starts empty with ``unreadable`` set, and the file stays until the rebuilt entries replace it."""
        cache = cls(path)
        try:
            entries = read_epoch_checkpoint(path) or []
        except CorruptCheckpointError as e:
            log.warning("%s; treating the leader epoch checkpoint as missing (epochs are rebuilt from the log)", e)
            cache.unreadable = True
            entries = []
        for epoch, start in entries:
            cache._assign_locked(epoch, start)
        return cache

    @property
    def entries(self) -> list[tuple[int, int]]:
        return list(self._entries)

    @property
    def latest_epoch(self) -> int:
        entries = self._entries
        return entries[-1][0] if entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; entries it contradicts (a higher or equal epoch,
        or a start at or after ``start_offset``) are dropped. Returns True when the cache changed."""
        if epoch < 0 or start_offset < 0:
            return False
        with self._lock:
            changed = self._assign_locked(epoch, start_offset)
            if changed:
                self._write()
            return changed

    def _assign_locked(self, epoch: int, start_offset: int) -> bool:
        entries = self._entries
        if entries and entries[-1][0] == epoch and entries[-1][1] <= start_offset:
            return False
        while entries and (entries[-1][0] >= epoch or entries[-1][1] >= start_offset):
            entries.pop()
        entries.append((epoch, start_offset))
        return True

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end_offset)`` for OffsetForLeaderEpoch.

        The latest epoch ends at the log end; an older one at the start of the next higher epoch, reported
        with the largest known epoch at or below it; an epoch below every entry ends where the first entry
        starts; an epoch above the latest, or an empty cache, gives ``(-1, -1)``."""
        entries = self._entries
        if epoch == UNDEFINED_EPOCH or not entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if epoch == entries[-1][0]:
            return epoch, log_end_offset
        higher = next((e for e in entries if e[0] > epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = [e for e in entries if e[0] <= epoch]
        if not floor:
            return epoch, higher[1]
        return floor[-1][0], higher[1]

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs that start at or after ``end_offset`` (log truncation)."""
        with self._lock:
            entries = self._entries
            n = len(entries)
            while entries and entries[-1][1] >= end_offset:
                entries.pop()
            if len(entries) != n:
                self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop epochs wholly below ``start_offset``; the one holding it now starts there (log start moved)."""
        with self._lock:
            entries = self._entries
            below = [e for e in entries if e[1] <= start_offset]
            if not below or (len(below) == 1 and below[0][1] == start_offset):
                return
            floor = below[-1]
            self._entries = [(floor[0], start_offset)] + [e for e in entries if e[1] > start_offset]
            self._write()

    def clear(self) -> None:
        with self._lock:
            self._entries = []
            self._write()

    def flush(self) -> None:
        with self._lock:
            self._write()

    def _write(self) -> None:
        try:
            write_epoch_checkpoint(self.path, self._entries, sync=self._sync)
        except FileNotFoundError:
            pass  # the partition directory is being deleted

    def __repr__(self) -> str:
        return f"LeaderEpochCache({self._entries})"
