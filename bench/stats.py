"""Small helpers shared by the benchmarks: a percentile of sorted samples and waiting for a condition."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``sorted_values`` (ascending), nearest rank."""
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def wait_for(cond: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Poll ``cond()`` every 100 ms until truthy and return it; ``TimeoutError`` naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not (value := cond()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.1)
    return value
