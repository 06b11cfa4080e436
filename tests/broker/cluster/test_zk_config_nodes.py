"""Dynamic broker config nodes and config change notifications on a real ZooKeeper (Kafka's layout):
``/config/brokers/<id>`` and ``/config/brokers/<default>``, ``/config/changes/config_change_<seq>``, and the
watch that tells brokers to re-read configs."""

from __future__ import annotations

import json
import queue

import pytest
from kazoo.client import KazooClient

from broker.cluster.registry import TopicAssignment


@pytest.fixture
def raw(zk_connect, make_registry):
    make_registry()
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_broker_configs_are_kafkas_nodes_with_change_notifications(make_registry, raw):
    registry = make_registry()
    assert registry.broker_config("<default>") == {} and registry.broker_config("3") == {}
    registry.set_broker_config("<default>", {"log.retention.ms": "60000"})
    registry.set_broker_config("3", {"log.segment.bytes": "2048"})
    registry.set_broker_config("3", {"log.segment.bytes": "4096", "min.insync.replicas": "2"})
    assert json.loads(raw.get("/config/brokers/<default>")[0]) == {
        "version": 1,
        "config": {"log.retention.ms": "60000"},
    }
    assert registry.broker_config("3") == {"log.segment.bytes": "4096", "min.insync.replicas": "2"}
    changes = [json.loads(raw.get(f"/config/changes/{c}")[0]) for c in sorted(raw.get_children("/config/changes"))]
    assert changes == [
        {"version": 2, "entity_path": "brokers/<default>"},
        {"version": 2, "entity_path": "brokers/3"},
        {"version": 2, "entity_path": "brokers/3"},
    ]
    for bad in ("", "abc", "../x", "-1"):
        with pytest.raises(ValueError, match="broker config entity"):
            registry.set_broker_config(bad, {})


def test_config_change_watch_fires_for_topic_and_broker_config_writes(make_registry):
    writer, reader = make_registry(), make_registry()
    writer.create_topic(TopicAssignment("t", {0: (1,)}), {})
    seen: queue.Queue = queue.Queue()
    sub = reader.on_config_changes(seen.put)
    first = seen.get(timeout=10)
    writer.set_topic_config("t", {"retention.ms": "5"})
    assert seen.get(timeout=10) == first + 1
    writer.set_broker_config("<default>", {"log.retention.ms": "5"})
    assert seen.get(timeout=10) == first + 2
    sub.cancel()


def test_only_the_newest_change_notifications_are_kept(make_registry, raw, monkeypatch):
    import broker.cluster.zk_registry as zr

    monkeypatch.setattr(zr, "CONFIG_CHANGES_KEPT", 3)
    registry = make_registry()
    for i in range(6):
        registry.set_broker_config("<default>", {"log.retention.ms": str(1000 + i)})
    kept = sorted(raw.get_children("/config/changes"))
    assert [int(c.rsplit("_", 1)[1]) for c in kept] == [3, 4, 5]
