"""The exactly-once sink (``exactlyOnce``) through Spark against the embedded cluster of conftest: a streaming
query whose driver dies after committing only part of a micro-batch's task transactions, restarted from its
checkpoint, leaves every input row exactly once for read_committed readers (confluent-kafka); a batch write
is all or nothing."""

from __future__ import annotations

import tempfile

import pytest

from spark_kafkalog.client import Producer
from tests.confluent_read import confluent_values
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


def produce(bootstrap: str, topic: str, values: list[str], partitions: int) -> None:
    with Producer(bootstrap) as producer:
        for i, v in enumerate(values):
            producer.send(topic, v.encode(), partition=i % partitions)
        producer.flush(30)


def read_values(bootstrap: str, topic: str, isolation: str, expect: int, idle_s: float = 2.0) -> list[str]:
    return [v.decode() for v in confluent_values(bootstrap, topic, isolation, expect, idle_s=idle_s)]


def run_available_now(spark, bootstrap, source_topic, sink_topic, checkpoint, fmt="kafkalog"):
    query = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source_topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("value")
        .writeStream.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink_topic)
        .option("exactlyOnce", "true")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(180)
    except Exception as e:  # StreamingQueryException: the query failed
        return e
    finally:
        query.stop()
    return query.exception()


def test_a_micro_batch_committed_in_part_is_completed_once_after_the_restart(spark, bootstrap, new_topic):
    from spark_kafkalog.datasource.exactly_once import end_transactions
    from spark_kafkalog.datasource.source import KafkaLogDataSource
    from spark_kafkalog.datasource.stream_source import KafkaLogStreamWriter

    class DriverDiesMidCommit(KafkaLogStreamWriter):
        """Commits the first task's transaction, then fails: the driver's crash between commits."""

        def commit(self, messages, batchId):
            txns = [m.transaction for m in messages if m is not None and m.transaction.transactional_id]
            end_transactions(self.options, txns[:1], commit=True)
            raise RuntimeError(f"driver died after committing 1 of {len(txns)} task transactions")

    class CrashingSink(KafkaLogDataSource):
        @classmethod
        def name(cls):
            return "kafkalog_dies_mid_commit"

        def streamWriter(self, schema, overwrite):
            writer = super().streamWriter(schema, overwrite)
            return DriverDiesMidCommit(writer.options, writer.columns)

    spark.dataSource.register(CrashingSink)
    source, sink = new_topic(partitions=2), new_topic(partitions=2)
    first = [f"a-{i}" for i in range(60)]
    produce(bootstrap, source, first, 2)
    checkpoint = tempfile.mkdtemp()

    error = run_available_now(spark, bootstrap, source, sink, checkpoint, fmt="kafkalog_dies_mid_commit")
    assert error is not None and "driver died after committing 1 of 2" in str(error)
    partial = read_values(bootstrap, sink, "read_committed", 1)
    assert 0 < len(partial) < len(first)  # one partition's rows are committed, the other's are not
    assert len(read_values(bootstrap, sink, "read_uncommitted", len(first))) == len(first)

    assert run_available_now(spark, bootstrap, source, sink, checkpoint) is None  # batch 0 again, then done
    assert sorted(read_values(bootstrap, sink, "read_committed", len(first))) == sorted(first)
    # the committed partition was not written again; the other was (its first attempt aborted)
    assert len(read_values(bootstrap, sink, "read_uncommitted", 2 * len(first) - len(partial))) == (
        2 * len(first) - len(partial)
    )

    more = [f"b-{i}" for i in range(30)]
    produce(bootstrap, source, more, 2)
    assert run_available_now(spark, bootstrap, source, sink, checkpoint) is None
    assert sorted(read_values(bootstrap, sink, "read_committed", len(first) + len(more))) == sorted(first + more)
    # the kafkalog source as a read_committed reader of the sink's output: the same rows
    rows = (
        spark.read.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", sink)
        .option("kafka.isolation.level", "read_committed")
        .load()
        .selectExpr("CAST(value AS STRING) AS v")
        .collect()
    )
    assert sorted(r.v for r in rows) == sorted(first + more)


