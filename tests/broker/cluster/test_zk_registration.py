"""Broker registration in ZooKeeper across crashes: taking over a dead previous run's nodes, refusing a
live duplicate, and re-registering a node deleted while the broker runs (real ZooKeeper, real processes)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker.cluster.registration_record import RECORD_FILE, RegistrationRecord
from broker.cluster.registry import BrokerIdInUseError, BrokerInfo
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
LONG_SESSION_MS = 30000  # far longer than any wait below: a dead session's nodes stay for the whole test


@pytest.fixture
def raw(zk_connect, make_registry):
    make_registry()  # creates the chroot
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def log_dir(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    return d


def lock(log_dir: Path) -> int:
    """Take the log dir's lock as ``LogManager.load`` does; returns the fd (close it to release)."""
    fd = os.open(log_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def crashed_previous_run(zk_connect: str, log_dir: Path, *, controller: bool) -> int:
    """Run a broker registration in a child process holding ``log_dir``'s lock, SIGKILL it; its session id.

    The child's nodes outlive it until its (long) session expires.
    """
    code = textwrap.dedent(f"""
        import fcntl, os, time
        from broker.cluster.registration_record import RegistrationRecord
        from broker.cluster.registry import BrokerInfo
        from broker.cluster.zk_registry import ZooKeeperRegistry
        fd = os.open({str(log_dir / ".lock")!r}, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        registry = ZooKeeperRegistry({zk_connect!r}, session_timeout_ms={LONG_SESSION_MS})
        registry.start()
        record = RegistrationRecord({str(log_dir)!r}, lock_file={str(log_dir / ".lock")!r})
        registry.register_broker(BrokerInfo(1, "previous.example", 9092), record)
        if {controller!r}:
            assert registry.try_become_controller(1) is not None
        print(registry.session_id, flush=True)
        time.sleep(120)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        session = int(child.stdout.readline())
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    return session


def test_the_nodes_of_the_recorded_previous_run_are_taken_over_at_once(zk_connect, make_registry, raw, log_dir):
    dead = crashed_previous_run(zk_connect, log_dir, controller=True)
    assert raw.exists("/brokers/ids/1").ephemeralOwner == dead  # its registration outlives it ...
    assert raw.exists("/controller").ephemeralOwner == dead  # ... and so does its controllership
    fd = lock(log_dir)
    try:
        registry = make_registry(session_timeout_ms=LONG_SESSION_MS)  # registration_wait_ms=0: no waiting
        registry.register_broker(
            BrokerInfo(1, "restarted.example", 9093), RegistrationRecord(log_dir, lock_file=log_dir / ".lock")
        )
        data, stat = raw.get("/brokers/ids/1")
        assert stat.ephemeralOwner == registry.session_id and json.loads(data)["host"] == "restarted.example"
        assert raw.exists("/controller") is None  # the next election does not wait for the dead session
        assert registry.try_become_controller(1) == 2
        assert f"zookeeper.session.id=0x{registry.session_id:x}\n" in (log_dir / RECORD_FILE).read_text()
    finally:
        os.close(fd)


def test_a_live_broker_with_the_same_id_still_gets_the_duplicate_id_error(make_registry, raw, log_dir):
    live = make_registry()
    live.register_broker(BrokerInfo(1, "live.example", 9092))
    fd = lock(log_dir)
    try:
        newcomer = make_registry()
        record = RegistrationRecord(log_dir, lock_file=log_dir / ".lock")
        with pytest.raises(
            BrokerIdInUseError,
            match=r"broker.id 1 is already registered by live.example:9092 .*"
            r"not this broker's previous run: .*zookeeper-registration names none",
        ):
            newcomer.register_broker(BrokerInfo(1, "newcomer.example", 9093), record)
        record.write(newcomer.cluster_id, 1, 0x1234)  # a previous run, but not the session holding the node
        with pytest.raises(
            BrokerIdInUseError,
            match=r"by live.example:9092 .*not this broker's previous run, "
            r"session 0x1234 recorded in",
        ):
            newcomer.register_broker(BrokerInfo(1, "newcomer.example", 9093), record)
    finally:
        os.close(fd)
    assert raw.exists("/brokers/ids/1").ephemeralOwner == live.session_id


def test_a_record_is_not_trusted_while_the_log_dir_is_not_locked_by_this_process(
    zk_connect, make_registry, raw, log_dir
):
    dead = crashed_previous_run(zk_connect, log_dir, controller=True)
    registry = make_registry()
    with pytest.raises(BrokerIdInUseError, match="broker.id 1 is already registered by previous.example:9092"):
        registry.register_broker(
            BrokerInfo(1, "unlocked.example", 9093), RegistrationRecord(log_dir, lock_file=log_dir / ".lock")
        )
    assert raw.exists("/brokers/ids/1").ephemeralOwner == dead
    assert raw.exists("/controller").ephemeralOwner == dead
    raw.delete("/brokers/ids/1")  # the dead session would hold it for 30 s: let the fixtures close quickly
    raw.delete("/controller")


def test_a_broker_node_deleted_while_the_broker_runs_is_registered_again(make_registry, raw):
    registry = make_registry()
    registry.register_broker(BrokerInfo(1, "b1.example", 9092, rack="r1"))
    data = raw.get("/brokers/ids/1")[0]
    for _ in range(2):  # the watch is re-armed after each re-creation
        raw.delete("/brokers/ids/1")
        wait_until(lambda: raw.exists("/brokers/ids/1"), 10, "the node to be registered again")
        again, again_stat = raw.get("/brokers/ids/1")
        assert again == data and again_stat.ephemeralOwner == registry.session_id
    registry.deregister_broker()
    assert raw.exists("/brokers/ids/1") is None
    other = make_registry()
    other.register_broker(BrokerInfo(1, "b1-next.example", 9092))  # a deregistered node stays released
    assert raw.exists("/brokers/ids/1").ephemeralOwner == other.session_id
