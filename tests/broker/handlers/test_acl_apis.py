"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31) called on the services of an unstarted broker, each
request and response going through the codec at the version under test: Kafka's validation (per creation or
the whole request), filter semantics (ANY, MATCH, LITERAL, PREFIXED; v0 never sees or touches PREFIXED),
SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED, and deletes that keep the resource's other ACLs
(CVE-2024-27309). The registry is a fake holding ACLs by pattern, with the compare-and-set contract of
``ClusterRegistry.update_resource_acls`` (a conflicting writer re-runs the update). Last, the three over the
wire on two running brokers sharing an in-process registry: the writer sees its change at once, the other broker
within seconds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from broker.api import CloseConnection
from broker.cluster.registry import RegistryUnavailableError
from broker.handlers import create_acls, delete_acls, describe_acls
from broker.security.authorizer import AclAuthorizer
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode, decode_request, decode_response, encode_request
from spark_kafkalog.protocol.messages import encode_response
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tests.waiting import wait_until

from ..conftest import start_brokers
from ..services_builder import build_services, request_context
from ..wire import Wire

Op, Perm, RT, PT = AclOperation, AclPermissionType, ResourceType, PatternType
ALLOW, DENY = Perm.ALLOW, Perm.DENY
ADMIN = "User:admin"
Entries = frozenset[AccessControlEntry]


class FakeAclRegistry:
    """ACLs by pattern as ``ClusterRegistry`` stores them. ``conflicts[pattern]`` is another writer's update,
    applied between this writer's read and its compare-and-set (so the update runs a second time on the new
    state); ``failure`` is raised by every write."""

    def __init__(self) -> None:
        self.acls: dict[ResourcePattern, Entries] = {}
        self.writes: list[ResourcePattern] = []
        self.conflicts: dict[ResourcePattern, Callable[[Entries], Entries]] = {}
        self.failure: Exception | None = None

    def all_acls(self) -> dict[ResourcePattern, Entries]:
        return dict(self.acls)

    def resource_acls(self, pattern: ResourcePattern) -> Entries:
        return self.acls.get(pattern, frozenset())

    def update_resource_acls(self, pattern: ResourcePattern, update: Callable[[Entries], Entries]) -> Entries:
        if self.failure is not None:
            raise self.failure
        current = self.resource_acls(pattern)
        new = update(current)
        other = self.conflicts.pop(pattern, None)
        if other is not None:  # the compare-and-set fails: read again, update again
            current = other(current)
            self._store(pattern, current)
            new = update(current)
        if new != current:
            self.writes.append(pattern)
            self._store(pattern, new)
        return new

    def _store(self, pattern: ResourcePattern, entries: Entries) -> None:
        if entries:
            self.acls[pattern] = frozenset(entries)
        else:
            self.acls.pop(pattern, None)


def ace(principal: str, op: AclOperation, permission: AclPermissionType = ALLOW, host: str = "*") -> AccessControlEntry:
    return AccessControlEntry(principal, host, op, permission)


@pytest.fixture
def registry() -> FakeAclRegistry:
    return FakeAclRegistry()


@pytest.fixture
def authorizer() -> AclAuthorizer:
    return AclAuthorizer(super_users={ADMIN})


@pytest.fixture
def services(tmp_path, registry, authorizer):
    return build_services(tmp_path, registry=registry, authorizer=authorizer)


def store(registry: FakeAclRegistry, authorizer: AclAuthorizer, acls: dict[ResourcePattern, list[AccessControlEntry]]):
    """ACLs already in the registry and loaded into the cache (as the ACL sync does at start-up)."""
    for pattern, entries in acls.items():
        registry.acls[pattern] = frozenset(entries)
    authorizer.replace_all(registry.all_acls())


def call(services, module, version: int, principal: str = ADMIN, **fields):
    """The handler's answer to a request built from ``fields``, both through the codec at ``version``."""
    api = API_BY_KEY[module.API_KEY]
    frame = encode_request(module.API_KEY, version, 7, api.Request(**fields), client_id="t")
    body = decode_request(frame).body
    result = asyncio.run(module.handle(request_context(services, module.API_KEY, version, principal=principal), body))
    if isinstance(result, CloseConnection):
        return result
    return decode_response(module.API_KEY, version, encode_response(module.API_KEY, version, 7, result))[1]


