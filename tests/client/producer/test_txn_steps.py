"""The transaction steps and their loops (``producer.txn_steps``), and a ``TransactionManager`` operation run
step by step against scripted answers: answers are sent in, a failed step's error is thrown in where the
operation yielded (handled or propagated), the asyncio loop throws a cancellation in, and ``init_steps``
finds the coordinator again after NOT_COORDINATOR (backing off) before it succeeds."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from spark_kafkalog.client.core.client import client_config
from spark_kafkalog.client.errors import KafkaClientError, KafkaConnectionError
from spark_kafkalog.client.producer.idempotence import IdempotenceState
from spark_kafkalog.client.producer.transactions import TransactionManager, TxnState
from spark_kafkalog.client.producer.txn_steps import (
    KnowBroker,
    Request,
    Sleep,
    Step,
    Steps,
    Versions,
    run_steps,
    run_steps_async,
)
from spark_kafkalog.protocol import ApiKey, ErrorCode


def _adder() -> Steps[int]:
    first = yield Request(1, b"a", None)
    try:
        second = yield Request(2, b"b", 7)
    except KafkaConnectionError:
        second = 100
    return first + second


@pytest.mark.parametrize(
    "answers, expected",
    [
        ({1: 1, 2: 2}, 3),
        ({1: 5, 2: KafkaConnectionError("lost")}, 105),  # handled where it yielded
    ],
)
def test_answers_are_sent_in_and_errors_thrown_in_where_the_operation_yielded(answers, expected):
    seen: list[Step] = []

    def perform(step: Step) -> Any:
        assert isinstance(step, Request)
        seen.append(step)
        answer = answers[step.api_key]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    assert run_steps(_adder(), perform) == expected
    assert seen == [Request(1, b"a", None), Request(2, b"b", 7)]

    async def perform_async(step: Step) -> Any:
        return perform(step)

    seen.clear()
    assert asyncio.run(run_steps_async(_adder(), perform_async)) == expected
    assert len(seen) == 2


def test_an_error_the_operation_does_not_handle_propagates_and_closes_it():
    steps = _adder()

    def perform(step: Step) -> Any:
        raise KafkaClientError("refused", retriable=False)

    with pytest.raises(KafkaClientError, match="refused"):
        run_steps(steps, perform)
    with pytest.raises(StopIteration):
        next(steps)


def test_a_cancelled_async_loop_throws_the_cancellation_into_the_operation():
    cleaned: list[str] = []

    def operation() -> Steps[None]:
        try:
            yield Sleep(60)
        except asyncio.CancelledError:
            cleaned.append("cancelled")
            raise

    async def perform(step: Step) -> Any:
        await asyncio.sleep(step.seconds)  # type: ignore[union-attr]  # only Sleep here

    async def main() -> None:
        task = asyncio.ensure_future(run_steps_async(operation(), perform))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cleaned == ["cancelled"]


class _Features:
    def __init__(self, level: int) -> None:
        self.level = level

    def feature_level(self, name: str) -> int:
        return self.level

    def supports(self, api_key: int, version: int) -> bool:
        return True


def test_init_finds_the_coordinator_again_after_not_coordinator_and_backs_off():
    cfg = client_config("localhost:9092", None, retry_backoff_ms=10, retry_backoff_max_ms=10)
    client = SimpleNamespace(config=cfg, name_principal=lambda error: None)
    idem = IdempotenceState()
    manager = TransactionManager(client, "tid", 60000, idem)  # type: ignore[arg-type]  # a scripted client
    coordinators = iter([3, 4])
    init_answers = iter(
        [
            SimpleNamespace(error_code=ErrorCode.NOT_COORDINATOR, producer_id=-1, producer_epoch=-1),
            SimpleNamespace(error_code=ErrorCode.NONE, producer_id=42, producer_epoch=5),
        ]
    )
    seen: list[Any] = []

    def perform(step: Step) -> Any:
        seen.append(type(step).__name__ if not isinstance(step, Request) else (step.api_key, step.node))
        if isinstance(step, Request) and step.api_key == ApiKey.FIND_COORDINATOR:
            return 3, SimpleNamespace(error_code=0, error_message=None, node_id=next(coordinators))
        if isinstance(step, Request):
            return 4, next(init_answers)
        if isinstance(step, Versions):
            assert step.node == 4
            return _Features(2)
        if isinstance(step, KnowBroker | Sleep):
            return None
        raise AssertionError(step)

    run_steps(manager.init_steps(10.0), perform)
    assert seen == [
        (ApiKey.FIND_COORDINATOR, None),
        "KnowBroker",
        (ApiKey.INIT_PRODUCER_ID, 3),
        "Sleep",  # NOT_COORDINATOR: back off, then ask again where the coordinator is
        (ApiKey.FIND_COORDINATOR, None),
        "KnowBroker",
        (ApiKey.INIT_PRODUCER_ID, 4),
        "Versions",
    ]
    assert manager.state is TxnState.READY and manager.transactions_v2
    assert (idem.producer_id, idem.producer_epoch) == (42, 5)
