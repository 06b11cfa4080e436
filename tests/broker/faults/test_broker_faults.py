"""Faults on an in-process broker, seen through kafkalog's client: a producer retries a pushed
NOT_LEADER_OR_FOLLOWER and writes once, a per-partition Fetch error hits only that partition, round-trip
times are measurable, dropped connections are re-opened, and injections end with their ``with`` or ``clear``."""

from __future__ import annotations

import time
import uuid

import confluent_kafka
import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.waiting import wait_until


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0, zookeeper_connect=f"memory:faults-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("f")
    )
    b.start()
    yield b
    b.stop()


@pytest.fixture
def topic(broker):
    name = f"faults-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, 2, 1, {})])
    yield name
    broker.faults.clear()


def end_offset(broker, tp):
    with KafkaClient(broker.bootstrap_servers) as client:
        return client.list_offsets({tp: OffsetSpec.LATEST})[tp]


def connect(broker, client_id="raw"):
    host, port = broker.bootstrap_servers.rsplit(":", 1)
    return SocketConnection.open(host, int(port), client_id=client_id, request_timeout=10)


def test_a_pushed_not_leader_makes_the_producer_retry_and_the_records_are_written_once(broker, topic):
    with broker.faults.track_requests() as log:
        with broker.faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"] * 2) as injection:
            with Producer(broker.bootstrap_servers, retry_backoff_ms=10) as producer:
                metadata = producer.send(topic, b"once", partition=0).result(20)
            assert injection.remaining == 0 and not injection.active
    assert metadata.offset == 0
    assert log.count("Produce") == 3  # two answered with the error, the third written
    assert end_offset(broker, TopicPartition(topic, 0)) == 1


def fetch(conn, topic, version, topic_id):
    api = API_BY_KEY[ApiKey.FETCH]
    t = api.Request.FetchTopic
    key = {"topic_id": topic_id} if version >= 13 else {"topic": topic}
    partitions = [t.FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=1 << 20) for p in (0, 1)]
    body = api.Request(max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, topics=[t(**key, partitions=partitions)])
    return conn.request(ApiKey.FETCH, body, timeout=10, version=version)


@pytest.mark.parametrize("version", [12, 18])  # topics by name, by id
def test_a_per_partition_fetch_error_hits_only_that_partition(broker, topic, version):
    with Producer(broker.bootstrap_servers) as producer:
        for p in (0, 1):
            producer.send(topic, b"v", partition=p)
        producer.flush(20)
    topic_id = broker.call(lambda: broker.broker.metadata.topics[topic].topic_id)
    conn = connect(broker)
    try:
        with broker.faults.push_errors("Fetch", ["NOT_LEADER_OR_FOLLOWER"], topic=topic, partition=1) as injection:
            response = fetch(conn, topic, version, topic_id)
            assert injection.remaining == 0
        after = fetch(conn, topic, version, topic_id)
    finally:
        conn.close()
    parts = {p.partition_index: p for p in response.responses[0].partitions}
    assert len(response.responses) == 1 and response.error_code == 0
    assert parts[1].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and parts[1].records is None
    assert parts[0].error_code == 0 and parts[0].high_watermark == 1 and parts[0].records
    assert {p.partition_index: p.error_code for p in after.responses[0].partitions} == {0: 0, 1: 0}


def test_set_rtt_delays_the_api_measurably_and_ends_with_its_context(broker, topic):
    tp = TopicPartition(topic, 0)
    with KafkaClient(broker.bootstrap_servers) as client:
        client.list_offsets({tp: OffsetSpec.LATEST})  # connected, metadata known
        with broker.faults.set_rtt(300, api="ListOffsets"):
            start = time.monotonic()
            client.list_offsets({tp: OffsetSpec.LATEST})
            delayed = time.monotonic() - start
        start = time.monotonic()
        client.list_offsets({tp: OffsetSpec.LATEST})
        plain = time.monotonic() - start
    assert delayed >= 0.3 and plain < 0.25


