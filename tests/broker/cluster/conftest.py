"""Fixtures for the cluster registry tests: a fresh chroot on the session ZooKeeper per test."""

from __future__ import annotations

import uuid

import pytest

from broker.cluster.zk_registry import ZooKeeperRegistry


@pytest.fixture
def zk_connect(zookeeper) -> str:
    """``host:port/chroot`` with a chroot unique to this test."""
    return f"{zookeeper.connect_string}/kafkalog-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_registry(zk_connect):
    """Factory: ``make_registry(**kwargs)`` -> a started ZooKeeperRegistry on this test's chroot (closed after)."""
    registries = []

    def make(connect: str | None = None, **kwargs) -> ZooKeeperRegistry:
        kwargs.setdefault("session_timeout_ms", 4000)
        registry = ZooKeeperRegistry(connect or zk_connect, **kwargs)
        registries.append(registry)
        registry.start()
        return registry

    yield make
    for registry in registries:
        registry.close()
