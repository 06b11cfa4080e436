"""``format("kafkalog")`` through Spark (local[2]) against an embedded two-broker cluster.

One SparkSession and one cluster serve every test (see conftest); each test uses its own topics.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from datetime import UTC

import pytest
from chispa import assert_df_equality
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F
from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, LessThan

from spark_kafkalog.client import AdminClient, KafkaClient, Producer, TopicPartition
from spark_kafkalog.datasource.offsets import format_partition_offsets
from spark_kafkalog.datasource.options import KafkaOptionError, parse_source_options
from spark_kafkalog.datasource.planning import OffsetRange, split_ranges
from spark_kafkalog.datasource.scan import open_client, read_offset_range
from spark_kafkalog.datasource.source import KafkaLogPushdownReader, KafkaLogReader
from spark_kafkalog.records import Compression, default_partition, parse_batch_header
from tests.datasource.conftest import pushdown, reader
from tests.datasource.test_options import INVALID_SINK, INVALID_SOURCE

pytestmark = pytest.mark.integration

TP = TopicPartition


def produce(bootstrap, topic, records, **config):
    """Send ``(partition, key, value, timestamp_ms, headers)`` tuples and wait for all of them."""
    with Producer(bootstrap, linger_ms=2, **config) as producer:
        futures = [
            producer.send(topic, value, key, partition=p, timestamp_ms=ts, headers=headers)
            for p, key, value, ts, headers in records
        ]
        producer.flush()
    return [f.result() for f in futures]


def error_text(excinfo) -> str:
    return str(excinfo.value)


# -- round trip -------------------------------------------------------------------------------------------


def test_write_then_read_round_trip_keeps_keys_values_headers_partitions_and_offsets(spark, bootstrap, new_topic):
    topic = new_topic(3)
    rows = []
    for i in range(300):
        key = None if i % 10 == 0 else f"user-{i % 37}"
        value = None if i % 50 == 7 else f"payload-{i}".encode()
        partition = i % 3 if i % 4 == 0 else None
        headers = [("n", str(i).encode()), ("n", None)] if i % 3 == 0 else ([] if i % 3 == 1 else None)
        rows.append((key, value, partition, headers))
    df = spark.createDataFrame(
        rows, "key string, value binary, partition int, headers array<struct<key:string,value:binary>>"
    )
    before = time.time()
    (
        df.write.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("kafka.compression.type", "lz4")
        .option("kafka.acks", "all")
        .mode("append")
        .save()
    )
    after = time.time()

    read = reader(spark, bootstrap, subscribe=topic, includeHeaders="true").load()
    actual = read.select(F.col("key").cast("string").alias("key"), "value", "headers")
    expected = spark.createDataFrame(
        [(k, v, [{"key": hk, "value": hv} for hk, hv in h] if h else None) for k, v, _, h in rows],
        "key string, value binary, headers array<struct<key:string,value:binary>>",
    )
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)

    got = read.collect()
    by_partition = {}
    for row in got:
        by_partition.setdefault(row.partition, []).append(row.offset)
        assert row.topic == topic and row.timestampType == 0
        assert before - 1 <= row.timestamp.timestamp() <= after + 1
    assert {p: sorted(o) for p, o in by_partition.items()} == {p: list(range(len(o))) for p, o in by_partition.items()}
    placement = {(r.key, r.value): r.partition for r in got}
    for key, value, partition, _ in rows:
        if partition is not None:
            assert placement[(key.encode() if key else None, value)] == partition
        elif key is not None:  # murmur2, where a Java producer puts the key
            assert placement[(key.encode(), value)] == default_partition(key.encode(), 3)

    with KafkaClient(bootstrap) as client:  # kafka.compression.type reached the producer
        batch = next(iter(client.fetch_batches(TP(topic, 0), 0, 1))).batch
        assert parse_batch_header(batch.data).compression == Compression.LZ4


def test_records_from_kafka_python_and_confluent_kafka_are_read_exactly_once(spark, bootstrap, new_topic):
    topic = new_topic(3)
    script = textwrap.dedent(
        f"""
        import kafka, confluent_kafka
        p = kafka.KafkaProducer(bootstrap_servers={bootstrap!r}, compression_type="gzip", linger_ms=5)
        for i in range(400):
            p.send({topic!r}, key=b"kp-%d" % i, value=b"kafka-python %d" % i, headers=[("lib", b"kafka-python")])
        p.flush(); p.close()
        c = confluent_kafka.Producer({{"bootstrap.servers": {bootstrap!r}, "compression.type": "zstd", "linger.ms": 5}})
        for i in range(400):
            c.produce({topic!r}, key=b"ck-%d" % i, value=b"confluent %d" % i, headers=[("lib", b"confluent")])
        assert c.flush(30) == 0
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120, capture_output=True)
    rows = reader(spark, bootstrap, subscribe=topic, includeHeaders="true").load().collect()
    keys = sorted(r.key for r in rows)
    assert keys == sorted([b"kp-%d" % i for i in range(400)] + [b"ck-%d" % i for i in range(400)])
    assert len({(r.partition, r.offset) for r in rows}) == 800
    for r in rows:
        lib = "kafka-python" if r.key.startswith(b"kp-") else "confluent"
        assert r.headers == [(lib, lib.encode())] or [tuple(h) for h in r.headers] == [("lib", lib.encode())]
        assert r.value.split(b" ")[-1] == r.key.split(b"-")[-1]


