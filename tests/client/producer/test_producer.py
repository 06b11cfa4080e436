"""Producer against scripted brokers: batching, placement, acks, compression, retries, idempotent resends,
timeouts, and the errors raised by send()."""

from __future__ import annotations

import inspect
import threading
import time

import pytest

from spark_kafkalog.client import (
    KafkaClientError,
    KafkaTimeoutError,
    NoCommonVersionError,
    Producer,
    ProducerClosedError,
    RecordMetadata,
    RecordTooLargeError,
)
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import Compression, decode_batch_records, default_partition, parse_batch_header

from ..handlers import ProduceLog, init_producer_id
from ..scripted_broker import CLOSE, NO_RESPONSE, ClusterView, ScriptedBroker, default_api_ranges

FAST = {
    "retry_backoff_ms": 5,
    "retry_backoff_max_ms": 20,
    "default_api_timeout_ms": 5000,
    "request_timeout_ms": 5000,
    "linger_ms": 2,
}


@pytest.fixture
def cluster():
    brokers = [ScriptedBroker(0), ScriptedBroker(1)]
    view = ClusterView(brokers, topics={"t": {0: 0, 1: 1, 2: 0}})
    view.install()
    logs = [ProduceLog(), ProduceLog()]
    for b, log in zip(brokers, logs):
        b.handlers[0] = log.handler
        b.handlers[22] = init_producer_id(1000 + 100 * b.node_id)
    view.logs = logs
    yield view
    for b in brokers:
        b.stop()


def records_of(log: ProduceLog, partition: int | None = None):
    return [
        (p, r.key, r.value)
        for _, p, data in log.batches
        if partition is None or p == partition
        for r in decode_batch_records(data)
    ]


def test_records_are_batched_per_partition_and_futures_report_offsets(cluster):
    with Producer(cluster.brokers[0].address, **FAST) as producer:
        futures = [producer.send("t", b"v%d" % i, partition=i % 3) for i in range(30)]
        producer.flush()
        metas = [f.result(5) for f in futures]
    assert [(m.partition, m.offset) for m in metas[:6]] == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
    assert sorted(v for p, _, v in records_of(cluster.logs[0], 2)) == sorted(b"v%d" % i for i in range(2, 30, 3))
    assert len(records_of(cluster.logs[1])) == 10  # partition 1 is led by broker 1
    produce_requests = cluster.brokers[0].requests(0) + cluster.brokers[1].requests(0)
    assert len(produce_requests) < 30  # batched
    assert {s.version for s in produce_requests} == {
        12
    }  # the newest this client sends (v13 names topics by id): the fake brokers advertise every version


def test_keyed_records_go_to_the_murmur2_partition(cluster):
    keys = [b"user-%d" % i for i in range(40)]
    with Producer(cluster.brokers[0].address, **FAST) as producer:
        futures = [producer.send("t", b"x", key=k) for k in keys]
        positional = [producer.send("t", b"x", k) for k in keys]  # the compiled send's case, when built
        placed = [f.result(5).partition for f in futures]
        placed_positional = [f.result(5).partition for f in positional]
    assert placed == placed_positional == [default_partition(k, 3) for k in keys]


def test_positional_sends_keep_every_field_and_check_like_keyword_sends(cluster):
    with Producer(cluster.brokers[0].address, max_request_size=1000, **FAST) as producer:
        before = int(time.time() * 1000)
        first = producer.send("t", b"value", b"key")
        second = producer.send("t", None, b"key")
        after = int(time.time() * 1000)
        with pytest.raises(RecordTooLargeError):
            producer.send("t", b"x" * 2000, b"key")
        meta = first.result(5)
        assert before <= meta.timestamp <= after
        assert (second.result(5).partition, second.result(5).offset) == (meta.partition, meta.offset + 1)
    records = [
        r for _, p, data in cluster.logs[0].batches + cluster.logs[1].batches for r in decode_batch_records(data)
    ]
    assert [(r.key, r.value, r.headers) for r in records] == [(b"key", b"value", []), (b"key", None, [])]
    with pytest.raises(ProducerClosedError):
        producer.send("t", b"x", b"key")
    assert list(inspect.signature(producer.send).parameters) == [
        "topic",
        "value",
        "key",
        "partition",
        "timestamp_ms",
        "headers",
        "on_delivery",
    ]


def test_delivery_callbacks_run_once_per_record(cluster):
    seen = []
    lock = threading.Lock()

    def on_delivery(meta, error):
        with lock:
            seen.append((meta, error))

    with Producer(cluster.brokers[0].address, **FAST) as producer:
        for i in range(20):
            producer.send("t", b"v", partition=0, timestamp_ms=1000 + i, on_delivery=on_delivery)
    assert len(seen) == 20 and all(e is None for _, e in seen)
    assert sorted(m.offset for m, _ in seen) == list(range(20))
    assert {m.timestamp for m, _ in seen} == set(range(1000, 1020))


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_batches_are_compressed_with_the_configured_codec(cluster, codec):
    with Producer(cluster.brokers[0].address, compression_type=codec, **FAST) as producer:
        for i in range(50):
            producer.send("t", b"value-%d" % i, key=b"k", partition=0)
    (_, _, data), *_ = cluster.logs[0].batches
    assert parse_batch_header(data).compression is Compression.from_name(codec)
    assert [v for _, _, v in records_of(cluster.logs[0])] == [b"value-%d" % i for i in range(50)]
    if codec == "zstd":
        assert {s.version for s in cluster.brokers[0].requests(0)} == {12}


