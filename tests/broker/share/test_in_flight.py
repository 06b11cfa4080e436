"""InFlightMap: contiguous appends, splits at offsets, isolation of a span, merging equal neighbours."""

from __future__ import annotations

import pytest

from broker.share.in_flight import InFlightMap, InFlightRange
from broker.share.state_batches import RecordState

V, Q, K = RecordState.AVAILABLE, RecordState.ACQUIRED, RecordState.ACKNOWLEDGED


def _map(*spec: tuple[int, int, RecordState]) -> InFlightMap:
    m = InFlightMap()
    for first, last, state in spec:
        m.append(InFlightRange(first, last, state, 1, "m" if state == Q else None, 5.0 if state == Q else None))
    return m


def _shape(m: InFlightMap) -> list[tuple[int, int, str]]:
    return [(e.first, e.last, e.state.name) for e in m]


def test_append_merges_equal_neighbours_and_refuses_holes() -> None:
    m = _map((0, 4, V), (5, 9, V), (10, 12, Q))
    assert _shape(m) == [(0, 9, "AVAILABLE"), (10, 12, "ACQUIRED")]
    with pytest.raises(ValueError, match="does not follow"):
        m.append(InFlightRange(14, 15, V, 1))
    with pytest.raises(ValueError, match="empty"):
        m.append(InFlightRange(13, 12, V, 1))


@pytest.mark.parametrize(
    ("first", "last", "pieces", "selected"),
    [
        (3, 5, [(0, 2), (3, 5), (6, 9), (10, 12)], [(3, 5)]),
        (0, 9, [(0, 9), (10, 12)], [(0, 9)]),
        (8, 11, [(0, 7), (8, 9), (10, 11), (12, 12)], [(8, 9), (10, 11)]),
        (-5, 2, [(0, 2), (3, 9), (10, 12)], [(0, 2)]),
        (11, 40, [(0, 9), (10, 10), (11, 12)], [(11, 12)]),
        (20, 30, [(0, 9), (10, 12)], []),
    ],
)
def test_isolate_splits_at_the_span_edges(
    first: int, last: int, pieces: list[tuple[int, int]], selected: list[tuple[int, int]]
) -> None:
    m = _map((0, 9, V), (10, 12, Q))
    lo, hi = m.isolate(first, last)
    assert [(e.first, e.last) for e in m] == pieces
    assert [(m[i].first, m[i].last) for i in range(lo, hi)] == selected
    m.merge_all()
    assert _shape(m) == [(0, 9, "AVAILABLE"), (10, 12, "ACQUIRED")]


def test_lookup_overlap_and_drop() -> None:
    m = _map((0, 4, V), (5, 9, K), (10, 12, Q))
    assert [m.index_of(o) for o in (-1, 0, 4, 5, 12, 13)] == [-1, 0, 0, 1, 2, -1]
    assert [(e.first, e.last) for e in m.overlapping(4, 10)] == [(0, 4), (5, 9), (10, 12)]
    assert [(e.first, e.last) for e in m.overlapping(13, 20)] == []
    m.drop_before(7)
    assert _shape(m) == [(7, 9, "ACKNOWLEDGED"), (10, 12, "ACQUIRED")]
    assert (m.first_offset, m.last_offset) == (7, 12)
    m.drop_before(100)
    assert len(m) == 0 and m.first_offset is None


def test_merge_around_only_merges_equal_state_holder_and_deadline() -> None:
    m = InFlightMap()
    m.append(InFlightRange(0, 4, Q, 1, "a", 5.0))
    m.append(InFlightRange(5, 9, Q, 1, "b", 5.0))
    m.append(InFlightRange(10, 14, Q, 1, "b", 6.0))
    m.append(InFlightRange(15, 19, Q, 2, "b", 6.0))
    assert len(m) == 4
    m[1].member_id = "a"
    m[2].member_id, m[2].deadline = "a", 5.0
    m.merge_around(1, 2)
    assert [(e.first, e.last) for e in m] == [(0, 14), (15, 19)]
