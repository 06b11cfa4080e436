"""``CoordinatorPersister``'s routing and retries against a scripted coordinator: local calls when this broker
coordinates the key, the coordinator errors retried until they clear or the time is up, other errors answered at
once, an unreachable remote coordinator answered as COORDINATOR_NOT_AVAILABLE."""

from __future__ import annotations

import asyncio
import uuid

from broker.metadata.cache import MetadataCache
from broker.share.persister import CoordinatorPersister
from broker.share.state_batches import PersistedState
from spark_kafkalog.protocol import ErrorCode

T = uuid.UUID("00000000-0000-4000-8000-000000000002")


class ScriptedCoordinator:
    """Answers FindCoordinator with ``finds`` (the last repeats) and each operation with ``answers`` in turn."""

    def __init__(self, finds: list[tuple[ErrorCode, int]], answers: list[ErrorCode]) -> None:
        self.finds, self.answers = finds, answers
        self.calls: list[str] = []

    async def find_coordinator(self, key: str) -> tuple[ErrorCode, int]:
        self.calls.append(f"find {key}")
        return self.finds.pop(0) if len(self.finds) > 1 else self.finds[0]

    def _next(self, what: str) -> ErrorCode:
        self.calls.append(what)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    async def initialize(self, group, topic_id, partition, state_epoch, start_offset):
        return self._next("initialize"), None

    async def read(self, group, topic_id, partition, leader_epoch):
        code = self._next("read")
        return code, None, PersistedState(1, 0, (), leader_epoch) if code == ErrorCode.NONE else None


def run(coordinator, call, timeout_s: float = 1.0):
    persister = CoordinatorPersister(0, coordinator, MetadataCache(0), timeout_s=timeout_s, backoff_s=0.001)
    return asyncio.run(call(persister))


def test_a_local_key_is_served_by_the_local_coordinator():
    c = ScriptedCoordinator([(ErrorCode.NONE, 0)], [ErrorCode.NONE])
    assert run(c, lambda p: p.read("g", T, 3, 7)) == (ErrorCode.NONE, None, PersistedState(1, 0, (), 7))
    assert c.calls == ["find g:AAAAAAAAQACAAAAAAAAAAg:3", "read"]


def test_coordinator_errors_are_retried_until_they_clear():
    c = ScriptedCoordinator(
        [(ErrorCode.COORDINATOR_NOT_AVAILABLE, -1), (ErrorCode.NONE, 0)],
        [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.NONE],
    )
    assert run(c, lambda p: p.initialize("g", T, 0, 0, -1)) == (ErrorCode.NONE, None)
    assert c.calls.count("initialize") == 3


def test_other_errors_are_answered_at_once():
    c = ScriptedCoordinator([(ErrorCode.NONE, 0)], [ErrorCode.FENCED_STATE_EPOCH])
    assert run(c, lambda p: p.initialize("g", T, 0, 0, -1))[0] == ErrorCode.FENCED_STATE_EPOCH
    assert c.calls.count("initialize") == 1


def test_retries_stop_when_the_time_is_up_with_the_last_error():
    c = ScriptedCoordinator([(ErrorCode.NONE, 0)], [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS])
    assert run(c, lambda p: p.initialize("g", T, 0, 0, -1), timeout_s=0.05)[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    c = ScriptedCoordinator([(ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)], [ErrorCode.NONE])
    code, message, state = run(c, lambda p: p.read("g", T, 0, 0), timeout_s=0.05)
    assert (code, state) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, None) and "not available" in message
    assert "read" not in c.calls


def test_an_unreachable_remote_coordinator_is_coordinator_not_available():
    c = ScriptedCoordinator([(ErrorCode.NONE, 5)], [ErrorCode.NONE])  # broker 5 is not registered
    code, message = run(c, lambda p: p.initialize("g", T, 0, 0, -1), timeout_s=0.05)
    assert code == ErrorCode.COORDINATOR_NOT_AVAILABLE and "initialize" not in c.calls
