"""`kafkalog acls`: kafka-acls' flags to bindings and filters as tables (the --producer/--consumer expansions,
the operations each resource type takes, the flag combinations kafka-acls refuses), its output format, and the
confirmation of --remove. The end-to-end runs against a broker with an authorizer are in test_acls_e2e.py."""

from __future__ import annotations

import io

import pytest

from broker.cli import actions
from broker.cli.acls import (
    AclsUsageError,
    check_args,
    confirm,
    format_resource_acls,
    parse_operation,
    resource_filter_entries,
    resource_filters,
    resources_to_add,
)
from broker.cli.app import build_parser, main
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

T, G, C, X = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation


def parse(*argv: str):
    args, unknown = build_parser().parse_known_args(["acls", "--bootstrap-server", "h:1", *argv])
    assert not unknown and actions.resolve(args) is None
    return args


def allow(principal: str, *ops: AclOperation, host: str = "*") -> set[AccessControlEntry]:
    return {AccessControlEntry(principal, host, op, ALLOW) for op in ops}


def expanded(*argv: str) -> dict[tuple[ResourceType, str, PatternType], set[AccessControlEntry]]:
    args = parse(*argv)
    check_args(args)
    return {(p.resource_type, p.name, p.pattern_type): set(e) for p, e in resources_to_add(args).items()}


@pytest.mark.parametrize(
    "argv, expected",
    [
        (
            ["--producer", "--topic", "t"],
            {(T, "t", LIT): allow("User:a", Op.WRITE, Op.DESCRIBE, Op.CREATE)},
        ),
        (
            ["--producer", "--topic", "t", "--idempotent"],
            {
                (T, "t", LIT): allow("User:a", Op.WRITE, Op.DESCRIBE, Op.CREATE),
                (C, "kafka-cluster", LIT): allow("User:a", Op.IDEMPOTENT_WRITE),
            },
        ),
        (
            ["--producer", "--topic", "t", "--transactional-id", "tx"],
            {
                (T, "t", LIT): allow("User:a", Op.WRITE, Op.DESCRIBE, Op.CREATE),
                (X, "tx", LIT): allow("User:a", Op.WRITE, Op.DESCRIBE),
            },
        ),
        (
            ["--producer", "--topic", "p-", "--resource-pattern-type", "prefixed", "--idempotent"],
            {
                (T, "p-", PRE): allow("User:a", Op.WRITE, Op.DESCRIBE, Op.CREATE),
                (C, "kafka-cluster", LIT): allow("User:a", Op.IDEMPOTENT_WRITE),
            },
        ),
        (
            ["--consumer", "--topic", "t", "--group", "g"],
            {(T, "t", LIT): allow("User:a", Op.READ, Op.DESCRIBE), (G, "g", LIT): allow("User:a", Op.READ)},
        ),
        (
            ["--consumer", "--producer", "--topic", "t", "--group", "g"],
            {
                (T, "t", LIT): allow("User:a", Op.READ, Op.DESCRIBE, Op.WRITE, Op.CREATE),
                (G, "g", LIT): allow("User:a", Op.READ),
            },
        ),
        (
            ["--consumer", "--topic", "*", "--group", "*"],
            {(T, "*", LIT): allow("User:a", Op.READ, Op.DESCRIBE), (G, "*", LIT): allow("User:a", Op.READ)},
        ),
        (["--topic", "t"], {(T, "t", LIT): allow("User:a", Op.ALL)}),
        (
            ["--topic", "t", "--group", "g", "--operation", "Read", "--operation", "describe"],
            {
                (T, "t", LIT): allow("User:a", Op.READ, Op.DESCRIBE),
                (G, "g", LIT): allow("User:a", Op.READ, Op.DESCRIBE),
            },
        ),
        (
            ["--cluster", "--operation", "IdempotentWrite"],
            {(C, "kafka-cluster", LIT): allow("User:a", Op.IDEMPOTENT_WRITE)},
        ),
        (
            ["--cluster", "--operation", "cluster_action"],
            {(C, "kafka-cluster", LIT): allow("User:a", Op.CLUSTER_ACTION)},
        ),
        (["--transactional-id", "tx", "--operation", "Write"], {(X, "tx", LIT): allow("User:a", Op.WRITE)}),
    ],
)
def test_producer_consumer_and_operation_expansions(argv, expected):
    assert expanded("--add", "--allow-principal", "User:a", *argv) == expected


