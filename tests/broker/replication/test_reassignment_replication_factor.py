"""AlterPartitionReassignments v1 (KIP-1178) with ``allow_replication_factor_change`` false: a target that changes
the partition's replication factor is INVALID_REPLICATION_FACTOR and not started, one that keeps it starts, and
the answer echoes the option (Kafka's admin client checks it); v0 and the default (true) change it freely."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

from .cluster import Cluster

R = API_BY_KEY[ApiKey.ALTER_PARTITION_REASSIGNMENTS].Request


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(3, tmp_path_factory, replica_fetch_wait_max_ms=100, replica_fetch_backoff_ms=100)
    yield c
    c.close()


def reassign(cluster, version, targets, *, allow=True):
    """The (top-level answer, {(topic, partition): (error, message)}) of the controller."""
    body = R(
        timeout_ms=10000,
        allow_replication_factor_change=allow,
        topics=[
            R.ReassignableTopic(
                name=t, partitions=[R.ReassignableTopic.ReassignablePartition(partition_index=p, replicas=r)]
            )
            for (t, p), r in targets.items()
        ],
    )
    answers = []

    def ask() -> bool:
        for b in cluster.brokers.values():
            with Wire(b.bootstrap_servers) as w:
                resp = w.call(ApiKey.ALTER_PARTITION_REASSIGNMENTS, version, body)
            if resp.error_code != ErrorCode.NOT_CONTROLLER:
                answers.append(resp)
                return True
        return False

    wait_until(ask, 15, "the controller's answer")
    resp = answers[-1]
    parts = {(t.name, p.partition_index): (p.error_code, p.error_message) for t in resp.responses for p in t.partitions}
    return resp, parts


def test_a_replication_factor_change_is_refused_when_not_allowed_and_the_same_factor_starts(cluster):
    cluster.create_topic("rf-fixed", {0: (0, 1), 1: (1, 2)})
    wait_until(lambda: cluster.state("rf-fixed") is not None, what="the topic's leaders")
    resp, parts = reassign(cluster, 1, {("rf-fixed", 0): [0, 1, 2], ("rf-fixed", 1): [2, 0]}, allow=False)
    assert resp.error_code == ErrorCode.NONE and resp.allow_replication_factor_change is False
    code, message = parts[("rf-fixed", 0)]
    assert code == ErrorCode.INVALID_REPLICATION_FACTOR and "from 2 to 3" in message
    assert parts[("rf-fixed", 1)] == (ErrorCode.NONE, None)


@pytest.mark.parametrize("version, allow", [(1, True), (0, True)])
def test_a_replication_factor_change_starts_when_allowed(cluster, version, allow):
    name = f"rf-free-{version}"
    cluster.create_topic(name, {0: (0, 1)})
    wait_until(lambda: cluster.state(name) is not None, what="the topic's leader")
    resp, parts = reassign(cluster, version, {(name, 0): [0, 1, 2]}, allow=allow)
    assert resp.error_code == ErrorCode.NONE and parts[(name, 0)] == (ErrorCode.NONE, None)
    if version >= 1:
        assert resp.allow_replication_factor_change is True
