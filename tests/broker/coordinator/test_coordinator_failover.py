"""``__consumer_offsets`` is replicated and a group's coordinator fails over with its committed offsets
(three in-process brokers on one ``memory:`` registry; the project's admin client and group consumer)."""

from __future__ import annotations

import asyncio

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from spark_kafkalog.client import AdminClient, Consumer, TopicPartition
from tests.waiting import stays_true_async, wait_until

from ..replication.cluster import Cluster

OFFSETS_PARTITIONS = 3


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


def bootstrap(cluster: Cluster) -> str:
    return ",".join(b.bootstrap_servers for b in cluster.brokers.values())


def coordinator_of(cluster: Cluster, group: str) -> int:
    p = partition_for(group, OFFSETS_PARTITIONS)
    state = cluster.state(OFFSETS_TOPIC, p)
    assert state is not None and state.leader >= 0
    return state.leader


def committed(cluster: Cluster, group: str, topic: str) -> dict[int, int]:
    with AdminClient(bootstrap(cluster)) as admin:
        return {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items() if tp.topic == topic}


def test_offsets_topic_has_three_replicas_and_a_group_moves_with_its_offsets(cluster):
    cluster.create_topic("events", {0: (0, 1, 2), 1: (1, 2, 0)})
    for p in (0, 1):  # partition p is led by broker p, its first replica, once the controller says so
        wait_until(lambda p=p: getattr(cluster.partition(p, "events", p), "is_leader", False), 20)
        assert cluster.produce(p, "events", [b"v%d" % i for i in range(20)], p=p).error_code == 0
    group = "failover-group"
    with AdminClient(bootstrap(cluster)) as admin:
        admin.alter_group_offsets(group, {TopicPartition("events", 0): 5, TopicPartition("events", 1): 6})
    for p in range(OFFSETS_PARTITIONS):
        state = cluster.state(OFFSETS_TOPIC, p)
        assert sorted(state.isr) == [0, 1, 2], f"{OFFSETS_TOPIC}-{p} has ISR {state.isr}"
    with AdminClient(bootstrap(cluster)) as admin:
        admin.alter_group_offsets(group, {TopicPartition("events", 0): 7})

    first = coordinator_of(cluster, group)
    cluster.stop(first)  # controlled shutdown: leadership moves to an in-sync replica
    second = coordinator_of(cluster, group)
    assert second != first
    assert committed(cluster, group, "events") == {0: 7, 1: 6}

    with AdminClient(bootstrap(cluster)) as admin:
        admin.alter_group_offsets(group, {TopicPartition("events", 1): 9})
    cluster.start(first)
    wait_until(lambda: first in cluster.state(OFFSETS_TOPIC, partition_for(group, OFFSETS_PARTITIONS)).isr, 20)
    cluster.stop(second)
    assert coordinator_of(cluster, group) != second
    assert committed(cluster, group, "events") == {0: 7, 1: 9}

    # a group member resumes from the offsets the third coordinator serves
    consumer = Consumer(bootstrap(cluster), group_id=group, auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        consumer.subscribe(["events"])
        seen: dict[int, list[int]] = {0: [], 1: []}

        def consumed_the_rest() -> bool:
            for r in consumer.poll(200):
                seen[r.partition].append(r.offset)
            return len(seen[0]) >= 13 and len(seen[1]) >= 11

        wait_until(consumed_the_rest, 30)
        assert seen[0][0] == 7 and seen[1][0] == 9
        consumer.commit()
    finally:
        consumer.close()
    assert committed(cluster, group, "events") == {0: 20, 1: 20}


def test_acknowledged_commits_reach_the_cache_in_log_order(cluster):
    """Commits of one partition waiting for the followers apply in log order, and the cache equals a reload."""
    cluster.create_topic("t", {0: (0, 1, 2)})
    group = "ordering-group"
    with AdminClient(bootstrap(cluster)) as admin:
        admin.alter_group_offsets(group, {TopicPartition("t", 0): 1})
    leader = coordinator_of(cluster, group)
    followers = [i for i in cluster.brokers if i != leader]
    p = partition_for(group, OFFSETS_PARTITIONS)
    for f in followers:
        cluster.pause_fetching(f, OFFSETS_TOPIC, p)  # the high watermark stops: the commits below wait
    b = cluster.brokers[leader]
    gc = b.broker.group_coordinator

    async def commits():
        from broker.coordinator.offset_store import CommittedOffset

        tasks = [
            asyncio.ensure_future(
                gc.commit_offsets(
                    group, member_id="", group_instance_id=None, generation=-1, offsets={("t", 0): CommittedOffset(n)}
                )
            )
            for n in (10, 11, 12)
        ]
        await stays_true_async(lambda: not any(t.done() for t in tasks), 0.3, "the commits waiting for the followers")
        assert gc.store.offsets[group][("t", 0)].offset == 1  # nothing acknowledged yet
        # the followers return (a new epoch makes them follow again)
        for f in followers:
            cluster.brokers[f].broker.replica_manager.fetchers.add(
                cluster.brokers[f].broker.replica_manager.get_partition(OFFSETS_TOPIC, p)
            )
        results = await asyncio.gather(*tasks)
        return results

    results = b.call(lambda: asyncio.wait_for(commits(), 30))
    assert all(code == 0 for r in results for code in r.values())
    assert b.call(lambda: gc.store.offsets[group][("t", 0)].offset) == 12

    async def reload():
        from broker.coordinator.offset_store import OffsetStore

        store = OffsetStore(OFFSETS_PARTITIONS)
        await store.load_partition(b.broker.replica_manager.get_partition(OFFSETS_TOPIC, p).log, p)
        return store.offsets[group][("t", 0)].offset

    assert b.call(reload) == 12
