"""The admin request steps' drivers: ``drive`` (blocking) and ``drive_async`` send each ``AdminRequest`` with the
same arguments (``timeout_ms`` only for controller requests), feed the answers back in order and return the
steps' result; an error raised by the steps or the send reaches the caller."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive, fixed, send_arguments
from spark_kafkalog.client.aio.admin_steps import drive_async


@pytest.mark.parametrize(
    ("request_", "kwargs"),
    [
        (AdminRequest(29, fixed("b"), "DescribeAcls"), {"min_version": 0, "what": "DescribeAcls"}),
        (AdminRequest(30, fixed("b"), "CreateAcls", min_version=1), {"min_version": 1, "what": "CreateAcls"}),
        (
            AdminRequest(43, fixed("b"), "ElectLeaders", timeout_ms=500),
            {"min_version": 0, "what": "ElectLeaders", "timeout_ms": 500},
        ),
        (
            AdminRequest(45, fixed("b"), "AlterPartitionReassignments", timeout_ms=0),
            {"min_version": 0, "what": "AlterPartitionReassignments", "timeout_ms": 0},
        ),
    ],
)
def test_send_arguments(request_, kwargs):
    args, got = send_arguments(request_)
    assert args == (request_.api_key, request_.build)
    assert got == kwargs
    assert request_.build(3) == "b"


def two_round_trips() -> AdminSteps[list[Any]]:
    _, first, peer = yield AdminRequest(1, lambda version: f"first@v{version}", "One")
    _, second, _ = yield AdminRequest(2, fixed(first + 1), "Two", timeout_ms=100)
    return [first, second, peer]


class Wire:
    def __init__(self) -> None:
        self.sent: list[tuple[int, Any, dict[str, Any]]] = []

    def __call__(self, api_key: int, build: Any, **kwargs: Any) -> tuple[int, Any, str]:
        self.sent.append((api_key, build(4), kwargs))
        return 4, 10 * api_key + len(self.sent), "b0:9092"


def test_both_drivers_send_the_same_requests_and_return_the_result():
    blocking = Wire()
    assert drive(two_round_trips(), blocking) == [11, 22, "b0:9092"]

    asynchronous = Wire()

    async def send(api_key: int, build: Any, **kwargs: Any) -> tuple[int, Any, str]:
        await asyncio.sleep(0)
        return asynchronous(api_key, build, **kwargs)

    assert asyncio.run(drive_async(two_round_trips(), send)) == [11, 22, "b0:9092"]
    assert (
        blocking.sent
        == asynchronous.sent
        == [
            (1, "first@v4", {"min_version": 0, "what": "One"}),
            (2, 12, {"min_version": 0, "what": "Two", "timeout_ms": 100}),
        ]
    )


def test_errors_reach_the_caller():
    def refused(api_key: int, build: Any, **kwargs: Any) -> tuple[int, Any, str]:
        raise ConnectionError("lost")

    with pytest.raises(ConnectionError, match="lost"):
        drive(two_round_trips(), refused)

    def bad_steps() -> AdminSteps[None]:
        yield AdminRequest(1, fixed(None), "One")
        raise ValueError("the answer was wrong")

    async def send(api_key: int, build: Any, **kwargs: Any) -> tuple[int, Any, None]:
        return 0, None, None

    with pytest.raises(ValueError, match="the answer was wrong"):
        asyncio.run(drive_async(bad_steps(), send))
