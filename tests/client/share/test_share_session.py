"""ShareSession's epochs and incremental requests as tables: open at 0, increment per answer, wrap, reset on session
errors, forget partitions no longer fetched, close at -1. Pure code."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.share.acknowledgements import AcknowledgementBatch
from spark_kafkalog.client.share.session import FINAL_EPOCH, ShareSession, next_epoch
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
ACK = [AcknowledgementBatch(0, 4, (1,))]


@pytest.mark.parametrize("epoch, after", [(0, 1), (1, 2), (41, 42), (2**31 - 1, 1), (-1, -1)])
def test_next_epoch(epoch, after):
    assert next_epoch(epoch) == after


def test_the_first_fetch_opens_the_session_at_epoch_0_with_every_partition():
    s = ShareSession(3)
    plan = s.fetch_plan({T1, T0})
    assert (plan.epoch, plan.partitions, plan.forgotten, dict(plan.acknowledgements)) == (0, (T0, T1), (), {})
    s.on_fetch_answer(plan, ErrorCode.NONE)
    assert s.epoch == 1 and s.partitions == {T0, T1} and s.open


def test_later_fetches_list_only_new_partitions_and_those_with_acknowledgements():
    s = ShareSession(3)
    s.on_fetch_answer(s.fetch_plan({T0, T1}), ErrorCode.NONE)
    plan = s.fetch_plan({T0, T1})
    assert (plan.epoch, plan.partitions, plan.forgotten) == (1, (), ())
    s.on_fetch_answer(plan, ErrorCode.NONE)
    plan = s.fetch_plan({T0, T1, T2}, {T1: ACK})
    assert (plan.epoch, plan.partitions, plan.forgotten) == (2, (T1, T2), ())
    assert plan.acknowledgements == {T1: ACK}
    s.on_fetch_answer(plan, ErrorCode.NONE)
    assert s.epoch == 3 and s.partitions == {T0, T1, T2}


def test_partitions_no_longer_fetched_are_forgotten():
    s = ShareSession(3)
    s.on_fetch_answer(s.fetch_plan({T0, T1, T2}), ErrorCode.NONE)
    plan = s.fetch_plan({T1})
    assert (plan.partitions, plan.forgotten) == ((), (T0, T2))
    s.on_fetch_answer(plan, ErrorCode.NONE)
    assert s.partitions == {T1}


@pytest.mark.parametrize(
    "code",
    [ErrorCode.SHARE_SESSION_NOT_FOUND, ErrorCode.INVALID_SHARE_SESSION_EPOCH, ErrorCode.UNKNOWN_SERVER_ERROR],
)
def test_a_top_level_error_resets_the_session_and_the_next_fetch_opens_a_new_one(code):
    s = ShareSession(3)
    s.on_fetch_answer(s.fetch_plan({T0}), ErrorCode.NONE)
    plan = s.fetch_plan({T0, T1})
    s.on_fetch_answer(plan, code)
    assert s.epoch == 0 and not s.partitions and s.acknowledge_epoch() is None
    again = s.fetch_plan({T0, T1})
    assert (again.epoch, again.partitions) == (0, (T0, T1))


def test_acknowledgements_are_never_sent_when_opening_nor_for_partitions_not_fetched():
    s = ShareSession(3)
    with pytest.raises(ValueError, match="epoch 0"):
        s.fetch_plan({T0}, {T0: ACK})
    s.on_fetch_answer(s.fetch_plan({T0}), ErrorCode.NONE)
    with pytest.raises(ValueError, match="not fetched"):
        s.fetch_plan({T0}, {T1: ACK})


def test_share_acknowledge_uses_and_advances_the_epoch():
    s = ShareSession(3)
    assert s.acknowledge_epoch() is None  # no session: nothing can be acknowledged
    s.on_fetch_answer(s.fetch_plan({T0}), ErrorCode.NONE)
    epoch = s.acknowledge_epoch()
    assert epoch == 1
    s.on_acknowledge_answer(epoch, ErrorCode.NONE)
    assert s.fetch_plan({T0}).epoch == 2
    s.on_acknowledge_answer(2, ErrorCode.INVALID_SHARE_SESSION_EPOCH)
    assert s.epoch == 0


def test_closing_an_open_session_uses_epoch_minus_1_once():
    s = ShareSession(3)
    s.on_fetch_answer(s.fetch_plan({T0}), ErrorCode.NONE)
    assert s.close_epoch() == FINAL_EPOCH
    s.on_acknowledge_answer(FINAL_EPOCH, ErrorCode.NONE)
    assert s.closed and s.acknowledge_epoch() is None
    assert s.close_epoch() is None
    with pytest.raises(ValueError, match="closed"):
        s.fetch_plan({T0})


def test_a_session_never_opened_has_nothing_to_close():
    assert ShareSession(3).close_epoch() is None
