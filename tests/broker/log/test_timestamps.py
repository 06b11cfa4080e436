"""Reads by timestamp (time index) against brute force, max timestamp, and 0.8 getOffsetsBefore."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.log import LogConfig, ManualClock, PartitionLog

from .helpers import T0, batch, read_all, value_batch

batches_strategy = st.lists(
    st.lists(st.integers(min_value=0, max_value=2000), min_size=1, max_size=6),  # timestamps of one batch
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches_strategy,
    probes=st.lists(st.integers(min_value=-10, max_value=2100), max_size=15),
    interval=st.sampled_from([0, 60, 400]),
    segment_batches=st.integers(min_value=1, max_value=8),
    delete_before=st.integers(min_value=0, max_value=20),
)
def test_offset_for_timestamp_matches_brute_force_on_non_monotonic_timestamps(
    batches, probes, interval, segment_batches, delete_before
):
    directory = Path(tempfile.mkdtemp())
    try:
        config = LogConfig(index_interval_bytes=interval, segment_bytes=120 * segment_batches)  # a batch < 120 B
        plog = PartitionLog.open(directory / "t-0", config, time=ManualClock(), recover=False)
        for timestamps in batches:
            plog.append_as_leader(
                batch([b"v"] * len(timestamps), timestamps=[T0 + t for t in timestamps]), leader_epoch=0
            )
        plog.high_watermark = plog.log_end_offset
        plog.delete_records_before(min(delete_before, plog.log_end_offset))
        records = [r for r in read_all(plog) if r.offset >= plog.log_start_offset]
        for probe in probes + [t for ts in batches for t in ts]:
            target = T0 + probe
            expected = next(((r.offset, r.timestamp) for r in records if r.timestamp >= target), None)
            assert plog.offset_for_timestamp(target) == expected, (probe, plog.segments)
        if records:
            best = max(r.timestamp for r in records)
            first_best = next(r for r in records if r.timestamp == best)
            assert plog.offset_for_max_timestamp() == (first_best.offset, best)
        else:
            assert plog.offset_for_max_timestamp() is None
        plog.close()
    finally:
        shutil.rmtree(directory)


def test_offset_for_timestamp_survives_reopening(open_log, tmp_path, clock):
    plog = open_log(LogConfig(index_interval_bytes=0, segment_bytes=200))
    for ts in (50, 10, 70, 30, 90, 20):
        plog.append_as_leader(batch([b"x"], timestamps=[T0 + ts]), leader_epoch=0)
    plog.close()
    plog = open_log(LogConfig(index_interval_bytes=0, segment_bytes=200))
    assert plog.offset_for_timestamp(T0 + 60) == (2, T0 + 70)
    assert plog.offset_for_timestamp(T0 + 91) is None
    assert plog.offset_for_max_timestamp() == (4, T0 + 90)


def test_log_append_time_topics_search_by_append_time(open_log, clock):
    plog = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    plog.append_as_leader(batch([b"a"], timestamps=[5]), leader_epoch=0)
    clock.advance(100)
    plog.append_as_leader(batch([b"b"], timestamps=[1]), leader_epoch=0)
    assert plog.offset_for_timestamp(clock.milliseconds() - 50) == (1, clock.milliseconds())
    assert plog.offset_for_max_timestamp() == (1, clock.milliseconds())


def test_empty_log_has_no_timestamps(open_log):
    plog = open_log()
    assert plog.offset_for_timestamp(0) is None
    assert plog.offset_for_max_timestamp() is None


def test_legacy_offsets_before_follows_08_semantics(open_log, clock):
    size = len(value_batch(1))
    plog = open_log(LogConfig(segment_bytes=2 * size))
    times = []
    for _ in range(3):  # segments [0,2) [2,4) [4,6), each last written at a distinct time
        for _ in range(2):
            plog.append_as_leader(value_batch(1), leader_epoch=0)
        times.append(clock.milliseconds())
        clock.advance(1000)
    plog.append_as_leader(value_batch(1), leader_epoch=0)  # active segment [6,7), written now
    now = clock.milliseconds()
    assert plog.legacy_offsets_before(-1, 10) == [7, 6, 4, 2, 0]
    assert plog.legacy_offsets_before(-1, 1) == [7]
    assert plog.legacy_offsets_before(-2, 10) == [0]
    assert plog.legacy_offsets_before(times[1], 10) == [2, 0]
    assert plog.legacy_offsets_before(times[1] - 1, 10) == [0]
    assert plog.legacy_offsets_before(times[0] - 1, 10) == []
    assert plog.legacy_offsets_before(now, 2) == [7, 6]
    assert plog.legacy_offsets_before(now, 10, end_offset=6) == [6, 4, 2, 0]  # the broker passes its HW
    plog.high_watermark = 7
    plog.delete_records_before(3)
    assert plog.legacy_offsets_before(-2, 10) == [3]