Creation = API_BY_KEY[create_acls.API_KEY].Request.AclCreation
DeleteFilter = API_BY_KEY[delete_acls.API_KEY].Request.DeleteAclsFilter


def creation(rtype=RT.TOPIC, name="t", pattern=PT.LITERAL, principal="User:alice", host="*", op=Op.READ, perm=ALLOW):
    return Creation(
        resource_type=rtype,
        resource_name=name,
        resource_pattern_type=pattern,
        principal=principal,
        host=host,
        operation=op,
        permission_type=perm,
    )


def filter_fields(rtype=RT.ANY, name=None, pattern=PT.ANY, principal=None, host=None, op=Op.ANY, perm=Perm.ANY):
    return dict(
        resource_type_filter=rtype,
        resource_name_filter=name,
        pattern_type_filter=pattern,
        principal_filter=principal,
        host_filter=host,
        operation=op,
        permission_type=perm,
    )


def described(resp) -> set[tuple]:
    """(type, name, pattern type, principal, host, op, permission) of every ACL a DescribeAcls answer lists."""
    return {
        (r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
        for r in resp.resources
        for a in r.acls
    }


def deleted(filter_result) -> set[tuple]:
    return {
        (m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation, m.permission_type)
        for m in filter_result.matching_acls
    }


def row(pattern: ResourcePattern, entry: AccessControlEntry) -> tuple:
    return (
        pattern.resource_type,
        pattern.name,
        pattern.pattern_type,
        entry.principal,
        entry.host,
        entry.operation,
        entry.permission_type,
    )


# -- no authorizer ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_security_disabled_without_an_authorizer(tmp_path, registry, version):
    services = build_services(tmp_path, registry=registry, authorizer=AclAuthorizer(enabled=False))
    resp = call(services, describe_acls, version, **filter_fields(pattern=PT.LITERAL))
    assert (resp.error_code, resp.resources) == (ErrorCode.SECURITY_DISABLED, [])
    assert resp.error_message
    resp = call(services, create_acls, version, creations=[creation(), creation(name="u")])
    assert [r.error_code for r in resp.results] == [ErrorCode.SECURITY_DISABLED] * 2
    resp = call(services, delete_acls, version, filters=[DeleteFilter(**filter_fields(pattern=PT.LITERAL))])
    assert [(r.error_code, r.matching_acls) for r in resp.filter_results] == [(ErrorCode.SECURITY_DISABLED, [])]
    assert registry.acls == {} and registry.writes == []


# -- authorization of the APIs themselves -----------------------------------------------------------------


CLUSTER = ResourcePattern(RT.CLUSTER, "kafka-cluster")


def test_cluster_authorization_failed_without_describe_or_alter_on_the_cluster(services, registry, authorizer):
    topic = ResourcePattern(RT.TOPIC, "t")
    store(registry, authorizer, {topic: [ace("User:alice", Op.READ)], CLUSTER: [ace("User:ops", Op.DESCRIBE)]})
    before = dict(registry.acls)

    resp = call(services, describe_acls, 3, principal="User:bob", **filter_fields())
    assert (resp.error_code, resp.resources) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    assert "User:bob" in resp.error_message and "Describe" in resp.error_message

    resp = call(services, create_acls, 3, principal="User:ops", creations=[creation(name="a"), creation(name="b")])
    assert [r.error_code for r in resp.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED] * 2
    assert "User:ops" in resp.results[0].error_message and "Alter" in resp.results[0].error_message

    filters = [DeleteFilter(**filter_fields()), DeleteFilter(**filter_fields(rtype=RT.TOPIC))]
    resp = call(services, delete_acls, 3, principal="User:ops", filters=filters)
    assert [(r.error_code, r.matching_acls) for r in resp.filter_results] == [
        (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    ] * 2
    assert registry.acls == before and registry.writes == []

    # Describe on the cluster is enough to describe, not to alter
    resp = call(services, describe_acls, 3, principal="User:ops", **filter_fields())
    assert resp.error_code == ErrorCode.NONE
    assert row(topic, ace("User:alice", Op.READ)) in described(resp)


def test_alter_on_the_cluster_allows_all_three(services, registry, authorizer):
    store(registry, authorizer, {CLUSTER: [ace("User:ops", Op.ALTER)]})
    resp = call(services, create_acls, 3, principal="User:ops", creations=[creation()])
    assert resp.results[0].error_code == ErrorCode.NONE
    resp = call(services, describe_acls, 3, principal="User:ops", **filter_fields(rtype=RT.TOPIC))
    assert resp.error_code == ErrorCode.NONE  # ALTER implies DESCRIBE
    resp = call(services, delete_acls, 3, principal="User:ops", filters=[DeleteFilter(**filter_fields(rtype=RT.TOPIC))])
    assert resp.filter_results[0].error_code == ErrorCode.NONE
    assert len(resp.filter_results[0].matching_acls) == 1


# -- CreateAcls ---------------------------------------------------------------------------------------------


def test_create_writes_each_resource_once_and_the_cache_sees_it_at_once(services, registry, authorizer):
    resp = call(
        services,
        create_acls,
        3,
        creations=[
            creation(name="t", op=Op.READ),
            creation(name="t", op=Op.WRITE, principal="User:bob"),
            creation(name="tx-", pattern=PT.PREFIXED, op=Op.WRITE),
            creation(rtype=RT.CLUSTER, name="kafka-cluster", op=Op.IDEMPOTENT_WRITE),
        ],
    )
    assert [(r.error_code, r.error_message) for r in resp.results] == [(ErrorCode.NONE, None)] * 4
    topic, prefixed = ResourcePattern(RT.TOPIC, "t"), ResourcePattern(RT.TOPIC, "tx-", PT.PREFIXED)
    assert registry.acls == {
        topic: {ace("User:alice", Op.READ), ace("User:bob", Op.WRITE)},
        prefixed: {ace("User:alice", Op.WRITE)},
        CLUSTER: {ace("User:alice", Op.IDEMPOTENT_WRITE)},
    }
    assert sorted(registry.writes) == sorted([topic, prefixed, CLUSTER])
    assert authorizer.authorize("User:alice", "10.0.0.1", Op.WRITE, RT.TOPIC, "tx-1")
    assert authorizer.authorize("User:bob", "10.0.0.1", Op.WRITE, RT.TOPIC, "t")


def test_create_adds_to_the_stored_acls_and_v0_creates_literal(services, registry, authorizer):
    topic = ResourcePattern(RT.TOPIC, "t")
    registry.acls[topic] = frozenset({ace("User:carol", Op.DESCRIBE)})  # written by another broker
    resp = call(services, create_acls, 0, creations=[creation(name="t")])
    assert resp.results[0].error_code == ErrorCode.NONE
    assert registry.acls[topic] == {ace("User:carol", Op.DESCRIBE), ace("User:alice", Op.READ)}
    assert authorizer.resource_acls(topic) == registry.acls[topic]


@pytest.mark.parametrize(
    "bad, message",
    [
        (creation(rtype=RT.CLUSTER, name="my-cluster"), "kafka-cluster"),
        (creation(name=""), "empty"),
        (creation(name="a/b"), "a/b"),
        (creation(name="a/", pattern=PT.PREFIXED), "a/"),
        (creation(rtype=99), "unknown"),  # a code this version does not know reads as UNKNOWN
        (creation(pattern=99), "unknown"),
        (creation(op=99), "unknown"),
        (creation(perm=99), "unknown"),
        (creation(principal="alice"), "Type:name"),
    ],
)
def test_create_refuses_an_invalid_creation_and_creates_the_others(services, registry, bad, message):
    resp = call(services, create_acls, 3, creations=[creation(name="ok-1"), bad, creation(name="ok-2")])
    codes = [r.error_code for r in resp.results]
    assert codes == [ErrorCode.NONE, ErrorCode.INVALID_REQUEST, ErrorCode.NONE]
    assert message in resp.results[1].error_message
    assert set(registry.acls) == {ResourcePattern(RT.TOPIC, "ok-1"), ResourcePattern(RT.TOPIC, "ok-2")}


@pytest.mark.parametrize(
    "bad",
    [
        creation(rtype=RT.ANY),
        creation(pattern=PT.ANY),
        creation(pattern=PT.MATCH),
        creation(op=Op.ANY),
        creation(perm=Perm.ANY),
    ],
)
def test_create_with_a_filter_value_fails_every_creation_and_creates_nothing(services, registry, bad):
    resp = call(services, create_acls, 3, creations=[creation(name="ok"), bad])
    assert [r.error_code for r in resp.results] == [ErrorCode.UNKNOWN_SERVER_ERROR] * 2
    assert "must not be" in resp.results[1].error_message
    assert registry.acls == {}


@pytest.mark.parametrize("field", ["rtype", "pattern", "op", "perm"])
def test_create_with_code_0_is_malformed_and_closes_the_connection(services, registry, field):
    resp = call(services, create_acls, 3, creations=[creation(name="ok"), creation(**{field: 0})])
    assert isinstance(resp, CloseConnection)
    assert registry.acls == {}


def test_create_failure_of_one_resource_fails_only_its_creations(services, registry, authorizer):
    registry.failure = RegistryUnavailableError("ZooKeeper is unreachable")
    resp = call(services, create_acls, 3, creations=[creation(name="t"), creation(name="/bad")])
    assert [r.error_code for r in resp.results] == [ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.INVALID_REQUEST]
    assert "unreachable" in resp.results[0].error_message
    assert authorizer.resource_acls(ResourcePattern(RT.TOPIC, "t")) == frozenset()


# -- DescribeAcls ---------------------------------------------------------------------------------------------

P = ResourcePattern
ACLS = {
    P(RT.TOPIC, "orders"): [ace("User:alice", Op.READ), ace("User:bob", Op.WRITE, DENY, host="10.0.0.2")],
    P(RT.TOPIC, "*"): [ace("User:carol", Op.DESCRIBE)],
    P(RT.TOPIC, "ord", PT.PREFIXED): [ace("User:alice", Op.WRITE)],
    P(RT.TOPIC, "orders", PT.PREFIXED): [ace("User:dave", Op.READ)],
    P(RT.GROUP, "orders"): [ace("User:alice", Op.READ)],
    P(RT.GROUP, "o", PT.PREFIXED): [ace("User:alice", Op.DESCRIBE)],
}


def expected(*patterns: ResourcePattern, entry: Callable[[AccessControlEntry], bool] = lambda e: True) -> set[tuple]:
    return {row(p, e) for p in patterns for e in ACLS[p] if entry(e)}


@pytest.mark.parametrize(
    "version, fields, patterns",
    [
        (3, filter_fields(), list(ACLS)),
        (1, filter_fields(rtype=RT.TOPIC), [p for p in ACLS if p.resource_type is RT.TOPIC]),
        (
            2,
            filter_fields(name="orders"),
            [P(RT.TOPIC, "orders"), P(RT.TOPIC, "orders", PT.PREFIXED), P(RT.GROUP, "orders")],
        ),
        (
            3,
            filter_fields(rtype=RT.TOPIC, name="orders", pattern=PT.MATCH),
            [
                P(RT.TOPIC, "orders"),
                P(RT.TOPIC, "*"),
                P(RT.TOPIC, "ord", PT.PREFIXED),
                P(RT.TOPIC, "orders", PT.PREFIXED),
            ],
        ),
        (
            3,
            filter_fields(name="order", pattern=PT.MATCH),
            [P(RT.TOPIC, "*"), P(RT.TOPIC, "ord", PT.PREFIXED), P(RT.GROUP, "o", PT.PREFIXED)],
        ),
        (3, filter_fields(pattern=PT.LITERAL), [P(RT.TOPIC, "orders"), P(RT.TOPIC, "*"), P(RT.GROUP, "orders")]),
        (3, filter_fields(pattern=PT.PREFIXED), [p for p in ACLS if p.pattern_type is PT.PREFIXED]),
        (3, filter_fields(rtype=RT.TOPIC, name="ord", pattern=PT.PREFIXED), [P(RT.TOPIC, "ord", PT.PREFIXED)]),
        (3, filter_fields(name="ord", pattern=PT.LITERAL), []),
        (3, filter_fields(rtype=RT.CLUSTER), []),
        (3, filter_fields(rtype=99), []),  # an unknown code matches nothing
        # v0: the filter is LITERAL (no pattern type field), so PREFIXED ACLs never show
        (0, filter_fields(pattern=PT.LITERAL), [P(RT.TOPIC, "orders"), P(RT.TOPIC, "*"), P(RT.GROUP, "orders")]),
        (0, filter_fields(name="orders", pattern=PT.LITERAL), [P(RT.TOPIC, "orders"), P(RT.GROUP, "orders")]),
    ],
)
def test_describe_filters_on_the_resource_pattern(services, registry, authorizer, version, fields, patterns):
    store(registry, authorizer, ACLS)
    resp = call(services, describe_acls, version, **fields)
    assert (resp.error_code, resp.error_message) == (ErrorCode.NONE, None)
    assert described(resp) == expected(*patterns)
    assert len(resp.resources) == len({(r.resource_type, r.resource_name, r.pattern_type) for r in resp.resources})


def test_describe_v0_reads_the_absent_pattern_type_as_literal(services, registry, authorizer):
    store(registry, authorizer, ACLS)
    # whatever the body says, v0 does not carry the field: the broker decodes LITERAL
    resp = call(services, describe_acls, 0, **filter_fields(pattern=PT.ANY))
    assert all(r.pattern_type == PT.LITERAL for r in resp.resources)
    assert described(resp) == expected(P(RT.TOPIC, "orders"), P(RT.TOPIC, "*"), P(RT.GROUP, "orders"))


@pytest.mark.parametrize(
    "fields, keep",
    [
        (filter_fields(principal="User:alice"), lambda e: e.principal == "User:alice"),
        (filter_fields(host="10.0.0.2"), lambda e: e.host == "10.0.0.2"),
        (filter_fields(op=Op.READ), lambda e: e.operation is Op.READ),
        (filter_fields(perm=DENY), lambda e: e.permission_type is DENY),
        (filter_fields(op=Op.ALL), lambda e: False),  # ALL in a filter is the ALL operation, not a wildcard
        (filter_fields(op=99), lambda e: False),
    ],
)
def test_describe_filters_on_the_entry(services, registry, authorizer, fields, keep):
    store(registry, authorizer, ACLS)
    resp = call(services, describe_acls, 3, **fields)
    assert described(resp) == expected(*ACLS, entry=keep)


@pytest.mark.parametrize("field", ["resource_type_filter", "pattern_type_filter", "operation", "permission_type"])
def test_describe_with_code_0_is_malformed_and_closes_the_connection(services, field):
    assert isinstance(call(services, describe_acls, 3, **{**filter_fields(), field: 0}), CloseConnection)


def test_describe_answers_from_the_cache_not_the_registry(services, registry, authorizer):
    store(registry, authorizer, ACLS)
    registry.acls.clear()  # the cache is what DescribeAcls reads
    assert described(call(services, describe_acls, 3, **filter_fields())) == expected(*ACLS)


# -- DeleteAcls ---------------------------------------------------------------------------------------------


def delete(services, version, *filters, principal=ADMIN):
    return call(services, delete_acls, version, principal=principal, filters=[DeleteFilter(**f) for f in filters])


def test_delete_keeps_the_other_acls_of_the_resource(services, registry, authorizer):
    """CVE-2024-27309: deleting alice's READ leaves bob's DENY on the same topic, in ZooKeeper and the cache."""
    store(registry, authorizer, ACLS)
    resp = delete(services, 3, filter_fields(rtype=RT.TOPIC, name="orders", pattern=PT.LITERAL, principal="User:alice"))
    (result,) = resp.filter_results
    assert (result.error_code, result.error_message) == (ErrorCode.NONE, None)
    assert deleted(result) == {row(P(RT.TOPIC, "orders"), ace("User:alice", Op.READ))}
    assert all(m.error_code == ErrorCode.NONE for m in result.matching_acls)
    remaining = {ace("User:bob", Op.WRITE, DENY, host="10.0.0.2")}
    assert registry.acls[P(RT.TOPIC, "orders")] == remaining
    assert authorizer.resource_acls(P(RT.TOPIC, "orders")) == remaining
    assert registry.writes == [P(RT.TOPIC, "orders")]
    for p in ACLS:
        if p != P(RT.TOPIC, "orders"):
            assert registry.acls[p] == set(ACLS[p])


def test_delete_of_the_last_entry_removes_the_resource(services, registry, authorizer):
    store(registry, authorizer, ACLS)
    delete(services, 3, filter_fields(rtype=RT.GROUP, name="orders", pattern=PT.LITERAL))
    assert P(RT.GROUP, "orders") not in registry.acls
    assert authorizer.resource_acls(P(RT.GROUP, "orders")) == frozenset()
    assert not authorizer.authorize("User:alice", "10.0.0.1", Op.READ, RT.GROUP, "orders")


@pytest.mark.parametrize(
    "version, fields, patterns",
    [
        (
            3,
            filter_fields(rtype=RT.TOPIC, name="orders", pattern=PT.MATCH),
            [
                P(RT.TOPIC, "orders"),
                P(RT.TOPIC, "*"),
                P(RT.TOPIC, "ord", PT.PREFIXED),
                P(RT.TOPIC, "orders", PT.PREFIXED),
            ],
        ),
        (
            2,
            filter_fields(name="orders", pattern=PT.ANY),
            [P(RT.TOPIC, "orders"), P(RT.TOPIC, "orders", PT.PREFIXED), P(RT.GROUP, "orders")],
        ),
        (1, filter_fields(pattern=PT.PREFIXED), [p for p in ACLS if p.pattern_type is PT.PREFIXED]),
        (3, filter_fields(), list(ACLS)),
        # v0: LITERAL only, PREFIXED ACLs are never touched
        (0, filter_fields(pattern=PT.LITERAL), [P(RT.TOPIC, "orders"), P(RT.TOPIC, "*"), P(RT.GROUP, "orders")]),
        (0, filter_fields(name="orders", pattern=PT.ANY), [P(RT.TOPIC, "orders"), P(RT.GROUP, "orders")]),
    ],
)
def test_delete_filters_and_returns_every_matched_binding(services, registry, authorizer, version, fields, patterns):
    store(registry, authorizer, ACLS)
    (result,) = delete(services, version, fields).filter_results
    assert deleted(result) == expected(*patterns)
    for p in ACLS:
        assert (p in registry.acls) is (p not in patterns)
        assert authorizer.resource_acls(p) == registry.acls.get(p, frozenset())


def test_delete_reports_a_binding_under_the_first_filter_that_matched_it(services, registry, authorizer):
    store(registry, authorizer, ACLS)
    resp = delete(
        services,
        3,
        filter_fields(rtype=RT.TOPIC, name="orders", pattern=PT.LITERAL, op=Op.READ),
        filter_fields(rtype=RT.TOPIC, name="orders", pattern=PT.LITERAL),
        filter_fields(rtype=RT.CLUSTER),
    )
    first, second, third = resp.filter_results
    assert deleted(first) == {row(P(RT.TOPIC, "orders"), ace("User:alice", Op.READ))}
    assert deleted(second) == {row(P(RT.TOPIC, "orders"), ace("User:bob", Op.WRITE, DENY, host="10.0.0.2"))}
    assert (third.error_code, third.matching_acls) == (ErrorCode.NONE, [])


def test_delete_keeps_what_another_broker_added_meanwhile(services, registry, authorizer):
    """The compare-and-set fails once (another broker added an ACL between the read and the write): the
    update runs again on what is stored now, deletes only what matches there, and keeps the new ACL."""
    store(registry, authorizer, ACLS)
    topic = P(RT.TOPIC, "orders")
    registry.conflicts[topic] = lambda current: current | {ace("User:erin", Op.READ)}
    (result,) = delete(
        services, 3, filter_fields(rtype=RT.TOPIC, name="orders", pattern=PT.LITERAL, principal="User:alice")
    ).filter_results
    assert deleted(result) == {row(topic, ace("User:alice", Op.READ))}
    stored = {ace("User:bob", Op.WRITE, DENY, host="10.0.0.2"), ace("User:erin", Op.READ)}
    assert registry.acls[topic] == stored
    assert authorizer.resource_acls(topic) == stored


def test_delete_by_an_exact_filter_reaches_acls_the_cache_has_not_seen_yet(services, registry, authorizer):
    store(registry, authorizer, {})
    topic = P(RT.TOPIC, "fresh")
    registry.acls[topic] = frozenset({ace("User:alice", Op.READ)})  # just written by another broker
    (result,) = delete(services, 3, filter_fields(rtype=RT.TOPIC, name="fresh", pattern=PT.LITERAL)).filter_results
    assert deleted(result) == {row(topic, ace("User:alice", Op.READ))}
    assert topic not in registry.acls


def test_delete_failure_reports_the_bindings_with_an_error_and_keeps_the_cache(services, registry, authorizer):
    store(registry, authorizer, ACLS)
    registry.failure = RegistryUnavailableError("ZooKeeper is unreachable")
    (result,) = delete(services, 3, filter_fields(rtype=RT.GROUP)).filter_results
    assert result.error_code == ErrorCode.NONE
    assert deleted(result) == expected(P(RT.GROUP, "orders"), P(RT.GROUP, "o", PT.PREFIXED))
    assert {m.error_code for m in result.matching_acls} == {ErrorCode.UNKNOWN_SERVER_ERROR}
    assert "unreachable" in result.matching_acls[0].error_message
    assert authorizer.resource_acls(P(RT.GROUP, "orders")) == set(ACLS[P(RT.GROUP, "orders")])


@pytest.mark.parametrize("field", ["resource_type_filter", "pattern_type_filter", "operation", "permission_type"])
def test_delete_with_code_0_is_malformed_and_closes_the_connection(services, registry, authorizer, field):
    store(registry, authorizer, ACLS)
    resp = delete(services, 3, filter_fields(), {**filter_fields(), field: 0})
    assert isinstance(resp, CloseConnection)
    assert registry.writes == []


def test_handlers_are_served_at_versions_0_to_3(services):
    ranges = {k: (lo, hi) for k, lo, hi in services.handlers.version_ranges()}
    assert [ranges[m.API_KEY] for m in (describe_acls, create_acls, delete_acls)] == [(0, 3)] * 3


# -- over the wire, two brokers on one in-process registry ---------------------------------------------------


@pytest.fixture(scope="module")
def secured_pair(tmp_path_factory):
    brokers = start_brokers(
        2,
        tmp_path_factory,
        **{"authorizer.class.name": "kafkalog.AclAuthorizer", "super.users": "User:ANONYMOUS"},
    )
    yield brokers
    for b in brokers:
        b.stop()


def test_acls_written_on_one_broker_are_seen_by_it_at_once_and_by_the_other_within_seconds(secured_pair):
    first, second = secured_pair
    name = f"wire-{id(secured_pair)}"
    only_it = filter_fields(rtype=RT.TOPIC, name=name, pattern=PT.LITERAL)
    with Wire(first.bootstrap_servers) as w1, Wire(second.bootstrap_servers) as w2:
        resp = w1.call(create_acls.API_KEY, 2, creations=[creation(name=name), creation(name="", op=Op.WRITE)])
        assert [r.error_code for r in resp.results] == [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]
        binding = row(P(RT.TOPIC, name), ace("User:alice", Op.READ))
        assert described(w1.call(describe_acls.API_KEY, 1, **only_it)) == {binding}
        wait_until(
            lambda: described(w2.call(describe_acls.API_KEY, 3, **only_it)) == {binding},
            what="the other broker's cache to apply the ACL change",
        )
        resp = w2.call(delete_acls.API_KEY, 0, filters=[DeleteFilter(**only_it)])
        assert deleted(resp.filter_results[0]) == {binding}
        wait_until(
            lambda: described(w1.call(describe_acls.API_KEY, 0, **only_it)) == set(),
            what="the first broker's cache to apply the deletion",
        )
