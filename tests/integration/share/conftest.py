"""The package's clusters: three broker processes with short group timings and share-group settings under
which the scenarios of tests/share_scenarios.py run (a lock duration of ``LOCK_MS`` is a valid group config;
``__share_group_state`` keeps its default three replicas, min ISR 2)."""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from tests.share_scenarios import LOCK_MS

SHARE_CLUSTER_CONFIG = {
    "group.initial.rebalance.delay.ms": 0,
    "offsets.topic.num.partitions": 10,
    "share.coordinator.state.topic.num.partitions": 10,
    "group.share.min.record.lock.duration.ms": min(LOCK_MS, 1000),
}


def share_cluster(zookeeper, tmp_path_factory, name: str):
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp(name),
        zookeeper_connect=f"{zookeeper.connect_string}/{name}-{uuid.uuid4().hex[:8]}",
        broker_config=SHARE_CLUSTER_CONFIG,
    )
    c.start()
    return c


@pytest.fixture(scope="package")
def scluster(zookeeper, tmp_path_factory):
    """Three broker processes for the scenarios (not disturbed: the failover tests have their own)."""
    c = share_cluster(zookeeper, tmp_path_factory, "share")
    yield c
    c.stop()
