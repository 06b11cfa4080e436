"""Wake-ups for requests that wait on a partition: long-poll fetches and acks=all produces (Kafka's purgatory).

A ``Notifier`` holds futures registered by waiters; ``notify()`` completes all of them. A waiter
watching several partitions registers one future with each and awaits it with a timeout, then re-checks
its condition (wake-ups may be spurious). Event-loop only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable


class Notifier:
    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: set[asyncio.Future] = set()

    def register(self, fut: asyncio.Future) -> None:
        self._waiters.add(fut)

    def unregister(self, fut: asyncio.Future) -> None:
        self._waiters.discard(fut)

    def notify(self) -> None:
        if not self._waiters:
            return
        waiters, self._waiters = self._waiters, set()
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)


async def wait_any(notifiers: Iterable[Notifier], timeout_s: float, *, abandon: asyncio.Future | None = None) -> bool:
    """Wait until any notifier fires or ``timeout_s`` passes; True when woken.

    ``abandon`` (e.g. the connection's ``disconnected``) ends the wait as soon as it is done: the
    waiter's client is gone, so there is nobody to wait for (True is returned; callers re-check).
    """
    notifiers = list(notifiers)
    if timeout_s <= 0 or not notifiers:
        return False
    fut = asyncio.get_running_loop().create_future()

    def wake(_f: asyncio.Future) -> None:
        if not fut.done():
            fut.set_result(None)

    if abandon is not None:
        if abandon.done():
            return True
        abandon.add_done_callback(wake)
    for n in notifiers:
        n.register(fut)
    try:
        await asyncio.wait_for(asyncio.shield(fut), timeout_s)
        return True
    except TimeoutError:
        return False
    finally:
        for n in notifiers:
            n.unregister(fut)
        if abandon is not None:
            abandon.remove_done_callback(wake)
        if not fut.done():
            fut.cancel()
