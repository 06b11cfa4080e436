"""A broker whose ZooKeeper session expires, or whose registration is deleted, registers again and keeps serving
(in-process broker, real ZooKeeper)."""

from __future__ import annotations

import uuid

import pytest
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from tests.waiting import wait_until

from ..broker.cluster.test_zk_registry import expire_session
from ..broker.requests import batch, create, fetch, produce, values_in
from ..broker.wire import Wire

pytestmark = pytest.mark.integration


def test_broker_registers_again_after_session_expiry(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/expiry-{uuid.uuid4().hex[:8]}"
    broker = EmbeddedBroker(7, zookeeper_connect=connect, log_dir=tmp_path, zookeeper_session_timeout_ms=4000).start()
    zk = KazooClient(hosts=connect, timeout=10)
    zk.start(10)
    try:
        with Wire(broker.bootstrap_servers) as w:
            create(w, "before")
            produce(w, "before", batch([b"a"]))
        first_session = broker.broker.registry.session_id
        before = zk.get("/brokers/ids/7")[1]
        expire_session(broker.broker.registry, zookeeper.connect_string)

        def registered_again() -> bool:
            stat = zk.exists("/brokers/ids/7")
            return stat is not None and stat.ephemeralOwner != before.ephemeralOwner

        wait_until(registered_again, 20, "the broker to register again after its session expired")
        assert broker.broker.registry.session_id != first_session
        # the broker competed for the controller again
        wait_until(lambda: zk.exists("/controller") is not None, 10, "a controller again")
        with Wire(broker.bootstrap_servers) as w:
            assert produce(w, "before", batch([b"b"])).base_offset == 1
            assert values_in(fetch(w, "before", 0).records) == [b"a", b"b"]
            assert create(w, "after").error_code == 0  # the controller works again: leaders get elected
    finally:
        zk.stop()
        zk.close()
        broker.stop()


def test_broker_registers_again_when_its_node_is_deleted_while_it_runs(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/deleted-{uuid.uuid4().hex[:8]}"
    broker = EmbeddedBroker(8, zookeeper_connect=connect, log_dir=tmp_path).start()
    zk = KazooClient(hosts=connect, timeout=10)
    zk.start(10)
    try:
        with Wire(broker.bootstrap_servers) as w:
            create(w, "kept")
            produce(w, "kept", batch([b"a"]))
        data, stat = zk.get("/brokers/ids/8")
        zk.delete("/brokers/ids/8")  # an operator's mistake, or a tool cleaning up
        wait_until(
            lambda: zk.exists("/brokers/ids/8") is not None,
            10,
            "the broker to register again after its node was deleted",
        )
        again, again_stat = zk.get("/brokers/ids/8")
        assert again == data and again_stat.ephemeralOwner == stat.ephemeralOwner  # same content, same session
        with Wire(broker.bootstrap_servers) as w:
            assert produce(w, "kept", batch([b"b"])).base_offset == 1
            assert values_in(fetch(w, "kept", 0).records) == [b"a", b"b"]
            assert create(w, "after").error_code == 0
    finally:
        zk.stop()
        zk.close()
        broker.stop()
