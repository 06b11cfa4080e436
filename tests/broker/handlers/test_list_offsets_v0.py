"""ListOffsets v0 (0.8 ``getOffsetsBefore``) as Kafka's ``fetchOffsetsBefore`` and
``Partition.legacyFetchOffsetsForTimestamp`` answer it: segment base offsets before a time, descending, the
log end first for latest, the log start for earliest, and nothing above the high watermark for consumers."""

from __future__ import annotations

import pytest

from broker.handlers.list_offsets import _old_style
from broker.log import LogConfig, ManualClock, PartitionLog

from ..log.helpers import value_batch

CONSUMER, REPLICA = True, False


@pytest.fixture
def log_with_segments(tmp_path):
    """Segments [0,2) [2,4) [4,6), each last written 1 s after the one before, and an active [6,7)."""
    clock = ManualClock()
    plog = PartitionLog.open(
        tmp_path / "t-0", LogConfig(segment_bytes=2 * len(value_batch(1))), time=clock, recover=False
    )
    times = []
    for _ in range(3):
        for _ in range(2):
            plog.append_as_leader(value_batch(1), leader_epoch=0)
        times.append(clock.milliseconds())
        clock.advance(1000)
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    yield plog, times
    plog.close(flush=False)


@pytest.mark.parametrize(
    ("hw", "time", "max_num", "who", "expected"),
    [
        (7, -1, 10, CONSUMER, [7, 6, 4, 2, 0]),  # log end first, then every segment's base offset
        (7, -1, 2, CONSUMER, [7, 6]),
        (7, -2, 10, CONSUMER, [0]),  # earliest: the log start offset alone
        (7, "t1", 10, CONSUMER, [2, 0]),  # segments last modified at or before the time
        (7, "t0-1", 10, CONSUMER, []),
        (5, -1, 10, CONSUMER, [5, 4, 2, 0]),  # offsets above the high watermark give way to it
        (6, -1, 10, CONSUMER, [6, 4, 2, 0]),  # Kafka repeats the HW here ([6, 6, 4, 2, 0]); we do not
        (5, -1, 10, REPLICA, [7, 6, 4, 2, 0]),  # replicas and debugging clients see the log end
        (5, -1, 0, CONSUMER, []),
    ],
)
def test_old_style_offsets_follow_kafka(log_with_segments, hw, time, max_num, who, expected):
    plog, times = log_with_segments
    plog.high_watermark = hw
    ts = {"t1": times[1], "t0-1": times[0] - 1}.get(time, time)
    assert _old_style(plog, ts, max_num, who) == expected
