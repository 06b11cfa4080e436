"""The authorizer's decisions, table by table, after the cases of Kafka's ``AuthorizerTest`` /
``BaseAuthorizerTest`` (deny precedence, implied operations, no ACL found both ways, wildcard resource and
principal, host ACLs, single-character and prefixed resources per type, super users, authorizeByResourceType,
authorized-operations bits), plus its configuration, its log lines and its cache."""

from __future__ import annotations

import logging
import threading

import pytest

from broker.config import BrokerConfig
from broker.config_keys.schema import ConfigError
from broker.security.authorizer import ACL_AUTHORIZER_CLASS_NAMES, AclAuthorizer, normalize_host
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    supported_operations,
)

Op = AclOperation
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
TOPIC, GROUP, CLUSTER, TXN = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALICE, BOB = "User:alice", "User:bob"
H1, H2, H3 = "192.168.1.1", "192.168.1.2", "192.168.1.3"
OPERATIONS = [op for op in AclOperation if op not in (Op.UNKNOWN, Op.ANY, Op.ALL)]


def ace(principal: str, host: str, op: AclOperation, permission: AclPermissionType) -> AccessControlEntry:
    return AccessControlEntry(principal, host, op, permission)


def authorizer(
    acls: dict[tuple[ResourceType, str, PatternType], list[AccessControlEntry]] | None = None, **options
) -> AclAuthorizer:
    a = AclAuthorizer(**options)
    a.replace_all({ResourcePattern(t, n, p): entries for (t, n, p), entries in (acls or {}).items()})
    return a


# -- AuthorizerTest.testTopicAcl: per-host ALLOW and DENY, implied DESCRIBE ---------------------------------

TOPIC_ACLS = {
    (TOPIC, "t", LITERAL): [
        ace(ALICE, H1, Op.READ, ALLOW),
        ace(ALICE, H2, Op.READ, ALLOW),
        ace(ALICE, H1, Op.READ, DENY),
        ace(ALICE, H1, Op.WRITE, ALLOW),
        ace(ALICE, "*", Op.DESCRIBE, ALLOW),
        ace(BOB, "*", Op.READ, ALLOW),
        ace("User:carol", "*", Op.WRITE, ALLOW),
    ]
}


@pytest.mark.parametrize(
    "principal, host, op, expected",
    [
        (ALICE, H2, Op.READ, True),  # allowed from host 2
        (ALICE, H1, Op.READ, False),  # the DENY from host 1 wins over the ALLOW from host 1
        (ALICE, H1, Op.WRITE, True),
        (ALICE, H2, Op.WRITE, False),  # WRITE only from host 1
        (ALICE, H1, Op.DESCRIBE, True),  # DENY READ does not deny DESCRIBE
        (ALICE, H2, Op.DESCRIBE, True),
        (ALICE, H1, Op.ALTER, False),
        (ALICE, H2, Op.ALTER, False),
        (BOB, H1, Op.DESCRIBE, True),  # READ implies DESCRIBE
        (BOB, H1, Op.READ, True),
        (BOB, H1, Op.WRITE, False),
        ("User:carol", H3, Op.DESCRIBE, True),  # WRITE implies DESCRIBE
        ("User:carol", H3, Op.WRITE, True),
        ("User:carol", H3, Op.READ, False),
        ("User:dave", H1, Op.DESCRIBE, False),  # ACLs exist, none for dave
    ],
)
def test_topic_acls_per_principal_and_host(principal, host, op, expected):
    assert authorizer(TOPIC_ACLS).authorize(principal, host, op, TOPIC, "t") is expected


def test_deny_takes_precedence():
    a = authorizer({(TOPIC, "t", LITERAL): [ace(ALICE, H1, Op.ALL, ALLOW), ace(ALICE, H1, Op.ALL, DENY)]})
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
    assert not a.authorize(ALICE, H1, Op.DESCRIBE, TOPIC, "t")


