"""RegistrationRecord: the session of a broker's last registration, trusted only under the log dir's lock."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap

import pytest

from broker.cluster.registration_record import (
    RECORD_FILE,
    RegistrationRecord,
    flock_held_by_this_process,
)


@pytest.fixture
def locked_dir(tmp_path):
    """A log dir whose ``.lock`` this process holds, as ``LogManager.load`` leaves it."""
    fd = os.open(tmp_path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    yield tmp_path
    os.close(fd)


def test_the_recorded_session_reads_back_for_the_same_cluster_and_broker(locked_dir):
    record = RegistrationRecord(locked_dir, lock_file=locked_dir / ".lock")
    assert record.read("cluster-a", 1) is None  # no previous run
    record.write("cluster-a", 1, 0x1000084A1B20003)
    text = (locked_dir / RECORD_FILE).read_text()
    assert "zookeeper.session.id=0x1000084a1b20003\n" in text and "broker.id=1\n" in text
    assert record.read("cluster-a", 1) == 0x1000084A1B20003
    assert record.read("cluster-b", 1) is None  # another cluster (chroot) on the same log dir
    assert record.read("cluster-a", 2) is None  # the log dir now serves another broker.id
    record.write("cluster-a", 1, 0x2000000000000001)
    assert record.read("cluster-a", 1) == 0x2000000000000001
    assert not (locked_dir / (RECORD_FILE + ".tmp")).exists()


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe garbage",
        b"version=1\nbroker.id=1\n",
        b"version=2\ncluster.id=c\nbroker.id=1\nzookeeper.session.id=0x1\n",
        b"version=1\ncluster.id=c\nbroker.id=x\nzookeeper.session.id=0x1\n",
    ],
)
def test_an_unreadable_record_means_no_previous_run_and_names_its_path(locked_dir, content, caplog):
    (locked_dir / RECORD_FILE).write_bytes(content)
    record = RegistrationRecord(locked_dir, lock_file=locked_dir / ".lock")
    assert record.read("c", 1) is None
    assert str(locked_dir / RECORD_FILE) in caplog.text


def test_without_the_log_dir_lock_the_record_is_neither_trusted_nor_written(tmp_path, caplog):
    (tmp_path / ".lock").touch()
    (tmp_path / RECORD_FILE).write_text("version=1\ncluster.id=c\nbroker.id=1\nzookeeper.session.id=0x5\n")
    record = RegistrationRecord(tmp_path, lock_file=tmp_path / ".lock")
    assert record.read("c", 1) is None
    record.write("c", 1, 0x6)
    assert "zookeeper.session.id=0x5" in (tmp_path / RECORD_FILE).read_text()
    assert "is not locked by this process" in caplog.text


def test_a_lock_counts_only_when_this_process_holds_it_on_the_current_file(tmp_path):
    lock = tmp_path / ".lock"
    assert not flock_held_by_this_process(lock)  # no file
    lock.touch()
    assert not flock_held_by_this_process(lock)  # nobody holds it
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import fcntl, os, sys
        fd = os.open({str(lock)!r}, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("locked", flush=True)
        sys.stdin.read()
    """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert not flock_held_by_this_process(lock)  # another live broker holds this log dir
    finally:
        holder.stdin.close()
        holder.wait(10)
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert flock_held_by_this_process(lock)
        replacement = tmp_path / "new-lock"
        replacement.touch()
        os.replace(replacement, lock)
        assert not flock_held_by_this_process(lock)  # the locked file is no longer the log dir's lock file
    finally:
        os.close(fd)


def test_a_record_that_cannot_be_written_is_logged_and_does_not_raise(locked_dir, caplog):
    (locked_dir / (RECORD_FILE + ".tmp")).mkdir()  # stands in for a full disk or no file handles left
    record = RegistrationRecord(locked_dir, lock_file=locked_dir / ".lock")
    assert record.write("c", 1, 0x7) is False
    assert "could not record ZooKeeper session 0x7" in caplog.text and str(locked_dir / RECORD_FILE) in caplog.text
    assert record.read("c", 1) is None
