"""``Producer.send_batch`` against our real broker (in-process): the same partitions and records as per-record
``send`` for every codec, idempotent sequences across batch and per-record sends, sticky spreading of null
keys, explicit partitions, per-batch callbacks, and confluent-kafka reading what it wrote."""

from __future__ import annotations

import uuid
from collections import Counter

import pyarrow as pa
import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    KafkaClient,
    KafkaClientError,
    NewTopic,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from spark_kafkalog.client.errors import ProducerClosedError
from spark_kafkalog.records import default_partition
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

BASE_TS = 1_700_000_000_000


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:batch-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    broker.start()
    yield broker.bootstrap_servers
    broker.stop()


def new_topic(bootstrap: str, partitions: int) -> str:
    name = f"batch-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, {})])
    return name


def read_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list]:
    out = {}
    with KafkaClient(bootstrap) as client:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
        for tp in tps:
            out[tp.partition] = [
                (r.key, r.value, list(r.headers), r.timestamp)
                for fetched in client.fetch_batches(tp, 0, ends[tp])
                for r in fetched.batch.records()
                if r.offset < ends[tp]
            ]
    return out


def rows(n: int) -> list[tuple]:
    return [
        (
            b"key-%d" % (i % 97) if i % 11 else None,
            b"value-%d-" % i + b"x" * (i % 40) if i % 13 else None,
            [("seq", b"%d" % i), ("empty", None)] if i % 3 else [],
            BASE_TS + i,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_send_batch_lands_records_where_send_puts_them(bootstrap, codec):
    data = rows(600)
    keyed = [r for r in data if r[0] is not None]
    by_batch, by_record = new_topic(bootstrap, 3), new_topic(bootstrap, 3)
    with Producer(bootstrap, compression_type=codec, batch_size=2000) as producer:
        result = producer.send_batch(
            by_batch,
            pa.array([r[1] for r in keyed], type=pa.binary()),
            pa.array([r[0].decode() for r in keyed]),  # a string column: sent as UTF-8
            timestamps=[r[3] for r in keyed],
            headers=[r[2] for r in keyed],
            batch_bytes=2000,
        )
        for key, value, headers, ts in keyed:
            producer.send(by_record, value, key, headers=headers, timestamp_ms=ts)
        metadata = result.result(30)
    assert sum(m.record_count for m in metadata) == len(keyed)
    assert len(metadata) > 3  # batch_bytes 2000 cut the rows into several batches per partition
    assert result.partitions.tolist() == [default_partition(r[0], 3) for r in keyed]
    assert read_all(bootstrap, by_batch, 3) == read_all(bootstrap, by_record, 3)


def test_idempotent_sequences_hold_across_batch_and_record_sends(bootstrap):
    topic = new_topic(bootstrap, 1)
    with Producer(bootstrap, enable_idempotence=True, acks="all") as producer:
        first = producer.send_batch(topic, [b"a%d" % i for i in range(1000)], partition=0)
        middle = [producer.send(topic, b"m%d" % i, partition=0) for i in range(10)]
        last = producer.send_batch(topic, [b"z%d" % i for i in range(1000)], partition=0, batch_bytes=4096)
        offsets = [m.base_offset for m in first.result(30)] + [f.result(30).offset for f in middle]
        offsets += [m.base_offset for m in last.result(30)]
    assert offsets[0] == 0 and offsets == sorted(offsets)
    values = [r[1] for r in read_all(bootstrap, topic, 1)[0]]
    expected = [b"a%d" % i for i in range(1000)] + [b"m%d" % i for i in range(10)] + [b"z%d" % i for i in range(1000)]
    assert values == expected


def test_null_keys_stick_to_a_partition_for_about_batch_size_bytes(bootstrap):
    topic = new_topic(bootstrap, 4)
    with Producer(bootstrap, batch_size=16384) as producer:
        result = producer.send_batch(topic, pa.array([b"v" * 100] * 4000))
        result.result(30)
    parts = result.partitions.tolist()
    runs = [1]
    for previous, current in zip(parts, parts[1:]):
        if current == previous:
            runs[-1] += 1
        else:
            runs.append(1)
    # a run is about 16384 / (100 + 36 estimated overhead) = 121 records; the partition moves after each one
    assert len(runs) >= 10
    assert all(r <= 121 for r in runs)
    assert len(set(parts)) == 4
    assert sum(len(v) for v in read_all(bootstrap, topic, 4).values()) == 4000


def test_explicit_partitions_override_keys_and_nulls_fall_back_to_the_partitioner(bootstrap):
    topic = new_topic(bootstrap, 5)
    keys = [b"k%d" % i for i in range(50)]
    partition_column = pa.array([i % 5 if i % 2 else None for i in range(50)], type=pa.int32())
    with Producer(bootstrap) as producer:
        result = producer.send_batch(topic, keys, keys, partition=partition_column)
        result.result(30)
        with pytest.raises(KafkaClientError, match="partition 5"):
            producer.send_batch(topic, [b"x"], partition=5)
    assert result.partitions.tolist() == [i % 5 if i % 2 else default_partition(keys[i], 5) for i in range(50)]
    stored = read_all(bootstrap, topic, 5)
    assert Counter(p for p, records in stored.items() for _ in records) == Counter(result.partitions.tolist())


def test_on_delivery_runs_once_per_batch_and_a_closed_producer_refuses(bootstrap):
    topic = new_topic(bootstrap, 2)
    seen = []
    producer = Producer(bootstrap)
    result = producer.send_batch(
        topic,
        [b"%d" % i for i in range(300)],
        partition=1,
        batch_bytes=1024,
        on_delivery=lambda m, e: seen.append((m, e)),
    )
    producer.flush(30)
    assert sorted(m.base_offset for m, e in seen) == [m.base_offset for m in result.result(1)]
    assert all(e is None and m.partition == 1 for m, e in seen) and sum(m.record_count for m, _ in seen) == 300
    producer.close()
    with pytest.raises(ProducerClosedError):
        producer.send_batch(topic, [b"late"])


@pytest.mark.parametrize("codec", ["gzip", "zstd"])  # gzip: deflated by ISA-L (records.columnar.GZIP_LEVEL)
def test_confluent_kafka_reads_what_send_batch_wrote(bootstrap, codec):
    from confluent_kafka import OFFSET_BEGINNING
    from confluent_kafka import Consumer as CKConsumer
    from confluent_kafka import TopicPartition as CKTP

    topic = new_topic(bootstrap, 2)
    data = rows(300)
    with Producer(bootstrap, compression_type=codec) as producer:
        producer.send_batch(
            topic,
            [r[1] for r in data],
            [r[0] for r in data],
            timestamps=pa.array([r[3] for r in data], type=pa.timestamp("ms")),
            headers=[r[2] for r in data],
        ).result(30)
    consumer = CKConsumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False}
    )
    consumer.assign([CKTP(topic, p, OFFSET_BEGINNING) for p in range(2)])
    got = []

    def consumed_all() -> bool:
        for message in consumer.consume(500, timeout=0.5):
            assert message.error() is None, message.error()
            got.append(message)
        return len(got) >= len(data)

    try:
        wait_until(consumed_all, 60, f"confluent-kafka to read the {len(data)} records")
    finally:
        consumer.close()
    assert len(got) == len(data)
    expected = {r[3]: r for r in data}
    for m in got:
        key, value, headers, ts = expected[m.timestamp()[1]]
        assert (m.key(), m.value(), m.headers() or []) == (key, value, headers)


