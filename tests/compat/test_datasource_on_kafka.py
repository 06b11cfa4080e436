"""The PySpark data source ``format("kafkalog")`` against Apache Kafka 3.9 (ZooKeeper mode) and 4.4 (KRaft):
batch read and write, readStream/writeStream with a checkpoint restart, the ``exactlyOnce`` sink and
``commitOffsetsToGroup``, each checked through kafkalog's clients against the same Kafka broker."""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid

import pytest

from spark_kafkalog.client import AdminClient, Consumer, Producer, TopicPartition
from tests.datasource.conftest import reader
from tests.waiting import wait_until

from .conftest import new_topic
from .peers import SPARK_AVRO, SPARK_KAFKA
from .test_spark_kafka_on_kafkalog import CONNECTOR_JARS

pytestmark = pytest.mark.compat

BASE_TS = int(time.time() * 1000) - 3_600_000  # an hour old: inside Kafka's 7-day retention


@pytest.fixture(scope="module")
def spark():
    """A local[2] SparkSession with kafkalog registered (small driver memory; stopped after the module)."""
    from spark_kafkalog.datasource import kafkalog_session

    # the first SparkSession of the process launches the JVM and fixes the driver's classpath: Spark's Kafka
    # connector jars go on it here too, for test_spark_kafka_on_kafkalog's session later in the same run
    jars = sorted(str(p) for p in SPARK_KAFKA.dir.glob("*.jar") if p.name.startswith(CONNECTOR_JARS))
    jars += sorted(str(p) for p in SPARK_AVRO.dir.glob("spark-avro_*.jar"))  # and test_spark_avro_parity's
    session = kafkalog_session(
        "local[2]",
        "kafkalog-compat-datasource",
        conf={
            "spark.jars": ",".join(jars),
            "spark.driver.memory": "512m",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.session.timeZone": "UTC",
            "spark.python.worker.reuse": "true",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def produce(bootstrap: str, topic: str, n: int, partitions: int, *, start: int = 0, **config) -> list:
    """``n`` records round-robin over ``partitions``: key k<i>, value v<i>, timestamp BASE_TS + i, a header."""
    with Producer(bootstrap, linger_ms=5, **config) as producer:
        futures = [
            producer.send(
                topic,
                b"v%d" % i,
                key=b"k%d" % i,
                partition=i % partitions,
                timestamp_ms=BASE_TS + i,
                headers=[("seq", b"%d" % i), ("empty", None)] if i % 3 else None,
            )
            for i in range(start, start + n)
        ]
        producer.flush(60)
        return [f.result(30) for f in futures]


def read_back(bootstrap: str, topic: str, partitions: int, expected: int, **config) -> list:
    """Every record of ``topic`` by assignment from the beginning once ``expected`` arrived (and a last poll)."""
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100, **config) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        records: list = []
        wait_until(lambda: records.extend(consumer.poll(200)) or len(records) >= expected, 60, f"{expected} records")
        records.extend(consumer.poll(500))  # a duplicate would show here
        return records


def test_batch_read_every_column_headers_offsets_by_json_and_by_timestamp(spark, kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    sent = produce(bootstrap, topic, 60, 3, compression_type="lz4")
    rows = reader(spark, bootstrap, subscribe=topic, includeHeaders="true").load().collect()
    assert len(rows) == 60
    by_value = {r.value: r for r in rows}
    for i, meta in enumerate(sent):
        r = by_value[b"v%d" % i]
        assert (r.key, r.topic, r.partition, r.offset) == (b"k%d" % i, topic, meta.partition, meta.offset)
        assert int(r.timestamp.timestamp() * 1000) == BASE_TS + i and r.timestampType == 0
        expected_headers = [("seq", b"%d" % i), ("empty", None)] if i % 3 else None
        assert (None if r.headers is None else [(h.key, h.value) for h in r.headers]) == expected_headers

    # offsets by JSON: [5, 12) of partition 1, earliest to latest of partition 2 (-2 and -1 as in Spark)
    ranged = reader(
        spark,
        bootstrap,
        assign=json.dumps({topic: [1, 2]}),
        startingOffsets=json.dumps({topic: {"1": 5, "2": -2}}),
        endingOffsets=json.dumps({topic: {"1": 12, "2": -1}}),
    ).load()
    got = sorted((r.partition, r.offset, r.value) for r in ranged.collect())
    expected = sorted(
        (m.partition, m.offset, b"v%d" % i)
        for i, m in enumerate(sent)
        if (m.partition == 1 and 5 <= m.offset < 12) or m.partition == 2
    )
    assert got == expected and len(got) == 7 + 20

    # by timestamp: partition 0 holds BASE_TS + 0, 3, 6, ...; partition 1 BASE_TS + 1, 4, ...
    by_time = reader(
        spark,
        bootstrap,
        subscribe=topic,
        startingOffsetsByTimestamp=json.dumps({topic: {"0": BASE_TS + 30, "1": BASE_TS + 31, "2": BASE_TS + 32}}),
        endingOffsetsByTimestamp=json.dumps({topic: {"0": BASE_TS + 45, "1": BASE_TS + 46, "2": BASE_TS + 47}}),
    ).load()
    assert sorted(int(r.value[1:]) for r in by_time.collect()) == list(range(30, 45))
    from_ts = reader(spark, bootstrap, subscribe=topic, startingTimestamp=str(BASE_TS + 50)).load()
    assert sorted(int(r.value[1:]) for r in from_ts.collect()) == list(range(50, 60))


def test_batch_write_read_back_by_kafkalog_consumer(spark, kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    data = [(f"k{i}", f"w{i}", i % 2, [("h", f"{i}".encode())]) for i in range(40)]
    df = spark.createDataFrame(
        data, "key string, value string, partition int, headers array<struct<key:string,value:binary>>"
    )
    df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).option(
        "kafka.compression.type", "gzip"
    ).mode("append").save()
    records = read_back(bootstrap, topic, 2, 40)
    assert len(records) == 40
    assert sorted((r.partition, r.key, r.value, tuple(r.headers)) for r in records) == sorted(
        (i % 2, b"k%d" % i, b"w%d" % i, (("h", b"%d" % i),)) for i in range(40)
    )
    for p in (0, 1):
        assert sorted(r.offset for r in records if r.partition == p) == list(range(20))
    # and the data source reads it back too
    again = reader(spark, bootstrap, subscribe=topic).load().selectExpr("CAST(value AS STRING) AS v").collect()
    assert sorted(r.v for r in again) == sorted(f"w{i}" for i in range(40))


class Collector:
    """``foreachBatch``: each micro-batch's values by batch id (a re-run batch replaces its earlier run)."""

    def __init__(self) -> None:
        self.batches: dict[int, list[bytes]] = {}
        self.lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        values = [r.value for r in df.select("value").collect()]
        with self.lock:
            self.batches[batch_id] = values

    def values(self) -> list[bytes]:
        with self.lock:
            return [v for _, vs in sorted(self.batches.items()) for v in vs]


def stream(spark, bootstrap: str, **options):
    r = spark.readStream.format("kafkalog").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        r = r.option(key, str(value))
    return r.load()


def test_read_stream_stopped_and_restarted_from_its_checkpoint_sees_every_record_once(spark, kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    produce(bootstrap, topic, 100, 2)
    checkpoint = tempfile.mkdtemp()
    collector = Collector()
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger=20)
    query = (
        df.writeStream.foreachBatch(collector)
        .trigger(processingTime="100 milliseconds")
        .option("checkpointLocation", checkpoint)
        .start()
    )
    try:
        wait_until(lambda: len(collector.batches) >= 2, 90, "two micro-batches")
    finally:
        query.stop()
    assert 0 < len(collector.values()) < 100
    produce(bootstrap, topic, 50, 2, start=100)
    query = df.writeStream.foreachBatch(collector).option("checkpointLocation", checkpoint).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    values = collector.values()
    assert sorted(values) == sorted(b"v%d" % i for i in range(150)) and len(values) == 150


def copy_available_now(spark, bootstrap: str, source: str, sink: str, checkpoint: str, **sink_options) -> None:
    """readStream ``source`` -> writeStream into ``sink`` (key, value, headers) with AvailableNow, to its end."""
    writer = (
        stream(
            spark,
            bootstrap,
            subscribe=source,
            startingOffsets="earliest",
            maxOffsetsPerTrigger=25,
            includeHeaders="true",
        )
        .selectExpr("key", "value", "headers")
        .writeStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
    )
    for key, value in sink_options.items():
        writer = writer.option(key, value)
    query = writer.trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(180), "the AvailableNow query did not finish"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()


def test_write_stream_into_a_kafka_topic_restarted_from_its_checkpoint_writes_every_record_once(spark, kafka):
    bootstrap = kafka.bootstrap_servers
    source, sink = new_topic(bootstrap, 2), new_topic(bootstrap, 3)
    produce(bootstrap, source, 60, 2)
    checkpoint = tempfile.mkdtemp()
    copy_available_now(spark, bootstrap, source, sink, checkpoint)
    produce(bootstrap, source, 40, 2, start=60)
    copy_available_now(spark, bootstrap, source, sink, checkpoint)  # the restart: only the 40 new records
    records = read_back(bootstrap, sink, 3, 100)
    assert sorted((r.key, r.value) for r in records) == sorted((b"k%d" % i, b"v%d" % i) for i in range(100))
    assert len(records) == 100
    with_headers = {r.value: list(r.headers) for r in records}
    assert with_headers[b"v4"] == [("seq", b"4"), ("empty", None)] and with_headers[b"v3"] == []


def test_exactly_once_sink_commits_each_batch_in_kafka_transactions(spark, kafka):
    bootstrap = kafka.bootstrap_servers
    source, sink = new_topic(bootstrap, 2), new_topic(bootstrap, 2)
    produce(bootstrap, source, 50, 2)
    checkpoint = tempfile.mkdtemp()
    copy_available_now(spark, bootstrap, source, sink, checkpoint, exactlyOnce="true")
    produce(bootstrap, source, 30, 2, start=50)
    copy_available_now(spark, bootstrap, source, sink, checkpoint, exactlyOnce="true")
    committed = read_back(bootstrap, sink, 2, 80, isolation_level="read_committed")
    assert sorted(r.value for r in committed) == sorted(b"v%d" % i for i in range(80)) and len(committed) == 80
    # written in transactions: each partition's end is past commit markers, so above its record count
    from spark_kafkalog.client import KafkaClient, OffsetSpec

    with KafkaClient(bootstrap) as client:
        ends = client.list_offsets({TopicPartition(sink, p): OffsetSpec.LATEST for p in range(2)})
    assert sum(ends.values()) > 80
    # the kafkalog source as a read_committed reader of the sink: the same rows
    rows = reader(spark, bootstrap, subscribe=sink, kafka__isolation__level="read_committed").load().collect()
    assert sorted(r.value for r in rows) == sorted(b"v%d" % i for i in range(80))


def test_commit_offsets_to_group_visible_through_kafka(spark, kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    group = f"spark-{uuid.uuid4().hex[:8]}"
    produce(bootstrap, topic, 60, 2)
    df = stream(
        spark,
        bootstrap,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger=20,
        commitOffsetsToGroup=group,
    )
    query = (
        df.writeStream.foreachBatch(Collector())
        .trigger(availableNow=True)
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )
    try:
        assert query.awaitTermination(180)
    finally:
        query.stop()
    assert query.exception() is None
    with AdminClient(bootstrap) as admin:
        offsets = wait_until(
            lambda: (o := admin.list_group_offsets(group)) and sum(v.offset for v in o.values()) == 60 and o,
            30,
            "the query's commits",
        )
        assert {tp: o.offset for tp, o in offsets.items()} == {
            TopicPartition(topic, 0): 30,
            TopicPartition(topic, 1): 30,
        }
        assert group in {g.group_id for g in admin.list_groups()}
        assert not admin.describe_groups([group])[group].members  # committed without joining
