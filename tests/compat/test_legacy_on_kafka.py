"""The seeds' 0.8 APIs (``spark_kafkalog.legacy``) against Apache Kafka: Producer at each Produce version,
SimpleConsumer (Fetch, getOffsetsBefore = ListOffsets v0) and the ZooKeeper ConsumerConnector registering in
Kafka 3.9's own ZooKeeper chroot.

What each Kafka serves (its ApiVersions, asserted below): Kafka 3.9.1 still serves every old version (Produce
v0-11, Fetch v0-17, ListOffsets v0-9), so every legacy wire format runs there. Kafka 4.4.0 (KIP-896) serves
Fetch v4+ and ListOffsets v1+, and advertises Produce v0+ but refuses v0-2 in the request (it lists them only
for old librdkafka builds): our legacy clients must fail clearly at those versions, not hang or garble.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from spark_kafkalog.client import AdminClient, TopicPartition
from spark_kafkalog.client.errors import NoCommonVersionError
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.legacy import (
    EARLIEST_TIME,
    LATEST_TIME,
    ConsumerConnector,
    ConsumerTimeoutException,
    FetchRequest,
    Partitioner,
    Producer,
    ProducerData,
    SimpleConsumer,
)
from spark_kafkalog.legacy.event_handler import FailedToSendMessageException
from tests.waiting import wait_until

from .conftest import new_topic

pytestmark = pytest.mark.compat

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
SERVED = {  # (api key): (lowest, highest) in each Kafka's ApiVersions
    "3.9.1": {PRODUCE: (0, 11), FETCH: (0, 17), LIST_OFFSETS: (0, 9)},
    "4.4.0": {PRODUCE: (0, 13), FETCH: (4, 18), LIST_OFFSETS: (1, 11)},
}
PRODUCE_REFUSED = {"3.9.1": set(), "4.4.0": {0, 1, 2}}  # advertised but refused in the request (KIP-896)


class ToPartition(Partitioner):
    def __init__(self, partition: int) -> None:
        self.target = partition

    def partition(self, key, num_partitions: int) -> int:
        return self.target


def legacy_producer(bootstrap: str, partition: int = 0, **settings) -> Producer:
    return Producer(
        {
            "metadata.broker.list": bootstrap,
            "serializer.class": "kafka.serializer.StringEncoder",
            "partitioner.class": ToPartition(partition),
            "message.send.max.retries": 0,
            **settings,
        }
    )


def simple_consumer(kafka, **kwargs) -> SimpleConsumer:
    host, port = kafka.bootstrap_servers.rsplit(":", 1)
    return SimpleConsumer(host, int(port), 10000, 64 * 1024, "legacy-compat", **kwargs)


def test_kafkas_api_versions_are_what_the_legacy_tests_expect(kafka):
    host, port = kafka.bootstrap_servers.rsplit(":", 1)
    conn = SocketConnection.open(host, int(port), client_id="legacy-compat", connect_timeout=10, request_timeout=10)
    try:
        ranges = {k: (v.lo, v.hi) for k, v in conn.versions.broker_ranges.items() if k in SERVED[kafka.version]}
    finally:
        conn.close()
    assert ranges == SERVED[kafka.version]


@pytest.mark.parametrize("version", list(range(10)) + ["latest"])
def test_legacy_producer_at_each_produce_version(kafka, version):
    topic = new_topic(kafka.bootstrap_servers, 1)
    with legacy_producer(kafka.bootstrap_servers, **{"produce.api.version": version}) as producer:
        if version in PRODUCE_REFUSED[kafka.version]:
            with pytest.raises(FailedToSendMessageException, match=r"refuses Produce v\d: .*KIP-896"):
                producer.send(ProducerData(topic, "k0", "refused"))
            return
        producer.send([ProducerData(topic, f"k{i}", f"v{i}") for i in range(3)])
        producer.send(ProducerData(topic, "k3", ["v3", "v4"]))  # two messages, one key
    with simple_consumer(kafka, fetch_version=max(4, SERVED[kafka.version][FETCH][0])) as consumer:
        got = [(m.offset, m.message.key, m.message.value) for m in consumer.fetch(FetchRequest(topic, 0, 0, 100_000))]
    assert got == [(0, b"k0", b"v0"), (1, b"k1", b"v1"), (2, b"k2", b"v2"), (3, b"k3", b"v3"), (4, b"k3", b"v4")]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_legacy_producer_compressed_message_sets_read_back(kafka, codec):
    topic = new_topic(kafka.bootstrap_servers, 1)
    version = SERVED[kafka.version][PRODUCE][0] if not PRODUCE_REFUSED[kafka.version] else 3
    with legacy_producer(kafka.bootstrap_servers, **{"produce.api.version": version, "compression.codec": codec}) as p:
        p.send([ProducerData(topic, f"k{i}", f"v{i}") for i in range(10)])
    with simple_consumer(kafka, fetch_version=SERVED[kafka.version][FETCH][0]) as consumer:
        fetched = list(consumer.fetch(FetchRequest(topic, 0, 4, 100_000)))
    assert [(m.offset, m.message.key, m.message.value) for m in fetched] == [
        (i, b"k%d" % i, b"v%d" % i) for i in range(4, 10)
    ]


@pytest.mark.parametrize("fetch_version", [0, 1, 2, 3, 4, 12])
def test_simple_consumer_fetch_at_each_version_or_a_clear_refusal(kafka, fetch_version):
    topic = new_topic(kafka.bootstrap_servers, 1)
    with legacy_producer(kafka.bootstrap_servers, **{"produce.api.version": 3}) as producer:
        producer.send([ProducerData(topic, f"k{i}", f"v{i}") for i in range(4)])
    lo, hi = SERVED[kafka.version][FETCH]
    with simple_consumer(kafka, fetch_version=fetch_version) as consumer:
        if not lo <= fetch_version <= hi:
            started = time.monotonic()
            with pytest.raises(NoCommonVersionError, match=rf"Fetch v\({lo}, {hi}\)|Fetch v{lo}-{hi}|Fetch"):
                consumer.fetch(FetchRequest(topic, 0, 0, 100_000))
            assert time.monotonic() - started < 5
            return
        message_set = consumer.fetch(FetchRequest(topic, 0, 1, 100_000))
        fetched = list(message_set)
    assert [(m.offset, m.next_offset, m.message.key, m.message.value) for m in fetched] == [
        (i, i + 1, b"k%d" % i, b"v%d" % i) for i in range(1, 4)
    ]
    # Kafka down-converts for Fetch v0-3: magic 0 for v0/v1, magic 1 (timestamps) for v2/v3, batches from v4
    assert {m.message.magic for m in fetched} == {0 if fetch_version < 2 else 1 if fetch_version < 4 else 2}
    assert message_set.high_watermark == 4


def test_simple_consumer_offset_out_of_range_names_the_valid_range(kafka):
    topic = new_topic(kafka.bootstrap_servers, 1)
    with legacy_producer(kafka.bootstrap_servers, **{"produce.api.version": 3}) as producer:
        producer.send([ProducerData(topic, f"k{i}", f"v{i}") for i in range(3)])
    from spark_kafkalog.legacy import OffsetOutOfRangeException

    with simple_consumer(kafka, fetch_version=4) as consumer:
        with pytest.raises(OffsetOutOfRangeException) as info:
            consumer.fetch(FetchRequest(topic, 0, 99, 1000))
    e = info.value
    # the valid range: asked with ListOffsets v0 on Kafka 3.9, with v1 on Kafka 4 (which dropped v0)
    assert (e.topic, e.partition, e.offset, e.log_start_offset, e.high_watermark) == (topic, 0, 99, 0, 3)
    assert f"offset 99 of {topic}-0" in str(e) and "[0, 3)" in str(e)


def test_get_offsets_before_over_segments_or_a_clear_refusal(kafka):
    bootstrap = kafka.bootstrap_servers
    if SERVED[kafka.version][LIST_OFFSETS][0] > 0:
        topic = new_topic(bootstrap, 1)
        with simple_consumer(kafka) as consumer:
            with pytest.raises(NoCommonVersionError, match="ListOffsets"):
                consumer.get_offsets_before(topic, 0, LATEST_TIME, 10)
        return
    topic = new_topic(bootstrap, 1, segment_bytes="200")  # every batch (about 140 bytes) rolls a segment
    with legacy_producer(bootstrap, **{"produce.api.version": 3}) as producer:
        for i in range(3):
            producer.send(ProducerData(topic, f"k{i}", f"value-{i}-" + "x" * 60))
        time.sleep(0.3)
        between = int(time.time() * 1000)
        time.sleep(0.3)
        for i in range(3, 5):
            producer.send(ProducerData(topic, f"k{i}", f"value-{i}-" + "x" * 60))
    with simple_consumer(kafka) as consumer:
        latest = consumer.get_offsets_before(topic, 0, LATEST_TIME, 10)
        assert latest == [5, 4, 3, 2, 1, 0]
        assert consumer.get_offsets_before(topic, 0, LATEST_TIME, 2) == [5, 4]
        assert consumer.get_offsets_before(topic, 0, EARLIEST_TIME, 10) == [0]
        # segments last modified at or before `between`: the first three (bases 0, 1, 2)
        assert consumer.get_offsets_before(topic, 0, between, 10) == [2, 1, 0]


# Kafka 3.9 only: 4.4 runs in KRaft mode, with no ZooKeeper for the connector to coordinate in.
@pytest.mark.parametrize("kafka", ["kafka-3.9"], indirect=True)
def test_consumer_connector_registers_in_kafkas_zookeeper_and_consumes(kafka):
    assert kafka.zookeeper_connect is not None
    from kazoo.client import KazooClient

    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    for p in range(3):
        with legacy_producer(bootstrap, p) as producer:
            producer.send([ProducerData(topic, f"k{p}-{i}", f"v{p}-{i}") for i in range(5)])
    group = f"legacy-{uuid.uuid4().hex[:8]}"
    config = {
        "zookeeper.connect": kafka.zookeeper_connect,
        "group.id": group,
        "auto.offset.reset": "smallest",
        "auto.commit.enable": "false",
        "consumer.timeout.ms": "500",
    }
    zk = KazooClient(hosts=kafka.zookeeper_connect)
    zk.start(10)
    connector = ConsumerConnector({**config, "consumer.id": "c1"})
    try:
        (stream,) = connector.create_message_streams({topic: 1})[topic]
        # registered next to Kafka's own znodes, in Kafka's chroot
        assert zk.exists(f"/brokers/ids/{kafka.broker_id}") and zk.exists(f"/brokers/topics/{topic}")
        (consumer_id,) = zk.get_children(f"/consumers/{group}/ids")
        assert consumer_id == f"{group}_c1"
        registration = json.loads(zk.get(f"/consumers/{group}/ids/{consumer_id}")[0])
        assert (registration["subscription"], registration["pattern"]) == ({topic: 1}, "static")
        assert sorted(zk.get_children(f"/consumers/{group}/owners/{topic}")) == ["0", "1", "2"]
        assert {zk.get(f"/consumers/{group}/owners/{topic}/{p}")[0].decode() for p in range(3)} == {f"{consumer_id}-0"}
        got = []

        def drain() -> bool:
            try:
                while True:
                    got.append(next(stream))
            except ConsumerTimeoutException:
                return len(got) >= 15

        wait_until(drain, 60, "15 messages from the connector")
        assert sorted((m.partition, m.offset, m.key, m.message) for m in got) == [
            (p, i, b"k%d-%d" % (p, i), b"v%d-%d" % (p, i)) for p in range(3) for i in range(5)
        ]
        connector.commit_offsets()
        assert [zk.get(f"/consumers/{group}/offsets/{topic}/{p}")[0] for p in range(3)] == [b"5"] * 3
    finally:
        connector.shutdown()
    assert zk.get_children(f"/consumers/{group}/ids") == []
    zk.stop()
    zk.close()

    # offsets.storage=kafka: the commits go to Kafka 3.9's group coordinator (OffsetCommit v1, generation -1)
    with legacy_producer(bootstrap, 1) as producer:
        producer.send(ProducerData(topic, "late", "after-restart"))
    with ConsumerConnector(
        {**config, "consumer.id": "c2", "offsets.storage": "kafka", "dual.commit.enabled": "true"}
    ) as c:
        (stream,) = c.create_message_streams({topic: 1})[topic]
        more = []

        def drain_more() -> bool:
            try:
                while True:
                    more.append(next(stream))
            except ConsumerTimeoutException:
                return len(more) >= 1

        wait_until(drain_more, 60, "the record produced after the first connector stopped")
        assert [(m.partition, m.offset, m.message) for m in more] == [(1, 5, b"after-restart")]  # nothing read twice
        c.commit_offsets()
    with AdminClient(bootstrap) as admin:
        committed = {tp: o.offset for tp, o in admin.list_group_offsets(group).items()}
    assert committed == {TopicPartition(topic, 0): 5, TopicPartition(topic, 1): 6, TopicPartition(topic, 2): 5}
