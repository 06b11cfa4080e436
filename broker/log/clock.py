"""Time sources for the log store and the coordinators: the wall clock, and a manual clock that tests move
by hand.

Retention, segment rolling, flush intervals, tombstone expiry and LogAppendTime timestamps, group sessions,
rebalance timeouts and offset retention, transaction timeouts and transactional id expiry all read
``Clock.milliseconds()`` (milliseconds since the epoch), so a test can drive them without sleeping: a broker
takes one as ``Broker(clock=...)``/``EmbeddedBroker(clock=...)``. The schedules that run those checks (the
log manager's thread, the coordinators' tickers) keep real intervals; what they decide depends only on the
clock. Both clocks are safe to read from any thread; ``ManualClock.advance``/``set`` are meant for the test
thread.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SYSTEM_CLOCK", "SystemClock"]


class Clock(Protocol):
    def milliseconds(self) -> int:
        """Wall-clock time in milliseconds since the epoch."""
        ...


class SystemClock:
    """The real wall clock (``time.time()``)."""

    __slots__ = ()

    def milliseconds(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that only moves when told to (``advance``, ``set``); starts at ``start_ms``."""

    __slots__ = ("_now",)

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self._now = int(start_ms)

    def milliseconds(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        if ms < 0:
            raise ValueError(f"a clock cannot go back ({ms} ms)")
        self._now += int(ms)
        return self._now

    def set(self, now_ms: int) -> None:
        self._now = int(now_ms)

    def __repr__(self) -> str:
        return f"ManualClock({self._now})"


SYSTEM_CLOCK: Clock = SystemClock()
