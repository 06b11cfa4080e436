"""The stopping broker's side of controlled shutdown (broker.cluster.controlled_shutdown), against a real
``MetadataCache`` and a scripted ``send`` standing for the controllers' answers."""

from __future__ import annotations

import asyncio
import logging

import pytest

import broker.cluster.controlled_shutdown as cs
from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment
from broker.metadata.cache import MetadataCache
from spark_kafkalog.protocol import ErrorCode

LONG_BACKOFF_S = 60.0  # a retry that waited the whole backoff would time the test out
DEADLINE_S = 10.0


def metadata(broker_id: int = 1, controller: int | None = 2, replicas: tuple[int, ...] | None = (1, 2, 3)):
    m = MetadataCache(broker_id)
    m.set_brokers({b: BrokerInfo(b, "127.0.0.1", 9000 + b) for b in (1, 2, 3)})
    m.controller_id = controller
    if replicas is not None:
        m.set_topic(TopicAssignment("t", {0: replicas}), {0: PartitionState(1, 0, replicas, 1)}, {})
    return m


def run(coro):
    async def main():
        return await asyncio.wait_for(coro(), DEADLINE_S)

    return asyncio.run(main())


@pytest.mark.parametrize(
    "failure",
    [
        (ErrorCode.NOT_CONTROLLER, []),  # the controller is stopping: its controller has resigned
        asyncio.IncompleteReadError(b"", 4),  # it closed the connection before answering
        ConnectionRefusedError(111, "Connection refused"),  # it no longer listens
        TimeoutError(),
    ],
    ids=["not-controller", "connection-closed", "refused", "timeout"],
)
def test_a_failed_attempt_retries_as_soon_as_another_broker_is_the_controller(failure, caplog):
    caplog.set_level(logging.INFO, logger="kafkalog.controller")
    m = metadata(controller=2)
    sent: list[str] = []

    async def send(address, broker_id, timeout_s):
        sent.append(address)
        if address.endswith(":9002"):
            asyncio.get_running_loop().call_later(0.1, setattr, m, "controller_id", 3)  # the new one takes over
            if isinstance(failure, BaseException):
                raise failure
            return failure
        return ErrorCode.NONE, []

    async def main():
        return await cs.controlled_shutdown(1, m, None, max_retries=3, backoff_s=LONG_BACKOFF_S, send=send)

    assert run(main) is True
    assert sent == ["127.0.0.1:9002", "127.0.0.1:9003"]
    assert "UNKNOWN_SERVER_ERROR" not in caplog.text
    assert "broker 1: controlled shutdown done (controller 3)" in caplog.text


def test_without_a_new_controller_the_retry_waits_the_backoff():
    m = metadata(controller=2)
    sent: list[float] = []

    async def send(address, broker_id, timeout_s):
        sent.append(asyncio.get_running_loop().time())
        return ErrorCode.NOT_CONTROLLER, []

    async def main():
        return await cs.controlled_shutdown(1, m, None, max_retries=2, backoff_s=0.3, send=send)

    assert run(main) is False
    assert len(sent) == 2 and sent[1] - sent[0] >= 0.3


def test_a_broker_that_holds_no_replica_asks_no_controller(caplog):
    caplog.set_level(logging.INFO, logger="kafkalog.controller")
    m = metadata(replicas=(2, 3))
    sent: list[str] = []

    async def send(address, broker_id, timeout_s):
        sent.append(address)
        return ErrorCode.NONE, []

    async def main():
        return await cs.controlled_shutdown(1, m, None, max_retries=3, backoff_s=LONG_BACKOFF_S, send=send)

    assert run(main) is True
    assert sent == []
    assert "broker 1: controlled shutdown done (it holds no replica)" in caplog.text


def test_partitions_still_led_here_are_asked_again_once_a_follower_rejoins_their_isr():
    """The other ISR members stopped too; a follower catching up (the leader adds it to the ISR, the metadata
    follows) lets the next attempt move the leadership without waiting the whole backoff."""
    m = metadata(controller=2)
    m.set_partition_state("t", 0, PartitionState(1, 1, (1,), 1))
    answers = [(ErrorCode.NONE, [("t", 0)]), (ErrorCode.NONE, [])]

    async def send(address, broker_id, timeout_s):
        if len(answers) == 2:
            rejoined = PartitionState(1, 1, (1, 3), 1)
            asyncio.get_running_loop().call_later(0.1, m.set_partition_state, "t", 0, rejoined)
        return answers.pop(0)

    async def main():
        return await cs.controlled_shutdown(1, m, None, max_retries=3, backoff_s=LONG_BACKOFF_S, send=send)

    assert run(main) is True
    assert answers == []