def test_allow_all_access_for_every_principal_and_host():
    a = authorizer({(TOPIC, "t", LITERAL): [ace("User:*", "*", Op.ALL, ALLOW)]})
    assert all(a.authorize(p, h, Op.READ, TOPIC, "t") for p in (ALICE, BOB, "User:ANONYMOUS") for h in (H1, "::1"))
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "other")  # a literal ACL is on its name only


# -- AuthorizerTest.testAclInheritance: implications of ALLOW and DENY ---------------------------------------


@pytest.mark.parametrize(
    "parent, implied",
    [
        (Op.ALL, set(OPERATIONS)),
        (Op.READ, {Op.DESCRIBE}),
        (Op.WRITE, {Op.DESCRIBE}),
        (Op.DELETE, {Op.DESCRIBE}),
        (Op.ALTER, {Op.DESCRIBE}),
        (Op.ALTER_CONFIGS, {Op.DESCRIBE_CONFIGS}),
        (Op.DESCRIBE, set()),
        (Op.DESCRIBE_CONFIGS, set()),
        (Op.CREATE, set()),
        (Op.IDEMPOTENT_WRITE, set()),
    ],
)
def test_implications_of_allow(parent, implied):
    a = authorizer({(CLUSTER, "kafka-cluster", LITERAL): [ace(ALICE, "*", parent, ALLOW)]})
    allowed = {op for op in OPERATIONS if a.authorize(ALICE, H1, op, CLUSTER, "kafka-cluster")}
    assert allowed == ({parent} | implied) - {Op.ALL}


@pytest.mark.parametrize(
    "parent, denied",
    [
        (Op.ALL, set(OPERATIONS)),
        (Op.READ, {Op.READ}),  # DENY implies nothing: DESCRIBE stays allowed
        (Op.ALTER_CONFIGS, {Op.ALTER_CONFIGS}),
        (Op.DESCRIBE, {Op.DESCRIBE}),  # and DENY DESCRIBE denies READ nothing
        (Op.DESCRIBE_CONFIGS, {Op.DESCRIBE_CONFIGS}),
    ],
)
def test_implications_of_deny(parent, denied):
    a = authorizer(
        {(CLUSTER, "kafka-cluster", LITERAL): [ace(ALICE, "*", parent, DENY), ace(ALICE, "*", Op.ALL, ALLOW)]}
    )
    refused = {op for op in OPERATIONS if not a.authorize(ALICE, H1, op, CLUSTER, "kafka-cluster")}
    assert refused == denied


# -- no ACL found, both ways --------------------------------------------------------------------------------


@pytest.mark.parametrize("allow_everyone", [False, True])
def test_no_acl_found_is_decided_by_allow_everyone_if_no_acl_found(allow_everyone):
    a = authorizer(
        {(TOPIC, "other", LITERAL): [ace(BOB, "*", Op.READ, ALLOW)]}, allow_everyone_if_no_acl_found=allow_everyone
    )
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "t") is allow_everyone
    assert a.authorize(ALICE, H1, Op.READ, GROUP, "other") is allow_everyone  # ACLs are per resource type


def test_allow_everyone_does_not_apply_once_some_acl_matches_the_resource():
    a = authorizer({(TOPIC, "t", LITERAL): [ace(BOB, "*", Op.READ, ALLOW)]}, allow_everyone_if_no_acl_found=True)
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
    assert a.authorize(BOB, H1, Op.READ, TOPIC, "t")


# -- wildcard resource and principal -------------------------------------------------------------------------


def test_wildcard_resource_acls():
    """AuthorizerTest.testWildCardAcls: an ALLOW on ``*`` grants every topic; a DENY on ``*`` beats a literal
    ALLOW."""
    a = authorizer({(TOPIC, "*", LITERAL): [ace(ALICE, H1, Op.READ, ALLOW)]})
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "any-other")
    assert not a.authorize(ALICE, H1, Op.WRITE, TOPIC, "t")
    a.update_resource(ResourcePattern(TOPIC, "t"), [ace(ALICE, H1, Op.WRITE, ALLOW)])
    assert a.authorize(ALICE, H1, Op.WRITE, TOPIC, "t")
    a.update_resource(ResourcePattern(TOPIC, "*"), [ace(ALICE, H1, Op.READ, ALLOW), ace(ALICE, H1, Op.WRITE, DENY)])
    assert not a.authorize(ALICE, H1, Op.WRITE, TOPIC, "t")
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "t")


