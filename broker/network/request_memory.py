"""The broker-wide budget for request bytes being received (Kafka's ``queued.max.request.bytes``).

Every large frame (at least ``POOLED_FRAME_SIZE``) is received in chunks; before each chunk its
connection calls ``await wait_turn(frame)`` and after it ``charge(frame, n)`` with the bytes that
actually arrived, so what a frame holds grows with the bytes its client really sent: a client that
announces a 100 MB frame and sends nothing more holds nothing. ``release(frame)`` returns everything
the frame held once it is complete (or its connection is gone).

While the bytes held reach the capacity, connections stop reading their large frames (back-pressure,
as Kafka mutes channels when its memory pool is exhausted), except the oldest frame still being
received: it may always go on, so frames that together exceed the capacity still finish one by one
and no set of frames can wait on each other forever. ``capacity`` <= 0 means unbounded (Kafka's -1).

Event-loop only: all calls come from the broker's loop; not thread-safe.
"""

from __future__ import annotations

import asyncio


class RequestMemory:
    __slots__ = ("capacity", "used", "peak", "_frames", "_waiters")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        self.peak = 0
        self._frames: dict[object, int] = {}  # frame -> bytes held, in the order the frames started
        self._waiters: list[asyncio.Future] = []

    @property
    def frames(self) -> int:
        """Frames currently being received."""
        return len(self._frames)

    def _may_read(self, frame: object) -> bool:
        if self.capacity <= 0 or self.used < self.capacity:
            return True
        return next(iter(self._frames), frame) is frame  # the oldest frame always goes on

    async def wait_turn(self, frame: object) -> None:
        """Return when ``frame`` may receive its next chunk (registers the frame on first call)."""
        self._frames.setdefault(frame, 0)
        while not self._may_read(frame):
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)

    def charge(self, frame: object, nbytes: int) -> None:
        """Account ``nbytes`` more received for ``frame``."""
        self._frames[frame] = self._frames.get(frame, 0) + nbytes
        self.used += nbytes
        self.peak = max(self.peak, self.used)

    def release(self, frame: object) -> None:
        """``frame`` is complete or abandoned: return what it held and wake the waiting connections."""
        self.used -= self._frames.pop(frame, 0)
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)
