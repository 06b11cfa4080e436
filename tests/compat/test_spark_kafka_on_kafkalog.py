"""Spark's own JVM connector, ``format("kafka")`` (spark-sql-kafka-0-10 4.2.0 on pyspark 4.3.0), reading and
writing batches against a kafkalog broker.

The connector's jars that pyspark lacks (the connector, its token provider, kafka-clients 3.9.2 and
commons-pool2) go into a local SparkSession's ``spark.jars``; the peer folder's other jars (scala-library,
spark-tags, lz4, snappy, slf4j) are older copies of what pyspark ships and are left out.
"""

from __future__ import annotations

import json
import time

import pytest

from spark_kafkalog.client import Consumer, Producer, TopicPartition

from .conftest import new_topic
from .peers import SPARK_AVRO, SPARK_KAFKA, classpath

pytestmark = pytest.mark.compat

CONNECTOR_JARS = ("spark-sql-kafka-0-10_", "spark-token-provider-kafka-0-10_", "kafka-clients-", "commons-pool2-")


@pytest.fixture(scope="module")
def spark():
    """A local[2] SparkSession with Spark's Kafka connector on its classpath (stopped after the module)."""
    import os
    import sys

    from pyspark.sql import SparkSession

    classpath(SPARK_KAFKA)  # names `make peers` when the folder is missing
    jars = sorted(str(p) for p in SPARK_KAFKA.dir.glob("*.jar") if p.name.startswith(CONNECTOR_JARS))
    assert len(jars) == len(CONNECTOR_JARS), jars
    # the first SparkSession of the process fixes the driver's classpath: spark-avro for test_spark_avro_parity
    jars += sorted(str(p) for p in SPARK_AVRO.dir.glob("spark-avro_*.jar"))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafkalog-compat-spark-kafka")
        .config("spark.jars", ",".join(jars))
        .config("spark.driver.memory", "512m")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_kafka_batch_read_of_kafkalog_records(spark, kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    base = int(time.time() * 1000) - 3_600_000  # an hour old: inside the default 7-day retention
    expected = []
    with Producer(bootstrap, compression_type="lz4") as producer:
        sent = []
        for i in range(30):
            headers = [("n", b"%d" % i), ("tag", b"x")]
            sent.append(
                producer.send(
                    topic, b"v%d" % i, key=b"k%d" % i, partition=i % 3, headers=headers, timestamp_ms=base + i
                )
            )
        producer.flush(30)
        for i, f in enumerate(sent):
            m = f.result(30)
            expected.append(
                (topic, m.partition, m.offset, f"k{i}", f"v{i}", base + i, 0, [("n", f"{i}"), ("tag", "x")])
            )

    df = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
    )
    rows = df.selectExpr(
        "topic", "partition", "offset", "CAST(key AS STRING) k", "CAST(value AS STRING) v",
        "unix_millis(timestamp) ts", "timestampType", "headers",
    ).collect()  # fmt: skip
    got = [
        (
            r.topic,
            r.partition,
            r.offset,
            r.k,
            r.v,
            r.ts,
            r.timestampType,
            [(h.key, h.value.decode()) for h in r.headers],
        )
        for r in rows
    ]
    assert sorted(got) == sorted(expected)

    # offset ranges by JSON: partition 0 from offset 2 to 5 (exclusive), partition 1 earliest to latest
    ranged = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("assign", json.dumps({topic: [0, 1]}))
        .option("startingOffsets", json.dumps({topic: {"0": 2, "1": -2}}))
        .option("endingOffsets", json.dumps({topic: {"0": 5, "1": -1}}))
        .load()
        .selectExpr("partition", "offset", "CAST(value AS STRING) v")
        .collect()
    )
    assert sorted((r.partition, r.offset, r.v) for r in ranged) == sorted(
        [(0, o, f"v{o * 3}") for o in range(2, 5)] + [(1, o, f"v{o * 3 + 1}") for o in range(10)]
    )