def test_empty_resource_name_matches_the_wildcard_resource():
    a = authorizer({(GROUP, "*", LITERAL): [ace("User:*", "*", Op.READ, ALLOW)]})
    assert a.authorize(ALICE, H1, Op.READ, GROUP, "")


@pytest.mark.parametrize(
    "entry, principal, expected",
    [
        (ace("User:*", "*", Op.READ, ALLOW), ALICE, True),
        (ace("User:*", "*", Op.READ, DENY), ALICE, False),  # a wildcard-principal DENY beats alice's ALLOW
        (ace("User:*", H2, Op.READ, ALLOW), ALICE, False),  # wildcard principal, other host
        (ace("User:alic*", "*", Op.READ, ALLOW), ALICE, False),  # no globbing in principals
        (ace("alice", "*", Op.READ, ALLOW), ALICE, False),  # principals compare as "Type:name" strings
    ],
)
def test_wildcard_principal(entry, principal, expected):
    acls = [entry] if entry.permission_type is ALLOW else [entry, ace(ALICE, "*", Op.READ, ALLOW)]
    assert authorizer({(TOPIC, "t", LITERAL): acls}).authorize(principal, H1, Op.READ, TOPIC, "t") is expected


# -- single-character and prefixed resources -----------------------------------------------------------------


def test_single_character_resource_acls():
    a = authorizer({(TOPIC, "f", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)]})
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "f")
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "foo")
    a.update_resource(ResourcePattern(TOPIC, "_", PREFIXED), [ace(ALICE, "*", Op.READ, ALLOW)])
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "_foo")
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "_")
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "foo_")


@pytest.mark.parametrize(
    "resource_type, name, expected",
    [
        (TOPIC, "tx-1", True),
        (TOPIC, "tx-", True),
        (TOPIC, "tx", False),  # shorter than the prefix
        (TOPIC, "t", False),
        (TOPIC, "xtx-1", False),  # prefix, not substring
        (GROUP, "tx-1", False),  # same name, other resource type (redpanda#1582)
        (TXN, "tx-1", False),
    ],
)
def test_prefixed_acls_match_per_resource_type(resource_type, name, expected):
    a = authorizer({(TOPIC, "tx-", PREFIXED): [ace(ALICE, "*", Op.READ, ALLOW)]})
    assert a.authorize(ALICE, H1, Op.READ, resource_type, name) is expected


def test_prefixed_deny_beats_literal_allow_and_longer_prefixes_match_too():
    a = authorizer(
        {
            (TOPIC, "orders", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)],
            (TOPIC, "ord", PREFIXED): [ace(ALICE, "*", Op.READ, DENY)],
            (TOPIC, "orders-eu", PREFIXED): [ace(ALICE, "*", Op.WRITE, ALLOW)],
            (TOPIC, "o", PREFIXED): [ace(BOB, "*", Op.ALL, ALLOW)],
        }
    )
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "orders")
    assert a.authorize(ALICE, H1, Op.DESCRIBE, TOPIC, "orders")  # READ's ALLOW implies it; DENY READ does not deny it
    assert a.authorize(ALICE, H1, Op.WRITE, TOPIC, "orders-eu-1")
    assert not a.authorize(ALICE, H1, Op.WRITE, TOPIC, "orders-us")
    assert a.authorize(BOB, H1, Op.READ, TOPIC, "orders")  # alice's DENY is not bob's


def test_many_prefixes_of_different_lengths():
    acls = {(TOPIC, f"p{i}-", PREFIXED): [ace(ALICE, "*", Op.READ, ALLOW)] for i in range(300)}
    a = authorizer(acls)
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "p299-x")
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "p7-")
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "p300-x")
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "p7")


