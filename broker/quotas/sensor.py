"""Windowed rates for quotas, as Kafka's ``Rate`` over a ``SampledStat`` measures them, and the throttle time.

A ``SampledRate`` keeps ``num_samples`` samples (``quota.window.num``, 11) of ``window_ms`` each
(``quota.window.size.seconds`` × 1000): a recorded value goes into the current sample, which is replaced by
the next one (reset, round robin) once it is ``window_ms`` old. Measuring first resets every sample older
than ``num_samples × window_ms``, then divides the sum of the samples by the *elapsed window*: the time since
the oldest sample started, but at least ``num_samples - 1`` whole windows (so a new client's first bytes are
spread over 10 s, not over the few ms it has existed), and at least 1 ms.

``throttle_time_ms`` is ``QuotaUtils.throttleTime``: to bring an observed rate O down to the bound T over
the elapsed window W, the client must wait X with O·W / (W + X) = T, so X = (O − T) / T × W, rounded as
Java's ``Math.round``.

Times are integer milliseconds from a monotonic clock. Not thread-safe: the broker's event loop records;
``peek_*`` read without changing anything (the metrics thread may call them, values may be a moment old).
"""

from __future__ import annotations

import math

__all__ = ["SampledRate", "throttle_time_ms"]


def throttle_time_ms(observed: float, bound: float, window_ms: float) -> int:
    """``round((observed - bound) / bound * window_ms)``, Java's rounding (half up); 0 within the bound."""
    if observed <= bound:
        return 0
    return math.floor((observed - bound) / bound * window_ms + 0.5)


class SampledRate:
    """Kafka's ``Rate`` (sum per sample) with the event count per sample kept for averages."""

    __slots__ = ("num_samples", "window_ms", "_starts", "_values", "_counts", "_current", "last_record_ms")

    def __init__(self, num_samples: int, window_ms: int) -> None:
        if num_samples < 1 or window_ms < 1:
            raise ValueError(
                f"a sampled rate needs at least 1 sample of at least 1 ms, not {num_samples} × {window_ms}"
            )
        self.num_samples = num_samples
        self.window_ms = window_ms
        self._starts: list[int] = []
        self._values: list[float] = []
        self._counts: list[int] = []
        self._current = 0
        self.last_record_ms = 0

    def record(self, value: float, now_ms: int) -> None:
        """Add ``value`` at ``now_ms`` (a negative value un-records, as Kafka's throttled Fetch does)."""
        if not self._starts:
            self._new_sample(now_ms)
        elif now_ms - self._starts[self._current] >= self.window_ms:
            self._advance(now_ms)
        i = self._current
        self._values[i] += value
        self._counts[i] += 1
        self.last_record_ms = now_ms

    def _new_sample(self, now_ms: int) -> None:
        self._starts.append(now_ms)
        self._values.append(0.0)
        self._counts.append(0)

    def _advance(self, now_ms: int) -> None:
        self._current = (self._current + 1) % self.num_samples
        if self._current >= len(self._starts):
            self._new_sample(now_ms)
        else:
            self._reset(self._current, now_ms)

    def _reset(self, i: int, now_ms: int) -> None:
        self._starts[i] = now_ms
        self._values[i] = 0.0
        self._counts[i] = 0

    def _purge(self, now_ms: int) -> None:
        expire = self.num_samples * self.window_ms
        for i, start in enumerate(self._starts):
            if now_ms - start >= expire:
                self._reset(i, now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        """The elapsed window the rate divides by (``Rate.windowSize``)."""
        oldest = min(self._starts) if self._starts else now_ms
        elapsed = now_ms - oldest
        full = elapsed // self.window_ms
        if full < self.num_samples - 1:
            elapsed += (self.num_samples - 1 - full) * self.window_ms
        return max(elapsed, 1)

    def rate(self, now_ms: int) -> float:
        """Units per second at ``now_ms`` (obsolete samples reset first, as ``Rate.measure`` does)."""
        if not self._starts:
            self._new_sample(now_ms)
        self._purge(now_ms)
        return sum(self._values) * 1000.0 / self.window_size_ms(now_ms)

    def peek_rate(self, now_ms: int) -> float:
        """``rate(now_ms)`` without resetting anything (for metrics, from another thread)."""
        expire = self.num_samples * self.window_ms
        starts, values = list(self._starts), list(self._values)
        live = [(s, v) for s, v in zip(starts, values, strict=False) if now_ms - s < expire]
        oldest = min((s for s, _ in live), default=now_ms)
        elapsed = now_ms - oldest
        full = elapsed // self.window_ms
        if full < self.num_samples - 1:
            elapsed += (self.num_samples - 1 - full) * self.window_ms
        return sum(v for _, v in live) * 1000.0 / max(elapsed, 1)

    def peek_average(self, now_ms: int) -> float:
        """The mean recorded value over the live samples (0 without any): Kafka's ``Avg``."""
        expire = self.num_samples * self.window_ms
        starts, values, counts = list(self._starts), list(self._values), list(self._counts)
        total = count = 0.0
        for s, v, c in zip(starts, values, counts, strict=False):
            if now_ms - s < expire:
                total += v
                count += c
        return total / count if count else 0.0
