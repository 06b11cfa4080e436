"""Admin calls as requests, shared by the blocking ``AdminClient`` and the asyncio ``AIOAdminClient``.

A call that needs one or more round trips is a generator (``AdminSteps``): it yields an ``AdminRequest`` - the
API key, ``build(version)`` making the body, the minimum version, the call's name for errors and, for requests
to the controller, the timeout carried in the body - and is sent back ``(version, response, peer)``, peer being
the broker's address or None; it returns the call's result. ``drive`` runs it with a blocking send
(``AdminClient._controller_request`` or ``_any_broker_send``); ``client.aio.admin_steps.drive_async`` with the
asyncio client's. The steps build requests and read answers only: routing, retries and I/O are the driver's.
Pure; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, NamedTuple, TypeVar

__all__ = ["AdminRequest", "AdminSteps", "drive", "fixed", "send_arguments"]

T = TypeVar("T")


class AdminRequest(NamedTuple):
    """One request of an admin call; ``timeout_ms`` is set for requests to the controller (None otherwise)."""

    api_key: int
    build: Callable[[int], Any]
    what: str
    min_version: int = 0
    timeout_ms: int | None = None


AdminSteps = Generator[AdminRequest, tuple[int, Any, Any], T]
"""An admin call as requests: yields ``AdminRequest``, is sent ``(version, response, peer)``, returns its result."""


def fixed(body: Any) -> Callable[[int], Any]:
    """A ``build`` giving ``body`` at every version."""
    return lambda version: body


def send_arguments(request: AdminRequest) -> tuple[tuple[int, Callable[[int], Any]], dict[str, Any]]:
    """The positional and keyword arguments of ``send`` for ``request`` (``timeout_ms`` only when set)."""
    kwargs: dict[str, Any] = {"min_version": request.min_version, "what": request.what}
    if request.timeout_ms is not None:
        kwargs["timeout_ms"] = request.timeout_ms
    return (request.api_key, request.build), kwargs


def drive(steps: AdminSteps[T], send: Callable[..., tuple[int, Any, Any]]) -> T:
    """Run ``steps`` with the blocking ``send(api_key, build, *, min_version, what[, timeout_ms])``."""
    try:
        request = next(steps)
        while True:
            args, kwargs = send_arguments(request)
            request = steps.send(send(*args, **kwargs))
    except StopIteration as done:
        return done.value