# -- planning through Spark -------------------------------------------------------------------------------


def test_min_partitions_and_max_records_per_partition_split_like_spark(spark, bootstrap, new_topic):
    topic = new_topic(2)
    produce(
        bootstrap,
        topic,
        [(0, None, b"a%d" % i, None, None) for i in range(90)] + [(1, None, b"b%d" % i, None, None) for i in range(10)],
    )
    plain = reader(spark, bootstrap, subscribe=topic).load()
    assert plain.rdd.getNumPartitions() == 2
    split = reader(spark, bootstrap, subscribe=topic, minPartitions=5).load()
    expected = split_ranges([OffsetRange(topic, 0, 0, 90), OffsetRange(topic, 1, 0, 10)], min_partitions=5)
    assert split.rdd.getNumPartitions() == len(expected) == 5
    assert sorted(split.select("value").collect()) == sorted(plain.select("value").collect())
    capped = reader(spark, bootstrap, subscribe=topic, maxRecordsPerPartition=30).load()
    assert capped.rdd.getNumPartitions() == 4  # 90 -> 3 x 30, 10 -> 1
    assert capped.count() == 100


def test_starting_and_ending_offsets_and_timestamps_select_the_ranges(spark, bootstrap, new_topic):
    topic = new_topic(2)
    base = 1_700_000_000_000
    produce(bootstrap, topic, [(p, None, b"%d-%d" % (p, i), base + i * 1000, None) for p in (0, 1) for i in range(20)])

    def offsets(**options):
        rows = reader(spark, bootstrap, subscribe=topic, **options).load().select("partition", "offset").collect()
        return sorted((r.partition, r.offset) for r in rows)

    json_start = format_partition_offsets({TP(topic, 0): 5, TP(topic, 1): -2})
    json_end = format_partition_offsets({TP(topic, 0): 15, TP(topic, 1): -1})
    assert offsets(startingOffsets=json_start, endingOffsets=json_end) == [(0, o) for o in range(5, 15)] + [
        (1, o) for o in range(20)
    ]
    by_ts = format_partition_offsets({TP(topic, 0): base + 3500, TP(topic, 1): base})
    assert offsets(startingOffsetsByTimestamp=by_ts, endingTimestamp=base + 10_000) == [
        (0, o) for o in range(4, 10)
    ] + [(1, o) for o in range(10)]
    # startingTimestamp wins over startingOffsets (Spark's precedence)
    assert offsets(startingTimestamp=base + 18_000, startingOffsets="earliest") == [
        (p, o) for p in (0, 1) for o in (18, 19)
    ]
    with pytest.raises(AnalysisException) as info:
        offsets(startingTimestamp=base + 60_000)
    assert "No offset matched from request of topic-partition" in error_text(info)
    assert offsets(startingTimestamp=base + 60_000, startingOffsetsByTimestampStrategy="latest") == []


def test_fail_on_data_loss_after_retention_deleted_the_start_of_the_range(spark, bootstrap, new_topic):
    topic = new_topic(1)
    produce(bootstrap, topic, [(0, None, b"v%d" % i, None, None) for i in range(100)])
    with AdminClient(bootstrap) as admin:
        admin.delete_records({TP(topic, 0): 60})  # the log now starts at 60
    start = format_partition_offsets({TP(topic, 0): 10})
    with pytest.raises(Exception) as info:
        reader(spark, bootstrap, subscribe=topic, startingOffsets=start).load().collect()
    assert "Cannot fetch offset 10 of" in error_text(info) and "failOnDataLoss" in error_text(info)
    rows = reader(spark, bootstrap, subscribe=topic, startingOffsets=start, failOnDataLoss="false").load().collect()
    assert sorted(r.offset for r in rows) == list(range(60, 100))
    earliest = reader(spark, bootstrap, subscribe=topic).load().collect()
    assert sorted(r.offset for r in earliest) == list(range(60, 100))


