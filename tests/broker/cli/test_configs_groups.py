"""`kafkalog configs --entity-type groups` (GROUP config resources), spelled as kafka-configs spells it: the tool
run as a process against an in-process broker: what it stores (``/config/groups/<group>``), what it prints, the
broker's refusals with Kafka's messages, and the entity checks made before anything is sent."""

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


def test_group_configs_are_altered_described_and_removed_as_kafka_configs_does(broker):
    bs = ["--bootstrap-server", broker.bootstrap_servers]
    g = ["--entity-type", "groups", "--entity-name", "orders"]
    registry = broker.broker.registry
    added = run("--alter", *bs, *g, "--add-config", "share.auto.offset.reset=earliest,share.delivery.count.limit=3")
    assert (added.returncode, added.stdout) == (0, "Completed updating config for group orders.\n"), added.stderr
    assert registry.group_config("orders") == {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"}

    described = run("--describe", *bs, *g)
    assert described.returncode == 0, described.stderr
    assert described.stdout == (
        "Dynamic configs for group orders are:\n"
        "  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset="
        "earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}\n"
        "  share.delivery.count.limit=3 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.delivery.count.limit=3, "
        "DEFAULT_CONFIG:group.share.delivery.count.limit=5}\n"
    )
    every = run("--describe", *bs, *g, "--all").stdout
    assert every.startswith("All configs for group orders are:\n")
    assert "  share.record.lock.duration.ms=30000 sensitive=false" in every

    refused = run("--alter", *bs, *g, "--add-config", "share.auto.offset.reset=by_duration:-PT1H")
    assert refused.returncode == 1
    assert (
        "The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'." in refused.stderr
    )
    refused = run("--alter", *bs, *g, "--add-config", "share.record.lock.duration.ms=5000")
    assert refused.returncode == 1
    assert "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive." in refused.stderr

    removed = run("--alter", *bs, *g, "--delete-config", "share.auto.offset.reset,share.delivery.count.limit")
    assert removed.returncode == 0, removed.stderr
    assert registry.group_config("orders") == {}
    assert run("--describe", *bs, *g).stdout == "Dynamic configs for group orders are:\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--alter", "--entity-type", "groups", "--add-config", "a=1"], "configs alter of groups needs --entity-name"),
        (["--describe", "--entity-type", "groups", "--entity-default"], "--entity-type groups needs --entity-name"),
    ],
)
def test_entity_checks_come_before_anything_is_sent(argv, message):
    done = run(*argv, "--bootstrap-server", "127.0.0.1:1")
    assert done.returncode == 2 and message in done.stderr
