"""AclSync fills the authorizer's cache from the registry: everything at start-up (before ``ready``), then the
resources named by change notices, everything again after a session re-establishment or missed notices; on the
in-process registry, and on a real ZooKeeper with nodes and notices written as Kafka's tools write them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import uuid
from collections.abc import Callable

import pytest
from kazoo.client import KazooClient

import broker.server
from broker.cluster import memory_registry
from broker.cluster.memory_registry import MemoryRegistry, MemoryRegistryStore
from broker.cluster.registry import RegistryUnavailableError, Subscription
from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.security import acl_sync
from broker.security.acl_sync import AclSync
from broker.security.authorizer import AclAuthorizer
from broker.server import EmbeddedBroker
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from tests.waiting import wait_until, wait_until_async

FOO = ResourcePattern(ResourceType.TOPIC, "foo", PatternType.LITERAL)
BAR = ResourcePattern(ResourceType.TOPIC, "bar", PatternType.LITERAL)
PAY = ResourcePattern(ResourceType.GROUP, "pay-", PatternType.PREFIXED)


def ace(principal: str, op: AclOperation = AclOperation.READ) -> AccessControlEntry:
    return AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW)


def add(*entries: AccessControlEntry):
    return lambda current: current | frozenset(entries)


class SpyAuthorizer(AclAuthorizer):
    """An enabled authorizer recording what AclSync hands it (thread-safe enough: lists append atomically)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["enabled"] = True
        super().__init__(*args, **kwargs)
        self.calls: list[tuple] = []

    @classmethod
    def from_config(cls, config) -> SpyAuthorizer:
        return cls()

    def replace_all(self, acls) -> None:
        self.calls.append(("replace_all", {p: frozenset(e) for p, e in acls.items()}))
        super().replace_all(acls)

    def update_resource(self, pattern, entries) -> None:
        self.calls.append(("update_resource", pattern, frozenset(entries)))
        super().update_resource(pattern, entries)


class SessionRegistry(MemoryRegistry):
    """The in-process registry with a session re-establishment a test can trigger."""

    def __init__(self, store: MemoryRegistryStore) -> None:
        super().__init__(store)
        self.session_callbacks: list[Callable[[], None]] = []
        self.fail_reads = 0

    def on_session_reestablished(self, callback) -> Subscription:
        self.session_callbacks.append(callback)
        return Subscription()

    def all_acls(self):
        if self.fail_reads:
            self.fail_reads -= 1
            raise RegistryUnavailableError("ZooKeeper is away (test)")
        return super().all_acls()


def run_sync(registry, authorizer, body) -> None:
    """Run ``body(sync)`` on a fresh event loop with a started AclSync (stopped afterwards)."""
    pool = concurrent.futures.ThreadPoolExecutor(2)

    async def run_blocking(fn, *args):
        return await asyncio.get_running_loop().run_in_executor(pool, functools.partial(fn, *args))

    async def main() -> None:
        sync = AclSync(registry, authorizer, run_blocking)
        sync.start()
        try:
            await asyncio.wait_for(sync.ready.wait(), 10)
            await body(sync)
        finally:
            await sync.stop()

    try:
        asyncio.run(main())
    finally:
        pool.shutdown()


@pytest.fixture
def store():
    return MemoryRegistryStore()


@pytest.fixture
def registries(store):
    views: list[SessionRegistry] = []

    def make() -> SessionRegistry:
        view = SessionRegistry(store)
        view.start()
        views.append(view)
        return view

    yield make
    for view in views:
        view.close()


def test_every_acl_is_loaded_before_ready_then_only_named_resources(registries):
    writer, registry, spy = registries(), registries(), SpyAuthorizer()
    writer.update_resource_acls(FOO, add(ace("User:a")))
    writer.update_resource_acls(PAY, add(ace("User:b")))

    async def body(sync: AclSync) -> None:
        assert spy.calls == [("replace_all", {FOO: {ace("User:a")}, PAY: {ace("User:b")}})]
        del spy.calls[:]
        writer.update_resource_acls(FOO, add(ace("User:c", AclOperation.WRITE)))
        writer.update_resource_acls(PAY, lambda _current: frozenset())
        await wait_until_async(lambda: len(spy.calls) >= 2, 5, "two updates")
        assert len(spy.calls) == 2
        assert ("update_resource", FOO, {ace("User:a"), ace("User:c", AclOperation.WRITE)}) in spy.calls
        assert ("update_resource", PAY, frozenset()) in spy.calls

    run_sync(registry, spy, body)


