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
