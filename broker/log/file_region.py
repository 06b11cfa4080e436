"""Reference-counted segment files opened on demand, and ``FileRegion``: a slice of one that the network
layer sends with ``sendfile``.

Lifetime contract (reference counting, not a timer): a segment's ``.log`` file is a ``SharedFile`` owned by
the ``LogSegment``. Every ``FileRegion`` returned by a read holds its own reference, so the descriptor stays
open until the segment is closed *and* every region has been released, even when the segment was deleted
(its file renamed to ``.deleted`` or unlinked) right after the read. A region is released by
``release()``, by leaving its ``with`` block, or when it is garbage collected (CPython frees it as soon as
the last reference goes, so a handler that simply drops the region never leaks the descriptor).

Bounded descriptors: a ``SharedFile`` opens its descriptor on first use (``acquire``/``pin``), and the
process-wide ``OPEN_FILES`` cache closes the least recently used *idle* ones (only the owner's reference
left: no region, no pin) when more than ``OPEN_FILES.capacity`` are open; the next use opens the file again
by its current path. Recency is tracked the CLOCK way (a "used" bit set without a lock, files whose bit
is set get a second chance), so a use of an open file costs no shared lock. A segment nobody reads or writes therefore holds no descriptor, and a broker with tens
of thousands of partitions stays within its open-file limit. Whoever uses ``fd`` must hold a reference
(``acquire``/``pin``, then ``release``) for as long as it uses the number: only then is it open and not
reused for another file. The capacity defaults to a quarter of ``RLIMIT_NOFILE`` (16 to 4096), leaving the
rest for sockets and everything else; ``set_max_open_files`` changes it.

If a segment is *truncated* (replication divergence, ``truncate_to``) while a region of it is in
flight, the region can end early: ``read_bytes`` then returns fewer bytes and ``sendfile`` returns 0.
Offsets below the high watermark are never truncated, so consumer reads are not affected.

Thread-safety: ``SharedFile`` reference changes, opening, closing and renaming take its lock; the cache has
its own lock, taken before a file's lock and never while holding one. A region is used by one task at a time.
"""

from __future__ import annotations

import errno
import os
import resource
import threading
from collections import OrderedDict
from pathlib import Path

__all__ = ["FileRegion", "OPEN_FILES", "OpenFileCache", "SharedFile", "set_max_open_files"]


def _default_max_open_files() -> int:
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ValueError, OSError):
        soft = 1024
    if soft == resource.RLIM_INFINITY or soft <= 0:
        soft = 1 << 16
    return max(16, min(4096, soft // 4))


class OpenFileCache:
    """The ``SharedFile``s that hold a descriptor, in opening order; closes idle ones beyond ``capacity``.

    Eviction walks from the oldest: a file used since it was last looked at (``SharedFile._recent``) goes
    to the back with its bit cleared (second chance), an idle one is closed, one in use (a region or a pin
    besides the owner's reference) is kept. When the files in use alone exceed the capacity, the cache
    stays above it until they are released.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._files: OrderedDict[SharedFile, None] = OrderedDict()

    def __len__(self) -> int:
        """Descriptors open through this cache."""
        return len(self._files)

    def add(self, file: SharedFile) -> None:
        """Count ``file``, which has just opened its descriptor; close idle files beyond the capacity."""
        with self._lock:
            files = self._files
            files[file] = None
            if len(files) > self.capacity:
                self._trim()

    def forget(self, file: SharedFile) -> None:
        with self._lock:
            self._files.pop(file, None)

    def trim(self) -> None:
        """Close idle files until at most ``capacity`` are open (or only busy ones are left)."""
        with self._lock:
            self._trim()

    def _trim(self) -> None:
        files = self._files
        busy: list[SharedFile] = []
        budget = 2 * len(files)  # every file is looked at most twice (once more after its second chance)
        while files and len(files) + len(busy) > self.capacity and budget > 0:
            budget -= 1
            file, _ = files.popitem(last=False)
            if file._recent:
                file._recent = False
                files[file] = None
            elif not file._close_if_idle():
                busy.append(file)
        for file in busy:  # in use: most recently used by definition
            files[file] = None


OPEN_FILES = OpenFileCache(_default_max_open_files())


def set_max_open_files(capacity: int) -> None:
    """Change how many segment descriptors the process keeps open (closing idle ones at once if fewer)."""
    if capacity < 1:
        raise ValueError(f"the open segment file limit must be at least 1, not {capacity}")
    OPEN_FILES.capacity = capacity
    OPEN_FILES.trim()


class SharedFile:
    """A file opened on demand, with an owner reference plus one per outstanding ``FileRegion`` or pin.

    ``SharedFile(path, fd)`` adopts an open descriptor; ``fd=-1`` starts closed-until-used ("parked").
    """

    __slots__ = ("path", "_fd", "_refs", "_owner_closed", "_lock", "_cache", "_recent")

    def __init__(self, path: Path, fd: int = -1, *, cache: OpenFileCache | None = None) -> None:
        self.path = path
        self._fd = fd
        self._refs = 1  # the owner's
        self._owner_closed = False
        self._lock = threading.Lock()
        self._cache = OPEN_FILES if cache is None else cache
        self._recent = False
        if fd >= 0:
            self._cache.add(self)

    @property
    def fd(self) -> int:
        """The descriptor: valid only while you hold a reference (``acquire``/``pin``); -1 when parked or closed."""
        return self._fd

    @property
    def closed(self) -> bool:
        """True once the owner closed it and every region released it (it cannot be used again)."""
        return self._refs == 0

    @property
    def is_open(self) -> bool:
        """Whether a descriptor is open right now (False when parked or closed)."""
        return self._fd >= 0

    @property
    def references(self) -> int:
        return self._refs

    def acquire(self) -> bool:
        """Take a reference, opening the file if it is parked; False when the file is already closed.

        Raises ``OSError`` when a parked file cannot be opened again (removed behind the broker's back)."""
        with self._lock:
            if self._refs == 0:
                return False
            opened = self._fd < 0
            if opened:
                self._fd = os.open(self.path, os.O_RDWR)
            self._refs += 1
        if opened:
            self._cache.add(self)
        else:
            self._recent = True  # racy on purpose: an approximate recency bit (see OpenFileCache)
        return True

    def pin(self) -> int:
        """``acquire`` and return the descriptor; ``OSError(EBADF)`` when closed. Pair with ``release``."""
        if not self.acquire():
            raise OSError(errno.EBADF, "segment file already closed", str(self.path))
        return self._fd

    def release(self) -> None:
        """Drop a reference; the descriptor is closed with the last one."""
        with self._lock:
            self._refs -= 1
            if self._refs > 0 or self._fd < 0:
                return
            fd, self._fd = self._fd, -1
            os.close(fd)
        self._cache.forget(self)

    def park(self) -> None:
        """Close the descriptor now if nothing but the owner holds the file (the next use opens it again)."""
        if self._close_if_idle():
            self._cache.forget(self)

    def _close_if_idle(self) -> bool:
        """Close the descriptor when only the owner holds it; True when no descriptor is left open."""
        with self._lock:
            if self._fd < 0:
                return True
            if self._refs != 1 or self._owner_closed:
                return False
            fd, self._fd = self._fd, -1
            os.close(fd)
            return True

    def rename(self, path: Path) -> None:
        """Rename the file (when it exists) and follow it: an open descriptor stays valid, a reopen uses ``path``."""
        with self._lock:
            if self.path.exists():
                os.replace(self.path, path)
            self.path = path

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
