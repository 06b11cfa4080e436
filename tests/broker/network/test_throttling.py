"""The connection's quota throttling parts: ChannelMute (KIP-219's mute) and with_request_quota (handler time
measured per step, waits not counted, the response's throttle_time_ms raised and the connection muted)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from broker.api import NO_RESPONSE
from broker.network.throttling import ChannelMute, with_request_quota
from broker.quotas.manager import QuotaManager
from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.protocol.messages import RequestHeader


def test_a_mute_lasts_its_throttle_time_and_the_latest_end_wins():
    async def scenario():
        mute = ChannelMute(asyncio.get_running_loop())
        assert not mute.until
        mute.throttle(0)
        assert not mute.until
        mute.throttle(200)
        mute.throttle(50)  # an earlier end does not shorten it
        started = time.monotonic()
        await mute.wait()
        assert 0.18 <= time.monotonic() - started < 1.0
        assert not mute.until

    asyncio.run(scenario())


def test_wake_ends_a_mute_at_once():
    async def scenario():
        loop = asyncio.get_running_loop()
        mute = ChannelMute(loop)
        mute.throttle(60_000)
        loop.call_later(0.05, mute.wake)
        await asyncio.wait_for(mute.wait(), 2)
        assert not mute.until

    asyncio.run(scenario())


class _Clock:
    def __init__(self) -> None:
        self.s = 0.0

    def __call__(self) -> float:
        return self.s


class _Ctx:
    """What with_request_quota uses of a RequestContext."""

    def __init__(self, quotas: QuotaManager, api_key: int = ApiKey.METADATA) -> None:
        self.services = type("S", (), {"quotas": quotas})()
        self.header = RequestHeader(api_key=api_key, api_version=9, correlation_id=1, client_id="app")
        self.principal = "User:alice"
        self.throttled: list[int] = []

    def throttle(self, ms: int) -> None:
        self.throttled.append(ms)


def _run(ctx, body, handler, clock):
    return asyncio.run(with_request_quota(ctx, body, handler(), clock))


def test_handler_time_counts_its_steps_not_its_waits():
    clock = _Clock()
    quotas = QuotaManager(clock=clock)
    quotas.set_quota("users/alice", request_percentage=1)  # 1 % of a thread: 0.1 s over the 10 s window
    ctx = _Ctx(quotas)
    Metadata = API_BY_KEY[ApiKey.METADATA].Response

    async def handler():
        clock.s += 0.15  # busy
        waiter = asyncio.get_running_loop().create_future()

        def later():
            clock.s += 30.0  # the wait (a long poll): not the handler's time
            waiter.set_result(None)

        asyncio.get_running_loop().call_soon(later)
        await waiter
        clock.s += 0.05  # busy again
        return Metadata(throttle_time_ms=0)

    resp = _run(ctx, None, handler, clock)
    # 0.2 s busy = 20 %·s over the 10 s window: 2 %, twice the bound: 10 s, capped at one window
    assert resp.throttle_time_ms == 1000
    assert ctx.throttled == [1000]
    assert quotas.request.sensor("User:alice", "app").rate.rate(int(clock.s * 1000)) == pytest.approx(2.0, rel=0.01)


def test_the_larger_throttle_time_is_answered():
    clock = _Clock()
    quotas = QuotaManager(clock=clock)
    quotas.set_quota("users/alice", request_percentage=1)
    ctx = _Ctx(quotas)
    Produce = API_BY_KEY[ApiKey.PRODUCE].Response

    async def handler():
        clock.s += 0.11  # 1.1 %: 1000 ms throttle, capped at 1000
        return Produce(throttle_time_ms=4000, responses=[])  # a byte-rate throttle already there

    assert _run(ctx, None, handler, clock).throttle_time_ms == 4000
    assert ctx.throttled == [1000]


@pytest.mark.parametrize(
    ("api_key", "body", "result"),
    [
        (ApiKey.PRODUCE, None, NO_RESPONSE),  # acks=0
        (ApiKey.WRITE_TXN_MARKERS, None, None),  # a cluster action
        (ApiKey.FETCH, API_BY_KEY[ApiKey.FETCH].Request(replica_id=1), None),  # a follower
    ],
)
def test_exempt_requests_are_not_recorded(api_key, body, result):
    clock = _Clock()
    quotas = QuotaManager(clock=clock)
    quotas.set_quota("users/alice", request_percentage=1)
    ctx = _Ctx(quotas, api_key)
    answer = result if result is not None else API_BY_KEY[api_key].Response()

    async def handler():
        clock.s += 5.0
        return answer

    assert _run(ctx, body, handler, clock) is answer
    assert ctx.throttled == []
    assert quotas.request.figures() == []


def test_a_handler_that_raises_raises_through():
    clock = _Clock()
    quotas = QuotaManager(clock=clock)
    quotas.set_quota("users/alice", request_percentage=1)

    async def handler():
        await asyncio.sleep(0)
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        _run(_Ctx(quotas), None, handler, clock)


def test_cancelling_reaches_the_handler():
    clock = _Clock()
    quotas = QuotaManager(clock=clock)
    quotas.set_quota("users/alice", request_percentage=1)
    seen = []

    async def handler():
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def scenario():
        ctx: Any = _Ctx(quotas)
        task = asyncio.ensure_future(with_request_quota(ctx, None, handler(), clock))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert seen == ["cancelled"]


def test_a_fetch_throttled_by_its_request_quota_answers_empty_and_unrecords_its_bytes():
    clock = _Clock()
    quotas = QuotaManager(clock=clock)
    quotas.set_quota("users/alice", request_percentage=1, consumer_byte_rate=1000)
    ctx = _Ctx(quotas, ApiKey.FETCH)
    Fetch = API_BY_KEY[ApiKey.FETCH].Response
    Topic = Fetch.FetchableTopicResponse

    async def handler():
        clock.s += 0.2
        assert quotas.record_fetch("User:alice", "app", 5000) == 0  # what the fetch handler records
        partition = Topic.PartitionData(partition_index=0, records=b"x" * 5000)
        return Fetch(throttle_time_ms=0, responses=[Topic(topic="t", partitions=[partition])])

    resp = _run(ctx, API_BY_KEY[ApiKey.FETCH].Request(replica_id=-1), handler, clock)
    assert resp.responses == [] and resp.throttle_time_ms == 1000
    assert ctx.throttled == [1000]
    assert quotas.record_fetch("User:alice", "app", 0) == 0  # the 5000 B were taken back
    assert quotas.fetch.sensor("User:alice", "app").rate.rate(int(clock.s * 1000)) == 0.0
