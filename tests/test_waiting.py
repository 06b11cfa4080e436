"""The waiting helpers: wait_until returns the first truthy value or fails naming what it waited for;
stays_true returns after its duration or fails, naming what, at the first falsy check; the async variants alike,
with a plain or a coroutine condition."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from tests.waiting import stays_true, stays_true_async, wait_until, wait_until_async


def test_wait_until_returns_the_first_truthy_value():
    calls = itertools.count()
    assert wait_until(lambda: next(calls) >= 2 and "ready", timeout_s=5, what="the third call") == "ready"


def test_wait_until_times_out_naming_what_it_waited_for():
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"timed out after 0.2s waiting for the moon"):
        wait_until(lambda: False, timeout_s=0.2, what="the moon")
    assert 0.2 <= time.monotonic() - start < 2


def test_stays_true_returns_after_its_duration():
    calls = itertools.count()
    start = time.monotonic()
    stays_true(lambda: next(calls) >= 0, 0.3, what="the count")
    assert 0.3 <= time.monotonic() - start < 2
    assert next(calls) >= 4  # checked every 50 ms, not once


def test_stays_true_fails_at_the_first_falsy_check_naming_what():
    calls = itertools.count()
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"the leader stopped holding after .*s of 10s"):
        stays_true(lambda: next(calls) < 3, 10, what="the leader")
    assert time.monotonic() - start < 2


def test_the_async_variants_let_the_event_loop_run_between_polls():
    async def main():
        flag = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, flag.set)
        assert await wait_until_async(flag.is_set, timeout_s=5, what="the flag") is True
        await stays_true_async(flag.is_set, 0.2, what="the flag")
        with pytest.raises(AssertionError, match=r"timed out after 0.1s waiting for a cleared flag"):
            await wait_until_async(lambda: not flag.is_set(), timeout_s=0.1, what="a cleared flag")
        asyncio.get_running_loop().call_later(0.1, flag.clear)
        with pytest.raises(AssertionError, match=r"the flag stopped holding after .*s of 10s"):
            await stays_true_async(flag.is_set, 10, what="the flag")

    asyncio.run(asyncio.wait_for(main(), 5))


def test_the_async_variants_await_a_coroutine_condition():
    async def main():
        calls = itertools.count()

        async def third_call():
            await asyncio.sleep(0)
            return next(calls) >= 2

        assert await wait_until_async(third_call, timeout_s=5, what="the third call") is True
        await stays_true_async(third_call, 0.1, what="later calls")

    asyncio.run(asyncio.wait_for(main(), 5))
