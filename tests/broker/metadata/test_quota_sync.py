"""Quota entities reach every broker's ``QuotaManager`` through ``MetadataSync``: all of them (quota keys only)
at start-up, then each entity a ``/config/changes`` notice names, on a real ZooKeeper with nodes written as
Kafka's kafka-configs writes them."""

from __future__ import annotations

import json
import uuid

import pytest
from kazoo.client import KazooClient

import broker.server
from broker.quotas.manager import QuotaManager
from broker.server import EmbeddedBroker
from tests.waiting import wait_until

ALICE, ALICE_APP = (("user", "alice"),), (("client-id", "app"), ("user", "alice"))
DEFAULT_CLIENT = (("client-id", None),)


class SpyQuotaManager(QuotaManager):
    """The real manager, recording what ``MetadataSync`` passes it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple] = []

    def update_entity(self, entity, config) -> None:
        self.calls.append(("update_entity", entity, dict(config)))
        super().update_entity(entity, config)

    def replace_all(self, configs) -> None:
        self.calls.append(("replace_all", {e: dict(c) for e, c in configs.items()}))
        super().replace_all(configs)


@pytest.fixture
def chroot(zookeeper):
    connect = f"{zookeeper.connect_string}/quota-sync-{uuid.uuid4().hex[:10]}"
    root = KazooClient(hosts=zookeeper.connect_string, timeout=10)
    root.start(timeout=10)
    root.ensure_path(connect[len(zookeeper.connect_string) :])
    root.stop()
    root.close()
    return connect


@pytest.fixture
def raw(chroot):
    client = KazooClient(hosts=chroot, timeout=10)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def spy_of(embedded: EmbeddedBroker) -> SpyQuotaManager:
    assert embedded.broker is not None and isinstance(embedded.broker.quotas, SpyQuotaManager)
    return embedded.broker.quotas


def kafka_node(config: dict[str, str]) -> bytes:
    """As Kafka's AdminZkClient writes an entity node (compact JSON)."""
    return json.dumps({"version": 1, "config": config}, separators=(",", ":")).encode()


def notice(raw, entity_path: str) -> None:
    raw.create(
        "/config/changes/config_change_", b'{"version":2,"entity_path":"%s"}' % entity_path.encode(), sequence=True
    )


def test_quota_entities_are_loaded_at_start_and_followed_on_every_broker(chroot, raw, tmp_path, monkeypatch):
    monkeypatch.setattr(broker.server, "QuotaManager", SpyQuotaManager)
    raw.create(
        "/config/users/alice", kafka_node({"SCRAM-SHA-256": "salt=eA==,x", "producer_byte_rate": "1024"}), makepath=True
    )
    raw.create("/config/clients/<default>", kafka_node({"consumer_byte_rate": "2048"}), makepath=True)
    raw.create("/config/users/bob", kafka_node({"SCRAM-SHA-512": "salt=eA==,y"}), makepath=True)  # no quota
    brokers = [EmbeddedBroker(i, zookeeper_connect=chroot, log_dir=tmp_path / f"b{i}").start() for i in (1, 2)]
    try:
        spies = [spy_of(b) for b in brokers]
        for spy in spies:
            assert spy.calls[0] == (
                "replace_all",
                {ALICE: {"producer_byte_rate": "1024"}, DEFAULT_CLIENT: {"consumer_byte_rate": "2048"}},
            )
        # the first notice a broker sees after finding none makes it re-read everything (others may have been
        # purged before it): have that one done before following single entities
        notice(raw, "topics/none")
        for i, spy in enumerate(spies):
            wait_until(lambda s=spy: len(s.calls) > 1, 10, f"broker {i + 1} re-read everything")  # type: ignore[misc]  # mypy cannot type a lambda's default-bound argument
            del spy.calls[:]

        # as kafka-configs --zookeeper --alter --entity-type users --entity-name alice --entity-type clients ...
        raw.create("/config/users/alice/clients/app", kafka_node({"request_percentage": "25"}), makepath=True)
        notice(raw, "users/alice/clients/app")
        raw.set("/config/clients/<default>", kafka_node({}))
        notice(raw, "clients/<default>")
        expected = [
            ("update_entity", ALICE_APP, {"request_percentage": "25"}),
            ("update_entity", DEFAULT_CLIENT, {}),
        ]
        for i, spy in enumerate(spies):
            wait_until(lambda s=spy: s.calls == expected, 10, f"broker {i + 1} updated")  # type: ignore[misc]  # as above

        # a write through the registry (as AlterClientQuotas does) reaches the others as well
        registry = brokers[0].broker.registry if brokers[0].broker is not None else None
        assert registry is not None
        registry.alter_quota_config(ALICE, {"producer_byte_rate": None, "consumer_byte_rate": "5"})
        altered = ("update_entity", ALICE, {"consumer_byte_rate": "5"})
        for i, spy in enumerate(spies):
            wait_until(lambda s=spy: altered in s.calls, 10, f"broker {i + 1}")  # type: ignore[misc]  # as above
    finally:
        for b in brokers:
            b.stop()
