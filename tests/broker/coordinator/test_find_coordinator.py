"""``GroupCoordinator.find_coordinator`` over a hand-built metadata view: who coordinates a group, and that a
lookup never waits on partitions of other groups."""

from __future__ import annotations

import asyncio
import uuid
from types import SimpleNamespace

import pytest

from broker.cluster.registry import PartitionState
from broker.coordinator.group_coordinator import GroupCoordinator
from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from broker.metadata.cache import TopicMetadata
from spark_kafkalog.protocol import ErrorCode

PARTITIONS = 6
CONFIG = {
    "offsets.topic.num.partitions": PARTITIONS,
    "offsets.topic.replication.factor": 1,
    "offsets.topic.segment.bytes": 1 << 20,
}


class FakeTopicAdmin:
    """Creates nothing; ``wait_for`` waits as long as the real one would (its conditions never come true here)."""

    def __init__(self, metadata) -> None:
        self.metadata = metadata
        self.created: list[str] = []
        self.waited = 0

    def has_leaders(self, name):
        t = self.metadata.topics.get(name)
        return t is not None and all(t.leader(p) >= 0 for p in t.replicas)

    async def create_topic(self, name, partitions, rf, config):
        self.created.append(name)

    async def wait_for(self, condition, timeout_s):
        self.waited += 1
        await asyncio.sleep(timeout_s)
        return bool(condition())


def offsets_topic(leaders: dict[int, int]) -> TopicMetadata:
    return TopicMetadata(
        OFFSETS_TOPIC,
        uuid.uuid4(),
        {p: [leaders.get(p, 1)] for p in range(PARTITIONS)},
        {p: PartitionState(leader, 0, (leader,) if leader >= 0 else (), 1) for p, leader in leaders.items()},
    )


def coordinator(topics: dict, brokers=(1, 2, 3)) -> tuple[GroupCoordinator, FakeTopicAdmin]:
    metadata = SimpleNamespace(topics=topics, brokers=dict.fromkeys(brokers))
    admin = FakeTopicAdmin(metadata)
    gc = GroupCoordinator(1, CONFIG, metadata, SimpleNamespace(leadership_listeners=[]), admin)
    return gc, admin


def group_on(partition: int) -> str:
    return next(g for g in (f"group-{i}" for i in range(1000)) if partition_for(g, PARTITIONS) == partition)


def find(gc: GroupCoordinator, group: str) -> tuple[ErrorCode, int]:
    async def run():
        return await asyncio.wait_for(gc.find_coordinator(group), 1.0)

    return asyncio.run(run())


def test_a_leaderless_partition_of_another_group_does_not_delay_the_answer():
    # partition 1's leader (broker 3) is down; the group on partition 0 is coordinated by broker 2
    gc, admin = coordinator({OFFSETS_TOPIC: offsets_topic({p: (-1 if p == 1 else 2) for p in range(PARTITIONS)})})
    assert find(gc, group_on(0)) == (ErrorCode.NONE, 2)
    assert admin.waited == 0 and admin.created == []


def test_a_group_whose_partition_has_no_leader_gets_coordinator_not_available_at_once():
    gc, admin = coordinator({OFFSETS_TOPIC: offsets_topic({p: (-1 if p == 1 else 2) for p in range(PARTITIONS)})})
    assert find(gc, group_on(1)) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)
    assert admin.waited == 0


def test_a_leader_not_among_the_live_brokers_is_not_a_coordinator():
    gc, _ = coordinator({OFFSETS_TOPIC: offsets_topic(dict.fromkeys(range(PARTITIONS), 3))}, brokers=(1, 2))
    assert find(gc, group_on(4)) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)


def test_the_first_lookup_creates_the_topic_and_waits_for_the_groups_partition():
    gc, admin = coordinator({})

    async def run():
        return await gc.find_coordinator(group_on(2))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("broker.coordinator.group_coordinator.CREATE_WAIT_S", 0.05)
        assert asyncio.run(run()) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)
    assert admin.created == [OFFSETS_TOPIC] and admin.waited == 1
