"""Repository-wide fixtures."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI runs the property tests on Hypothesis's fixed, derandomized examples (reproducible runs; a failure is the
# same on every machine); locally they explore new random examples each run.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
