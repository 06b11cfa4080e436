"""ACL storage in ZooKeeper (Kafka's ZkAclStore layout) and its change notifications, against a real ZooKeeper
server, with the in-process registry held to the same behaviour."""

from __future__ import annotations

import json
import threading

import pytest
from kazoo.client import KazooClient

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import StaleStateError
from broker.cluster.zk_layout import acl_required_paths
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tests.waiting import wait_until

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED


def ace(principal: str, op: AclOperation = AclOperation.READ, perm=ALLOW, host: str = "*") -> AccessControlEntry:
    return AccessControlEntry(principal, host, op, perm)


def add(*entries: AccessControlEntry):
    return lambda current: current | frozenset(entries)


def remove(*entries: AccessControlEntry):
    return lambda current: current - frozenset(entries)


@pytest.fixture
def raw(zk_connect, make_registry):
    """A plain kazoo client on the test's chroot (created by a first registry), to inspect and write nodes."""
    make_registry()
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


@pytest.fixture(params=["zookeeper", "memory"])
def registries(request):
    """Factory of registries sharing one cluster: ZooKeeper (this test's chroot) or one in-process store."""
    if request.param == "zookeeper":
        yield request.getfixturevalue("make_registry")
        return
    store = MemoryRegistryStore()
    views = []

    def make():
        view = store.view()
        view.start()
        views.append(view)
        return view

    yield make
    for view in views:
        view.close()


# -- exact nodes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        (ResourcePattern(ResourceType.TOPIC, "foo", LITERAL), "/kafka-acl/Topic/foo"),
        (ResourcePattern(ResourceType.TOPIC, "*", LITERAL), "/kafka-acl/Topic/*"),
        (ResourcePattern(ResourceType.GROUP, "g-", PREFIXED), "/kafka-acl-extended/prefixed/Group/g-"),
        (ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", LITERAL), "/kafka-acl/Cluster/kafka-cluster"),
        (ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx", LITERAL), "/kafka-acl/TransactionalId/tx"),
        (ResourcePattern(ResourceType.DELEGATION_TOKEN, "t", LITERAL), "/kafka-acl/DelegationToken/t"),
        (ResourcePattern(ResourceType.USER, "User:bob", PREFIXED), "/kafka-acl-extended/prefixed/User/User:bob"),
    ],
)
def test_update_writes_kafkas_node_and_json(make_registry, raw, pattern, path):
    registry = make_registry()
    entries = frozenset(
        {ace("User:bob", AclOperation.DESCRIBE_CONFIGS), ace("User:alice", AclOperation.ALL, DENY, "10.0.0.1")}
    )
    assert registry.update_resource_acls(pattern, add(*entries)) == entries
    data, _ = raw.get(path)
    assert data == (
        b'{"version":1,"acls":['
        b'{"principal":"User:alice","permissionType":"Deny","operation":"All","host":"10.0.0.1"},'
        b'{"principal":"User:bob","permissionType":"Allow","operation":"DescribeConfigs","host":"*"}]}'
    )
    assert registry.resource_acls(pattern) == entries
    assert registry.all_acls() == {pattern: entries}


def test_node_deleted_when_its_last_acl_goes(make_registry, raw):
    registry = make_registry()
    pattern = ResourcePattern(ResourceType.TOPIC, "foo", LITERAL)
    a, b = ace("User:a"), ace("User:b", AclOperation.WRITE)
    registry.update_resource_acls(pattern, add(a, b))
    assert registry.update_resource_acls(pattern, remove(a)) == {b}
    assert json.loads(raw.get("/kafka-acl/Topic/foo")[0])["acls"] == [
        {"principal": "User:b", "permissionType": "Allow", "operation": "Write", "host": "*"}
    ]
    assert registry.update_resource_acls(pattern, remove(b)) == frozenset()
    assert raw.exists("/kafka-acl/Topic/foo") is None
    assert registry.resource_acls(pattern) == frozenset()
    assert registry.all_acls() == {}


def test_change_notices_have_kafkas_contents(make_registry, raw):
    registry = make_registry()
    registry.update_resource_acls(ResourcePattern(ResourceType.TOPIC, "foo", LITERAL), add(ace("User:a")))
    registry.update_resource_acls(
        ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx", LITERAL), add(ace("User:a", AclOperation.WRITE))
    )
    registry.update_resource_acls(ResourcePattern(ResourceType.GROUP, "g-", PREFIXED), add(ace("User:a")))
    literal = sorted(raw.get_children("/kafka-acl-changes"))
    assert [c[: len("acl_changes_")] for c in literal] == ["acl_changes_"] * 2
    assert all(len(c) == len("acl_changes_") + 10 and c[-10:].isdigit() for c in literal)
    assert [raw.get(f"/kafka-acl-changes/{c}")[0] for c in literal] == [b"TOPIC:foo", b"TRANSACTIONAL_ID:tx"]
    (extended,) = raw.get_children("/kafka-acl-extended-changes")
    assert raw.get(f"/kafka-acl-extended-changes/{extended}")[0] == (
        b'{"version":1,"resourceType":"GROUP","name":"g-","patternType":"PREFIXED"}'
    )


