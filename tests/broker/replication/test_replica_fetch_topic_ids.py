"""A follower fetches by topic id (Fetch v18, its id in replica_state) once its metadata knows the topic's id,
in an incremental fetch session (KIP-227, a privileged one on the leader), and copies the leader's records as
before, also when partitions leave and rejoin the session."""

from __future__ import annotations

from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from .cluster import Cluster


def _fetch_requests(broker, version: int) -> float:
    metric = broker.broker.metrics.registry.get_sample_value(
        "kafka_network_requestmetrics_requests_total", {"request": "Fetch", "version": str(version)}
    )
    return metric or 0.0


def test_follower_replicates_through_fetch_by_topic_id(tmp_path_factory):
    c = Cluster(2, tmp_path_factory, replica_fetch_wait_max_ms=100, replica_fetch_backoff_ms=100)
    try:
        c.create_topic("by-id", {0: (0, 1)})
        wait_until(lambda: c.state("by-id") is not None and c.state("by-id").leader == 0, what="leader 0")
        for n in range(5):
            assert c.produce(0, "by-id", [b"v%d" % n], acks=-1).error_code == ErrorCode.NONE
        wait_until(lambda: c.offsets(1, "by-id")[0] == 5, what="the follower at the leader's log end")
        assert c.log_bytes(1, "by-id") == c.log_bytes(0, "by-id")
        assert _fetch_requests(c.brokers[0], 18) > 0
    finally:
        c.close()


def test_follower_keeps_one_privileged_incremental_session_on_the_leader(tmp_path_factory):
    c = Cluster(2, tmp_path_factory, replica_fetch_wait_max_ms=100, replica_fetch_backoff_ms=100)
    try:
        c.create_topic("in-session", {0: (0, 1), 1: (0, 1)})
        wait_until(lambda: c.state("in-session") is not None and c.state("in-session").leader == 0, what="leader 0")
        for n in range(10):
            for p in (0, 1):
                assert c.produce(0, "in-session", [b"v%d" % n], acks=-1, p=p).error_code == ErrorCode.NONE
        for p in (0, 1):
            wait_until(lambda p=p: c.offsets(1, "in-session", p)[0] == 10, what=f"partition {p} copied")
        leader = c.brokers[0]
        sessions = leader.call(lambda: [(s.privileged, s.epoch, s.size) for s in leader.broker.fetch_sessions])
        assert len(sessions) == 1 and sessions[0][0] and sessions[0][1] > 5 and sessions[0][2] == 2, sessions
        # partition 1 pauses (it leaves the session) and follows again from its log end (it rejoins)
        c.pause_fetching(1, "in-session", p=1)
        for n in range(10, 15):
            for p in (0, 1):
                assert c.produce(0, "in-session", [b"v%d" % n], acks=1, p=p).error_code == ErrorCode.NONE
        wait_until(lambda: c.offsets(1, "in-session", 0)[0] == 15, what="partition 0 copied on")
        follower = c.brokers[1]
        rm = follower.broker.replica_manager
        follower.call(lambda: rm.fetchers.add(rm.get_partition("in-session", 1)))
        wait_until(lambda: c.offsets(1, "in-session", 1)[0] == 15, what="partition 1 copied again")
        for p in (0, 1):
            assert c.log_bytes(1, "in-session", p) == c.log_bytes(0, "in-session", p)
    finally:
        c.close()
