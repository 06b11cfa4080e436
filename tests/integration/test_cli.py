"""The `kafkalog` console commands, run as real processes."""

from __future__ import annotations

import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "broker.cli"]
NOT_A_HANG_S = 15  # a correctness bound (no 60 s wait), far above the few seconds these take


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
    raise AssertionError(
        f"no line starting with {prefix!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
    )


def fails_in_one_line(*args: str, stdin: str | None = None, code: int | None = None) -> str:
    """Run a command that must fail: non-zero exit (``code`` when given), no traceback, within
    ``NOT_A_HANG_S``; returns its one ``kafkalog: ...`` line (a broker may log other lines before it)."""
    started = time.monotonic()
    r = run(*args, stdin=stdin, timeout=60)
    took = time.monotonic() - started
    assert r.returncode != 0 if code is None else r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("kafkalog:")]
    assert len(lines) == 1, r.stderr
    assert took < NOT_A_HANG_S, f"took {took:.1f} s: {r.stderr}"
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cli_cluster(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-cluster")
    proc = subprocess.Popen(
        [*CLI, "cluster", "up", "--brokers", "2", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = read_line(proc, "bootstrap.servers=")
    yield proc, line.split("=", 1)[1], data
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


def test_topics_produce_consume(cli_cluster):
    _, bootstrap, _ = cli_cluster
    assert re.fullmatch(r"127\.0\.0\.1:\d+,127\.0\.0\.1:\d+", bootstrap)
    r = run(
        "topics",
        "create",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "cli-t",
        "--partitions",
        "3",
        "--config",
        "retention.ms=60000",
    )
    assert r.returncode == 0, r.stderr
    r = run("topics", "create", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--partitions", "3")
    assert r.returncode == 1 and "already exists" in r.stderr
    assert "cli-t" in run("topics", "list", "--bootstrap-server", bootstrap).stdout.split()
    desc = run("topics", "describe", "--bootstrap-server", bootstrap, "--topic", "cli-t").stdout
    assert "PartitionCount: 3" in desc and desc.count("Leader: ") == 3
    assert "ReplicationFactor: 2" in desc  # cluster up: default.replication.factor is min(3, brokers)

    lines = "".join(f"k{i % 3}:value {i}\n" for i in range(30))
    r = run(
        "produce",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "cli-t",
        "--key-separator",
        ":",
        "--acks",
        "all",
        stdin=lines,
    )
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
    r = run(
        "consume",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "cli-t",
        "--partition",
        "0",
        "--offset",
        "1",
        "--max-messages",
        "2",
    )
    assert len(r.stdout.splitlines()) == 2 and "offset=1" in r.stdout

    assert run("topics", "delete", "--bootstrap-server", bootstrap, "--topic", "cli-t").returncode == 0
    assert "cli-t" not in run("topics", "list", "--bootstrap-server", bootstrap).stdout.split()


def test_duplicate_broker_id_fails_clearly(cli_cluster, tmp_path):
    _, _, data = cli_cluster
    existing = (data / "broker-1" / "server.properties").read_text()
    zk = re.search(r"zookeeper.connect=(.*)", existing).group(1)
    cfg = tmp_path / "server.properties"
    cfg.write_text(
        f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={tmp_path / 'logs'}\nzookeeper.connect={zk}\n"
    )
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert "broker.id 1 is already registered" in line


def test_cluster_up_twice_on_one_data_dir_refuses_and_leaves_the_running_cluster_alone(cli_cluster):
    proc, bootstrap, data = cli_cluster
    zoo_cfg = data / "zookeeper" / "zoo.cfg"
    before = (zoo_cfg.read_bytes(), zoo_cfg.stat().st_mtime_ns, sorted(p.name for p in data.iterdir()))
    line = fails_in_one_line("cluster", "up", "--brokers", "2", "--data-dir", str(data))
    assert f"cluster data dir {data} is in use by another kafkalog process (pid {proc.pid})" in line
    line = fails_in_one_line("zookeeper", "start", "--data-dir", str(data / "zookeeper"), "--port", "0")
    assert f"ZooKeeper data dir {data / 'zookeeper'} is in use" in line
    assert (zoo_cfg.read_bytes(), zoo_cfg.stat().st_mtime_ns, sorted(p.name for p in data.iterdir())) == before
    assert proc.poll() is None
    assert run("topics", "list", "--bootstrap-server", bootstrap).returncode == 0


def test_bad_config_names_the_key(tmp_path):
    cfg = tmp_path / "server.properties"
    cfg.write_text("broker.id=1\nzookeeper.connect=localhost:1\nnum.partitions=zero\n")
    r = run("broker", "start", "--config", str(cfg))
    assert r.returncode == 1 and "num.partitions" in r.stderr and "expected int" in r.stderr
    r = run("broker", "start", "--config", str(cfg), "--override", "num.partitions=2", "--override", "broker.id=x")
    assert r.returncode == 1 and "broker.id" in r.stderr


def test_binary_bytes_in_server_properties_are_reported_in_one_line(tmp_path):
    cfg = tmp_path / "server.properties"
    cfg.write_bytes(b"broker.id=1\nzookeeper.connect=localhost:1\n\xff\xfe\x00junk=\x80\n")
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert f"{cfg} is not a UTF-8 text file (byte 0xff at offset" in line


def test_broker_start_where_no_zookeeper_listens_fails_within_seconds(tmp_path):
    zk = f"127.0.0.1:{closed_port()}"
    cfg = tmp_path / "server.properties"
    cfg.write_text(
        f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={tmp_path / 'logs'}\nzookeeper.connect={zk}\n"
    )
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert f"cannot connect to ZooKeeper at {zk} (connection refused)" in line


def test_a_log_dir_that_is_a_file_says_so(tmp_path):
    file = tmp_path / "not-a-dir"
    file.write_text("x")
    cfg = tmp_path / "server.properties"
    cfg.write_text(f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={file}\nzookeeper.connect=localhost:1\n")
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert f"log dir (log.dirs) {file} is a regular file, not a directory" in line


@pytest.mark.parametrize("command", ["cluster", "zookeeper"])
def test_a_data_dir_that_is_a_file_says_so(tmp_path, command):
    file = tmp_path / "not-a-dir"
    file.write_text("x")
    args = ("cluster", "up", "--brokers", "1") if command == "cluster" else ("zookeeper", "start", "--port", "0")
    line = fails_in_one_line(*args, "--data-dir", str(file))
    assert f"data dir {file} is a regular file, not a directory" in line
    assert file.read_text() == "x"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("cluster", "up", "--brokers", "0", "--data-dir", "unused"), "cluster up needs --brokers 1 or more, not 0"),
        (
            ("consume", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--offset", "5"),
            "--offset needs --partition",
        ),
    ],
    ids=["no-brokers", "offset-without-partition"],
)
def test_usage_mistakes_are_one_line_with_exit_code_2(args, problem):
    assert problem in fails_in_one_line(*args, code=2)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("topics", "list"), None),
        (("produce", "--topic", "t"), "a line\n"),
        (("consume", "--topic", "t", "--from-beginning"), None),
    ],
    ids=["topics", "produce", "consume"],
)
def test_client_commands_against_a_dead_address_fail_within_seconds_naming_it(args, stdin):
    dead = f"127.0.0.1:{closed_port()}"
    line = fails_in_one_line(*args, "--bootstrap-server", dead, stdin=stdin)
    assert f"cannot connect to any bootstrap server: {dead} (connection refused)" in line


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


def test_cluster_up_stops_cleanly_on_sigint(cli_cluster):
    proc, _, data = cli_cluster
    pids = []
    for b in (1, 2):
        out = subprocess.run(
            ["pgrep", "-f", str(data / f"broker-{b}" / "server.properties")], capture_output=True, text=True
        ).stdout.split()
        pids += [int(p) for p in out]
    assert len(pids) == 2
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "stopping the cluster" in proc.stderr.read()