def test_spark_kafka_batch_read_committed_skips_an_aborted_kafkalog_transaction(spark, kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 1)
    with Producer(bootstrap, transactional_id=f"spark-{topic}") as producer:
        producer.init_transactions()
        for outcome in ("committed-a", "aborted", "committed-b"):
            producer.begin_transaction()
            for i in range(3):
                producer.send(topic, f"{outcome}-{i}".encode())
            producer.flush(30)  # on the broker before the abort, as a transaction that failed late
            if outcome == "aborted":
                producer.abort_transaction(30)
            else:
                producer.commit_transaction(30)

    def read(isolation: str) -> list[tuple[int, str]]:
        df = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("kafka.isolation.level", isolation)
            .load()
        )
        return sorted((r.offset, r.v) for r in df.selectExpr("offset", "CAST(value AS STRING) v").collect())

    # offsets: 0-2 committed-a, 3 marker, 4-6 aborted, 7 marker, 8-10 committed-b, 11 marker
    committed_a = [(i, f"committed-a-{i}") for i in range(3)]
    committed_b = [(8 + i, f"committed-b-{i}") for i in range(3)]
    assert read("read_committed") == committed_a + committed_b
    assert read("read_uncommitted") == committed_a + [(4 + i, f"aborted-{i}") for i in range(3)] + committed_b


def test_spark_kafka_batch_write_read_back_by_kafkalog(spark, kafkalog):
    from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructField, StructType

    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    schema = StructType(
        [
            StructField("key", StringType()),
            StructField("value", StringType()),
            StructField("partition", IntegerType()),
            StructField(
                "headers",
                ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())])),
            ),
        ]
    )
    data = [(f"wk{i}", f"wv{i}", i % 2, [("i", b"%d" % i)]) for i in range(20)]
    # one Spark partition: the connector's producer sends the rows in order, so offsets follow the rows
    spark.createDataFrame(data, schema).coalesce(1).write.format("kafka").option(
        "kafka.bootstrap.servers", bootstrap
    ).option("topic", topic).save()

    tps = [TopicPartition(topic, p) for p in range(2)]
    records = []
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100) as consumer:
        consumer.assign(tps)
        deadline = time.monotonic() + 60
        while len(records) < 20 and time.monotonic() < deadline:
            records.extend(consumer.poll(200))
    got = sorted((r.partition, r.offset, r.key, r.value, list(r.headers)) for r in records)
    assert got == sorted((i % 2, i // 2, f"wk{i}".encode(), f"wv{i}".encode(), [("i", b"%d" % i)]) for i in range(20))


def test_spark_kafka_micro_batch_stream_resumes_from_its_checkpoint(spark, kafkalog, tmp_path):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)

    def produce(start: int, stop: int) -> None:
        with Producer(bootstrap) as producer:
            for i in range(start, stop):
                producer.send(topic, b"s%d" % i, partition=i % 2)
            producer.flush(30)

    def run_once() -> None:
        stream = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .selectExpr("partition", "offset", "CAST(value AS STRING) v")
        )
        query = (
            stream.writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        assert query.exception() is None

    def written() -> list[tuple[int, int, str]]:
        rows = spark.read.parquet(str(tmp_path / "out")).collect()
        return sorted((r.partition, r.offset, r.v) for r in rows)

    def expected(n: int) -> list[tuple[int, int, str]]:
        return sorted((i % 2, i // 2, f"s{i}") for i in range(n))

    produce(0, 10)
    run_once()
    assert written() == expected(10)
    produce(10, 25)
    run_once()  # a new query on the same checkpoint: only the 15 new records, each once
    assert written() == expected(25)


def test_spark_kafka_stream_copies_one_kafkalog_topic_into_another(spark, kafkalog, tmp_path):
    bootstrap = kafkalog.bootstrap_servers
    source, sink = new_topic(bootstrap, 2), new_topic(bootstrap, 1)
    with Producer(bootstrap) as producer:
        for i in range(12):
            producer.send(source, b"c%d" % i, key=b"k%d" % i, partition=i % 2)
        producer.flush(30)
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "CONCAT(CAST(value AS STRING), '@', partition, ':', offset) AS value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None

    records = []
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100) as consumer:
        consumer.assign([TopicPartition(sink, 0)])
        deadline = time.monotonic() + 60
        while len(records) < 12 and time.monotonic() < deadline:
            records.extend(consumer.poll(200))
    assert sorted(r.offset for r in records) == list(range(12))
    assert sorted((r.key, r.value) for r in records) == sorted(
        (b"k%d" % i, b"c%d@%d:%d" % (i, i % 2, i // 2)) for i in range(12)
    )
