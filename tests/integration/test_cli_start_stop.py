"""`kafkalog zookeeper start` and stopping a `kafkalog cluster up` (cluster stop from another shell, a quick
SIGINT): brokers stop cleanly in seconds, then ZooKeeper, and the next run keeps the recorded ports."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

from tests.waiting import wait_until

from .cli_process import CLI, fails_in_one_line, read_line, run

pytestmark = pytest.mark.integration


def test_zookeeper_start_and_stop(tmp_path):
    proc = subprocess.Popen(
        [*CLI, "zookeeper", "start", "--data-dir", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = read_line(proc, "zookeeper.connect=")
        assert re.fullmatch(r"zookeeper\.connect=127\.0\.0\.1:\d+", line)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


STOP_SANITY_S = 20  # a sanity bound only: 3 brokers stop in about a second here; before the fix 5-11 s


def start_cluster_up(data, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [*CLI, "cluster", "up", "--data-dir", str(data), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, read_line(proc, "bootstrap.servers=").split("=", 1)[1]


def assert_stopped_cleanly(proc: subprocess.Popen, data, brokers: int) -> str:
    """``cluster up`` exited 0 without a traceback; every broker's controlled shutdown succeeded at its first
    attempt (a failed one logs ``controlled shutdown attempt``); returns ``cluster up``'s stderr."""
    assert proc.wait(60) == 0
    err = proc.stderr.read()
    assert "Traceback" not in err and "UNKNOWN_SERVER_ERROR" not in err, err
    assert "stopping the cluster" in err
    for b in range(1, brokers + 1):
        log = (data / f"broker-{b}" / "broker.log").read_text()
        assert "Traceback" not in log and "UNKNOWN_SERVER_ERROR" not in log, log[-3000:]
        assert "controlled shutdown attempt" not in log, log[-3000:]
        assert f"broker {b}: controlled shutdown done" in log, log[-3000:]
    return err


def preferred_leaders_in_sync(bootstrap: str, topic: str, partitions: int) -> bool:
    """Every partition of ``topic`` is led by its first replica, with every replica in the ISR."""
    r = run("topics", "describe", "--bootstrap-server", bootstrap, "--topic", topic)
    rows = re.findall(r"Partition: (\d+)\tLeader: (\S+)\tReplicas: (\S+)\tIsr: (\S+)", r.stdout)
    return len(rows) == partitions and all(
        leader == replicas.split(",")[0] and sorted(isr.split(",")) == sorted(replicas.split(","))
        for _, leader, replicas, isr in rows
    )


def test_cluster_stop_without_a_running_cluster_says_so(tmp_path):
    line = fails_in_one_line("cluster", "stop", "--data-dir", str(tmp_path), code=1)
    assert line == f"kafkalog: nothing to stop: no kafkalog cluster up is running on {tmp_path}"


def test_cluster_stop_from_another_shell_stops_the_brokers_then_zookeeper(tmp_path):
    proc, bootstrap = start_cluster_up(tmp_path, "--brokers", "3")
    try:
        created = run("topics", "create", "--bootstrap-server", bootstrap, "--topic", "stop-me", "--partitions", "6",
                      "--replication-factor", "3")  # fmt: skip
        assert created.returncode == 0, created.stderr
        pids = dict(line.split("=", 1) for line in (tmp_path / "pids.properties").read_text().splitlines()[1:])
        ports = bootstrap.split(",")
        started = time.monotonic()
        r = run("cluster", "stop", "--data-dir", str(tmp_path), timeout=120)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.splitlines() == [
        *(f"stopped broker {b} (pid {pids[f'broker.{b}.pid']}, {ports[b - 1]})" for b in (1, 2, 3)),
        f"stopped ZooKeeper (pid {pids['zookeeper.pid']}, {re.search(r'zookeeper.connect=(.*)', (tmp_path / 'broker-1' / 'server.properties').read_text()).group(1)})",
        f"stopped kafkalog cluster up (pid {proc.pid}) on {tmp_path}",
    ]  # fmt: skip
    assert_stopped_cleanly(proc, tmp_path, 3)
    assert took < STOP_SANITY_S, f"cluster stop took {took:.1f} s"
    for pid in pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)
    assert not (tmp_path / "pids.properties").exists()
    again = fails_in_one_line("cluster", "stop", "--data-dir", str(tmp_path), code=1)
    assert again == f"kafkalog: nothing to stop: no kafkalog cluster up is running on {tmp_path}"


def test_a_quick_sigint_stops_three_brokers_in_seconds_and_the_next_run_keeps_the_metrics_ports(tmp_path):
    import urllib.request

    proc, bootstrap = start_cluster_up(tmp_path, "--brokers", "3", "--metrics")
    try:
        created = run("topics", "create", "--bootstrap-server", bootstrap, "--topic", "quick", "--partitions", "6",
                      "--replication-factor", "3")  # fmt: skip
        assert created.returncode == 0, created.stderr
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        err = assert_stopped_cleanly(proc, tmp_path, 3)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    assert took < STOP_SANITY_S, f"the stop took {took:.1f} s"
    first = re.findall(r"broker (\d) serving at \S+, metrics at (\S+)", err)
    assert len(first) == 3, err
    ports = (tmp_path / "ports.properties").read_text()
    for b, url in first:
        assert f"broker.{b}.metrics.port={url.rsplit(':', 1)[1].split('/')[0]}" in ports
    again, bootstrap_again = start_cluster_up(tmp_path, "--brokers", "3", "--metrics")
    try:
        assert bootstrap_again == bootstrap
        with urllib.request.urlopen(first[0][1], timeout=10) as response:
            assert b"kafka_server_replicamanager_partitioncount" in response.read()
        # the last broker to stop led every partition; once the others caught up, the preferred leaders are back
        # (the controller checks at once, not after leader.imbalance.check.interval.seconds=300)
        wait_until(lambda: preferred_leaders_in_sync(bootstrap, "quick", 6), 60, "the preferred leaders back")
        again.send_signal(signal.SIGINT)
        second = re.findall(r"broker (\d) serving at \S+, metrics at (\S+)", assert_stopped_cleanly(again, tmp_path, 3))
    finally:
        if again.poll() is None:
            again.kill()
    assert second == first
