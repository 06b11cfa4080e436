"""``GroupConfigs`` over an in-process registry: the group configs already there at start, then each
``groups/<group>`` change notification, reach the broker's cache; ``share_config`` gives a share group's values
(its overrides over the broker's ``group.share.*`` defaults)."""

from __future__ import annotations

import asyncio

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import RegistryError
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


class _FailingRegistry:
    def group_config(self, group_id):
        raise RegistryError("zookeeper is gone")


def test_read_share_config_reads_the_registry_and_falls_back_to_the_cache_when_it_cannot():
    async def scenario() -> None:
        registry = MemoryRegistryStore().view()
        registry.start()
        try:
            configs = GroupConfigs(_config(), registry, _run_inline)  # not following: its cache stays stale
            configs.set_group("g", {"share.auto.offset.reset": "latest"})
            registry.alter_group_config("g", {"share.auto.offset.reset": "earliest"})
            assert (await configs.read_share_config("g")).auto_offset_reset == "earliest"
            assert configs.share_config("g").auto_offset_reset == "latest"
            failing = GroupConfigs(_config(), _FailingRegistry(), _run_inline)  # type: ignore[arg-type]
            failing.set_group("g", {"share.auto.offset.reset": "by_duration:PT1M"})
            assert (await failing.read_share_config("g")).auto_offset_reset == "by_duration:PT1M"
            assert (await GroupConfigs(_config()).read_share_config("g")).auto_offset_reset == "latest"
        finally:
            registry.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("follow", ["notification", "full read"])
def test_a_registry_read_under_way_while_the_broker_writes_the_group_does_not_undo_the_write(follow):
    """The follower read the group's old config; the alter on this broker then wrote and cached the new one before
    that read was applied: the old value must not replace it."""

    async def scenario() -> None:
        registry = MemoryRegistryStore().view()
        registry.start()
        registry.alter_group_config("g", {"share.auto.offset.reset": "latest"})
        configs: GroupConfigs
        raced: list[object] = []

        async def run_blocking(fn, *args):
            result = fn(*args)
            if fn in (registry.group_config, registry.group_configs) and not raced:
                raced.append(fn)
                written = registry.alter_group_config("g", {"share.auto.offset.reset": "earliest"})
                configs.written("g", written)  # the alter answered while this read was under way
            return result

        configs = GroupConfigs(_config(), registry, run_blocking)
        try:
            if follow == "notification":
                configs._seq = 0
                await configs._read_group("g")
            else:
                await configs._reload()
            assert raced and configs.share_config("g").auto_offset_reset == "earliest"
        finally:
            registry.close()

    asyncio.run(scenario())
