"""LogManager: several log dirs, placement, checkpoints, clean-shutdown marker, deletion, background tasks."""

from __future__ import annotations

import os

import pytest

from broker.log import LogConfig, LogError, LogManager
from tests.waiting import wait_until

from .helpers import batch, read_all, value_batch


@pytest.fixture
def dirs(tmp_path):
    return [tmp_path / "d1", tmp_path / "d2"]


def _manager(dirs, clock, config=None, **kwargs) -> LogManager:
    manager = LogManager(dirs, config or LogConfig(), time=clock, **kwargs)
    manager.load()
    return manager


def test_new_partitions_go_to_the_log_dir_with_the_fewest(dirs, clock):
    manager = _manager(dirs, clock)
    try:
        for p in range(4):
            manager.get_or_create_log("orders", p)
        assert [manager.log_dir_of("orders", p) for p in range(4)] == [dirs[0], dirs[1], dirs[0], dirs[1]]
        assert manager.get_or_create_log("orders", 0) is manager.get_log("orders", 0)
        assert manager.get_log("orders", 9) is None
        assert len(manager.all_logs()) == 4
        assert (dirs[1] / "orders-1").is_dir()
    finally:
        manager.shutdown()


@pytest.mark.parametrize(
    "topic, partition", [("bad/name", 0), ("", 0), ("x" * 250, 0), ("..", 0), ("ok", -1), ("ok\n", 0)]
)
def test_illegal_topic_partition_names_are_rejected(dirs, clock, topic, partition):
    manager = _manager(dirs, clock)
    try:
        with pytest.raises(LogError):
            manager.get_or_create_log(topic, partition)
    finally:
        manager.shutdown()


