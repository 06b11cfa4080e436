"""The decoded record, common to every message format (v0, v1 and v2)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Record", "Header"]

Header = tuple[str, "bytes | None"]


class Record(NamedTuple):
    """One decoded record.

    ``offset`` is absolute; ``timestamp`` is milliseconds since the epoch (-1 for v0 messages, and the
    batch's max timestamp for LogAppendTime batches); ``key``/``value`` are ``None`` when null;
    ``headers`` is a list of ``(str, bytes | None)`` (always empty for v0/v1). Immutable (the headers
    list aside) and safe to share between threads.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[Header]