def test_missed_notices_reload_everything(registries, monkeypatch):
    writer, registry, spy = registries(), registries(), SpyAuthorizer()
    writer.update_resource_acls(FOO, add(ace("User:a")))

    async def body(sync: AclSync) -> None:
        del spy.calls[:]
        monkeypatch.setattr(memory_registry, "ACL_CHANGE_EXPIRY_S", -1)  # notices vanish as soon as written
        writer.update_resource_acls(BAR, add(ace("User:b")))
        await wait_until_async(lambda: spy.calls, 5, "a reload")
        await asyncio.sleep(0.2)  # a wake-up still queued may reload once more: the same content
        expected = ("replace_all", {FOO: {ace("User:a")}, BAR: {ace("User:b")}})
        assert spy.calls and all(call == expected for call in spy.calls), spy.calls

    run_sync(registry, spy, body)


def test_a_session_reestablishment_reloads_everything(registries):
    writer, registry, spy = registries(), registries(), SpyAuthorizer()
    writer.update_resource_acls(FOO, add(ace("User:a")))

    async def body(sync: AclSync) -> None:
        del spy.calls[:]
        with registry.store.lock:  # a change whose notice never arrives (as while a session was lost)
            registry.store.acls[BAR] = frozenset({ace("User:b")})
        (callback,) = registry.session_callbacks
        callback()  # as the registry's dispatcher thread would
        await wait_until_async(lambda: spy.calls, 5, "a reload")
        assert spy.calls == [("replace_all", {FOO: {ace("User:a")}, BAR: {ace("User:b")}})]

    run_sync(registry, spy, body)


def test_a_failed_first_load_is_retried_and_ready_waits_for_it(registries, monkeypatch):
    monkeypatch.setattr(acl_sync, "RETRY_S", 0.05)
    writer, registry, spy = registries(), registries(), SpyAuthorizer()
    writer.update_resource_acls(FOO, add(ace("User:a")))
    registry.fail_reads = 2

    async def body(sync: AclSync) -> None:
        assert registry.fail_reads == 0
        assert spy.calls == [("replace_all", {FOO: {ace("User:a")}})]

    run_sync(registry, spy, body)


def test_the_first_notice_after_none_reloads_then_single_resources(registries):
    """With no notice at start-up there is no position: the first one makes the broker read everything (others
    may have been purged before it), the following ones only their resources."""
    writer, registry, spy = registries(), registries(), SpyAuthorizer()

    async def body(sync: AclSync) -> None:
        assert spy.calls == [("replace_all", {})]
        writer.update_resource_acls(FOO, add(ace("User:a")))
        await wait_until_async(lambda: len(spy.calls) == 2, 5, "a reload")
        assert spy.calls[1] == ("replace_all", {FOO: {ace("User:a")}})
        writer.update_resource_acls(BAR, add(ace("User:b")))
        await wait_until_async(lambda: len(spy.calls) == 3, 5, "an update")
        assert spy.calls[2] == ("update_resource", BAR, {ace("User:b")})

    run_sync(registry, spy, body)


def running(embedded: EmbeddedBroker) -> broker.server.Broker:
    assert embedded.broker is not None, "started"
    return embedded.broker


def spy_of(embedded: EmbeddedBroker) -> SpyAuthorizer:
    authorizer = running(embedded).authorizer
    assert isinstance(authorizer, SpyAuthorizer)
    return authorizer


def test_no_sync_without_an_authorizer(tmp_path):
    with EmbeddedBroker(1, log_dir=tmp_path, zookeeper_connect=f"memory:acl-sync-{uuid.uuid4().hex}") as b:
        assert not running(b).authorizer.enabled and running(b).acl_sync is None


# -- on a real ZooKeeper, as Kafka's tools write ------------------------------------------------------------


