"""The package's cluster: three broker processes with short group timings (no initial rebalance delay, sessions
down to 1 s) so that rebalances take a heartbeat or two; members use 6 s sessions and 500 ms heartbeats.

One cluster serves every module here (package scope); test_restarts.py sorts last because its tests stop, kill
and restart brokers.
"""

from __future__ import annotations

import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster

from .members import GROUP_CONFIG


@pytest.fixture(scope="package")
def gcluster(zookeeper, tmp_path_factory):
    """Three broker processes with short group timings under a fresh chroot of the session ZooKeeper."""
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("groups"),
        zookeeper_connect=f"{zookeeper.connect_string}/groups-{uuid.uuid4().hex[:8]}",
        broker_config=GROUP_CONFIG,
    )
    c.start()
    yield c
    c.stop()


@pytest.fixture()
def group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"
