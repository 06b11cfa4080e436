"""`kafkalog configs` for users (kafka-configs' spelling of SCRAM credentials): the --add-config parser and the
entity choice as tables, and one run of the tool as a process against an in-process broker: what it stores in
the user's entity config, what it prints, and that the password never shows."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from broker.cli.configs import Entity, UsageError, entity, java_double, parse_scram_credentials
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
        ("producer_byte_rate=1024", "SCRAM credentials are"),
        ("SCRAM-SHA-1=[password=hunter2]", "SCRAM credentials are"),
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
        action=action, entity_type=None, entity_names=None, topic=None, broker=None, broker_defaults=False,
        user=None, client=None, user_defaults=False, client_defaults=False,
    )  # fmt: skip
    fields.update(given)
    return argparse.Namespace(**fields)


def parsed(*argv: str) -> argparse.Namespace:
    """The configs arguments as the CLI parses them (the entity names keep their order)."""
    from broker.cli.app import build_parser

    ns = build_parser().parse_args(["configs", "--bootstrap-server", "b:9092", *argv])
    ns.action = (ns.action_flags or [ns.action])[0]
    return ns


@pytest.mark.parametrize(
    "given, expected",
    [
        (args(entity_type=["users"], entity_names=["alice"]), Entity("quotas", parts=(("users", "alice"),))),
        (args(user="a@b.c"), Entity("quotas", parts=(("users", "a@b.c"),))),
        (args("describe", entity_type=["users"]), Entity("quotas", parts=(("users", None),))),
        (args(user_defaults=True), Entity("quotas", parts=(("users", ""),))),
        (args(client="app", user="alice"), Entity("quotas", parts=(("clients", "app"), ("users", "alice")))),
        (args(topic="t"), Entity("topics", "t")),
        (args(broker_defaults=True), Entity("brokers", "")),
        (args(entity_type=["users"]), "needs --entity-name or --entity-default for each"),
        (args(entity_type=["users", "users"], entity_names=["a", "b"]), "given twice"),
        (args(entity_type=["users", "topics"], entity_names=["a", "b"]), "only users and clients combine"),
        (args(entity_type=["users"], entity_names=["a", "b"]), "more entity names than entity types"),
        (args(user="a", topic="t"), "only users and clients combine"),
        (args(user=""), "must not be empty"),
        (args(entity_type=["topics"], entity_names=[""]), "a topic needs a name"),
    ],
)
def test_entity_choice(given, expected):
    if isinstance(expected, Entity):
        assert entity(given) == expected
    else:
        with pytest.raises(UsageError, match=expected):
            entity(given)


@pytest.mark.parametrize(
    "argv, parts",
    [
        (["--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-default"],
         (("users", "alice"), ("clients", ""))),
        (["--entity-type", "clients", "--entity-default", "--entity-type", "users", "--entity-name", "u"],
         (("clients", ""), ("users", "u"))),
        (["--entity-type", "users", "--entity-type", "clients", "--entity-name", "a"],
         (("users", "a"), ("clients", None))),
    ],
)  # fmt: skip
def test_entity_names_pair_with_entity_types_in_command_line_order(argv, parts):
    assert entity(parsed("--describe", *argv)) == Entity("quotas", parts=parts)


def test_an_empty_entity_name_is_refused():
    with pytest.raises(UsageError, match="must not be empty"):
        entity(parsed("--describe", "--entity-type", "users", "--entity-name", ""))


@pytest.mark.parametrize(
    "value, text",
    [(1048576.0, "1048576.0"), (0.5, "0.5"), (50.0, "50.0"), (1e7, "1.0E7"), (12345678.0, "1.2345678E7"),
     (1e-4, "1.0E-4"), (0.001, "0.001"), (9999999.5, "9999999.5")],
)  # fmt: skip
def test_quota_values_print_as_java_prints_doubles(value, text):
    assert java_double(value) == text


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
            "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"
            "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, "
            "SCRAM-SHA-512=iterations=4096\n"
        )
        deleted = run("--alter", "--bootstrap-server", bootstrap, "--user", "alice", "--delete-config", "SCRAM-SHA-512")
        assert deleted.returncode == 0, deleted.stderr
        one = run("--describe", "--bootstrap-server", bootstrap, "--entity-type", "users", "--entity-name", "alice")
        assert one.stdout == (
            "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"
            "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"
        )
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
