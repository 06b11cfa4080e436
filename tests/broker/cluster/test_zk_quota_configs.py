"""Client quota entity nodes on a real ZooKeeper, byte for byte as Kafka's ``AdminZkClient`` writes them:
``/config/users/<u>``, ``/config/clients/<c>``, ``/config/users/<u>/clients/<c>`` (``<default>`` literal,
names sanitized), each write with a ``/config/changes`` notice naming the entity path; the user node's SCRAM
credentials survive quota writes and the other way round; the in-memory registry behaves the same."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kazoo.client import KazooClient

from broker.cluster.memory_registry import MemoryRegistry

ALICE, APP = (("user", "alice"),), (("client-id", "app"),)
ALICE_APP = (("client-id", "app"), ("user", "alice"))
DEFAULT_USER, DEFAULT_CLIENT = (("user", None),), (("client-id", None),)


@pytest.fixture
def raw(zk_connect, make_registry):
    make_registry()
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def node(raw, path: str) -> Any:
    data = raw.get(path)[0]
    return None if data is None else json.loads(data)


def notices(raw) -> list[str]:
    return [node(raw, f"/config/changes/{c}")["entity_path"] for c in sorted(raw.get_children("/config/changes"))]


def test_quota_writes_are_kafkas_nodes_and_notices(make_registry, raw):
    registry = make_registry()
    registry.alter_quota_config(ALICE, {"producer_byte_rate": "1024"})
    registry.alter_quota_config(APP, {"consumer_byte_rate": "2048"})
    registry.alter_quota_config(ALICE_APP, {"request_percentage": "50.5"})
    registry.alter_quota_config(DEFAULT_USER, {"producer_byte_rate": "1"})
    registry.alter_quota_config(DEFAULT_CLIENT, {"producer_byte_rate": "2"})
    registry.alter_quota_config((("client-id", "c*1"), ("user", None)), {"consumer_byte_rate": "3"})
    registry.alter_quota_config((("client-id", None), ("user", "a@b")), {"consumer_byte_rate": "4"})

    assert raw.get("/config/users/alice")[0] == b'{"version":1,"config":{"producer_byte_rate":"1024"}}'
    assert node(raw, "/config/clients/app") == {"version": 1, "config": {"consumer_byte_rate": "2048"}}
    assert node(raw, "/config/users/alice/clients/app") == {"version": 1, "config": {"request_percentage": "50.5"}}
    assert node(raw, "/config/users/<default>") == {"version": 1, "config": {"producer_byte_rate": "1"}}
    assert node(raw, "/config/clients/<default>") == {"version": 1, "config": {"producer_byte_rate": "2"}}
    assert node(raw, "/config/users/<default>/clients/c%2A1")["config"] == {"consumer_byte_rate": "3"}
    # parents created for a user/client-id node hold null data, as Kafka's createRecursive leaves them
    assert raw.get("/config/users/a%40b")[0] is None and raw.get("/config/users/a%40b/clients")[0] is None
    assert notices(raw) == [
        "users/alice",
        "clients/app",
        "users/alice/clients/app",
        "users/<default>",
        "clients/<default>",
        "users/<default>/clients/c%2A1",
        "users/a%40b/clients/<default>",
    ]
    assert registry.quota_configs() == {
        ALICE: {"producer_byte_rate": "1024"},
        APP: {"consumer_byte_rate": "2048"},
        ALICE_APP: {"request_percentage": "50.5"},
        DEFAULT_USER: {"producer_byte_rate": "1"},
        DEFAULT_CLIENT: {"producer_byte_rate": "2"},
        (("client-id", "c*1"), ("user", None)): {"consumer_byte_rate": "3"},
        (("client-id", None), ("user", "a@b")): {"consumer_byte_rate": "4"},
    }
    assert registry.quota_config(ALICE_APP) == {"request_percentage": "50.5"}
    assert registry.quota_config((("client-id", "nobody"),)) == {}


def test_kafka_written_quota_nodes_are_read_and_scram_credentials_are_kept(make_registry, raw):
    registry = make_registry()
    # as kafka-configs --zookeeper wrote them (a user with SCRAM and a quota; a malformed client node)
    raw.create("/config/users/bob", b'{"version":1,"config":{"SCRAM-SHA-256":"salt=x","producer_byte_rate":"9"}}')
    raw.create(
        "/config/users/carol/clients/<default>", b'{"version":1,"config":{"request_percentage":"7"}}', makepath=True
    )
    raw.create("/config/clients/broken", b"not json")
    assert registry.quota_configs() == {
        (("user", "bob"),): {"SCRAM-SHA-256": "salt=x", "producer_byte_rate": "9"},
        (("client-id", None), ("user", "carol")): {"request_percentage": "7"},
    }
    registry.alter_quota_config((("user", "bob"),), {"producer_byte_rate": None, "consumer_byte_rate": "10"})
    assert node(raw, "/config/users/bob")["config"] == {"SCRAM-SHA-256": "salt=x", "consumer_byte_rate": "10"}
    registry.alter_user_config("bob", {"SCRAM-SHA-256": None})
    assert node(raw, "/config/users/bob")["config"] == {"consumer_byte_rate": "10"}
    # removing the last key leaves an empty config, as Kafka does; the entity is then no longer listed
    registry.alter_quota_config((("user", "bob"),), {"consumer_byte_rate": None})
    assert node(raw, "/config/users/bob") == {"version": 1, "config": {}}
    assert (("user", "bob"),) not in registry.quota_configs()


def test_a_stale_quota_write_is_retried_and_keeps_a_concurrent_key(make_registry, raw, monkeypatch):
    registry = make_registry()
    registry.alter_quota_config(APP, {"producer_byte_rate": "1"})
    real_get = registry._zk.get_if_exists
    calls: list[str] = []

    def get_then_interfere(path, watch=None):
        found = real_get(path, watch)
        if path == "/config/clients/app" and not calls:
            calls.append(path)  # another writer gets in between this read and the compare-and-set
            raw.set(path, b'{"version":1,"config":{"producer_byte_rate":"1","consumer_byte_rate":"5"}}')
        return found

    monkeypatch.setattr(registry._zk, "get_if_exists", get_then_interfere)
    assert registry.alter_quota_config(APP, {"request_percentage": "3"}) == {
        "producer_byte_rate": "1",
        "consumer_byte_rate": "5",
        "request_percentage": "3",
    }


@pytest.mark.parametrize("entity", [(), (("ip", "1.2.3.4"),), (("user", ""),), (("user", "a"), ("user", "b"))])
def test_invalid_entities_are_refused_before_touching_zookeeper(make_registry, raw, entity):
    registry = make_registry()
    before = raw.get_children("/config/changes")
    with pytest.raises(ValueError):
        registry.alter_quota_config(entity, {"producer_byte_rate": "1"})
    with pytest.raises(ValueError):
        registry.quota_config(entity)
    assert raw.get_children("/config/changes") == before


def test_memory_registry_keeps_quota_entities_as_zookeeper_does():
    registry = MemoryRegistry()
    registry.start()
    try:
        registry.alter_user_config("alice", {"SCRAM-SHA-256": "salt=x"})
        seq, _ = registry.config_changes_since(-1)
        registry.alter_quota_config(ALICE, {"producer_byte_rate": "1024"})
        registry.alter_quota_config(ALICE_APP, {"request_percentage": "5"})
        registry.alter_quota_config(DEFAULT_CLIENT, {"consumer_byte_rate": "6"})
        assert registry.user_config("alice") == {"SCRAM-SHA-256": "salt=x", "producer_byte_rate": "1024"}
        assert registry.config_changes_since(seq)[1] == ["users/alice", "users/alice/clients/app", "clients/<default>"]
        assert registry.quota_configs() == {
            ALICE: {"SCRAM-SHA-256": "salt=x", "producer_byte_rate": "1024"},
            ALICE_APP: {"request_percentage": "5"},
            DEFAULT_CLIENT: {"consumer_byte_rate": "6"},
        }
        registry.alter_quota_config(DEFAULT_USER, {"producer_byte_rate": "7"})
        assert registry.user_config("<default>") == {"producer_byte_rate": "7"}
        assert registry.quota_config(DEFAULT_USER) == {"producer_byte_rate": "7"}
        with pytest.raises(ValueError):
            registry.alter_quota_config((("ip", "1.2.3.4"),), {})
    finally:
        registry.close()
