"""The seeds' SimpleConsumer against in-process brokers on a real ZooKeeper: fetch (Fetch v0 and later,
message formats v0/v1/v2), multifetch in one request, getOffsetsBefore over several segments (ListOffsets v0),
OffsetOutOfRange with the valid range, NotLeaderForPartition from a broker that does not lead; and the
message set's partial-tail rules on bytes built here."""

from __future__ import annotations

import time

import pytest

from spark_kafkalog.legacy import (
    EARLIEST_TIME,
    LATEST_TIME,
    ByteBufferMessageSet,
    FetchRequest,
    MessageAndOffset,
    OffsetOutOfRangeException,
    Partitioner,
    Producer,
    ProducerData,
    SimpleConsumer,
)
from spark_kafkalog.legacy.simple_consumer import MessageSizeTooLargeException, NotLeaderForPartitionException
from spark_kafkalog.records import Compression, LegacyMessageSetBuilder

from .embedded import create_topic, host_port, leaders, start_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def brokers(zookeeper, tmp_path_factory):
    started = start_cluster(zookeeper, tmp_path_factory, 2, num_partitions=1, auto_create_topics_enable=False)
    yield started
    for b in started:
        b.stop()


class ToPartition(Partitioner):
    def __init__(self, partition: int) -> None:
        self.target = partition

    def partition(self, key, num_partitions: int) -> int:
        return self.target


def produce(brokers, topic: str, values, *, partition: int = 0, each_alone: bool = True, **settings) -> None:
    """Send ``values`` (str) with key ``k<i>`` to ``partition``; one Produce request (batch) per value."""
    config = {
        "metadata.broker.list": brokers[0].bootstrap_servers,
        "serializer.class": "kafka.serializer.StringEncoder",
        "partitioner.class": ToPartition(partition),
        **settings,
    }
    with Producer(config) as producer:
        if each_alone:
            for i, v in enumerate(values):
                producer.send(ProducerData(topic, f"k{i}", v))
        else:
            producer.send([ProducerData(topic, f"k{i}", v) for i, v in enumerate(values)])


def consumer_of(brokers, topic: str, partition: int = 0, **kwargs) -> SimpleConsumer:
    """A SimpleConsumer of the broker leading ``topic``-``partition``."""
    leader = leaders(brokers[0], topic)[partition]
    host, port = host_port(brokers[leader])
    return SimpleConsumer(host, port, 10000, 64 * 1024, "legacy-test", **kwargs)


def values(message_set) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(m.offset, m.message.key, m.message.value) for m in message_set]


# -- fetch ---------------------------------------------------------------------------------------------
def test_fetch_returns_messages_and_offsets_from_the_requested_offset(brokers):
    topic = create_topic(brokers)
    produce(brokers, topic, ["a", "b", "c", "d"])
    with consumer_of(brokers, topic) as consumer:
        whole = consumer.fetch(FetchRequest(topic, 0, 0, 100_000))
        assert values(whole) == [(i, f"k{i}".encode(), v.encode()) for i, v in enumerate("abcd")]
        first = next(iter(whole))
        assert isinstance(first, MessageAndOffset) and (first.offset, first.next_offset) == (0, 1)
        assert first.message.magic == 0 and first.message.timestamp == -1  # Fetch v0: message format v0
        assert whole.valid_bytes == whole.size > 0 and whole.high_watermark == 4
        assert values(consumer.fetch(FetchRequest(topic, 0, 2, 100_000))) == [(2, b"k2", b"c"), (3, b"k3", b"d")]
        assert values(consumer.fetch(FetchRequest(topic, 0, 4, 100_000))) == []  # at the end: nothing, no error


