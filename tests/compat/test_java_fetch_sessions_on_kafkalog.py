"""Apache Kafka 4.4's Java consumer (kafka-console-consumer) reads from kafkalog with Fetch v18 (its newest): topics by id
and an incremental fetch session, while records keep arriving."""

from __future__ import annotations

import threading
import time

import pytest

from spark_kafkalog.client import Producer

from .conftest import new_topic
from .tools import run_tool

pytestmark = pytest.mark.compat


def test_console_consumer_reads_through_an_incremental_session_by_topic_id(kafkalog, monkeypatch):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    cache = kafkalog.broker.fetch_sessions
    seen: list[tuple[int, int, int]] = []  # (version, session id, epoch) of every Fetch
    new_context = cache.new_context

    def recording(version, session_id, epoch, **kw):
        seen.append((version, session_id, epoch))
        return new_context(version, session_id, epoch, **kw)

    monkeypatch.setattr(cache, "new_context", recording)

    def send(start: int, n: int) -> None:
        with Producer(bootstrap) as producer:
            for i in range(start, start + n):
                producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % 3)
            producer.flush(30)

    send(0, 60)
    later = threading.Thread(target=lambda: (time.sleep(3), send(60, 60)))
    later.start()
    try:
        out = run_tool(
            "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
            "--max-messages", "120", "--timeout-ms", "40000",
            "--consumer-property", "fetch.max.wait.ms=100", "--consumer-property", "group.protocol=classic",
            "--property", "print.key=true", "--property", "print.partition=true",
        ).stdout  # fmt: skip
    finally:
        later.join(30)
    printed = sorted(tuple(line.split("\t")) for line in out.splitlines() if line.startswith("Partition:"))
    assert printed == sorted((f"Partition:{i % 3}", f"k{i}", f"v{i}") for i in range(120))
    assert any(v == 18 for v, _, _ in seen), seen
    incremental = [(sid, epoch) for v, sid, epoch in seen if v == 18 and sid != 0 and epoch > 0]
    assert len(incremental) >= 3, seen  # the session carried the fetches after the first
