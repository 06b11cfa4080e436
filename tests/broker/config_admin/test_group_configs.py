"""``GroupConfigs`` over an in-process registry: the group configs already there at start, then each
``groups/<group>`` change notification, reach the broker's cache; ``share_config`` gives a share group's values
(its overrides over the broker's ``group.share.*`` defaults)."""

from __future__ import annotations

import asyncio

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.config import BrokerConfig
from broker.config_admin.group_configs import ConsumerGroupConfig, GroupConfigs, ShareGroupConfig
from tests.waiting import wait_until_async


async def _run_inline(fn, *args):
    return fn(*args)


def _config(**extra: str) -> BrokerConfig:
    return BrokerConfig.from_properties(
        {"broker.id": "0", "log.dirs": "/tmp/x", "zookeeper.connect": "memory:group-configs"} | extra
    )


def test_share_config_is_the_broker_default_until_the_group_sets_its_own():
    configs = GroupConfigs(_config(**{"group.share.delivery.count.limit": "3"}))
    assert configs.share_config("g") == ShareGroupConfig(
        record_lock_duration_ms=30000,
        delivery_count_limit=3,
        auto_offset_reset="latest",
        isolation_level="read_uncommitted",
        session_timeout_ms=45000,
        heartbeat_interval_ms=5000,
    )
    configs.set_group(
        "g",
        {
            "share.auto.offset.reset": "by_duration:PT1H",
            "share.record.lock.duration.ms": "15000",
            "share.isolation.level": "read_committed",
            "consumer.session.timeout.ms": "50000",
        },
    )
    share = configs.share_config("g")
    assert (share.auto_offset_reset, share.record_lock_duration_ms, share.isolation_level) == (
        "by_duration:PT1H",
        15000,
        "read_committed",
    )
    assert configs.consumer_config("g") == ConsumerGroupConfig(session_timeout_ms=50000, heartbeat_interval_ms=5000)
    assert configs.share_config("other").auto_offset_reset == "latest"
    configs.set_group("g", {})
    assert configs.group_ids() == []


def test_group_configs_follow_the_registry():
    async def scenario() -> None:
        registry = MemoryRegistryStore().view()
        registry.start()
        registry.alter_group_config("before", {"share.auto.offset.reset": "earliest"})
        configs = GroupConfigs(_config(), registry, _run_inline)
        configs.start()
        try:
            await asyncio.wait_for(configs.ready.wait(), 5)
            assert configs.share_config("before").auto_offset_reset == "earliest"
            registry.alter_group_config("after", {"share.delivery.count.limit": "7"})
            await wait_until_async(lambda: configs.share_config("after").delivery_count_limit == 7, 30, "new group")
            registry.alter_quota_config((("client-id", "app"),), {"producer_byte_rate": "1"})  # not a group's
            registry.alter_group_config("before", {"share.auto.offset.reset": None})
            await wait_until_async(lambda: configs.group_ids() == ["after"], 30, "the removed group config")
            assert configs.share_config("before").auto_offset_reset == "latest"
        finally:
            await configs.stop()
            registry.close()

    asyncio.run(scenario())
