"""The client against our real broker (in-process ``EmbeddedBroker``) and real third-party clients:
produce/fetch round trips for every codec, acks and idempotence, kafka-python and confluent-kafka on
either side, ListOffsets by timestamp, admin operations, auto-created topics, the simple consumer and
the asyncio transport."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    AdminOperationError,
    Consumer,
    KafkaClient,
    KafkaClientError,
    NewTopic,
    OffsetOutOfRangeError,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.records import default_partition
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = 1_700_000_000_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0, zookeeper_connect=f"memory:client-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def bootstrap(broker):
    return broker.bootstrap_servers


def new_topic(bootstrap: str, partitions: int = 3, **config: str) -> str:
    name = f"client-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, {k.replace("_", "."): v for k, v in config.items()})])
    return name


def record(i: int) -> dict:
    return {
        "key": b"key-%d" % (i % 97),
        "value": b"value-%d-" % i + b"x" * (i % 40),
        "headers": [("seq", b"%d" % i), ("empty", None)],
        "timestamp_ms": BASE_TS + i,
    }


def read_all(bootstrap: str, topic: str, partitions: int, **client_config) -> dict[int, list]:
    out = {}
    with KafkaClient(bootstrap, **client_config) as client:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
        for tp in tps:
            out[tp.partition] = [
                r
                for fetched in client.fetch_batches(tp, 0, ends[tp])
                for r in fetched.batch.records()
                if r.offset < ends[tp]
            ]
    return out


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("acks, idempotence", [("all", True), ("1", False), ("0", False)])
def test_produce_then_fetch_returns_every_record_once_with_its_fields(bootstrap, codec, acks, idempotence):
    topic = new_topic(bootstrap, 3)
    n = 600
    with Producer(
        bootstrap, acks=acks, enable_idempotence=idempotence, compression_type=codec, linger_ms=2
    ) as producer:
        futures = [producer.send(topic, **record(i)) for i in range(n)]
        producer.flush(30)
        metas = [f.result(10) for f in futures]
    by_partition = read_all(bootstrap, topic, 3)
    seen = {}
    for p, records in by_partition.items():
        assert [r.offset for r in records] == list(range(len(records)))
        for r in records:
            i = int(dict(r.headers)["seq"])
            assert i not in seen
            seen[i] = r
            expected = record(i)
            assert (r.key, r.value, r.timestamp) == (expected["key"], expected["value"], expected["timestamp_ms"])
            assert r.headers == expected["headers"]
            assert p == default_partition(expected["key"], 3)
    assert sorted(seen) == list(range(n))
    if acks != "0":
        for i, meta in enumerate(metas):
            assert by_partition[meta.partition][meta.offset].value == record(i)["value"]


def test_records_produced_by_kafka_python_are_fetched_and_polled(bootstrap):
    from kafka import KafkaProducer

    topic = new_topic(bootstrap, 2)
    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip", linger_ms=5)
    for i in range(500):
        producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, headers=[("seq", b"%d" % i)], timestamp_ms=BASE_TS + i)
    producer.flush(30)
    producer.close(10)
    by_partition = read_all(bootstrap, topic, 2)
    values = sorted(int(r.value[1:]) for records in by_partition.values() for r in records)
    assert values == list(range(500))
    for p, records in by_partition.items():
        assert all(default_partition(r.key, 2) == p for r in records)
    with Consumer(bootstrap, auto_offset_reset="earliest", value_deserializer="string") as consumer:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        polled = []
        wait_until(lambda: polled.extend(consumer.poll(200, 1000)) or len(polled) >= 500, 20, "the 500 records")
    assert sorted(int(r.value[1:]) for r in polled) == list(range(500))
    assert all(isinstance(r.value, str) and r.timestamp == BASE_TS + int(r.value[1:]) for r in polled)


def test_records_of_our_producer_are_read_by_kafka_python(bootstrap):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP

    topic = new_topic(bootstrap, 3)
    with Producer(bootstrap, compression_type="lz4") as producer:
        for i in range(300):
            producer.send(topic, **record(i))
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100
    )
    tps = [KTP(topic, p) for p in range(3)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    got = []

    def read_all_300() -> bool:
        for tp, recs in consumer.poll(timeout_ms=300).items():
            got.extend((tp.partition, r) for r in recs)
        return len(got) >= 300

    try:
        wait_until(read_all_300, 30, "kafka-python to read the 300 records")
    finally:
        consumer.close()
    assert len(got) == 300
    for partition, r in got:
        i = int(dict(r.headers)["seq"])
        assert (r.key, r.value, r.timestamp) == (record(i)["key"], record(i)["value"], BASE_TS + i)
        assert partition == default_partition(r.key, 3)


def test_records_of_our_producer_are_read_by_confluent_kafka(bootstrap):
    from confluent_kafka import OFFSET_BEGINNING
    from confluent_kafka import Consumer as CKConsumer
    from confluent_kafka import TopicPartition as CKTP

    topic = new_topic(bootstrap, 2)
    with Producer(bootstrap, compression_type="zstd") as producer:
        for i in range(200):
            producer.send(topic, **record(i))
    consumer = CKConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
        }
    )
    consumer.assign([CKTP(topic, p, OFFSET_BEGINNING) for p in range(2)])
    got = []

    def read_all_200() -> bool:
        for message in consumer.consume(500, timeout=0.5):
            assert message.error() is None, message.error()
            got.append(message)
        return len(got) >= 200

    try:
        wait_until(read_all_200, 30, "confluent-kafka to read the 200 records")
    finally:
        consumer.close()
    assert len(got) == 200
    for m in got:
        i = int(dict(m.headers())["seq"])
        assert (m.key(), m.value(), m.timestamp()[1]) == (record(i)["key"], record(i)["value"], BASE_TS + i)


def test_list_offsets_by_timestamp_finds_the_first_offset_at_or_after_it(bootstrap):
    topic = new_topic(bootstrap, 1)
    tp = TopicPartition(topic, 0)
    stamps = [BASE_TS + 10 * i for i in range(50)]
    with Producer(bootstrap, linger_ms=0, batch_size=200) as producer:
        for i, ts in enumerate(stamps):
            producer.send(topic, b"v%d" % i, partition=0, timestamp_ms=ts)
    with KafkaClient(bootstrap) as client:
        assert client.list_offsets({tp: BASE_TS - 1}) == {tp: 0}
        assert client.list_offsets_with_timestamps({tp: BASE_TS + 15}) == {tp: (2, BASE_TS + 20)}
        assert client.list_offsets_with_timestamps({tp: BASE_TS + 10_000}) == {tp: (50, -1)}
        assert client.list_offsets_with_timestamps({tp: BASE_TS + 10_000}, no_match="raw") == {tp: (-1, -1)}
        assert client.list_offsets_with_timestamps({tp: OffsetSpec.MAX_TIMESTAMP})[tp] == (49, stamps[-1])
        assert client.list_offsets({tp: OffsetSpec.EARLIEST}) == {tp: 0}


def test_admin_lifecycle_and_fetching_below_the_log_start(bootstrap):
    topic = new_topic(bootstrap, 1, retention_ms="600000")
    with AdminClient(bootstrap) as admin:
        with pytest.raises(AdminOperationError, match="TOPIC_ALREADY_EXISTS") as info:
            admin.create_topics([NewTopic(topic, 1, 1)])
        assert info.value.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
        assert topic in admin.list_topics()
        assert admin.describe_configs(topic)["retention.ms"] == "600000"
        admin.create_partitions({topic: 3})
        description = admin.describe_topics([topic])[topic]
        assert description.num_partitions == 3
        assert all(p.leader == 0 and p.isr == (0,) for p in description.partitions)
        with Producer(bootstrap) as producer:
            for i in range(20):
                producer.send(topic, b"v%d" % i, partition=0)
        tp = TopicPartition(topic, 0)
        assert admin.delete_records({tp: 5}) == {tp: 5}
        with KafkaClient(bootstrap) as client:
            with pytest.raises(OffsetOutOfRangeError) as oor:
                list(client.fetch_batches(tp, 2, 10))
            assert (oor.value.log_start_offset, oor.value.high_watermark) == (5, 20)
            assert [r.offset for f in client.fetch_batches(tp, 5, 20) for r in f.batch.records()][0] <= 5
        admin.delete_topics([topic])
        assert topic not in admin.list_topics()
        with pytest.raises(AdminOperationError, match="UNKNOWN_TOPIC_OR_PARTITION"):
            admin.describe_topics([topic])


def test_a_producer_waits_for_the_leader_of_an_auto_created_topic(bootstrap):
    topic = f"auto-{uuid.uuid4().hex[:8]}"
    with Producer(bootstrap) as producer:
        meta = producer.send(topic, b"first").result(30)
    assert meta.offset == 0
    with KafkaClient(bootstrap) as client:
        assert client.partitions_for(topic)  # created with the broker's num.partitions
        with pytest.raises(KafkaClientError, match="UNKNOWN_TOPIC_OR_PARTITION"):
            client.partitions_for(f"never-{uuid.uuid4().hex[:8]}")  # a reader never creates topics


def test_the_simple_consumer_seeks_and_resets(bootstrap):
    topic = new_topic(bootstrap, 1)
    tp = TopicPartition(topic, 0)
    with Producer(bootstrap) as producer:
        for i in range(30):
            producer.send(topic, b"%d" % i, partition=0)
    with Consumer(bootstrap) as consumer:
        consumer.assign([tp])
        assert consumer.position(tp) == 30  # auto.offset.reset=latest
        assert consumer.poll(50) == []
        consumer.seek(tp, 25)
        assert [r.offset for r in consumer.poll(1000)] == [25, 26, 27, 28, 29]
        consumer.seek_to_beginning()
        first = consumer.poll(1000, max_records=7)
        assert [r.offset for r in first] == list(range(7))
        assert consumer.position(tp) == 7


def test_the_asyncio_transport_talks_to_the_broker(bootstrap):
    host, port = bootstrap.rsplit(":", 1)

    async def main():
        conn = await AsyncKafkaConnection.open(host, int(port))
        try:
            metas = await asyncio.gather(*(conn.request(3, API_BY_KEY[3].Request(topics=None)) for _ in range(5)))
            return conn.versions.pick(1), [m.controller_id for m in metas]
        finally:
            await conn.close()

    fetch_version, controllers = asyncio.run(main())
    assert fetch_version == 18  # the newest Fetch both sides have
    assert Counter(controllers) == Counter({0: 5})


def test_fetch_buffers_are_reused_only_after_the_batches_viewing_them_are_dropped(bootstrap):
    topic = new_topic(bootstrap, 1)
    values = [bytes([i % 251]) * 1000 for i in range(2000)]
    with Producer(bootstrap, linger_ms=5, batch_size=16 * 1024) as producer:
        for i, value in enumerate(values):
            producer.send(topic, value, b"%d" % i)
    tp = TopicPartition(topic, 0)
    kept, responses, buffer = [], 0, None
    with KafkaClient(bootstrap, max_partition_fetch_bytes=128 * 1024) as client:
        for fetched in client.fetch_batches(tp, 0, len(values)):
            if memoryview(fetched.batch.data).obj is not buffer:
                buffer = memoryview(fetched.batch.data).obj
                responses += 1
            if responses % 2:
                kept.append(fetched.batch)  # holds a view of its response buffer: every other response
        pool = client.connection(client.leader_for(tp))._pool
    assert pool.reused > 0  # later responses did land in earlier buffers
    records = [r for batch in kept for r in batch.records()]
    assert responses > 4 and len(records) > len(values) // 4
    assert all(r.value == values[int(r.key)] for r in records)  # no kept batch was overwritten