def test_a_batch_write_is_all_or_nothing(spark, bootstrap, new_topic):
    topic = new_topic(partitions=2)
    good = spark.createDataFrame([(f"v-{i}",) for i in range(40)], "value string").repartition(2)
    good.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).option(
        "exactlyOnce", "true"
    ).mode("append").save()
    assert sorted(read_values(bootstrap, topic, "read_committed", 40)) == sorted(f"v-{i}" for i in range(40))

    # a row without a topic fails its task, Spark aborts the job: the other task's rows never become visible
    bad = spark.createDataFrame(
        [(f"w-{i}", topic if i != 7 else None) for i in range(40)], "value string, topic string"
    ).repartition(2)
    with pytest.raises(Exception, match="topic"):
        bad.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("exactlyOnce", "true").mode(
            "append"
        ).save()
    committed = read_values(bootstrap, topic, "read_committed", 40)
    assert sorted(committed) == sorted(f"v-{i}" for i in range(40))


def test_exactly_once_options(spark, bootstrap, new_topic):
    from spark_kafkalog.datasource.options import KafkaOptionError, parse_sink_options
    from spark_kafkalog.datasource.stream_options import parse_stream_sink_options

    base = {"kafka.bootstrap.servers": bootstrap, "topic": "t"}
    assert not parse_sink_options(base).exactly_once
    named = parse_sink_options({**base, "kafka.transactional.id": "orders-sink"})
    assert named.exactly_once and named.transactional_id_prefix == "orders-sink"
    assert "transactional.id" not in named.client_properties
    stream = parse_stream_sink_options({**base, "exactlyOnce": "true", "checkpointLocation": "/ckpt/q1"})
    again = parse_stream_sink_options({**base, "exactlyOnce": "true", "checkpointLocation": "/ckpt/q1/"})
    other = parse_stream_sink_options({**base, "exactlyOnce": "true", "checkpointLocation": "/ckpt/q2"})
    assert stream.transactional_id_prefix == again.transactional_id_prefix != other.transactional_id_prefix
    with pytest.raises(KafkaOptionError, match="checkpointLocation"):
        parse_stream_sink_options({**base, "exactlyOnce": "true"})
    with pytest.raises(KafkaOptionError, match="exactlyOnce"):
        parse_sink_options({**base, "exactlyOnce": "maybe"})


def _run_driver(bootstrap, source, sink, checkpoint, mode, tmp_path, *, kill: bool) -> None:
    """The driver of exactly_once_driver.py in its own process group; with ``kill``, SIGKILL the group (the
    driver, its JVM and Python workers) once the driver is inside its commit."""
    import os
    import signal
    import subprocess
    import sys

    ready = tmp_path / f"ready-{mode}"
    cmd = [sys.executable, "-m", "tests.datasource.exactly_once_driver", bootstrap, source, sink, checkpoint, mode]
    proc = subprocess.Popen(
        [*cmd, str(ready)], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        if not kill:
            _, err = proc.communicate(timeout=240)
            assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
            return

        def reached_its_commit() -> bool:
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-3000:]
            return ready.exists()

        wait_until(reached_its_commit, 240, "the driver to reach its commit")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


@pytest.mark.parametrize(
    "mode",
    [
        # a minute each (two Spark drivers): the default suite runs the partial commit, -m slow both
        pytest.param("hang-before-commit", marks=pytest.mark.slow),
        "hang-after-first-commit",
    ],
)
def test_a_driver_killed_in_its_commit_restarts_to_every_row_once(bootstrap, new_topic, tmp_path, mode):
    source, sink = new_topic(partitions=2), new_topic(partitions=2)
    values = [f"{mode}-{i}" for i in range(50)]
    produce(bootstrap, source, values, 2)
    checkpoint = str(tmp_path / "checkpoint")
    _run_driver(bootstrap, source, sink, checkpoint, mode, tmp_path, kill=True)  # SIGKILL inside commit
    seen = read_values(bootstrap, sink, "read_committed", 0, idle_s=1.0)
    assert len(seen) < len(values)  # nothing (or one partition) committed before the kill
    assert len(read_values(bootstrap, sink, "read_uncommitted", len(values))) == len(values)
    _run_driver(bootstrap, source, sink, checkpoint, "normal", tmp_path, kill=False)  # restart from the checkpoint
    assert sorted(read_values(bootstrap, sink, "read_committed", len(values))) == sorted(values)