# -- hosts -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "acl_host, client_host, expected",
    [
        ("192.168.1.1", "192.168.1.1", True),
        ("192.168.1.1", "192.168.1.2", False),
        ("*", "10.0.0.7", True),
        ("0:0:0:0:0:0:0:1", "::1", True),  # Java renders IPv6 unabbreviated; Python's peer is compressed
        ("::1", "0:0:0:0:0:0:0:1", True),
        ("::1", "::2", False),
        ("fe80:0:0:0:0:0:0:a", "fe80::a", True),
        ("10.0.0.1", "::ffff:10.0.0.1", True),  # an IPv4 client on a dual-stack socket
        ("10.0.0.1", "::1", False),
    ],
)
def test_host_acls_compare_ip_addresses(acl_host, client_host, expected):
    a = authorizer({(TOPIC, "t", LITERAL): [ace(ALICE, acl_host, Op.READ, ALLOW)]})
    assert a.authorize(ALICE, client_host, Op.READ, TOPIC, "t") is expected


def test_host_deny_in_java_form_denies_the_compressed_client():
    a = authorizer(
        {(TOPIC, "t", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW), ace(ALICE, "0:0:0:0:0:0:0:1", Op.READ, DENY)]}
    )
    assert not a.authorize(ALICE, "::1", Op.READ, TOPIC, "t")
    assert a.authorize(ALICE, "127.0.0.1", Op.READ, TOPIC, "t")


@pytest.mark.parametrize(
    "host, normal",
    [("*", "*"), ("0:0:0:0:0:0:0:1", "::1"), ("::ffff:1.2.3.4", "1.2.3.4"), ("1.2.3.4", "1.2.3.4"), ("db1", "db1")],
)
def test_normalize_host(host, normal):
    assert normalize_host(host) == normal


# -- super users -------------------------------------------------------------------------------------------


def test_super_users_bypass_every_acl():
    a = authorizer(
        {(TOPIC, "t", LITERAL): [ace("User:*", "*", Op.ALL, DENY)]}, super_users={"User:admin", "User:broker"}
    )
    assert a.authorize("User:admin", H1, Op.READ, TOPIC, "t")
    assert a.authorize("User:broker", H1, Op.CLUSTER_ACTION, CLUSTER, "kafka-cluster")  # no ACL there at all
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
    assert not a.authorize("User:Admin", H1, Op.READ, TOPIC, "t")  # exact match


# -- authorizeByResourceType (KIP-679) ---------------------------------------------------------------------

R = ResourcePattern


def by_type(acls: dict[ResourcePattern, list[AccessControlEntry]], **options) -> bool:
    a = AclAuthorizer(**options)
    a.replace_all(acls)
    return a.authorize_by_resource_type(ALICE, H1, Op.WRITE, TOPIC)


