"""Where the registry's records live: the ``SchemaStore`` protocol, an in-memory log for tests, and the
``_schemas`` topic (``KafkaSchemaStore``).

A store owns one ``RegistryState`` and applies every record of its log to it in log order. ``append``
writes one record and returns once that record has been applied (read-your-writes), so after it the
state shows what the log decided (a conflicting record may have been ignored: the caller checks).
``sync`` returns once every record written before the call is applied (catching up to the log end).

Concurrency: stores run on one asyncio event loop; the registry serializes its writes (one at a time).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

from broker.schema_registry.records import Key, Value, encode_key, encode_value
from broker.schema_registry.state import RegistryState

log = logging.getLogger(__name__)


class StoreError(Exception):
    """The store cannot read or write its log (the registry answers 50001)."""


class StoreTimeoutError(StoreError):
    """A write or catch-up did not complete in time (the registry answers 50002)."""


class SchemaStore(Protocol):
    """The log behind a registry (see the module docstring)."""

    @property
    def state(self) -> RegistryState: ...

    async def start(self) -> None:
        """Open the log and apply everything in it."""

    async def stop(self) -> None:
        """Close the log; idempotent."""

    async def sync(self) -> None:
        """Return once every record written before the call has been applied."""

    async def append(self, key: Key, value: Value | None) -> int:
        """Append one record (None: a tombstone); return its offset once it has been applied."""


@dataclass
class MemoryLog:
    """A log several ``MemorySchemaStore`` instances share (as registries share one topic).

    ``inject_before_next`` lets a test put records in ahead of the next append, as another registry racing
    for the same id or version would."""

    records: list[tuple[bytes, bytes | None]] = field(default_factory=list)
    inject_before_next: list[tuple[bytes, bytes | None]] = field(default_factory=list)

    def append(self, key: bytes, value: bytes | None) -> int:
        if self.inject_before_next:
            self.records.extend(self.inject_before_next)
            self.inject_before_next.clear()
        self.records.append((key, value))
        return len(self.records) - 1


class MemorySchemaStore:
    """A ``SchemaStore`` over a ``MemoryLog`` (a new private one by default): for tests and tools. Its
    ``state`` catches up with the shared log whenever it is read (a tail reader with no lag)."""

    def __init__(self, log: MemoryLog | None = None) -> None:
        self.log = log if log is not None else MemoryLog()
        self._state = RegistryState()
        self._position = 0

    @property
    def state(self) -> RegistryState:
        self._catch_up()
        return self._state

    def _catch_up(self) -> None:
        while self._position < len(self.log.records):
            key, value = self.log.records[self._position]
            self._state.apply_bytes(key, value)
            self._position += 1

    async def start(self) -> None:
        self._catch_up()

    async def stop(self) -> None:
        return None

    async def sync(self) -> None:
        self._catch_up()

    async def append(self, key: Key, value: Value | None) -> int:
        offset = self.log.append(encode_key(key), encode_value(value))
        self._catch_up()
        return offset


__all__ = [
    "MemoryLog",
    "MemorySchemaStore",
    "SchemaStore",
    "StoreError",
    "StoreTimeoutError",
]
