"""Fixtures for broker tests: in-process brokers sharing an in-process registry (no ZooKeeper needed)."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker


def start_brokers(n: int, tmp_path_factory, **overrides) -> list[EmbeddedBroker]:
    name = f"memory:test-{uuid.uuid4().hex[:8]}"
    brokers = []
    for i in range(n):
        d = tmp_path_factory.mktemp(f"broker{i}")
        brokers.append(EmbeddedBroker(i, zookeeper_connect=name, log_dir=d, **overrides).start())
    return brokers


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    yield b
    b.stop()


@pytest.fixture(scope="module")
def two_brokers(tmp_path_factory):
    bs = start_brokers(2, tmp_path_factory)
    yield bs
    for b in bs:
        b.stop()