@pytest.mark.parametrize(
    "acls, expected",
    [
        ({}, False),
        ({R(TOPIC, "t"): [ace(ALICE, H1, Op.WRITE, ALLOW)]}, True),
        ({R(TOPIC, "t", PREFIXED): [ace(ALICE, H1, Op.WRITE, ALLOW)]}, True),
        ({R(GROUP, "t"): [ace(ALICE, H1, Op.WRITE, ALLOW)]}, False),  # other resource type
        ({R(TOPIC, "t"): [ace(BOB, H1, Op.WRITE, ALLOW)]}, False),  # other principal
        ({R(TOPIC, "t"): [ace(ALICE, H2, Op.WRITE, ALLOW)]}, False),  # other host
        ({R(TOPIC, "t"): [ace(ALICE, H1, Op.READ, ALLOW)]}, False),  # other operation (no implication here)
        ({R(TOPIC, "t"): [ace(ALICE, H1, Op.ALL, ALLOW)]}, True),  # ALL operations
        ({R(TOPIC, "t"): [ace(ALICE, "*", Op.WRITE, ALLOW)]}, True),  # all hosts
        ({R(TOPIC, "t"): [ace("User:*", H1, Op.WRITE, ALLOW)]}, True),  # all principals
        # a DENY on the same literal name, or on a prefix of it, dominates the ALLOW
        ({R(TOPIC, "t"): [ace(ALICE, H1, Op.WRITE, ALLOW), ace(ALICE, H1, Op.WRITE, DENY)]}, False),
        (
            {
                R(TOPIC, "abc"): [ace(ALICE, H1, Op.WRITE, ALLOW)],
                R(TOPIC, "a", PREFIXED): [ace(ALICE, H1, Op.ALL, DENY)],
            },
            False,
        ),
        (
            {
                R(TOPIC, "abc", PREFIXED): [ace(ALICE, H1, Op.WRITE, ALLOW)],
                R(TOPIC, "ab", PREFIXED): [ace("User:*", "*", Op.WRITE, DENY)],
            },
            False,
        ),
        # unrelated DENYs do not dominate
        ({R(TOPIC, "x"): [ace(ALICE, H1, Op.WRITE, ALLOW)], R(TOPIC, "y"): [ace(ALICE, H1, Op.WRITE, DENY)]}, True),
        (
            {
                R(TOPIC, "ab"): [ace(ALICE, H1, Op.WRITE, ALLOW)],
                R(TOPIC, "abc", PREFIXED): [ace(ALICE, H1, Op.WRITE, DENY)],
            },
            True,
        ),
        (
            {R(TOPIC, "x"): [ace(ALICE, H1, Op.WRITE, ALLOW)], R(TOPIC, "x", PREFIXED): [ace(BOB, H1, Op.WRITE, DENY)]},
            True,
        ),
        # a literal DENY does not dominate a prefixed ALLOW of the same name (topics longer than it are allowed)
        (
            {
                R(TOPIC, "x", PREFIXED): [ace(ALICE, H1, Op.WRITE, ALLOW)],
                R(TOPIC, "x"): [ace(ALICE, H1, Op.WRITE, DENY)],
            },
            True,
        ),
        # a DENY on the literal "*" denies whatever else there is; an ALLOW on it is never dominated
        ({R(TOPIC, "t"): [ace(ALICE, H1, Op.WRITE, ALLOW)], R(TOPIC, "*"): [ace(ALICE, H1, Op.WRITE, DENY)]}, False),
        (
            {
                R(TOPIC, "*"): [ace(ALICE, H1, Op.WRITE, ALLOW)],
                R(TOPIC, "a", PREFIXED): [ace(ALICE, H1, Op.WRITE, DENY)],
            },
            True,
        ),
    ],
)
def test_authorize_by_resource_type(acls, expected):
    assert by_type(acls) is expected


def test_authorize_by_resource_type_allow_everyone_and_super_users():
    assert by_type({}, allow_everyone_if_no_acl_found=True)
    assert by_type({R(TOPIC, "t"): [ace(ALICE, H1, Op.WRITE, DENY)]}, allow_everyone_if_no_acl_found=True)
    assert not by_type({R(TOPIC, "*"): [ace(ALICE, H1, Op.WRITE, DENY)]}, allow_everyone_if_no_acl_found=True)
    assert by_type({R(TOPIC, "*"): [ace("User:*", "*", Op.ALL, DENY)]}, super_users={ALICE})


def test_authorize_by_resource_type_refuses_any_and_unknown():
    a = AclAuthorizer()
    with pytest.raises(ValueError, match="ANY"):
        a.authorize_by_resource_type(ALICE, H1, Op.WRITE, ResourceType.ANY)
    with pytest.raises(ValueError, match="UNKNOWN"):
        a.authorize_by_resource_type(ALICE, H1, Op.UNKNOWN, TOPIC)


# -- authorized operations -----------------------------------------------------------------------------------


def bits(*ops: AclOperation) -> int:
    return sum(1 << int(op) for op in set(ops))


