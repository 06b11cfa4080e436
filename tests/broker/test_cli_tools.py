"""The `kafkalog` tools as a Kafka user types them, run as processes against an in-process broker."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer
from tests.broker.conftest import start_brokers

CLI = [sys.executable, "-m", "broker.cli"]


def run(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, group_initial_rebalance_delay_ms=0, offsets_topic_num_partitions=1)
    yield b.bootstrap_servers
    b.stop()


def new_topic(bootstrap: str, partitions: int = 1, **config: str) -> str:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, config)])
    return name


def produce(bootstrap: str, topic: str, values: list[bytes], **kwargs) -> None:
    with Producer(bootstrap, **kwargs) as producer:
        for v in values:
            producer.send(topic, v)
        producer.flush()


def test_a_group_consumer_that_reads_nothing_commits_its_position_so_the_next_run_sees_what_came_between(bootstrap):
    topic = new_topic(bootstrap, partitions=2)
    produce(bootstrap, topic, [b"before-first-run"])
    group = f"g-{uuid.uuid4().hex[:6]}"
    common = ("consume", "--bootstrap-server", bootstrap, "--topic", topic, "--group", group)
    first = run(*common, "--timeout-ms", "1500")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "" and "Processed a total of 0 messages" in first.stderr
    produce(bootstrap, topic, [b"between-1", b"between-2"])
    second = run(*common, "--max-messages", "2", "--timeout-ms", "5000")
    assert second.returncode == 0, second.stderr
    assert sorted(second.stdout.split()) == ["between-1", "between-2"]


def one_line_failure(*args: str, code: int) -> str:
    r = run(*args, timeout=30)
    assert r.returncode == code and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafkalog: "), r.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--base-port", "70000"], "cluster up --base-port must be in 1-65533 (broker i listens on base-port + i - 1"),
        (["--brokers", "1", "--base-port", "65536"], "cluster up --base-port must be in 1-65535"),
        (["--base-port", "65534"], "not 65534"),
        (["--base-port", "-5"], "not -5"),
        (["--zookeeper-port", "70000"], "cluster up --zookeeper-port must be in 0-65535 (0: a free port), not 70000"),
        (
            ["--zookeeper-connect", "127.0.0.1:70000"],
            "zookeeper.connect (127.0.0.1:70000): port 70000 is not in 1-65535",
        ),
    ],
)
def test_cluster_up_with_a_port_out_of_range_names_the_range_in_one_line(tmp_path, args, expected):
    line = one_line_failure(
        "cluster", "up", "--data-dir", str(tmp_path / "c"), *args, code=1 if "connect" in args[0] else 2
    )
    assert expected in line
    assert not (tmp_path / "c").exists() or "connect" in args[0]  # refused before anything was created


def test_zookeeper_start_with_a_port_out_of_range_names_the_range(tmp_path):
    line = one_line_failure("zookeeper", "start", "--data-dir", str(tmp_path / "z"), "--port", "70000", code=2)
    assert line == "kafkalog: zookeeper start --port must be in 0-65535 (0: a free port), not 70000"


def test_a_recorded_port_out_of_range_names_the_file(tmp_path):
    data = tmp_path / "c"
    data.mkdir()
    (data / "ports.properties").write_text("broker.1.port=70000\n")
    line = one_line_failure("cluster", "up", "--brokers", "1", "--data-dir", str(data), code=1)
    assert "port 70000 recorded for broker.1 in" in line and "ports.properties is not in 1-65535" in line
