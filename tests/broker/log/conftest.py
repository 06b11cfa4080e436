"""Fixtures of the log store tests: a manual clock and a log opener that closes what it opened."""

from __future__ import annotations

import pytest

from broker.log import LogConfig, ManualClock, PartitionLog


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def open_log(tmp_path, clock):
    """``open_log(config=None, name="t-0", recover=False, **kwargs)`` -> PartitionLog, closed at teardown."""
    opened = []

    def opener(config: LogConfig | None = None, name: str = "t-0", recover: bool = False, **kwargs) -> PartitionLog:
        plog = PartitionLog.open(tmp_path / name, config or LogConfig(), time=clock, recover=recover, **kwargs)
        opened.append(plog)
        return plog

    yield opener
    for plog in opened:
        plog.close(flush=False)