def test_checkpoints_use_kafkas_text_format(dirs, clock):
    manager = _manager(dirs, clock)
    try:
        plog = manager.get_or_create_log("t", 0)
        for _ in range(3):
            plog.append_as_leader(value_batch(2), leader_epoch=0)
        plog.high_watermark = 4
        plog.flush()
        manager.write_checkpoints()
        assert (dirs[0] / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 6\n"
        assert (dirs[0] / "replication-offset-checkpoint").read_text() == "0\n1\nt 0 4\n"
        assert (dirs[0] / "log-start-offset-checkpoint").read_text() == "0\n1\nt 0 0\n"
        assert (dirs[1] / "recovery-point-offset-checkpoint").read_text() == "0\n0\n"
        assert not list(dirs[0].glob("*.tmp"))
    finally:
        manager.shutdown()


def test_state_survives_a_clean_restart(dirs, clock):
    manager = _manager(dirs, clock)
    plog = manager.get_or_create_log("t", 0)
    for _ in range(5):
        plog.append_as_leader(value_batch(2), leader_epoch=3)
    plog.high_watermark = 8
    plog.delete_records_before(3)
    records = read_all(plog)
    manager.shutdown()
    manager.shutdown()  # idempotent
    assert (dirs[0] / ".kafka_cleanshutdown").exists()
    manager = _manager(dirs, clock)
    try:
        assert manager.had_clean_shutdown[dirs[0]]
        assert not (dirs[0] / ".kafka_cleanshutdown").exists()  # a crash from now on is unclean
        plog = manager.get_log("t", 0)
        assert (plog.log_start_offset, plog.high_watermark, plog.log_end_offset) == (3, 8, 10)
        assert read_all(plog) == records and plog.latest_epoch == 3
    finally:
        manager.shutdown()


def _damage_last_batch(path):
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def test_the_clean_shutdown_marker_skips_recovery_and_its_absence_forces_it(dirs, clock):
    manager = _manager(dirs, clock)
    plog = manager.get_or_create_log("t", 0)
    for _ in range(4):
        plog.append_as_leader(value_batch(2), leader_epoch=0)
    segment_path = plog.active_segment.file.path
    manager.shutdown()
    _damage_last_batch(segment_path)
    manager = _manager(dirs, clock)  # clean: trusted, not scanned
    assert manager.get_log("t", 0).log_end_offset == 8
    manager.shutdown()
    (dirs[0] / ".kafka_cleanshutdown").unlink()
    (dirs[0] / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 0\n")
    manager = _manager(dirs, clock)  # unclean: recovered from the recovery point
    try:
        assert not manager.had_clean_shutdown[dirs[0]]
        assert manager.get_log("t", 0).log_end_offset == 6
    finally:
        manager.shutdown()


def test_an_unclean_stop_recovers_from_the_checkpointed_recovery_point(dirs, clock):
    manager = _manager(dirs, clock, LogConfig(segment_bytes=len(value_batch(2)) * 2))
    plog = manager.get_or_create_log("t", 0)
    for _ in range(6):
        plog.append_as_leader(value_batch(2), leader_epoch=0)
    manager.flush_dirty()  # rolled segments get fsynced
    manager.write_checkpoints()
    recovery_point = plog.recovery_point
    assert recovery_point == plog.active_segment.base_offset == 8
    # crash: no shutdown, logs not closed; the damaged tail is below nothing trusted
    _damage_last_batch(plog.active_segment.file.path)
    for fd in manager._dir_locks:  # the crashed process's locks die with it
        os.close(fd)
    manager._dir_locks.clear()
    survivor = _manager(dirs, clock, LogConfig(segment_bytes=len(value_batch(2)) * 2))
    try:
        assert survivor.get_log("t", 0).log_end_offset == 10
        assert survivor.get_log("t", 0).recovery_point == 10
    finally:
        survivor.shutdown()


def test_recovery_runs_in_parallel_over_many_logs(dirs, clock):
    manager = _manager(dirs, clock)
    for p in range(6):
        manager.get_or_create_log("t", p).append_as_leader(value_batch(3), leader_epoch=0)
    manager.shutdown()
    for d in dirs:
        (d / ".kafka_cleanshutdown").unlink()
    manager = _manager(dirs, clock, recovery_threads=3)
    try:
        assert sorted((p.topic, p.partition, p.log_end_offset) for p in manager.all_logs()) == [
            ("t", p, 3) for p in range(6)
        ]
    finally:
        manager.shutdown()


def test_a_log_dir_cannot_be_used_by_two_managers(dirs, clock):
    manager = _manager(dirs, clock)
    try:
        with pytest.raises(LogError, match="in use"):
            _manager(dirs[:1], clock)
    finally:
        manager.shutdown()
    _manager(dirs[:1], clock).shutdown()  # released by shutdown


def test_the_same_partition_in_two_dirs_is_an_error(dirs, clock):
    for d in dirs:
        (d / "t-0").mkdir(parents=True)
    with pytest.raises(LogError, match="both"):
        _manager(dirs, clock)


def test_delete_log_renames_then_removes_the_directory(dirs, clock):
    manager = _manager(dirs, clock)
    try:
        plog = manager.get_or_create_log("gone", 0)
        plog.append_as_leader(value_batch(2), leader_epoch=0)
        plog.high_watermark = 2
        region = plog.read(0, 1000).records
        assert manager.delete_log("gone", 0)
        assert manager.get_log("gone", 0) is None and not manager.delete_log("gone", 0)
        renamed = list(dirs[0].glob("gone-0.*-delete"))
        assert len(renamed) == 1 and not (dirs[0] / "gone-0").exists()
        assert len(region.read_bytes()) == len(region)  # a fetch in flight still completes
        manager.run_retention_once()
        assert not renamed[0].exists()
    finally:
        manager.shutdown()


def test_leftover_delete_dirs_are_removed_after_load(dirs, clock):
    (dirs[0] / "old-0.abc-delete").mkdir(parents=True)
    (dirs[0] / "old-0.abc-delete" / "00000000000000000000.log").write_bytes(b"x")
    manager = _manager(dirs, clock)
    try:
        assert manager.all_logs() == []
        manager.run_retention_once()
        assert not (dirs[0] / "old-0.abc-delete").exists()
    finally:
        manager.shutdown()


def test_topic_configs_apply_to_existing_and_new_partitions(dirs, clock):
    manager = _manager(dirs, clock)
    try:
        plog = manager.get_or_create_log("t", 0)
        compacted = LogConfig().with_topic_overrides({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0"})
        manager.update_topic_config("t", compacted)
        assert plog.config is compacted and manager.get_or_create_log("t", 1).config is compacted
        for i in range(6):
            plog.append_as_leader(batch([b"%d" % i], keys=[b"same"]), leader_epoch=0)
        plog.roll()
        plog.high_watermark = plog.log_end_offset
        stats = manager.run_cleaner_once()
        assert [(s.topic, s.partition, s.records_out) for s in stats] == [("t", 0, 1)]
        assert [r.value for r in read_all(plog)] == [b"5"]
    finally:
        manager.shutdown()


def test_flush_dirty_honours_flush_ms(dirs, clock):
    manager = _manager(dirs, clock, LogConfig(flush_interval_ms=1000))
    try:
        plog = manager.get_or_create_log("t", 0)
        plog.append_as_leader(value_batch(2), leader_epoch=0)
        assert manager.flush_dirty() == 0 and plog.recovery_point == 0
        clock.advance(1000)
        assert manager.flush_dirty() == 1 and plog.recovery_point == 2
    finally:
        manager.shutdown()


def test_flush_messages_fsyncs_from_the_append_path(dirs, clock):
    manager = _manager(dirs, clock, LogConfig(flush_interval_messages=3))
    try:
        plog = manager.get_or_create_log("t", 0)
        plog.append_as_leader(value_batch(2), leader_epoch=0)
        assert plog.recovery_point == 0
        plog.append_as_leader(value_batch(2), leader_epoch=0)
        assert plog.recovery_point == 4
    finally:
        manager.shutdown()


def test_the_background_thread_runs_retention(dirs, clock):
    config = LogConfig(
        retention_ms=1000, segment_bytes=len(value_batch(1)), retention_check_interval_ms=20, file_delete_delay_ms=0
    )
    manager = LogManager(dirs, config, time=clock)
    manager.start()
    try:
        plog = manager.get_or_create_log("t", 0)
        for _ in range(3):
            plog.append_as_leader(value_batch(1), leader_epoch=0)
        plog.high_watermark = plog.log_end_offset
        clock.advance(10_000)
        wait_until(lambda: plog.log_start_offset == 2, 5, "the maintenance thread's retention pass")
    finally:
        manager.shutdown()
        manager.shutdown()
    assert (dirs[0] / ".kafka_cleanshutdown").exists()
