"""``ClientMetricsSync`` over an in-process registry: the subscriptions already there at start, then each
``client-metrics/<name>`` change notification, reach the broker's ``ClientTelemetry``; other notifications leave them
alone."""

from __future__ import annotations

import asyncio

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.telemetry import ClientTelemetry
from broker.telemetry.sync import ClientMetricsSync
from tests.waiting import wait_until_async


async def _run_inline(fn, *args):
    return fn(*args)


async def _until(cond, what: str) -> None:
    await wait_until_async(cond, 30, what)


def test_subscriptions_follow_the_registry():
    async def scenario() -> None:
        registry = MemoryRegistryStore().view()
        registry.start()
        registry.alter_client_metrics_config("before", {"metrics": "*"})
        telemetry = ClientTelemetry()
        sync = ClientMetricsSync(registry, telemetry, _run_inline)
        sync.start()
        try:
            await asyncio.wait_for(sync.ready.wait(), 5)
            assert telemetry.subscription_names() == ["before"]
            registry.alter_client_metrics_config("after", {"metrics": "org.apache.kafka.", "interval.ms": "1000"})
            await _until(lambda: telemetry.subscription_names() == ["after", "before"], "the new subscription")
            registry.alter_quota_config((("client-id", "app"),), {"producer_byte_rate": "1"})
            registry.alter_client_metrics_config("before", {"metrics": None})
            await _until(lambda: telemetry.subscription_names() == ["after"], "the removed subscription")
            registry.alter_client_metrics_config("after", {"interval.ms": "5"})  # written around the checks
            await _until(lambda: telemetry.subscription_names() == [], "the invalid subscription left out")
        finally:
            await sync.stop()
            registry.close()

    asyncio.run(scenario())
