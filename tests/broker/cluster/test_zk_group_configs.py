"""Group configs (``GROUP`` config resources) on a real ZooKeeper: ``/config/groups/<sanitized group id>`` in Kafka's
entity config format with a ``groups/<group id>`` change notice per write; the in-memory registry behaves the
same."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from broker.cluster.group_config_entities import parse_group_entity_path
from broker.cluster.memory_registry import MemoryRegistryStore


@pytest.fixture
def raw(zk_connect, make_registry):
    make_registry()
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_group_config_writes_are_entity_nodes_with_change_notices(make_registry, raw):
    registry = make_registry()
    registry.alter_quota_config((("client-id", "app"),), {"producer_byte_rate": "1"})  # a notice to count from
    seq, _ = registry.config_changes_since(-1)
    registry.alter_group_config("orders", {"share.auto.offset.reset": "earliest"})
    registry.alter_group_config("a/b", {"share.record.lock.duration.ms": "15000"})
    assert json.loads(raw.get("/config/groups/orders")[0]) == {
        "version": 1,
        "config": {"share.auto.offset.reset": "earliest"},
    }
    assert json.loads(raw.get("/config/groups/a%2Fb")[0])["config"] == {"share.record.lock.duration.ms": "15000"}
    _, paths = registry.config_changes_since(seq)
    assert paths == ["groups/orders", "groups/a%2Fb"]
    assert registry.group_configs() == {
        "a/b": {"share.record.lock.duration.ms": "15000"},
        "orders": {"share.auto.offset.reset": "earliest"},
    }
    registry.alter_group_config("orders", {"share.auto.offset.reset": None})
    assert registry.group_config("orders") == {}
    assert list(registry.group_configs()) == ["a/b"]


def test_the_memory_registry_keeps_group_configs_the_same_way():
    registry = MemoryRegistryStore().view()
    registry.start()
    registry.alter_quota_config((("client-id", "app"),), {"producer_byte_rate": "1"})  # a notice to count from
    seq, _ = registry.config_changes_since(-1)
    registry.alter_group_config("g*", {"share.auto.offset.reset": "earliest"})
    registry.alter_group_config("g*", {"share.delivery.count.limit": "3"})
    assert registry.group_config("g*") == {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"}
    _, paths = registry.config_changes_since(seq)
    assert paths == ["groups/g%2A", "groups/g%2A"]
    registry.alter_group_config("g*", {"share.auto.offset.reset": None, "share.delivery.count.limit": None})
    assert registry.group_configs() == {}
    with pytest.raises(ValueError, match="non-empty group id"):
        registry.alter_group_config("", {"share.auto.offset.reset": "latest"})


@pytest.mark.parametrize(
    "path, group",
    [
        ("groups/orders", "orders"),
        ("groups/a%2Fb", "a/b"),
        ("groups/", None),
        ("groups/a/b", None),
        ("client-metrics/x", None),
        ("topics/t", None),
    ],
)
def test_change_notices_name_their_group(path, group):
    assert parse_group_entity_path(path) == group
