"""Share-group read mode through Spark (local[2]) against conftest's cluster, with the share group scripted
(``ScriptedShareConsumer`` over a real topic): the Spark wiring (offsets in the checkpoint, one task per
topic-partition, the executors' acquired-offset filter, acknowledgements in Spark's call order) without the
broker's share groups. The end-to-end tests against the broker's share groups are in test_share_streaming.py."""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from spark_kafkalog.client import KafkaClient, OffsetSpec, TopicPartition
from spark_kafkalog.datasource.options import parse_source_options
from spark_kafkalog.datasource.share_planning import ShareRange
from spark_kafkalog.datasource.share_scan import read_share_range
from tests.datasource.test_streaming import Collector, produce, run_available_now, stream

pytestmark = pytest.mark.integration


def test_a_task_keeps_only_the_acquired_offsets_of_its_partition(bootstrap, new_topic):
    topic = new_topic(1)
    produce(bootstrap, topic, range(30), partition=0)
    options = parse_source_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "includeHeaders": "true"})
    share_range = ShareRange(topic, 0, ((2, 4), (10, 10), (15, 29)))
    with KafkaClient(bootstrap) as client:
        for max_gap in (1, 4096):  # each range fetched alone, or one span filtered
            batches = list(read_share_range(options, share_range, client, max_gap))
            offsets = [o for b in batches for o in b.column("offset").to_pylist()]
            assert offsets == [2, 3, 4, 10, *range(15, 30)]
            assert batches[0].schema.names[-1] == "headers"
            assert [v.decode() for b in batches for v in b.column("value").to_pylist()] == [str(o) for o in offsets]


class ScriptedShareConsumer:
    """A share group of one member played over a real topic: each poll acquires what was produced since the
    last one, except every offset ``o % 3 == 2`` (another member's); acknowledgements are appended to
    ``ack_file`` as ``partition offset`` lines at ``commit_sync``."""

    def __init__(self, bootstrap: str, ack_file: str, max_poll_records: int) -> None:
        self.client = KafkaClient(bootstrap)
        self.ack_file = ack_file
        self.max_poll_records = max_poll_records
        self.positions: dict[TopicPartition, int] = {}
        self.pending: list[tuple[str, int, int]] = []

    def subscribe(self, topics):
        self.topics = list(topics)

    def poll(self, timeout_ms):
        from types import SimpleNamespace

        counts = self.client.topics()
        out: list[SimpleNamespace] = []
        for topic in self.topics:
            tps = [TopicPartition(topic, p) for p in range(counts.get(topic, 0))]
            ends = self.client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
            for tp in tps:
                start = self.positions.get(tp, 0)
                end = min(ends[tp], start + self.max_poll_records - len(out))
                out += [SimpleNamespace(topic=tp.topic, partition=tp.partition, offset=o) for o in range(start, end)]
                self.positions[tp] = end
        return [r for r in out if r.offset % 3 != 2]

    def acknowledge(self, record, type=1):
        self.pending.append(record)

    def commit_sync(self, timeout_ms):
        with open(self.ack_file, "a") as f:
            f.writelines(f"{p} {o}\n" for _, p, o in self.pending)
        tps = {TopicPartition(t, p) for t, p, _ in self.pending}
        self.pending = []
        return dict.fromkeys(tps)

    def close(self):
        self.client.close()


def scripted_source(bootstrap: str, ack_file: str):
    from spark_kafkalog.datasource.share_member import ShareMember
    from spark_kafkalog.datasource.share_source import KafkaLogShareStreamReader
    from spark_kafkalog.datasource.source import KafkaLogDataSource

    class ScriptedReader(KafkaLogShareStreamReader):
        @property
        def member(self):
            if self._member is None:
                opts = self.options
                self._member = ShareMember(
                    opts.group_id,
                    opts.topics,
                    lambda: ScriptedShareConsumer(bootstrap, ack_file, opts.max_records_per_trigger),
                    max_wait_ms=opts.max_wait_ms,
                    acknowledge_timeout_ms=opts.acknowledge_timeout_ms,
                )
            return self._member

    class ScriptedShareSource(KafkaLogDataSource):
        @classmethod
        def name(cls):
            return "kafkalog_scripted_share"

        def streamReader(self, schema):
            reader = super().streamReader(schema)
            return ScriptedReader(reader.options) if isinstance(reader, KafkaLogShareStreamReader) else reader

    return ScriptedShareSource


def test_a_share_read_processes_the_acquired_records_and_acknowledges_each_batch(spark, bootstrap, new_topic, tmp_path):
    topic = new_topic(2)
    produce(bootstrap, topic, range(60), partition=lambda i: i % 2)
    ack_file = str(tmp_path / "acks")
    spark.dataSource.register(scripted_source(bootstrap, ack_file))
    df = (
        spark.readStream.format("kafkalog_scripted_share")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("shareGroup", "workers")
        .option("maxRecordsPerTrigger", "25")
        .load()
    )
    collector = Collector()
    checkpoint = tempfile.mkdtemp()
    run_available_now(df, collector, checkpoint)
    expected = sorted((p, o) for p in (0, 1) for o in range(30) if o % 3 != 2)
    assert sorted((p, o) for p, o, _ in collector.rows()) == expected
    assert all(int(v) == o * 2 + p for p, o, v in collector.rows())
    assert collector.sizes() == [17, 17, 6]  # 25, 25 and 10 offsets, minus the other member's 8, 8 and 4
    with open(ack_file) as f:  # every batch acknowledged once, the last one when the run found nothing more
        assert sorted(tuple(map(int, line.split())) for line in f) == expected
    with open(os.path.join(checkpoint, "offsets", "1")) as f:
        second = json.loads(f.read().splitlines()[-1])
    assert second["shareGroup"] == "workers" and second["batch"] == 2
    assert second["acquired"][topic] == {
        "0": [[25, 25], [27, 28]],
        "1": [[0, 1], [3, 4], [6, 7], [9, 10], [12, 13], [15, 16], [18, 19]],
    }


def test_share_options_are_checked_when_the_query_starts(spark, bootstrap, new_topic):
    topic = new_topic(1)
    df = stream(spark, bootstrap, subscribe=topic, shareGroup="g", startingOffsets="earliest")
    with pytest.raises(Exception, match="Option 'startingOffsets' cannot be used with 'shareGroup'"):
        run_available_now(df)
