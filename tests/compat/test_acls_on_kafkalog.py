"""ACLs shared with Apache Kafka's own kafka-acls: Kafka 4.4's and 3.9's AclCommand (``--bootstrap-server``) add,
list and remove ACLs on a kafkalog broker with an authorizer, and ``kafkalog acls`` lists and removes what they
added, and the other way round; both print the same blocks (kafka-acls prints its entries in hash order, so blocks
compare as sets of lines, the header lines exactly). Kafka 3.9's AclCommand with ``--authorizer-properties
zookeeper.connect=...`` reads the ACLs ``kafkalog acls`` wrote straight from kafkalog's ZooKeeper."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid

import pytest

from tests.waiting import wait_until

from .peers import KAFKA_39, TOOLS_44, Peer
from .tools import run_tool

pytestmark = pytest.mark.compat

ACL_COMMAND = {TOOLS_44: "org.apache.kafka.tools.AclCommand", KAFKA_39: "kafka.admin.AclCommand"}


@pytest.fixture(scope="module")
def secured(zookeeper, tmp_path_factory):
    """A kafkalog broker with Kafka's AclAuthorizer on the session's ZooKeeper; PLAINTEXT's User:ANONYMOUS is a
    super user so the tools may administer."""
    from broker.server import EmbeddedBroker

    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"{zookeeper.connect_string}/kafkalog-acls-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("kafkalog-acls"),
        offsets_topic_num_partitions=1,
        offsets_topic_replication_factor=1,
        authorizer_class_name="kafka.security.authorizer.AclAuthorizer",
        super_users="User:ANONYMOUS",
    )
    broker.start()
    yield broker
    broker.stop()


def kafka_acls(peer: Peer, bootstrap: str, *args: str) -> str:
    return run_tool(ACL_COMMAND[peer], "--bootstrap-server", bootstrap, *args, peer=peer).stdout


def kafkalog_acls(bootstrap: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "broker.cli", "acls", "--bootstrap-server", bootstrap, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _chunks(output: str) -> list[str]:
    return [chunk for chunk in output.split("\n\n") if chunk.strip()]


def blocks(output: str) -> dict[str, set[str]]:
    """``{header line: {entry lines}}`` of kafka-acls' output, blocks ending with a blank line. Kafka 3.9 (and
    kafkalog) end the header and the last entry with a space and start the first entry with one; Kafka 4.4 does
    not: spaces at the ends are stripped here."""
    out: dict[str, set[str]] = {}
    for chunk in _chunks(output):
        header, *entries = chunk.split("\n")
        out[header.rstrip(" ")] = {e.strip(" ") for e in entries}
    return out


def layouts(output: str) -> dict[str, str]:
    """``{header line: the block with each entry replaced by (ACL)}``: the spacing, which Kafka 3.9 and kafkalog
    share, without the entries' order (kafka-acls prints a hash order)."""
    return {chunk.split("\n")[0]: re.sub(r"\(principal=[^)]*\)", "(ACL)", chunk) for chunk in _chunks(output)}


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("peer", [TOOLS_44, KAFKA_39], ids=["kafka-4.4", "kafka-3.9"])
def test_kafka_acls_adds_and_kafkalog_lists_and_removes(secured, peer):
    bootstrap = secured.bootstrap_servers
    topic, group = name("orders"), name("billing")
    kafka_acls(
        peer, bootstrap, "--add", "--allow-principal", "User:alice", "--consumer", "--topic", topic, "--group", group
    )
    kafka_acls(
        peer, bootstrap, "--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9", "--operation", "Write",
        "--topic", topic[:8], "--resource-pattern-type", "prefixed",
    )  # fmt: skip
    ours = kafkalog_acls(bootstrap, "--list", "--topic", topic, "--resource-pattern-type", "match")
    assert ours == (
        f"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name={topic[:8]}, patternType=PREFIXED)`: \n"
        " \t(principal=User:mallory, host=10.0.0.9, operation=WRITE, permissionType=DENY) \n\n"
        f"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name={topic}, patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n"
    )
    theirs = kafka_acls(peer, bootstrap, "--list", "--topic", topic, "--resource-pattern-type", "match")
    assert blocks(theirs) == blocks(ours)
    if peer is KAFKA_39:
        assert layouts(theirs) == layouts(ours)
    both = ("--topic", topic, "--group", group)
    assert blocks(kafka_acls(peer, bootstrap, "--list", *both)) == blocks(kafkalog_acls(bootstrap, "--list", *both))
    assert kafkalog_acls(bootstrap, "--remove", "--force", "--topic", topic, "--group", group) == ""
    assert kafka_acls(peer, bootstrap, "--list", *both) == ""


