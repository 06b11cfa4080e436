"""``jobs/stream_etl.py`` against the embedded cluster of conftest: through ``run_stream`` in the test session's
Spark, and as ``spark-submit jobs/stream_etl.py``. Windows are 10 seconds, the watermark 10 seconds behind the
largest event time; totals are exact (cents)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from jobs.batch_etl import produce_orders
from jobs.stream_etl import (
    Window,
    check_windows,
    expected_windows,
    run_stream,
    topic_records,
    watermark_ms,
    written_windows,
)
from spark_kafkalog.client import AdminClient, Producer, TopicPartition

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BASE = 1_700_000_000_000  # a multiple of 10 s: window n is [BASE + 10 s * n, BASE + 10 s * (n + 1))


def produce_events(bootstrap: str, topic: str, events: list[tuple[str, float, float]]) -> None:
    """``(item, amount, seconds after BASE)`` as order events of user u1; an item ``None`` sends a non-JSON value."""
    with Producer(bootstrap, linger_ms=2) as producer:
        futures = []
        for item, amount, at in events:
            value = b"not json" if item is None else json.dumps({"user": "u1", "item": item, "amount": amount}).encode()
            futures.append(producer.send(topic, value, key=b"u1", timestamp_ms=BASE + int(at * 1000)))
        producer.flush()
    for f in futures:
        f.result()


def windows(*rows: tuple[int, str, int, int]) -> dict[tuple[int, str], Window]:
    """``(window number, item, orders, cents)`` -> the ``written_windows`` form."""
    return {
        (BASE + n * 10_000, item): Window(BASE + n * 10_000, item, orders, cents) for n, item, orders, cents in rows
    }


def run_available_now(spark, bootstrap, source, target, checkpoint, **kwargs):
    query = run_stream(spark, bootstrap, source, target, checkpoint, **kwargs)
    try:
        assert query.awaitTermination(180), "AvailableNow query did not finish"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    return query


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
def test_stream_etl_append_writes_each_window_once_when_the_watermark_closes_it(
    spark, bootstrap, new_topic, exactly_once
):
    source, target = new_topic(2), new_topic(2)
    checkpoint = tempfile.mkdtemp()
    produce_events(
        bootstrap,
        source,
        [
            ("book", 1.10, 0.5),
            ("book", 2.20, 3),
            ("pen", 0.30, 9.999),
            ("book", 5.00, 10),
            (None, 0, 12),  # not JSON: dropped
            ("lamp", 7.77, 15),
            ("pen", 1.01, 21),
            ("mug", 3.00, 35),
        ],
    )
    query = run_available_now(spark, bootstrap, source, target, checkpoint, exactly_once=exactly_once)
    assert watermark_ms(query) == BASE + 25_000  # 35 s - 10 s: windows 0 and 1 are closed, 2 and 3 open
    written, count, changed = written_windows(bootstrap, target)
    assert written == windows((0, "book", 2, 330), (0, "pen", 1, 30), (1, "book", 1, 500), (1, "lamp", 1, 777))
    assert count == 4 and changed == []

    produce_events(bootstrap, source, [("mug", 4.00, 36), ("pen", 9.99, 5), ("book", 1.00, 61)])  # pen is late
    query = run_available_now(spark, bootstrap, source, target, checkpoint, exactly_once=exactly_once)
    assert watermark_ms(query) == BASE + 51_000
    written, count, changed = written_windows(bootstrap, target)
    assert written == windows(
        (0, "book", 2, 330),
        (0, "pen", 1, 30),  # the late pen (behind the watermark) was dropped, the window not written again
        (1, "book", 1, 500),
        (1, "lamp", 1, 777),
        (2, "pen", 1, 101),
        (3, "mug", 2, 700),
    )
    assert count == 6 and changed == []
    records = [json.loads(r.value) for _, r in topic_records(bootstrap, target)]
    assert {"window_start": "2023-11-14T22:13:50.000Z", "window_end": "2023-11-14T22:14:00.000Z"}.items() <= next(
        r for r in records if r["item"] == "mug"
    ).items()
    assert next(r for r in records if r["item"] == "lamp")["revenue"] == 7.77


def test_stream_etl_complete_mode_matches_the_generated_orders_and_commits_the_group(spark, bootstrap, new_topic):
    source, target = new_topic(3), new_topic(2)
    group = f"{source}-etl"
    totals = produce_orders(bootstrap, source, 5_000, bad_every=100)
    query = run_available_now(
        spark,
        bootstrap,
        source,
        target,
        tempfile.mkdtemp(),
        output_mode="complete",
        group=group,
        max_offsets_per_trigger=2_000,
    )
    assert sum(p["numInputRows"] for p in query.recentProgress) == 5_000
    expected = expected_windows(bootstrap, source)
    assert sum(w.orders for w in expected.values()) == 4_950  # every 100th value is not JSON
    assert sum(w.revenue_cents for w in expected.values()) == round(sum(totals.values()) * 100)
    written, count, _ = written_windows(bootstrap, target)
    assert check_windows(expected, written) == []
    assert count > len(written)  # complete mode rewrote the windows in each of the 3 batches
    with AdminClient(bootstrap) as admin:
        assert {p.topic_partition: p.lag for p in admin.group_lag(group)} == {
            TopicPartition(source, p): 0 for p in range(3)
        }


def test_stream_etl_runs_under_spark_submit(bootstrap, new_topic):
    source, target = new_topic(2), new_topic(1)
    produce_events(bootstrap, source, [("desk", 10.0, 1), ("desk", 2.5, 4), ("chair", 1.0, 30)])
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    spark_submit = Path(sys.executable).with_name("spark-submit")
    result = subprocess.run(
        [
            str(spark_submit),
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            str(ROOT / "jobs" / "stream_etl.py"),
            "--bootstrap-servers",
            bootstrap,
            "--input",
            source,
            "--output",
            target,
            "--checkpoint",
            tempfile.mkdtemp(),
        ],
        env=env,
        cwd=tempfile.gettempdir(),  # the job must not rely on the repository being the working directory
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "stream_etl: 2 batch(es)" in result.stdout
    written, _, _ = written_windows(bootstrap, target)
    assert written == windows((0, "desk", 2, 1250))
