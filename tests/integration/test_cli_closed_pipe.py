"""The servers that need ZooKeeper (``zookeeper start``, ``cluster up``) with stdout a pipe whose reader is
gone (``kafkalog cluster up | head -1``): they warn once and go on serving, then stop cleanly. The other
subcommands are in tests/broker/cli/test_cli_closed_pipe.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from spark_kafkalog.client import AdminClient
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "broker.cli"]
WARNING = "kafkalog: warning: stdout was closed (broken pipe), so this line was not printed there: "


def serve_into_closed_pipe(args: list[str], err_path, ready_prefix: str, check_serving) -> str:
    """Start a server with its stdout closed; wait for its warning, check it serves, SIGINT it; its stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with err_path.open("w") as err_file:
        proc = subprocess.Popen([*CLI, *args], stdout=write_end, stderr=err_file)
    os.close(write_end)
    try:
        wait_until(lambda: WARNING in err_path.read_text() or proc.poll() is not None, timeout_s=120)
        text = err_path.read_text()
        assert proc.poll() is None, text
        line = next(line for line in text.splitlines() if line.startswith(WARNING))
        announced = line[len(WARNING) :]
        assert announced.startswith(ready_prefix), text
        check_serving(announced.split("=", 1)[1])
        proc.send_signal(signal.SIGINT)
        assert proc.wait(90) == 0, err_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err_path.read_text()
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert [line for line in text.splitlines() if line.startswith("kafkalog:")] == [line], text
    return text


def test_zookeeper_start_keeps_serving_when_its_stdout_is_closed(tmp_path):
    def serving(connect: str) -> None:
        host, port = connect.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5):
            pass

    args = ["zookeeper", "start", "--data-dir", str(tmp_path / "zk"), "--port", "0"]
    serve_into_closed_pipe(args, tmp_path / "stderr", "zookeeper.connect=127.0.0.1:", serving)


def test_cluster_up_keeps_serving_when_its_stdout_is_closed(tmp_path):
    def serving(bootstrap: str) -> None:
        with AdminClient(bootstrap) as admin:
            assert sorted(admin.describe_cluster()["brokers"]) == [1]

    args = ["cluster", "up", "--brokers", "1", "--data-dir", str(tmp_path / "c")]
    text = serve_into_closed_pipe(args, tmp_path / "stderr", "bootstrap.servers=127.0.0.1:", serving)
    assert "cluster stopped" in text