def test_fail_on_data_loss_when_the_topic_was_recreated_shorter_after_planning(spark, bootstrap, new_topic):
    from spark_kafkalog.client import NewTopic

    topic = new_topic(1)
    produce(bootstrap, topic, [(0, None, b"old", None, None)] * 50)
    ending = f'{{"{topic}":{{"0":50}}}}'  # earliest..latest would bind to the new log (as in Spark)
    strict = reader(spark, bootstrap, subscribe=topic, endingOffsets=ending).load()
    lenient = reader(spark, bootstrap, subscribe=topic, endingOffsets=ending, failOnDataLoss="false").load()
    late = reader(spark, bootstrap, subscribe=topic).load()
    assert strict.count() == 50 and lenient.count() == 50 and late.count() == 50  # planned as [0, 50)
    with AdminClient(bootstrap) as admin:
        admin.delete_topics([topic])
        admin.create_topics([NewTopic(topic, 1, 1)])
    produce(bootstrap, topic, [(0, None, b"new", None, None)] * 10)
    with pytest.raises(Exception) as info:
        strict.collect()
    assert "the partition now ends at offset 10" in error_text(info) and "failOnDataLoss" in error_text(info)
    assert [r.value for r in lenient.collect()] == [b"new"] * 10
    assert [r.value for r in late.collect()] == [b"new"] * 10


def test_rerunning_an_action_on_the_same_dataframe_sees_new_records_as_sparks_late_binding(spark, bootstrap, new_topic):
    topic = new_topic(2)
    produce(bootstrap, topic, [(0, None, b"x", None, None)] * 5)
    df = reader(spark, bootstrap, subscribe=topic).load()
    assert df.count() == 5
    produce(bootstrap, topic, [(0, None, b"y", None, None)] * 3 + [(1, None, b"z", None, None)] * 2)
    assert df.count() == 10  # Spark 4.3 caches the plan per DataFrame; the tasks resolve earliest/latest
    split = reader(spark, bootstrap, subscribe=topic, maxRecordsPerPartition="3").load()
    assert split.count() == 10
    produce(bootstrap, topic, [(1, None, b"w", None, None)] * 4)
    assert split.count() == 14  # the last piece of each partition ends at "latest"
    fixed = reader(spark, bootstrap, subscribe=topic, endingOffsets=f'{{"{topic}":{{"0":8,"1":6}}}}').load()
    produce(bootstrap, topic, [(0, None, b"v", None, None)])
    assert fixed.count() == 14


# -- pushdown ----------------------------------------------------------------------------------------------


@pytest.fixture
def stamped_topic(bootstrap, new_topic):
    """3 partitions x 200 records of 1 KiB; record i of each partition has timestamp BASE + i seconds."""
    topic = new_topic(3)
    produce(
        bootstrap, topic, [(p, b"k%d" % i, bytes(1024), BASE + i * 1000, None) for p in range(3) for i in range(200)]
    )
    return topic


BASE = 1_600_000_000_000


def fetch_stats(reader_obj) -> dict:
    """Read every planned partition of ``reader_obj`` with one client; its fetch statistics."""
    rows = 0
    with open_client(reader_obj.options) as client:
        for part in reader_obj.partitions():
            for batch in read_offset_range(reader_obj.options, part.offset_range, client):
                rows += batch.num_rows
        return {"rows": rows, "bytes": client.stats["bytes_fetched"], "ranges": sorted(client.stats["ranges_fetched"])}


def test_pushdown_narrows_what_is_fetched(bootstrap, stamped_topic):
    from datetime import datetime

    topic = stamped_topic
    options = parse_source_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic})
    full = fetch_stats(KafkaLogReader(options))
    assert full["rows"] == 600 and len(full["ranges"]) == 3

    narrowed = KafkaLogPushdownReader(options)
    since = datetime.fromtimestamp((BASE + 150_000) / 1000, tz=UTC)
    remaining = narrowed.pushFilters(
        [
            EqualTo(("partition",), 1),
            GreaterThanOrEqual(("offset",), 100),
            LessThan(("offset",), 190),
            GreaterThanOrEqual(("timestamp",), since),
        ]
    )
    assert [type(f).__name__ for f in remaining] == ["GreaterThanOrEqual"]  # only the timestamp filter stays with Spark
    stats = fetch_stats(narrowed)
    assert stats["ranges"] == [(topic, 1, 150, 190)]
    assert stats["rows"] == 40
    assert stats["bytes"] < full["bytes"] / 10


