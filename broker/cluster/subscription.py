"""``Subscription``: the handle every ``ClusterRegistry.on_*`` watch registration returns.

Thread-safe: ``cancel()`` may be called from any thread, a watch callback included, any number of times.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Subscription"]


class Subscription:
    """Handle returned by every ``on_*`` watch registration; ``cancel()`` stops deliveries (idempotent).

    A delivery already running when ``cancel()`` is called completes; none starts afterwards.
    """

    def __init__(self, on_cancel: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._on_cancel = on_cancel

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            on_cancel, self._on_cancel = self._on_cancel, None
        if on_cancel is not None:
            on_cancel()
