"""Kafka 0.8.2's ZooKeeper offset storage on a real ZooKeeper: OffsetCommit/OffsetFetch v0 on any broker read
and write ``/consumers/<group>/offsets/<topic>/<partition>`` (decimal ASCII), v1+ use ``__consumer_offsets``,
and neither sees the other; GroupAdmin's ``storage="zookeeper"`` goes through v0 (in-process brokers)."""

from __future__ import annotations

import uuid

import pytest
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from spark_kafkalog.client import KafkaClient, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin, OffsetAndMetadata
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.waiting import wait_until

from ..broker.wire import Wire

pytestmark = pytest.mark.integration

TOPIC = "clicks"
SETTINGS = {"group_initial_rebalance_delay_ms": 0, "offsets_topic_num_partitions": 1}


@pytest.fixture(scope="module")
def chroot() -> str:
    return f"/zk-offsets-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def brokers(zookeeper, chroot, tmp_path_factory):
    started = [
        EmbeddedBroker(
            i,
            zookeeper_connect=zookeeper.connect_string + chroot,
            log_dir=tmp_path_factory.mktemp(f"b{i}"),
            **SETTINGS,
        ).start()
        for i in range(2)
    ]
    b = started[0]
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 2, 1))
    wait_until(
        lambda: all(s.call(lambda s=s: s.broker.topic_admin.has_leaders(TOPIC, 2)) for s in started),
        20,
        f"leaders of {TOPIC} on both brokers",
    )
    yield started
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def zk(zookeeper, chroot):
    client = KazooClient(hosts=zookeeper.connect_string + chroot, timeout=10)
    client.start(10)
    yield client
    client.stop()
    client.close()


def new_group() -> str:
    return f"zk-{uuid.uuid4().hex[:8]}"


def coordinator_of(brokers, group: str) -> tuple[EmbeddedBroker, EmbeddedBroker]:
    """(the broker coordinating ``group``, the other one), once the coordinator has loaded the group."""
    Req = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request
    with Wire(brokers[0].bootstrap_servers) as w:

        def loaded_coordinator() -> tuple[EmbeddedBroker, EmbeddedBroker] | None:
            (c,) = w.call(ApiKey.FIND_COORDINATOR, 4, Req(key_type=0, coordinator_keys=[group])).coordinators
            if c.error_code != ErrorCode.NONE:
                return None
            gc = brokers[c.node_id].broker.group_coordinator
            loaded = brokers[c.node_id].call(lambda: gc.coordinator_error(group)) == ErrorCode.NONE
            return (brokers[c.node_id], brokers[1 - c.node_id]) if loaded else None

        return wait_until(loaded_coordinator, 20, f"a coordinator for {group} that has loaded it")


def commit(broker, group: str, partition: int, offset: int, version: int) -> int:
    R = API_BY_KEY[ApiKey.OFFSET_COMMIT].Request
    T = R.OffsetCommitRequestTopic
    body = R(
        group_id=group,
        topics=[
            T(
                name=TOPIC,
                partitions=[
                    T.OffsetCommitRequestPartition(
                        partition_index=partition, committed_offset=offset, committed_metadata="meta"
                    )
                ],
            )
        ],
    )
    with Wire(broker.bootstrap_servers) as w:
        (t,) = w.call(ApiKey.OFFSET_COMMIT, version, body).topics
    return t.partitions[0].error_code


def fetch(broker, group: str, partition: int, version: int) -> tuple[int, str, int]:
    R = API_BY_KEY[ApiKey.OFFSET_FETCH].Request
    body = R(group_id=group, topics=[R.OffsetFetchRequestTopic(name=TOPIC, partition_indexes=[partition])])
    with Wire(broker.bootstrap_servers) as w:
        (t,) = w.call(ApiKey.OFFSET_FETCH, version, body).topics
    p = t.partitions[0]
    return p.committed_offset, p.metadata, p.error_code


def test_offset_commit_v0_on_a_broker_that_does_not_coordinate_the_group_writes_the_zookeeper_node(brokers, zk):
    group = new_group()
    coordinator, other = coordinator_of(brokers, group)
    assert commit(other, group, 1, 42, version=0) == ErrorCode.NONE
    data, stat = zk.get(f"/consumers/{group}/offsets/{TOPIC}/1")
    assert data == b"42" and stat.ephemeralOwner == 0  # persistent, decimal ASCII, metadata dropped
    assert commit(coordinator, group, 1, 43, version=0) == ErrorCode.NONE
    assert zk.get(f"/consumers/{group}/offsets/{TOPIC}/1")[0] == b"43"
    for b in brokers:  # any broker reads it back
        assert fetch(b, group, 1, version=0) == (43, "", ErrorCode.NONE)


def test_v0_reads_nodes_written_by_a_0_8_zookeeper_consumer(brokers, zk):
    group = new_group()
    zk.create(f"/consumers/{group}/offsets/{TOPIC}/0", b"1234", makepath=True)
    assert fetch(brokers[1], group, 0, version=0) == (1234, "", ErrorCode.NONE)
    assert fetch(brokers[1], group, 1, version=0) == (-1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # no node


def test_v0_and_v1_plus_offsets_live_apart(brokers, zk):
    group = new_group()
    coordinator, other = coordinator_of(brokers, group)
    assert commit(other, group, 0, 5, version=0) == ErrorCode.NONE
    assert fetch(coordinator, group, 0, version=1) == (-1, "", ErrorCode.NONE)  # v1 does not see the v0 commit
    assert commit(coordinator, group, 0, 100, version=2) == ErrorCode.NONE
    assert fetch(coordinator, group, 0, version=1) == (100, "meta", ErrorCode.NONE)
    assert fetch(other, group, 0, version=0) == (5, "", ErrorCode.NONE)  # v0 does not see the v2 commit
    assert zk.get(f"/consumers/{group}/offsets/{TOPIC}/0")[0] == b"5"
    assert commit(coordinator, group, 1, 7, version=1) == ErrorCode.NONE
    assert zk.exists(f"/consumers/{group}/offsets/{TOPIC}/1") is None  # v1+ never write ZooKeeper


def test_group_admin_storage_zookeeper_goes_through_v0(brokers, zk):
    group = new_group()
    tps = [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]
    with KafkaClient(brokers[0].bootstrap_servers) as client:
        admin = GroupAdmin(client)
        admin.commit_offsets(group, {tps[0]: 17}, storage="zookeeper")
        assert zk.get(f"/consumers/{group}/offsets/{TOPIC}/0")[0] == b"17"
        assert admin.list_group_offsets(group, tps, storage="zookeeper") == {tps[0]: OffsetAndMetadata(17, "")}
        assert admin.list_group_offsets(group, tps) == {}  # __consumer_offsets holds nothing yet
        admin.commit_offsets(group, {tps[1]: OffsetAndMetadata(30, "kafka-side", 3)})
        assert admin.list_group_offsets(group, tps) == {tps[1]: OffsetAndMetadata(30, "kafka-side", 3)}
        assert admin.list_group_offsets(group, tps, storage="zookeeper") == {tps[0]: OffsetAndMetadata(17, "")}
        assert zk.exists(f"/consumers/{group}/offsets/{TOPIC}/1") is None
        with pytest.raises(ValueError, match="offset storage must be one of kafka, zookeeper"):
            admin.list_group_offsets(group, tps, storage="zk")