def test_unchanged_update_writes_nothing(make_registry, raw):
    registry = make_registry()
    pattern = ResourcePattern(ResourceType.TOPIC, "foo", LITERAL)
    registry.update_resource_acls(pattern, add(ace("User:a")))
    _, stat = raw.get("/kafka-acl/Topic/foo")
    notices = raw.get_children("/kafka-acl-changes")
    assert registry.update_resource_acls(pattern, add(ace("User:a"))) == {ace("User:a")}
    assert registry.update_resource_acls(ResourcePattern(ResourceType.TOPIC, "bar"), remove(ace("User:a"))) == set()
    assert raw.get("/kafka-acl/Topic/foo")[1].version == stat.version
    assert raw.get_children("/kafka-acl-changes") == notices
    assert raw.exists("/kafka-acl/Topic/bar") is None


def test_reads_acls_kafka_wrote_with_other_spellings(make_registry, raw):
    """Kafka's tools may write the enum constants (parse accepts both) and nodes with no ACL left."""
    registry = make_registry()
    raw.ensure_path("/kafka-acl-extended/prefixed/Topic")
    raw.create(
        "/kafka-acl-extended/prefixed/Topic/pay",
        b'{"version":1,"acls":[{"principal":"User:x","permissionType":"ALLOW","operation":"IDEMPOTENT_WRITE",'
        b'"host":"*"},{"host":"1.2.3.4","operation":"ClusterAction","permissionType":"Deny","principal":"User:y"}]}',
    )
    raw.ensure_path("/kafka-acl/Group/empty")
    pattern = ResourcePattern(ResourceType.TOPIC, "pay", PREFIXED)
    expected = {
        ace("User:x", AclOperation.IDEMPOTENT_WRITE),
        ace("User:y", AclOperation.CLUSTER_ACTION, DENY, "1.2.3.4"),
    }
    assert registry.resource_acls(pattern) == expected
    assert registry.all_acls() == {pattern: expected}


@pytest.mark.parametrize("name", ["a/b", "", "..", "."])
def test_names_that_cannot_be_a_node_are_refused(registries, name):
    registry = registries()
    pattern = ResourcePattern(ResourceType.TOPIC, name, LITERAL)
    with pytest.raises(ValueError, match="invalid ACL resource name"):
        registry.update_resource_acls(pattern, add(ace("User:a")))
    with pytest.raises(ValueError, match="invalid ACL resource name"):
        registry.resource_acls(pattern)


@pytest.mark.parametrize(
    "pattern",
    [ResourcePattern(ResourceType.ANY, "foo", LITERAL), ResourcePattern(ResourceType.TOPIC, "foo", PatternType.MATCH)],
)
def test_patterns_no_acl_can_have_are_refused(registries, pattern):
    with pytest.raises(ValueError):
        registries().update_resource_acls(pattern, add(ace("User:a")))


# -- concurrency ----------------------------------------------------------------------------------------