def test_another_partitioner_is_asked_row_by_row(bootstrap):
    topic = new_topic(bootstrap, 3)
    with Producer(bootstrap, partitioner="round_robin") as producer:
        result = producer.send_batch(topic, [b"%d" % i for i in range(30)], [b"same-key"] * 30)
        result.result(30)
    assert result.partitions.tolist() == [i % 3 for i in range(30)]


@pytest.mark.parametrize(
    ("estimate", "observed", "expected"),
    [
        (None, 0.5, 0.75),  # first batch of a topic: from 1.0 halfway down
        (0.5, 0.7, 0.7),  # worse than estimated: at once
        (0.5, 0.3, 0.4),  # better: halfway
        (0.3, 0.01, 0.25),  # never below 1 / MAX_RUN_FACTOR
    ],
)
def test_compression_ratio_estimate_rises_at_once_and_falls_halfway(estimate, observed, expected):
    from spark_kafkalog.client.producer.batch_producer import _observe_ratio

    ratios = {} if estimate is None else {"t": estimate}
    _observe_ratio(ratios, "t", observed)
    assert ratios["t"] == pytest.approx(expected)


def hex_values(n: int, size: int = 100) -> list[bytes]:
    """Values that compress about 2:1 (hex digits of random bytes)."""
    return [uuid.uuid4().bytes.hex().encode() * (size // 32 + 1) for _ in range(n)]


def test_compressed_batches_fill_batch_bytes_once_the_ratio_is_known(bootstrap):
    topic = new_topic(bootstrap, 1)
    batch_bytes = 64 * 1024
    with Producer(bootstrap, compression_type="lz4") as producer:
        for _ in range(3):  # the first call learns the topic's ratio
            result = producer.send_batch(topic, hex_values(4000), batch_bytes=batch_bytes)
            result.result(30)
        sizes = [len(batch.data) for batch in result.batches]
    # without the estimate every batch would hold batch_bytes of records, about half that compressed
    assert all(size > 0.7 * batch_bytes for size in sizes[:-1]), sizes
    assert max(sizes) <= producer.config.max_request_size
    assert sum(len(r) for r in read_all(bootstrap, topic, 1).values()) == 12_000


def test_a_batch_compressing_worse_than_estimated_is_split_to_fit_a_request(bootstrap):
    import os

    topic = new_topic(bootstrap, 1)
    values = [os.urandom(1000) for _ in range(1000)]  # incompressible
    with Producer(bootstrap, compression_type="zstd", max_request_size=200_000) as producer:
        producer._compression_ratios[topic] = 0.25  # as if the topic's earlier data compressed 4:1
        result = producer.send_batch(topic, values, batch_bytes=100_000)
        result.result(30)
        sizes = [len(batch.data) for batch in result.batches]
    assert max(sizes) <= 200_000 - 1024 and len(sizes) >= 5, sizes
    assert [r[1] for r in read_all(bootstrap, topic, 1)[0]] == values
