"""Retry planning: exponential backoff with bounded jitter, limited by a retry count and a deadline."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.network.retry import JITTER, RetryPlan, backoff_ms


def test_backoff_doubles_from_the_base_and_is_capped():
    middle = lambda: 0.5  # noqa: E731 - no jitter
    assert [backoff_ms(n, 100, 1000, rand=middle) for n in range(1, 6)] == [100, 200, 400, 800, 1000]
    assert backoff_ms(0, 100, 1000) == 0.0


@pytest.mark.parametrize("rand", [0.0, 0.25, 0.999])
def test_jitter_stays_within_twenty_percent_and_never_exceeds_the_cap(rand):
    delay = backoff_ms(2, 100, 1000, rand=lambda: rand)
    assert 200 * (1 - JITTER) <= delay <= 200 * (1 + JITTER)
    assert backoff_ms(10, 100, 1000, rand=lambda: rand) <= 1000


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_plan_gives_up_after_the_retry_count():
    plan = RetryPlan(retries=2, base_ms=10, max_ms=10, timeout_ms=60_000, clock=Clock(), rand=lambda: 0.5)
    assert plan.next_delay() == pytest.approx(0.01)
    assert plan.next_delay() == pytest.approx(0.01)
    assert plan.next_delay() is None
    assert plan.attempts == 3


def test_plan_gives_up_when_the_next_attempt_would_start_after_the_deadline():
    clock = Clock()
    plan = RetryPlan(retries=100, base_ms=100, max_ms=100, timeout_ms=1000, clock=clock, rand=lambda: 0.5)
    assert plan.next_delay() is not None
    clock.now = 0.95
    assert plan.next_delay() is None
    assert plan.remaining() == pytest.approx(0.05)