@pytest.mark.parametrize(("fetch_version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 1), (4, 2), (12, 2)])
def test_fetch_versions_bring_message_formats_v0_v1_v2(brokers, fetch_version, magic):
    topic = create_topic(brokers)
    produce(brokers, topic, ["x", "y"], each_alone=False, **{"compression.codec": "gzip"})
    with consumer_of(brokers, topic, fetch_version=fetch_version) as consumer:
        fetched = list(consumer.fetch(FetchRequest(topic, 0, 1, 100_000)))
    assert [(m.offset, m.message.value, m.message.magic) for m in fetched] == [(1, b"y", magic)]
    assert fetched[0].message.compression == Compression.GZIP  # the compressed wrapper starts before offset 1
    assert (fetched[0].message.timestamp > 0) == (magic > 0)


def test_fetch_stops_at_max_size_and_says_when_no_message_fits(brokers):
    topic = create_topic(brokers)
    produce(brokers, topic, ["m" * 50] * 5)
    with consumer_of(brokers, topic) as consumer:
        whole = consumer.fetch(FetchRequest(topic, 0, 0, 100_000))
        one_batch = whole.size // 5  # every message came in a batch of its own
        part = values(consumer.fetch(FetchRequest(topic, 0, 0, 2 * one_batch + 10)))
        assert 1 <= len(part) < 5 and [o for o, _, _ in part] == list(range(len(part)))
        with pytest.raises(MessageSizeTooLargeException, match=r"max_size 20 at offset 1 of .*raise FetchRequest"):
            consumer.fetch(FetchRequest(topic, 0, 1, 20))


def test_offset_out_of_range_names_partition_offset_and_valid_range(brokers):
    topic = create_topic(brokers)
    produce(brokers, topic, ["a", "b", "c"])
    with consumer_of(brokers, topic) as consumer:
        with pytest.raises(OffsetOutOfRangeException) as info:
            consumer.fetch(FetchRequest(topic, 0, 99, 1000))
    e = info.value
    assert (e.topic, e.partition, e.offset, e.log_start_offset, e.high_watermark) == (topic, 0, 99, 0, 3)
    assert f"offset 99 of {topic}-0" in str(e) and "[0, 3)" in str(e)


def test_a_broker_that_does_not_lead_the_partition_says_so(brokers):
    topic = create_topic(brokers)
    follower = brokers[1 - leaders(brokers[0], topic)[0]]
    host, port = host_port(follower)
    with SimpleConsumer(host, port, 10000, 64 * 1024, "legacy-test") as consumer:
        with pytest.raises(NotLeaderForPartitionException, match=f"does not lead {topic}-0"):
            consumer.fetch(FetchRequest(topic, 0, 0, 1000))
        with pytest.raises(NotLeaderForPartitionException):
            consumer.get_offsets_before(topic, 0, LATEST_TIME, 1)


# -- multifetch ----------------------------------------------------------------------------------------
def test_multifetch_reads_two_partitions_in_one_request_in_request_order(brokers):
    topic = create_topic(brokers, partitions=4)
    by_leader: dict[int, list[int]] = {}
    for p, leader in leaders(brokers[0], topic).items():
        by_leader.setdefault(leader, []).append(p)
    first, second = next(ps for ps in by_leader.values() if len(ps) >= 2)[:2]
    produce(brokers, topic, ["a0", "a1"], partition=first)
    produce(brokers, topic, ["b0", "b1", "b2"], partition=second)
    with consumer_of(brokers, topic, partition=first) as consumer:
        consumer.get_offsets_before(topic, first, LATEST_TIME, 1)  # connected
        requests_before = consumer._conn.protocol._next_correlation_id
        response = consumer.multifetch([FetchRequest(topic, second, 1, 10_000), FetchRequest(topic, first, 0, 10_000)])
        assert consumer._conn.protocol._next_correlation_id == requests_before + 1  # one Fetch request
        assert [(s.partition, values(s)) for s in response] == [
            (second, [(1, b"k1", b"b1"), (2, b"k2", b"b2")]),
            (first, [(0, b"k0", b"a0"), (1, b"k1", b"a1")]),
        ]
        mixed = consumer.multifetch([FetchRequest(topic, first, 7, 10_000), FetchRequest(topic, second, 2, 10_000)])
    with pytest.raises(OffsetOutOfRangeException, match=r"\[0, 2\)"):
        list(mixed[0])  # each message set raises its own partition's error when iterated
    assert values(mixed[1]) == [(2, b"k2", b"b2")]


# -- getOffsetsBefore ---------------------------------------------------------------------------------
def test_get_offsets_before_answers_segment_offsets_for_latest_earliest_and_a_time(brokers):
    topic = create_topic(brokers, config={"segment.bytes": "100"})  # every batch rolls a new segment
    before_all = int(time.time() * 1000) - 1
    time.sleep(0.05)
    produce(brokers, topic, ["a", "b", "c"])  # segments 0, 1, 2
    time.sleep(0.3)
    between = int(time.time() * 1000)
    time.sleep(0.3)
    produce(brokers, topic, ["d", "e"])  # segments 3, 4 (the active one)
    with consumer_of(brokers, topic) as consumer:
        assert consumer.get_offsets_before(topic, 0, LATEST_TIME, 10) == [5, 4, 3, 2, 1, 0]
        assert consumer.get_offsets_before(topic, 0, LATEST_TIME, 2) == [5, 4]
        assert consumer.get_offsets_before(topic, 0, EARLIEST_TIME, 10) == [0]
        assert consumer.get_offsets_before(topic, 0, between, 10) == [2, 1, 0]
        assert consumer.get_offsets_before(topic, 0, between, 2) == [2, 1]
        assert consumer.get_offsets_before(topic, 0, before_all, 10) == []
        # the latest offset is where the next fetch starts; the earliest one fetches everything
        assert values(consumer.fetch(FetchRequest(topic, 0, 5, 1000))) == []
        assert [v for _, _, v in values(consumer.fetch(FetchRequest(topic, 0, 0, 100)))] == [
            b"a"
        ]  # one segment per read


# -- message sets on their own -------------------------------------------------------------------------
def test_partial_trailing_message_is_ignored_and_counted_out_of_valid_bytes():
    builder = LegacyMessageSetBuilder(0, base_offset=10)
    for v in (b"one", b"two", b"three"):
        builder.append(None, b"k", v)
    data = builder.build()
    cut = data[:-4]
    message_set = ByteBufferMessageSet(cut, topic="t", partition=0, fetch_offset=11)
    assert [(m.offset, m.message.value) for m in message_set] == [(11, b"two")]
    last_entry = 12 + 4 + 1 + 1 + (4 + 1) + (4 + 5)  # offset+size, crc, magic, attributes, key b'k', value b'three'
    assert (message_set.size, message_set.valid_bytes) == (len(cut), len(data) - last_entry)


def test_compressed_wrapper_yields_only_messages_at_or_after_the_fetch_offset():
    builder = LegacyMessageSetBuilder(1, Compression.GZIP, base_offset=20)
    for i in range(4):
        builder.append(1000 + i, None, b"v%d" % i)
    message_set = ByteBufferMessageSet(builder.build(), fetch_offset=22)
    assert [(m.offset, m.next_offset, m.message.value, m.message.timestamp) for m in message_set] == [
        (22, 23, b"v2", 1002),
        (23, 24, b"v3", 1003),
    ]
    assert message_set.valid_bytes == message_set.size


def test_reads_what_kafka_python_produced_in_record_batches(brokers):
    from kafka import KafkaProducer

    topic = create_topic(brokers)
    producer = KafkaProducer(bootstrap_servers=brokers[0].bootstrap_servers, compression_type="lz4", linger_ms=50)
    for i in range(6):
        producer.send(topic, value=b"kp-%d" % i, key=b"k", partition=0)
    producer.flush(30)
    producer.close()
    with consumer_of(brokers, topic) as consumer:  # Fetch v0: the broker down-converts the v2 batches
        fetched = list(consumer.fetch(FetchRequest(topic, 0, 2, 100_000)))
    assert [(m.offset, m.message.key, m.message.value, m.message.magic) for m in fetched] == [
        (i, b"k", b"kp-%d" % i, 0) for i in range(2, 6)
    ]


def test_valid_range_is_asked_with_list_offsets_v1_at_a_broker_without_v0():
    from types import SimpleNamespace

    from spark_kafkalog.client.network.versions import ApiVersionTable

    class KafkaFourConnection:
        """ListOffsets v1-11 only (Kafka 4.0+, KIP-896); answers log start 2 and log end 9."""

        closed = False
        versions = ApiVersionTable({1: (4, 18), 2: (1, 11)}, peer="k4:9092")

        def __init__(self) -> None:
            self.versions_asked: list[int] = []

        def request(self, api_key, body, *, version, timeout):
            self.versions_asked.append(version)
            (topic,) = body.topics
            (part,) = topic.partitions
            offset = {EARLIEST_TIME: 2, LATEST_TIME: 9}[part.timestamp]
            p = SimpleNamespace(partition_index=part.partition_index, error_code=0, offset=offset, timestamp=-1)
            return SimpleNamespace(topics=[SimpleNamespace(name=topic.name, partitions=[p])])

    consumer = SimpleConsumer("k4", 9092, 10000, 1024, "legacy-test")
    conn = KafkaFourConnection()
    consumer._conn = conn  # type: ignore[assignment]
    from spark_kafkalog.client import TopicPartition

    assert consumer._valid_ranges([TopicPartition("t", 0)]) == {TopicPartition("t", 0): (2, 9)}
    assert conn.versions_asked == [1, 1]
