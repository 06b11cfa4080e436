"""`kafkalog configs` for client quotas, spelled as kafka-configs spells them over --bootstrap-server: one run of
the tool as a process against an in-process broker per step: what it stores (Kafka's nodes), what it prints
(Kafka's lines, values as Java doubles), and the refusals kafka-configs makes before sending anything."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.broker.conftest import start_brokers

CLI = [sys.executable, "-m", "broker.cli", "configs"]


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    yield b
    b.stop()


def test_quotas_are_altered_and_described_as_kafka_configs_does(broker):
    bs = ["--bootstrap-server", broker.bootstrap_servers]
    registry = broker.broker.registry
    added = run("--alter", *bs, "--entity-type", "users", "--entity-name", "alice",
                "--add-config", "producer_byte_rate=1048576,request_percentage=50")  # fmt: skip
    assert (added.returncode, added.stdout) == (0, "Completed updating config for user alice.\n"), added.stderr
    assert registry.user_config("alice") == {"producer_byte_rate": "1048576", "request_percentage": "50.0"}

    both = run("--alter", *bs, "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients",
               "--entity-default", "--add-config", "consumer_byte_rate=2048")  # fmt: skip
    assert (both.returncode, both.stdout) == (0, "Completed updating config for user alice.\n"), both.stderr
    assert registry.quota_config((("client-id", None), ("user", "alice"))) == {"consumer_byte_rate": "2048"}

    default = run("--alter", *bs, "--client-defaults", "--add-config", "producer_byte_rate=20000000")
    assert default.stdout == "Completed updating default config for clients in the cluster.\n", default.stderr
    run("--alter", *bs, "--client", "app", "--add-config", "controller_mutation_rate=2.5")

    users = run("--describe", *bs, "--entity-type", "users")
    assert (users.returncode, users.stdout) == (
        0,
        "Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0, request_percentage=50.0\n",
    ), users.stderr
    one = run("--describe", *bs, "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients")
    assert (
        one.stdout == "Quota configs for user-principal 'alice', the default client-id are consumer_byte_rate=2048.0\n"
    )
    clients = run("--describe", *bs, "--entity-type", "clients")
    assert clients.stdout == (
        "Quota configs for the default client-id are producer_byte_rate=2.0E7\n"
        "Quota configs for client-id 'app' are controller_mutation_rate=2.5\n"
    )

    deleted = run("--alter", *bs, "--user", "alice", "--delete-config", "request_percentage")
    assert deleted.returncode == 0, deleted.stderr
    assert registry.user_config("alice") == {"producer_byte_rate": "1048576"}
    missing = run("--alter", *bs, "--user", "alice", "--delete-config", "consumer_byte_rate")
    assert missing.returncode == 1 and "Invalid config(s): consumer_byte_rate" in missing.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--client", "c", "--add-config", "SCRAM-SHA-256=[password=x]"],
            "Only quota configs can be added for 'clients'",
        ),
        (["--user", "u", "--add-config", "retention.ms=5"], "Only quota and SCRAM credential configs can be added"),
        (["--user-defaults", "--add-config", "SCRAM-SHA-256=[password=x]"], "not allowed with User SCRAM"),
        (["--user", "u", "--add-config", "SCRAM-SHA-256=[password=x],producer_byte_rate=5"], "Cannot alter both"),
        (["--client", "c", "--add-config", "producer_byte_rate=lots"], "Cannot parse quota configuration value"),
        (["--client", "c", "--delete-config", "retention.ms"], "Only quota configs can be deleted"),
    ],
)
def test_kafka_configs_refusals_are_usage_errors(broker, argv, message):
    refused = run("--alter", "--bootstrap-server", broker.bootstrap_servers, *argv)
    assert refused.returncode == 2 and message in refused.stderr
    assert "password=x" not in refused.stderr