def test_two_concurrent_writers_lose_no_acl(registries):
    """Kafka's testDistributedConcurrentModificationOfResourceAcls: two brokers each add 10 ACLs to one resource
    at the same time; every one of them is stored."""
    first, second = registries(), registries()
    pattern = ResourcePattern(ResourceType.TOPIC, "shared", LITERAL)
    errors: list[BaseException] = []

    def writer(registry, who: str) -> None:
        try:
            for i in range(10):
                registry.update_resource_acls(pattern, add(ace(f"User:{who}{i}")))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(r, w)) for r, w in ((first, "a"), (second, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    expected = {ace(f"User:{w}{i}") for w in "ab" for i in range(10)}
    assert first.resource_acls(pattern) == expected
    assert second.all_acls() == {pattern: expected}


def test_an_update_that_keeps_losing_gives_up(make_registry, raw):
    """update is re-run on the current set after every lost compare-and-set; a node that moves on every attempt
    makes the update fail after 10 attempts rather than loop for ever."""
    registry = make_registry()
    pattern = ResourcePattern(ResourceType.TOPIC, "busy", LITERAL)
    registry.update_resource_acls(pattern, add(ace("User:seed")))
    calls = []

    def interfering(current):
        calls.append(current)
        raw.set("/kafka-acl/Topic/busy", raw.get("/kafka-acl/Topic/busy")[0])  # bumps the version
        return current | {ace("User:late")}

    with pytest.raises(StaleStateError, match="gave up after 10 attempts"):
        registry.update_resource_acls(pattern, interfering)
    assert len(calls) == 10
    assert registry.resource_acls(pattern) == {ace("User:seed")}


# -- notifications ----------------------------------------------------------------------------------------


def test_acl_changes_since_names_the_changed_patterns(registries):
    registry = registries()
    literal_seq, literal = registry.acl_changes_since(-1, False)
    extended_seq, extended = registry.acl_changes_since(-1, True)
    assert literal is None and extended is None  # no position yet: read everything
    foo = ResourcePattern(ResourceType.TOPIC, "foo", LITERAL)
    pre = ResourcePattern(ResourceType.GROUP, "g-", PREFIXED)
    registry.update_resource_acls(foo, add(ace("User:a")))
    if literal_seq < 0:  # no notice existed: the first one gives the position
        literal_seq, _ = registry.acl_changes_since(-1, False)
    registry.update_resource_acls(foo, add(ace("User:b")))
    registry.update_resource_acls(pre, add(ace("User:a")))
    registry.update_resource_acls(foo, remove(ace("User:a"), ace("User:b")))
    seq, patterns = registry.acl_changes_since(literal_seq, False)
    assert patterns == [foo, foo] and seq > literal_seq
    assert registry.acl_changes_since(seq, False) == (seq, [])
    _, patterns = registry.acl_changes_since(extended_seq, True)
    assert patterns is None or patterns == [pre]


def test_on_acl_changes_fires_for_both_directories(registries):
    registry = registries()
    calls = []
    sub = registry.on_acl_changes(lambda: calls.append(1))
    wait_until(lambda: len(calls) >= 1, 5, "the delivery at registration")
    before = len(calls)
    registry.update_resource_acls(ResourcePattern(ResourceType.TOPIC, "t", LITERAL), add(ace("User:a")))
    wait_until(lambda: len(calls) > before, 5, "a delivery after a literal change")
    before = len(calls)
    registries().update_resource_acls(ResourcePattern(ResourceType.TOPIC, "t", PREFIXED), add(ace("User:a")))
    wait_until(lambda: len(calls) > before, 5, "a delivery after a prefixed change by another broker")
    sub.cancel()


def test_on_acl_changes_creates_kafkas_acl_paths(make_registry, raw):
    make_registry().on_acl_changes(lambda: None)
    for path in acl_required_paths():
        assert raw.exists(path) is not None, path


def test_a_notice_written_by_hand_is_seen(make_registry, raw):
    """kafka-acls (or a Kafka broker) writes the node and a sequential notice itself."""
    registry = make_registry()
    calls = []
    registry.on_acl_changes(lambda: calls.append(1))
    wait_until(lambda: calls, 5, "the delivery at registration")
    position, _ = registry.acl_changes_since(-1, False)
    raw.create("/kafka-acl-changes/acl_changes_", b"Topic:seed", sequence=True)  # Kafka writes TOPIC; both parse
    position, _ = registry.acl_changes_since(position, False)
    raw.create("/kafka-acl/Topic/hand", b'{"version":1,"acls":[]}')
    raw.create("/kafka-acl-changes/acl_changes_", b"TOPIC:hand", sequence=True)
    wait_until(lambda: len(calls) >= 3, 5, "deliveries for the notices")
    assert registry.acl_changes_since(position, False)[1] == [ResourcePattern(ResourceType.TOPIC, "hand", LITERAL)]
    raw.create("/kafka-acl-changes/acl_changes_", b"not a notice", sequence=True)
    assert registry.acl_changes_since(position, False)[1] is None  # undecodable: read everything again


def test_old_notices_are_purged_by_the_next_writer(make_registry, raw, monkeypatch):
    from broker.cluster import zk_layout

    registry = make_registry()
    foo = ResourcePattern(ResourceType.TOPIC, "foo", LITERAL)
    registry.update_resource_acls(foo, add(ace("User:a")))
    (old,) = raw.get_children("/kafka-acl-changes")
    monkeypatch.setattr(zk_layout, "ACL_CHANGE_EXPIRY_S", -60)  # every notice counts as older than the expiry
    registry.update_resource_acls(foo, add(ace("User:b")))
    (newest,) = raw.get_children("/kafka-acl-changes")  # the newest notice is kept, however old
    assert newest > old
    position, patterns = registry.acl_changes_since(int(old[-10:]), False)
    assert patterns is None  # notices after the position may be gone: read everything again


def test_memory_notices_expire_too(monkeypatch):
    from broker.cluster import memory_registry

    assert memory_registry.ACL_CHANGE_EXPIRY_S == 15 * 60
    registry = MemoryRegistryStore().view()
    registry.start()
    try:
        foo = ResourcePattern(ResourceType.TOPIC, "foo", LITERAL)
        registry.update_resource_acls(foo, add(ace("User:a")))
        position, _ = registry.acl_changes_since(-1, False)
        registry.update_resource_acls(foo, add(ace("User:b")))
        assert registry.acl_changes_since(position, False) == (position + 1, [foo])
        monkeypatch.setattr(memory_registry, "ACL_CHANGE_EXPIRY_S", -1)  # every notice has expired
        registry.update_resource_acls(foo, add(ace("User:c")))
        assert registry.acl_changes_since(position + 1, False) == (position + 2, None)  # position + 2 is gone
        assert registry.acl_changes_since(position + 2, False) == (position + 2, [])
    finally:
        registry.close()
