"""SharePartition scenarios as tables: acquisition, acknowledgement, redelivery, lock expiry, delivery count
limit, SPSO movement, max in-flight records, gaps, log start movement (steps in share_partition_steps)."""

from __future__ import annotations

import pytest

from broker.share.share_partition import AckBatch, AcquiredRange, StateBatch
from spark_kafkalog.protocol import ErrorCode
from tests.broker.share.share_partition_steps import (
    Ack,
    Acquire,
    Expect,
    Expire,
    FakeClock,
    Leave,
    LogStart,
    NextFetch,
    Step,
    Tick,
    batch,
    make_partition,
    run_steps,
)

BAD_REQUEST = ErrorCode.INVALID_REQUEST
BAD_STATE = ErrorCode.INVALID_RECORD_STATE
ACCEPT, RELEASE, REJECT, GAP, RENEW = 1, 2, 3, 0, 4

ACQUISITION: dict[str, list[Step]] = {
    "new batches are acquired whole as one range": [
        NextFetch(0),
        Acquire("a", [(0, 9), (10, 19)], 500, [(0, 19, 1)]),
        Expect(0, 20, [(0, 19, "Q", 1)]),
        NextFetch(20),
    ],
    "max_records stops at a batch boundary": [
        Acquire("a", [(0, 9), (10, 19), (20, 29)], 15, [(0, 19, 1)]),
        Expect(0, 20, [(0, 19, "Q", 1)]),
    ],
    "a single batch may exceed max_records": [
        Acquire("a", [(0, 499)], 10, [(0, 499, 1)]),
        Expect(0, 500, [(0, 499, "Q", 1)]),
    ],
    "batches already acquired are not acquired again": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Acquire("b", [(0, 9)], 500, []),
        Acquire("b", [(0, 9), (10, 14)], 500, [(10, 14, 1)]),
        Expect(0, 15, [(0, 14, "Q", 1)]),  # in_flight() merges equal states whoever holds them
    ],
    "no batches or no room acquires nothing": [
        Acquire("a", [], 500, []),
        Acquire("a", [(0, 9)], 0, []),
        Expect(0, 0, []),
    ],
    "a batch reaching below the end offset is acquired from the end offset": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Acquire("b", [(5, 14)], 500, [(10, 14, 1)]),
    ],
    "offsets between new batches are gaps, archived and never handed out": [
        Acquire("a", [(0, 4), (8, 9)], 500, [(0, 4, 1), (8, 9, 1)]),
        Expect(0, 10, [(0, 4, "Q", 1), (5, 7, "X", 0), (8, 9, "Q", 1)]),
        Ack("a", [(0, 4, ACCEPT)]),
        Expect(8, 10, [(8, 9, "Q", 1)]),
    ],
    "a first batch after the end offset skips the offsets before it": [
        Acquire("a", [(5, 9)], 500, [(5, 9, 1)]),
        Expect(5, 10, [(5, 9, "Q", 1)]),
    ],
}

