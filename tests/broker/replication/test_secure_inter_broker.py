"""Replication over a SASL_SSL inter-broker listener: followers fetch through TLS with the broker's PLAIN or
SCRAM-SHA-512 identity, so acks=all with min.insync.replicas=2 works, and controlled shutdown reaches the controller the same
way; a broker with a wrong inter-broker password never joins the ISR."""

from __future__ import annotations

import time

import pytest

from spark_kafkalog.protocol import ErrorCode
from tests.security.certs import tls_material as _tls_material
from tests.waiting import wait_until

from .cluster import Cluster

tls_material = pytest.fixture(scope="session")(_tls_material)


def jaas(password: str, mechanism: str = "PLAIN") -> str:
    if mechanism == "PLAIN":
        module, users = "plain.PlainLoginModule", ' user_broker="broker-secret"'
    else:  # SCRAM: the accepted users are the credentials in /config/users
        module, users = "scram.ScramLoginModule", ""
    return f'org.apache.kafka.common.security.{module} required username="broker" password="{password}"{users};'


def overrides(m, password: str = "broker-secret", mechanism: str = "PLAIN") -> dict[str, str]:
    return {
        "listeners": "CLIENT://127.0.0.1:0,REPL://127.0.0.1:0",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,REPL:SASL_SSL",
        "inter.broker.listener.name": "REPL",
        "sasl.mechanism.inter.broker.protocol": mechanism,
        "listener.name.repl.sasl.enabled.mechanisms": mechanism,
        f"listener.name.repl.{mechanism.lower()}.sasl.jaas.config": jaas(password, mechanism),
        "listener.name.repl.ssl.keystore.location": str(m.broker_keystore_p12),
        "listener.name.repl.ssl.keystore.password": m.password,
        "listener.name.repl.ssl.truststore.location": str(m.truststore_jks),
        "listener.name.repl.ssl.truststore.password": m.password,
        "min.insync.replicas": "2",
        "replica.fetch.backoff.ms": "100",
    }


def _cluster(tmp_path_factory, m, mechanism: str = "PLAIN") -> Cluster:
    c = Cluster(1, tmp_path_factory, **overrides(m, mechanism=mechanism))
    c.dirs[1] = tmp_path_factory.mktemp("broker1")
    return c


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_acks_all_replicates_over_the_sasl_ssl_inter_broker_listener(tmp_path_factory, tls_material, mechanism):
    c = _cluster(tmp_path_factory, tls_material, mechanism)
    try:
        if mechanism.startswith("SCRAM"):  # the brokers' own user, stored as kafka-configs stores it
            from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism

            cred = ScramCredential.from_password(ScramMechanism.SCRAM_SHA_512, "broker-secret", 4096)
            b0 = c.brokers[0].broker
            assert b0 is not None and b0.registry is not None
            registry = b0.registry
            config = {"SCRAM-SHA-512": cred.to_kafka_string()}
            c.brokers[0].call(lambda: b0.run_blocking(registry.alter_user_config, "broker", config))
        c.start(1)
        c.create_topic("secure", {0: (0, 1)})
        wait_until(lambda: c.state("secure") is not None and set(c.state("secure").isr) == {0, 1}, what="ISR {0, 1}")
        leader = c.state("secure").leader
        r = c.produce(leader, "secure", [b"a", b"b", b"c"], acks=-1)
        assert r.error_code == ErrorCode.NONE, r
        follower = 1 - leader
        wait_until(lambda: c.offsets(follower, "secure")[0] == 3, what="the follower holding the records")
        assert c.log_bytes(follower, "secure") == c.log_bytes(leader, "secure")
        # the other broker's controlled shutdown reaches the controller over REPL (SASL_SSL) too: at once
        # (not after replica.lag.time.max.ms) it leads nothing and is out of the ISR
        broker0 = c.brokers[0].broker
        assert broker0 is not None
        controller = broker0.metadata.controller_id
        assert controller in (0, 1)
        c.stop(1 - controller)
        state = c.state("secure")
        assert (state.leader, state.isr) == (controller, (controller,))
    finally:
        c.close()


def test_a_follower_with_a_wrong_inter_broker_password_never_joins_the_isr(tmp_path_factory, tls_material):
    c = _cluster(tmp_path_factory, tls_material)
    try:
        c.create_topic("locked", {0: (0, 1)})  # broker 1 is not there yet: leader 0, ISR {0}
        wait_until(lambda: c.state("locked") is not None and c.state("locked").leader == 0, what="leader 0")
        c.overrides = overrides(tls_material, "wrong-password")
        c.start(1)
        time.sleep(1.5)  # several fetch attempts, each refused at authentication
        assert c.state("locked").isr == (0,)
        assert c.offsets(1, "locked")[0] == 0
        r = c.produce(0, "locked", [b"x"], acks=-1)
        assert r.error_code == ErrorCode.NOT_ENOUGH_REPLICAS, r
    finally:
        c.close()


def test_transaction_markers_reach_another_leader_over_the_sasl_ssl_inter_broker_listener(
    tmp_path_factory, tls_material
):
    from ..requests import produce
    from ..txn_wire import READ_COMMITTED, list_latest, txn_batch
    from ..wire import Wire

    c = _cluster(tmp_path_factory, tls_material)
    try:
        c.start(1)
        c.create_topic("txm", {0: (1,)}, {"min.insync.replicas": "1"})
        wait_until(lambda: c.state("txm") is not None and c.state("txm").leader == 1, what="leader 1")
        pid = 9_000_001
        with Wire(c.brokers[1].bootstrap_servers) as w:
            assert produce(w, "txm", txn_batch(pid, [b"t0"]), acks=1).error_code == ErrorCode.NONE
            assert list_latest(w, "txm", READ_COMMITTED) == 0  # open transaction
        b0 = c.brokers[0].broker
        assert b0 is not None and b0.txn_coordinator is not None
        markers = b0.txn_coordinator.markers
        assert markers.inter_broker is b0.inter_broker and markers.inter_broker.protocol == "SASL_SSL"
        c.brokers[0].call(lambda: markers.write_markers(pid, 0, True, 1, {("txm", 0)}), timeout_s=30)
        with Wire(c.brokers[1].bootstrap_servers) as w:
            assert list_latest(w, "txm", READ_COMMITTED) == 2  # the record and the COMMIT marker
    finally:
        c.close()
