"""`kafkalog configs --entity-type client-metrics` (KIP-714 subscriptions), spelled as kafka-configs spells it:
the tool run as a process against an in-process broker: what it stores (``/config/client-metrics/<name>``), what it
prints (Kafka's lines), the broker's refusals, and the entity checks made before anything is sent."""

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


def test_subscriptions_are_altered_described_and_removed_as_kafka_configs_does(broker):
    bs = ["--bootstrap-server", broker.bootstrap_servers]
    cm = ["--entity-type", "client-metrics"]
    registry = broker.broker.registry
    added = run("--alter", *bs, *cm, "--entity-name", "producers",
                "--add-config", "metrics=[org.apache.kafka.producer.,org.apache.kafka.client.],interval.ms=60000")  # fmt: skip
    assert (added.returncode, added.stdout) == (0, "Completed updating config for client-metric producers.\n")
    assert registry.client_metrics_config("producers") == {
        "metrics": "org.apache.kafka.producer.,org.apache.kafka.client.",
        "interval.ms": "60000",
    }
    run("--alter", *bs, *cm, "--entity-name", "java", "--add-config", "metrics=*,match=[client_software_name=apache.*]")

    described = run("--describe", *bs, *cm, "--entity-name", "producers")
    assert described.returncode == 0, described.stderr
    assert described.stdout == (
        "Dynamic configs for client-metric producers are:\n"
        "  interval.ms=60000 sensitive=false synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:interval.ms=60000}\n"
        "  metrics=org.apache.kafka.producer.,org.apache.kafka.client. sensitive=false "
        "synonyms={DYNAMIC_CLIENT_METRICS_CONFIG:metrics=org.apache.kafka.producer.,org.apache.kafka.client.}\n"
    )
    every = run("--describe", *bs, *cm).stdout
    assert every.index("client-metric java are:") < every.index("client-metric producers are:")
    assert "  match=client_software_name=apache.* sensitive=false" in every
    missing = run("--describe", *bs, *cm, "--entity-name", "nope")
    assert missing.stdout == "The client-metric 'nope' doesn't exist and doesn't have dynamic config.\n"

    refused = run("--alter", *bs, *cm, "--entity-name", "bad", "--add-config", "interval.ms=10")
    assert refused.returncode == 1 and "interval must be between 100 and 3600000" in refused.stderr
    refused = run("--alter", *bs, *cm, "--entity-name", "bad", "--add-config", "match=[rack=a]")
    assert refused.returncode == 1 and "Illegal client matching pattern: rack=a" in refused.stderr

    removed = run("--alter", *bs, *cm, "--entity-name", "producers", "--delete-config", "metrics,interval.ms")
    assert removed.returncode == 0
    assert registry.client_metrics_configs() == {"java": {"metrics": "*", "match": "client_software_name=apache.*"}}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--alter", "--entity-type", "client-metrics", "--add-config", "metrics=*"], "needs --entity-name"),
        (
            ["--alter", "--entity-type", "client-metrics", "--entity-default", "--add-config", "metrics=*"],
            "has no default",
        ),
    ],
)
def test_a_subscription_needs_a_name(argv, message):
    out = run(*argv[:1], "--bootstrap-server", "127.0.0.1:1", *argv[1:])
    assert out.returncode == 2 and message in out.stderr
