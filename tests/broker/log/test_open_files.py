"""Segment file descriptors are opened on demand and bounded: idle partitions hold none, used ones stay under
the process-wide ``OPEN_FILES`` capacity, and a file in use (a region being sent) is never closed under it."""

from __future__ import annotations

import os

import pytest

from broker.log import LogConfig, LogManager
from broker.log.file_region import OPEN_FILES, set_max_open_files

from .helpers import read_all, value_batch


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def small_cache():
    saved = OPEN_FILES.capacity
    set_max_open_files(8)
    yield OPEN_FILES
    set_max_open_files(saved)


def _manager(tmp_path, clock) -> LogManager:
    manager = LogManager([tmp_path / "d"], LogConfig(), time=clock)
    manager.load()
    return manager


def test_new_partitions_hold_no_descriptors(tmp_path, clock):
    manager = _manager(tmp_path, clock)
    try:
        before = open_fds()
        logs = [manager.get_or_create_log("idle", p) for p in range(300)]
        assert open_fds() - before <= 2  # was one descriptor per partition
        assert not any(plog.active_segment.file.is_open for plog in logs)
    finally:
        manager.shutdown()


def test_partitions_loaded_at_start_up_hold_no_descriptors_until_used(tmp_path, clock):
    manager = _manager(tmp_path, clock)
    for p in range(200):
        manager.get_or_create_log("loaded", p).append_as_leader(value_batch(3, tag=f"p{p}"), leader_epoch=0)
    manager.shutdown()
    before = open_fds()
    manager = _manager(tmp_path, clock)
    try:
        assert open_fds() - before <= 4  # the directory lock and friends, not one per partition
        plog = manager.get_log("loaded", 7)
        assert [r.value for r in read_all(plog)] == [f"p7-{i}".encode() for i in range(3)]
    finally:
        manager.shutdown()


def test_used_partitions_stay_within_the_open_file_capacity(tmp_path, clock, small_cache):
    manager = _manager(tmp_path, clock)
    try:
        before = open_fds()
        logs = [manager.get_or_create_log("busy", p) for p in range(60)]
        for round_ in range(3):
            for p, plog in enumerate(logs):
                plog.append_as_leader(value_batch(2, tag=f"{round_}-{p}"), leader_epoch=0)
                plog.high_watermark = plog.log_end_offset
                assert len(small_cache) <= small_cache.capacity
        assert open_fds() - before <= small_cache.capacity + 2
        for p, plog in enumerate(logs):  # every file reopens on demand and serves all it holds
            expected = [f"{r}-{p}-{i}".encode() for r in range(3) for i in range(2)]
            assert [rec.value for rec in read_all(plog)] == expected
            assert len(small_cache) <= small_cache.capacity
        for plog in logs:
            plog.flush()  # fsync of a closed file opens it for the call
        assert open_fds() - before <= small_cache.capacity + 2
    finally:
        manager.shutdown()


def test_a_region_in_flight_keeps_its_descriptor_under_pressure(tmp_path, clock, small_cache):
    manager = _manager(tmp_path, clock)
    try:
        first = manager.get_or_create_log("held", 0)
        first.append_as_leader(value_batch(4, tag="held"), leader_epoch=0)
        first.high_watermark = first.log_end_offset
        region = first.read(0, 1 << 16).records
        fd = region.fileno()
        for p in range(1, 40):  # many other files are opened and closed meanwhile
            plog = manager.get_or_create_log("held", p)
            plog.append_as_leader(value_batch(1), leader_epoch=0)
        assert region.fileno() == fd and first.active_segment.file.is_open
        assert b"held-3" in region.read_bytes()
        region.release()
        set_max_open_files(8)  # the file is idle again: the next trim may close it
        assert len(small_cache) <= 8
    finally:
        manager.shutdown()


def test_a_renamed_closed_file_reopens_under_its_new_name(open_log, small_cache):
    plog = open_log(LogConfig(segment_bytes=len(value_batch(2)) * 2, file_delete_delay_ms=60_000))
    for i in range(6):
        plog.append_as_leader(value_batch(2, tag=f"b{i}"), leader_epoch=0)
    plog.high_watermark = plog.log_end_offset
    old = plog.segments[0]
    old.file.park()
    plog.delete_records_before(plog.segments[1].base_offset)  # renames the first segment to .deleted
    assert old.file.path.name.endswith(".log.deleted") and not old.file.is_open
    assert old.file.acquire()  # opens the renamed file
    try:
        assert os.pread(old.file.fd, 4, 0) == old.file.path.read_bytes()[:4]
    finally:
        old.file.release()
