"""Spark's own KafkaMicroBatchSourceSuite cases, run against format("kafkalog"): topics that go away under a
running stream ("subscribing topic by pattern with topic deletions", "SPARK-41375: empty partitions should not
record to latest offset"), Trigger.AvailableNow when partitions or offsets go away ("Query with
Trigger.AvailableNow should throw error when ..."), "SPARK-53560: no crash looping during uncommitted batch
retry in AvailableNow trigger", a stream on a topic that does not exist, "async progress tracking" and the
ending options of "bad source options"."""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType

from spark_kafkalog.client import AdminClient, NewTopic
from tests.datasource.test_streaming import Collector, produce, run_available_now, stream
from tests.waiting import stays_true, wait_until

pytestmark = pytest.mark.integration


def _start(df, collector):
    return (
        df.writeStream.foreachBatch(collector)
        .trigger(processingTime="100 milliseconds")
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )


def test_subscribe_pattern_with_topic_deletions_goes_on_without_fail_on_data_loss(spark, bootstrap, new_topic):
    prefix = new_topic(1)  # a unique prefix (its own topic does not match the pattern below)
    topic, topic2 = f"{prefix}-seems", f"{prefix}-bad"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 5, 1, {})])
    produce(bootstrap, topic, ["-1"])
    df = stream(
        spark,
        bootstrap,
        subscribePattern=f"{prefix}-.*",
        failOnDataLoss="false",
        **{"kafka__metadata__max__age__ms": 1},
    )
    collector = Collector()
    query = _start(df, collector)
    try:
        query.processAllAvailable()
        produce(bootstrap, topic, ["1", "2", "3"])
        wait_until(lambda: sorted(v for _, _, v in collector.rows()) == ["1", "2", "3"], 60, "the first records")
        with AdminClient(bootstrap) as admin:
            admin.delete_topics([topic])
            admin.create_topics([NewTopic(topic2, 5, 1, {})])
        produce(bootstrap, topic2, ["4", "5", "6"])
        wait_until(
            lambda: sorted(v for _, _, v in collector.rows()) == ["1", "2", "3", "4", "5", "6"] or not query.isActive,
            90,
            "the records of the new topic",
        )
        assert query.exception() is None, query.exception()
        assert sorted(v for _, _, v in collector.rows()) == ["1", "2", "3", "4", "5", "6"]
    finally:
        query.stop()


def _offset_log(checkpoint: str) -> list[str]:
    """The source offset line of each ``offsets/<batch>`` file of a checkpoint, by batch id."""
    folder = os.path.join(checkpoint, "offsets")
    names = sorted((n for n in os.listdir(folder) if n.isdigit()), key=int) if os.path.isdir(folder) else []
    return [open(os.path.join(folder, n)).read().splitlines()[-1] for n in names]


def test_spark_41375_a_pattern_whose_topics_are_all_deleted_records_no_empty_offset(spark, bootstrap, new_topic):
    prefix = new_topic(1)
    topic = f"{prefix}-good"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 5, 1, {})])
    produce(bootstrap, topic, ["-1"])
    checkpoint = tempfile.mkdtemp()
    df = stream(spark, bootstrap, subscribePattern=f"{prefix}-.*", failOnDataLoss="false")
    collector = Collector()
    query = df.writeStream.foreachBatch(collector).trigger(processingTime="100 milliseconds")
    query = query.option("checkpointLocation", checkpoint).start()
    try:
        query.processAllAvailable()
        produce(bootstrap, topic, ["1", "2", "3"])
        wait_until(lambda: len(collector.rows()) == 3, 60, "the first records")
        with AdminClient(bootstrap) as admin:
            admin.delete_topics([topic])
        stays_true(  # about 30 triggers of 100 ms after the deletion (no-data triggers report no progress)
            lambda: query.isActive and query.exception() is None, 3, "the query running after the deletion"
        )
    finally:
        query.stop()
    log = _offset_log(checkpoint)
    assert log and all(json.loads(line) != {} for line in log), log


def _recreating_batch(bootstrap, topic, partitions, values):
    def run(df, batch_id):
        df.count()
        with AdminClient(bootstrap) as admin:
            admin.delete_topics([topic])
            wait_until(lambda: topic not in admin.list_topics(), 30, f"{topic} to be deleted")
            admin.create_topics([NewTopic(topic, partitions, 1, {})])
        produce(bootstrap, topic, values, partition=0)

    return run


def _failure(query, timeout: float = 300) -> str:
    """The error that ends ``query`` (a started StreamingQuery), as text; fails if it ends without one."""
    try:
        query.awaitTermination(timeout)
    except Exception:  # noqa: BLE001 - awaitTermination raises the query's error: it is checked below
        pass
    finally:
        query.stop()
    assert query.exception() is not None, "the query ended without an error"
    return str(query.exception())


def _available_now_failure(df, batch) -> str:
    query = df.writeStream.foreachBatch(batch).trigger(availableNow=True)
    return _failure(query.option("checkpointLocation", tempfile.mkdtemp()).start())