@pytest.fixture
def chroot(zookeeper):
    connect = f"{zookeeper.connect_string}/acl-sync-{uuid.uuid4().hex[:10]}"
    root = KazooClient(hosts=zookeeper.connect_string, timeout=10)
    root.start(timeout=10)
    root.ensure_path(connect[len(zookeeper.connect_string) :])
    root.stop()
    root.close()
    return connect


@pytest.fixture
def raw(chroot):
    client = KazooClient(hosts=chroot, timeout=10)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_brokers_follow_acls_written_by_hand_and_by_each_other(chroot, raw, tmp_path, monkeypatch):
    monkeypatch.setattr(broker.server, "AclAuthorizer", SpyAuthorizer)
    raw.create(
        "/kafka-acl/Topic/foo",
        b'{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Read","host":"*"}]}',
        makepath=True,
    )
    raw.create("/kafka-acl-changes/acl_changes_", b"TOPIC:foo", makepath=True, sequence=True)
    brokers = [EmbeddedBroker(i, zookeeper_connect=chroot, log_dir=tmp_path / f"b{i}").start() for i in (1, 2)]
    try:
        spies = [spy_of(b) for b in brokers]
        for spy in spies:
            assert running(brokers[0]).acl_sync is not None
            assert spy.calls == [("replace_all", {FOO: {ace("User:a")}})]
            del spy.calls[:]

        # as kafka-acls --authorizer-properties zookeeper.connect=... --add --allow-principal User:b
        #   --operation Describe --resource-pattern-type prefixed --group pay-
        raw.create(
            "/kafka-acl-extended/prefixed/Group/pay-",
            b'{"version":1,"acls":[{"principal":"User:b","permissionType":"Allow","operation":"Describe","host":"*"}]}',
            makepath=True,
        )
        raw.create(
            "/kafka-acl-extended-changes/acl_changes_",
            b'{"version":1,"resourceType":"GROUP","name":"pay-","patternType":"PREFIXED"}',
            makepath=True,
            sequence=True,
        )
        for i, spy in enumerate(spies, 1):
            wait_until(functools.partial(lambda s: s.calls, spy), 10, f"broker {i} applying the hand-written notice")
        # the first extended notice follows none: a broker may read everything once, never loses the ACL
        for i, spy in enumerate(spies, 1):
            assert spy.calls[-1] in (
                ("update_resource", PAY, {ace("User:b", AclOperation.DESCRIBE)}),
                ("replace_all", {FOO: {ace("User:a")}, PAY: {ace("User:b", AclOperation.DESCRIBE)}}),
            ), f"broker {i}: {spy.calls}"
            del spy.calls[:]

        # a write through broker 1's registry (as CreateAcls does) reaches broker 2 as a single-resource update
        registry = running(brokers[0]).registry
        assert registry is not None
        registry.update_resource_acls(FOO, add(ace("User:c", AclOperation.WRITE)))
        expected = ("update_resource", FOO, {ace("User:a"), ace("User:c", AclOperation.WRITE)})
        for i, spy in enumerate(spies, 1):
            wait_until(functools.partial(lambda s: expected in s.calls, spy), 10, f"broker {i} re-reading topic foo")
    finally:
        for b in brokers:
            b.stop()


def test_a_session_expiry_reloads_every_acl(chroot, raw, tmp_path, monkeypatch):
    monkeypatch.setattr(broker.server, "AclAuthorizer", SpyAuthorizer)
    embedded = EmbeddedBroker(1, zookeeper_connect=chroot, log_dir=tmp_path, zookeeper_session_timeout_ms=2000)
    embedded.start()
    try:
        spy, registry = spy_of(embedded), running(embedded).registry
        assert isinstance(registry, ZooKeeperRegistry)
        registry.update_resource_acls(FOO, add(ace("User:a")))
        wait_until(lambda: len(spy.calls) >= 2, 10, "the first change applied")  # (the first notice: a reload)
        del spy.calls[:]
        session_id, password = registry.client_id or (0, b"")
        thief = KazooClient(hosts=chroot, client_id=(session_id, password))  # closing it expires the session
        thief.start(timeout=10)
        thief.stop()
        thief.close()
        wait_until(lambda: registry.session_id not in (None, session_id), 20, "a new session")
        wait_until(lambda: ("replace_all", {FOO: {ace("User:a")}}) in spy.calls, 10, "every ACL read again")
    finally:
        embedded.stop()
