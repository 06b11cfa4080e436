"""Integration fixtures: a real 3-broker cluster (broker processes) on the session's real ZooKeeper."""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    """Three broker processes registered under a fresh chroot of the session ZooKeeper."""
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("cluster"),
        zookeeper_connect=f"{zookeeper.connect_string}/it-{uuid.uuid4().hex[:8]}",
    )
    c.start()
    yield c
    c.stop()


def new_topic(cluster, partitions: int = 3, **config) -> str:
    from spark_kafkalog.client import AdminClient, NewTopic

    name = f"it-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, {k.replace("_", "."): str(v) for k, v in config.items()})])
    return name
