"""``AIOProducer`` against an in-process ``EmbeddedBroker``, mirroring the blocking producer's tests: delivery and
offsets, placement equal to the blocking ``Producer``'s, headers, serializers, every codec, acks 0/1/all,
idempotent resends after injected Produce errors (``broker.faults``), connections dropped by either side and a
broker restart, flush and close, send's own errors (record too large, unknown topic, closed producer, not
started), buffer.memory awaited instead of blocking the loop, transactions read back under read_committed, and
aiokafka's and confluent-kafka's consumers reading what it wrote.

Each test runs its coroutine with ``asyncio.run`` (the repository has no pytest-asyncio)."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    KafkaClient,
    KafkaClientError,
    NewTopic,
    OffsetSpec,
    Producer,
    ProducerClosedError,
    RecordMetadata,
    RecordTooLargeError,
    TopicPartition,
)
from spark_kafkalog.client.aio.producer import AIOProducer
from spark_kafkalog.client.producer.transactions import TransactionError
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import default_partition
from tests.confluent_read import confluent_values

pytestmark = pytest.mark.integration

T = TypeVar("T")
BASE_TS = 1_700_000_000_000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
FAST: dict[str, Any] = {"retry_backoff_ms": 10, "retry_backoff_max_ms": 100, "linger_ms": 2}


def run(coro: Awaitable[T], timeout: float = 60.0) -> T:
    async def main() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(main())


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:aio-producer-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b"),
        auto_create_topics_enable=False,
        transaction_state_log_num_partitions=3,
        offsets_topic_num_partitions=3,
    )
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def bootstrap(broker) -> str:
    return broker.bootstrap_servers


def new_topic(bootstrap: str, partitions: int = 3) -> str:
    name = f"aio-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def record(i: int) -> dict[str, Any]:
    return {
        "key": b"key-%d" % (i % 97),
        "value": b"value-%d-" % i + b"x" * (i % 40),
        "headers": [("seq", b"%d" % i), ("empty", None)],
        "timestamp_ms": BASE_TS + i,
    }


def read_all(bootstrap: str, topic: str, partitions: int, **settings: Any) -> dict[int, list]:
    out = {}
    with KafkaClient(bootstrap, **settings) as client:
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


def values_once(bootstrap: str, topic: str, partitions: int) -> dict[int, list[bytes]]:
    """Every partition's values, in offset order (offsets checked contiguous)."""
    out = {}
    for p, records in read_all(bootstrap, topic, partitions).items():
        assert [r.offset for r in records] == list(range(len(records)))
        out[p] = [r.value for r in records]
    return out


# delivery ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("acks, idempotence", [("all", True), ("1", False), ("0", False)])
def test_every_record_arrives_once_with_its_fields_and_metadata(bootstrap, codec, acks, idempotence):
    topic = new_topic(bootstrap, 3)
    n = 600

    async def produce() -> list[RecordMetadata]:
        async with AIOProducer(
            bootstrap, acks=acks, enable_idempotence=idempotence, compression_type=codec, **FAST
        ) as producer:
            futures = [await producer.send(topic, **record(i)) for i in range(n)]
            await producer.flush(30)
            assert all(f.done() for f in futures)
            return [f.result() for f in futures]

    metas = run(produce())
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
    for i, meta in enumerate(metas):
        assert (meta.topic, meta.timestamp) == (topic, BASE_TS + i)
        if acks == "0":
            assert meta.offset == -1
        else:
            assert by_partition[meta.partition][meta.offset].value == record(i)["value"]


def test_send_and_wait_returns_consecutive_offsets_of_an_explicit_partition(bootstrap):
    topic = new_topic(bootstrap, 2)

    async def produce() -> list[RecordMetadata]:
        async with AIOProducer(bootstrap, **FAST) as producer:
            assert await producer.partitions_for(topic) == [0, 1]
            return [await producer.send_and_wait(topic, b"v%d" % i, partition=1) for i in range(5)]

    metas = run(produce())
    assert [(m.partition, m.offset) for m in metas] == [(1, i) for i in range(5)]
    assert values_once(bootstrap, topic, 2) == {0: [], 1: [b"v%d" % i for i in range(5)]}


