"""Share-group read mode end to end (issue 31's proof): Spark queries reading a kafkalog share group.

- a query's driver is SIGKILLed mid-stream (its whole process group: driver, JVM, Python workers) and
  restarted from its checkpoint: every record reaches the sink at least once, no record the broker had
  acknowledged before the kill reaches it again, every record ends acknowledged once, the group's share-partition
  start offsets (DescribeShareGroupOffsets) are the partitions' ends, and a new member of the group
  (confluent-kafka's ShareConsumer) is handed nothing: the broker has nothing left;
- two queries in one share group split one topic's records: each gets some, together all, and a record reaches
  the sink twice only when the broker refused its first acknowledgement (its lock had expired);
- ``Trigger.AvailableNow`` reads what the group has and ends; the stopped query leaves the group, and a second run
  on the same checkpoint reads only the records produced since.

The drivers log each acknowledgement and the broker's answer (``share_ack_log``): "acknowledged" means the broker
said so. One broker with short share-group timings (its own cluster: a dead member leaves the group quickly) and a
group lock duration of ``LOCK_MS``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer
from tests.datasource.share_ack_log import read_ack_log
from tests.datasource.test_streaming import Collector, produce
from tests.waiting import stays_true, wait_until

pytestmark = pytest.mark.integration

LOCK_MS = 10_000
SHARE_CONFIG = {
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 4,
    "share.coordinator.state.topic.replication.factor": 1,
    "share.coordinator.state.topic.min.isr": 1,
    "share.coordinator.state.topic.num.partitions": 4,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "group.initial.rebalance.delay.ms": 0,
    "group.share.min.record.lock.duration.ms": 1000,
    "group.share.min.session.timeout.ms": 1000,
    "group.share.session.timeout.ms": 6000,
    "group.share.min.heartbeat.interval.ms": 500,
    "group.share.heartbeat.interval.ms": 1000,
}


@pytest.fixture(scope="module")
def share_kafka():
    from broker.embedded_cluster import EmbeddedCluster

    with EmbeddedCluster(1, broker_config=SHARE_CONFIG) as cluster:
        yield cluster


def new_topic(bootstrap: str, partitions: int) -> str:
    name = f"share-spark-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def new_share_group(bootstrap: str) -> str:
    """A fresh group reading from the earliest offset with locks of ``LOCK_MS`` (GROUP configs, confluent-kafka)."""
    from tests.share_scenarios import set_group_configs

    group = f"spark-share-{uuid.uuid4().hex[:8]}"
    configs = {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": str(LOCK_MS)}
    set_group_configs(bootstrap, group, configs)
    return group


def sink_batches(out: Path, run: str) -> dict[int, list[tuple[int, int, str]]]:
    """``{batch id: rows}`` the driver's sink wrote in ``run``."""
    return {
        int(p.stem.split("-")[1]): [(row[0], row[1], row[2]) for row in json.loads(p.read_text())]
        for p in sorted(out.glob(f"{run}-*.json"))
    }


def offset_log(checkpoint: Path, topic: str) -> dict[int, set[tuple[int, int]]]:
    """``{batch id: acquired (partition, offset)s}`` of the checkpoint's offset log (the source's line is the last)."""
    out: dict[int, set[tuple[int, int]]] = {}
    for path in (checkpoint / "offsets").iterdir():
        if path.name.isdigit():
            offset = json.loads(path.read_text().splitlines()[-1])
            ranges = offset["acquired"].get(topic, {})
            out[int(path.name)] = {(int(p), o) for p, rs in ranges.items() for a, b in rs for o in range(a, b + 1)}
    return out