def test_available_now_fails_when_partitions_of_its_target_are_lost(spark, bootstrap, new_topic):
    topic = new_topic(5)
    produce(bootstrap, topic, [f"foo-{i}" for i in range(15)], partition=0)
    df = stream(
        spark,
        bootstrap,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger=5,
        failOnDataLoss="true",  # fails regardless
        **{"kafka__metadata__max__age__ms": 500},
    )
    message = _available_now_failure(df, _recreating_batch(bootstrap, topic, 3, [f"foo-{i}" for i in range(15)]))
    assert (
        "Some of partitions in Kafka topic(s) have been lost during running query with Trigger.AvailableNow." in message
    )
    assert "topic-partitions for latest offset: " in message and "topic-partitions for end offset: " in message


def test_available_now_fails_when_offsets_of_its_target_are_lost(spark, bootstrap, new_topic):
    topic = new_topic(5)
    produce(bootstrap, topic, [f"foo-{i}" for i in range(15)], partition=0)
    df = stream(
        spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger=5, failOnDataLoss="true"
    )
    message = _available_now_failure(df, _recreating_batch(bootstrap, topic, 5, [f"foo-{i}" for i in range(10)]))
    assert (
        "Some of partitions in Kafka topic(s) report available offset which is less than end offset during running "
        "query with Trigger.AvailableNow." in message
    )
    assert "latest offset: " in message and "end offset: " in message


def test_spark_53560_a_rerun_uncommitted_batch_after_new_partitions_fails_only_on_its_own_error(
    spark, bootstrap, new_topic
):
    topic = new_topic(1)
    produce(bootstrap, topic, [str(i) for i in range(1, 8)], partition=0)

    def fail_on_7(x):
        if x == 7:
            raise RuntimeError("error for 7")
        return x

    udf = F.udf(fail_on_7, IntegerType())
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
    df = df.select(udf(F.expr("CAST(CAST(value AS STRING) AS INT)")).alias("value"))
    checkpoint = tempfile.mkdtemp()

    def run():
        query = df.writeStream.format("noop").trigger(availableNow=True).option("checkpointLocation", checkpoint)
        return _failure(query.start(), 120)

    assert "error for 7" in run()
    with AdminClient(bootstrap) as admin:
        admin.create_partitions({topic: 2})
    again = run()  # the re-run of batch 0 passes planning and fails on its own record again
    assert "error for 7" in again and "pre-fetched offset" not in again, again[:3000]


def test_a_stream_on_a_topic_that_does_not_exist_fails_naming_it_as_spark_does(spark, bootstrap, new_topic):
    missing = f"{new_topic(1)}-missing"
    df = stream(spark, bootstrap, subscribe=missing, **{"fetchOffset__retryIntervalMs": 200})
    with pytest.raises(Exception, match=rf"Topic\(s\) '{missing}' given in option 'subscribe' do not exist"):
        run_available_now(df, Collector(), timeout=60)
    query = (
        stream(spark, bootstrap, assign=json.dumps({missing: [0]}), **{"fetchOffset__retryIntervalMs": 200})
        .writeStream.format("noop")
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )
    assert f"Topic(s) '{missing}' given in option 'assign' do not exist" in _failure(query, 60)


def test_ending_options_in_a_stream_answer_as_spark(spark, bootstrap, new_topic):
    topic = new_topic(1)
    with pytest.raises(Exception, match="ending timestamp not valid in streaming queries"):
        run_available_now(
            stream(spark, bootstrap, subscribe=topic, endingOffsetsByTimestamp=json.dumps({topic: {"0": 1}}))
        )
    produce(bootstrap, topic, ["a", "b"])
    collector = Collector()
    run_available_now(
        stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", endingTimestamp=1), collector
    )
    assert sorted(v for _, _, v in collector.rows()) == ["a", "b"]  # ignored, as Spark ignores it in a stream


def test_async_progress_tracking_with_the_kafkalog_sink_as_with_sparks_kafka_sink(spark, bootstrap, new_topic):
    source, target = new_topic(5), new_topic(1)
    produce(bootstrap, source, [str(i) for i in range(15)], partition=0)
    checkpoint = tempfile.mkdtemp()
    query = (
        stream(spark, bootstrap, subscribe=source, startingOffsets="earliest", maxOffsetsPerTrigger=5)
        .selectExpr("value")
        .writeStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("checkpointLocation", checkpoint)
        .option("asyncProgressTrackingEnabled", "true")
        .option("asyncProgressTrackingCheckpointIntervalMs", "1000")
        .queryName("kafkaStream")
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    read = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", target)
    values = [r.value for r in read.load().selectExpr("CAST(value AS STRING) AS value").collect()]
    assert sorted(values, key=int) == [str(i) for i in range(15)]
    with pytest.raises(Exception, match="Async progress tracking cannot be used with AvailableNow trigger"):
        stream(spark, bootstrap, subscribe=source).writeStream.format("kafkalog").option(
            "kafka.bootstrap.servers", bootstrap
        ).option("topic", target).option("asyncProgressTrackingEnabled", "true").trigger(availableNow=True).option(
            "checkpointLocation", tempfile.mkdtemp()
        ).start()
    with pytest.raises(Exception, match="exactlyOnce cannot be used with asyncProgressTrackingEnabled"):
        q = (
            stream(spark, bootstrap, subscribe=source)
            .writeStream.format("kafkalog")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", target)
            .option("exactlyOnce", "true")
            .option("asyncProgressTrackingEnabled", "true")
            .option("checkpointLocation", tempfile.mkdtemp())
            .start()
        )
        try:
            q.processAllAvailable()
        finally:
            q.stop()