REDELIVERY: dict[str, list[Step]] = {
    "released records come back with a higher delivery count": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        Expect(0, 10, [(0, 9, "V", 1)]),
        NextFetch(0),
        Acquire("b", [(0, 9)], 500, [(0, 9, 2)]),
        Expect(0, 10, [(0, 9, "Q", 2)]),
    ],
    "a released subset is redelivered alone": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(3, 5, RELEASE)]),
        Expect(0, 10, [(0, 2, "Q", 1), (3, 5, "V", 1), (6, 9, "Q", 1)]),
        NextFetch(3),
        Acquire("b", [(0, 9)], 500, [(3, 5, 2)]),
        Expect(0, 10, [(0, 2, "Q", 1), (3, 5, "Q", 2), (6, 9, "Q", 1)]),
    ],
    "redelivery stops exactly at max_records": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        Acquire("b", [(0, 9)], 4, [(0, 3, 2)]),
        Expect(0, 10, [(0, 3, "Q", 2), (4, 9, "V", 1)]),
        NextFetch(4),
    ],
    "redelivery and new batches in one acquire": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(5, 9, RELEASE)]),
        Acquire("b", [(0, 9), (10, 14)], 500, [(5, 9, 2), (10, 14, 1)]),
    ],
    "released records reaching the delivery count limit are archived": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        Acquire("a", [(0, 9)], 500, [(0, 9, 2)]),
        Ack("a", [(0, 9, RELEASE)]),
        Acquire("a", [(0, 9)], 500, [(0, 0, 3)]),  # the last attempt goes out alone
        Ack("a", [(0, 0, RELEASE)]),
        Expect(1, 10, [(1, 9, "V", 2)]),
    ],
    "a record on its last delivery attempt goes out alone": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(5, 5, RELEASE)]),
        Acquire("a", [(0, 9)], 500, [(5, 5, 2)]),
        Ack("a", [(0, 5, RELEASE)]),
        Expect(0, 10, [(0, 4, "V", 1), (5, 5, "V", 2), (6, 9, "Q", 1)]),
        Acquire("b", [(0, 9)], 500, [(0, 4, 2)]),
        Acquire("c", [(0, 9), (10, 14)], 500, [(5, 5, 3)]),
        Acquire("c", [(10, 14)], 500, [(10, 14, 1)]),
    ],
    "lock expiry makes records available, then archives them at the limit": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Tick(29.999),
        Expire(False),
        Tick(0.001),
        Expire(True),
        Expect(0, 10, [(0, 9, "V", 1)]),
        Acquire("b", [(0, 9)], 500, [(0, 9, 2)]),
        Tick(30),
        Expire(True),
        Acquire("c", [(0, 9)], 500, [(0, 0, 3)]),
        Tick(30),
        Expire(True),
        Expect(1, 10, [(1, 9, "V", 2)]),
        Expire(False),
    ],
    "only the expired part of an acquisition is released": [
        Acquire("a", [(0, 4)], 500, [(0, 4, 1)]),
        Tick(10),
        Acquire("b", [(5, 9)], 500, [(5, 9, 1)]),
        Tick(20),
        Expire(True),
        Expect(0, 10, [(0, 4, "V", 1), (5, 9, "Q", 1)]),
    ],
    "records compacted away since their first delivery are archived as gaps": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        Acquire("b", [(0, 3), (6, 9)], 500, [(0, 3, 2), (6, 9, 2)]),
        Expect(0, 10, [(0, 3, "Q", 2), (4, 5, "X", 1), (6, 9, "Q", 2)]),
    ],
    "with the read offset, offsets before the first batch are gaps": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        Acquire("b", [(4, 9)], 500, [(4, 9, 2)], fetch_offset=0),
        Expect(4, 10, [(4, 9, "Q", 2)]),
    ],
    "the read offset defaults to the next fetch offset answered since the last change": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        NextFetch(0),
        Acquire("b", [(4, 9)], 500, [(4, 9, 2)]),
        Expect(4, 10, [(4, 9, "Q", 2)]),
    ],
    "without a read offset, offsets before the first batch stay available": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        NextFetch(0),
        Ack("a", [(0, 0, ACCEPT)], BAD_STATE),  # a failed acknowledgement changes nothing: 0 is still the read offset
        Ack("b", [(10, 10, ACCEPT)], BAD_REQUEST),
        Expire(False),
        Acquire("a", [(0, 0)], 500, [(0, 0, 2)]),  # a change: the remembered read offset is gone
        Acquire("b", [(4, 9)], 500, [(4, 9, 2)]),
        Expect(0, 10, [(0, 0, "Q", 2), (1, 3, "V", 1), (4, 9, "Q", 2)]),
    ],
    "a leaving member's records become available, others keep theirs": [
        Acquire("a", [(0, 4)], 500, [(0, 4, 1)]),
        Acquire("b", [(5, 9)], 500, [(5, 9, 1)]),
        Leave("a", True),
        Leave("a", False),
        Leave("c", False),
        Expect(0, 10, [(0, 4, "V", 1), (5, 9, "Q", 1)]),
    ],
}

