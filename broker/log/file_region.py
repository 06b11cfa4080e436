"""Reference-counted segment files, and ``FileRegion``: a slice of one that the network layer sends with ``sendfile``.

Lifetime contract (reference counting, not a timer): a segment's ``.log`` file descriptor is a
``SharedFile`` owned by the ``LogSegment``. Every ``FileRegion`` returned by a read holds its own
reference, so the descriptor stays open until the segment is closed *and* every region has been
released, even when the segment was deleted (its file renamed to ``.deleted`` or unlinked) right after
the read. A region is released by ``release()``, by leaving its ``with`` block, or when it is garbage
collected (CPython frees it as soon as the last reference goes, so a handler that simply drops the
region never leaks the descriptor).

If a segment is *truncated* (replication divergence, ``truncate_to``) while a region of it is in
flight, the region can end early: ``read_bytes`` then returns fewer bytes and ``sendfile`` returns 0.
Offsets below the high watermark are never truncated, so consumer reads are not affected.

Thread-safety: ``SharedFile`` reference changes take a lock; a region is used by one task at a time.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["FileRegion", "SharedFile"]


class SharedFile:
    """An open file descriptor with an owner reference plus one per outstanding ``FileRegion``."""

    __slots__ = ("path", "_fd", "_refs", "_owner_closed", "_lock")

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd
        self._refs = 1  # the owner's
        self._owner_closed = False
        self._lock = threading.Lock()

    @property
    def fd(self) -> int:
        """The descriptor (-1 once closed)."""
        return self._fd

    @property
    def closed(self) -> bool:
        return self._fd < 0

    @property
    def references(self) -> int:
        return self._refs

    def acquire(self) -> bool:
        """Take a reference; False when the file is already closed."""
        with self._lock:
            if self._fd < 0:
                return False
            self._refs += 1
            return True

    def release(self) -> None:
        """Drop a reference; the descriptor is closed with the last one."""
        with self._lock:
            self._refs -= 1
            if self._refs == 0 and self._fd >= 0:
                fd, self._fd = self._fd, -1
                os.close(fd)

    def close(self) -> None:
        """Drop the owner's reference (idempotent)."""
        with self._lock:
            if self._owner_closed:
                return
            self._owner_closed = True
        self.release()

    def __repr__(self) -> str:
        return f"SharedFile({self.path.name}, fd={self._fd}, refs={self._refs})"


class FileRegion:
    """``length`` bytes at ``position`` of a segment file: ``fileno()``, ``.position``, ``len()``, ``read_bytes()``.

    Construct only with a reference already taken on ``file`` (``LogSegment.read`` does this); the region
    releases it exactly once.
    """

    __slots__ = ("_file", "position", "_length", "_released")

    def __init__(self, file: SharedFile, position: int, length: int) -> None:
        self._file = file
        self.position = position
        self._length = length
        self._released = False

    def fileno(self) -> int:
        if self._released:
            raise ValueError("file region already released")
        return self._file.fd

    def __len__(self) -> int:
        return self._length

    @property
    def end(self) -> int:
        return self.position + self._length

    @property
    def path(self) -> Path:
        return self._file.path

    def read_bytes(self) -> bytes:
        """The region's bytes, read with ``pread`` (shorter only if the file was truncated meanwhile)."""
        fd = self.fileno()
        want = self._length
        chunks = []
        pos = self.position
        while want > 0:
            chunk = os.pread(fd, want, pos)
            if not chunk:
                break
            chunks.append(chunk)
            pos += len(chunk)
            want -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def release(self) -> None:
        """Give the file reference back (idempotent)."""
        if not self._released:
            self._released = True
            self._file.release()

    def __enter__(self) -> FileRegion:
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # noqa: BLE001 - never raise from a finaliser (interpreter shutdown)
            pass

    def __repr__(self) -> str:
        state = "released" if self._released else f"fd={self._file.fd}"
        return f"FileRegion({self._file.path.name}, position={self.position}, length={self._length}, {state})"
