"""Repository-wide fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory):
    """One real ZooKeeper server (java + pyspark's jars) for the whole session; use a chroot per test.

    Ticks of 200 ms allow sessions down to 400 ms; fsync is off (test data is disposable).
    """
    from broker.cluster.zookeeper_server import ZooKeeperServer

    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"), port=0, tick_time_ms=200, force_sync=False)
    server.start()
    yield server
    server.stop()
