"""``AdminClient`` and ``AIOAdminClient`` against an in-process broker: share groups listed, described and their
start offsets read (KIP-932), and GROUP config resources set and described."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client.admin import AdminClient
from spark_kafkalog.client.admin.admin_configs import GROUP, SET, AlterConfigOp, ConfigResource
from spark_kafkalog.client.aio.admin import AIOAdminClient
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

TOPIC = "asg-events"
Heartbeat = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:asg-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        offsets_topic_num_partitions=1,
        share_coordinator_state_topic_num_partitions=1,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 2, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 2)), 10, f"leaders of {TOPIC}")
    gc = b.broker.group_coordinator
    b.call(lambda: gc.find_coordinator("any"))  # creates __consumer_offsets, as a client's FindCoordinator does
    wait_until(lambda: b.call(lambda: len(gc.loaded)) == 1, 10, "the offsets partition to load")
    yield b
    b.stop()


@pytest.fixture(scope="module")
def group(broker) -> tuple[str, str]:
    """A share group with one member assigned both partitions: (group id, member id)."""
    group_id, member = f"asg-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    epoch = 0
    with Wire(broker.bootstrap_servers) as w:

        def assigned() -> bool:
            nonlocal epoch
            body = Heartbeat(group_id=group_id, member_id=member, member_epoch=epoch, subscribed_topic_names=[TOPIC])
            resp = w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)
            if resp.error_code in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
                return False
            assert resp.error_code == ErrorCode.NONE, resp
            epoch = resp.member_epoch
            return resp.assignment is not None and len(resp.assignment.topic_partitions) == 1

        wait_until(assigned, 20, "the member's assignment")
    return group_id, member


@pytest.fixture()
def admin(broker):
    with AdminClient(broker.bootstrap_servers) as a:
        yield a


def test_share_groups_are_listed_and_described(admin, group):
    group_id, member = group
    listed = admin.list_share_groups()
    assert [(g.group_id, g.protocol_type, g.state) for g in listed] == [(group_id, "share", "Stable")]
    d = admin.describe_share_groups([group_id])[group_id]
    assert (d.group_id, d.state, d.assignor, d.coordinator) == (group_id, "Stable", "simple", 0)
    [m] = d.members
    assert (m.member_id, m.subscribed_topic_names) == (member, (TOPIC,))
    assert m.assignment == (TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1))


def test_a_group_that_is_not_a_share_group_is_not_found(admin, group):
    with pytest.raises(KafkaClientError) as e:
        admin.describe_share_groups(["no-such-share-group"])
    assert e.value.error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_share_group_offsets_are_the_start_offsets_of_the_initialized_partitions(admin, group):
    group_id, _ = group
    offsets = admin.list_share_group_offsets(group_id)
    assert {tp: (o.start_offset, o.lag, o.error) for tp, o in offsets.items()} == {
        TopicPartition(TOPIC, 0): (-1, None, None),
        TopicPartition(TOPIC, 1): (-1, None, None),
    }
    named = admin.list_share_group_offsets(group_id, [TopicPartition(TOPIC, 1), TopicPartition("gone", 0)])
    assert named[TopicPartition(TOPIC, 1)].start_offset == -1
    assert named[TopicPartition("gone", 0)].error.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_the_asyncio_admin_client_reads_the_same(broker, group):
    group_id, member = group

    async def scenario():
        async with AIOAdminClient(broker.bootstrap_servers) as admin:
            listed = await admin.list_share_groups()
            described = await admin.describe_share_groups([group_id])
            offsets = await admin.list_share_group_offsets(group_id)
            return listed, described, offsets

    listed, described, offsets = asyncio.run(scenario())
    assert [g.group_id for g in listed] == [group_id]
    assert [m.member_id for m in described[group_id].members] == [member]
    assert sorted(offsets) == [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]


def test_group_configs_are_set_and_described_through_the_admin_client(admin):
    resource = ConfigResource(GROUP, "configured-group")
    admin.incremental_alter_configs({resource: [AlterConfigOp("share.auto.offset.reset", "earliest", SET)]})
    entries = {e.name: e for e in admin.describe_resource_configs([resource])[resource]}
    assert (entries["share.auto.offset.reset"].value, entries["share.auto.offset.reset"].source) == ("earliest", 8)
    assert entries["share.record.lock.duration.ms"].value == "30000"
    with pytest.raises(KafkaClientError) as e:
        admin.incremental_alter_configs({resource: [AlterConfigOp("share.delivery.count.limit", "1", SET)]})
    assert e.value.error_code == ErrorCode.INVALID_CONFIG


def test_offsets_of_an_empty_share_group_are_altered_and_deleted(broker, admin, group):
    busy, _ = group
    with pytest.raises(KafkaClientError) as e:
        admin.alter_share_group_offsets(busy, {TopicPartition(TOPIC, 0): 0})
    assert e.value.error_code == ErrorCode.NON_EMPTY_GROUP

    empty, member = f"asg-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with Wire(broker.bootstrap_servers) as w:
        body = Heartbeat(group_id=empty, member_id=member, member_epoch=0, subscribed_topic_names=[TOPIC])
        joined = w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)
        assert joined.error_code == ErrorCode.NONE and joined.assignment is not None
        leave = Heartbeat(group_id=empty, member_id=member, member_epoch=-1)
        assert w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, leave).error_code == ErrorCode.NONE

    admin.alter_share_group_offsets(empty, {TopicPartition(TOPIC, 0): 0, TopicPartition(TOPIC, 1): 0})
    assert {tp: o.start_offset for tp, o in admin.list_share_group_offsets(empty).items()} == {
        TopicPartition(TOPIC, 0): 0,
        TopicPartition(TOPIC, 1): 0,
    }
    with pytest.raises(KafkaClientError) as e:
        admin.alter_share_group_offsets(empty, {TopicPartition("gone", 0): 0})
    assert e.value.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    async def delete() -> None:
        async with AIOAdminClient(broker.bootstrap_servers) as aio:
            await aio.delete_share_group_offsets(empty, [TOPIC])

    asyncio.run(delete())
    assert {o.start_offset for o in admin.list_share_group_offsets(empty).values()} == {-1}