@pytest.mark.parametrize(
    "entries, resource_type, expected",
    [
        ([ace(ALICE, "*", Op.READ, ALLOW)], TOPIC, bits(Op.READ, Op.DESCRIBE)),
        ([ace(ALICE, "*", Op.ALTER_CONFIGS, ALLOW)], TOPIC, bits(Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS)),
        (
            [ace(ALICE, "*", Op.ALL, ALLOW)],
            GROUP,
            bits(Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),  # Kafka 4.x's group ops
        ),
        (
            [ace(ALICE, "*", Op.ALL, ALLOW), ace(ALICE, "*", Op.DELETE, DENY)],
            GROUP,
            bits(Op.READ, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),
        ),
        ([ace(ALICE, "*", Op.ALL, ALLOW)], CLUSTER, bits(*supported_operations(CLUSTER))),
        ([ace(BOB, "*", Op.ALL, ALLOW)], TOPIC, 0),
    ],
)
def test_authorized_operations_bits(entries, resource_type, expected):
    a = authorizer({(resource_type, "r", LITERAL): entries})
    assert a.authorized_operations(ALICE, H1, resource_type, "r") == expected


def test_authorized_operations_without_an_authorizer_are_every_supported_operation():
    a = AclAuthorizer(enabled=False)
    assert a.authorized_operations(ALICE, H1, TOPIC, "t") == bits(*supported_operations(TOPIC))
    assert (
        a.authorized_operations(ALICE, H1, TOPIC, "t") == 0b1101_1111_1000
    )  # Read..Describe (3-8), DescribeConfigs, AlterConfigs (10, 11)


# -- disabled, configuration -----------------------------------------------------------------------------


def test_disabled_allows_everything_and_holds_no_acls():
    a = AclAuthorizer(enabled=False)
    a.update_resource(R(TOPIC, "t"), [ace("User:*", "*", Op.ALL, DENY)])
    assert a.authorize(ALICE, H1, Op.WRITE, TOPIC, "t")
    assert a.authorize_by_resource_type(ALICE, H1, Op.WRITE, TOPIC)
    assert a.acls(AclBindingFilter()) == []


def config(**props: str) -> BrokerConfig:
    base = {"broker.id": "0", "log.dirs": "/tmp/x", "zookeeper.connect": "memory:authz"}
    return BrokerConfig.from_properties({**base, **{k.replace("_", "."): v for k, v in props.items()}})


@pytest.mark.parametrize("class_name", ACL_AUTHORIZER_CLASS_NAMES)
def test_from_config_accepts_kafkas_class_names_and_kafkalogs(class_name):
    a = AclAuthorizer.from_config(
        config(
            authorizer_class_name=class_name,
            super_users="User:admin; User:CN=broker,O=x;",
            allow_everyone_if_no_acl_found="true",
        )
    )
    assert a.enabled
    assert a.super_users == {"User:admin", "User:CN=broker,O=x"}
    assert a.allow_everyone_if_no_acl_found


def test_from_config_defaults_to_disabled_and_deny():
    assert not AclAuthorizer.from_config(config()).enabled
    a = AclAuthorizer.from_config(config(authorizer_class_name="kafkalog.AclAuthorizer"))
    assert (a.super_users, a.allow_everyone_if_no_acl_found) == (frozenset(), False)


def test_from_config_names_the_key_and_the_accepted_values():
    with pytest.raises(ConfigError) as info:
        AclAuthorizer.from_config(config(authorizer_class_name="com.example.MyAuthorizer"))
    message = str(info.value)
    assert "authorizer.class.name" in message and "com.example.MyAuthorizer" in message
    assert all(name in message for name in ACL_AUTHORIZER_CLASS_NAMES)
    with pytest.raises(ConfigError, match="super.users.*'admin'"):
        AclAuthorizer.from_config(config(authorizer_class_name="kafkalog.AclAuthorizer", super_users="admin"))


# -- log lines ---------------------------------------------------------------------------------------------