def test_principals_hosts_and_deny_multiply_out():
    got = expanded(
        "--add", "--topic", "t", "--operation", "Read",
        "--allow-principal", "User:a", "--allow-principal", "User:b", "--allow-host", "10.0.0.1", "--allow-host", "10.0.0.2",
        "--deny-principal", "User:c",
    )  # fmt: skip
    assert got == {
        (T, "t", LIT): {
            AccessControlEntry(p, h, Op.READ, ALLOW) for p in ("User:a", "User:b") for h in ("10.0.0.1", "10.0.0.2")
        }
        | {AccessControlEntry("User:c", "*", Op.READ, DENY)}
    }


@pytest.mark.parametrize(
    "resource_flags, resource_type",
    [(["--topic", "t"], T), (["--group", "g"], G), (["--cluster"], C), (["--transactional-id", "x"], X)],
)
@pytest.mark.parametrize("operation", [o for o in AclOperation if o not in (Op.UNKNOWN, Op.ANY)])
def test_operation_validity_per_resource_type(resource_flags, resource_type, operation):
    from spark_kafkalog.security.acl import supported_operations

    args = parse("--add", "--allow-principal", "User:a", "--operation", operation.kafka_name, *resource_flags)
    valid = operation is Op.ALL or operation in supported_operations(resource_type)
    if valid:
        (entries,) = resource_filter_entries(args).values()
        assert {e.operation for e in entries} == {operation}
    else:
        with pytest.raises(AclsUsageError, match=f"ResourceType {resource_type.name} only supports operations All, "):
            resource_filter_entries(args)


def test_the_refusal_names_the_operations_a_type_supports_in_kafka_names():
    with pytest.raises(AclsUsageError) as e:
        resource_filter_entries(parse("--add", "--allow-principal", "User:a", "--group", "g", "--operation", "Write"))
    assert str(e.value) == (
        "ResourceType GROUP only supports operations All, Read, Delete, Describe, DescribeConfigs, AlterConfigs"
    )  # Kafka 4.x: group configs are authorized on the group


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Read", Op.READ), ("READ", Op.READ), ("read", Op.READ), ("IdempotentWrite", Op.IDEMPOTENT_WRITE),
        ("idempotent_write", Op.IDEMPOTENT_WRITE), ("DescribeConfigs", Op.DESCRIBE_CONFIGS), ("All", Op.ALL),
        ("ClusterAction", Op.CLUSTER_ACTION), (" Alter ", Op.ALTER),
    ],
)  # fmt: skip
def test_operation_names_as_kafka_acls_takes_them(text, expected):
    assert parse_operation(text) is expected


