"""The steps a transaction operation yields (``TransactionManager``'s ``*_steps`` generators) and the two loops
that run them: ``run_steps`` (blocking) and ``run_steps_async`` (asyncio).

An operation is a generator (``Steps[T]``): it yields a step, is sent the step's answer, and returns its
result; when performing a step fails, the error is thrown into the operation where it yielded (its handlers
run as if the call had raised there) and, unless handled, propagates out of the loop. The steps:

- ``Request(api_key, body, node, min_version, max_version)`` -> ``(version, response)``: ``body`` may be a
  function of the version picked (the highest both sides support within the bounds); ``node`` None = any broker;
- ``Versions(node)`` -> the ``ApiVersionTable`` of the connection to ``node`` (its features, API versions);
- ``KnowBroker(node)`` -> None: refresh the brokers' metadata when it does not know ``node``;
- ``Sleep(seconds)`` -> None: back off.

Concurrency: a loop runs one operation on its caller's thread (or coroutine); nothing here is shared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, NamedTuple, TypeVar

__all__ = ["KnowBroker", "Request", "Sleep", "Step", "Steps", "Versions", "run_steps", "run_steps_async"]

T = TypeVar("T")


class Request(NamedTuple):
    """Send ``body`` (or ``body(version)``) to ``node`` (any broker when ``None``) at the highest version both
    sides support within ``[min_version, max_version]``; answered ``(version, response)``."""

    api_key: int
    body: Any
    node: int | None
    min_version: int = 0
    max_version: int | None = None


class Versions(NamedTuple):
    """The ``ApiVersionTable`` of the connection to ``node`` (features and API versions it serves)."""

    node: int


class KnowBroker(NamedTuple):
    """Refresh the brokers' metadata when it does not know ``node`` (a coordinator just named); answered None."""

    node: int


class Sleep(NamedTuple):
    """Back off ``seconds`` before the next attempt; answered None."""

    seconds: float


Step = Request | Versions | KnowBroker | Sleep
Steps = Generator[Step, Any, T]  # an operation: yields steps, is sent their answers, returns its result


def run_steps(steps: Steps[T], perform: Callable[[Step], Any]) -> T:
    """Run an operation to its result, each step by ``perform`` (blocking)."""
    answer: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = steps.send(answer) if error is None else steps.throw(error)
        except StopIteration as stop:
            return stop.value  # the generator's return value
        answer, error = None, None
        try:
            answer = perform(step)
        except BaseException as e:  # noqa: BLE001 - thrown into the operation, which re-raises what it leaves
            error = e


async def run_steps_async(steps: Steps[T], perform: Callable[[Step], Awaitable[Any]]) -> T:
    """``run_steps`` with ``await perform(step)``; a cancellation is thrown into the operation too."""
    answer: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = steps.send(answer) if error is None else steps.throw(error)
        except StopIteration as stop:
            return stop.value  # the generator's return value
        answer, error = None, None
        try:
            answer = await perform(step)
        except BaseException as e:  # noqa: BLE001 - thrown into the operation, which re-raises what it leaves
            error = e
