"""`kafkalog configs` for users (kafka-configs' spelling of SCRAM credentials): the --add-config parser and the
entity choice as tables, and one run of the tool as a process against an in-process broker: what it stores in
the user's entity config, what it prints, and that the password never shows."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from broker.cli.configs import UsageError, entity, parse_scram_credentials
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism
from tests.broker.conftest import start_brokers
from tests.waiting import wait_until

CLI = [sys.executable, "-m", "broker.cli", "configs"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("SCRAM-SHA-256=[iterations=8192,password=alice-secret]", {"SCRAM-SHA-256": (8192, "alice-secret")}),
        ("SCRAM-SHA-512=[password=alice-secret]", {"SCRAM-SHA-512": (4096, "alice-secret")}),
        (
            "SCRAM-SHA-256=[iterations=8192,password=a],SCRAM-SHA-512=[password=b]",
            {"SCRAM-SHA-256": (8192, "a"), "SCRAM-SHA-512": (4096, "b")},
        ),
        ("SCRAM-SHA-256=[password=p,w=x, y]", {"SCRAM-SHA-256": (4096, "p,w=x, y")}),
        ("SCRAM-SHA-256=password=plain", {"SCRAM-SHA-256": (4096, "plain")}),
        ("SCRAM-SHA-256=[iterations=,password=p]", {"SCRAM-SHA-256": (4096, "p")}),
        ("SCRAM-SHA-512=[iterations=16384,password=p]", {"SCRAM-SHA-512": (16384, "p")}),
    ],
)
def test_scram_add_config_parses_as_kafka_configs_does(text, expected):
    assert parse_scram_credentials(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("producer_byte_rate=1024", "credentials only"),
        ("SCRAM-SHA-1=[password=hunter2]", "credentials only"),
        ("SCRAM-SHA-256=[iterations=4095,password=hunter2]", "outside 4096..16384"),
        ("SCRAM-SHA-256=[iterations=16385,password=hunter2]", "outside 4096..16384"),
        ("SCRAM-SHA-256=[iterations=8192]", "needs [iterations=N,]password=P"),
        ("SCRAM-SHA-256=[password=]", "non-empty password"),
        ("SCRAM-SHA-256=[password=hunter2],SCRAM-SHA-256=[password=hunter2]", "given twice"),
        ("SCRAM-SHA-256=[password=hunter2", "unbalanced"),
        ("SCRAM-SHA-256", "not key=value"),
    ],
)
def test_scram_add_config_mistakes_are_named_without_the_password(text, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")) as e:
        parse_scram_credentials(text)
    assert "hunter2" not in str(e.value)


def args(action="alter", **given) -> argparse.Namespace:
    fields = dict(
        action=action, entity_type=None, entity_name=None, entity_default=False, topic=None, broker=None,
        broker_defaults=False, user=None,
    )  # fmt: skip
    fields.update(given)
    return argparse.Namespace(**fields)


@pytest.mark.parametrize(
    "given, expected",
    [
        (args(entity_type="users", entity_name="alice"), ("users", "alice")),
        (args(user="a@b.c"), ("users", "a@b.c")),
        (args("describe", entity_type="users"), ("users", "")),
        (args("describe", entity_type="users", entity_name="bob"), ("users", "bob")),
        (args(entity_type="users"), "needs --entity-name"),
        (args(entity_type="users", entity_default=True), "quotas only"),
        (args(entity_type="users", entity_name=""), "must not be empty"),
        (args(user="a", topic="t"), "one entity"),
    ],
)
def test_user_entity_choice(given, expected):
    if isinstance(expected, tuple):
        assert entity(given) == expected
    else:
        with pytest.raises(UsageError, match=expected):
            entity(given)


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=120)


def test_configs_alters_and_describes_scram_credentials_of_a_user_end_to_end(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    try:
        bootstrap = b.bootstrap_servers
        registry = b.broker.registry
        registry.alter_user_config("alice", {"producer_byte_rate": "1024"})
        added = run(
            "--alter", "--bootstrap-server", bootstrap, "--entity-type", "users", "--entity-name", "alice",
            "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]",
        )  # fmt: skip
        assert added.returncode == 0, added.stderr
        assert added.stdout == "Completed updating config for user alice.\n"
        config = registry.user_config("alice")
        assert config["producer_byte_rate"] == "1024"
        for mechanism, iterations in ((ScramMechanism.SCRAM_SHA_256, 8192), (ScramMechanism.SCRAM_SHA_512, 4096)):
            stored = ScramCredential.from_kafka_string(config[mechanism.mechanism_name])
            assert stored.iterations == iterations and len(stored.salt) > 0
            assert stored == ScramCredential.from_password(mechanism, "alice-secret", iterations, stored.salt)
        cache = b.broker.metadata_sync.scram_credentials
        wait_until(lambda: cache.lookup("SCRAM-SHA-512", "alice"), 10, "alice in the credential cache")

        described = run("--describe", "--bootstrap-server", bootstrap, "--entity-type", "users")
        assert described.returncode == 0, described.stderr
        assert described.stdout == (
            "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, "
            "SCRAM-SHA-512=iterations=4096\n"
        )
        deleted = run("--alter", "--bootstrap-server", bootstrap, "--user", "alice", "--delete-config", "SCRAM-SHA-512")
        assert deleted.returncode == 0, deleted.stderr
        one = run("--describe", "--bootstrap-server", bootstrap, "--entity-type", "users", "--entity-name", "alice")
        assert one.stdout == "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"
        nobody = run("--describe", "--bootstrap-server", bootstrap, "--user", "nobody")
        assert (nobody.returncode, nobody.stdout) == (0, "")
        missing = run(
            "--alter", "--bootstrap-server", bootstrap, "--user", "nobody", "--delete-config", "SCRAM-SHA-256"
        )
        assert missing.returncode == 1 and "RESOURCE_NOT_FOUND" in missing.stderr
        for r in (added, described, deleted, one):
            assert "alice-secret" not in r.stdout + r.stderr
    finally:
        b.stop()
