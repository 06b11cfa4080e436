"""The broker's event loop: asyncio's default loop or uvloop, chosen by ``event.loop``.

``auto`` is asyncio: measured on this project's request mix (``bench/event_loop_bench.py``, figures in
``bench/results/event_loop.json``), uvloop served no more small pipelined requests per second, because
the handlers' Python work, not the loop, dominates. ``uvloop`` (``pip install 'spark-kafkalog[uvloop]'``)
stays selectable and fails clearly when it is missing.
"""

from __future__ import annotations

import asyncio

from .config import ConfigError


def new_event_loop(choice: str = "auto") -> asyncio.AbstractEventLoop:
    if choice in ("auto", "asyncio"):
        return asyncio.new_event_loop()
    try:
        import uvloop
    except ImportError:
        raise ConfigError("event.loop=uvloop: uvloop is not installed (pip install uvloop)") from None
    return uvloop.new_event_loop()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
