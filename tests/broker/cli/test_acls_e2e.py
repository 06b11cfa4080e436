"""`kafkalog acls` as a process against an in-process broker with Kafka's AclAuthorizer (``User:ANONYMOUS``, the
PLAINTEXT principal, is a super user so the CLI may administer): --add with kafka-acls' expansions, --list (all,
per resource, --principal, --resource-pattern-type match), --remove --force (and its refusal without a terminal),
kafka-acls' exact output; and the admin client's typed errors from brokers without an authorizer or without the
ACL (SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED) and for a binding the broker refuses (INVALID_REQUEST)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from spark_kafkalog.client.admin import AdminClient, AdminOperationError
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from tests.broker.conftest import start_brokers

CLI = [sys.executable, "-m", "broker.cli", "acls"]
AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}
Op, ALLOW, DENY = AclOperation, AclPermissionType.ALLOW, AclPermissionType.DENY


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, **AUTHORIZER, **{"super.users": "User:ANONYMOUS"})
    yield b
    b.stop()


def run(bootstrap: str, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, "--bootstrap-server", bootstrap, *argv], input=stdin, capture_output=True, text=True, timeout=120
    )


def ok(bootstrap: str, *argv: str) -> str:
    proc = run(bootstrap, *argv)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def block(title: str, *entries: str) -> str:
    body = "\n".join(f"\t({e})" for e in entries)
    return f"{title}: \n {body} \n\n"


def current(resource: str, *entries: str) -> str:
    return block(f"Current ACLs for resource `ResourcePattern({resource})`", *entries)


def acl(principal: str, operation: str, permission: str = "ALLOW", host: str = "*") -> str:
    return f"principal={principal}, host={host}, operation={operation}, permissionType={permission}"


def remove_all(bootstrap: str) -> None:
    with AdminClient(bootstrap) as admin:
        admin.delete_acls([AclBindingFilter()])


def test_add_prints_what_it_adds_then_the_resources_acls(secured):
    bootstrap = secured.bootstrap_servers
    remove_all(bootstrap)
    out = ok(
        bootstrap,
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Read",
        "--operation",
        "Write",
        "--topic",
        "orders",
    )
    orders = "resourceType=TOPIC, name=orders, patternType=LITERAL"
    entries = (acl("User:alice", "READ"), acl("User:alice", "WRITE"))  # sorted by operation code
    assert out == block(f"Adding ACLs for resource `ResourcePattern({orders})`", *entries) + current(orders, *entries)
    with AdminClient(bootstrap) as admin:
        assert sorted(admin.describe_acls()) == sorted(
            AclBinding(ResourcePattern(ResourceType.TOPIC, "orders"), AccessControlEntry("User:alice", "*", op, ALLOW))
            for op in (Op.READ, Op.WRITE)
        )
    assert secured.broker.services.authorizer.authorize(
        "User:alice", "127.0.0.1", Op.READ, ResourceType.TOPIC, "orders"
    )


def test_producer_consumer_list_filters_and_remove(secured):
    bootstrap = secured.bootstrap_servers
    remove_all(bootstrap)
    ok(
        bootstrap,
        "--add",
        "--allow-principal",
        "User:alice",
        "--producer",
        "--topic",
        "orders",
        "--idempotent",
        "--transactional-id",
        "tx-1",
    )
    ok(
        bootstrap, "--add", "--allow-principal", "User:bob", "--consumer", "--topic", "ord",
        "--resource-pattern-type", "prefixed", "--group", "billing",
    )  # fmt: skip
    ok(
        bootstrap,
        "--add",
        "--deny-principal",
        "User:mallory",
        "--deny-host",
        "10.0.0.9",
        "--operation",
        "Describe",
        "--topic",
        "*",
    )
    orders = "resourceType=TOPIC, name=orders, patternType=LITERAL"
    star = "resourceType=TOPIC, name=*, patternType=LITERAL"
    ord_prefixed = "resourceType=TOPIC, name=ord, patternType=PREFIXED"
    billing = "resourceType=GROUP, name=billing, patternType=PREFIXED"
    cluster = "resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL"
    tx = "resourceType=TRANSACTIONAL_ID, name=tx-1, patternType=LITERAL"
    alice_topic = (acl("User:alice", "WRITE"), acl("User:alice", "CREATE"), acl("User:alice", "DESCRIBE"))
    bob_topic = (acl("User:bob", "READ"), acl("User:bob", "DESCRIBE"))
    mallory = (acl("User:mallory", "DESCRIBE", "DENY", "10.0.0.9"),)

    everything = ok(bootstrap, "--list")
    assert everything == (
        current(star, *mallory) + current(ord_prefixed, *bob_topic) + current(orders, *alice_topic)
        + current(billing, acl("User:bob", "READ")) + current(cluster, acl("User:alice", "IDEMPOTENT_WRITE"))
        + current(tx, acl("User:alice", "WRITE"), acl("User:alice", "DESCRIBE"))
    )  # fmt: skip
    assert ok(bootstrap, "--list", "--topic", "orders") == current(orders, *alice_topic)
    matching = ok(bootstrap, "--list", "--topic", "orders", "--resource-pattern-type", "match")
    assert matching == current(star, *mallory) + current(ord_prefixed, *bob_topic) + current(orders, *alice_topic)
    assert ok(bootstrap, "--list", "--principal", "User:bob") == (
        "ACLs for principal `User:bob`\n"
        + current(ord_prefixed, *bob_topic)
        + current(billing, acl("User:bob", "READ"))
    )
    assert ok(
        bootstrap, "--list", "--topic", "orders", "--resource-pattern-type", "any", "--principal", "User:bob"
    ) == ("ACLs for principal `User:bob`\n")

    refused = run(bootstrap, "--remove", "--topic", "orders", stdin="y\n")
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert ok(bootstrap, "--list", "--topic", "orders") == current(orders, *alice_topic)

    one = ok(
        bootstrap,
        "--remove",
        "--force",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Create",
        "--topic",
        "orders",
    )
    assert one == current(orders, acl("User:alice", "WRITE"), acl("User:alice", "DESCRIBE"))
    assert ok(bootstrap, "--remove", "--force", "--topic", "orders") == ""
    gone = ok(
        bootstrap,
        "--remove",
        "--force",
        "--consumer",
        "--allow-principal",
        "User:bob",
        "--topic",
        "ord",
        "--group",
        "billing",
        "--resource-pattern-type",
        "prefixed",
    )
    assert gone == ""
    assert ok(bootstrap, "--list") == (
        current(star, *mallory) + current(cluster, acl("User:alice", "IDEMPOTENT_WRITE"))
        + current(tx, acl("User:alice", "WRITE"), acl("User:alice", "DESCRIBE"))
    )  # fmt: skip


def test_an_invalid_binding_is_refused_by_the_broker_in_one_line(secured):
    bootstrap = secured.bootstrap_servers
    proc = run(bootstrap, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "")
    assert proc.returncode == 1
    assert proc.stderr.startswith("kafkalog: CreateAcls failed") and "INVALID_REQUEST" in proc.stderr
    assert proc.stderr.count("\n") == 1
    with AdminClient(bootstrap) as admin:
        bad = AclBinding(
            ResourcePattern(ResourceType.CLUSTER, "other"), AccessControlEntry("User:a", "*", Op.ALTER, ALLOW)
        )
        good = AclBinding(ResourcePattern(ResourceType.GROUP, "g"), AccessControlEntry("User:a", "*", Op.READ, ALLOW))
        with pytest.raises(AdminOperationError) as e:
            admin.create_acls([bad, good])
        assert list(e.value.errors) == [bad] and e.value.errors[bad].error_code is ErrorCode.INVALID_REQUEST
        assert good in admin.describe_acls(
            AclBindingFilter(ResourcePatternFilter(ResourceType.GROUP, "g", PatternType.LITERAL))
        )
        assert admin.delete_acls([AclBindingFilter(ResourcePatternFilter(ResourceType.GROUP, "g"))]) == [good]


@pytest.mark.parametrize(
    "config, code",
    [
        ({}, ErrorCode.SECURITY_DISABLED),
        (AUTHORIZER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),  # User:ANONYMOUS without Describe/Alter on the cluster
    ],
)
def test_typed_errors_of_brokers_that_refuse(tmp_path_factory, config, code):
    (b,) = start_brokers(1, tmp_path_factory, **config)
    try:
        binding = AclBinding(
            ResourcePattern(ResourceType.TOPIC, "t"), AccessControlEntry("User:a", "*", Op.READ, ALLOW)
        )
        with AdminClient(b.bootstrap_servers) as admin:
            with pytest.raises(KafkaClientError) as described:
                admin.describe_acls()
            with pytest.raises(AdminOperationError) as created:
                admin.create_acls([binding])
            with pytest.raises(AdminOperationError) as deleted:
                admin.delete_acls([AclBindingFilter()])
        for e in (described.value, created.value, deleted.value):
            assert e.error_code is code and not e.retriable
        listed = run(b.bootstrap_servers, "--list")
        added = run(b.bootstrap_servers, "--add", "--allow-principal", "User:a", "--producer", "--topic", "t")
        for proc in (listed, added):
            assert proc.returncode == 1 and code.name in proc.stderr and proc.stderr.count("\n") == 1
    finally:
        b.stop()


def test_remove_asks_on_a_terminal_per_resource_filter(secured):
    """stdin a pseudo-terminal: the first question answered y removes topic a's ACLs, the second n keeps b's."""
    bootstrap = secured.bootstrap_servers
    remove_all(bootstrap)
    ok(bootstrap, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "a", "--topic", "b")
    controller, terminal = pty.openpty()
    try:
        os.write(controller, b"y\nn\n")
        proc = subprocess.run(
            [*CLI, "--bootstrap-server", bootstrap, "--remove", "--topic", "a", "--topic", "b"],
            stdin=terminal, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(terminal)
        os.close(controller)
    assert proc.returncode == 0, proc.stderr
    b = "resourceType=TOPIC, name=b, patternType=LITERAL"
    assert proc.stdout == (
        "Are you sure you want to delete all ACLs for resource filter "
        "`ResourcePattern(resourceType=TOPIC, name=a, patternType=LITERAL)`? (y/n)\n"
        f"Are you sure you want to delete all ACLs for resource filter `ResourcePattern({b})`? (y/n)\n"
        + current(b, acl("User:alice", "READ"))
    )
    assert ok(bootstrap, "--list") == current(b, acl("User:alice", "READ"))