def test_acks_zero_expects_no_response_and_completes_with_unknown_offsets(cluster):
    with Producer(cluster.brokers[0].address, acks="0", **FAST) as producer:
        futures = [producer.send("t", b"v", partition=0) for _ in range(5)]
        producer.flush()
        assert [f.result(5) for f in futures] == [RecordMetadata("t", 0, -1, f.result().timestamp) for f in futures]
    assert set(cluster.logs[0].acks) == {0}
    assert cluster.brokers[0].requests(22) == []  # acks=0 turns idempotence off


def test_the_idempotent_producer_stamps_its_id_and_consecutive_sequences(cluster):
    with Producer(cluster.brokers[0].address, batch_size=200, **FAST) as producer:
        for i in range(40):
            producer.send("t", b"value-%03d" % i, partition=0)
    headers = [parse_batch_header(d) for _, _, d in cluster.logs[0].batches]
    assert len(headers) > 1
    assert {h.producer_id for h in headers} == {1000}
    expected = 0
    for h in headers:
        assert h.base_sequence == expected
        expected += h.records_count
    assert expected == 40


def test_a_moved_leader_is_followed_and_every_record_is_delivered_once(cluster):
    moved = {"done": False}

    def not_leader(topic, partition, header):
        if partition == 0 and not moved["done"]:
            moved["done"] = True
            cluster.topics["t"][0] = 1
            return int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return 0

    cluster.logs[0].answer = not_leader
    with Producer(cluster.brokers[0].address, **FAST) as producer:
        futures = [producer.send("t", b"v%d" % i, partition=0) for i in range(10)]
        producer.flush()
        assert all(f.result(5).partition == 0 for f in futures)
    assert records_of(cluster.logs[0], 0) == []
    assert sorted(v for _, _, v in records_of(cluster.logs[1], 0)) == sorted(b"v%d" % i for i in range(10))


@pytest.mark.parametrize("code", [ErrorCode.REPLICA_NOT_AVAILABLE, ErrorCode.KAFKA_STORAGE_ERROR])
def test_an_error_that_makes_metadata_stale_sends_the_retry_to_the_new_leader(cluster, code):
    """The producer refreshes metadata after the same errors as the rest of the client (one table)."""
    moved = {"done": False}

    def stale(topic, partition, header):
        if partition == 0 and not moved["done"]:
            moved["done"] = True
            cluster.topics["t"][0] = 1
            return int(code)
        return 0

    cluster.logs[0].answer = stale
    with Producer(cluster.brokers[0].address, **FAST) as producer:
        future = producer.send("t", b"moved", partition=0)
        assert future.result(5).partition == 0
    assert records_of(cluster.logs[0], 0) == []
    assert records_of(cluster.logs[1], 0) == [(0, None, b"moved")]


def test_a_dropped_connection_is_retried_with_the_same_producer_id_and_sequence(cluster):
    broker = cluster.brokers[0]
    log = cluster.logs[0]
    received = []

    def drop_first(request, conn):
        for t in request.body.topic_data:
            for p in t.partition_data:
                received.append(bytes(p.records))
        if len(received) == 1:
            log.handler(request, conn)  # the broker appended it, but the answer is lost
            return CLOSE
        return log.handler(request, conn)

    broker.handlers[0] = drop_first
    with Producer(broker.address, **FAST) as producer:
        future = producer.send("t", b"once", partition=0)
        assert future.result(5).partition == 0
    assert len(received) == 2
    first, second = (parse_batch_header(b) for b in received)
    assert (first.producer_id, first.producer_epoch, first.base_sequence) == (
        second.producer_id,
        second.producer_epoch,
        second.base_sequence,
    )
    assert received[0] == received[1]  # the very same bytes, so the broker can recognise the duplicate


