"""A SASL_SSL cluster of broker processes on the session ZooKeeper: clients on a SASL_SSL listener (PLAIN), the
brokers replicating over their own SASL_SSL inter-broker listener; the registration names both listeners."""

from __future__ import annotations

import json
import uuid

import pytest

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.requests import batch, produce_body
from tests.security.certs import tls_material as _tls_material
from tests.waiting import wait_until

tls_material = pytest.fixture(scope="session")(_tls_material)

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def test_a_sasl_ssl_cluster_replicates_over_its_inter_broker_listener(zookeeper, tmp_path, tls_material):
    m = tls_material
    stores = {
        "ssl.keystore.location": str(m.broker_keystore_p12),
        "ssl.keystore.password": m.password,
        "ssl.truststore.location": str(m.truststore_jks),
        "ssl.truststore.password": m.password,
    }
    jaas = f'{PLAIN} required username="broker" password="broker-pw" user_broker="broker-pw" user_alice="alice-pw";'
    cluster = EmbeddedCluster(
        2,
        data_dir=tmp_path,
        zookeeper_connect=f"{zookeeper.connect_string}/secure-{uuid.uuid4().hex[:8]}",
        broker_config={
            "listeners": "CLIENT://{host}:{port},INTERNAL://{host}:{port1}",
            "listener.security.protocol.map": "CLIENT:SASL_SSL,INTERNAL:SASL_SSL",
            "inter.broker.listener.name": "INTERNAL",
            "sasl.enabled.mechanisms": "PLAIN",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "sasl.jaas.config": jaas,
            "min.insync.replicas": "2",
            **stores,
        },
        client_config={
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'{PLAIN} required username="alice" password="alice-pw";',
            "ssl.truststore.location": str(m.truststore_p12),
            "ssl.truststore.password": m.password,
        },
    )
    with cluster:  # start waits until each broker lists both, asked over the SASL_SSL client listener
        conn = cluster.connect(1)
        try:
            R = API_BY_KEY[ApiKey.CREATE_TOPICS].Request
            body = R(
                topics=[
                    R.CreatableTopic(
                        name="secured",
                        num_partitions=-1,
                        replication_factor=-1,
                        assignments=[R.CreatableTopic.CreatableReplicaAssignment(partition_index=0, broker_ids=[1, 2])],
                        configs=[],
                    )
                ],
                timeout_ms=10000,
                validate_only=False,
            )
            assert conn.request(ApiKey.CREATE_TOPICS, body, timeout=15).topics[0].error_code == ErrorCode.NONE
        finally:
            conn.close()

        def produced() -> bool:
            c = cluster.connect(1)
            try:
                resp = c.request(
                    ApiKey.PRODUCE, produce_body("secured", 0, batch([b"a", b"b"]), acks=-1), timeout=15, version=12
                )
            finally:
                c.close()
            code = resp.responses[0].partition_responses[0].error_code
            assert code in (ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS), code
            return code == ErrorCode.NONE

        wait_until(produced, 30, "an acks=all produce with min ISR 2 (the follower fetching over INTERNAL)")

        from kazoo.client import KazooClient

        zk = KazooClient(hosts=cluster.zookeeper_connect)
        zk.start()
        try:
            node = json.loads(zk.get("/brokers/ids/2")[0])
        finally:
            zk.stop()
        assert node["version"] == 5
        assert node["listener_security_protocol_map"] == {"CLIENT": "SASL_SSL", "INTERNAL": "SASL_SSL"}
        assert node["endpoints"] == [
            f"CLIENT://127.0.0.1:{cluster.ports[2]}",
            f"INTERNAL://127.0.0.1:{cluster.extra_ports[2][1]}",
        ]
        assert (node["host"], node["port"]) == (None, -1)  # no PLAINTEXT listener
