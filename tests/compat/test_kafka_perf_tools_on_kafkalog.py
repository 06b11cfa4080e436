"""Apache Kafka 4.4's producer and consumer perf tools against kafkalog (correctness, not speed: the counts
and sizes they report and what reached the log)."""

from __future__ import annotations

import pytest

from spark_kafkalog.client import Consumer, KafkaClient, OffsetSpec, TopicPartition

from .conftest import new_topic
from .tools import run_tool

pytestmark = pytest.mark.compat


def test_producer_then_consumer_perf_test_on_kafkalog(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    n, size = 2000, 100
    produced = run_tool(
        "kafka-producer-perf-test", "--topic", topic, "--num-records", str(n), "--record-size", str(size),
        "--throughput", "-1", "--command-property", f"bootstrap.servers={bootstrap}", "acks=all",
    ).stdout  # fmt: skip
    summary = produced.strip().splitlines()[-1]
    assert summary.startswith(f"{n} records sent, ")
    tps = [TopicPartition(topic, p) for p in range(2)]
    with KafkaClient(bootstrap) as client:
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
    assert sum(ends.values()) == n
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100) as consumer:
        consumer.assign(tps[:1])
        sample = consumer.poll(5000, max_records=50)
    assert sample and all(r.key is None and len(r.value) == size for r in sample)

    consumed = run_tool(
        "kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
        "--num-records", str(n), "--timeout", "60000",
    ).stdout  # fmt: skip
    header, row = (line.split(", ") for line in consumed.strip().splitlines()[-2:])
    stats = dict(zip(header, row, strict=True))
    assert int(stats["data.consumed.in.nMsg"]) == n
    assert stats["data.consumed.in.MB"] == f"{n * size / 1024 / 1024:.4f}"
