"""Producer ids for idempotent producers, unique across the cluster without coordination.

Layout: ``broker.id`` in the top 23 bits and a millisecond clock-based counter in the low 40
(``(broker_id << 40) | counter``), so ids never repeat across restarts either (the counter starts at
the wall clock and only grows). Thread-safe.
"""

from __future__ import annotations

import threading
import time


class ProducerIdAllocator:
    """``(broker_id << 40) | counter``; the counter starts at the wall clock in ms and only grows."""

    def __init__(self, broker_id: int) -> None:
        if not 0 <= broker_id < (1 << 23):
            raise ValueError(f"broker.id {broker_id} does not fit the producer id layout (< 2**23)")
        self._base = broker_id << 40
        self._last = 0
        self._lock = threading.Lock()

    def next_id(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, int(time.time() * 1000) & ((1 << 40) - 1))
            return self._base | self._last
