"""Shared fixtures for the Schema Registry's integration tests: one EmbeddedBroker per test module serving
kafkalog's registry on ``http://127.0.0.1:<free port>`` (``schema.registry.listeners``), its URL, a
confluent-kafka ``SchemaRegistryClient`` of it (``sr``), and unique subject names so the tests of one module
share the registry without seeing each other's subjects.

Tests that change the registry's global state (``/config``, ``/mode``) put it back before they end.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient

from broker.server import EmbeddedBroker
from tests import schema_registry_support as support


@pytest.fixture(scope="module")
def registry_broker(tmp_path_factory) -> Iterator[EmbeddedBroker]:
    """A started broker with the registry on a free port (its own in-memory ZooKeeper registry and log dir)."""
    with support.registry_broker("sr", tmp_path_factory.mktemp("sr-broker")) as broker:
        yield broker


@pytest.fixture(scope="module")
def registry_url(registry_broker: EmbeddedBroker) -> str:
    """``http://127.0.0.1:<port>``: the registry's URL (no trailing slash)."""
    return support.registry_url(registry_broker)


@pytest.fixture
def sr(registry_url: str) -> Iterator[SchemaRegistryClient]:
    """confluent-kafka's ``SchemaRegistryClient`` of the registry (no retries), closed after the test."""
    client = SchemaRegistryClient({"url": registry_url, "max.retries": 0})
    yield client
    client.close()


@pytest.fixture
def new_subject() -> Callable[[str], str]:
    """``new_subject(stem="s") -> "<stem>-<8 hex>"``: a subject name no other test uses."""

    def make(stem: str = "s") -> str:
        return f"{stem}-{uuid.uuid4().hex[:8]}"

    return make
