"""Quota throttling of one connection (KIP-219): the channel mute and the request-time quota.

``ChannelMute``: a throttled response goes out at once carrying ``throttle_time_ms``; the connection then
reads no new request until the throttle time has passed (``RequestContext.throttle(ms)`` is its
``throttle``). Responses already queued still go out. Several throttles keep the latest end. While any quota
is configured, the requests of one read are started one by one (each handler runs before the next request is
started), so a throttle holds the pipelined requests behind it too (``quotas_on``; ``dispatch_frames`` starts
the requests of one read).

``with_request_quota``: runs a handler coroutine measuring the time its steps run on the event loop (not the
time it waits: a long-polling Fetch is not busy), records it for ``request_percentage`` and, when the client
is over its quota, raises the response's ``throttle_time_ms`` to the request throttle time (the response
carries the larger of the byte-rate and the request throttle) and mutes the connection for it; a throttled
Fetch answers empty, its bytes un-recorded from the byte-rate quota (Kafka's ``handleFetchRequest``). Exempt, as in
Kafka: Produce with acks=0 (no response), broker-to-broker APIs and follower fetches. Used only while a
request quota is configured (``under_request_quota``), so the usual path pays nothing.

Concurrency: one ``ChannelMute`` per connection, on the broker's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any

from spark_kafkalog.protocol import ApiKey, Message

if TYPE_CHECKING:
    from broker.api import RequestContext
    from broker.quotas.manager import QuotaManager

__all__ = ["ChannelMute", "dispatch_frames", "quotas_on", "under_request_quota", "with_request_quota"]

# Kafka's cluster actions (sendResponseExemptThrottle): never throttled by request quotas.
_EXEMPT_APIS = frozenset(
    {
        ApiKey.LEADER_AND_ISR,
        ApiKey.STOP_REPLICA,
        ApiKey.UPDATE_METADATA,
        ApiKey.CONTROLLED_SHUTDOWN,
        ApiKey.WRITE_TXN_MARKERS,
    }
)


class ChannelMute:
    """Whether a connection may read its next request: ``until`` is the loop time the mute ends (0: none)."""

    __slots__ = ("_loop", "until", "_waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.until = 0.0
        self._waiter: asyncio.Future | None = None

    def throttle(self, ms: int) -> None:
        """Mute for ``ms`` from now (a later end than the current one wins)."""
        if ms > 0:
            self.until = max(self.until, self._loop.time() + ms / 1000)

    async def wait(self) -> None:
        """Return once the mute is over (or ``wake`` was called); the mute is then cleared."""
        while self.until:
            remaining = self.until - self._loop.time()
            if remaining <= 0:
                break
            waiter = self._waiter = self._loop.create_future()
            timer = self._loop.call_later(remaining, _done, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
            if waiter.result():  # woken: the connection is stopping
                break
        self.until = 0.0

    def wake(self) -> None:
        """End a wait now (the connection is stopping)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)


def quotas_on(quotas: QuotaManager) -> bool:
    """Whether any client quota is configured (then a connection serves the requests of one read one by one, so
    that a throttle stops those behind it, as Kafka's one-request-at-a-time channels do)."""
    return quotas.produce.enabled or quotas.fetch.enabled or quotas.request.enabled


async def dispatch_frames(
    frames: list[Any], dispatch: Callable[[Any], Awaitable[None]], mute: ChannelMute, quotas: QuotaManager
) -> None:
    """Start the requests of one read in order (``await dispatch(frame)``): a throttle an earlier one set holds the
    rest until it ends (KIP-219); while any quota is configured, each one's handler runs before the next is
    started, so that it may throttle the requests behind it."""
    pace = len(frames) > 1 and quotas_on(quotas)
    for frame in frames:
        if mute.until:  # throttled by an earlier request of this read: the rest waits
            await mute.wait()
        await dispatch(frame)
        if pace:
            await asyncio.sleep(0)  # its handler runs now and may throttle the requests behind it


def _done(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(False)


class _Stepped:
    """Awaits a coroutine, adding up the time each of its steps runs (``busy_s``)."""

    __slots__ = ("_coro", "_clock", "busy_s")

    def __init__(self, coro: Coroutine[Any, Any, Any], clock: Callable[[], float]) -> None:
        self._coro = coro
        self._clock = clock
        self.busy_s = 0.0

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, clock = self._coro, self._clock
        send: Any = None
        error: BaseException | None = None
        while True:
            started = clock()
            try:
                yielded = coro.send(send) if error is None else coro.throw(error)
            except StopIteration as stop:
                self.busy_s += clock() - started
                return stop.value
            finally:
                error = None
            self.busy_s += clock() - started
            try:
                send = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as e:  # cancellation and the like go to the handler
                error, send = e, None


def _exempt(ctx: RequestContext, body: Any) -> bool:
    key = ctx.header.api_key
    if key in _EXEMPT_APIS:
        return True
    if key != ApiKey.FETCH:
        return False
    state = getattr(body, "replica_state", None)  # Fetch v15+ carries the follower's id there (KIP-903)
    return getattr(body, "replica_id", -1) >= 0 or (state is not None and state.replica_id >= 0)


def _emptied_fetch(ctx: RequestContext, response: Any) -> Any:
    """A throttled Fetch's answer: no topics; its record bytes are taken back from the byte-rate quota."""
    nbytes = sum(len(p.records) for t in response.responses for p in t.partitions if p.records is not None)
    if nbytes:
        ctx.services.quotas.unrecord_fetch(ctx.principal, ctx.header.client_id, nbytes)
    # an incremental fetch session keeps its id (Kafka's IncrementalFetchContext.getThrottledResponse)
    return type(response)(throttle_time_ms=0, error_code=0, session_id=response.session_id, responses=[])


async def with_request_quota(
    ctx: RequestContext, body: Any, handling: Coroutine[Any, Any, Any], clock: Callable[[], float]
) -> Any:
    """Run ``handling`` (the handler of ``body``) under the request quota; its result, throttled if need be."""
    stepped = _Stepped(handling, clock)
    result = await stepped
    if not isinstance(result, Message) or _exempt(ctx, body):
        return result  # acks=0 produce (no response) and closing answers are exempt
    quotas = ctx.services.quotas
    ms = quotas.record_request_time(ctx.principal, ctx.header.client_id, stepped.busy_s)
    if ms > 0:
        if ctx.header.api_key == ApiKey.FETCH:
            result = _emptied_fetch(ctx, result)
        if hasattr(result, "throttle_time_ms"):
            result.throttle_time_ms = max(result.throttle_time_ms or 0, ms)
        ctx.throttle(ms)
    return result


def under_request_quota(
    ctx: RequestContext, body: Any, handling: Coroutine[Any, Any, Any], clock: Callable[[], float]
) -> Coroutine[Any, Any, Any]:
    """``handling`` run by ``with_request_quota`` while a ``request_percentage`` quota is configured, else itself."""
    if not ctx.services.quotas.request.enabled:
        return handling
    return with_request_quota(ctx, body, handling, clock)
