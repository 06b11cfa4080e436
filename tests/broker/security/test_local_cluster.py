"""``LocalClusterSecurity``: the material of ``cluster up --security``, made once per data dir and reloaded."""

from __future__ import annotations

from broker.config import BrokerConfig
from broker.security.listener_security import listener_securities
from broker.security.local_cluster import LocalClusterSecurity
from spark_kafkalog.client.network.security import ClientSecurity


def test_prepared_once_then_reloaded_with_the_same_password(tmp_path):
    first = LocalClusterSecurity.prepare(tmp_path)
    ca = first.ca_pem.read_bytes()
    again = LocalClusterSecurity.prepare(tmp_path)
    assert again.admin_password == first.admin_password and again.ca_pem.read_bytes() == ca
    assert first.admin_password not in repr(first) and first.key_password not in repr(first)


def test_its_broker_and_client_settings_are_valid_kafka_settings(tmp_path):
    security = LocalClusterSecurity.prepare(tmp_path)
    props = {
        "broker.id": "1",
        "log.dirs": str(tmp_path / "logs"),
        "zookeeper.connect": "memory:local-cluster",
        **{k: v.replace("{host}", "127.0.0.1").replace("{port}", "0") for k, v in security.broker_config().items()},
    }
    config = BrokerConfig.from_properties(props)
    (listener,) = listener_securities(config).values()
    assert listener.protocol == "SASL_SSL" and listener.ssl_context is not None
    assert set(listener.sasl_mechanisms) == {"SCRAM-SHA-512", "SCRAM-SHA-256"}
    client = ClientSecurity.from_config(security.client_config())
    assert client.protocol == "SASL_SSL" and client.sasl is not None and client.sasl.username == "admin"
    assert security.admin_password not in repr(client)