def test_a_pushed_error_with_rtt_is_answered_late(broker, topic):
    conn = connect(broker)
    try:
        broker.faults.push_errors("Metadata", ["LEADER_NOT_AVAILABLE"], rtt_ms=250)
        api = API_BY_KEY[ApiKey.METADATA]
        start = time.monotonic()
        response = conn.request(ApiKey.METADATA, api.Request.from_dict({"topics": [{"name": topic}]}), timeout=10)
        took = time.monotonic() - start
    finally:
        conn.close()
    assert took >= 0.25
    assert [t.error_code for t in response.topics] == [ErrorCode.LEADER_NOT_AVAILABLE]


def test_drop_connections_closes_the_matching_clients_and_the_client_reconnects(broker, topic):
    tp = TopicPartition(topic, 0)
    other = connect(broker, client_id="bystander")
    try:
        other.request(ApiKey.API_VERSIONS, API_BY_KEY[ApiKey.API_VERSIONS].Request(), timeout=10, version=0)
        with KafkaClient(broker.bootstrap_servers, client_id="victim") as client:
            before = client.list_offsets({tp: OffsetSpec.LATEST})[tp]
            with broker.faults.track_requests() as log:
                assert broker.faults.drop_connections(client_id="victim") >= 1
                wait_until(
                    lambda: client.list_offsets({tp: OffsetSpec.LATEST})[tp] == before, 20, "a re-connected answer"
                )
            assert any(r.api == "ApiVersions" and r.client_id == "victim" for r in log.requests)  # a new connection
        response = other.request(ApiKey.API_VERSIONS, API_BY_KEY[ApiKey.API_VERSIONS].Request(), timeout=10, version=0)
        assert response.error_code == 0  # the bystander's connection was kept
    finally:
        other.close()


def test_clear_undoes_everything_and_requests_are_served_again(broker, topic):
    broker.faults.push_errors("ListOffsets", ["UNKNOWN_SERVER_ERROR"] * 5)
    broker.faults.set_rtt(5000)
    assert len(broker.faults.active()) == 2
    broker.faults.clear()
    assert broker.faults.active() == [] and not broker.faults.live
    start = time.monotonic()
    assert end_offset(broker, TopicPartition(topic, 0)) == 0
    assert time.monotonic() - start < 5


def test_a_per_partition_produce_error_fails_only_that_partition_and_both_are_written_once(broker, topic):
    with broker.faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"] * 2, topic=topic, partition=0) as injection:
        with Producer(broker.bootstrap_servers, retry_backoff_ms=10, linger_ms=20) as producer:
            futures = [producer.send(topic, b"v%d" % p, partition=p) for p in (0, 1)]
            offsets = [f.result(20).offset for f in futures]
        assert injection.remaining == 0
    assert offsets == [0, 0]
    assert [end_offset(broker, TopicPartition(topic, p)) for p in (0, 1)] == [1, 1]


def test_confluent_kafka_retries_pushed_produce_errors_and_delivers_once(broker, topic):

    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "retry.backoff.ms": 10})
    reports = []
    with broker.faults.push_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"] * 2) as injection:
        producer.produce(topic, b"v", partition=1, on_delivery=lambda err, msg: reports.append((err, msg.offset())))
        assert producer.flush(20) == 0
        assert injection.remaining == 0
    assert reports == [(None, 0)]
    assert end_offset(broker, TopicPartition(topic, 1)) == 1


