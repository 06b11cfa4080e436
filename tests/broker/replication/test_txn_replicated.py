"""Transactions on a replicated partition (three in-process brokers, RF 3): followers copy the markers into
their producer state and a byte-identical ``.txnindex``; a new leader serves the same LSO and aborted list."""

from __future__ import annotations

from broker.cluster.registry import PartitionState
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from ..requests import fetch, produce
from ..txn_wire import READ_COMMITTED, committed_view, list_latest, txn_batch, write_markers
from ..wire import Wire
from .cluster import Cluster

A, B, C = 8_000_001, 8_000_002, 8_000_003


def _txn_files(c: Cluster, i: int, topic: str) -> dict[str, bytes]:
    d = c.partition(i, topic).log.dir
    return {p.name: p.read_bytes() for p in sorted(d.glob("*.txnindex"))}


def test_followers_hold_identical_markers_and_a_new_leader_serves_the_same_lso(tmp_path_factory):
    c = Cluster(3, tmp_path_factory, replica_fetch_wait_max_ms=100, replica_fetch_backoff_ms=100)
    try:
        c.create_topic("tx3", {0: (0, 1, 2)}, {"min.insync.replicas": "2", "segment.bytes": "400"})
        wait_until(lambda: c.state("tx3") is not None and sorted(c.state("tx3").isr) == [0, 1, 2], what="ISR")
        with Wire(c.brokers[0].bootstrap_servers) as w:
            for pid, values, seq in [(A, [b"a0", b"a1"], 0), (B, [b"b0"], 0), (C, [b"c0"], 0), (A, [b"a2"], 2)]:
                assert produce(w, "tx3", txn_batch(pid, values, seq=seq), acks=-1).error_code == ErrorCode.NONE
            assert write_markers(w, (B, 0, False, 1, {"tx3": [0]}), (A, 0, True, 1, {"tx3": [0]})) == {
                (B, "tx3", 0): 0,
                (A, "tx3", 0): 0,
            }
            # acks=all for markers: answered once every ISR member has them
            assert all(c.offsets(i, "tx3")[0] == 7 for i in range(3))
            before = fetch(w, "tx3", 0, isolation=READ_COMMITTED)
        assert before.last_stable_offset == 3
        assert [(t.producer_id, t.first_offset) for t in before.aborted_transactions] == [(B, 2)]
        assert committed_view(before.records, before.aborted_transactions) == [b"a0", b"a1"]

        wait_until(lambda: all(c.offsets(i, "tx3") == (7, 7) for i in range(3)), what="followers at LEO=HW=7")
        leader_files = _txn_files(c, 0, "tx3")
        assert leader_files and all(_txn_files(c, i, "tx3") == leader_files for i in (1, 2))
        assert all(c.log_bytes(i, "tx3") == c.log_bytes(0, "tx3") for i in (1, 2))
        assert all(c.partition(i, "tx3").log.first_unstable_offset == 3 for i in range(3))

        # the controller's election of broker 1 (as in test_truncation): same LSO, same aborted list
        st = c.state("tx3")
        c.set_state("tx3", PartitionState(1, st.leader_epoch + 1, (1, 2), st.controller_epoch, st.zk_version))
        wait_until(lambda: c.partition(1, "tx3").is_leader, what="broker 1 leads")
        with Wire(c.brokers[1].bootstrap_servers) as w:
            after = wait_until(
                lambda: (lambda r: r if r.error_code == 0 else None)(fetch(w, "tx3", 0, isolation=READ_COMMITTED)),
                what="the new leader answers",
            )
            assert (after.last_stable_offset, after.high_watermark) == (3, 7)
            assert [(t.producer_id, t.first_offset) for t in after.aborted_transactions] == [(B, 2)]
            assert list_latest(w, "tx3", READ_COMMITTED) == 3
            # the new leader takes C's COMMIT (the coordinator retries markers against the new leader)
            assert write_markers(w, (C, 0, True, 1, {"tx3": [0]})) == {(C, "tx3", 0): 0}
            done = fetch(w, "tx3", 0, isolation=READ_COMMITTED)
            assert done.last_stable_offset == 8
            assert committed_view(done.records, done.aborted_transactions) == [b"a0", b"a1", b"c0", b"a2"]
    finally:
        c.close()
