"""The sparse indexes of a segment: ``OffsetIndex`` (offset -> file position) and ``TimeIndex`` (time -> offset).

File formats (big-endian, no header, entries only; the name is the segment's 20-digit base offset):

``<base>.index``, 8-byte entries, one every ``index.interval.bytes`` of batches:

    | offset | size | field                                                            |
    |--------|------|------------------------------------------------------------------|
    | 0      | 4    | relative offset u32: last offset of the indexed batch - base     |
    | 4      | 4    | position u32: byte position of that batch in ``<base>.log``      |

``<base>.timeindex``, 12-byte entries, written with the offset index entries when the segment's largest
timestamp grew, and once more when the segment stops being active:

    | offset | size | field                                                            |
    |--------|------|------------------------------------------------------------------|
    | 0      | 8    | timestamp i64: largest timestamp of the segment up to the entry  |
    | 8      | 4    | relative offset u32: last offset of the batch that holds it      |

An offset index entry (r, p) means the batch at position p ends at offset base + r, so every batch
holding an offset > base + r starts after p. A time index entry (t, r) means no record at an offset
<= base + r has a timestamp above t. Relative offsets are strictly increasing in both files, positions
and timestamps too (entries that would not be are not written).

Entries live in memory (``array``) and reach the file on ``flush()`` (roll, flush, close): the files only
have to be complete for segments below the recovery point, and recovery rebuilds the others. A file
that fails ``load``'s sanity check raises ``CorruptIndexError`` and is rebuilt from the segment.

Concurrency: one writer (the log's append path) and any number of readers. ``append`` writes the
position/timestamp column before the offset column, so a reader that bisects the offsets always finds
the matching entry in the other column. ``truncate`` and ``flush`` are called under the log's lock.
"""

from __future__ import annotations

import os
import struct
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path

from broker.log.errors import CorruptIndexError

__all__ = ["OffsetIndex", "TimeIndex"]


