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

``receive_large_frame`` is that loop, as a connection runs it: the frame goes into a pooled buffer (``FramePool``)
when one is free, else into one that grows only as bytes arrive.

Event-loop only: all calls come from the broker's loop; not thread-safe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn

from spark_kafkalog.protocol.frame_pool import size_class

if TYPE_CHECKING:
    from spark_kafkalog.protocol.frame_pool import FramePool

__all__ = ["RequestMemory", "receive_large_frame"]

RECV_SIZE = 256 * 1024
"""The most one read takes from a socket."""
_GROWTH_START = 256 * 1024  # first size of a large frame's buffer when no pooled one is free
_YIELD_EVERY = 16  # chunks of one large frame read back to back before other connections get a turn


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


async def receive_large_frame(
    memory: RequestMemory,
    pool: FramePool,
    frame: object,
    head: bytearray,
    size: int,
    *,
    readable: Callable[[], Awaitable[None]],
    recv_into: Callable[[memoryview], Awaitable[int]],
    closed: Callable[[], NoReturn],
) -> bytearray:
    """Receive the rest of a ``size``-byte frame whose first ``len(head)`` bytes are ``head``.

    The frame goes into a pooled buffer when one is free (no new memory); otherwise ``head`` grows,
    only once more bytes are there to read, to the next power of two (at least ``_GROWTH_START``, at
    most the frame's size class): memory follows what the client really sent, at most about twice it.
    Each chunk waits for its turn in ``memory`` (``frame`` is the key it is charged to), and is read at once
    when the socket holds it (``readable()`` is awaited only when it does not; every ``_YIELD_EVERY``
    chunks read without waiting, the other connections get a turn). ``recv_into(view)`` reads into ``view``
    (0: the peer closed, and ``closed()`` raises). Returns the buffer (at least ``size`` bytes, the frame at
    its start); what ``memory`` held for the frame is released either way.
    """
    filled = len(head)
    buffer = pool.take_free(size)
    if buffer is None:
        buffer = head
    else:
        buffer[:filled] = head
    del head
    memory.charge(frame, filled)
    chunks = 0
    try:
        while filled < size:
            chunks += 1
            if chunks % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
            await memory.wait_turn(frame)
            if filled == len(buffer):  # grow only once more bytes are there to read
                await readable()
                grown = min(size_class(size), max(_GROWTH_START, size_class(len(buffer) + 1)))
                buffer.extend(bytes(grown - len(buffer)))
            with memoryview(buffer) as target:
                got = await recv_into(target[filled : min(size, len(buffer), filled + RECV_SIZE)])
            if got == 0:
                closed()
            memory.charge(frame, got)
            filled += got
    finally:
        memory.release(frame)
    return buffer