def test_records_land_where_the_blocking_producer_puts_them(bootstrap):
    topic = new_topic(bootstrap, 5)
    keys = [b"user-%d" % i for i in range(200)]
    with Producer(bootstrap, linger_ms=1) as blocking:
        expected = [blocking.send(topic, b"b", key=k).result(10).partition for k in keys]

    async def produce() -> tuple[list[int], list[int]]:
        async with AIOProducer(bootstrap, **FAST) as producer:
            keyed = [await producer.send(topic, b"a", key=k) for k in keys]
            explicit = [await producer.send(topic, b"e", key=k, partition=i % 5) for i, k in enumerate(keys)]
            return [(await f).partition for f in keyed], [(await f).partition for f in explicit]

    keyed, explicit = run(produce())
    assert keyed == expected == [default_partition(k, 5) for k in keys]
    assert explicit == [i % 5 for i in range(len(keys))]


def test_serializers_apply_as_in_the_blocking_producer(bootstrap):
    topic = new_topic(bootstrap, 1)

    async def produce() -> None:
        async with AIOProducer(bootstrap, key_serializer="string", value_serializer="string", **FAST) as producer:
            await producer.send_and_wait(topic, "wert", key="schlüssel")

    run(produce())
    (r,) = read_all(bootstrap, topic, 1)[0]
    assert (r.key, r.value) == ("schlüssel".encode(), b"wert")


# faults ------------------------------------------------------------------------------------------
def test_lost_connections_are_retried_without_duplicates_or_reordering(bootstrap):
    topic = new_topic(bootstrap, 2)
    n = 4000

    async def produce() -> int:
        drops = 0  # with requests in flight
        async with AIOProducer(bootstrap, acks="all", batch_size=512, **FAST) as producer:
            futures = []
            for i in range(n):
                futures.append(await producer.send(topic, b"%d" % i, partition=i % 2))
                if i % 500 == 250:  # full batches queued: let requests go out, then drop the connections
                    for _ in range(500):  # (reconnecting and refreshing metadata after the last drop)
                        await asyncio.sleep(0.001)
                        if producer._sender._has_in_flight():
                            break
                    drops += producer._sender._has_in_flight()
                    for conn in list(producer._sender._connections.values()):
                        await producer._client.drop(conn)
            await producer.flush(30)
            assert all(m.offset >= 0 for m in await asyncio.gather(*futures))
            assert producer._sender.idempotence is not None and producer._sender.idempotence.producer_id >= 0
        return drops

    assert run(produce()) >= 5
    values = values_once(bootstrap, topic, 2)
    assert values[0] == [b"%d" % i for i in range(0, n, 2)]
    assert values[1] == [b"%d" % i for i in range(1, n, 2)]


@pytest.mark.parametrize(
    "errors",
    [
        ["NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"],  # refresh metadata, then back off and resend
        ["NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"],
    ],
)
def test_injected_produce_errors_are_retried_in_order_and_once(broker, bootstrap, errors):
    topic = new_topic(bootstrap, 2)

    async def produce() -> list[RecordMetadata]:
        async with AIOProducer(bootstrap, acks="all", **FAST) as producer:
            await producer.send_and_wait(topic, b"warm-up", partition=1)
            with broker.faults.push_errors("Produce", errors, topic=topic, partition=0) as injection:
                with broker.faults.track_requests() as log:
                    futures = [await producer.send(topic, b"%d" % i, partition=i % 2) for i in range(200)]
                    await producer.flush(30)
                assert injection.remaining == 0
                assert log.count("Produce") >= 3
            return [await f for f in futures]

    metas = run(produce())
    assert [m.offset for m in metas[0::2]] == list(range(100))
    values = values_once(bootstrap, topic, 2)
    assert values[0] == [b"%d" % i for i in range(0, 200, 2)]
    assert values[1] == [b"warm-up"] + [b"%d" % i for i in range(1, 200, 2)]


