"""``AIOAdminClient`` against an in-process ``EmbeddedBroker``, mirroring the blocking ``AdminClient``'s tests: the
topic lifecycle (create, already exists, list, configs, grow, describe, delete records, delete), config resources,
consumer groups (offsets, list, describe classic/unknown/live groups, delete) and the cluster - with results
equal to what the blocking client answers for the same calls."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable
from typing import TypeVar

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    AdminOperationError,
    AIOAdminClient,
    Consumer,
    KafkaClient,
    KafkaClientError,
    NewTopic,
    OffsetOutOfRangeError,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from spark_kafkalog.client.admin.admin_configs import BROKER, SET, TOPIC, AlterConfigOp, ConfigResource
from spark_kafkalog.client.aio import AIOAdminClient as FromAio
from spark_kafkalog.client.aio.admin import AIOAdminClient as FromModule
from spark_kafkalog.protocol import ErrorCode

pytestmark = pytest.mark.integration

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0, zookeeper_connect=f"memory:aio-admin-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def bootstrap(broker) -> str:
    return broker.bootstrap_servers


def name(prefix: str = "aio-admin") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def test_the_class_is_public_where_the_contract_says():
    assert AIOAdminClient is FromAio is FromModule


def test_topic_lifecycle_and_fetching_below_the_log_start(bootstrap):
    topic = name()
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 1, 1, {"retention.ms": "600000"})])
            with pytest.raises(AdminOperationError, match="TOPIC_ALREADY_EXISTS") as info:
                await admin.create_topics([NewTopic(topic, 1, 1)])
            assert info.value.error_code == ErrorCode.TOPIC_ALREADY_EXISTS
            assert topic in await admin.list_topics()
            assert (await admin.describe_configs(topic))["retention.ms"] == "600000"
            assert await admin.describe_configs(topic, keys=["retention.ms"]) == {"retention.ms": "600000"}
            await admin.create_partitions({topic: 3})
            description = (await admin.describe_topics([topic]))[topic]
            assert description.num_partitions == 3
            assert all(p.leader == 0 and p.isr == (0,) for p in description.partitions)
            with Producer(bootstrap) as producer:  # blocking calls on the loop: fine in a test
                for i in range(20):
                    producer.send(topic, b"v%d" % i, partition=0)
            assert await admin.list_offsets({tp: OffsetSpec.LATEST}) == {tp: 20}
            assert await admin.delete_records({tp: 5}) == {tp: 5}
            assert await admin.list_offsets({tp: OffsetSpec.EARLIEST}) == {tp: 5}
            with KafkaClient(bootstrap) as client:
                with pytest.raises(OffsetOutOfRangeError) as oor:
                    list(client.fetch_batches(tp, 2, 10))
                assert (oor.value.log_start_offset, oor.value.high_watermark) == (5, 20)
            await admin.delete_topics([topic])
            assert topic not in await admin.list_topics()
            with pytest.raises(AdminOperationError, match="UNKNOWN_TOPIC_OR_PARTITION"):
                await admin.describe_topics([topic])

    run(scenario())


def test_results_equal_the_blocking_clients(bootstrap):
    topic = name()
    with AdminClient(bootstrap) as blocking:
        blocking.create_topics([NewTopic(topic, 2, 1)])
        expected = (
            blocking.describe_topics([topic]),
            blocking.list_topics(),
            blocking.describe_configs(topic),
            blocking.describe_cluster(),
            blocking.describe_resource_configs([ConfigResource(TOPIC, topic)]),
        )

    async def scenario():
        async with AIOAdminClient({"bootstrap.servers": bootstrap}) as admin:
            return (
                await admin.describe_topics([topic]),
                await admin.list_topics(),
                await admin.describe_configs(topic),
                await admin.describe_cluster(),
                await admin.describe_resource_configs([ConfigResource(TOPIC, topic)]),
            )

    got = run(scenario())
    assert got == expected
    assert got[3]["brokers"] == {0: bootstrap}


def test_validate_only_and_failures_name_each_topic(bootstrap):
    good, bad = name(), name()

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.create_topics([NewTopic(good, 1, 1)], validate_only=True)
            assert good not in await admin.list_topics()
            with pytest.raises(AdminOperationError) as e:
                await admin.create_topics([NewTopic(good, 1, 1), NewTopic(bad, 1, 5)])
            assert set(e.value.errors) == {bad}
            assert e.value.errors[bad].error_code == ErrorCode.INVALID_REPLICATION_FACTOR
            assert good in await admin.list_topics()
            with pytest.raises(AdminOperationError, match="INVALID_PARTITIONS"):
                await admin.create_partitions({good: 1})
            with pytest.raises(AdminOperationError, match="UNKNOWN_TOPIC_OR_PARTITION"):
                await admin.delete_topics([name("missing")])

    run(scenario())


def test_topic_and_broker_config_resources_are_altered_and_described(bootstrap):
    topic = name()
    resource = ConfigResource(TOPIC, topic)

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 1, 1)])
            await admin.incremental_alter_configs({resource: [AlterConfigOp("retention.ms", "123456", SET)]})
            entries = {e.name: e for e in (await admin.describe_resource_configs([resource]))[resource]}
            assert entries["retention.ms"].value == "123456"
            assert entries["retention.ms"].source_name == "DYNAMIC_TOPIC_CONFIG"
            await admin.alter_configs({resource: {"cleanup.policy": "compact"}})  # replaces the whole dynamic set
            after = await admin.describe_configs(topic)
            assert after["cleanup.policy"] == "compact" and after["retention.ms"] != "123456"
            broker = ConfigResource(BROKER, "0")
            described = await admin.describe_resource_configs([broker], keys=["log.retention.ms"])
            assert [e.name for e in described[broker]] == ["log.retention.ms"]
            with pytest.raises(AdminOperationError) as e:
                await admin.describe_resource_configs([ConfigResource(TOPIC, name("missing"))])
            assert e.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    run(scenario())


def test_admin_lists_describes_resets_and_deletes_a_group(bootstrap):
    topic, group = name(), name("g")
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, 2, 1)])
            await admin.alter_group_offsets(group, {tps[0]: 2, tps[1]: 5})
            assert group in [g.group_id for g in await admin.list_groups()]
            assert group in [g.group_id for g in await admin.list_consumer_groups(["Empty"])]
            assert group not in [g.group_id for g in await admin.list_groups(["Stable"])]
            description = (await admin.describe_groups([group]))[group]
            assert description.state == "Empty" and description.members == () and description.coordinator == 0
            offsets = await admin.list_group_offsets(group)
            assert {tp: om.offset for tp, om in offsets.items()} == {tps[0]: 2, tps[1]: 5}
            assert set(await admin.list_consumer_group_offsets(group, [tps[1]])) == {tps[1]}
            with AdminClient(bootstrap) as blocking:
                assert blocking.list_group_offsets(group) == offsets
                assert blocking.describe_consumer_groups([group]) == await admin.describe_consumer_groups([group])
                assert blocking.group_lag(group) == await admin.group_lag(group)
            with Producer(bootstrap) as producer:
                for i in range(10):
                    producer.send(topic, b"x", partition=i % 2)
            lag = {
                row.topic_partition: (row.committed, row.log_end_offset, row.lag)
                for row in await admin.group_lag(group)
            }
            assert lag == {tps[0]: (2, 5, 3), tps[1]: (5, 5, 0)}
            await admin.delete_group_offsets(group, [tps[1]])
            assert set(await admin.list_group_offsets(group)) == {tps[0]}
            rows = await admin.group_lag(group, [topic])
            assert [(r.topic_partition, r.committed, r.lag) for r in rows] == [(tps[0], 2, 3), (tps[1], None, None)]
            await admin.delete_groups([group])
            assert group not in [g.group_id for g in await admin.list_groups()]
            with pytest.raises(KafkaClientError, match="GROUP_ID_NOT_FOUND") as e:
                await admin.delete_consumer_groups([group])
            assert e.value.error_code == ErrorCode.GROUP_ID_NOT_FOUND

    run(scenario())


def test_an_unknown_group_is_described_dead(bootstrap):
    group = name("nobody")

    async def scenario():
        async with AIOAdminClient(bootstrap) as admin:
            return (await admin.describe_consumer_groups([group]))[group]

    described = run(scenario())
    assert (described.type, described.state, described.members) == ("classic", "Dead", ())


def test_a_live_classic_group_is_described_with_its_member_and_cannot_be_deleted(bootstrap):
    topic, group = name(), name("live")
    with AdminClient(bootstrap) as blocking:
        blocking.create_topics([NewTopic(topic, 2, 1)])
    consumer = Consumer(bootstrap, group_id=group, client_id="aio-admin-test", auto_offset_reset="earliest")
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 20
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=100)
        assert sorted(consumer.assignment()) == [TopicPartition(topic, 0), TopicPartition(topic, 1)]

        async def scenario():
            async with AIOAdminClient(bootstrap) as admin:
                described = (await admin.describe_consumer_groups([group]))[group]
                with pytest.raises(KafkaClientError, match="NON_EMPTY_GROUP"):
                    await admin.delete_groups([group])
                return described

        described = run(scenario())
    finally:
        consumer.close()
    assert (described.type, described.state) == ("classic", "Stable")
    (member,) = described.members
    assert member.client_id == "aio-admin-test"
    assert set(member.assignment) == {TopicPartition(topic, 0), TopicPartition(topic, 1)}


def test_a_moved_controller_and_coordinator_are_retried(broker, bootstrap):
    topic, group = name(), name("moved")
    tp = TopicPartition(topic, 0)

    async def scenario():
        async with AIOAdminClient(bootstrap, retry_backoff_ms=10, retry_backoff_max_ms=50) as admin:
            with broker.faults.track_requests() as log:
                with broker.faults.push_errors("CreateTopics", ["NOT_CONTROLLER"]):
                    await admin.create_topics([NewTopic(topic, 1, 1)])
            assert log.count("CreateTopics") == 2
            assert topic in await admin.list_topics()
            with broker.faults.track_requests() as log:
                with broker.faults.push_errors("OffsetCommit", ["NOT_COORDINATOR"], topic=topic, partition=0):
                    await admin.alter_group_offsets(group, {tp: 0})
            assert log.count("OffsetCommit") == 2
            assert log.count("FindCoordinator") == 2  # the moved coordinator was forgotten and looked up again
            with broker.faults.push_errors("DeleteRecords", ["NOT_LEADER_OR_FOLLOWER"], topic=topic, partition=0):
                assert await admin.delete_records({tp: 0}) == {tp: 0}

    run(scenario())
