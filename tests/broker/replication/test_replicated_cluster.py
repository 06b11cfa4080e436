"""Replication end to end on three in-process brokers sharing a ``memory:`` registry: followers fetch,
the ISR shrinks and expands, acks=all with ``min.insync.replicas``, catch-up after a restart."""

from __future__ import annotations

import time

import pytest

from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from .cluster import Cluster

LAG_MS = 1000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(
        3,
        tmp_path_factory,
        replica_lag_time_max_ms=LAG_MS,
        replica_fetch_wait_max_ms=100,
        replica_fetch_backoff_ms=100,
    )
    yield c
    c.close()


def test_acks_all_replicates_to_identical_logs_and_the_isr_follows_liveness(cluster):
    c = cluster
    c.create_topic("r3", {0: (0, 1, 2)}, {"min.insync.replicas": "2"})
    wait_until(lambda: c.state("r3") is not None and sorted(c.state("r3").isr) == [0, 1, 2], what="ISR [0, 1, 2]")
    assert c.state("r3").leader == 0

    for n in range(5):
        r = c.produce(0, "r3", [b"a%d-%d" % (n, i) for i in range(10)])
        assert r.error_code == ErrorCode.NONE, r
        assert r.base_offset == 10 * n
    assert c.offsets(0, "r3") == (50, 50)  # acks=all answered: committed, so the high watermark passed it
    wait_until(lambda: all(c.offsets(i, "r3") == (50, 50) for i in range(3)), what="followers at LEO=HW=50")
    leader_log = c.log_bytes(0, "r3")
    assert leader_log and all(c.log_bytes(i, "r3") == leader_log for i in (1, 2))

    # a follower stops keeping up (alive, registered, not fetching): after replica.lag.time.max.ms the
    # leader drops it from the ISR itself (same leader epoch: not the controller's doing)
    epoch = c.state("r3").leader_epoch
    c.pause_fetching(2, "r3")
    paused_at = time.monotonic()
    wait_until(lambda: sorted(c.state("r3").isr) == [0, 1], timeout_s=LAG_MS / 1000 * 5, what="ISR [0, 1]")
    assert time.monotonic() - paused_at >= LAG_MS / 1000 * 0.9
    assert c.state("r3").leader_epoch == epoch
    r = c.produce(0, "r3", [b"b"])  # acks=all with min.insync.replicas=2 still works with two
    assert (r.error_code, r.base_offset) == (ErrorCode.NONE, 50)

    # a second one, while an acks=all produce waits for it: when it leaves the ISR the batch is committed by
    # the leader alone, fewer than min.insync.replicas=2 -> NOT_ENOUGH_REPLICAS_AFTER_APPEND
    c.pause_fetching(1, "r3")
    r = c.produce(0, "r3", [b"c0"])
    assert (r.error_code, r.base_offset) == (ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 51)
    assert c.state("r3").isr == (0,) and c.state("r3").leader_epoch == epoch
    # ISR [0] < min.insync.replicas=2 -> NOT_ENOUGH_REPLICAS before the append
    r = c.produce(0, "r3", [b"c"])
    assert r.error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert c.offsets(0, "r3")[0] == 52  # nothing appended
    r = c.produce(0, "r3", [b"c1"], acks=1)  # acks=1 is not bound by min.insync.replicas
    assert (r.error_code, r.base_offset) == (ErrorCode.NONE, 52)
    c.stop(2)
    c.stop(1)

    # broker 2 restarts: it catches up from its own log end and rejoins the ISR; acks=all works again
    c.start(2)
    wait_until(lambda: sorted(c.state("r3").isr) == [0, 2], timeout_s=10, what="ISR [0, 2]")
    r = c.produce(0, "r3", [b"d"])
    assert (r.error_code, r.base_offset) == (ErrorCode.NONE, 53)
    wait_until(lambda: c.offsets(2, "r3") == (54, 54), what="broker 2 caught up")
    assert c.log_bytes(2, "r3") == c.log_bytes(0, "r3")

    c.start(1)
    wait_until(lambda: sorted(c.state("r3").isr) == [0, 1, 2], timeout_s=10, what="ISR [0, 1, 2]")
    wait_until(lambda: c.offsets(1, "r3") == (54, 54), what="broker 1 caught up")
    assert c.log_bytes(1, "r3") == c.log_bytes(0, "r3")
