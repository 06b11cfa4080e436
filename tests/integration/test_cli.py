"""The `kafkalog` console commands, run as real processes."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "broker.cli"]


def run(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=timeout)


def read_line(proc: subprocess.Popen, prefix: str, timeout: float = 90) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while sel.select(timeout):
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(prefix):
                return line.strip()
    finally:
        sel.close()
    raise AssertionError(f"no line starting with {prefix!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}")


@pytest.fixture(scope="module")
def cli_cluster(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-cluster")
    proc = subprocess.Popen([*CLI, "cluster", "up", "--brokers", "2", "--data-dir", str(data)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = read_line(proc, "bootstrap.servers=")
    yield proc, line.split("=", 1)[1], data
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


def test_topics_produce_consume(cli_cluster):
    _, bootstrap, _ = cli_cluster
    assert re.fullmatch(r"127\.0\.0\.1:\d+,127\.0\.0\.1:\d+", bootstrap)
    r = run("topics", "create", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--partitions", "3",
            "--config", "retention.ms=60000")
    assert r.returncode == 0, r.stderr
    r = run("topics", "create", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--partitions", "3")
    assert r.returncode == 1 and "already exists" in r.stderr
    assert "cli-t" in run("topics", "list", "--bootstrap-server", bootstrap).stdout.split()
    desc = run("topics", "describe", "--bootstrap-server", bootstrap, "--topic", "cli-t").stdout
    assert "PartitionCount: 3" in desc and desc.count("Leader: ") == 3

    lines = "".join(f"k{i % 3}:value {i}\n" for i in range(30))
    r = run("produce", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--key-separator", ":", "--acks", "all",
            stdin=lines)
    assert r.returncode == 0, r.stderr
    assert "produced 30 records" in r.stderr
    r = run("consume", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--from-beginning")
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == 30
    assert sorted(int(v.split()[1]) for _, v, _, _ in rows) == list(range(30))
    by_key = {}
    for key, _, part, _ in rows:
        by_key.setdefault(key, set()).add(part)
    assert all(len(parts) == 1 for parts in by_key.values())  # one key, one partition
    r = run("consume", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--partition", "0", "--offset", "1",
            "--max-messages", "2")
    assert len(r.stdout.splitlines()) == 2 and "offset=1" in r.stdout

    assert run("topics", "delete", "--bootstrap-server", bootstrap, "--topic", "cli-t").returncode == 0
    assert "cli-t" not in run("topics", "list", "--bootstrap-server", bootstrap).stdout.split()


def test_duplicate_broker_id_fails_clearly(cli_cluster, tmp_path):
    _, _, data = cli_cluster
    existing = (data / "broker-1" / "server.properties").read_text()
    zk = re.search(r"zookeeper.connect=(.*)", existing).group(1)
    cfg = tmp_path / "server.properties"
    cfg.write_text(f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={tmp_path / 'logs'}\nzookeeper.connect={zk}\n")
    r = run("broker", "start", "--config", str(cfg), timeout=60)
    assert r.returncode == 1
    assert "broker.id 1 is already registered" in r.stderr


def test_bad_config_names_the_key(tmp_path):
    cfg = tmp_path / "server.properties"
    cfg.write_text("broker.id=1\nzookeeper.connect=localhost:1\nnum.partitions=zero\n")
    r = run("broker", "start", "--config", str(cfg))
    assert r.returncode == 1 and "num.partitions" in r.stderr and "expected int" in r.stderr
    r = run("broker", "start", "--config", str(cfg), "--override", "num.partitions=2", "--override", "broker.id=x")
    assert r.returncode == 1 and "broker.id" in r.stderr


def test_zookeeper_start_and_stop(tmp_path):
    proc = subprocess.Popen([*CLI, "zookeeper", "start", "--data-dir", str(tmp_path), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = read_line(proc, "zookeeper.connect=")
        assert re.fullmatch(r"zookeeper\.connect=127\.0\.0\.1:\d+", line)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def test_cluster_up_stops_cleanly_on_sigint(cli_cluster):
    proc, _, data = cli_cluster
    pids = []
    for b in (1, 2):
        out = subprocess.run(["pgrep", "-f", str(data / f"broker-{b}" / "server.properties")], capture_output=True,
                             text=True).stdout.split()
        pids += [int(p) for p in out]
    assert len(pids) == 2
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "stopping the cluster" in proc.stderr.read()
