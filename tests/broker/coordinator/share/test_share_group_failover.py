"""A share group survives a coordinator failover: three in-process brokers on one ``memory:`` registry, the
group's ``__consumer_offsets`` partition replicated to all three; its coordinator stops (controlled shutdown)
and the next leader rebuilds the group from records 10-15, so the members go on heartbeating at their epochs."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

from ...replication.cluster import Cluster

OFFSETS_PARTITIONS = 3
TOPIC = "sg-failover"


@pytest.fixture()
def cluster(tmp_path_factory):
    c = Cluster(
        3,
        tmp_path_factory,
        offsets_topic_num_partitions=OFFSETS_PARTITIONS,
        replica_lag_time_max_ms=2000,
        replica_fetch_wait_max_ms=100,
        group_initial_rebalance_delay_ms=0,
    )
    yield c
    c.close()


def heartbeat(w, group, member, epoch, topics=None):
    R = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request
    body = R(group_id=group, member_id=member, member_epoch=epoch, subscribed_topic_names=topics)
    return w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)


def describe(w, group):
    R = API_BY_KEY[ApiKey.SHARE_GROUP_DESCRIBE].Request
    (d,) = w.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, R(group_ids=[group], include_authorized_operations=False)).groups
    return d


def coordinator_of(cluster: Cluster, group: str) -> int:
    state = cluster.state(OFFSETS_TOPIC, partition_for(group, OFFSETS_PARTITIONS))
    assert state is not None and state.leader >= 0
    return state.leader


def test_the_next_coordinator_rebuilds_the_share_group(cluster):
    cluster.create_topic(TOPIC, {0: (0, 1, 2), 1: (1, 2, 0)})
    group = f"sg-fo-{uuid.uuid4().hex[:6]}"
    gc0 = cluster.brokers[0].broker.group_coordinator
    cluster.brokers[0].call(lambda: gc0.find_coordinator(group))  # creates __consumer_offsets
    p = partition_for(group, OFFSETS_PARTITIONS)
    wait_until(lambda: (s := cluster.state(OFFSETS_TOPIC, p)) is not None and sorted(s.isr) == [0, 1, 2], 30)
    first = coordinator_of(cluster, group)

    def joined(w, member):
        resp = heartbeat(w, group, member, 0, [TOPIC])
        return resp if resp.error_code == ErrorCode.NONE else None

    with Wire(cluster.brokers[first].bootstrap_servers) as w:
        wait_until(lambda: joined(w, "m1") is not None, 30, "m1 to join")
        assert joined(w, "m2").member_epoch == 2
        assert heartbeat(w, group, "m1", 1).member_epoch == 2
        before = describe(w, group)
    assert before.error_code == ErrorCode.NONE and len(before.members) == 2

    cluster.stop(first)  # controlled shutdown: leadership moves to an in-sync replica
    second = coordinator_of(cluster, group)
    assert second != first
    with Wire(cluster.brokers[second].bootstrap_servers) as w:
        wait_until(lambda: describe(w, group).error_code == ErrorCode.NONE, 30, "the group to load")
        assert describe(w, group) == before
        assert heartbeat(w, group, "m1", 2).error_code == ErrorCode.NONE
        assert heartbeat(w, group, "m2", 2).member_epoch == 2
        assert heartbeat(w, group, "m2", -1).member_epoch == -1
        assert [m.member_id for m in describe(w, group).members] == ["m1"]
