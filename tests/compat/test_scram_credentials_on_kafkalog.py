"""SCRAM credentials shared with Apache Kafka's own tools: Kafka 3.9's ConfigCommand writes a user straight into
kafkalog's ZooKeeper (``--zookeeper``) and every kafkalog broker applies it; it reads back a credential kafkalog
wrote, byte for byte; Kafka 4.4's kafka-configs alters credentials over AlterUserScramCredentials; and kafkalog's
admin client alters and describes credentials on Kafka 3.9 and 4.4."""

from __future__ import annotations

import subprocess
import uuid

import pytest

from broker.cluster.zookeeper_server import find_java
from spark_kafkalog.client.admin import AdminClient, UserScramCredentialUpsertion
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism
from tests.waiting import wait_until

from .peers import KAFKA_39, classpath
from .tools import JVM_OPTIONS, run_tool

pytestmark = pytest.mark.compat


def config_command_39(*args: str) -> str:
    """Kafka 3.9's ``kafka-configs.sh`` (``kafka.admin.ConfigCommand``, which still has ``--zookeeper``)."""
    cmd = [find_java(), *JVM_OPTIONS, "-cp", classpath(KAFKA_39), "kafka.admin.ConfigCommand", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ConfigCommand {' '.join(args)}:\n{proc.stdout}{proc.stderr}"
    return proc.stdout


def user() -> str:
    return f"user-{uuid.uuid4().hex[:8]}"


def test_a_user_kafka_configs_writes_into_zookeeper_reaches_the_kafkalog_brokers_cache(kafkalog):
    name = user()
    connect = kafkalog.broker.config["zookeeper.connect"]
    config_command_39(
        "--zookeeper", connect, "--alter", "--entity-type", "users", "--entity-name", name,
        "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]",
    )  # fmt: skip
    cache = kafkalog.broker.metadata_sync.scram_credentials
    wait_until(lambda: len(cache.users().get(name, ())) == 2, 15, f"{name}'s two credentials in kafkalog's cache")
    for mechanism, iterations in ((ScramMechanism.SCRAM_SHA_256, 8192), (ScramMechanism.SCRAM_SHA_512, 4096)):
        stored = cache.lookup(mechanism.mechanism_name, name)
        assert stored == ScramCredential.from_password(mechanism, "alice-secret", iterations, stored.salt)


def test_kafka_configs_reads_a_credential_kafkalog_wrote_as_its_own(kafkalog):
    name = user()
    with AdminClient(kafkalog.bootstrap_servers) as admin:
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(name, "SCRAM-SHA-512", "bob-secret", 4096)])
    stored = kafkalog.broker.registry.user_config(name)["SCRAM-SHA-512"]
    out = config_command_39(
        "--zookeeper", kafkalog.broker.config["zookeeper.connect"], "--describe", "--entity-type", "users",
        "--entity-name", name,
    )  # fmt: skip
    assert f"Configs for user-principal '{name}' are SCRAM-SHA-512={stored}" in out


def test_kafka_configs_over_the_wire_upserts_and_deletes_credentials(kafkalog):
    name = user()
    bootstrap = kafkalog.bootstrap_servers
    users = ("--entity-type", "users", "--entity-name", name)
    added = run_tool(
        "kafka-configs", "--bootstrap-server", bootstrap, "--alter", *users,
        "--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-secret],SCRAM-SHA-512=[password=carol-secret]",
    )  # fmt: skip
    assert f"Completed updating config for user {name}." in added.stdout
    config = kafkalog.broker.registry.user_config(name)
    stored = ScramCredential.from_kafka_string(config["SCRAM-SHA-256"])
    assert stored == ScramCredential.from_password(ScramMechanism.SCRAM_SHA_256, "carol-secret", 8192, stored.salt)
    run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--alter", *users, "--delete-config", "SCRAM-SHA-512")
    assert set(kafkalog.broker.registry.user_config(name)) == {"SCRAM-SHA-256"}


def test_kafka_configs_over_the_wire_describes_a_users_credentials(kafkalog):
    name = user()
    with AdminClient(kafkalog.bootstrap_servers) as admin:
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(name, "SCRAM-SHA-256", "pw", 8192)])
    out = run_tool(
        "kafka-configs", "--bootstrap-server", kafkalog.bootstrap_servers, "--describe", "--entity-type", "users",
        "--entity-name", name,
    ).stdout  # fmt: skip
    assert f"SCRAM credential configs for user-principal '{name}' are SCRAM-SHA-256=iterations=8192" in out


def test_kafkalogs_admin_client_alters_and_describes_credentials_on_kafka(kafka):
    from spark_kafkalog.client.admin import AdminOperationError, ScramCredentialInfo, UserScramCredentialDeletion

    name = user()
    with AdminClient(kafka.bootstrap_servers) as admin:
        # one mechanism per request: Kafka 4's KRaft controller refuses a user named twice in one request
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(name, "SCRAM-SHA-256", "pw", 8192)])
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(name, "SCRAM-SHA-512", "pw")])
        want = {name: [ScramCredentialInfo("SCRAM-SHA-256", 8192), ScramCredentialInfo("SCRAM-SHA-512", 4096)]}

        def described() -> dict:  # Kafka 4 lists a user's mechanisms in no fixed order
            return {
                u: sorted(infos, key=lambda i: i.mechanism)
                for u, infos in admin.describe_user_scram_credentials([name]).items()
            }

        wait_until(lambda: described() == want, 15, f"{name} on Kafka")
        admin.alter_user_scram_credentials([UserScramCredentialDeletion(name, "SCRAM-SHA-256")])
        wait_until(
            lambda: admin.describe_user_scram_credentials([name])[name] == want[name][1:], 15, "the deletion on Kafka"
        )
        with pytest.raises(AdminOperationError, match="RESOURCE_NOT_FOUND"):
            admin.describe_user_scram_credentials([f"{name}-missing"])
        assert admin.describe_user_scram_credentials([f"{name}-missing"], missing_ok=True) == {}
