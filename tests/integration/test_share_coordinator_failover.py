"""Share coordinator failover with broker processes (3 brokers, real ZooKeeper, ``__share_group_state`` with three
replicas, min ISR 2): share-partition state written through the share-state APIs to the coordinator of its key
(FindCoordinator key type 2) is read back, unchanged, from the next coordinator after the first one is SIGKILLed,
and again from a third after the second stops cleanly. The writes span a snapshot (one every 2 updates), so the
new coordinators rebuild the state from a snapshot plus updates."""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from broker.share.records import SHARE_GROUP_STATE_TOPIC, coordinator_key, share_state_partition_for
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.waiting import wait_until

from ..broker.wire import Wire

pytestmark = pytest.mark.integration

STATE_PARTITIONS = 3
CONFIG = {
    "share.coordinator.state.topic.num.partitions": STATE_PARTITIONS,
    "share.coordinator.state.topic.replication.factor": 3,
    "share.coordinator.state.topic.min.isr": 2,
    "share.coordinator.snapshot.update.records.per.snapshot": 2,
    "offsets.topic.num.partitions": 3,
    "zookeeper.session.timeout.ms": 6000,
    "replica.lag.time.max.ms": 4000,
}
FC = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request
INIT = API_BY_KEY[ApiKey.INITIALIZE_SHARE_GROUP_STATE].Request
READ = API_BY_KEY[ApiKey.READ_SHARE_GROUP_STATE].Request
WRITE = API_BY_KEY[ApiKey.WRITE_SHARE_GROUP_STATE].Request
SUMMARY = API_BY_KEY[ApiKey.READ_SHARE_GROUP_STATE_SUMMARY].Request


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("share-coordinator-failover"),
        zookeeper_connect=f"{zookeeper.connect_string}/share-failover-{uuid.uuid4().hex[:8]}",
        broker_config=CONFIG,
    )
    c.start()
    yield c
    c.stop()


def wire(cluster, broker: int) -> Wire:
    return Wire(f"127.0.0.1:{cluster.ports[broker]}")


def find(cluster, via: int, key: str) -> tuple[int, int]:
    """(error, node) of FindCoordinator key type 2 asked of broker ``via``."""
    with wire(cluster, via) as w:
        c = w.call(ApiKey.FIND_COORDINATOR, 6, FC(key_type=2, coordinator_keys=[key])).coordinators[0]
    return c.error_code, c.node_id


def coordinator(cluster, key: str, alive: list[int]) -> int:
    found: list[int] = []

    def ready() -> bool:
        code, node = find(cluster, alive[0], key)
        found[:] = [node]
        return code == ErrorCode.NONE and node in alive

    wait_until(ready, 40, f"a live share coordinator for {key}")
    return found[0]


def partition_of(resp):
    (topic,) = resp.results
    (p,) = topic.partitions
    return p


def read_state(cluster, broker: int, group: str, tid: uuid.UUID, leader_epoch: int):
    D = READ.ReadStateData
    body = READ(
        group_id=group, topics=[D(topic_id=tid, partitions=[D.PartitionData(partition=0, leader_epoch=leader_epoch)])]
    )
    with wire(cluster, broker) as w:
        p = partition_of(w.call(ApiKey.READ_SHARE_GROUP_STATE, 0, body))
    batches = [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches]
    return p.error_code, p.state_epoch, p.start_offset, batches


def write_state(w: Wire, group: str, tid: uuid.UUID, leader_epoch: int, start: int, batches) -> int:
    P = WRITE.WriteStateData.PartitionData
    part = P(
        partition=0,
        state_epoch=1,
        leader_epoch=leader_epoch,
        start_offset=start,
        state_batches=[
            P.StateBatch(first_offset=f, last_offset=la, delivery_state=s, delivery_count=c) for f, la, s, c in batches
        ],
    )
    body = WRITE(group_id=group, topics=[WRITE.WriteStateData(topic_id=tid, partitions=[part])])
    return partition_of(w.call(ApiKey.WRITE_SHARE_GROUP_STATE, 1, body)).error_code


def test_share_state_survives_a_killed_and_a_stopped_coordinator(cluster):
    name = f"sf-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, 1, 3)])
        wait_until(lambda: admin.describe_topics([name])[name].topic_id is not None, 20)
        tid = uuid.UUID(str(admin.describe_topics([name])[name].topic_id))
    group = f"g-{uuid.uuid4().hex[:6]}"
    key = coordinator_key(group, tid, 0)
    p = share_state_partition_for(key, STATE_PARTITIONS)
    alive = list(cluster.broker_ids)
    first = coordinator(cluster, key, alive)

    def fully_replicated() -> bool:
        with AdminClient(cluster.bootstrap_servers) as admin:
            state = admin.describe_topics([SHARE_GROUP_STATE_TOPIC])[SHARE_GROUP_STATE_TOPIC].partitions[p]
        return sorted(state.isr) == sorted(cluster.broker_ids)

    wait_until(fully_replicated, 30, f"{SHARE_GROUP_STATE_TOPIC}-{p} to have every replica in its ISR")

    with wire(cluster, first) as w:
        D = INIT.InitializeStateData
        init = INIT(
            group_id=group,
            topics=[D(topic_id=tid, partitions=[D.PartitionData(partition=0, state_epoch=1, start_offset=0)])],
        )
        assert partition_of(w.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, init)).error_code == ErrorCode.NONE
    assert read_state(cluster, first, group, tid, 4)[0] == ErrorCode.NONE  # leader epoch 4 recorded
    with wire(cluster, first) as w:
        for i in range(5):  # updates and a snapshot: U U S U U (the read's leader epoch update counts)
            assert write_state(w, group, tid, 4, i, [(i, i, 2, 1), (i + 1, i + 3, 0, 2)]) == ErrorCode.NONE
    written = read_state(cluster, first, group, tid, 4)
    assert written == (ErrorCode.NONE, 1, 4, [(4, 4, 2, 1), (5, 7, 0, 2)])

    cluster.kill_broker(first)
    alive.remove(first)
    second = coordinator(cluster, key, alive)
    assert read_state(cluster, second, group, tid, 4) == written
    with wire(cluster, second) as w:
        assert write_state(w, group, tid, 3, 5, []) == ErrorCode.FENCED_LEADER_EPOCH  # the epoch survived too
        assert write_state(w, group, tid, 5, 5, [(5, 6, 2, 2)]) == ErrorCode.NONE
    written = read_state(cluster, second, group, tid, 5)
    assert written == (ErrorCode.NONE, 1, 5, [(5, 6, 2, 2), (7, 7, 0, 2)])

    cluster.start_broker(first)  # back, so that the stopped second's partition has an in-sync replica to move to
    alive.append(first)
    wait_until(fully_replicated, 40, f"{SHARE_GROUP_STATE_TOPIC}-{p} to have every replica in its ISR again")
    cluster.stop_broker(second)
    alive.remove(second)
    third = coordinator(cluster, key, alive)
    assert third != second
    assert read_state(cluster, third, group, tid, 5) == written
    with wire(cluster, third) as w:
        D = SUMMARY.ReadStateSummaryData
        body = SUMMARY(
            group_id=group, topics=[D(topic_id=tid, partitions=[D.PartitionData(partition=0, leader_epoch=-1)])]
        )
        s = partition_of(w.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 1, body))
    assert (s.error_code, s.state_epoch, s.leader_epoch, s.start_offset) == (ErrorCode.NONE, 1, 5, 5)
