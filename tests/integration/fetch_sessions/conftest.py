"""One in-process broker (in-memory registry) for the fetch session and topic id tests of real clients."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker


@pytest.fixture(scope="package")
def fbroker(tmp_path_factory):
    b = EmbeddedBroker(
        0, zookeeper_connect=f"memory:fetch-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("fetch")
    ).start()
    yield b
    b.stop()
