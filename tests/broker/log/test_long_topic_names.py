"""The longest legal topic name (249 characters) through create, append, delete and re-create, and the
shortened ``-delete`` directory names that make its deletion fit in the 255-byte file-name limit."""

from __future__ import annotations

import os

import pytest

from broker.log import LogConfig, LogError, LogManager
from broker.log.log_manager import MAX_FILE_NAME_BYTES, delete_dir_name, is_delete_dir_name

from .helpers import read_all, value_batch

LONGEST = "x" * 248 + "y"  # 249 characters, Kafka's limit


@pytest.fixture
def log_dir(tmp_path):
    return tmp_path / "d"


def _manager(log_dir, clock) -> LogManager:
    manager = LogManager([log_dir], LogConfig(), time=clock)
    manager.load()
    return manager


def _crash(manager: LogManager) -> None:
    """Drop the manager as a killed process would: no shutdown, its directory locks die with it."""
    for fd in manager._dir_locks:
        os.close(fd)
    manager._dir_locks.clear()


@pytest.mark.parametrize("partition", [0, 7, 99_999, 2**31 - 1])
def test_delete_dir_names_of_the_longest_topic_fit_in_255_bytes(partition):
    name = delete_dir_name(LONGEST, partition)
    suffix = f"-{partition}.{name.rsplit('.', 1)[1]}"
    assert len(name.encode()) == MAX_FILE_NAME_BYTES
    assert name.endswith("-delete")
    assert LONGEST.startswith(name[: -len(suffix)])  # a prefix of the topic, as Kafka's logDeleteDirName
    assert is_delete_dir_name(name)


def test_short_topic_names_keep_their_whole_name_in_the_delete_dir():
    assert delete_dir_name("orders", 3, "ab" * 16) == "orders-3." + "ab" * 16 + "-delete"
    assert is_delete_dir_name(delete_dir_name("orders", 3))


@pytest.mark.parametrize(
    "name",
    ["orders-3", "backup-delete", "orders-3-delete", "orders.abc-delete", "orders-x.abc-delete", "orders-3.ABC-delete"],
)
def test_names_that_are_not_delete_dirs(name):
    assert not is_delete_dir_name(name)


def test_the_longest_topic_is_created_appended_deleted_and_recreated_empty(log_dir, clock):
    manager = _manager(log_dir, clock)
    try:
        plog = manager.get_or_create_log(LONGEST, 0)
        assert plog.dir.name == f"{LONGEST}-0"
        for _ in range(3):
            plog.append_as_leader(value_batch(4, "old"), leader_epoch=2)
        assert len(read_all(plog)) == 12

        assert manager.delete_log(LONGEST, 0)
        renamed = [p for p in log_dir.iterdir() if is_delete_dir_name(p.name)]
        assert len(renamed) == 1, sorted(p.name for p in log_dir.iterdir())
        assert len(renamed[0].name) <= MAX_FILE_NAME_BYTES and renamed[0].name.startswith(LONGEST[:200])
        assert not (log_dir / f"{LONGEST}-0").exists()
        manager.run_retention_once()
        assert not renamed[0].exists()

        fresh = manager.get_or_create_log(LONGEST, 0)
        assert (fresh.log_start_offset, fresh.log_end_offset) == (0, 0) and read_all(fresh) == []
        fresh.append_as_leader(value_batch(1, "new"), leader_epoch=3)
        assert [r.value for r in read_all(fresh)] == [b"new-0"]
    finally:
        manager.shutdown()
    manager = _manager(log_dir, clock)
    try:
        assert [r.value for r in read_all(manager.get_log(LONGEST, 0))] == [b"new-0"]
    finally:
        manager.shutdown()


def test_a_restart_before_the_deletion_finished_removes_the_shortened_delete_dir(log_dir, clock):
    manager = _manager(log_dir, clock)
    plog = manager.get_or_create_log(LONGEST, 3)
    plog.append_as_leader(value_batch(5, "old"), leader_epoch=0)
    manager.write_checkpoints()
    assert manager.delete_log(LONGEST, 3)
    (log_dir / "backup-delete").mkdir()  # not ours: left alone
    _crash(manager)  # before the background thread removed the renamed directory
    (leftover,) = [p for p in log_dir.iterdir() if is_delete_dir_name(p.name)]

    restarted = _manager(log_dir, clock)
    try:
        assert restarted.all_logs() == [] and restarted.get_log(LONGEST, 3) is None
        restarted.run_retention_once()
        assert not leftover.exists() and (log_dir / "backup-delete").is_dir()
        fresh = restarted.get_or_create_log(LONGEST, 3)
        assert fresh.log_end_offset == 0 and read_all(fresh) == []
    finally:
        restarted.shutdown()


def test_a_partition_whose_directory_name_would_exceed_255_bytes_is_refused(log_dir, clock):
    manager = _manager(log_dir, clock)
    try:
        assert manager.get_or_create_log(LONGEST, 99_999).dir.name == f"{LONGEST}-99999"
        with pytest.raises(LogError, match="longer than 255 bytes"):
            manager.get_or_create_log(LONGEST, 100_000)
    finally:
        manager.shutdown()
