"""Reusable receive buffers for large request frames (one pool per connection).

A produce frame of hundreds of kilobytes is received straight into a pooled buffer instead of a fresh
allocation: fresh memory costs page faults and, once written to the log, leaves the CPU cache cold, which
halves the append rate on this project's machines (``bench/broker_bench.py``, raw produce). A buffer goes
back to the pool only when nothing refers to it any more: ``release`` checks that the bytearray has no
live exports (no memoryview of the request still exists) and otherwise lets it be garbage-collected, so
a handler that kept a view can never see its bytes overwritten.

Sizes are rounded up to powers of two; at most ``max_buffers`` are kept. Event-loop only.
"""

from __future__ import annotations


class FramePool:
    __slots__ = ("_free", "max_buffers", "reused", "allocated")

    def __init__(self, max_buffers: int = 4) -> None:
        self._free: dict[int, list[bytearray]] = {}
        self.max_buffers = max_buffers
        self.reused = 0
        self.allocated = 0

    def acquire(self, size: int) -> bytearray:
        """A buffer of at least ``size`` bytes (its contents are stale)."""
        cls = 1 << max(size - 1, 1).bit_length()
        free = self._free.get(cls)
        if free:
            self.reused += 1
            return free.pop()
        self.allocated += 1
        return bytearray(cls)

    def release(self, buf: bytearray) -> bool:
        """Return ``buf`` for reuse when no view of it is alive; True when it was pooled."""
        try:
            buf.append(0)  # a bytearray with live exports cannot be resized: BufferError
        except BufferError:
            return False
        buf.pop()
        if sum(len(v) for v in self._free.values()) >= self.max_buffers:
            return False
        self._free.setdefault(len(buf), []).append(buf)
        return True