@pytest.mark.parametrize("text", ["Unknown", "Reed", ""])
def test_unknown_operations_are_refused(text):
    with pytest.raises(AclsUsageError, match="unknown --operation"):
        parse_operation(text)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--add", "--topic", "t"], "You must specify one of: --allow-principal, --deny-principal"),
        (["--add", "--allow-principal", "User:a"], "You must provide at least one resource"),
        (["--add", "--allow-principal", "alice", "--topic", "t"], "format principalType:principalName but got 'alice'"),
        (["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"],
         "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls."),
        (["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "any"],
         "value of 'ANY' is not valid"),
        (["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "glob"],
         "unknown --resource-pattern-type 'glob'"),
        (["--list", "--producer", "--topic", "t"], 'Option "--list" can\'t be used with option "--producer"'),
        (["--list", "--allow-principal", "User:a"], 'Option "--list" can\'t be used with option "--allow-principal"'),
        (["--add", "--producer", "--topic", "t", "--allow-principal", "User:a", "--operation", "Read"],
         'Option "--producer" can\'t be used with option "--operation"'),
        (["--add", "--consumer", "--topic", "t", "--group", "g", "--deny-principal", "User:a"],
         'Option "--consumer" can\'t be used with option "--deny-principal"'),
        (["--add", "--producer", "--group", "g", "--allow-principal", "User:a"], "With --producer you must specify a --topic"),
        (["--add", "--idempotent", "--topic", "t", "--allow-principal", "User:a"],
         "The --idempotent option is only available if --producer is set"),
        (["--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"],
         "With --consumer you must specify a --topic and a --group"),
        (["--add", "--consumer", "--topic", "t", "--group", "g", "--cluster", "--allow-principal", "User:a"],
         "no --cluster or --transactional-id"),
        (["--add", "--topic", "t", "--principal", "User:a"], "The --principal option is only available if --list is set"),
        (["--list", "--cluster", "--resource-pattern-type", "prefixed"], "--cluster takes --resource-pattern-type literal"),
    ],
)  # fmt: skip
def test_combinations_kafka_acls_refuses(argv, message):
    args = parse(*argv)
    with pytest.raises(AclsUsageError) as e:
        check_args(args)
        if args.action == "add":
            resources_to_add(args)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], []),
        (["--topic", "t"], [ResourcePatternFilter(T, "t", LIT)]),
        (["--topic", "t", "--resource-pattern-type", "match"], [ResourcePatternFilter(T, "t", PatternType.MATCH)]),
        (["--group", "g-", "--resource-pattern-type", "prefixed"], [ResourcePatternFilter(G, "g-", PRE)]),
        (["--cluster"], [ResourcePatternFilter(C, "kafka-cluster", LIT)]),
        (["--cluster", "--resource-pattern-type", "any"], [ResourcePatternFilter(C, "kafka-cluster", PatternType.ANY)]),
        (["--topic", " t ", "--topic", "u"], [ResourcePatternFilter(T, "t", LIT), ResourcePatternFilter(T, "u", LIT)]),
    ],
)
def test_list_filters(argv, expected):
    args = parse("--list", *argv)
    check_args(args)
    assert resource_filters(args, required=False) == expected


def test_remove_without_principals_removes_everything_on_each_filter():
    args = parse("--remove", "--topic", "t", "--resource-pattern-type", "any", "--force")
    check_args(args)
    assert resource_filter_entries(args) == {ResourcePatternFilter(T, "t", PatternType.ANY): frozenset()}


def test_output_is_kafka_acls_format():
    pattern = ResourcePattern(T, "t", LIT)
    one = format_resource_acls({pattern: allow("User:alice", Op.READ)})
    assert one == (
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n"
    )
    two = format_resource_acls(
        {pattern: allow("User:alice", Op.READ, Op.WRITE), ResourcePattern(G, "g", PRE): allow("User:b", Op.READ)}
    )
    assert two.splitlines() == [
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: ",
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)",
        "\t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) ",
        "",
        "Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=g, patternType=PREFIXED)`: ",
        " \t(principal=User:b, host=*, operation=READ, permissionType=ALLOW) ",
        "",
    ]


@pytest.mark.parametrize(
    "answer, expected", [("y\n", True), ("Y\n", True), ("n\n", False), ("yes\n", False), ("", False)]
)
def test_confirm_reads_one_line(answer, expected):
    out = io.StringIO()
    assert confirm("Sure? (y/n)", io.StringIO(answer), out) is expected
    assert out.getvalue() == "Sure? (y/n)\n"


def test_remove_without_force_refuses_a_stdin_that_is_not_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    code = main(["acls", "--remove", "--bootstrap-server", "127.0.0.1:1", "--topic", "t"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("kafkalog: acls --remove asks for confirmation") and "--force" in err
    assert err.count("\n") == 1


def test_usage_errors_are_one_line_and_exit_2(capsys):
    assert (
        main(
            [
                "acls",
                "--add",
                "--bootstrap-server",
                "127.0.0.1:1",
                "--group",
                "g",
                "--allow-principal",
                "User:a",
                "--operation",
                "Write",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        "kafkalog: ResourceType GROUP only supports operations All, Read, Delete, Describe, DescribeConfigs, "
        "AlterConfigs\n"
    )