@pytest.mark.parametrize("peer", [TOOLS_44, KAFKA_39], ids=["kafka-4.4", "kafka-3.9"])
def test_kafkalog_acls_adds_and_kafka_acls_lists_and_removes(secured, peer):
    bootstrap = secured.bootstrap_servers
    topic, tx = name("payments"), name("tx")
    added = kafkalog_acls(
        bootstrap, "--add", "--allow-principal", "User:bob", "--allow-principal", "User:carol", "--allow-host", "127.0.0.1",
        "--producer", "--topic", topic, "--transactional-id", tx, "--idempotent",
    )  # fmt: skip
    resources = ("--topic", topic, "--transactional-id", tx)
    theirs = kafka_acls(peer, bootstrap, "--list", *resources)
    assert blocks(theirs) == blocks(kafkalog_acls(bootstrap, "--list", *resources))
    topic_header = (
        f"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name={topic}, patternType=LITERAL)`:"
    )
    assert blocks(theirs)[topic_header] == {
        f"\t(principal={p}, host=127.0.0.1, operation={op}, permissionType=ALLOW)"
        for p in ("User:bob", "User:carol")
        for op in ("WRITE", "DESCRIBE", "CREATE")
    }
    assert (
        f"Adding ACLs for resource `ResourcePattern(resourceType=TRANSACTIONAL_ID, name={tx}, patternType=LITERAL)`"
        in added
    )
    kafka_acls(
        peer,
        bootstrap,
        "--remove",
        "--force",
        "--allow-principal",
        "User:bob",
        "--allow-host",
        "127.0.0.1",
        "--producer",
        *resources,
    )
    left = blocks(kafkalog_acls(bootstrap, "--list", *resources))
    assert left and all("User:bob" not in e for entries in left.values() for e in entries)
    kafkalog_acls(bootstrap, "--remove", "--force", *resources, "--cluster")


def test_kafka_39_reads_the_acls_kafkalog_wrote_from_zookeeper(secured):
    """Kafka 3.9's AclCommand without a broker: its own AclAuthorizer on kafkalog's ZooKeeper chroot."""
    bootstrap = secured.bootstrap_servers
    topic = name("audit")
    kafkalog_acls(
        bootstrap,
        "--add",
        "--allow-principal",
        "User:dave",
        "--operation",
        "Read",
        "--topic",
        topic,
        "--resource-pattern-type",
        "prefixed",
    )
    connect = secured.broker.config["zookeeper.connect"]

    def listed() -> str:
        return run_tool(
            ACL_COMMAND[KAFKA_39], "--authorizer-properties", f"zookeeper.connect={connect}", "--list", "--topic", topic,
            "--resource-pattern-type", "prefixed", peer=KAFKA_39,
        ).stdout  # fmt: skip

    out = wait_until(lambda: listed() or None, 30, "Kafka 3.9's AclCommand lists the ACL from ZooKeeper")
    assert blocks(out) == blocks(
        kafkalog_acls(bootstrap, "--list", "--topic", topic, "--resource-pattern-type", "prefixed")
    )
    kafkalog_acls(bootstrap, "--remove", "--force", "--topic", topic, "--resource-pattern-type", "prefixed")
