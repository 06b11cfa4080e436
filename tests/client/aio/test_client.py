"""``AsyncKafkaClient`` against an in-process ``EmbeddedBroker``: metadata, ListOffsets, Fetch of records the
blocking Producer wrote, FindCoordinator, version negotiation, shared connections, lost connections and a
broker off the network retried, unknown topics and partitions, a dead bootstrap address.

Each test runs its coroutine with ``asyncio.run`` (the repository has no pytest-asyncio)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    AsyncKafkaClient,
    BrokerNotAvailableError,
    ClientConfig,
    ConfigError,
    KafkaClient,
    KafkaClientError,
    KafkaTimeoutError,
    NewTopic,
    OffsetOutOfRangeError,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from spark_kafkalog.client.core.coordinator import TRANSACTION_KEY_TYPE
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

pytestmark = pytest.mark.integration

T = TypeVar("T")
BASE_TS = 1_700_000_000_000


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(0, zookeeper_connect=f"memory:aio-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b"))
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def bootstrap(broker) -> str:
    return broker.bootstrap_servers


def new_topic(bootstrap: str, partitions: int = 2) -> str:
    name = f"aio-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


@pytest.fixture(scope="module")
def filled(bootstrap) -> tuple[str, int]:
    """A topic whose partition 0 holds 300 records (timestamps BASE_TS + i) in several batches; partition 1 is
    empty."""
    topic = new_topic(bootstrap)
    with Producer(bootstrap, linger_ms=0, batch_size=2000) as producer:
        for i in range(300):
            producer.send(topic, b"value-%d" % i, key=b"k%d" % i, partition=0, timestamp_ms=BASE_TS + i)
    return topic, 300


async def read_range(client: AsyncKafkaClient, tp: TopicPartition, start: int, end: int | None, **kw: Any):
    fetch = client.fetch_batches(tp, start, end, **kw)
    records = [r async for fetched in fetch for r in fetched.batch.records()]
    return records, fetch.position


# construction and lifecycle -------------------------------------------------------------------------
def test_config_is_built_as_the_blocking_clients():
    dotted: dict[str, Any] = {"client.id": "me"}
    client = AsyncKafkaClient("h1:9092,h2:9093", request_timeout_ms=1234, **dotted)
    blocking = KafkaClient("h1:9092,h2:9093", request_timeout_ms=1234, **dotted)
    assert client.config.bootstrap_servers == blocking.config.bootstrap_servers == ("h1:9092", "h2:9093")
    assert (client.config.request_timeout_ms, client.config.client_id) == (1234, "me")
    from_mapping = AsyncKafkaClient({"bootstrap.servers": "h:1", "retries": 7})
    assert from_mapping.config.retries == 7
    from_config = AsyncKafkaClient("h:2", config=ClientConfig.create(None, retries=3))
    assert (from_config.config.bootstrap_servers, from_config.config.retries) == (("h:2",), 3)
    with pytest.raises(ConfigError, match="bootstrap.servers"):
        AsyncKafkaClient()


def test_start_learns_the_brokers_and_close_is_final(broker, bootstrap):
    async def scenario():
        client = AsyncKafkaClient(bootstrap)
        await client.start()
        known = client.metadata.broker(0)
        assert known is not None and known.port == int(bootstrap.rsplit(":", 1)[1])
        await client.close()
        await client.close()  # idempotent
        with pytest.raises(KafkaClientError, match="closed"):
            await client.any_connection()

    run(scenario())


def test_a_dead_bootstrap_address_fails_within_seconds_naming_it():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def scenario():
        async with AsyncKafkaClient(f"127.0.0.1:{port}", default_api_timeout_ms=60_000):
            pass

    started = time.monotonic()
    with pytest.raises(BrokerNotAvailableError, match=f"127.0.0.1:{port}"):
        run(scenario())
    assert time.monotonic() - started < 15  # far below default.api.timeout.ms


# metadata -----------------------------------------------------------------------------------------
def test_topic_info_partitions_leader_and_topics(bootstrap, filled):
    topic, _ = filled

    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            info = await client.topic_info(topic)
            assert sorted(info.partitions) == [0, 1]
            assert info.topic_id and client.topic_id(topic) == uuid.UUID(info.topic_id)
            assert await client.partitions_for(topic) == [0, 1]
            assert await client.leader_for(TopicPartition(topic, 1)) == 0
            topics = await client.topics()
            assert topics[topic] == 2
            assert "__consumer_offsets" not in topics

    run(scenario())


def test_an_unknown_topic_and_partition_are_errors_that_say_so(bootstrap, filled):
    topic, _ = filled

    async def scenario():
        async with AsyncKafkaClient(bootstrap, retry_backoff_ms=10, retry_backoff_max_ms=20) as client:
            with pytest.raises(KafkaClientError) as unknown:
                await client.topic_info(f"missing-{uuid.uuid4().hex[:6]}")
            assert unknown.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            assert not unknown.value.retriable
            with pytest.raises(KafkaClientError, match="partition 5 of topic .* does not exist") as partition:
                await client.leader_for(TopicPartition(topic, 5))
            assert partition.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    run(scenario())


def test_send_request_negotiates_the_highest_common_version_or_uses_the_given_one(bootstrap, filled):
    topic, _ = filled
    metadata = API_BY_KEY[int(ApiKey.METADATA)].Request

    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            conn = await client.connection(0)
            sent: list[int] = []
            request = conn.request

            async def spy(api_key: int, body: Any, **kwargs: Any) -> Any:
                sent.append(kwargs["version"])
                return await request(api_key, body, **kwargs)

            conn.request = spy  # type: ignore[method-assign]
            newest = conn.versions.pick(int(ApiKey.METADATA))
            assert newest >= 12  # the broker serves Metadata up to v13
            version, response = await client.send_request_versioned(
                0, ApiKey.METADATA, lambda v: metadata(topics=[metadata.MetadataRequestTopic(name=topic)])
            )
            assert version == newest and sent == [newest]
            assert [t.name for t in response.topics] == [topic]
            body = metadata(topics=[metadata.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
            old = await client.send_request(0, ApiKey.METADATA, body, version=1)
            assert sent == [newest, 1]
            assert [t.name for t in old.topics] == [topic]

    run(scenario())


def test_connections_are_shared_per_broker_by_concurrent_coroutines(bootstrap):
    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            conns = await asyncio.gather(*(client.connection(0) for _ in range(20)))
            assert len({id(c) for c in conns}) == 1
            assert await client.connection(0) is conns[0]

    run(scenario())


def test_concurrent_lookups_of_a_topic_share_one_metadata_request(broker, bootstrap, filled):
    topic, _ = filled

    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            before = client.stats["metadata_requests"]
            with broker.faults.track_requests() as log:
                infos = await asyncio.gather(*(client.topic_info(topic) for _ in range(50)))
            assert {info.name for info in infos} == {topic}
            assert client.stats["metadata_requests"] - before == 1 == log.count("Metadata")
            with broker.faults.push_errors("Metadata", ["NOT_CONTROLLER"]):  # v13's top-level error field
                results = await asyncio.gather(
                    *(client.refresh_metadata_once([topic]) for _ in range(5)), return_exceptions=True
                )
            assert len({id(r) for r in results}) == 1 and isinstance(results[0], KafkaClientError)  # one error, shared

    run(scenario())


# ListOffsets -------------------------------------------------------------------------------------
def test_list_offsets_earliest_latest_and_by_timestamp(bootstrap, filled):
    topic, count = filled
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            assert await client.list_offsets({tp0: OffsetSpec.EARLIEST, tp1: OffsetSpec.EARLIEST}) == {tp0: 0, tp1: 0}
            assert await client.list_offsets({tp0: OffsetSpec.LATEST, tp1: OffsetSpec.LATEST}) == {tp0: count, tp1: 0}
            assert (await client.list_offsets({tp0: BASE_TS + 123}))[tp0] == 123
            assert (await client.list_offsets({tp0: BASE_TS + 10 * count}))[tp0] == count  # no match: latest
            raw = await client.list_offsets_with_timestamps({tp0: BASE_TS + 10 * count}, no_match="raw")
            assert raw[tp0] == (-1, -1)
            assert await client.list_offsets_with_timestamps({tp0: OffsetSpec.MAX_TIMESTAMP}) == {
                tp0: (count - 1, BASE_TS + count - 1)
            }
            with pytest.raises(ValueError, match="offset spec"):
                await client.list_offsets({tp0: -7})

    run(scenario())


# Fetch --------------------------------------------------------------------------------------------
def test_fetch_batches_reads_what_the_blocking_producer_wrote(bootstrap, filled):
    topic, count = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap, max_partition_fetch_bytes=4000) as client:
            records, position = await read_range(client, tp, 0, count)
            assert [r.value for r in records] == [b"value-%d" % i for i in range(count)]
            assert [r.offset for r in records] == list(range(count))
            assert records[7].key == b"k7" and records[7].timestamp == BASE_TS + 7
            assert position == count
            assert client.stats["fetch_requests"] > 1  # 4000-byte fetches: several round trips
            middle, _ = await read_range(client, tp, 100, 110)
            assert {r.offset for r in middle} >= set(range(100, 110))  # whole batches: filter by offset
            to_hw, position = await read_range(client, tp, 250, None)
            assert [r.offset for r in to_hw if r.offset >= 250] == list(range(250, count))
            assert position == count
            empty = client.fetch_batches(TopicPartition(topic, 1), 0, 0)
            assert [b async for b in empty] == [] and empty.position == 0

    run(scenario())


def test_fetch_outside_the_log_names_its_bounds(bootstrap, filled):
    topic, count = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            with pytest.raises(OffsetOutOfRangeError) as e:
                await read_range(client, tp, count + 50, count + 60)
            assert (e.value.log_start_offset, e.value.high_watermark) == (0, count)

    run(scenario())
    with pytest.raises(ValueError, match="reversed"):
        AsyncKafkaClient(bootstrap).fetch_batches(tp, 5, 4)


def test_a_fetch_stopped_early_leaves_the_client_usable(bootstrap, filled):
    topic, count = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap, max_partition_fetch_bytes=2000) as client:
            fetch = client.fetch_batches(tp, 0, count)
            first = await fetch.__anext__()
            assert first.batch.base_offset == 0
            await fetch.aclose()
            assert 0 < fetch.position < count
            records, _ = await read_range(client, tp, 0, count)
            assert len(records) == count

    run(scenario())


def test_fetch_waits_for_records_produced_later(bootstrap):
    topic = new_topic(bootstrap, 1)
    tp = TopicPartition(topic, 0)

    def produce_later() -> None:
        time.sleep(0.5)
        with Producer(bootstrap) as producer:
            for i in range(5):
                producer.send(topic, b"late-%d" % i, partition=0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap, fetch_max_wait_ms=200) as client:
            thread = threading.Thread(target=produce_later)
            thread.start()
            records, position = await read_range(client, tp, 0, 5)
            thread.join()
            assert [r.value for r in records] == [b"late-%d" % i for i in range(5)]
            assert position == 5

    run(scenario())


# FindCoordinator ----------------------------------------------------------------------------------
def test_find_coordinator_for_a_group_and_a_transactional_id(bootstrap):
    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            assert await client.find_coordinator(f"group-{uuid.uuid4().hex[:6]}") == 0
            assert await client.find_coordinator(f"txn-{uuid.uuid4().hex[:6]}", key_type=TRANSACTION_KEY_TYPE) == 0

    run(scenario())


# failures ------------------------------------------------------------------------------------------
def test_a_connection_lost_under_the_client_is_dropped_and_the_call_retried(broker, bootstrap, filled):
    topic, count = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap, retry_backoff_ms=20, retry_backoff_max_ms=100) as client:
            conn = await client.connection(0)
            broker.down()  # every connection is cut; new ones refused until up
            timer = threading.Timer(0.7, broker.up)
            timer.start()
            try:
                with pytest.raises(KafkaClientError):  # send_request does not retry
                    await client.send_request(0, ApiKey.METADATA, API_BY_KEY[int(ApiKey.METADATA)].Request(topics=[]))
                assert conn.closed and client.pool.get(0) is None
                assert await client.list_offsets({tp: OffsetSpec.LATEST}) == {tp: count}  # retried until up
            finally:
                timer.join()
                broker.up()
            assert client.stats["retries"] >= 1
            assert (await client.connection(0)) is not conn
            records, _ = await read_range(client, tp, count - 3, count)
            assert [r.offset for r in records if r.offset >= count - 3] == [count - 3, count - 2, count - 1]

    run(scenario())


def test_a_broker_down_past_the_deadline_fails_saying_how_long_it_tried(broker, bootstrap, filled):
    topic, _ = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(
            bootstrap, retry_backoff_ms=50, retry_backoff_max_ms=100, default_api_timeout_ms=1500
        ) as client:
            await client.leader_for(tp)
            with broker.stopped():
                with pytest.raises(KafkaClientError, match="gave up after") as e:
                    await client.call_with_retries(
                        lambda: client.send_request(
                            0, ApiKey.METADATA, API_BY_KEY[int(ApiKey.METADATA)].Request(topics=[])
                        ),
                        what="Metadata to broker 0",
                    )
                assert "Metadata to broker 0" in str(e.value)

    run(scenario())


# injected faults (broker.faults): the retry paths ------------------------------------------------------
def test_leader_errors_refresh_the_metadata_and_list_offsets_retries(broker, bootstrap, filled):
    topic, count = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap, retry_backoff_ms=10, retry_backoff_max_ms=50) as client:
            await client.leader_for(tp)
            with broker.faults.track_requests() as log:
                with broker.faults.push_errors("ListOffsets", ["NOT_LEADER_OR_FOLLOWER", "LEADER_NOT_AVAILABLE"]):
                    assert await client.list_offsets({tp: OffsetSpec.LATEST}) == {tp: count}
            assert log.count("ListOffsets") == 3
            assert log.count("Metadata") >= 2  # each leader error invalidated the topic: asked again
            assert client.stats["retries"] == 2

    run(scenario())


def test_a_fetch_retries_partition_errors_and_dropped_connections(broker, bootstrap, filled):
    topic, count = filled
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AsyncKafkaClient(bootstrap, retry_backoff_ms=10, retry_backoff_max_ms=50) as client:
            with broker.faults.push_errors("Fetch", ["NOT_LEADER_OR_FOLLOWER"], topic=topic, partition=0):
                records, position = await read_range(client, tp, 0, 50)
            assert [r.offset for r in records if r.offset < 50] == list(range(50))
            assert client.stats["retries"] == 1
            fetch = client.fetch_batches(tp, 0, count, max_bytes=2000)
            offsets = [r.offset for r in (await fetch.__anext__()).batch.records()]
            assert broker.faults.drop_connections() >= 1  # the fetch sent ahead is lost with its connection
            async for fetched in fetch:
                offsets += [r.offset for r in fetched.batch.records()]
            assert sorted(set(offsets)) == list(range(count)) and fetch.position == count
            assert client.stats["retries"] >= 2

    run(scenario())


def test_find_coordinator_waits_while_the_coordinator_is_not_available(broker, bootstrap):
    async def scenario():
        async with AsyncKafkaClient(bootstrap, retry_backoff_ms=10, retry_backoff_max_ms=50) as client:
            with broker.faults.push_errors("FindCoordinator", ["COORDINATOR_NOT_AVAILABLE"] * 2):
                assert await client.find_coordinator(f"group-{uuid.uuid4().hex[:6]}") == 0
            assert client.stats["retries"] == 2
            with broker.faults.push_errors("FindCoordinator", ["GROUP_AUTHORIZATION_FAILED"]):
                with pytest.raises(KafkaClientError, match="GROUP_AUTHORIZATION_FAILED"):
                    await client.find_coordinator("denied")

    run(scenario())


def test_an_unanswered_request_times_out_and_its_connection_is_dropped(broker, bootstrap):
    async def scenario():
        async with AsyncKafkaClient(bootstrap) as client:
            conn = await client.connection(0)
            body = API_BY_KEY[int(ApiKey.METADATA)].Request(topics=[])
            with broker.faults.set_rtt(2000, api="Metadata"):
                with pytest.raises(KafkaTimeoutError, match="no answer to Metadata"):
                    await client.send_request(0, ApiKey.METADATA, body, timeout_ms=300)
            assert conn.closed and client.pool.get(0) is None
            assert (await client.send_request(0, ApiKey.METADATA, body)).brokers

    run(scenario())
