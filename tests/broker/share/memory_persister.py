"""``MemoryPersister``: the share persister's contract (``broker.share.persister.Persister``) over a dict, for tests.

A key never initialized reads as initialized with start offset -1 when ``auto_initialize`` (else
UNKNOWN_TOPIC_OR_PARTITION). ``writes`` records every write; ``fail_writes`` answers the next writes with an error.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

from broker.share.state_batches import PersistedState, StateBatch
from spark_kafkalog.protocol import ErrorCode

Key = tuple[str, uuid.UUID, int]


class MemoryPersister:
    def __init__(self, *, auto_initialize: bool = True) -> None:
        self.auto_initialize = auto_initialize
        self.states: dict[Key, PersistedState] = {}
        self.writes: list[tuple[Key, PersistedState]] = []
        self.reads = 0
        self.fail_writes: list[ErrorCode] = []

    async def initialize(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> tuple[ErrorCode, str | None]:
        self.states[(group_id, topic_id, partition)] = PersistedState(state_epoch, start_offset, ())
        return ErrorCode.NONE, None

    async def read(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]:
        self.reads += 1
        await asyncio.sleep(0)  # a real persister awaits its coordinator: let other requests run meanwhile
        key = (group_id, topic_id, partition)
        state = self.states.get(key)
        if state is None:
            if not self.auto_initialize:
                return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "not initialized", None
            state = self.states[key] = PersistedState(0, -1, ())
        return ErrorCode.NONE, None, state

    async def write(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        state_batches: Sequence[StateBatch],
    ) -> tuple[ErrorCode, str | None]:
        await asyncio.sleep(0)
        if self.fail_writes:
            return self.fail_writes.pop(0), "injected write failure"
        key = (group_id, topic_id, partition)
        state = PersistedState(state_epoch, start_offset, tuple(state_batches), leader_epoch)
        self.states[key] = state
        self.writes.append((key, state))
        return ErrorCode.NONE, None

    async def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> tuple[ErrorCode, str | None]:
        self.states.pop((group_id, topic_id, partition), None)
        return ErrorCode.NONE, None

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]:
        return await self.read(group_id, topic_id, partition, leader_epoch)
