"""Transactional offsets in the OffsetStore: a marker ends only the offsets its producer appended before it
(a producer's next transaction may commit offsets before the previous marker was applied)."""

from __future__ import annotations

from broker.coordinator.offset_store import CommittedOffset, OffsetStore

TP = ("orders", 0)


def test_a_marker_ends_only_the_offsets_below_it():
    store = OffsetStore(1)
    store.add_pending(7, "g", {TP: CommittedOffset(10)}, log_offset=3)  # transaction 1
    store.add_pending(7, "g", {TP: CommittedOffset(42)}, log_offset=9)  # transaction 2, before marker 1 is seen
    store.end_txn(7, 0, commit=False, marker_offset=5)  # transaction 1 aborted
    assert store.offsets.get("g") is None
    assert store.unstable("g") == {TP}
    store.end_txn(7, 0, commit=True, marker_offset=11)  # transaction 2 committed
    assert store.offsets["g"][TP].offset == 42
    assert store.unstable("g") == set() and store.pending_producers(0) == set()


def test_commits_apply_in_log_order_and_other_producers_are_untouched():
    store = OffsetStore(1)
    store.add_pending(1, "g", {TP: CommittedOffset(5)}, log_offset=1)
    store.add_pending(2, "g", {TP: CommittedOffset(99)}, log_offset=2)
    store.add_pending(1, "g", {TP: CommittedOffset(6)}, log_offset=3)
    store.end_txn(1, 0, commit=True, marker_offset=4)
    assert store.offsets["g"][TP].offset == 6  # the later of the producer's two commits wins
    assert store.pending_producers(0) == {2}
    store.drop_group("g")
    assert store.pending_producers(0) == set()
