"""AcknowledgementTracker and the AcknowledgementBatch encoding as tables: implicit and explicit modes, gaps, releases,
what a poll refuses. Pure code."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.share.acknowledgements import (
    GAP,
    AcknowledgementBatch,
    AcknowledgementTracker,
    AcknowledgeType,
    encode_batches,
)
from spark_kafkalog.client.types import TopicPartition

A, R, J = int(AcknowledgeType.ACCEPT), int(AcknowledgeType.RELEASE), int(AcknowledgeType.REJECT)
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def b(first, last, kind):
    return AcknowledgementBatch(first, last, (kind,))


@pytest.mark.parametrize(
    "acks, batches",
    [
        ({}, []),
        ({5: A}, [b(5, 5, A)]),
        ({0: A, 1: A, 2: A}, [b(0, 2, A)]),
        ({2: A, 0: A, 1: A}, [b(0, 2, A)]),  # sorted first
        ({0: A, 1: A, 3: A}, [b(0, 1, A), b(3, 3, A)]),  # a hole splits a run
        ({0: A, 1: R, 2: R, 3: A}, [b(0, 0, A), b(1, 2, R), b(3, 3, A)]),  # one type per run
        ({0: GAP, 1: A, 2: GAP, 3: GAP, 4: J}, [b(0, 0, GAP), b(1, 1, A), b(2, 3, GAP), b(4, 4, J)]),
        ({10: A, 11: A, 12: A, 20: A, 21: R}, [b(10, 12, A), b(20, 20, A), b(21, 21, R)]),
    ],
)
def test_acknowledgements_encode_as_one_batch_per_run_of_one_type(acks, batches):
    assert encode_batches(acks) == batches


def test_implicit_mode_accepts_every_record_of_the_previous_poll_at_the_next_poll():
    t = AcknowledgementTracker(explicit=False)
    t.delivered(T0, [0, 1, 2])
    t.delivered(T1, [7])
    assert t.take() == {}  # nothing owed until the next poll or commit
    t.settle_for_poll()
    assert t.take() == {T0: [b(0, 2, A)], T1: [b(7, 7, A)]}
    assert t.take() == {}


def test_implicit_mode_refuses_acknowledge():
    t = AcknowledgementTracker(explicit=False)
    t.delivered(T0, [0])
    with pytest.raises(KafkaClientError, match="acknowledgement_mode='explicit'"):
        t.acknowledge(T0, 0, AcknowledgeType.RELEASE)


def test_explicit_mode_sends_only_what_was_acknowledged_and_the_last_type_wins():
    t = AcknowledgementTracker(explicit=True)
    t.delivered(T0, [0, 1, 2, 3])
    t.acknowledge(T0, 0)
    t.acknowledge(T0, 1, AcknowledgeType.REJECT)
    t.acknowledge(T0, 1, AcknowledgeType.RELEASE)
    t.settle_for_commit()
    assert t.take() == {T0: [b(0, 0, A), b(1, 1, R)]}
    assert t.unacknowledged() == {T0: [2, 3]}  # still in flight after a commit


def test_explicit_mode_refuses_a_poll_while_a_delivered_record_is_unacknowledged():
    t = AcknowledgementTracker(explicit=True)
    t.delivered(T0, [0, 1, 2, 5])
    t.acknowledge(T0, 1)
    with pytest.raises(KafkaClientError, match=r"all records must be acknowledged.*t-0@0,2,5"):
        t.settle_for_poll()
    for offset in (0, 2, 5):
        t.acknowledge(T0, offset, AcknowledgeType.ACCEPT)
    t.settle_for_poll()
    assert t.take() == {T0: [b(0, 2, A), b(5, 5, A)]}


@pytest.mark.parametrize("offset", [3, 100])
def test_only_records_in_flight_can_be_acknowledged(offset):
    t = AcknowledgementTracker(explicit=True)
    t.delivered(T0, [0, 1, 2])
    with pytest.raises(KafkaClientError, match=f"t-0 at offset {offset} cannot be acknowledged"):
        t.acknowledge(T0, offset)
    with pytest.raises(KafkaClientError, match="cannot be acknowledged"):
        t.acknowledge(T1, 0)


def test_an_acknowledgement_already_taken_for_sending_cannot_be_changed():
    t = AcknowledgementTracker(explicit=True)
    t.delivered(T0, [0])
    t.acknowledge(T0, 0)
    t.settle_for_commit()
    t.take()
    with pytest.raises(KafkaClientError, match="sent already"):
        t.acknowledge(T0, 0, AcknowledgeType.RELEASE)


@pytest.mark.parametrize("bad", [0, 4, "ACCEPT", None])
def test_unknown_acknowledge_types_are_refused_naming_the_choices(bad):
    t = AcknowledgementTracker(explicit=True)
    t.delivered(T0, [0])
    with pytest.raises(KafkaClientError, match="ACCEPT \\(1\\), RELEASE \\(2\\) or REJECT \\(3\\)"):
        t.acknowledge(T0, 0, bad)


def test_gaps_go_with_the_next_send_in_either_mode():
    for explicit in (False, True):
        t = AcknowledgementTracker(explicit=explicit)
        t.add_gaps(T0, [3, 4])
        t.delivered(T0, [0, 1, 2, 5])
        if explicit:
            for o in (0, 1, 2, 5):
                t.acknowledge(T0, o)
        t.settle_for_poll()
        assert t.take() == {T0: [b(0, 2, A), b(3, 4, GAP), b(5, 5, A)]}


@pytest.mark.parametrize(
    "explicit, expected",
    [
        (False, [b(0, 2, A)]),  # implicit: the last poll's records are accepted
        (True, [b(0, 0, J), b(1, 2, R)]),  # explicit: what was acknowledged, the rest released
    ],
)
def test_closing_settles_every_record_in_flight(explicit, expected):
    t = AcknowledgementTracker(explicit=explicit)
    t.delivered(T0, [0, 1, 2])
    if explicit:
        t.acknowledge(T0, 0, AcknowledgeType.REJECT)
    t.settle_for_close()
    assert t.take() == {T0: expected}
    assert t.unacknowledged() == {}


def test_released_and_forgotten_partitions():
    t = AcknowledgementTracker(explicit=False)
    t.release(T0, [8, 9])
    t.delivered(T1, [1])
    t.add_gaps(T1, [0])
    assert t.pending_partitions() == [T0, T1]
    assert t.take([T0]) == {T0: [b(8, 9, R)]}
    t.forget(T1)
    t.settle_for_poll()
    assert t.take() == {} and not t.has_pending()
