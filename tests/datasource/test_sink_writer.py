"""The sink's ``RecordWriter`` on Arrow batches, without Spark, against our real broker (in-process): records
and partitions as per-row ``Producer.send`` makes them, rows split by a topic column, partition columns,
rows that cannot become records named by their row, delivery failures raised by ``finish``."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from spark_kafkalog.datasource.options import SinkOptions
from spark_kafkalog.datasource.sink import KafkaWriteError, RecordWriter, WriteColumns
from spark_kafkalog.records import default_partition

pytestmark = pytest.mark.integration

HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:sink-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    broker.start()
    yield broker.bootstrap_servers
    broker.stop()


def new_topic(bootstrap: str, partitions: int, **config: str) -> str:
    name = f"sink-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, config)])
    return name


def read_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list]:
    out = {}
    with KafkaClient(bootstrap) as client:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
        for tp in tps:
            out[tp.partition] = [
                (r.key, r.value, list(r.headers))
                for fetched in client.fetch_batches(tp, 0, ends[tp])
                for r in fetched.batch.records()
                if r.offset < ends[tp]
            ]
    return out


def write(bootstrap, batches, columns, topic=None, **client_properties) -> int:
    options = SinkOptions(bootstrap, topic, client_properties)
    with Producer(bootstrap) as producer:
        writer = RecordWriter(options, columns, producer)
        for batch in batches:
            writer.write(batch)
        return writer.finish()


def test_writer_sends_keys_values_and_headers_to_the_partitions_send_uses(bootstrap):
    topic, reference = new_topic(bootstrap, 3), new_topic(bootstrap, 3)
    n = 500
    keys = [f"k{i % 37}" if i % 5 else None for i in range(n)]
    values = [b"v%d" % i if i % 7 else None for i in range(n)]
    headers = [[{"key": "i", "value": b"%d" % i}] if i % 2 else [] for i in range(n)]
    batch = pa.record_batch(
        [pa.array(keys), pa.array(values, pa.binary()), pa.array(headers, HEADERS)], names=["key", "value", "headers"]
    )
    assert write(bootstrap, [batch.slice(0, 200), batch.slice(200)], WriteColumns(key=True, headers=True), topic) == n
    with Producer(bootstrap) as producer:
        for k, v, h in zip(keys, values, headers):
            producer.send(reference, v, k.encode() if k else None, headers=[(x["key"], x["value"]) for x in h])
    got, expected = read_all(bootstrap, topic, 3), read_all(bootstrap, reference, 3)
    for p in range(3):  # keyed rows: the same partitions, in order; null keys: sticky (random) partitions
        assert [r for r in got[p] if r[0] is not None] == [r for r in expected[p] if r[0] is not None]
        assert all(default_partition(r[0], 3) == p for r in got[p] if r[0] is not None)
    assert sorted(repr(r) for rs in got.values() for r in rs if r[0] is None) == sorted(
        repr(r) for rs in expected.values() for r in rs if r[0] is None
    )


def test_writer_splits_rows_by_topic_column_and_honours_the_partition_column(bootstrap):
    a, b = new_topic(bootstrap, 2), new_topic(bootstrap, 4)
    batch = pa.record_batch(
        [
            pa.array([a, b, a, b, b]),
            pa.array([b"0", b"1", b"2", b"3", b"4"]),
            pa.array([1, 3, None, 0, 2], pa.int32()),
        ],
        names=["topic", "value", "partition"],
    )
    assert write(bootstrap, [batch], WriteColumns(topic=True, partition=True)) == 5
    got_a, got_b = read_all(bootstrap, a, 2), read_all(bootstrap, b, 4)
    assert got_a[1][0][1] == b"0" and sum(len(v) for v in got_a.values()) == 2
    assert {p: [r[1] for r in rs] for p, rs in got_b.items()} == {0: [b"3"], 1: [], 2: [b"4"], 3: [b"1"]}


def test_null_topic_and_null_header_key_name_their_row_of_the_task(bootstrap):
    topic = new_topic(bootstrap, 1)
    first = pa.record_batch([pa.array([topic, topic]), pa.array([b"a", b"b"])], names=["topic", "value"])
    second = pa.record_batch([pa.array([topic, None]), pa.array([b"c", b"d"])], names=["topic", "value"])
    with pytest.raises(KafkaWriteError, match=r"null topic present in the data \(row 3 of this task\)"):
        write(bootstrap, [first, second], WriteColumns(topic=True))
    headers = pa.array([[], [{"key": None, "value": b"x"}]], HEADERS)
    batch = pa.record_batch([pa.array([b"a", b"b"]), headers], names=["value", "headers"])
    with pytest.raises(KafkaWriteError, match="null header or header key in row 1 of this task"):
        write(bootstrap, [batch], WriteColumns(headers=True), topic)


def test_finish_raises_when_the_broker_refuses_a_batch(bootstrap):
    topic = new_topic(bootstrap, 1, **{"max.message.bytes": "2000"})
    batch = pa.record_batch([pa.array([b"small", b"x" * 10_000, b"small"])], names=["value"])
    with pytest.raises(KafkaWriteError, match="could not be written to Kafka"):
        write(bootstrap, [batch], WriteColumns(), topic)


def test_kafka_batch_size_bounds_the_batches_written(bootstrap):
    topic = new_topic(bootstrap, 1)
    batch = pa.record_batch([pa.array([b"x" * 100] * 1000)], names=["value"])
    write(bootstrap, [batch], WriteColumns(), topic, **{"batch.size": "4096"})
    with KafkaClient(bootstrap) as client:
        tp = TopicPartition(topic, 0)
        fetched = list(client.fetch_batches(tp, 0, 1000))
    assert len(fetched) >= 1000 * 136 // 4096
    assert all(f.batch.size <= 4096 for f in fetched)


def test_small_arrow_batches_are_sent_together_in_order(bootstrap):
    topic = new_topic(bootstrap, 1)
    values = [b"%06d" % i + b"x" * 94 for i in range(8000)]
    arrow_batches = [pa.record_batch([pa.array(values[i : i + 1000])], names=["value"]) for i in range(0, 8000, 1000)]
    assert write(bootstrap, arrow_batches, WriteColumns(), topic) == 8000
    with KafkaClient(bootstrap) as client:
        fetched = list(client.fetch_batches(TopicPartition(topic, 0), 0, 8000))
    # one send_batch over all eight (about 1.1 MB by the producer's size estimate): record batches of up
    # to 512 KiB, three, where one send_batch per Arrow batch would write eight
    assert len(fetched) <= 3
    assert [r.value for f in fetched for r in f.batch.records()] == values
