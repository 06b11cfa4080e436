"""ZooKeeperSession primitives against a real ZooKeeper server: node conditions arrive as our own errors (never
kazoo's), with the operation and path named; transactions, chroot, ownership and watches."""

from __future__ import annotations

import threading

import pytest
from kazoo.client import KazooClient

from broker.cluster.registry import RegistryError, RegistryUnavailableError, StaleStateError
from broker.cluster.zk_nodes import (
    BadVersionError,
    CheckOp,
    CreateOp,
    DeleteOp,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    SetOp,
)
from broker.cluster.zk_session import ZooKeeperSession
from tests.waiting import wait_until


@pytest.fixture
def chroot(zk_connect) -> str:
    return "/" + zk_connect.split("/", 1)[1]


@pytest.fixture
def session(zk_connect):
    s = ZooKeeperSession(zk_connect, session_timeout_ms=4000)
    s.start()
    yield s
    s.close()


@pytest.fixture
def raw(zookeeper, session):
    """A plain kazoo client on the server root (the session created the chroot)."""
    client = KazooClient(hosts=zookeeper.connect_string)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def assert_ours(exc_info) -> None:
    """The exception raised is ours (a ``RegistryError``), not kazoo's."""
    assert not type(exc_info.value).__module__.startswith("kazoo"), exc_info.value
    assert isinstance(exc_info.value, RegistryError)


def test_the_chroot_is_created_and_every_path_is_below_it(session, raw, chroot):
    assert session.chroot == chroot and raw.exists(chroot) is not None
    session.ensure_path("/a/b")
    session.create("/a/b/c", b"x")
    assert raw.get(f"{chroot}/a/b/c")[0] == b"x"
    assert session.children("/a/b") == ["c"]


def test_create_of_an_existing_node_raises_node_exists_naming_the_full_path(session, chroot):
    session.create("/n", b"1")
    with pytest.raises(NodeExistsError, match=f"ZooKeeper create {chroot}/n: node already exists") as info:
        session.create("/n", b"2")
    assert_ours(info)
    assert (info.value.operation, info.value.path) == ("create", "/n")
    assert session.get("/n")[0] == b"1"


def test_missing_nodes_raise_no_node_for_every_operation(session):
    for call in (
        lambda: session.get("/missing"),
        lambda: session.set("/missing", b""),
        lambda: session.delete("/missing"),
        lambda: session.children("/missing"),
        lambda: session.create("/missing/child", b""),
    ):
        with pytest.raises(NoNodeError, match="/missing") as info:
            call()
        assert_ours(info)
    assert session.exists("/missing") is None and session.get_if_exists("/missing") is None


def test_a_lost_compare_and_set_raises_bad_version_which_is_stale_state(session):
    session.create("/v", b"0")
    stat = session.set("/v", b"1", version=0)
    assert stat.version == 1
    with pytest.raises(BadVersionError, match="changed concurrently") as info:
        session.set("/v", b"2", version=0)
    assert_ours(info)
    assert isinstance(info.value, StaleStateError)
    with pytest.raises(BadVersionError):
        session.delete("/v", version=0)
    assert session.get("/v") == (b"1", stat)


def test_deleting_a_node_with_children_raises_not_empty_and_delete_tree_removes_it_all(session):
    session.ensure_path("/t/a/b")
    with pytest.raises(NotEmptyError, match="/t: node has children") as info:
        session.delete("/t")
    assert_ours(info)
    session.delete_tree("/t")
    session.delete_tree("/t")  # idempotent
    assert session.exists("/t") is None


