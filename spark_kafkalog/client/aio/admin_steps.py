"""``drive_async``: runs the admin calls' shared request steps (``spark_kafkalog.client.admin.admin_steps``) with
an asyncio send, as ``admin_steps.drive`` does with a blocking one. Same steps, so the asyncio admin builds
every request and reads every answer exactly as the blocking ``AdminClient``. Coroutine of the caller's loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from spark_kafkalog.client.admin.admin_steps import AdminSteps, send_arguments

__all__ = ["AsyncSend", "drive_async"]

T = TypeVar("T")

AsyncSend = Callable[..., Awaitable[tuple[int, Any, Any]]]
"""``await send(api_key, build, *, min_version, what[, timeout_ms])`` -> (version, response, peer)."""


async def drive_async(steps: AdminSteps[T], send: AsyncSend) -> T:
    """Run ``steps``, awaiting ``send`` for each request."""
    try:
        request = next(steps)
        while True:
            args, kwargs = send_arguments(request)
            request = steps.send(await send(*args, **kwargs))
    except StopIteration as done:
        return done.value
