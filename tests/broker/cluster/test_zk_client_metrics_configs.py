"""Client metrics subscriptions (KIP-714 ``CLIENT_METRICS`` entities) on a real ZooKeeper: ``/config/client-metrics/
<sanitized name>`` in Kafka's entity config format with a ``client-metrics/<name>`` change notice per write; the
in-memory registry behaves the same."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from broker.cluster.client_metrics_entities import parse_client_metrics_entity_path
from broker.cluster.memory_registry import MemoryRegistryStore


@pytest.fixture
def raw(zk_connect, make_registry):
    make_registry()
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_subscription_writes_are_entity_nodes_with_change_notices(make_registry, raw):
    registry = make_registry()
    registry.alter_quota_config((("client-id", "app"),), {"producer_byte_rate": "1"})  # a notice to count from
    seq, _ = registry.config_changes_since(-1)
    registry.alter_client_metrics_config("producers", {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"})
    registry.alter_client_metrics_config("all*", {"metrics": "*"})
    assert json.loads(raw.get("/config/client-metrics/producers")[0]) == {
        "version": 1,
        "config": {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"},
    }
    assert json.loads(raw.get("/config/client-metrics/all%2A")[0])["config"] == {"metrics": "*"}
    _, paths = registry.config_changes_since(seq)
    assert paths == ["client-metrics/producers", "client-metrics/all%2A"]
    assert registry.client_metrics_configs() == {
        "all*": {"metrics": "*"},
        "producers": {"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"},
    }
    registry.alter_client_metrics_config("producers", {"metrics": None, "interval.ms": None})
    assert registry.client_metrics_config("producers") == {}
    assert list(registry.client_metrics_configs()) == ["all*"]


def test_the_memory_registry_keeps_subscriptions_the_same_way():
    registry = MemoryRegistryStore().view()
    registry.start()
    registry.alter_quota_config((("client-id", "app"),), {"producer_byte_rate": "1"})  # a notice to count from
    seq, _ = registry.config_changes_since(-1)
    registry.alter_client_metrics_config("all*", {"metrics": "*", "match": "client_id=a.*"})
    registry.alter_client_metrics_config("all*", {"interval.ms": "500"})
    assert registry.client_metrics_config("all*") == {"metrics": "*", "match": "client_id=a.*", "interval.ms": "500"}
    _, paths = registry.config_changes_since(seq)
    assert paths == ["client-metrics/all%2A", "client-metrics/all%2A"]
    registry.alter_client_metrics_config("all*", {"metrics": None, "match": None, "interval.ms": None})
    assert registry.client_metrics_configs() == {}
    with pytest.raises(ValueError, match="non-empty name"):
        registry.alter_client_metrics_config("", {"metrics": "*"})


@pytest.mark.parametrize(
    "path, name",
    [
        ("client-metrics/producers", "producers"),
        ("client-metrics/all%2A", "all*"),
        ("clients/app", None),
        ("client-metrics/", None),
        ("client-metrics/a/b", None),
        ("topics/t", None),
    ],
)
def test_change_notices_name_their_subscription(path, name):
    assert parse_client_metrics_entity_path(path) == name
