"""Share-partition cost follows the number of ranges, not records: huge batches cost what small ones do, and
a long stream of 500-record batches keeps the in-flight map a handful of ranges."""

from __future__ import annotations

import time

from broker.share.share_partition import AckBatch
from tests.broker.share.share_partition_steps import FakeClock, make_partition

ACCEPT, RELEASE, REJECT = 1, 2, 3


def test_a_billion_record_batch_costs_what_a_small_one_does() -> None:
    clock = FakeClock()
    partition = make_partition(clock, max_in_flight=2**62)
    began = time.perf_counter()
    [acquired] = partition.acquire("a", [(0, 10**9 - 1)], 500)
    assert (acquired.first_offset, acquired.last_offset) == (0, 10**9 - 1)
    assert partition.acknowledge("a", [AckBatch(10, 10**8, (RELEASE,))])[0] == 0
    assert partition.acknowledge("a", [AckBatch(10**8 + 1, 10**9 - 1, (ACCEPT,))])[0] == 0
    assert partition.acquire("b", [(0, 10**9 - 1)], 10**9)[0].last_offset == 10**8
    clock.now += 60
    assert partition.expire_locks()
    assert partition.lag(10**9) == 10**8 + 1
    assert len(partition.ranges()) <= 3
    assert time.perf_counter() - began < 0.5


def test_a_stream_of_500_record_batches_keeps_few_ranges() -> None:
    clock = FakeClock()
    partition = make_partition(clock, max_in_flight=2000)
    members = ["a", "b", "c", "d"]
    held: dict[str, list[tuple[int, int]]] = {m: [] for m in members}
    began = time.perf_counter()
    most_ranges = 0
    for turn in range(2000):
        member = members[turn % len(members)]
        fetch = partition.next_fetch_offset()
        if fetch is not None:
            batches = [(b, b + 499) for b in range(fetch - fetch % 500, fetch - fetch % 500 + 1000, 500)]
            for r in partition.acquire(member, batches, 500):
                held[member].append((r.first_offset, r.last_offset))
        if turn % 4 == 3:  # every member acknowledges what it holds: mostly ACCEPT, one record rejected
            for m in members:
                acks = [AckBatch(f, last, (ACCEPT,)) for f, last in held[m]]
                if acks:
                    first = acks[0]
                    acks[0] = AckBatch(first.first_offset, first.first_offset, (REJECT,))
                    if first.last_offset > first.first_offset:
                        acks.insert(1, AckBatch(first.first_offset + 1, first.last_offset, (ACCEPT,)))
                assert partition.acknowledge(m, acks)[0] == 0
                held[m].clear()
        most_ranges = max(most_ranges, len(partition.ranges()))
    assert most_ranges <= 8
    assert partition.start_offset > 200_000
    assert time.perf_counter() - began < 3.0


def test_per_offset_acknowledgement_of_a_500_record_batch() -> None:
    clock = FakeClock()
    partition = make_partition(clock)
    partition.acquire("a", [(0, 499)], 500)
    types = tuple(ACCEPT if o % 100 else RELEASE for o in range(500))
    assert partition.acknowledge("a", [AckBatch(0, 499, types)])[0] == 0
    # released 0, 100, 200, 300, 400; the SPSO stays at 0
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in partition.in_flight()][:3] == [
        (0, 0, 0),
        (1, 99, 2),
        (100, 100, 0),
    ]
    assert len(partition.ranges()) == 10