def test_connections_the_broker_drops_are_reopened_and_resent_once(broker, bootstrap):
    topic = new_topic(bootstrap, 1)

    async def produce() -> int:
        drops = 0
        async with AIOProducer(bootstrap, acks="all", batch_size=512, client_id="aio-dropped", **FAST) as producer:
            futures = []
            for i in range(2000):
                futures.append(await producer.send(topic, b"%d" % i))
                if i % 400 == 200:
                    await asyncio.sleep(0.003)  # requests go out
                    drops += await asyncio.to_thread(broker.faults.drop_connections, client_id="aio-dropped")
            await producer.flush(30)
            assert [m.offset for m in await asyncio.gather(*futures)] == list(range(2000))
        return drops

    assert run(produce()) >= 3
    assert values_once(bootstrap, topic, 1)[0] == [b"%d" % i for i in range(2000)]


def test_a_restarted_broker_gets_the_rest_and_nothing_twice(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    registry = f"memory:aio-restart-{uuid.uuid4().hex[:8]}"
    settings: dict[str, Any] = {"listeners": f"PLAINTEXT://127.0.0.1:{port}", "log_dir": tmp_path}
    first = EmbeddedBroker(0, zookeeper_connect=registry, **settings).start()
    bootstrap = first.bootstrap_servers
    topic = new_topic(bootstrap, 1)
    brokers = [first]

    async def produce() -> list[RecordMetadata]:
        async with AIOProducer(
            bootstrap, acks="all", delivery_timeout_ms=30000, request_timeout_ms=5000, **FAST
        ) as producer:
            futures = [await producer.send(topic, b"before-%d" % i) for i in range(200)]
            await producer.flush(10)
            await asyncio.to_thread(first.stop)
            futures += [await producer.send(topic, b"after-%d" % i) for i in range(200)]
            await asyncio.sleep(0.3)  # the producer retries against a broker that is gone
            brokers.append(await asyncio.to_thread(EmbeddedBroker(0, zookeeper_connect=registry, **settings).start))
            await producer.flush(30)
            return [await f for f in futures]

    try:
        metas = run(produce())
        assert [m.offset for m in metas] == list(range(400))
        values = values_once(bootstrap, topic, 1)[0]
        assert values == [b"before-%d" % i for i in range(200)] + [b"after-%d" % i for i in range(200)]
    finally:
        brokers[-1].stop()


# flush, close, buffer memory -------------------------------------------------------------------
def test_close_delivers_what_is_queued_and_later_sends_fail(bootstrap):
    topic = new_topic(bootstrap, 1)

    async def produce() -> None:
        producer = AIOProducer(bootstrap, linger_ms=60000, **{k: v for k, v in FAST.items() if k != "linger_ms"})
        with pytest.raises(KafkaClientError, match="before start"):
            await producer.send(topic, b"early")
        await producer.start()
        futures = [await producer.send(topic, b"%d" % i) for i in range(50)]
        await asyncio.sleep(0.05)
        assert not any(f.done() for f in futures)  # lingering
        await producer.close()
        assert [f.result().offset for f in futures] == list(range(50))
        with pytest.raises(ProducerClosedError):
            await producer.send(topic, b"late")
        await producer.close()  # idempotent

    run(produce())
    assert len(values_once(bootstrap, topic, 1)[0]) == 50


def test_flush_sends_lingering_batches_at_once(bootstrap):
    topic = new_topic(bootstrap, 1)

    async def produce() -> None:
        async with AIOProducer(bootstrap, linger_ms=60000, retry_backoff_ms=10) as producer:
            futures = [await producer.send(topic, b"%d" % i) for i in range(10)]
            await asyncio.wait_for(producer.flush(), 5)
            assert [f.result().offset for f in futures] == list(range(10))

    run(produce())


def test_a_full_buffer_is_awaited_without_blocking_the_loop(bootstrap):
    topic = new_topic(bootstrap, 3)
    n = 1000

    async def produce() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        task = asyncio.create_task(ticker())
        async with AIOProducer(bootstrap, batch_size=2048, buffer_memory=8192, max_block_ms=5000, **FAST) as producer:

            async def writer(w: int) -> list[asyncio.Future[RecordMetadata]]:
                return [await producer.send(topic, b"%d" % w + b"x" * 200, partition=i % 3) for i in range(n)]

            # three writers wait for memory at once: each is woken by completed batches, none times out
            futures = [f for fs in await asyncio.gather(*(writer(w) for w in range(3))) for f in fs]
            assert producer._accumulator._used <= 8192 + 2048
            await producer.flush(30)
            assert all(f.result().offset >= 0 for f in futures)
        task.cancel()
        return ticks

    assert run(produce()) > 5  # the loop ran other tasks while send waited for memory
    assert sum(len(v) for v in values_once(bootstrap, topic, 3).values()) == 3 * n


# send's own errors -------------------------------------------------------------------------------
def test_send_raises_record_too_large_and_unknown_topic_at_once(bootstrap):
    topic = new_topic(bootstrap, 1)

    async def produce() -> None:
        async with AIOProducer(bootstrap, max_request_size=1000, **FAST) as producer:
            with pytest.raises(RecordTooLargeError, match="max.request.size"):
                await producer.send(topic, b"x" * 2000)
            missing = f"missing-{uuid.uuid4().hex[:8]}"
            with pytest.raises(KafkaClientError) as info:
                await producer.send(missing, b"x")
            assert info.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            with pytest.raises(KafkaClientError, match="does not exist"):
                await producer.send(topic, b"x", partition=7)
            with pytest.raises(ValueError, match="topic"):
                await producer.send("", b"x")
            assert (await producer.send_and_wait(topic, b"fine")).offset == 0

    run(produce())


# transactions ------------------------------------------------------------------------------------
def test_committed_transactions_are_read_and_aborted_ones_are_not(bootstrap):
    topic = new_topic(bootstrap, 2)
    tid = f"aio-txn-{uuid.uuid4().hex[:8]}"

    async def produce() -> None:
        async with AIOProducer(bootstrap, transactional_id=tid, **FAST) as producer:
            with pytest.raises(TransactionError):
                await producer.send(topic, b"outside")
            await producer.init_transactions(30)
            producer.begin_transaction()
            for i in range(20):
                await producer.send(topic, b"committed-%d" % i)
            await producer.commit_transaction(30)
            producer.begin_transaction()
            sent = [await producer.send(topic, b"aborted-%d" % i) for i in range(20)]
            await producer.flush(30)
            assert all(f.result().offset >= 0 for f in sent)
            await producer.abort_transaction(30)
            producer.begin_transaction()
            unsent = await producer.send(topic, b"aborted-unsent")
            await producer.abort_transaction(30)
            with pytest.raises(TransactionError):
                await unsent
            producer.begin_transaction()
            await producer.send(topic, b"committed-last")
            await producer.commit_transaction(30)

    run(produce())
    committed = sorted([b"committed-%d" % i for i in range(20)] + [b"committed-last"])
    assert sorted(confluent_values(bootstrap, topic, "read_committed", len(committed), timeout_s=30)) == committed
    everything = confluent_values(bootstrap, topic, "read_uncommitted", 41, timeout_s=30)
    assert sum(v.startswith(b"aborted-") for v in everything) == 20


# other clients read it ---------------------------------------------------------------------------
def test_aiokafka_and_confluent_kafka_consumers_read_what_it_wrote(bootstrap):
    from aiokafka import AIOKafkaConsumer

    topic = new_topic(bootstrap, 3)
    n = 300

    async def produce_then_read() -> list[tuple[bytes, bytes, list]]:
        async with AIOProducer(bootstrap, compression_type="lz4", **FAST) as producer:
            for i in range(n):
                await producer.send(topic, b"v%d" % i, key=b"k%d" % i, headers=[("i", b"%d" % i)])
            await producer.flush(30)
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None, enable_auto_commit=False
        )
        await consumer.start()
        out: list[tuple[bytes, bytes, list]] = []
        try:
            while len(out) < n:
                batch = await consumer.getmany(timeout_ms=1000)
                for records in batch.values():
                    out.extend((r.key, r.value, list(r.headers)) for r in records)
        finally:
            await consumer.stop()
        return out

    read = run(produce_then_read())
    assert sorted(read) == sorted((b"k%d" % i, b"v%d" % i, [("i", b"%d" % i)]) for i in range(n))
    assert sorted(confluent_values(bootstrap, topic, "read_uncommitted", n, idle_s=0.5, timeout_s=30)) == sorted(
        b"v%d" % i for i in range(n)
    )
