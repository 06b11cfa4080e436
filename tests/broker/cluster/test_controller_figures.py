"""``Controller.offline_partition_count``: the partitions without a live leader in the broker's metadata cache,
reported by the active controller only (0 on every other broker, as Kafka's OfflinePartitionsCount)."""

from __future__ import annotations

import asyncio

from broker.cluster.controller import Controller
from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment
from broker.metadata.cache import MetadataCache
from tests.waiting import wait_until_async

from ..services_builder import run_inline


def cache() -> MetadataCache:
    """Brokers 0 and 1 live; of ``t``'s five partitions three have no live leader."""
    metadata = MetadataCache(0)
    metadata.set_brokers({b: BrokerInfo(b, "127.0.0.1", 9092 + b) for b in (0, 1)})
    replicas = {0: (0, 1), 1: (1, 0), 2: (0, 1), 3: (2, 0), 4: (0,)}
    states = {
        0: PartitionState(0, 0, (0, 1), 1),  # led by a live broker
        1: PartitionState(1, 3, (1,), 1),  # led by a live broker
        2: PartitionState(-1, 2, (1,), 1),  # offline: no leader
        3: PartitionState(2, 0, (2,), 1),  # offline: its leader, broker 2, is not registered
    }  # 4: offline, no state yet
    metadata.set_topic(TopicAssignment("t", replicas), states, {})
    return metadata


def test_offline_partition_count_is_reported_by_the_active_controller_only():
    async def main():
        registry = MemoryRegistryStore().view()
        registry.start()
        controller = Controller(0, registry, run_inline, metadata=cache())
        try:
            assert not controller.is_active and controller.offline_partition_count() == 0
            controller.start()
            await wait_until_async(lambda: controller.is_active, 5, "broker 0 became the controller")
            assert controller.offline_partition_count() == 3
        finally:
            await controller.stop()
            registry.close()
        assert not controller.is_active and controller.offline_partition_count() == 0

    asyncio.run(main())
