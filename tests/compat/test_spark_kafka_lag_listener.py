"""Spark's own ``format("kafka")`` stream (spark-sql-kafka-0-10 4.2.0 on pyspark 4.3.0) against a kafkalog broker:
Spark's ``*OffsetsBehindLatest`` source metrics are what ``offsets_behind`` computes from the same progress's
offsets, and the lag listener passes them through for a ``KafkaV2[...]`` source."""

from __future__ import annotations

import tempfile

import pytest

from spark_kafkalog.client import Producer
from spark_kafkalog.datasource.offsets_behind import (
    SPARK_KAFKA,
    OffsetsBehindLatest,
    avg_json_string,
    offsets_behind_latest,
    parse_source_offsets,
)
from tests.waiting import wait_until

from .conftest import new_topic
from .test_spark_kafka_on_kafkalog import spark  # noqa: F401 - the module's SparkSession with the connector

pytestmark = pytest.mark.compat


def test_sparks_kafka_source_metrics_match_offsets_behind_and_pass_through_the_listener(spark, kafkalog):  # noqa: F811
    from spark_kafkalog.datasource.lag_metrics import register_lag_metrics

    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    # uneven partitions: the rate limit leaves them different distances behind, so avg has a fraction
    with Producer(bootstrap, linger_ms=5) as producer:
        futures = [producer.send(topic, b"v%d" % i, None, partition=(0, 0, 0, 1, 2)[i % 5]) for i in range(301)]
        producer.flush(30)
    for f in futures:
        f.result(30)

    lag = register_lag_metrics(spark)
    query = None
    try:
        df = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "37")
            .load()
        )
        query = df.writeStream.format("noop").option("checkpointLocation", tempfile.mkdtemp()).start()

        def with_metrics() -> list:
            return [p for p in query.recentProgress if p["sources"][0]["metrics"]]

        progresses = wait_until(lambda: len(with_metrics()) >= 3 and with_metrics(), 120, "3 progresses with metrics")
        for progress in progresses:
            source = progress["sources"][0]
            assert source["description"].startswith("KafkaV2[")
            end, latest = parse_source_offsets(source["endOffset"]), parse_source_offsets(source["latestOffset"])
            assert end is not None and latest is not None, source
            computed = offsets_behind_latest(end, latest)
            # recentProgress is read from Spark's progress JSON, which rounds the average to one decimal
            assert computed is not None and computed.spark_metrics(progress_json=True) == dict(source["metrics"])
        assert any(not p["sources"][0]["metrics"]["avgOffsetsBehindLatest"].endswith(".0") for p in progresses)

        wait_until(lambda: lag.lags(query), 30, "the listener to see a progress")
        (seen,) = lag.lags(query)
        assert seen.kind == SPARK_KAFKA and seen.source == f"KafkaV2[Subscribe[{topic}]]"
        # the listener's event carries the JVM's own values (unrounded): exactly what offsets_behind computes
        source = next(p for p in query.recentProgress if p["batchId"] == seen.batch_id)["sources"][0]
        end, latest = parse_source_offsets(source["endOffset"]), parse_source_offsets(source["latestOffset"])
        assert end is not None and latest is not None
        assert seen.lag == offsets_behind_latest(end, latest)
        assert lag.metrics(query) == {0: seen.lag.spark_metrics()}
        assert OffsetsBehindLatest.from_spark_metrics(source["metrics"]) == OffsetsBehindLatest(
            seen.lag.min, seen.lag.max, float(avg_json_string(seen.lag.avg))
        )
    finally:
        if query is not None:
            query.stop()
        lag.close()
