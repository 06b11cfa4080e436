"""The next share coordinator serves the acknowledged share-partition state after the coordinator's broker stops
(3 in-process brokers on one ``memory:`` registry, ``__share_group_state`` replicated to all of them); the
persister of a broker that is not the coordinator sends the share-state APIs over the network."""

from __future__ import annotations

import pytest

from broker.share.records import SHARE_GROUP_STATE_TOPIC, coordinator_key, share_state_partition_for
from broker.share.state_batches import PersistedState, StateBatch
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from ..replication.cluster import Cluster
from .test_share_coordinator import SHARE_OVERRIDES, new_topic, topic_id_of

B = StateBatch


@pytest.fixture()
def cluster(tmp_path_factory):
    c = Cluster(
        3,
        tmp_path_factory,
        replica_lag_time_max_ms=2000,
        replica_fetch_wait_max_ms=100,
        offsets_topic_num_partitions=1,
        **SHARE_OVERRIDES,
    )
    yield c
    c.close()


def test_the_next_coordinator_serves_the_acknowledged_state_after_the_coordinator_stops(cluster):
    any_broker = cluster.any()
    bootstrap = ",".join(b.bootstrap_servers for b in cluster.brokers.values())
    tid = topic_id_of(any_broker, new_topic(bootstrap, 1, 3))
    group = "failover"
    p = share_state_partition_for(coordinator_key(group, tid, 0), 3)

    def persister(i: int):
        return cluster.brokers[i].broker.share_persister

    # create __share_group_state through a lookup, then wait for its partition to be fully replicated
    code, coordinator = any_broker.call(lambda: any_broker.broker.share_coordinator.find_coordinator(f"{group}:x:0"))
    assert code == ErrorCode.INVALID_REQUEST  # a malformed key
    key = coordinator_key(group, tid, 0)
    wait_until(
        lambda: any_broker.call(lambda: any_broker.broker.share_coordinator.find_coordinator(key))[0] == ErrorCode.NONE,
        20,
    )
    wait_until(lambda: sorted(cluster.state(SHARE_GROUP_STATE_TOPIC, p).isr) == [0, 1, 2], 20)
    first = cluster.state(SHARE_GROUP_STATE_TOPIC, p).leader
    other = next(i for i in cluster.brokers if i != first)  # its persister sends the APIs to `first`

    async def write_state():
        pr = persister(other)
        assert (await pr.initialize(group, tid, 0, 1, 0))[0] == ErrorCode.NONE
        assert (await pr.read(group, tid, 0, 2))[0] == ErrorCode.NONE
        for i in range(5):
            assert (await pr.write(group, tid, 0, 1, 2, i, [B(i, i, 2, 1), B(i + 1, i + 4, 0, 2)]))[0] == ErrorCode.NONE
        return await pr.read(group, tid, 0, 2)

    code, _, written = cluster.brokers[other].call(write_state)
    assert code == ErrorCode.NONE
    assert written == PersistedState(1, 4, (B(4, 4, 2, 1), B(5, 8, 0, 2)), 2)

    cluster.stop(first)
    wait_until(lambda: cluster.state(SHARE_GROUP_STATE_TOPIC, p).leader not in (first, -1), 20)
    reader = next(i for i in cluster.brokers if i != first)
    code, _, after = cluster.brokers[reader].call(lambda: persister(reader).read(group, tid, 0, 2), 40)
    assert code == ErrorCode.NONE
    assert after == written
    # the new coordinator fences the old leader epoch and keeps writing
    code, _ = cluster.brokers[reader].call(lambda: persister(reader).write(group, tid, 0, 1, 1, 5, []), 40)
    assert code == ErrorCode.FENCED_LEADER_EPOCH
