"""DescribeShareGroupOffsets (90) on an in-process broker with the real share coordinator and persister: a share
group's initialized partitions (start offset -1 until chosen), the start offset and lag once its state is written,
named partitions and topics, and the group-level errors and authorization."""

from __future__ import annotations

import time
import uuid

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import describe_share_group_offsets
from broker.server import EmbeddedBroker
from broker.share.state_batches import StateBatch
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch_builder import build_batch
from spark_kafkalog.security.acl import AclOperation, ResourceType
from tests.broker.wire import Wire
from tests.waiting import wait_until

from .acl_services import Secured

TOPIC = "so-events"
Describe = API_BY_KEY[ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS].Request
Heartbeat = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request
Produce = API_BY_KEY[ApiKey.PRODUCE].Request


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:so-{uuid.uuid4().hex[:8]}",
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


@pytest.fixture()
def w(broker):
    with Wire(broker.bootstrap_servers) as wire:
        yield wire


def join(w, group: str) -> None:
    member = uuid.uuid4().hex
    epoch = 0

    def assigned() -> bool:
        nonlocal epoch
        body = Heartbeat(group_id=group, member_id=member, member_epoch=epoch, subscribed_topic_names=[TOPIC])
        resp = w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)
        assert resp.error_code == ErrorCode.NONE, resp
        epoch = resp.member_epoch
        return resp.assignment is not None and bool(resp.assignment.topic_partitions)

    wait_until(assigned, 20, "the member's assignment")


def describe(w, group: str, topics=None, version: int = 1):
    T = Describe.DescribeShareGroupOffsetsRequestGroup
    body = Describe(groups=[T(group_id=group, topics=topics)])
    [g] = w.call(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, version, body).groups
    return g


def produce(w, topic_id: uuid.UUID, n: int, partition: int = 0) -> None:
    records = build_batch([(int(time.time() * 1000), None, b"v%d" % i, ()) for i in range(n)])
    P = Produce.TopicProduceData
    body = Produce(
        transactional_id=None,
        acks=1,
        timeout_ms=5000,
        topic_data=[P(topic_id=topic_id, partition_data=[P.PartitionProduceData(index=partition, records=records)])],
    )
    assert w.call(ApiKey.PRODUCE, 13, body).responses[0].partition_responses[0].error_code == ErrorCode.NONE


def rows(group) -> dict[tuple[str, int], tuple[int, int, int]]:
    return {
        (t.topic_name, p.partition_index): (p.start_offset, p.lag, p.error_code)
        for t in group.topics
        for p in t.partitions
    }


def test_every_initialized_partition_is_described_and_the_written_state_gives_start_offset_and_lag(broker, w):
    group = f"so-{uuid.uuid4().hex[:8]}"
    join(w, group)
    topic_id = broker.call(lambda: broker.broker.metadata.topics[TOPIC].topic_id)
    g = describe(w, group)
    assert (g.error_code, g.error_message) == (ErrorCode.NONE, None)
    assert rows(g) == {(TOPIC, 0): (-1, -1, 0), (TOPIC, 1): (-1, -1, 0)}
    assert g.topics[0].topic_id == topic_id
    produce(w, topic_id, 10)
    persister = broker.broker.share_persister
    _, _, state = broker.call(lambda: persister.read_summary(group, topic_id, 0, -1))
    batches = [StateBatch(3, 4, 2, 1), StateBatch(5, 5, 0, 1)]  # 3-4 acknowledged, 5 available again
    written = broker.call(lambda: persister.write(group, topic_id, 0, state.state_epoch, 0, 3, batches))
    assert written[0] == ErrorCode.NONE, written
    assert rows(describe(w, group))[(TOPIC, 0)] == (3, 10 - 3 - 2, 0)  # offsets 3 and 4 are acknowledged
    v0 = describe(w, group, version=0)
    assert {(t.topic_name, p.partition_index): p.start_offset for t in v0.topics for p in t.partitions} == {
        (TOPIC, 0): 3,
        (TOPIC, 1): -1,
    }


def test_named_partitions_and_unknown_topics(broker, w):
    group = f"so-{uuid.uuid4().hex[:8]}"
    join(w, group)
    T = Describe.DescribeShareGroupOffsetsRequestGroup.DescribeShareGroupOffsetsRequestTopic
    g = describe(w, group, [T(topic_name=TOPIC, partitions=[1, 7]), T(topic_name="no-such-topic", partitions=[0])])
    assert rows(g) == {
        (TOPIC, 1): (-1, -1, 0),
        (TOPIC, 7): (-1, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("no-such-topic", 0): (-1, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    }


def test_a_group_that_is_not_a_share_group_is_not_found(w):
    g = describe(w, "never-seen")
    assert (g.error_code, g.error_message, g.topics) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group never-seen not found.",
        [],
    )


def test_describing_offsets_needs_describe_on_the_group(tmp_path):
    registry = MemoryRegistryStore().view()
    registry.start()
    try:
        s = Secured(tmp_path, registry)
        body = Describe(groups=[Describe.DescribeShareGroupOffsetsRequestGroup(group_id="g", topics=None)])
        [refused] = s.send(describe_share_group_offsets, 1, body).groups
        assert refused.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
        s.grant(AclOperation.DESCRIBE, ResourceType.GROUP, "g")
        [allowed] = s.send(describe_share_group_offsets, 1, body).groups
        assert allowed.error_code != ErrorCode.GROUP_AUTHORIZATION_FAILED
    finally:
        registry.close()
