"""SampledRate and the throttle formula as Kafka's Rate and QuotaUtils compute them, as tables."""

from __future__ import annotations

import pytest

from broker.quotas.sensor import SampledRate, throttle_time_ms


@pytest.mark.parametrize(
    ("records", "now_ms", "rate", "window_ms"),
    [
        # one value: spread over at least num_samples - 1 = 10 whole windows
        ([(100, 0)], 0, 10.0, 10_000),
        ([(100, 0)], 500, 100 * 1000 / 10_500, 10_500),
        # one value per second for 11 s: the elapsed window is the 10 s since the oldest sample
        ([(100, t * 1000) for t in range(11)], 10_000, 110.0, 10_000),
        # the 12th second reuses the oldest sample (round robin): 11 samples of 100 from 1 s on
        ([(100, t * 1000) for t in range(12)], 11_000, 110.0, 10_000),
        # several values in one window add up
        ([(100, 0), (300, 200), (600, 999)], 999, 1000 * 1000 / 10_999, 10_999),
        # samples older than 11 windows are reset when measured: nothing left
        ([(100, t * 1000) for t in range(11)], 30_000, 0.0, 10_000),
        # an un-recorded value takes its bytes back
        ([(500, 0), (-500, 10)], 10, 0.0, 10_010),
    ],
)
def test_rate_over_the_sample_windows(records, now_ms, rate, window_ms):
    r = SampledRate(11, 1000)
    for value, t in records:
        r.record(value, t)
    assert r.peek_rate(now_ms) == pytest.approx(rate)
    assert r.rate(now_ms) == pytest.approx(rate)
    assert r.window_size_ms(now_ms) == window_ms


def test_average_is_per_recorded_event():
    r = SampledRate(11, 1000)
    for value, t in [(100, 0), (300, 10), (200, 2000)]:
        r.record(value, t)
    assert r.peek_average(2000) == pytest.approx(200.0)
    assert r.peek_average(50_000) == 0.0


@pytest.mark.parametrize(
    ("observed", "bound", "window_ms", "throttle"),
    [
        (2000.0, 1000.0, 10_000, 10_000),  # twice the bound: wait as long as the window again
        (1100.0, 1000.0, 10_000, 1000),
        (1000.0, 1000.0, 10_000, 0),  # at the bound: acceptable
        (900.0, 1000.0, 10_000, 0),
        (1250.0, 1000.0, 2, 1),  # 0.5 ms rounds up, as Java's Math.round (Python's round gives 0)
        (1200.0, 1000.0, 2, 0),  # 0.4 ms
        (20.0, 10.0, 11_000, 11_000),
    ],
)
def test_throttle_time_brings_the_rate_back_to_the_bound(observed, bound, window_ms, throttle):
    assert throttle_time_ms(observed, bound, window_ms) == throttle


def test_a_rate_needs_samples_and_a_window():
    with pytest.raises(ValueError, match="at least 1 sample"):
        SampledRate(0, 1000)