class _Index:
    """Shared machinery: two parallel columns (``_keys`` searched, ``_values`` returned) and the file."""

    ENTRY: struct.Struct
    KEY_TYPE = "I"
    VALUE_TYPE = "I"

    __slots__ = ("path", "_keys", "_values", "_written")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._keys = array(self.KEY_TYPE)
        self._values = array(self.VALUE_TYPE)
        self._written = 0  # entries already in the file

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def size_in_bytes(self) -> int:
        return len(self._keys) * self.ENTRY.size

    # -- file ---------------------------------------------------------------------------------------
    def _read_file(self) -> list[tuple[int, int]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise CorruptIndexError(f"{self.path.name}: missing") from None
        if len(data) % self.ENTRY.size:
            raise CorruptIndexError(f"{self.path.name}: {len(data)} bytes is not a whole number of entries")
        return list(self.ENTRY.iter_unpack(data))

    def flush(self, *, fsync: bool = False) -> None:
        """Write entries not yet in the file (and fsync it when asked)."""
        n = len(self._keys)
        start = self._written
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            if n > start:
                data = self._encode(start, n)
                os.pwrite(fd, data, start * self.ENTRY.size)
                self._written = n
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def reset(self) -> None:
        """Forget every entry and empty the file (before a rebuild)."""
        del self._keys[:]
        del self._values[:]
        self._written = 0
        with open(self.path, "wb"):
            pass

    def truncate_entries(self, n: int) -> None:
        """Keep the first ``n`` entries."""
        if n >= len(self._keys):
            return
        del self._keys[n:]
        del self._values[n:]
        if self._written > n:
            self._written = n
            try:
                os.truncate(self.path, n * self.ENTRY.size)
            except FileNotFoundError:
                self._written = 0

    def rename(self, path: Path) -> None:
        if self.path.exists():
            os.replace(self.path, path)
        self.path = path

    def delete_file(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _encode(self, start: int, stop: int) -> bytes:
        pack = self.ENTRY.pack
        keys, values = self._keys, self._values
        return b"".join([pack(keys[i], values[i]) for i in range(start, stop)])


class OffsetIndex(_Index):
    """Relative offset -> position; see the module docstring for the file format."""

    ENTRY = struct.Struct(">II")
    __slots__ = ()

    def append(self, relative_offset: int, position: int) -> None:
        keys = self._keys
        if keys and (relative_offset <= keys[-1] or position <= self._values[-1]):
            return
        self._values.append(position)
        keys.append(relative_offset)

    def lookup(self, relative_offset: int) -> tuple[int, int]:
        """The last entry at or below ``relative_offset`` as ``(relative_offset, position)``; (-1, 0) if none."""
        i = bisect_right(self._keys, relative_offset) - 1
        if i < 0:
            return -1, 0
        return self._keys[i], self._values[i]

    def truncate_to(self, relative_offset: int) -> None:
        """Drop entries for batches ending at or after ``relative_offset``."""
        self.truncate_entries(bisect_left(self._keys, relative_offset))

    def truncate_to_position(self, position: int) -> None:
        """Drop entries pointing at or beyond ``position``."""
        self.truncate_entries(bisect_left(self._values, position))

    @property
    def last_entry(self) -> tuple[int, int]:
        if not self._keys:
            return -1, 0
        return self._keys[-1], self._values[-1]

    def load(self, segment_size: int) -> None:
        """Read the file and check it: increasing offsets and positions, every position inside the segment."""
        entries = self._read_file()
        last_offset = last_position = -1
        for relative_offset, position in entries:
            if relative_offset <= last_offset or position <= last_position:
                raise CorruptIndexError(f"{self.path.name}: entries not increasing at offset {relative_offset}")
            if position >= segment_size:
                raise CorruptIndexError(
                    f"{self.path.name}: position {position} beyond the segment's {segment_size} bytes"
                )
            last_offset, last_position = relative_offset, position
        self._keys = array(self.KEY_TYPE, [e[0] for e in entries])
        self._values = array(self.VALUE_TYPE, [e[1] for e in entries])
        self._written = len(entries)


class TimeIndex(_Index):
    """Largest timestamp so far -> relative offset; see the module docstring for the file format."""

    ENTRY = struct.Struct(">qI")
    KEY_TYPE = "q"
    __slots__ = ()

    def maybe_append(self, timestamp: int, relative_offset: int) -> None:
        """Add ``(timestamp, relative_offset)`` when it raises the largest timestamp recorded."""
        keys = self._keys
        if keys and (timestamp <= keys[-1] or relative_offset < self._values[-1]):
            return
        self._values.append(relative_offset)
        keys.append(timestamp)

    def lookup_before(self, timestamp: int) -> int:
        """Relative offset of the last entry whose timestamp is below ``timestamp``; -1 if none.

        Every record at or below the returned offset is older than ``timestamp``."""
        i = bisect_left(self._keys, timestamp) - 1
        if i < 0:
            return -1
        return self._values[i]

    def truncate_to(self, relative_offset: int) -> None:
        """Drop entries pointing at ``relative_offset`` or later."""
        values = self._values
        n = len(values)
        while n and values[n - 1] >= relative_offset:
            n -= 1
        self.truncate_entries(n)

    @property
    def last_entry(self) -> tuple[int, int]:
        """(largest timestamp recorded, its relative offset); (-1, -1) if empty."""
        if not self._keys:
            return -1, -1
        return self._keys[-1], self._values[-1]

    def load(self, max_relative_offset: int) -> None:
        """Read the file and check it: increasing timestamps, non-decreasing offsets within the segment."""
        entries = self._read_file()
        last_ts = last_offset = None
        for timestamp, relative_offset in entries:
            if (
                last_ts is not None
                and last_offset is not None
                and (timestamp <= last_ts or relative_offset < last_offset)
            ):
                raise CorruptIndexError(f"{self.path.name}: entries not increasing at timestamp {timestamp}")
            if relative_offset > max_relative_offset:
                raise CorruptIndexError(f"{self.path.name}: offset {relative_offset} beyond the segment's last offset")
            last_ts, last_offset = timestamp, relative_offset
        self._keys = array(self.KEY_TYPE, [e[0] for e in entries])
        self._values = array(self.VALUE_TYPE, [e[1] for e in entries])
        self._written = len(entries)