def test_out_of_order_sequence_after_a_failed_predecessor_is_retried_in_order(cluster):
    log = cluster.logs[0]
    state = {"failed": False, "expect": 0}

    def broker_sequence_check(topic, partition, header):
        if not state["failed"]:
            state["failed"] = True
            return int(ErrorCode.NOT_ENOUGH_REPLICAS)  # retriable, the batch is not appended
        if header.base_sequence != state["expect"]:
            return int(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
        state["expect"] += header.records_count
        return 0

    log.answer = broker_sequence_check
    with Producer(
        cluster.brokers[0].address, batch_size=120, linger_ms=0, **{k: v for k, v in FAST.items() if k != "linger_ms"}
    ) as producer:
        futures = [producer.send("t", b"record-%02d" % i, partition=0) for i in range(12)]
        producer.flush()
        assert all(f.exception(5) is None for f in futures)
    values = [v for _, _, v in records_of(log, 0)]
    assert values == [b"record-%02d" % i for i in range(12)]  # no loss, no duplicate, in order


def test_unknown_producer_id_gets_a_new_producer_id(cluster):
    state = {"n": 0}

    def forgetful(topic, partition, header):
        state["n"] += 1
        return int(ErrorCode.UNKNOWN_PRODUCER_ID) if state["n"] == 1 else 0

    cluster.logs[0].answer = forgetful
    with Producer(cluster.brokers[0].address, **FAST) as producer:
        producer.send("t", b"v", partition=0).result(5)
    ((_, _, data),) = cluster.logs[0].batches
    assert parse_batch_header(data).producer_id == 1001
    assert len(cluster.brokers[0].requests(22)) == 2


def test_records_expire_after_the_delivery_timeout_when_the_broker_never_answers(cluster):
    cluster.brokers[0].handlers[0] = lambda request, conn: NO_RESPONSE
    settings = {**FAST, "request_timeout_ms": 100, "delivery_timeout_ms": 400}
    producer = Producer(cluster.brokers[0].address, **settings)
    try:
        future = producer.send("t", b"v", partition=0)
        error = future.exception(10)
        assert isinstance(error, KafkaTimeoutError)
        assert "delivery.timeout.ms" in str(error)
    finally:
        producer.close(5)


def test_a_broker_without_record_batch_v2_produce_fails_the_records_clearly():
    ranges = default_api_ranges()
    ranges[0] = (0, 2)
    broker = ScriptedBroker(0, api_ranges=ranges)
    ClusterView([broker], topics={"t": {0: 0}}).install()
    broker.handlers[22] = init_producer_id()
    try:
        with Producer(broker.address, **FAST) as producer:
            error = producer.send("t", b"v", partition=0).exception(5)
        assert isinstance(error, NoCommonVersionError)
        assert "Produce v0-2" in str(error)
    finally:
        broker.stop()


def test_send_rejects_bad_records_at_once(cluster):
    with Producer(cluster.brokers[0].address, max_request_size=1000, **FAST) as producer:
        with pytest.raises(RecordTooLargeError, match="exceeds max.request.size"):
            producer.send("t", b"x" * 2000)
        with pytest.raises(KafkaClientError, match="partition 7 of topic t does not exist"):
            producer.send("t", b"x", partition=7)
        with pytest.raises(TypeError, match="header 0 key must be a str"):
            producer.send("t", b"x", headers=[(b"k", b"v")])
        with pytest.raises(TypeError, match="without a serializer"):
            producer.send("t", 12345)
        with pytest.raises(ValueError, match="timestamp_ms"):
            producer.send("t", b"x", timestamp_ms=-5)
        for topic in ("", None, ["t"]):
            with pytest.raises(ValueError, match="topic must be a non-empty string"):
                producer.send(topic, b"x", b"k")
    with pytest.raises(ProducerClosedError):
        producer.send("t", b"x")


def test_headers_keys_and_values_reach_the_broker(cluster):
    with Producer(cluster.brokers[0].address, **FAST) as producer:
        producer.send("t", "text value", key="text key", partition=0, headers=[("h1", b"a"), ("h2", None)])
    ((_, _, data),) = cluster.logs[0].batches
    (record,) = decode_batch_records(data)
    assert (record.key, record.value, record.headers) == (b"text key", b"text value", [("h1", b"a"), ("h2", None)])


def test_flush_times_out_while_a_broker_is_silent_and_close_fails_what_is_left(cluster):
    cluster.brokers[0].handlers[0] = lambda request, conn: NO_RESPONSE
    producer = Producer(cluster.brokers[0].address, **FAST)
    future = producer.send("t", b"v", partition=0)
    with pytest.raises(KafkaTimeoutError, match="flush timed out"):
        producer.flush(0.3)
    started = time.monotonic()
    producer.close(0.2)
    assert time.monotonic() - started < 5
    assert isinstance(future.exception(1), ProducerClosedError)


def test_keyed_and_explicit_records_do_not_move_the_sticky_partition_of_null_keys(cluster):
    # Java's BuiltInPartitioner counts only the bytes of records it placed itself: here 150 keyed and
    # 150 explicit records (well over batch.size on every partition) leave the null-key partition alone.
    with Producer(cluster.brokers[0].address, batch_size=1000, **FAST) as producer:
        first = producer.send("t", b"null key")
        for i in range(150):
            producer.send("t", b"v" * 20, key=b"key-%d" % i)
            producer.send("t", b"v" * 20, partition=i % 3)
        second = producer.send("t", b"null key again")
        assert first.result(5).partition == second.result(5).partition
        moved = {producer.send("t", b"x" * 100).result(5).partition for _ in range(40)}
    assert len(moved) > 1  # null-key records themselves still move it after batch.size bytes
