"""Kafka's ACL znode encodings (zk_layout): paths, resource node JSON and change notices, as tables."""

from __future__ import annotations

import pytest

from broker.cluster import zk_layout as zl
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

T, P = PatternType.LITERAL, PatternType.PREFIXED


@pytest.mark.parametrize(
    ("resource_type", "literal", "prefixed"),
    [
        (ResourceType.TOPIC, "/kafka-acl/Topic/n", "/kafka-acl-extended/prefixed/Topic/n"),
        (ResourceType.GROUP, "/kafka-acl/Group/n", "/kafka-acl-extended/prefixed/Group/n"),
        (ResourceType.CLUSTER, "/kafka-acl/Cluster/n", "/kafka-acl-extended/prefixed/Cluster/n"),
        (
            ResourceType.TRANSACTIONAL_ID,
            "/kafka-acl/TransactionalId/n",
            "/kafka-acl-extended/prefixed/TransactionalId/n",
        ),
        (
            ResourceType.DELEGATION_TOKEN,
            "/kafka-acl/DelegationToken/n",
            "/kafka-acl-extended/prefixed/DelegationToken/n",
        ),
        (ResourceType.USER, "/kafka-acl/User/n", "/kafka-acl-extended/prefixed/User/n"),
    ],
)
def test_paths_per_resource_type(resource_type, literal, prefixed):
    assert zl.acl_path(ResourcePattern(resource_type, "n", T)) == literal
    assert zl.acl_path(ResourcePattern(resource_type, "n", P)) == prefixed
    assert zl.parse_acl_store(T, literal.split("/")[2], "n") == ResourcePattern(resource_type, "n", T)
    assert zl.parse_acl_store(P, prefixed.split("/")[3], "n") == ResourcePattern(resource_type, "n", P)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (ResourcePattern(ResourceType.TOPIC, "a/b", T), "invalid ACL resource name 'a/b'"),
        (ResourcePattern(ResourceType.TOPIC, "", T), "invalid ACL resource name ''"),
        (ResourcePattern(ResourceType.ANY, "a", T), "resource type ANY"),
        (ResourcePattern(ResourceType.UNKNOWN, "a", T), "resource type UNKNOWN"),
        (ResourcePattern(ResourceType.TOPIC, "a", PatternType.MATCH), "not MATCH"),
        (ResourcePattern(ResourceType.TOPIC, "a", PatternType.ANY), "not ANY"),
    ],
)
def test_patterns_without_a_node_are_refused(pattern, message):
    with pytest.raises(ValueError, match=message):
        zl.acl_path(pattern)


@pytest.mark.parametrize(
    ("pattern", "data"),
    [
        (ResourcePattern(ResourceType.TOPIC, "foo", T), b"TOPIC:foo"),
        (ResourcePattern(ResourceType.TRANSACTIONAL_ID, "a:b", T), b"TRANSACTIONAL_ID:a:b"),
        (ResourcePattern(ResourceType.TOPIC, "*", T), b"TOPIC:*"),
        (
            ResourcePattern(ResourceType.GROUP, "g-", P),
            b'{"version":1,"resourceType":"GROUP","name":"g-","patternType":"PREFIXED"}',
        ),
        (
            ResourcePattern(ResourceType.DELEGATION_TOKEN, "t", P),
            b'{"version":1,"resourceType":"DELEGATION_TOKEN","name":"t","patternType":"PREFIXED"}',
        ),
    ],
)
def test_change_notices_round_trip(pattern, data):
    extended = pattern.pattern_type is P
    assert zl.encode_acl_change(pattern) == data
    assert zl.decode_acl_change(data, extended=extended) == pattern
    assert zl.acl_change_dir(pattern.pattern_type) == (
        "/kafka-acl-extended-changes" if extended else "/kafka-acl-changes"
    )


@pytest.mark.parametrize(
    ("data", "extended", "pattern"),
    [
        (b"Topic:foo", False, ResourcePattern(ResourceType.TOPIC, "foo", T)),
        (b"TransactionalId:x", False, ResourcePattern(ResourceType.TRANSACTIONAL_ID, "x", T)),
        (
            b'{"resourceType":"Group","name":"g","patternType":"Prefixed","version":1}',
            True,
            ResourcePattern(ResourceType.GROUP, "g", P),
        ),
    ],
)
def test_change_notices_in_other_spellings(data, extended, pattern):
    assert zl.decode_acl_change(data, extended=extended) == pattern


@pytest.mark.parametrize(
    ("data", "extended"),
    [
        (b"foo", False),  # no type
        (b"BROKER:foo", False),  # no such resource type
        (b"ANY:foo", False),
        (b"TOPIC:a/b", False),
        (None, False),
        (b'{"version":2,"resourceType":"TOPIC","name":"f","patternType":"PREFIXED"}', True),
        (b'{"version":1,"resourceType":"TOPIC","name":"f","patternType":"LITERAL"}', True),  # wrong directory
        (b'{"version":1,"resourceType":"TOPIC","name":"f","patternType":"MATCH"}', True),
        (b'{"version":1,"resourceType":"TOPIC","patternType":"PREFIXED"}', True),
        (b"TOPIC:foo", True),
        (b"\xff:foo", False),
    ],
)
def test_malformed_change_notices_are_refused(data, extended):
    with pytest.raises(ValueError, match="malformed ACL change notification"):
        zl.decode_acl_change(data, extended=extended)


def test_resource_node_json_is_sorted_and_compact():
    entries = {
        AccessControlEntry("User:b", "*", AclOperation.IDEMPOTENT_WRITE, AclPermissionType.ALLOW),
        AccessControlEntry("User:a", "::1", AclOperation.CLUSTER_ACTION, AclPermissionType.DENY),
    }
    data = zl.encode_acls(entries)
    assert data == (
        b'{"version":1,"acls":['
        b'{"principal":"User:a","permissionType":"Deny","operation":"ClusterAction","host":"::1"},'
        b'{"principal":"User:b","permissionType":"Allow","operation":"IdempotentWrite","host":"*"}]}'
    )
    assert zl.decode_acls(data) == entries
    assert zl.encode_acls(frozenset(reversed(sorted(entries)))) == data


@pytest.mark.parametrize("data", [None, b""])
def test_null_or_empty_node_holds_no_acl(data):
    assert zl.decode_acls(data) == frozenset()


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b'{"version":1}',
        b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Any","host":"*"}]}',
        b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Any","operation":"Read","host":"*"}]}',
        b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Fly","host":"*"}]}',
        b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Read"}]}',
    ],
)
def test_malformed_resource_nodes_are_refused(data):
    with pytest.raises(ValueError, match="/kafka-acl/Topic/x: malformed ACL node"):
        zl.decode_acls(data, what="/kafka-acl/Topic/x")


@pytest.mark.parametrize(
    ("child", "seq"), [("acl_changes_0000000007", 7), ("acl_changes_", None), ("config_change_0000000001", None)]
)
def test_change_sequence(child, seq):
    assert zl.acl_change_sequence(child) == seq