def test_denials_log_at_info_and_allows_at_debug_in_kafkas_form(caplog):
    a = authorizer({(TOPIC, "t", LITERAL): [ace(ALICE, "*", Op.DESCRIBE_CONFIGS, ALLOW)]})
    with caplog.at_level(logging.INFO, logger="kafkalog.authorizer"):
        a.authorize(BOB, "127.0.0.1", Op.READ, TOPIC, "t")
        a.authorize(ALICE, "127.0.0.1", Op.DESCRIBE_CONFIGS, TOPIC, "t")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            "kafkalog.authorizer",
            logging.INFO,
            "Principal = User:bob is Denied Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:t",
        )
    ]
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="kafkalog.authorizer"):
        a.authorize(ALICE, "127.0.0.1", Op.DESCRIBE_CONFIGS, TOPIC, "t")
        a.authorized_operations(BOB, "127.0.0.1", TOPIC, "t")  # not logged: Kafka logs these at TRACE
    assert [r.getMessage() for r in caplog.records] == [
        "Principal = User:alice is Allowed Operation = DescribeConfigs from host = 127.0.0.1 on resource = "
        "Topic:LITERAL:t"
    ]


# -- the cache -------------------------------------------------------------------------------------------


def test_update_resource_replaces_one_pattern_and_empty_removes_it():
    a = authorizer(
        {
            (TOPIC, "t", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)],
            (GROUP, "g", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)],
        }
    )
    a.update_resource(R(TOPIC, "t"), [ace(BOB, "*", Op.READ, ALLOW)])
    assert a.resource_acls(R(TOPIC, "t")) == {ace(BOB, "*", Op.READ, ALLOW)}
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
    a.update_resource(R(TOPIC, "t"), [])
    assert a.resource_acls(R(TOPIC, "t")) == frozenset()
    assert [b.pattern for b in a.acls(AclBindingFilter())] == [R(GROUP, "g")]


def test_replace_all_drops_what_it_does_not_name():
    a = authorizer({(TOPIC, "t", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)]})
    a.replace_all({R(TOPIC, "u", PREFIXED): [ace(ALICE, "*", Op.READ, ALLOW)], R(TOPIC, "empty"): []})
    assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
    assert a.authorize(ALICE, H1, Op.READ, TOPIC, "u1")
    assert a.acls(AclBindingFilter()) == [AclBinding(R(TOPIC, "u", PREFIXED), ace(ALICE, "*", Op.READ, ALLOW))]


def test_acls_applies_kafkas_filter_semantics():
    a = authorizer(
        {
            (TOPIC, "orders", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW), ace(BOB, H1, Op.WRITE, DENY)],
            (TOPIC, "*", LITERAL): [ace(ALICE, "*", Op.DESCRIBE, ALLOW)],
            (TOPIC, "ord", PREFIXED): [ace(ALICE, "*", Op.READ, ALLOW)],
            (GROUP, "orders", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)],
        }
    )

    def patterns(rf: ResourcePatternFilter, ef: AccessControlEntryFilter | None = None):
        return sorted(
            {
                (b.pattern.resource_type, b.pattern.name, b.pattern.pattern_type)
                for b in a.acls(AclBindingFilter(rf, ef or AccessControlEntryFilter()))
            }
        )

    assert patterns(ResourcePatternFilter(TOPIC, "orders", PatternType.MATCH)) == [
        (TOPIC, "*", LITERAL),
        (TOPIC, "ord", PREFIXED),
        (TOPIC, "orders", LITERAL),
    ]
    assert patterns(ResourcePatternFilter(ResourceType.ANY, "orders", PatternType.ANY)) == [
        (TOPIC, "orders", LITERAL),
        (GROUP, "orders", LITERAL),
    ]
    assert patterns(ResourcePatternFilter(TOPIC, None, PREFIXED)) == [(TOPIC, "ord", PREFIXED)]
    only_bob = a.acls(AclBindingFilter(ResourcePatternFilter(), AccessControlEntryFilter(principal=BOB)))
    assert only_bob == [AclBinding(R(TOPIC, "orders"), ace(BOB, H1, Op.WRITE, DENY))]