class Driver:
    """tests/datasource/share_driver.py in its own process group."""

    def __init__(self, bootstrap: str, topic: str, group: str, checkpoint: Path, out: Path, run: str) -> None:
        self.stop_file = out / f"{run}.stop"
        cmd = [sys.executable, "-m", "tests.datasource.share_driver", bootstrap, topic, group, str(checkpoint)]
        self.proc = subprocess.Popen(
            [*cmd, str(out), run, str(self.stop_file)],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def check_alive(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"the driver exited ({self.proc.returncode}): {self._stderr()}")
        return True

    def _stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")[-4000:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        self.stop_file.touch()
        try:
            self.proc.wait(120)
        finally:
            self.kill()
        assert self.proc.returncode == 0, self._stderr()


def nothing_left_to_deliver(bootstrap: str, group: str, topic: str) -> None:
    """A new member of ``group`` (confluent-kafka's ShareConsumer) is handed no record: none is available (called
    once every record was acknowledged, so none can be waiting for a dead member's lock to expire either)."""
    from tests.share_scenarios import poll_once, share_consumer

    consumer = share_consumer(bootstrap, group, topic)
    try:
        stays_true(lambda: not poll_once(consumer), 2.0, "the group to have nothing left to deliver")
    finally:
        consumer.close()


def produce_in_small_batches(bootstrap: str, topic: str, n: int, partitions: int, per_batch: int = 10) -> None:
    """Records ``0..n-1`` (value ``str(i)``, partition ``i % partitions``) in record batches of about ``per_batch``
    records: the broker acquires whole batches, so a poll's batches stay near ``maxRecordsPerTrigger``."""
    with Producer(bootstrap, linger_ms=0) as producer:
        for first in range(0, n, per_batch):
            futures = [
                producer.send(topic, str(i).encode(), None, partition=i % partitions)
                for i in range(first, min(n, first + per_batch))
            ]
            producer.flush()
            for f in futures:
                f.result()


def test_a_share_query_killed_mid_stream_restarts_to_every_record_at_least_once(share_kafka, tmp_path):
    bootstrap = share_kafka.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    group = new_share_group(bootstrap)
    n = 240
    produce_in_small_batches(bootstrap, topic, n, 2)
    expected = {(i % 2, i // 2): str(i) for i in range(n)}
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out"
    out.mkdir()

    first = Driver(bootstrap, topic, group, checkpoint, out, "run1")
    try:

        def batches_done_and_acknowledged() -> bool:
            first.check_alive()
            return len(sink_batches(out, "run1")) >= 3 and bool(read_ack_log(out / "acks-run1.jsonl")[0])

        wait_until(batches_done_and_acknowledged, 180, "the first run to write and acknowledge micro-batches")
    finally:
        first.kill()  # SIGKILL mid-stream: a batch is in flight
    run1 = sink_batches(out, "run1")
    accepted1, _ = read_ack_log(out / "acks-run1.jsonl")
    assert 0 < sum(len(rows) for rows in run1.values()) < n, "killed before the end"
    planned = offset_log(checkpoint, topic)  # the batches of the first run, with their acquired offsets
    for batch, rows in run1.items():
        assert {(p, o) for p, o, _ in rows} == planned[batch], "a batch's rows are exactly its acquired records"

    second = Driver(bootstrap, topic, group, checkpoint, out, "run2")
    try:

        def everything_acknowledged() -> bool:
            second.check_alive()
            return read_ack_log(out / "acks-run2.jsonl")[0] | accepted1 >= expected.keys()

        wait_until(everything_acknowledged, 180, "every record to be processed and acknowledged after the restart")
    finally:
        second.stop()
    accepted2, _ = read_ack_log(out / "acks-run2.jsonl")
    assert not accepted1 & accepted2, "the broker acknowledges a record once"
    rows = [row for run in ("run1", "run2") for batch in sink_batches(out, run).values() for row in batch]
    assert all(expected[(p, o)] == v for p, o, v in rows), "rows are the records at their offsets"
    times = Counter((p, o) for p, o, _ in rows)
    assert times.keys() == expected.keys(), "every record at least once"
    twice = {r for r in accepted1 if times[r] > 1}
    assert not twice, (
        f"records acknowledged before the kill processed again: {sorted(twice)[:10]}; the drivers' log:\n"
        + (out / "acks-run1.jsonl").read_text()[-3000:]
        + (out / "acks-run2.jsonl").read_text()[-3000:]
    )
    with AdminClient(bootstrap) as admin:  # the share-partition start offsets: everything below is finished
        starts = admin.list_share_group_offsets(group)
    assert {(tp.partition, o.start_offset) for tp, o in starts.items()} == {(0, n // 2), (1, n // 2)}
    nothing_left_to_deliver(bootstrap, group, topic)


def members(bootstrap: str, group: str) -> list[str]:
    """The member ids of ``group`` (ShareGroupDescribe)."""
    with AdminClient(bootstrap) as admin:
        return [m.member_id for m in admin.describe_share_groups([group])[group].members]


def test_two_queries_in_one_share_group_split_a_topics_records(spark, share_kafka, tmp_path):
    from tests.datasource.share_ack_log import logged_share_source

    bootstrap = share_kafka.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    group = new_share_group(bootstrap)
    acks = tmp_path / "acks.jsonl"
    spark.dataSource.register(logged_share_source(str(acks)))
    collectors = [Collector(), Collector()]
    queries = []
    try:
        for collector in collectors:
            df = (
                spark.readStream.format("kafkalog_share_logged")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .option("shareGroup", group)
                .option("maxRecordsPerTrigger", "10")
                .option("shareMaxWaitMs", "100")
                .load()
            )
            writer = df.writeStream.foreachBatch(collector).trigger(processingTime="100 milliseconds")
            queries.append(writer.option("checkpointLocation", tempfile.mkdtemp()).start())
        produced = 0

        def both_have_records() -> bool:  # produce a few records at a time until both queries got some
            nonlocal produced
            for q in queries:
                assert q.exception() is None, q.exception()
            produce(bootstrap, topic, range(produced, produced + 4), partition=lambda i: i % 2, linger_ms=0)
            produced += 4
            return produced >= 40 and all(c.rows() for c in collectors)

        wait_until(both_have_records, 120, "both queries to receive records")
        wait_until(
            lambda: read_ack_log(acks)[0] >= {(i % 2, i // 2) for i in range(produced)},
            60,
            f"the queries to process and acknowledge all {produced} records",
        )
    finally:
        for q in queries:
            q.stop()
    rows = [r for c in collectors for r in c.rows()]
    assert all(c.rows() for c in collectors), [len(c.rows()) for c in collectors]
    assert all(int(v) == o * 2 + p for p, o, v in rows)
    assert {int(v) for _, _, v in rows} == set(range(produced)), "every record at least once"
    assert_twice_only_when_refused([(p, o) for p, o, _ in rows], read_ack_log(acks)[1])


def test_available_now_reads_what_the_group_has_and_ends(spark, share_kafka, tmp_path):
    from tests.datasource.share_ack_log import logged_share_source
    from tests.datasource.test_streaming import run_available_now

    bootstrap = share_kafka.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    group = new_share_group(bootstrap)
    acks = tmp_path / "acks.jsonl"
    spark.dataSource.register(logged_share_source(str(acks)))
    produce_in_small_batches(bootstrap, topic, 60, 2)
    df = (
        spark.readStream.format("kafkalog_share_logged")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("shareGroup", group)
        .option("maxRecordsPerTrigger", "25")
        .load()
    )
    collector = Collector()
    checkpoint = str(tmp_path / "checkpoint")
    run_available_now(df, collector, checkpoint)
    accepted, refused = read_ack_log(acks)
    assert {(p, o) for p, o, _ in collector.rows()} == {(i % 2, i // 2) for i in range(60)}
    assert accepted == {(i % 2, i // 2) for i in range(60)}, "every batch acknowledged, the last one too"
    assert_twice_only_when_refused([(p, o) for p, o, _ in collector.rows()], refused)
    wait_until(lambda: not members(bootstrap, group), 30, "the stopped query to leave the group")
    produce_in_small_batches(bootstrap, topic, 10, 2)  # offsets 30..34 of each partition
    again = Collector()
    run_available_now(df, again, checkpoint)  # the same checkpoint: only what the group has not acknowledged
    assert {(p, o) for p, o, _ in again.rows()} == {(p, o) for p in (0, 1) for o in range(30, 35)}
    assert_twice_only_when_refused([(p, o) for p, o, _ in again.rows()], read_ack_log(acks)[1])


def assert_twice_only_when_refused(rows: list[tuple[int, int]], refused: set[tuple[int, int]]) -> None:
    """A record reached the sink more than once only if the broker refused its acknowledgement (its lock expired,
    e.g. in a query's first batch, slow while Spark warms up)."""
    again = {r for r, count in Counter(rows).items() if count > 1}
    assert again <= refused, f"records processed twice whose first acknowledgement succeeded: {sorted(again - refused)}"
