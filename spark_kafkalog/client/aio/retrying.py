"""``sleep_or_give_up``: ``RetryPlan``'s backoff on the event loop, for the asyncio client's retry loops
(``AsyncKafkaClient.call_with_retries``, its fetches, ``AIOAdminClient.delete_records``). Coroutine of the caller's
loop; the plan is the caller's own (not shared).
"""

from __future__ import annotations

import asyncio

from spark_kafkalog.client.network.retry import RetryPlan

__all__ = ["sleep_or_give_up"]


async def sleep_or_give_up(plan: RetryPlan) -> bool:
    """``RetryPlan.sleep_or_give_up`` on the event loop: record a failure and ``asyncio.sleep`` the backoff;
    ``False`` when the plan is exhausted."""
    delay = plan.next_delay()
    if delay is None:
        return False
    if delay > 0:
        await asyncio.sleep(delay)
    return True
