"""The Fetch error decisions shared by the blocking and asyncio clients (``client_fetch.fetch_error``,
``out_of_range_error``) and ``topic_info``'s retry budget (``client.topic_wait_plan``)."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.core.client import topic_error, topic_wait_plan
from spark_kafkalog.client.core.client_fetch import fetch_error, out_of_range_error
from spark_kafkalog.client.network.retry import RetryPlan
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

TP = TopicPartition("t", 1)


@pytest.mark.parametrize(
    ("code", "replica", "retriable", "text"),
    [
        (ErrorCode.OFFSET_OUT_OF_RANGE, 2, True, "out of range on its read replica, broker 2"),
        (ErrorCode.NOT_LEADER_OR_FOLLOWER, None, True, "NOT_LEADER_OR_FOLLOWER"),
        (ErrorCode.UNKNOWN_TOPIC_ID, None, True, "UNKNOWN_TOPIC_ID"),  # a re-created topic: refresh and retry
        (ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, False, "TOPIC_AUTHORIZATION_FAILED"),
        (ErrorCode.CORRUPT_MESSAGE, None, True, "CORRUPT_MESSAGE"),
    ],
)
def test_fetch_errors_by_code(code, replica, retriable, text):
    error = fetch_error(TP, 10, int(code), "0 (h:1)", replica)
    assert error is not None
    assert error.retriable is retriable and text in str(error)
    assert (error.topic, error.partition) == ("t", 1)


def test_out_of_range_on_the_leader_is_left_to_the_caller_to_name_the_bounds():
    assert fetch_error(TP, 10, int(ErrorCode.OFFSET_OUT_OF_RANGE), "0 (h:1)", None) is None
    error = out_of_range_error(TP, 10, "0 (h:1)", 20, 30)
    assert (error.offset, error.log_start_offset, error.high_watermark) == (10, 20, 30)
    assert "the log holds [20, 30)" in str(error)


@pytest.mark.parametrize(
    ("code", "retries"),
    [(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 3), (ErrorCode.LEADER_NOT_AVAILABLE, 100)],
)
def test_an_unknown_topic_is_asked_for_three_more_times_a_topic_being_created_until_the_deadline(code, retries):
    plan = topic_wait_plan(RetryPlan(retries=100, base_ms=1, max_ms=1, timeout_ms=60_000), code)
    assert plan.retries == retries
    error = topic_error(int(code), "t")
    assert not error.retriable and error.error_code == code
