"""Reusable receive buffers for large frames, shared by the broker (requests) and the client (responses).

A frame of hundreds of kilobytes or more is received straight into a pooled buffer instead of a fresh
allocation: fresh memory costs page faults and zero-filling, and leaves the CPU cache cold. On this
project's machines that halves the broker's append rate (``bench/broker_bench.py``, raw produce) and
costs the client about a sixth of its CPU per fetched byte.

A buffer is reused only when nothing refers to its memory any more: a bytearray with a live export (a
``memoryview``, a numpy array or Arrow buffer over it) cannot be resized, and that is what is checked.
Two ways back into the pool:

- ``release(buf)``: the owner knows the frame is done with (the broker, after handling a request); the
  buffer is pooled now if no view is alive, else left to the garbage collector;
- ``lend(size)``: the frame is handed on to code that keeps views of it for an unknown time (the
  client's fetched record batches); lent buffers are reclaimed at a later ``acquire``/``lend`` once
  their last view is gone. Whoever keeps using the bytes must keep a view (an export), not just the
  bytearray: a buffer without exports counts as free.

Sizes are rounded up to powers of two (``size_class``); at most ``max_buffers`` buffers and, when
``max_bytes`` is given, at most ``max_bytes`` bytes are pooled, and ``max_buffers`` lent buffers tracked
(older lent ones are forgotten, and freed by the garbage collector). ``take_free`` hands out only a
buffer that is already pooled, never a new one. Not thread-safe: one pool per connection (the client)
or per event loop (the broker's connections share one), used by the thread or loop that owns it.
"""

from __future__ import annotations

__all__ = ["FramePool", "POOLED_FRAME_SIZE", "size_class"]

POOLED_FRAME_SIZE = 64 * 1024
"""Frames at least this big are received into pooled buffers (smaller ones cost no page faults)."""


def size_class(size: int) -> int:
    """The pool's size for a buffer of at least ``size`` bytes: the next power of two (at least 2)."""
    return 1 << max(size - 1, 1).bit_length()


def _exported(buf: bytearray) -> bool:
    """Has ``buf`` live exports (memoryviews)? A resize raises BufferError then. Shrinking by one byte and
    putting it back never reallocates, where growing a full buffer first (``append``) copies all of it."""
    if not buf:
        try:
            buf.append(0)
        except BufferError:
            return True
        buf.pop()
        return False
    try:
        last = buf.pop()
    except BufferError:
        return True
    buf.append(last)
    return False


class FramePool:
    __slots__ = ("_free", "_lent", "max_buffers", "max_bytes", "reused", "allocated")

    def __init__(self, max_buffers: int = 4, max_bytes: int | None = None) -> None:
        self._free: dict[int, list[bytearray]] = {}
        self._lent: list[bytearray] = []
        self.max_buffers = max_buffers
        self.max_bytes = max_bytes
        self.reused = 0
        self.allocated = 0

    @property
    def pooled_bytes(self) -> int:
        return sum(size * len(bufs) for size, bufs in self._free.items())

    def acquire(self, size: int) -> bytearray:
        """A buffer of at least ``size`` bytes (its contents are stale)."""
        buf = self.take_free(size)
        if buf is not None:
            return buf
        self.allocated += 1
        return bytearray(size_class(size))

    def take_free(self, size: int) -> bytearray | None:
        """A pooled buffer of ``size``'s class (contents stale), or None when there is none: never allocates."""
        if self._lent:
            self._reclaim()
        free = self._free.get(size_class(size))
        if free:
            self.reused += 1
            return free.pop()
        return None

    def lend(self, size: int) -> bytearray:
        """``acquire(size)``, and take the buffer back by itself once no view of it is alive."""
        buf = self.acquire(size)
        self._lent.append(buf)
        if len(self._lent) > self.max_buffers:
            del self._lent[0]
        return buf

    def release(self, buf: bytearray) -> bool:
        """Return ``buf`` for reuse when no view of it is alive; True when it was pooled."""
        if _exported(buf):
            return False
        return self._pool(buf)

    def _pool(self, buf: bytearray) -> bool:
        if len(buf) != size_class(len(buf)) or sum(len(v) for v in self._free.values()) >= self.max_buffers:
            return False
        if self.max_bytes is not None and self.pooled_bytes + len(buf) > self.max_bytes:
            return False
        self._free.setdefault(len(buf), []).append(buf)
        return True

    def _reclaim(self) -> None:
        lent = []
        for buf in self._lent:
            if _exported(buf):
                lent.append(buf)
            else:
                self._pool(buf)
        self._lent = lent