ACKNOWLEDGEMENT: dict[str, list[Step]] = {
    "accepting everything moves the SPSO to the end": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, ACCEPT)]),
        Expect(10, 10, []),
        NextFetch(10),
    ],
    "a partial accept splits the range; the SPSO waits for the lowest offset": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(7, 7, ACCEPT)]),
        Expect(0, 10, [(0, 6, "Q", 1), (7, 7, "K", 1), (8, 9, "Q", 1)]),
        Ack("a", [(0, 4, ACCEPT)]),
        Expect(5, 10, [(5, 6, "Q", 1), (7, 7, "K", 1), (8, 9, "Q", 1)]),
        Ack("a", [(5, 6, REJECT), (8, 9, ACCEPT)]),
        Expect(10, 10, []),
    ],
    "per-offset types": [
        Acquire("a", [(0, 5)], 500, [(0, 5, 1)]),
        Ack("a", [(0, 5, ACCEPT, ACCEPT, RELEASE, REJECT, GAP, RENEW)]),
        Expect(2, 6, [(2, 2, "V", 1), (3, 4, "X", 1), (5, 5, "Q", 1)]),
    ],
    "acknowledgements below the SPSO are ignored": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 4, ACCEPT)]),
        Ack("a", [(0, 2, REJECT)]),
        Ack("a", [(0, 9, ACCEPT)]),
        Expect(10, 10, []),
    ],
    "RENEW restarts the lock of part of an acquisition": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Tick(20),
        Ack("a", [(0, 4, RENEW)]),
        Tick(10),
        Expire(True),
        Expect(0, 10, [(0, 4, "Q", 1), (5, 9, "V", 1)]),
        Tick(19.5),
        Expire(False),
        Ack("a", [(0, 4, ACCEPT)]),
        Expect(5, 10, [(5, 9, "V", 1)]),
    ],
    "RENEW keeps the delivery count and the state": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RENEW)]),
        Expect(0, 10, [(0, 9, "Q", 1)]),
    ],
}

ACK_ERRORS: dict[str, list[Step]] = {
    "another member's records": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("b", [(0, 9, ACCEPT)], BAD_STATE),
    ],
    "records not acquired (available)": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 9, RELEASE)]),
        Ack("a", [(0, 0, ACCEPT)], BAD_STATE),
    ],
    "records already acknowledged": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(5, 5, ACCEPT)]),
        Ack("a", [(4, 6, ACCEPT)], BAD_STATE),
    ],
    "a gap that was never handed out": [
        Acquire("a", [(0, 4), (8, 9)], 500, [(0, 4, 1), (8, 9, 1)]),
        Ack("a", [(5, 7, GAP)], BAD_STATE),
    ],
    "a lock past its deadline (expiry not yet run)": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Tick(30),
        Ack("a", [(0, 9, ACCEPT)], BAD_STATE),
    ],
    "one bad batch rejects the good ones before it": [
        Acquire("a", [(0, 4)], 500, [(0, 4, 1)]),
        Acquire("b", [(5, 9)], 500, [(5, 9, 1)]),
        Ack("a", [(0, 4, ACCEPT), (5, 5, ACCEPT)], BAD_STATE),
    ],
    "offsets past the end offset": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 4, ACCEPT), (8, 12, ACCEPT)], BAD_REQUEST),
        Ack("a", [(10, 10, ACCEPT)], BAD_REQUEST),
    ],
    "types neither one nor one per offset": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 4, ACCEPT, ACCEPT)], BAD_REQUEST),
        Ack("a", [(0, 1)], BAD_REQUEST),
    ],
    "an unknown type": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(0, 4, ACCEPT), (5, 9, 5)], BAD_REQUEST),
        Ack("a", [(0, 1, ACCEPT, -1)], BAD_REQUEST),
    ],
    "batches out of order, overlapping or inverted": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(5, 9, ACCEPT), (0, 4, ACCEPT)], BAD_REQUEST),
        Ack("a", [(0, 5, ACCEPT), (5, 9, ACCEPT)], BAD_REQUEST),
        Ack("a", [(4, 3, ACCEPT)], BAD_REQUEST),
        Ack("a", [(-1, 3, ACCEPT)], BAD_REQUEST),
    ],
}

LOG_START: dict[str, list[Step]] = {
    "the log start moving inside the in-flight records drops what is below it": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        LogStart(5, True),
        Expect(5, 10, [(5, 9, "Q", 1)]),
        Ack("a", [(0, 9, ACCEPT)]),
        Expect(10, 10, []),
        LogStart(3, False),
        LogStart(10, False),
    ],
    "the log start moving past the end moves both offsets": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        LogStart(20, True),
        Expect(20, 20, []),
        NextFetch(20),
        Acquire("a", [(20, 24)], 500, [(20, 24, 1)]),
        Ack("a", [(0, 9, ACCEPT)]),
        Expect(20, 25, [(20, 24, "Q", 1)]),
    ],
    "the log start landing on finished offsets moves over them too": [
        Acquire("a", [(0, 9)], 500, [(0, 9, 1)]),
        Ack("a", [(5, 6, ACCEPT)]),
        LogStart(5, True),
        Expect(7, 10, [(7, 9, "Q", 1)]),
    ],
}


