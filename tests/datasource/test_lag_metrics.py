"""``register_lag_metrics`` on a running ``format("kafkalog")`` query (Spark local[2], the embedded two-broker
cluster of conftest): ``maxOffsetsBehindLatest`` rises while a producer outpaces ``maxOffsetsPerTrigger``,
falls to 0 once it stops, and the Prometheus endpoint serves the values the listener holds."""

from __future__ import annotations

import json
import tempfile
import urllib.request

import pytest

from spark_kafkalog.client import Producer
from spark_kafkalog.datasource.lag_prometheus import series_names
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

MAX_OFFSETS_PER_TRIGGER = 40
PER_BATCH = 60


def _scrape(url: str) -> dict[tuple[str, str], float]:
    """``{(series name, run_id): value}`` of the endpoint's samples."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        series, _, value = line.rpartition(" ")
        name, _, labels = series.partition("{")
        run_id = labels.split('run_id="', 1)[1].split('"', 1)[0]
        out[(name, run_id)] = float(value)
    return out


class Outpacing:
    """A producer that outpaces the query: ``PER_BATCH`` records (split over both partitions of ``topic``) for
    every micro-batch, which reads at most ``MAX_OFFSETS_PER_TRIGGER``: with a backlog above that to begin with,
    the backlog grows by the difference at each batch however fast or slow the machine runs the batches (sending
    on a timer instead either drains between sends or outgrows what the query can catch up with in time)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.sent = 0
        self.producer = Producer(bootstrap, linger_ms=5)

    def send(self, batches: int = 1) -> None:
        count = PER_BATCH * batches
        futures = [
            self.producer.send(self.topic, b"v%d" % (self.sent + i), None, partition=i % 2) for i in range(count)
        ]
        self.producer.flush()
        for f in futures:
            f.result()
        self.sent += count

    def close(self) -> None:
        self.producer.close()


def test_max_offsets_behind_latest_rises_while_outpaced_and_falls_to_zero(spark, bootstrap, new_topic):
    from spark_kafkalog.datasource.lag_metrics import register_lag_metrics

    topic = new_topic(2)
    lag = register_lag_metrics(spark, prometheus_port=0)
    producer = Outpacing(bootstrap, topic)
    query = None
    try:
        df = (
            spark.readStream.format("kafkalog")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(MAX_OFFSETS_PER_TRIGGER))
            .load()
        )
        producer.send(batches=2)
        query = (
            df.writeStream.format("noop")
            .queryName("lag_metrics_test")
            .option("checkpointLocation", tempfile.mkdtemp())
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        run_id = str(query.runId)
        url = lag.prometheus_url
        assert url is not None and url.startswith("http://127.0.0.1:"), url

        # rising: the listener's maxOffsetsBehindLatest grows from batch to batch while the producer outpaces;
        # then the producer stops
        seen: list[tuple[int, int]] = []  # (batch id, max behind) per progress the listener kept

        def risen() -> bool:
            lags = lag.lags(query)
            if lags and (not seen or lags[0].batch_id != seen[-1][0]):
                producer.send(batches=lags[0].batch_id - seen[-1][0] if seen else 1)
                seen.append((lags[0].batch_id, lags[0].lag.max))
            rises = sum(1 for (_, a), (_, b) in zip(seen, seen[1:], strict=False) if b > a)
            return rises >= 2 and seen[-1][1] > 0

        # the first micro-batch of a query starts Spark's Python source runner and workers: slow on a busy machine
        wait_until(lambda: lag.lags(query), 120, "the first progress of the query")
        try:
            wait_until(risen, 60, "maxOffsetsBehindLatest to rise twice")
        except AssertionError as e:
            raise AssertionError(f"{e}; (batch id, max behind) seen: {seen}") from None
        during = _scrape(url)
        assert during[(series_names()[2], run_id)] > 0, during
        assert producer.sent > MAX_OFFSETS_PER_TRIGGER

        # caught up: the last batch ends where the latest offsets were, every record sent counted
        def offsets(source: dict, key: str) -> dict[str, int]:
            value = source[key]
            return (value if isinstance(value, dict) else json.loads(value))[topic]

        def caught_up() -> dict | None:
            progress = lag.progress_with_lag(query)
            if progress is None or progress["runId"] != run_id:
                return None
            source = progress["sources"][0]
            done = sum(offsets(source, "latestOffset").values()) == producer.sent
            return source if done and source["metrics"]["maxOffsetsBehindLatest"] == "0" else None

        source = wait_until(
            caught_up, 40, f"the query to catch up with every record sent (max behind per batch: {seen})"
        )
        assert offsets(source, "endOffset") == offsets(source, "latestOffset")
        assert lag.metrics(query) == {
            0: {"minOffsetsBehindLatest": "0", "maxOffsetsBehindLatest": "0", "avgOffsetsBehindLatest": "0.0"}
        }
        assert source["metrics"] == lag.metrics(query)[0]
        assert [x.source for x in lag.lags(query)] == [f"kafkalog[{topic}]"]

        # the endpoint serves the same values, labelled with the query
        low, avg, high = series_names()
        scraped = _scrape(url)
        assert (scraped[(low, run_id)], scraped[(avg, run_id)], scraped[(high, run_id)]) == (0, 0, 0)
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        assert f'query_name="lag_metrics_test",query_id="{query.id}",run_id="{run_id}"' in text

        query.stop()
        wait_until(lambda: all(r != run_id for _, r in _scrape(url)), 20, "the run's series to go")
        assert lag.metrics(str(query.id))[0]["maxOffsetsBehindLatest"] == "0", "still readable from Python"
    finally:
        if query is not None:
            query.stop()
        producer.close()
        lag.close()