def test_pushdown_through_spark_prunes_partitions_only_when_the_conf_is_on(spark, bootstrap, stamped_topic):
    topic = stamped_topic
    query = "partition = 2 AND offset >= 50 AND timestamp >= TIMESTAMP '2020-09-13 12:28:50'"  # BASE + 130 s
    expected = {(2, o) for o in range(130, 200)}
    with pushdown(spark, False):
        df = reader(spark, bootstrap, subscribe=topic).load().where(query)
        assert df.rdd.getNumPartitions() == 3
        assert {(r.partition, r.offset) for r in df.collect()} == expected
    with pushdown(spark, True):
        df = reader(spark, bootstrap, subscribe=topic).load().where(query)
        assert df.rdd.getNumPartitions() == 1
        assert {(r.partition, r.offset) for r in df.collect()} == expected
        none = reader(spark, bootstrap, subscribe=topic).load().where("offset > 5 AND offset < 3")
        assert none.count() == 0


# -- errors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, option, fragment", INVALID_SOURCE, ids=[f"{i}-{c[1]}" for i, c in enumerate(INVALID_SOURCE)]
)
def test_every_invalid_source_option_fails_the_query_at_planning(spark, options, option, fragment):
    r = spark.read.format("kafkalog")
    for key, value in options.items():
        r = r.option(key, value)
    with pytest.raises(AnalysisException) as info:
        r.load().collect()
    assert fragment in error_text(info) and option in error_text(info)


@pytest.mark.parametrize("options, option, fragment", INVALID_SINK, ids=[c[1] for c in INVALID_SINK])
def test_every_invalid_sink_option_fails_the_write_at_planning(spark, options, option, fragment):
    w = spark.createDataFrame([("v",)], "value string").write.format("kafkalog").mode("append")
    for key, value in options.items():
        w = w.option(key, value)
    if "topic" not in {k.lower() for k in options}:
        w = w.option("topic", "unused")
    with pytest.raises(AnalysisException) as info:
        w.save()
    assert fragment in error_text(info) and option in error_text(info)


@pytest.mark.parametrize(
    "columns, fragment",
    [
        ("key string", "Required attribute 'value' not found"),
        ("value int", "value attribute unsupported type int"),
        ("value string, key array<string>", "key attribute unsupported type array<string>"),
        ("value string, partition bigint", "partition attribute unsupported type bigint"),
        ("value string, headers map<string,binary>", "headers attribute unsupported type"),
    ],
)
def test_wrong_write_columns_fail_with_sparks_wording(spark, bootstrap, columns, fragment):
    df = spark.createDataFrame([], columns)
    with pytest.raises(AnalysisException) as info:
        df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", "t").mode(
            "append"
        ).save()
    assert fragment in error_text(info)


@pytest.mark.parametrize("mode", [None, "errorifexists", "error", "default", "append", "Append", "ErrorIfExists"])
def test_save_modes_sparks_kafka_sink_accepts_write(spark, bootstrap, new_topic, mode):
    topic = new_topic(1)
    df = spark.createDataFrame([("v1",), ("v2",)], "value string")
    w = df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
    if mode is not None:
        w = w.mode(mode)
    w.save()  # the default is ErrorIfExists, as for format("kafka"): a plain save() writes
    df.write.save(format="kafkalog", mode=mode, **{"kafka.bootstrap.servers": bootstrap, "topic": topic})
    read = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    assert sorted(r.value for r in read.load().selectExpr("CAST(value AS STRING) AS value").collect()) == [
        "v1", "v1", "v2", "v2"
    ]  # fmt: skip


@pytest.mark.parametrize(("mode", "name"), [("overwrite", "Overwrite"), ("ignore", "Ignore"), ("IGNORE", "Ignore")])
def test_overwrite_and_ignore_are_refused_with_sparks_kafka_message(spark, bootstrap, mode, name):
    df = spark.createDataFrame([("v",)], "value string")
    w = df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", "t")
    message = f"Save mode {name} not allowed for Kafka. Allowed save modes are Append and ErrorIfExists (default)"
    with pytest.raises(KafkaOptionError, match=re.escape(message)):
        w.mode(mode).save()
    with pytest.raises(KafkaOptionError, match=re.escape(message)):
        df.write.format("kafkalog").save(mode=mode)


def test_other_formats_keep_sparks_save_modes(spark, tmp_path):
    df = spark.createDataFrame([("v",)], "value string")
    df.write.format("json").save(str(tmp_path / "j"))
    with pytest.raises(AnalysisException, match="already exists"):  # ErrorIfExists, untouched
        df.write.format("json").save(str(tmp_path / "j"))
    df.write.format("json").mode("ignore").save(str(tmp_path / "j"))