def _run(steps: list[Step], *, limit: int = 3, max_in_flight: int = 2000) -> None:
    clock = FakeClock()
    partition = make_partition(clock, limit=limit, max_in_flight=max_in_flight)
    run_steps(partition, clock, steps)


@pytest.mark.parametrize("steps", ACQUISITION.values(), ids=ACQUISITION.keys())
def test_acquisition(steps: list[Step]) -> None:
    _run(steps)


def test_max_in_flight_records_takes_the_batch_that_crosses_the_limit_then_nothing() -> None:
    steps: list[Step] = [
        NextFetch(0),
        Acquire("a", [(0, 7), (8, 15), (16, 19)], 500, [(0, 15, 1)]),
        NextFetch(None),
        Acquire("a", [(16, 19)], 500, []),
        Ack("a", [(0, 9, ACCEPT)]),
        NextFetch(16),
        Acquire("a", [(16, 19)], 500, [(16, 19, 1)]),
        Expect(10, 20, [(10, 19, "Q", 1)]),
        Ack("a", [(10, 19, RELEASE)]),
        NextFetch(10),
    ]
    _run(steps, max_in_flight=12)


@pytest.mark.parametrize("steps", REDELIVERY.values(), ids=REDELIVERY.keys())
def test_redelivery(steps: list[Step]) -> None:
    _run(steps)


@pytest.mark.parametrize("steps", ACKNOWLEDGEMENT.values(), ids=ACKNOWLEDGEMENT.keys())
def test_acknowledgement(steps: list[Step]) -> None:
    _run(steps)


@pytest.mark.parametrize("steps", ACK_ERRORS.values(), ids=ACK_ERRORS.keys())
def test_acknowledgement_errors_change_nothing(steps: list[Step]) -> None:
    clock = FakeClock()
    partition = make_partition(clock)
    first_error = next(i for i, s in enumerate(steps) if isinstance(s, Ack) and s.error != ErrorCode.NONE)
    run_steps(partition, clock, steps[:first_error])
    before = (partition.start_offset, partition.end_offset, partition.in_flight(), partition.next_lock_deadline())
    run_steps(partition, clock, steps[first_error:])
    after = (partition.start_offset, partition.end_offset, partition.in_flight(), partition.next_lock_deadline())
    assert after == before


@pytest.mark.parametrize("steps", LOG_START.values(), ids=LOG_START.keys())
def test_log_start(steps: list[Step]) -> None:
    _run(steps)


def test_delivery_count_limit_one_archives_on_first_release() -> None:
    _run([Acquire("a", [(0, 9)], 500, [(0, 9, 1)]), Ack("a", [(0, 9, RELEASE)]), Expect(10, 10, [])], limit=1)


def test_next_lock_deadline_is_the_earliest_acquired_lock() -> None:
    clock = FakeClock(100.0)
    partition = make_partition(clock, lock_ms=5000)
    assert partition.next_lock_deadline() is None
    partition.acquire("a", [(0, 4)], 500)
    clock.now = 102.0
    partition.acquire("b", [(5, 9)], 500)
    assert partition.next_lock_deadline() == 105.0
    partition.acknowledge("a", [batch_ack(0, 4, ACCEPT)])
    assert partition.next_lock_deadline() == 107.0
    assert partition.acquired_count() == 5


def test_lag_counts_unfinished_records_below_the_high_watermark() -> None:
    clock = FakeClock()
    partition = make_partition(clock)
    assert partition.lag(0) == 0
    assert partition.lag(30) == 30
    partition.acquire("a", [(0, 9), (15, 19)], 500)
    partition.acknowledge("a", [batch_ack(0, 2, ACCEPT), batch_ack(5, 5, REJECT)])
    # SPSO 3; 5 finished, 10-14 a gap (archived), 3-4 and 6-9 and 15-19 unfinished
    assert partition.lag(20) == 2 + 4 + 5
    assert partition.lag(30) == 2 + 4 + 5 + 10
    assert partition.lag(3) == 0


