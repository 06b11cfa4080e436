"""``LocalClusterSecurity``: the material of ``cluster up --security``, made once per data dir and reloaded."""

from __future__ import annotations

from broker.config import BrokerConfig
from broker.security.listener_security import listener_securities
from broker.security.local_cluster import LocalClusterSecurity
from spark_kafkalog.client.network.security import ClientSecurity
from tests.waiting import wait_until


def test_prepared_once_then_reloaded_with_the_same_password(tmp_path):
    first = LocalClusterSecurity.prepare(tmp_path)
    ca = first.ca_pem.read_bytes()
    again = LocalClusterSecurity.prepare(tmp_path)
    assert again.admin_password == first.admin_password and again.ca_pem.read_bytes() == ca
    assert first.admin_password not in repr(first) and first.key_password not in repr(first)
    for private in ("admin.password", "key.password", "broker.pem", "ca-key.pem", "client.properties"):
        assert (first.directory / private).stat().st_mode & 0o077 == 0, private
    assert (first.directory / "librdkafka.properties").stat().st_mode & 0o077 == 0


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


def test_its_brokers_run_an_authorizer_that_allows_the_inter_broker_identity_everything(tmp_path):
    """Replica fetches need ClusterAction on the cluster once ACLs are on: ``admin``, the identity the brokers
    replicate with, is a super user; anyone else needs ACLs."""
    from broker.security.authorizer import AclAuthorizer
    from spark_kafkalog.security.acl import CLUSTER_NAME, AclOperation, ResourceType

    security = LocalClusterSecurity.prepare(tmp_path)
    props = {"broker.id": "1", "log.dirs": str(tmp_path / "logs"), "zookeeper.connect": "memory:local-cluster"}
    props.update(
        (k, v.replace("{host}", "127.0.0.1").replace("{port}", "0")) for k, v in security.broker_config().items()
    )
    authorizer = AclAuthorizer.from_config(BrokerConfig.from_properties(props))
    assert authorizer.enabled
    for principal, allowed in (("User:admin", True), ("User:bob", False)):
        got = authorizer.authorize(
            principal, "127.0.0.1", AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME
        )
        assert got is allowed, principal


def test_kcat_lists_the_cluster_with_the_librdkafka_file(tmp_path):
    """What the summary tells kcat users to run works: ``kcat -F librdkafka.properties -b ... -L``."""
    import shutil
    import subprocess
    import uuid

    from broker.server import EmbeddedBroker

    security = LocalClusterSecurity.prepare(tmp_path)
    config = {k: v.replace("{host}", "127.0.0.1").replace("{port}", "0") for k, v in security.broker_config().items()}
    config["listeners"] += ",INTERNAL://127.0.0.1:0"
    config["listener.security.protocol.map"] += ",INTERNAL:PLAINTEXT"
    config["inter.broker.listener.name"] = "INTERNAL"
    with EmbeddedBroker(
        0, zookeeper_connect=f"memory:lc-{uuid.uuid4().hex[:8]}", log_dir=tmp_path / "l", **config
    ) as b:
        b.call(lambda: security.write_admin_credentials(b.broker.registry))
        cache = b.broker.metadata_sync.scram_credentials
        wait_until(lambda: cache.lookup("SCRAM-SHA-512", "admin") is not None, 15, "admin in the credential cache")
        kcat = shutil.which("kcat")
        assert kcat, "kcat is not installed (make install installs it)"
        port = b.broker.bound_ports["SASL_SSL"]
        listed = subprocess.run(
            [kcat, "-F", str(security.librdkafka_properties), "-b", f"localhost:{port}", "-L", "-m", "15"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert listed.returncode == 0 and f"localhost:{port}" in listed.stdout + listed.stderr, listed.stderr