def test_a_null_topic_fails_the_task_and_the_topic_option_overrides_the_column(spark, bootstrap, new_topic):
    topic, other = new_topic(1), new_topic(1)
    df = spark.createDataFrame([(other, "a"), (None, "b")], "topic string, value string")
    with pytest.raises(Exception) as info:
        df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).mode("append").save()
    assert "null topic present in the data" in error_text(info)
    df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).mode(
        "append"
    ).save()
    assert sorted(r.value for r in reader(spark, bootstrap, subscribe=topic).load().collect()) == [b"a", b"b"]


def test_a_record_the_cluster_refuses_fails_the_task(spark, bootstrap, new_topic):
    topic = new_topic(2)
    df = spark.createDataFrame([("v", 0), ("w", 5)], "value string, partition int")
    with pytest.raises(Exception) as info:
        df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).mode(
            "append"
        ).save()
    assert "partition 5" in error_text(info)


def test_a_dead_address_fails_reads_and_writes_within_seconds_naming_it(spark):
    from broker.processes import free_port

    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    df = spark.createDataFrame([("v",)], "value string")
    for action in (
        lambda: reader(spark, dead, subscribe="t").load().collect(),
        lambda: (
            df.write.format("kafkalog")
            .option("kafka.bootstrap.servers", dead)
            .option("topic", "t")
            .mode("append")
            .save()
        ),
    ):
        started = time.monotonic()
        with pytest.raises(Exception) as info:
            action()
        assert dead in error_text(info) and "connection refused" in error_text(info)
        assert time.monotonic() - started < 30  # was about 60 s of silence (a hang check, not a timing target)


def test_the_fixed_schema_cannot_be_replaced(spark, bootstrap):
    with pytest.raises(AnalysisException, match="fixed schema"):
        spark.read.format("kafkalog").schema("value string").option("kafka.bootstrap.servers", bootstrap).option(
            "subscribe", "t"
        ).load().collect()


# -- the batch job -----------------------------------------------------------------------------------------


def test_batch_etl_aggregates_the_input_topic_into_the_output_topic(spark, bootstrap, new_topic):
    import json

    from jobs.batch_etl import produce_orders, run_pipeline

    source, sink = new_topic(3), new_topic(2)
    totals = produce_orders(bootstrap, source, 3000, users=50, bad_every=100)
    summary = run_pipeline(spark, bootstrap, source, sink, read_options={"minPartitions": "4"})
    assert summary["records_read"] == 3000 and summary["records_rejected"] == 30
    assert summary["records_written"] == len(totals)
    out = reader(spark, bootstrap, subscribe=sink, includeHeaders="true").load().collect()
    assert len(out) == len(totals)
    for row in out:
        doc = json.loads(row.value)
        assert row.key.decode() == doc["user"]
        assert doc["revenue"] == pytest.approx(totals[doc["user"]], abs=0.01)
        assert dict((k, v) for k, v in row.headers)["pipeline"] == b"batch_etl"


def test_invalid_stream_options_reach_the_user_as_the_option_error_not_pysparks_unbound_local_error(spark, tmp_path):
    from pyspark.errors import StreamingQueryException

    df = spark.readStream.format("kafkalog").option("subscribe", "events").load()  # no bootstrap servers
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path)).start()
    try:
        with pytest.raises(StreamingQueryException) as excinfo:
            query.processAllAvailable()
    finally:
        query.stop()
    text = error_text(excinfo)
    assert "KafkaOptionError: Option 'kafka.bootstrap.servers' must be specified" in text
    assert "UnboundLocalError" not in text


def test_kafka_partitioner_class_may_name_an_importable_python_class(spark, bootstrap, new_topic):
    topic = new_topic(3)
    df = spark.createDataFrame([("same-key", f"v{i}") for i in range(30)], "key string, value string").coalesce(1)
    (
        df.write.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .option("kafka.partitioner.class", "spark_kafkalog.client.producer.partitioner:RoundRobinPartitioner")
        .mode("append")
        .save()
    )
    counts = reader(spark, bootstrap, subscribe=topic).load().groupBy("partition").count().collect()
    assert sorted(r["count"] for r in counts) == [10, 10, 10]  # one key everywhere: round robin, not murmur2
    bad = df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
    with pytest.raises(AnalysisException) as info:
        bad.option("kafka.partitioner.class", "no_such_module:Partitioner").mode("append").save()
    assert "kafka.partitioner.class" in error_text(info) and "no_such_module:Partitioner" in error_text(info)
