"""Waiting in tests that watch another thread or process: until a condition holds, or for as long as it must hold.

Every helper polls every 50 ms and fails with an AssertionError naming ``what``; the ``_async`` variants sleep
with ``asyncio.sleep`` so the event loop they run on keeps going, and await ``cond()`` when it returns an awaitable
(a coroutine function as the condition).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

POLL_S = 0.05


def wait_until(cond: Callable[[], Any], timeout_s: float = 10.0, what: str = "the condition") -> Any:
    """Poll ``cond()`` every 50 ms until it is truthy and return that value; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(POLL_S)


def stays_true(cond: Callable[[], Any], duration_s: float, what: str = "the condition") -> None:
    """Check ``cond()`` every 50 ms for ``duration_s`` seconds; fail naming ``what`` as soon as it is falsy."""
    start = time.monotonic()
    while True:
        if not cond():
            raise AssertionError(f"{what} stopped holding after {time.monotonic() - start:.2f}s of {duration_s}s")
        left = start + duration_s - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(POLL_S, left))


async def _check(cond: Callable[[], Any]) -> Any:
    value = cond()
    return await value if inspect.isawaitable(value) else value


async def wait_until_async(cond: Callable[[], Any], timeout_s: float = 10.0, what: str = "the condition") -> Any:
    """``wait_until`` inside a coroutine: the event loop runs between the polls."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = await _check(cond)
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        await asyncio.sleep(POLL_S)


async def stays_true_async(cond: Callable[[], Any], duration_s: float, what: str = "the condition") -> None:
    """``stays_true`` inside a coroutine: the event loop runs between the checks."""
    start = time.monotonic()
    while True:
        if not await _check(cond):
            raise AssertionError(f"{what} stopped holding after {time.monotonic() - start:.2f}s of {duration_s}s")
        left = start + duration_s - time.monotonic()
        if left <= 0:
            return
        await asyncio.sleep(min(POLL_S, left))
