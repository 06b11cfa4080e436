"""The aborted-transaction index of one segment (``<base>.txnindex``, Kafka's ``TransactionIndex``).

One entry per ABORT marker held by the segment, in offset order. Big-endian, no header, 34 bytes each:

    | field              | type | notes                                                           |
    |--------------------|------|-----------------------------------------------------------------|
    | version            | i16  | 0                                                               |
    | producer_id        | i64  |                                                                 |
    | first_offset       | i64  | first offset of the aborted transaction (its first data batch)  |
    | last_offset        | i64  | offset of the ABORT marker                                      |
    | last_stable_offset | i64  | the partition's first unstable offset right after the abort     |

The file exists only for segments with at least one abort: it is created by the first ``append``.
Entries are kept in memory once read (``entries`` loads the file on first use); ``append`` writes the
entry to the file at once (fsync with ``flush``). A file whose size is not a multiple of 34 or holding
an unknown version is unreadable: ``entries`` then drops the tail from the first bad entry (recovery
rebuilds the index of the segments it replays).

Concurrency: one writer (``append``, ``truncate_to``, ``reset``, ``rename``); readers on any thread get
a snapshot (a tuple) from ``entries``.
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import NamedTuple

__all__ = ["AbortedTxn", "TransactionIndex", "TXN_INDEX_SUFFIX"]

log = logging.getLogger("kafkalog.log")

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return _ENTRY.pack(_VERSION, *self)


class TransactionIndex:
    """The aborted transactions whose ABORT marker is in one segment."""

    ENTRY = _ENTRY
    __slots__ = ("path", "_entries")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: tuple[AbortedTxn, ...] | None = None  # None: not read yet

    @property
    def entries(self) -> tuple[AbortedTxn, ...]:
        entries = self._entries
        if entries is None:
            entries = self._entries = self._read()
        return entries

    def _read(self) -> tuple[AbortedTxn, ...]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return ()
        out = []
        for n, (version, *fields) in enumerate(_ENTRY.iter_unpack(raw[: len(raw) - len(raw) % _ENTRY.size])):
            if version != _VERSION:
                log.warning("%s: entry %d has version %d; ignoring it and the rest", self.path, n, version)
                break
            out.append(AbortedTxn(*fields))
        else:
            if len(raw) % _ENTRY.size:
                log.warning("%s: %d trailing bytes ignored", self.path, len(raw) % _ENTRY.size)
        return tuple(out)

    def append(self, entry: AbortedTxn) -> None:
        """Add an entry (its marker must follow every entry already here); creates the file when needed."""
        entries = self.entries
        if entries and entry.last_offset <= entries[-1].last_offset:
            raise ValueError(
                f"{self.path.name}: abort marker {entry.last_offset} does not follow {entries[-1].last_offset}"
            )
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, entry.encode())
        finally:
            os.close(fd)
        self._entries = entries + (entry,)

    def last_offset(self) -> int:
        """The marker offset of the last entry (-1 when empty)."""
        entries = self.entries
        return entries[-1].last_offset if entries else -1

    def truncate_to(self, offset: int) -> None:
        """Drop entries whose marker is at or after ``offset``."""
        entries = self.entries
        keep = tuple(e for e in entries if e.last_offset < offset)
        if len(keep) == len(entries):
            return
        self._rewrite(keep)

    def reset(self) -> None:
        """Forget every entry and delete the file (the segment is being recovered)."""
        self._entries = ()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _rewrite(self, entries: tuple[AbortedTxn, ...]) -> None:
        self._entries = entries
        if not entries:
            self.reset()
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(b"".join(e.encode() for e in entries))
        os.replace(tmp, self.path)

    def flush(self) -> None:
        """fsync the file when it exists."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def rename(self, path: Path) -> None:
        """Rename the file (when it exists) and follow it."""
        try:
            os.replace(self.path, path)
        except FileNotFoundError:
            pass
        self.path = path

    def delete(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self._entries = ()

    def collect(self, start: int, upper: int) -> tuple[list[AbortedTxn], bool]:
        """Entries with ``last_offset >= start`` and ``first_offset < upper``, and whether the search is
        complete (an entry's last stable offset reached ``upper``: later segments cannot add any)."""
        out = []
        for entry in self.entries:
            if entry.last_offset >= start and entry.first_offset < upper:
                out.append(entry)
            if entry.last_stable_offset >= upper:
                return out, True
        return out, False

    def __len__(self) -> int:
        return len(self.entries)
