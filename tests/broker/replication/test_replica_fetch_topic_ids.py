"""A follower fetches by topic id (Fetch v17, its id in replica_state) once its metadata knows the topic's id,
and copies the leader's records as before."""

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
        assert _fetch_requests(c.brokers[0], 17) > 0
    finally:
        c.close()