def test_persisted_batches_load_with_never_delivered_holes_available() -> None:
    clock = FakeClock()
    persisted = (batch(12, 14, "V", 2), batch(15, 15, "K", 1), batch(18, 19, "X", 1), batch(5, 10, "K", 1))
    partition = make_partition(clock, start_offset=10, batches=persisted, limit=4)
    steps: list[Step] = [
        # 5-10 clipped to 10, finished: the SPSO moves to 11
        Expect(11, 20, [(11, 11, "V", 0), (12, 14, "V", 2), (15, 15, "K", 1), (16, 17, "V", 0), (18, 19, "X", 1)]),
        NextFetch(11),
        Acquire("a", [(10, 19)], 500, [(11, 11, 1), (12, 14, 3), (16, 17, 1)]),
        Acquire("a", [(20, 21)], 500, [(20, 21, 1)]),
    ]
    run_steps(partition, clock, steps)


def test_persisted_acquired_loads_available_and_exhausted_available_is_archived_on_acquire() -> None:
    clock = FakeClock()
    persisted = (batch(0, 4, "Q", 1), batch(5, 9, "V", 3))
    partition = make_partition(clock, batches=persisted, limit=3)
    steps: list[Step] = [
        Expect(0, 10, [(0, 4, "V", 1), (5, 9, "V", 3)]),
        Acquire("a", [(0, 9)], 500, [(0, 4, 2)]),
        Expect(0, 10, [(0, 4, "Q", 2), (5, 9, "X", 3)]),
    ]
    run_steps(partition, clock, steps)


def test_persisted_state_round_trip() -> None:
    clock = FakeClock()
    partition = make_partition(clock)
    partition.acquire("a", [(0, 9), (12, 19)], 500)
    partition.acknowledge("a", [batch_ack(3, 4, ACCEPT), batch_ack(6, 6, RELEASE), batch_ack(8, 8, REJECT)])
    state = partition.persisted_state()
    assert state.start_offset == 0 and state.state_epoch == 1
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in state.state_batches] == [
        (0, 2, 0, 1),
        (3, 4, 2, 1),
        (5, 7, 0, 1),
        (8, 8, 4, 1),
        (9, 9, 0, 1),
        (10, 11, 4, 0),
        (12, 19, 0, 1),
    ]
    reloaded = make_partition(clock, start_offset=state.start_offset, batches=state.state_batches)
    assert reloaded.persisted_state() == state
    assert (reloaded.start_offset, reloaded.end_offset) == (0, 20)
    assert reloaded.acquire("b", [(0, 9), (12, 19), (20, 24)], 500) == [
        acquired(0, 2, 2),
        acquired(5, 7, 2),
        acquired(9, 9, 2),
        acquired(12, 19, 2),
        acquired(20, 24, 1),
    ]


def test_invalid_persisted_state_is_refused() -> None:
    clock = FakeClock()
    with pytest.raises(ValueError, match="start offset"):
        make_partition(clock, start_offset=-1)
    with pytest.raises(ValueError, match="overlaps"):
        make_partition(clock, batches=(batch(0, 5, "V", 1), batch(5, 6, "V", 1)))
    with pytest.raises(ValueError, match="delivery state 3"):
        make_partition(clock, batches=(StateBatch(0, 5, 3, 1),))
    with pytest.raises(ValueError, match="lock_duration_ms"):
        make_partition(clock, lock_ms=0)


def test_acquire_refuses_unordered_batches_and_empty_member() -> None:
    partition = make_partition(FakeClock())
    with pytest.raises(ValueError, match="ascending"):
        partition.acquire("a", [(5, 9), (0, 4)], 500)
    with pytest.raises(ValueError, match="ascending"):
        partition.acquire("a", [(5, 4)], 500)
    with pytest.raises(ValueError, match="member id"):
        partition.acquire("", [(0, 4)], 500)


def batch_ack(first: int, last: int, *types: int) -> AckBatch:
    return AckBatch(first, last, types)


def acquired(first: int, last: int, count: int) -> AcquiredRange:
    return AcquiredRange(first, last, count)
