"""``readStream`` / ``writeStream`` with ``format("kafkalog")`` through Spark (local[2]) against the embedded
two-broker cluster of conftest. Bounded runs use ``Trigger.AvailableNow``; continuous ones a 100 ms
processing-time trigger and ``processAllAvailable``."""

from __future__ import annotations

import datetime
import json
import os
import re
import tempfile
import threading
import time

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.datasource.topic_ids import kafka_topic_id
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

TP = TopicPartition


def produce(bootstrap, topic, values, *, partition=None, timestamps=None, linger_ms=2) -> None:
    with Producer(bootstrap, linger_ms=linger_ms) as producer:
        futures = [
            producer.send(
                topic,
                v if isinstance(v, bytes) else str(v).encode(),
                None,
                partition=partition if not callable(partition) else partition(i),
                timestamp_ms=None if timestamps is None else timestamps[i],
            )
            for i, v in enumerate(values)
        ]
        producer.flush()
    for f in futures:
        f.result()


def stream(spark, bootstrap, **options):
    r = spark.readStream.format("kafkalog").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        r = r.option(key.replace("__", "."), str(value))
    return r.load()


def sink_name(topic: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "_", topic)


class Collector:
    """A ``foreachBatch`` function keeping each micro-batch's ``(partition, offset, value)`` rows by batch id
    (a re-run batch replaces its earlier run, as an idempotent sink would)."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple[int, int, str]]] = {}
        self.lock = threading.Lock()

    def __call__(self, df, batch_id: int) -> None:
        rows = [
            (r.partition, r.offset, r.value)
            for r in df.selectExpr("partition", "offset", "CAST(value AS STRING) AS value").collect()
        ]
        with self.lock:
            self.batches[batch_id] = rows

    def rows(self) -> list[tuple[int, int, str]]:
        with self.lock:
            return [row for _, rows in sorted(self.batches.items()) for row in rows]

    def sizes(self) -> list[int]:
        with self.lock:
            return [len(rows) for _, rows in sorted(self.batches.items()) if rows]


def run_available_now(df, collector: Collector | None = None, checkpoint: str | None = None, timeout: float = 120):
    """Run ``df`` with ``Trigger.AvailableNow`` to its end; returns the query (terminated)."""
    writer = df.writeStream.foreachBatch(collector or Collector()).trigger(availableNow=True)
    query = writer.option("checkpointLocation", checkpoint or tempfile.mkdtemp()).start()
    try:
        assert query.awaitTermination(timeout), "AvailableNow query did not finish"
    finally:
        query.stop()
    if query.exception() is not None:
        raise query.exception()
    return query


def input_rows(query) -> list[int]:
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def trigger_time(progress) -> float:
    """Seconds since the epoch at which the trigger of a ``StreamingQueryProgress`` started."""
    return datetime.datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()


def batch_of(query, rows: int):
    """The progress of the first micro-batch of ``query`` that read ``rows`` records, or None."""
    return next((p for p in query.recentProgress if p["numInputRows"] == rows), None)


# -- starting positions -----------------------------------------------------------------------------------


def test_earliest_start_reads_every_record_and_offsets_are_sparks_json(spark, bootstrap, new_topic):
    topic = new_topic(2)
    produce(bootstrap, topic, range(40), partition=lambda i: i % 2)
    collector = Collector()
    checkpoint = tempfile.mkdtemp()
    query = run_available_now(
        stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest"), collector, checkpoint
    )
    assert sorted(collector.rows()) == sorted((i % 2, i // 2, str(i)) for i in range(40))
    assert query.lastProgress["sources"][0]["latestOffset"] == f'{{"{topic}": {{"0": 20, "1": 20}}}}'
    with AdminClient(bootstrap) as admin:
        described = admin.describe_topics([topic])[topic].topic_id
    assert described is not None
    topic_id = kafka_topic_id(described)
    with open(f"{checkpoint}/offsets/0") as f:  # Spark's entries, then the topic's id as a topic with no partition
        assert f.read().splitlines()[-1] == f'{{"{topic}": {{"0": 20, "1": 20}}, "@topicId:{topic}:{topic_id}": {{}}}}'


def test_latest_start_reads_only_records_produced_after_the_query_started(spark, bootstrap, new_topic):
    topic = new_topic(2)
    produce(bootstrap, topic, ["old"] * 10)
    name = sink_name(topic)
    query = (
        stream(spark, bootstrap, subscribe=topic)
        .selectExpr("CAST(value AS STRING) AS value")
        .writeStream.format("memory")
        .queryName(name)
        .trigger(processingTime="100 milliseconds")
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )
    try:
        query.processAllAvailable()
        produce(bootstrap, topic, [f"new-{i}" for i in range(15)])
        query.processAllAvailable()
        values = sorted(r.value for r in spark.sql(f"SELECT value FROM {name}").collect())
    finally:
        query.stop()
    assert values == sorted(f"new-{i}" for i in range(15))


def test_starting_timestamp_and_offsets_by_timestamp_start_at_the_first_later_record(spark, bootstrap, new_topic):
    topic = new_topic(1)
    produce(bootstrap, topic, range(10), partition=0, timestamps=[1_000_000 + 1000 * i for i in range(10)])
    collector = Collector()
    run_available_now(stream(spark, bootstrap, subscribe=topic, startingTimestamp=1_006_500), collector)
    assert [o for _, o, _ in collector.rows()] == [7, 8, 9]
    collector = Collector()
    run_available_now(
        stream(spark, bootstrap, subscribe=topic, startingOffsetsByTimestamp=f'{{"{topic}":{{"0":1003000}}}}'),
        collector,
    )
    assert [o for _, o, _ in collector.rows()] == [3, 4, 5, 6, 7, 8, 9]


# -- admission control ------------------------------------------------------------------------------------


def test_max_offsets_per_trigger_is_prorated_over_partitions_as_spark_does(spark, bootstrap, new_topic):
    topic = new_topic(2)
    produce(bootstrap, topic, range(62), partition=0)
    produce(bootstrap, topic, range(38), partition=1)
    collector = Collector()
    query = run_available_now(
        stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger=30), collector
    )
    # 30 * 62/100 = 18.6 -> 18 and 30 * 38/100 = 11.4 -> 11 per batch until the backlog ends
    assert collector.sizes() == [29, 29, 29, 13]
    assert input_rows(query) == [29, 29, 29, 13]
    assert len(collector.rows()) == len(set(collector.rows())) == 100


def test_available_now_honours_limits_stops_and_reads_nothing_after_its_snapshot(spark, bootstrap, new_topic):
    topic = new_topic(1)
    produce(bootstrap, topic, range(100), partition=0)

    class ProduceDuringFirstBatch(Collector):
        def __call__(self, df, batch_id):
            super().__call__(df, batch_id)
            if batch_id == 0:
                produce(bootstrap, topic, ["late"] * 20, partition=0)

    collector = ProduceDuringFirstBatch()
    query = run_available_now(
        stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger=30), collector
    )
    assert collector.sizes() == [30, 30, 30, 10]
    assert "late" not in {v for _, _, v in collector.rows()}
    assert not query.isActive


def test_min_offsets_per_trigger_waits_for_enough_records_or_max_trigger_delay(spark, bootstrap, new_topic):
    # Times are the triggers' own start times from Spark's progress (the same wall clock as the reader's
    # maxTriggerDelay), so a slow test thread or a slow batch on a loaded machine cannot decide the outcome.
    delay = 10
    topic = new_topic(1)
    collector = Collector()
    query = (
        stream(spark, bootstrap, subscribe=topic, minOffsetsPerTrigger=50, maxTriggerDelay=f"{delay}s")
        .writeStream.foreachBatch(collector)
        .trigger(processingTime="100 milliseconds")
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )
    try:
        wait_until(lambda: query.lastProgress is not None, 60, "the first trigger")
        first = trigger_time(query.recentProgress[0])  # the first trigger fires: maxTriggerDelay counts from it
        produce(bootstrap, topic, range(10), partition=0)
        produced = time.time()
        wait_until(lambda: batch_of(query, 10) is not None, delay + 60, "the delayed batch")
        delayed = trigger_time(batch_of(query, 10))
        # 10 < 50: the triggers in between declined the records until maxTriggerDelay had passed
        assert delayed - produced >= 2
        assert delayed - first >= delay - 1
        produce(bootstrap, topic, range(60), partition=0, linger_ms=60_000)  # one record batch: all 60 at once
        wait_until(lambda: batch_of(query, 60) is not None, 60, "the batch of 60")
        # a batch fired by the delay could not start before `delayed + delay`: this one fired because 60 >= 50
        assert trigger_time(batch_of(query, 60)) - delayed < delay - 1
        assert collector.sizes() == [10, 60]
    finally:
        query.stop()


def test_available_now_does_not_wait_for_min_offsets_per_trigger(spark, bootstrap, new_topic):
    topic = new_topic(1)
    produce(bootstrap, topic, range(5), partition=0)
    collector = Collector()
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", minOffsetsPerTrigger=100)
    run_available_now(df, collector, timeout=60)
    assert collector.sizes() == [5]


def test_max_bytes_per_trigger_bounds_each_batch_by_log_bytes(spark, bootstrap, new_topic):
    topic = new_topic(1)
    produce(bootstrap, topic, [b"x" * 1000] * 200, partition=0)
    collector = Collector()
    run_available_now(
        stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", maxBytesPerTrigger=50_000), collector
    )
    sizes = collector.sizes()
    assert sum(sizes) == 200
    assert len(sizes) >= 4
    assert max(sizes) <= 50  # each record takes more than 1000 bytes in the log


# -- partitions and data loss -----------------------------------------------------------------------------


def test_new_partitions_and_newly_matching_topics_start_at_earliest(spark, bootstrap, new_topic):
    topic = new_topic(1)
    other = f"{topic}-extra"
    collector = Collector()
    query = (
        stream(spark, bootstrap, subscribePattern=f"^{re.escape(topic)}")
        .writeStream.foreachBatch(collector)
        .trigger(processingTime="100 milliseconds")
        .option("checkpointLocation", tempfile.mkdtemp())
        .start()
    )
    try:
        query.processAllAvailable()
        with AdminClient(bootstrap) as admin:
            admin.create_partitions({topic: 3})
            from spark_kafkalog.client import NewTopic

            admin.create_topics([NewTopic(other, 1, 1, {})])
        produce(bootstrap, topic, ["p1"] * 5, partition=1)
        produce(bootstrap, topic, ["p2"] * 4, partition=2)
        produce(bootstrap, other, ["other"] * 3, partition=0)
        wait_until(lambda: len(collector.rows()) >= 12, 60, "records of the new partitions")
        query.processAllAvailable()
    finally:
        query.stop()
    values = sorted(v for _, _, v in collector.rows())
    assert values == ["other"] * 3 + ["p1"] * 5 + ["p2"] * 4


def _read_then_lose(spark, bootstrap, topic, checkpoint, lose) -> None:
    """First run reads all 50 records; then 50 more arrive and ``lose()`` removes some before the restart."""
    produce(bootstrap, topic, range(50), partition=0)
    run_available_now(stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest"), Collector(), checkpoint)
    produce(bootstrap, topic, range(50, 100), partition=0)
    lose()


def test_records_deleted_by_retention_fail_the_query_with_fail_on_data_loss(spark, bootstrap, new_topic):
    topic = new_topic(1)
    checkpoint = tempfile.mkdtemp()

    def delete():
        with AdminClient(bootstrap) as admin:
            admin.delete_records({TP(topic, 0): 80})

    _read_then_lose(spark, bootstrap, topic, checkpoint, delete)
    with pytest.raises(Exception, match="Some data may have been lost") as excinfo:
        run_available_now(stream(spark, bootstrap, subscribe=topic), Collector(), checkpoint)
    assert "offset 50" in str(excinfo.value)


def test_records_deleted_by_retention_are_skipped_without_fail_on_data_loss(spark, bootstrap, new_topic):
    topic = new_topic(1)
    checkpoint = tempfile.mkdtemp()

    def delete():
        with AdminClient(bootstrap) as admin:
            admin.delete_records({TP(topic, 0): 80})

    _read_then_lose(spark, bootstrap, topic, checkpoint, delete)
    collector = Collector()
    run_available_now(stream(spark, bootstrap, subscribe=topic, failOnDataLoss="false"), collector, checkpoint)
    assert [o for _, o, _ in collector.rows()] == list(range(80, 100))


def _recreate(bootstrap, topic: str, records: int):
    """Delete ``topic``, create it again (one partition) and write ``records`` records "again" to it."""

    def recreate():
        with AdminClient(bootstrap) as admin:
            admin.delete_topics([topic])
            admin.create_topics([NewTopic(topic, 1, 1, {})])
        produce(bootstrap, topic, ["again"] * records, partition=0)

    return recreate


@pytest.mark.parametrize("records", [5, 80], ids=["behind-the-old-offsets", "grown-past-the-old-offsets"])
def test_a_deleted_and_recreated_topic_fails_the_query_naming_it_with_fail_on_data_loss(
    spark, bootstrap, new_topic, records
):
    topic = new_topic(1)
    checkpoint = tempfile.mkdtemp()
    _read_then_lose(spark, bootstrap, topic, checkpoint, _recreate(bootstrap, topic, records))
    with pytest.raises(Exception, match=f"Topic '{topic}' was deleted and re-created: its topic id changed"):
        run_available_now(stream(spark, bootstrap, subscribe=topic), Collector(), checkpoint)


@pytest.mark.parametrize("records", [5, 80], ids=["behind-the-old-offsets", "grown-past-the-old-offsets"])
def test_a_deleted_and_recreated_topic_is_read_from_its_start_without_fail_on_data_loss(
    spark, bootstrap, new_topic, records
):
    topic = new_topic(1)
    checkpoint = tempfile.mkdtemp()
    _read_then_lose(spark, bootstrap, topic, checkpoint, _recreate(bootstrap, topic, records))
    df = stream(spark, bootstrap, subscribe=topic, failOnDataLoss="false")
    collector = Collector()
    run_available_now(df, collector, checkpoint)
    assert collector.rows() == [(0, i, "again") for i in range(records)]
    produce(bootstrap, topic, ["after"] * 3, partition=0)
    collector = Collector()
    run_available_now(df, collector, checkpoint)
    assert collector.rows() == [(0, records + i, "after") for i in range(3)]


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_a_deleted_subscribed_topic_fails_the_query_naming_it_as_sparks_offset_reader(
    spark, bootstrap, new_topic, fail_on_data_loss
):
    topic = new_topic(2)
    checkpoint = tempfile.mkdtemp()
    produce(bootstrap, topic, range(10), partition=lambda i: i % 2)
    run_available_now(stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest"), Collector(), checkpoint)
    with AdminClient(bootstrap) as admin:
        admin.delete_topics([topic])
    df = stream(
        spark, bootstrap, subscribe=topic, failOnDataLoss=fail_on_data_loss, **{"fetchOffset__retryIntervalMs": 100}
    )
    with pytest.raises(Exception, match=rf"Topic\(s\) '{topic}' given in option 'subscribe' do not exist"):
        run_available_now(df, Collector(), checkpoint)


def test_a_deleted_topic_of_a_pattern_is_data_loss_naming_its_partitions(spark, bootstrap, new_topic):
    topic = new_topic(2)
    checkpoint = tempfile.mkdtemp()
    produce(bootstrap, topic, range(10), partition=lambda i: i % 2)
    pattern = f"^{re.escape(topic)}$"
    run_available_now(
        stream(spark, bootstrap, subscribePattern=pattern, startingOffsets="earliest"), Collector(), checkpoint
    )
    with AdminClient(bootstrap) as admin:
        admin.delete_topics([topic])
    with AdminClient(bootstrap) as admin:  # a topic for the pattern's next batch to read, so one is planned
        from spark_kafkalog.client import NewTopic

        admin.create_topics([NewTopic(f"{topic}-next", 1, 1, {})])
    produce(bootstrap, f"{topic}-next", ["n"])
    wider = f"^{re.escape(topic)}(-next)?$"
    with pytest.raises(Exception, match=rf"\['{topic}-0', '{topic}-1'\] are gone"):
        run_available_now(stream(spark, bootstrap, subscribePattern=wider), Collector(), checkpoint)


# -- restart, group commits -------------------------------------------------------------------------------


def test_restart_from_checkpoint_reads_every_record_exactly_once(spark, bootstrap, new_topic):
    topic = new_topic(2)
    produce(bootstrap, topic, range(100), partition=lambda i: i % 2)
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
        wait_until(lambda: len(collector.sizes()) >= 2, 60, "two batches")
    finally:
        query.stop()
    first_run = len(collector.rows())
    assert 0 < first_run < 100
    produce(bootstrap, topic, range(100, 150), partition=lambda i: i % 2)
    query = df.writeStream.foreachBatch(collector).option("checkpointLocation", checkpoint).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    rows = collector.rows()
    assert len(rows) == 150
    assert sorted(int(v) for _, _, v in rows) == list(range(150))


def test_a_checkpoint_written_without_topic_ids_resumes_and_gains_them(spark, bootstrap, new_topic):
    """A checkpoint of the format before topic ids (Spark's JSON alone) resumes where it stopped; the next
    offsets carry the topic's id again."""
    topic = new_topic(2)
    produce(bootstrap, topic, range(20), partition=lambda i: i % 2)
    checkpoint = tempfile.mkdtemp()
    df = stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest")
    run_available_now(df, Collector(), checkpoint)
    offsets_dir = os.path.join(checkpoint, "offsets")
    for name in [n for n in os.listdir(offsets_dir) if n.isdigit()]:
        path = os.path.join(offsets_dir, name)
        with open(path) as f:
            lines = f.read().splitlines()
        source = {k: v for k, v in json.loads(lines[-1]).items() if not k.startswith("@topicId:")}
        assert source == {topic: {"0": 10, "1": 10}}
        with open(path, "w") as f:
            f.write("\n".join([*lines[:-1], json.dumps(source)]))
        crc = os.path.join(offsets_dir, f".{name}.crc")  # Hadoop's checksum of the old content
        if os.path.exists(crc):
            os.remove(crc)
    produce(bootstrap, topic, range(20, 26), partition=lambda i: i % 2)
    collector = Collector()
    run_available_now(df, collector, checkpoint)
    assert sorted(int(v) for _, _, v in collector.rows()) == list(range(20, 26))
    last = max((n for n in os.listdir(offsets_dir) if n.isdigit()), key=int)
    with open(os.path.join(offsets_dir, last)) as f:
        assert any(k.startswith(f"@topicId:{topic}:") for k in json.loads(f.read().splitlines()[-1]))


def test_commit_offsets_to_group_shows_the_querys_lag_without_joining(spark, bootstrap, new_topic):
    topic = new_topic(2)
    group = f"{topic}-group"
    produce(bootstrap, topic, range(60), partition=lambda i: i % 2)
    df = stream(
        spark,
        bootstrap,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger=20,
        commitOffsetsToGroup=group,
    )
    run_available_now(df)
    with AdminClient(bootstrap) as admin:
        lag = {p.topic_partition: (p.committed, p.lag) for p in admin.group_lag(group)}
        assert lag == {TP(topic, 0): (30, 0), TP(topic, 1): (30, 0)}
        produce(bootstrap, topic, range(10), partition=0)
        assert {p.topic_partition: p.lag for p in admin.group_lag(group)} == {TP(topic, 0): 10, TP(topic, 1): 0}
        description = admin.describe_groups([group])[group]
        assert not description.members  # committed from outside the group protocol


def test_kafka_group_id_also_receives_the_commits(spark, bootstrap, new_topic):
    topic = new_topic(1)
    group = f"{topic}-g"
    produce(bootstrap, topic, range(7), partition=0)
    run_available_now(stream(spark, bootstrap, subscribe=topic, startingOffsets="earliest", kafka__group__id=group))
    with AdminClient(bootstrap) as admin:
        assert admin.list_group_offsets(group)[TP(topic, 0)].offset == 7


def test_option_errors_reach_the_user_with_the_projects_message(spark, bootstrap, new_topic):
    topic = new_topic(1)
    with pytest.raises(Exception, match="ending offset not valid in streaming queries"):
        run_available_now(stream(spark, bootstrap, subscribe=topic, endingOffsets="latest"))


# -- writeStream ------------------------------------------------------------------------------------------


def test_write_stream_copies_a_topic_with_a_checkpoint(spark, bootstrap, new_topic):
    source, target = new_topic(2), new_topic(3)
    produce(bootstrap, source, range(50), partition=lambda i: i % 2)
    df = stream(spark, bootstrap, subscribe=source, startingOffsets="earliest", maxOffsetsPerTrigger=20)
    query = (
        df.selectExpr("CAST(offset AS STRING) AS key", "value")
        .writeStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("checkpointLocation", tempfile.mkdtemp())
        .queryName(sink_name(target))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert query.exception() is None
    copied = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", target)
    values = sorted(int(r.value) for r in copied.load().selectExpr("CAST(value AS STRING) AS value").collect())
    assert values == list(range(50))


def test_write_stream_fails_the_query_on_an_undeliverable_record(spark, bootstrap, new_topic):
    source, target = new_topic(1), new_topic(1, max_message_bytes="2000")
    produce(bootstrap, source, ["small", "x" * 10_000, "small"], partition=0)
    df = stream(spark, bootstrap, subscribe=source, startingOffsets="earliest")
    query = (
        df.select("value")
        .writeStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("checkpointLocation", tempfile.mkdtemp())
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="could not be written to Kafka") as excinfo:
        query.awaitTermination(120)
    assert re.search(r"too large|TOO_LARGE", str(excinfo.value), re.IGNORECASE)