def test_a_per_partition_fetch_error_reaches_a_partition_an_incremental_fetch_leaves_to_its_session(broker, topic):
    api = API_BY_KEY[ApiKey.FETCH]
    t = api.Request.FetchTopic
    partitions = [t.FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=1 << 20) for p in (0, 1)]
    conn = connect(broker)
    try:
        full = conn.request(
            ApiKey.FETCH,
            api.Request(
                max_wait_ms=0,
                min_bytes=0,
                session_id=0,
                session_epoch=0,
                topics=[t(topic=topic, partitions=partitions)],
            ),
            timeout=10,
            version=12,
        )
        assert full.error_code == 0 and full.session_id != 0
        with broker.faults.push_errors("Fetch", ["FENCED_LEADER_EPOCH"], topic=topic, partition=1) as injection:
            incremental = conn.request(
                ApiKey.FETCH,
                api.Request(max_wait_ms=0, min_bytes=0, session_id=full.session_id, session_epoch=1, topics=[]),
                timeout=10,
                version=12,
            )
            assert injection.remaining == 0
    finally:
        conn.close()
    assert incremental.error_code == 0 and incremental.session_id == full.session_id
    answered = {(r.topic, p.partition_index): p.error_code for r in incremental.responses for p in r.partitions}
    assert answered == {(topic, 1): ErrorCode.FENCED_LEADER_EPOCH}


def test_set_api_version_narrows_what_apiversions_offers_and_clients_fall_back(broker, topic):
    before = connect(broker)  # negotiated before the injection: it may still send v9
    produce_max = before.versions.broker_ranges[ApiKey.PRODUCE].hi
    with broker.faults.set_api_version("Produce", 3, 8) as injection:
        conn = connect(broker)
        narrowed = conn.versions.broker_ranges[ApiKey.PRODUCE]
        assert (narrowed.lo, narrowed.hi) == (3, 8)
        with broker.faults.track_requests() as log:
            with Producer(broker.bootstrap_servers) as producer:  # kafkalog's client picks v8
                producer.send(topic, b"at v8", partition=0).result(20)
            p = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
            p.produce(topic, b"by librdkafka", partition=0)
            assert p.flush(20) == 0
        assert {r.version for r in log.requests if r.api == "Produce"} == {8}
        answer = before.request(ApiKey.PRODUCE, produce_body(topic), timeout=10, version=9)  # no longer offered
        assert answer.responses[0].partition_responses[0].error_code == ErrorCode.UNSUPPORTED_VERSION
        assert injection.active
    assert connect(broker).versions.broker_ranges[ApiKey.PRODUCE].hi == produce_max  # undone with its with
    assert end_offset(broker, TopicPartition(topic, 0)) == 2


def test_set_api_version_minus_one_leaves_the_api_out(broker, topic):
    with broker.faults.set_api_version("DescribeTopicPartitions", -1, -1):
        assert ApiKey.DESCRIBE_TOPIC_PARTITIONS not in connect(broker).versions.broker_ranges
        with AdminClient(broker.bootstrap_servers) as admin:  # describe_topics does without it (Metadata)
            assert admin.describe_topics([topic])[topic].partitions[1].partition == 1
    assert ApiKey.DESCRIBE_TOPIC_PARTITIONS in connect(broker).versions.broker_ranges


@pytest.mark.parametrize(
    "api, lo, hi, error",
    [
        ("ApiVersions", 0, 3, "cannot be narrowed"),
        ("Fetch", 5, 4, "min_version <= max_version"),
        ("Fetch", -1, 4, "-1 and -1"),
        ("NoSuchApi", 0, 1, "NoSuchApi"),
    ],
)
def test_set_api_version_refuses_what_it_cannot_do(broker, api, lo, hi, error):
    with pytest.raises(ValueError, match=error):
        broker.faults.set_api_version(api, lo, hi)
    assert broker.faults.active() == []


def produce_body(topic):
    from spark_kafkalog.records.batch_builder import build_batch

    api = API_BY_KEY[ApiKey.PRODUCE]
    data = api.Request.TopicProduceData
    part = data.PartitionProduceData(index=0, records=build_batch([(0, None, b"refused", ())]))
    return api.Request(acks=1, timeout_ms=5000, topic_data=[data(name=topic, partition_data=[part])])