def test_a_transaction_is_atomic_and_names_the_failing_operation(session):
    session.create("/exists", b"")
    with pytest.raises(NodeExistsError, match="multi CreateOp .*/exists: node already exists") as info:
        session.commit([CreateOp("/new", b"a"), CreateOp("/exists", b"b")])
    assert_ours(info)
    assert info.value.path == "/exists" and session.exists("/new") is None
    with pytest.raises(BadVersionError) as info:
        session.commit([CheckOp("/exists", 5), CreateOp("/new", b"a")])
    assert info.value.path == "/exists" and session.exists("/new") is None
    with pytest.raises(NoNodeError):
        session.commit([CheckOp("/nowhere", 0), CreateOp("/new", b"a")])
    results = session.commit(
        [
            CheckOp("/exists", 0),
            CreateOp("/new", b"a"),
            SetOp("/exists", b"x", 0),
            CreateOp("/seq-", b"", sequential=True),
        ]
    )
    assert results[:2] == [None, "/new"] and results[2].version == 1 and results[3].startswith("/seq-00")
    assert session.get("/exists")[0] == b"x" and session.get("/new")[0] == b"a"
    session.commit([DeleteOp("/new"), DeleteOp("/exists", 1)])
    assert session.exists("/new") is None and session.exists("/exists") is None


def test_sequential_create_returns_the_relative_path_with_its_sequence_number(session):
    session.ensure_path("/changes")
    created = session.create("/changes/change_", b"", sequential=True)
    assert created.startswith("/changes/change_") and len(created) == len("/changes/change_") + 10


def test_ephemeral_nodes_are_deleted_only_by_their_owner(session, zk_connect):
    other = ZooKeeperSession(zk_connect, session_timeout_ms=4000)
    other.start()
    try:
        other.create("/eph", b"", ephemeral=True)
        assert session.get("/eph")[1].ephemeral_owner == other.session_id
        assert session.delete_if_owned_by("/eph", session.session_id) is False
        assert session.delete_if_owned_by("/eph", None) is False
        assert session.delete_if_owned_by("/eph", other.session_id) is True  # e.g. a dead previous run's node
        assert session.delete_if_owned_by("/eph", other.session_id) is False
    finally:
        other.close()


def test_wait_for_change_returns_when_the_node_goes_or_the_time_is_up(session):
    assert session.wait_for_change("/absent", 5) is True
    session.create("/held", b"")
    assert session.wait_for_change("/held", 0.05) is False
    threading.Timer(0.2, lambda: session.delete("/held")).start()
    assert session.wait_for_change("/held", 10) is True


def test_watches_are_delivered_on_the_dispatcher_and_re_armed(session):
    seen, threads = [], set()

    def callback(value):
        threads.add(threading.current_thread().name)
        seen.append(value)

    subscription = session.watch("w", lambda w: session.get_if_exists("/w", w), callback)
    wait_until(lambda: seen == [None], 5, "the initial delivery")
    session.create("/w", b"1")
    wait_until(lambda: seen and seen[-1] and seen[-1][0] == b"1", 5, "the creation")
    session.set("/w", b"2")
    wait_until(lambda: seen[-1][0] == b"2", 5, "the change through the re-armed watch")
    subscription.cancel()
    count = len(seen)
    session.set("/w", b"3")
    session.get("/w")  # a round trip: a delivery would have been queued by now
    assert len(seen) == count and threads == {"zk-registry-dispatch"}


def test_re_reading_an_unchanged_node_with_the_same_watch_arms_it_once(session):
    session.create("/steady", b"")
    session.create("/moving", b"0")
    deliveries = []

    def read(watch):
        session.get("/steady", watch)
        return session.get("/moving", watch)[0]

    session.watch("two nodes", read, deliveries.append)
    wait_until(lambda: deliveries == [b"0"], 5, "the initial delivery")
    for i in range(1, 20):
        session.set("/moving", str(i).encode())
        wait_until(lambda i=i: deliveries[-1] == str(i).encode(), 5, f"change {i}")
    # kazoo keeps a path's watchers in a set: /steady, re-read 20 times with the same watch, holds one
    assert len(session._client._data_watchers[session.chroot + "/steady"]) == 1


def test_a_closed_session_refuses_operations_clearly(zk_connect):
    s = ZooKeeperSession(zk_connect, session_timeout_ms=4000)
    s.start()
    s.close()
    s.close()
    with pytest.raises(RegistryUnavailableError, match="get .*/x: registry is closed"):
        s.get("/x")
    with pytest.raises(RegistryUnavailableError, match="closed"):
        s.start()
