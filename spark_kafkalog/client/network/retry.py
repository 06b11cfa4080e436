"""Retry planning: exponential backoff with jitter (KIP-580) bounded by a retry count and a deadline.

``backoff_ms(attempt)`` is ``retry.backoff.ms * 2**(attempt-1)``, capped at ``retry.backoff.max.ms``,
with +-20% random jitter (never above the cap). ``RetryPlan`` answers "may I try again, and after how
long?" for one operation; it is pure apart from the clock and the random source, both injectable.
Not thread-safe: one plan per operation.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

__all__ = ["JITTER", "RetryPlan", "backoff_ms", "gave_up"]

JITTER = 0.2


def backoff_ms(attempt: int, base_ms: float, max_ms: float, *, rand: Callable[[], float] = random.random) -> float:
    """Delay before retry number ``attempt`` (1 = the first retry)."""
    if attempt < 1 or base_ms <= 0:
        return 0.0
    exp = base_ms * (2 ** min(attempt - 1, 62))
    if exp >= max_ms:
        exp = max_ms
    jitter = 1.0 + JITTER * (2.0 * rand() - 1.0)
    return min(exp * jitter, max_ms) if max_ms >= base_ms else base_ms


class RetryPlan:
    """Retries of one operation: at most ``retries`` retries, none starting after ``deadline``."""

    def __init__(
        self,
        *,
        retries: int,
        base_ms: float,
        max_ms: float,
        timeout_ms: float,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.retries = retries
        self.base_ms = base_ms
        self.max_ms = max_ms
        self.clock = clock
        self.rand = rand
        self.started = clock()
        self.deadline = self.started + timeout_ms / 1000.0
        self.attempts = 0  # failures seen so far

    def remaining(self) -> float:
        """Seconds left before the deadline (never negative)."""
        return max(0.0, self.deadline - self.clock())

    def next_delay(self) -> float | None:
        """Record a failure; the seconds to wait before retrying, or ``None`` to give up."""
        self.attempts += 1
        if self.attempts > self.retries:
            return None
        delay = backoff_ms(self.attempts, self.base_ms, self.max_ms, rand=self.rand) / 1000.0
        if self.clock() + delay >= self.deadline:
            return None
        return delay

    def sleep_or_give_up(self) -> bool:
        """Record a failure and sleep before the retry; ``False`` when the plan is exhausted."""
        delay = self.next_delay()
        if delay is None:
            return False
        if delay > 0:
            time.sleep(delay)
        return True


def gave_up(what: str, plan: RetryPlan) -> str:
    """``"<what>: gave up after N attempts in S s"``, naming the limit that ended the retries."""
    elapsed = plan.clock() - plan.started
    if plan.attempts > plan.retries:
        limit = f"retries={plan.retries}"
    else:
        limit = f"deadline {plan.deadline - plan.started:.1f} s"
    return f"{what}: gave up after {plan.attempts} attempts in {elapsed:.1f} s ({limit})"