def test_concurrent_writes_and_reads_see_whole_snapshots():
    """A writer thread flips the ACLs of many patterns while this thread authorizes: every write lands, and
    reads never fail or see a pattern half-applied."""
    a = authorizer({(TOPIC, "t", LITERAL): [ace(ALICE, "*", Op.READ, ALLOW)]})
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(300):
                a.update_resource(R(TOPIC, f"w{i}", PREFIXED), [ace(ALICE, "*", Op.WRITE, ALLOW)])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            stop.set()

    thread = threading.Thread(target=writer)
    thread.start()
    while not stop.is_set():
        assert a.authorize(ALICE, H1, Op.READ, TOPIC, "t")
        assert not a.authorize(ALICE, H1, Op.READ, TOPIC, "w1x")
    thread.join()
    assert not errors
    assert all(a.authorize(ALICE, H1, Op.WRITE, TOPIC, f"w{i}-x") for i in range(300))
    assert len(a.acls(AclBindingFilter())) == 301


def _grow(a: AclAuthorizer, pattern: ResourcePattern, entry: AccessControlEntry) -> None:
    a.update_resource(pattern, a.resource_acls(pattern) | {entry})


def test_authorize_by_resource_type_prefixed_deny_dominates_step_by_step():
    """BaseAuthorizerTest.testAuthorizeByResourceTypePrefixedResourceDenyDominate, step by step."""
    a = AclAuthorizer()
    allow, deny = ace(ALICE, H1, Op.READ, ALLOW), ace(ALICE, H1, Op.READ, DENY)
    steps = [
        ("abcde", allow, True),
        ("abcd", deny, False),
        ("abc", allow, True),
        ("a", deny, False),
        ("ab", allow, False),
    ]
    for prefix, entry, expected in steps:
        _grow(a, R(GROUP, prefix, PREFIXED), entry)
        assert a.authorize_by_resource_type(ALICE, H1, Op.READ, GROUP) is expected, (prefix, entry)


def test_authorize_by_resource_type_wildcard_deny_dominates_step_by_step():
    """BaseAuthorizerTest.testAuthorizeByResourceTypeWildcardResourceDenyDominate, step by step."""
    a = AclAuthorizer()
    allow, deny = ace(ALICE, H1, Op.WRITE, ALLOW), ace(ALICE, H1, Op.WRITE, DENY)
    steps = [(R(GROUP, "hello", PREFIXED), allow, True), (R(GROUP, "*"), deny, False), (R(GROUP, "*"), allow, False)]
    steps.append((R(GROUP, "aloha"), allow, False))
    for pattern, entry, expected in steps:
        _grow(a, pattern, entry)
        assert a.authorize_by_resource_type(ALICE, H1, Op.WRITE, GROUP) is expected, (pattern, entry)


def test_authorize_by_resource_type_unrelated_denies_do_not_dominate():
    """BaseAuthorizerTest.testAuthorizeByResourceTypeIsolationUnrelatedDenyWontDominateAllow."""
    a = authorizer(
        {
            (TOPIC, "sb1", LITERAL): [
                ace(ALICE, H1, Op.READ, DENY),
                ace(BOB, H1, Op.READ, DENY),
                ace(ALICE, H2, Op.WRITE, DENY),
                ace(BOB, H2, Op.READ, DENY),
                ace(ALICE, H2, Op.READ, ALLOW),
            ],
            (TOPIC, "sb2", LITERAL): [ace(ALICE, H2, Op.READ, DENY)],
            (GROUP, "s", PREFIXED): [ace(ALICE, H2, Op.READ, DENY)],
        }
    )
    for resource_type in (TOPIC, GROUP, TXN, CLUSTER):
        assert not a.authorize_by_resource_type(ALICE, H1, Op.READ, resource_type)
    assert a.authorize_by_resource_type(ALICE, H2, Op.READ, TOPIC)
