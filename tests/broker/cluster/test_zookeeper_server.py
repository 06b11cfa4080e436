"""ZooKeeperServer: a real java child process from pyspark's jars."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from broker.cluster import zookeeper_server
from broker.cluster.zookeeper_server import (
    JavaNotFoundError,
    ZooKeeperError,
    ZooKeeperServer,
    find_java,
    find_zookeeper_classpath,
)
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]


def _port_open(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by init) counts as dead
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return True


def test_session_server_serves_on_a_picked_port_and_answers_srvr(zookeeper):
    assert zookeeper.port > 0 and zookeeper.connect_string == f"127.0.0.1:{zookeeper.port}"
    assert zookeeper.is_running and zookeeper.pid
    reply = zookeeper.four_letter_word("srvr")
    assert "Mode: standalone" in reply
    assert zookeeper.four_letter_word("ruok") == "imok"


def test_server_starts_quickly_logs_to_its_data_dir_and_stops_idempotently(tmp_path, capfd):
    server = ZooKeeperServer(tmp_path, force_sync=False)
    with server:
        assert server.startup_seconds is not None and server.startup_seconds < 5.0
        pid, port = server.pid, server.port
        assert _port_open("127.0.0.1", port)
        assert "Mode: standalone" in server.four_letter_word("srvr")
    assert not server.is_running and server.pid is None
    assert not _pid_alive(pid)
    assert not _port_open("127.0.0.1", port)
    server.stop()  # idempotent
    assert (tmp_path / "zoo.cfg").read_text().count(f"clientPort={port}") == 1
    assert "binding to port" in (tmp_path / "zookeeper.log").read_text()
    assert (tmp_path / "version-2").is_dir()
    out, err = capfd.readouterr()
    assert "INFO" not in out + err  # the server logs to its file, not to our console
    with capfd.disabled():
        print(f"\nZooKeeper start-up to serving: {server.startup_seconds:.3f} s")


def test_fixed_port_already_in_use_fails_with_an_error_naming_the_port(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = ZooKeeperServer(tmp_path, port=port)
        with pytest.raises(ZooKeeperError, match=f"port {port} on 127.0.0.1 is already in use"):
            server.start(timeout=20)
        assert not server.is_running


def test_port_zero_picks_another_port_when_the_first_is_taken_before_launch(tmp_path, monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        stolen = taken.getsockname()[1]
        picks = []
        real_free_port = zookeeper_server.free_port

        def racing_free_port(host):  # the first pick loses the race to another process
            picks.append(stolen if not picks else real_free_port(host))
            return picks[-1]

        monkeypatch.setattr(zookeeper_server, "free_port", racing_free_port)
        with ZooKeeperServer(tmp_path) as server:
            assert len(picks) == 2 and server.port == picks[1] != stolen
            assert "Mode: standalone" in server.four_letter_word("srvr")


def test_missing_java_raises_java_not_found(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(JavaNotFoundError, match="java was not found"):
        find_java()
    server = ZooKeeperServer(tmp_path)
    with pytest.raises(JavaNotFoundError):
        server.start()
    assert not server.is_running


def test_java_home_without_a_java_binary_is_named_in_the_error(tmp_path):
    with pytest.raises(JavaNotFoundError, match="JAVA_HOME is set to"):
        find_java({"JAVA_HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")})
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_java({"JAVA_HOME": str(tmp_path), "PATH": ""}) == str(fake)


def test_classpath_is_the_minimal_set_from_the_pyspark_wheel():
    jars = [Path(p).name for p in find_zookeeper_classpath().split(os.pathsep)]
    assert len(jars) == 8
    assert any(j.startswith("zookeeper-3.") for j in jars) and any(j.startswith("zookeeper-jute-") for j in jars)
    assert not any(j.startswith("netty") for j in jars)


def test_missing_jars_are_each_named(tmp_path):
    with pytest.raises(ZooKeeperError, match="does not exist"):
        find_zookeeper_classpath(tmp_path / "nowhere")
    (tmp_path / "zookeeper-3.9.5.jar").write_bytes(b"")
    with pytest.raises(ZooKeeperError) as info:
        find_zookeeper_classpath(tmp_path)
    message = str(info.value)
    assert "ZooKeeper server" not in message.split(":", 1)[1]
    for needed in ("ZooKeeper jute", "SLF4J API", "metrics core", "snappy-java", "log4j2 core"):
        assert needed in message


def test_server_dies_with_its_parent_process(tmp_path):
    code = textwrap.dedent(f"""
        import sys, time
        from broker.cluster.zookeeper_server import ZooKeeperServer
        server = ZooKeeperServer({str(tmp_path)!r}, force_sync=False).start()
        print(server.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        java_pid = int(parent.stdout.readline())
        assert _pid_alive(java_pid)
    finally:
        parent.kill()
        parent.wait()
    wait_until(lambda: not _pid_alive(java_pid), 10, f"java pid {java_pid} to exit")


def test_run_foreground_prints_the_connect_string_and_stops_on_sigterm(tmp_path):
    child = subprocess.Popen(
        [sys.executable, "-m", "broker.cluster.zookeeper_server", "--data-dir", str(tmp_path), "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline().strip()
        assert line.startswith("zookeeper.connect=127.0.0.1:"), (line, child.stderr.read() if child.poll() else "")
        port = int(line.rsplit(":", 1)[1])
        assert _port_open("127.0.0.1", port)
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=15) == 0
        assert not _port_open("127.0.0.1", port)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_admin_server_without_jetty_jars_is_refused_rather_than_silently_missing(tmp_path):
    server = ZooKeeperServer(tmp_path, admin_server=True)
    with pytest.raises(ZooKeeperError, match="needs Jetty jars"):
        server.start()
    assert not server.is_running
