"""ZooKeeperRegistry against a real ZooKeeper server (one chroot per test)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker.cluster.registry import (
    BrokerIdInUseError,
    BrokerInfo,
    NoSuchTopicError,
    PartitionState,
    RegistryUnavailableError,
    StaleStateError,
    TopicAssignment,
    TopicExistsError,
    uuid_to_base64,
)
from broker.cluster.zk_registry import ZooKeeperRegistry, parse_connect_string
from broker.cluster.zookeeper_server import ZooKeeperServer
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]


class Recorder:
    """A watch callback that records every delivery."""

    def __init__(self) -> None:
        self.values: list = []
        self._lock = threading.Lock()

    def __call__(self, value=None) -> None:
        with self._lock:
            self.values.append(value)

    @property
    def last(self):
        with self._lock:
            return self.values[-1] if self.values else None

    def wait(self, predicate, timeout: float = 5.0, message: str = "a delivery"):
        return wait_until(lambda: self.values and predicate(self.last), timeout, message)


@pytest.fixture
def raw(zk_connect, make_registry):
    """A plain kazoo client on the test's chroot (created by a first registry), to inspect nodes."""
    make_registry()
    client = KazooClient(hosts=zk_connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def expire_session(registry: ZooKeeperRegistry, hosts: str) -> None:
    """Expire the registry's session on the server: attach a second client to it, then close that client."""
    session_id, password = registry.client_id
    thief = KazooClient(hosts=hosts, client_id=(session_id, password))
    thief.start(timeout=10)
    thief.stop()
    thief.close()


BROKER = BrokerInfo(1, "broker1.example", 9092, rack="r1")


# -- connect string ----------------------------------------------------------------------------------


def test_connect_string_splits_hosts_and_chroot():
    assert parse_connect_string("a:1,b:2/kafka/prod/") == ("a:1,b:2", "/kafka/prod")
    assert parse_connect_string("a:2181") == ("a:2181", "")
    for bad in ("", "/chroot", "a", "a:x", "a:1//b", "a:1/./b"):
        with pytest.raises(ValueError):
            parse_connect_string(bad)


# -- brokers -----------------------------------------------------------------------------------------


def test_broker_node_is_ephemeral_kafka_json(make_registry, raw):
    registry = make_registry()
    registry.register_broker(BROKER)
    data, stat = raw.get("/brokers/ids/1")
    node = json.loads(data)
    assert stat.ephemeralOwner == registry.session_id
    assert node["version"] == 5 and node["host"] == "broker1.example" and node["port"] == 9092
    assert node["endpoints"] == ["PLAINTEXT://broker1.example:9092"] and node["rack"] == "r1"
    assert node["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"} and node["jmx_port"] == -1
    assert isinstance(node["timestamp"], str) and node["timestamp"].isdigit()
    assert make_registry().live_brokers() == {1: BROKER}
    registry.deregister_broker()
    assert raw.exists("/brokers/ids/1") is None


def test_duplicate_broker_id_is_refused_naming_the_id_and_the_holder(make_registry):
    make_registry().register_broker(BROKER)
    other = make_registry()
    with pytest.raises(BrokerIdInUseError, match=r"broker.id 1 is already registered by broker1.example:9092"):
        other.register_broker(BrokerInfo(1, "other.example", 9093))
    other.register_broker(BrokerInfo(2, "other.example", 9093))  # the registry stays usable
    assert sorted(other.live_brokers()) == [1, 2]


def test_registration_can_wait_for_the_previous_holder_to_vanish(make_registry):
    first = make_registry()
    first.register_broker(BROKER)
    second = make_registry(registration_wait_ms=5000)
    threading.Timer(0.3, first.close).start()
    started = time.monotonic()
    second.register_broker(BrokerInfo(1, "restarted.example", 9092))
    assert 0.2 < time.monotonic() - started < 5
    assert second.live_brokers()[1].host == "restarted.example"


def test_broker_node_vanishes_after_the_session_timeout_when_the_registrant_is_killed(zk_connect, make_registry):
    watcher = make_registry()
    brokers = Recorder()
    watcher.on_brokers_changed(brokers)
    code = textwrap.dedent(f"""
        import time
        from broker.cluster.zk_registry import ZooKeeperRegistry
        from broker.cluster.registry import BrokerInfo
        registry = ZooKeeperRegistry({zk_connect!r}, session_timeout_ms=1000)
        registry.start()
        registry.register_broker(BrokerInfo(7, "doomed.example", 9092))
        print("registered", flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "registered"
        brokers.wait(lambda b: 7 in b, message="broker 7 to appear")
    finally:
        child.kill()
        child.wait()
    killed = time.monotonic()
    brokers.wait(lambda b: 7 not in b, timeout=8, message="broker 7 to vanish")
    assert time.monotonic() - killed < 8
    assert watcher.live_brokers() == {}


def test_session_expiry_re_registers_the_broker_and_drops_controllership(zookeeper, make_registry, raw):
    registry = make_registry(session_timeout_ms=2000)
    registry.register_broker(BROKER)
    assert registry.try_become_controller(1) == 1
    controller, reestablished, brokers = Recorder(), Recorder(), Recorder()
    registry.on_controller_changed(controller)
    registry.on_brokers_changed(brokers)
    registry.on_session_reestablished(reestablished)
    controller.wait(lambda c: c == 1)
    brokers.wait(lambda b: 1 in b)
    deliveries_before = len(controller.values)
    old_session = registry.session_id

    expire_session(registry, zookeeper.connect_string)

    wait_until(lambda: reestablished.values, 10, "on_session_reestablished")
    assert registry.session_id != old_session
    assert controller.values[deliveries_before:] and controller.last is None  # told it is no longer controller
    observer = make_registry()
    assert observer.live_brokers() == {1: BROKER}  # re-created before the callback ran ...
    assert raw.get("/brokers/ids/1")[1].ephemeralOwner == registry.session_id  # ... by the new session
    assert observer.controller_id() is None
    brokers.wait(lambda b: 1 in b)  # watches re-armed on the new session ...
    observer.register_broker(BrokerInfo(2, "b2.example", 9092))
    brokers.wait(lambda b: sorted(b) == [1, 2], message="a change seen through the re-armed watch")
    assert registry.try_become_controller(1) == 2  # ... and the registry works normally


def test_operations_fail_fast_while_disconnected_and_watches_resume_after_reconnection(tmp_path):
    server = ZooKeeperServer(tmp_path, tick_time_ms=200, force_sync=False).start()
    try:
        registry = ZooKeeperRegistry(server.connect_string + "/outage", session_timeout_ms=15000)
        registry.start()
        topics, states = Recorder(), []
        registry.on_topics_changed(topics)
        registry.on_session_reestablished(lambda: states.append("reestablished"))
        topics.wait(lambda t: t == {})
        session = registry.session_id
        server.stop()
        wait_until(lambda: not registry.connected, 5, "the registry to notice the outage")
        started = time.monotonic()
        with pytest.raises(RegistryUnavailableError, match="not connected"):
            registry.topics()
        with pytest.raises(RegistryUnavailableError):
            registry.create_topic(TopicAssignment("t", {0: (1,)}), {})
        assert time.monotonic() - started < 1.0
        server.start()  # same port, same data dir: the session survives
        wait_until(lambda: registry.connected, 10, "reconnection")
        assert registry.session_id == session and states == []
        with ZooKeeperRegistry(server.connect_string + "/outage") as other:
            other.create_topic(TopicAssignment("t", {0: (1,)}), {})
        topics.wait(lambda t: "t" in t, message="a topic seen through the re-armed watch")
        registry.close()
    finally:
        server.stop()


# -- topics ------------------------------------------------------------------------------------------


def test_create_topic_writes_assignment_and_config_in_one_transaction(make_registry, raw):
    registry = make_registry()
    assignment = TopicAssignment("orders", {0: (1, 2), 1: (2, 1)})
    registry.create_topic(assignment, {"cleanup.policy": "compact", "retention.ms": 1000})
    assert registry.topic("orders") == assignment
    assert registry.topics() == {"orders": assignment}
    assert registry.topic_config("orders") == {"cleanup.policy": "compact", "retention.ms": "1000"}
    node = json.loads(raw.get("/brokers/topics/orders")[0])
    assert node == {
        "version": 3,
        "topic_id": uuid_to_base64(assignment.topic_id),
        "partitions": {"0": [1, 2], "1": [2, 1]},
        "adding_replicas": {},
        "removing_replicas": {},
    }
    assert json.loads(raw.get("/config/topics/orders")[0]) == {
        "version": 1,
        "config": {"cleanup.policy": "compact", "retention.ms": "1000"},
    }
    with pytest.raises(TopicExistsError, match="'orders' already exists"):
        registry.create_topic(TopicAssignment("orders", {0: (3,)}), {})
    assert registry.topic("orders") == assignment


def test_a_conflicting_create_topic_writes_nothing(make_registry, raw):
    registry = make_registry()
    raw.create("/config/topics/leftover", b'{"version":1,"config":{}}')  # e.g. a half-deleted topic
    with pytest.raises(TopicExistsError):
        registry.create_topic(TopicAssignment("leftover", {0: (1,)}), {"x": "y"})
    assert raw.exists("/brokers/topics/leftover") is None
    assert json.loads(raw.get("/config/topics/leftover")[0])["config"] == {}


def test_invalid_topic_names_are_rejected_before_touching_zookeeper(make_registry):
    registry = make_registry()
    for bad in ("a/b", "", ".", "..", "x" * 250, "spa ce"):
        with pytest.raises(ValueError, match="invalid topic name"):
            registry.create_topic(TopicAssignment(bad, {0: (1,)}), {})


def test_topic_config_can_be_replaced_and_announces_the_change(make_registry, raw):
    registry = make_registry()
    with pytest.raises(NoSuchTopicError):
        registry.topic_config("nope")
    with pytest.raises(NoSuchTopicError):
        registry.set_topic_config("nope", {})
    registry.create_topic(TopicAssignment("t", {0: (1,)}), {})
    assert registry.topic_config("t") == {}
    registry.set_topic_config("t", {"segment.bytes": "1024"})
    assert registry.topic_config("t") == {"segment.bytes": "1024"}
    (change,) = raw.get_children("/config/changes")
    assert change.startswith("config_change_") and len(change) == len("config_change_") + 10
    assert json.loads(raw.get(f"/config/changes/{change}")[0]) == {"version": 2, "entity_path": "topics/t"}


def test_set_topic_config_creates_the_config_node_of_a_topic_that_has_none(make_registry, raw):
    registry = make_registry()
    raw.create("/brokers/topics/bare", TopicAssignment("bare", {0: (1,)}).to_json().encode())  # no config node
    assert registry.topic_config("bare") == {}
    registry.set_topic_config("bare", {"retention.ms": "5"})
    assert json.loads(raw.get("/config/topics/bare")[0]) == {"version": 1, "config": {"retention.ms": "5"}}


def interleave(registry, path: str, action) -> list:
    """Run ``action()`` right after the registry's next check whether ``path`` exists (a concurrent writer).

    Returns the list of what that check answered (to assert the interleaving really happened).
    """
    session = registry._zk
    real_exists, answers = session.exists, []

    def exists(p, watch=None):
        answer = real_exists(p, watch)
        if p == path and not answers:
            answers.append(answer)
            action()
        return answer

    session.exists = exists
    return answers


def test_set_topic_config_updates_a_config_node_created_concurrently(make_registry, raw):
    registry = make_registry()
    raw.create("/brokers/topics/t", TopicAssignment("t", {0: (1,)}).to_json().encode())
    answers = interleave(
        registry,
        "/config/topics/t",
        lambda: raw.create("/config/topics/t", b'{"version":1,"config":{"other":"writer"}}'),
    )
    registry.set_topic_config("t", {"segment.bytes": "1024"})
    assert answers == [None]  # the registry saw no config node, then another writer created one
    assert registry.topic_config("t") == {"segment.bytes": "1024"}
    assert len(raw.get_children("/config/changes")) == 1


def test_set_topic_config_creates_a_config_node_deleted_concurrently(make_registry, raw):
    registry = make_registry()
    registry.create_topic(TopicAssignment("t", {0: (1,)}), {"old": "1"})
    answers = interleave(registry, "/config/topics/t", lambda: raw.delete("/config/topics/t"))
    registry.set_topic_config("t", {"new": "2"})
    assert answers and answers[0] is not None
    assert registry.topic_config("t") == {"new": "2"}


def test_set_topic_config_on_a_topic_deleted_concurrently_writes_nothing(make_registry, raw):
    registry = make_registry()
    registry.create_topic(TopicAssignment("t", {0: (1,)}), {"old": "1"})
    interleave(registry, "/config/topics/t", lambda: registry.remove_topic("t"))
    with pytest.raises(NoSuchTopicError):
        registry.set_topic_config("t", {"new": "2"})
    assert raw.exists("/config/topics/t") is None and raw.get_children("/config/changes") == []


def test_add_partitions_extends_the_assignment_and_checks_ids(make_registry):
    registry = make_registry()
    original = TopicAssignment("t", {0: (1,), 1: (2,)})
    registry.create_topic(original, {})
    with pytest.raises(ValueError, match=r"must be \[2\]"):
        registry.add_partitions("t", {3: (1,)})
    with pytest.raises(NoSuchTopicError):
        registry.add_partitions("missing", {0: (1,)})
    updated = registry.add_partitions("t", {2: (1,), 3: (2,)})
    assert updated.partitions == {0: (1,), 1: (2,), 2: (1,), 3: (2,)}
    assert updated.topic_id == original.topic_id
    assert registry.topic("t") == updated


def test_topic_deletion_marker_and_removal(make_registry, raw):
    registry = make_registry()
    with pytest.raises(NoSuchTopicError):
        registry.mark_topic_for_deletion("t")
    registry.create_topic(TopicAssignment("t", {0: (1,)}), {"a": "b"})
    registry.create_partition_state("t", 0, PartitionState(1, 0, (1,), 1))
    registry.mark_topic_for_deletion("t")
    registry.mark_topic_for_deletion("t")  # idempotent
    assert registry.pending_topic_deletions() == ["t"]
    assert "t" in registry.topics()  # still there until removed
    registry.remove_topic("t")
    registry.remove_topic("t")  # idempotent
    assert registry.topic("t") is None and registry.pending_topic_deletions() == []
    assert raw.exists("/config/topics/t") is None and raw.exists("/brokers/topics/t") is None


# -- partition state ---------------------------------------------------------------------------------


def test_partition_state_is_created_once_and_updated_by_compare_and_set(make_registry, raw):
    registry = make_registry()
    with pytest.raises(NoSuchTopicError):
        registry.create_partition_state("t", 0, PartitionState(1, 0, (1,), 1))
    registry.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
    created = registry.create_partition_state("t", 0, PartitionState(1, 0, (1, 2), 1))
    assert created.zk_version == 0
    assert json.loads(raw.get("/brokers/topics/t/partitions/0/state")[0]) == {
        "controller_epoch": 1,
        "leader": 1,
        "version": 1,
        "leader_epoch": 0,
        "isr": [1, 2],
    }
    with pytest.raises(StaleStateError):
        registry.create_partition_state("t", 0, PartitionState(2, 0, (2,), 1))

    shrunk = registry.update_partition_state("t", 0, PartitionState(1, 0, (1,), 1, zk_version=0))
    assert shrunk.zk_version == 1 and registry.partition_state("t", 0) == shrunk
    with pytest.raises(StaleStateError, match="moved past version 0"):  # a writer holding the old version loses
        registry.update_partition_state("t", 0, PartitionState(2, 1, (2,), 1, zk_version=0))
    assert registry.partition_states("t") == {0: shrunk}
    with pytest.raises(StaleStateError, match="does not exist"):
        registry.update_partition_state("t", 5, PartitionState(1, 0, (1,), 1, zk_version=0))


def test_concurrent_compare_and_set_has_exactly_one_winner(make_registry):
    registries = [make_registry() for _ in range(3)]
    registries[0].create_topic(TopicAssignment("t", {0: (1, 2, 3)}), {})
    base = registries[0].create_partition_state("t", 0, PartitionState(1, 0, (1, 2, 3), 1))
    barrier, outcomes = threading.Barrier(3), []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            registries[i].update_partition_state("t", 0, PartitionState(i + 1, 1, (i + 1,), 1, base.zk_version))
            outcomes.append(("won", i))
        except StaleStateError:
            outcomes.append(("lost", i))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [i for kind, i in outcomes if kind == "won"]
    assert len(winners) == 1 and len(outcomes) == 3
    assert registries[0].partition_state("t", 0).leader == winners[0] + 1


# -- controller --------------------------------------------------------------------------------------


def test_exactly_one_of_three_registries_becomes_controller_and_the_epoch_moves_on(make_registry, raw):
    registries = [make_registry() for _ in range(3)]
    seen = Recorder()
    make_registry().on_controller_changed(seen)  # an observer outside the election
    barrier, results = threading.Barrier(3), {}

    def elect(i: int) -> None:
        barrier.wait()
        results[i] = registries[i].try_become_controller(i + 1)

    threads = [threading.Thread(target=elect, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = {i: epoch for i, epoch in results.items() if epoch is not None}
    assert len(results) == 3 and len(winners) == 1 and list(winners.values()) == [1]
    (winner,) = winners
    assert all(r.controller_id() == winner + 1 and r.controller_epoch() == 1 for r in registries)
    node = json.loads(raw.get("/controller")[0])
    assert node["version"] == 1 and node["brokerid"] == winner + 1 and node["timestamp"].isdigit()
    assert raw.get("/controller_epoch")[0] == b"1"
    seen.wait(lambda c: c == winner + 1)
    assert registries[winner].try_become_controller(winner + 1) == 1  # already held: same epoch

    loser = (winner + 1) % 3
    registries[loser].resign_controller()  # not the holder: a no-op
    assert registries[loser].controller_id() == winner + 1

    registries[winner].close()
    seen.wait(lambda c: c is None, message="the controller to go away with its session")
    assert registries[loser].try_become_controller(loser + 1) == 2
    seen.wait(lambda c: c == loser + 1)
    assert registries[3 - winner - loser].try_become_controller(9) is None
    assert registries[3 - winner - loser].controller_epoch() == 2
    registries[loser].resign_controller()
    seen.wait(lambda c: c is None, message="the resignation")


# -- watches -----------------------------------------------------------------------------------------


def test_watches_deliver_an_initial_snapshot_and_every_change(make_registry):
    registry = make_registry()
    brokers, topics, deletions, states = Recorder(), Recorder(), Recorder(), Recorder()
    registry.on_brokers_changed(brokers)
    registry.on_topics_changed(topics)
    registry.on_topic_deletions(deletions)
    registry.on_partition_states_changed("t", states)  # before the topic exists
    brokers.wait(lambda b: b == {})
    topics.wait(lambda t: t == {})
    deletions.wait(lambda d: d == [])
    states.wait(lambda s: s == {})

    other = make_registry()
    other.register_broker(BrokerInfo(5, "b5", 1))
    brokers.wait(lambda b: list(b) == [5])
    other.create_topic(TopicAssignment("t", {0: (5,)}), {})
    topics.wait(lambda t: list(t) == ["t"] and len(t["t"].partitions) == 1)
    other.add_partitions("t", {1: (5,)})
    topics.wait(lambda t: len(t["t"].partitions) == 2, message="a partition addition")
    s0 = other.create_partition_state("t", 0, PartitionState(5, 0, (5,), 1))
    states.wait(lambda s: list(s) == [0])
    other.create_partition_state("t", 1, PartitionState(5, 0, (5,), 1))
    states.wait(lambda s: list(s) == [0, 1])
    other.update_partition_state("t", 0, PartitionState(-1, 1, (), 1, s0.zk_version))
    states.wait(lambda s: s[0].leader == -1 and s[0].zk_version == 1, message="a state change")
    other.mark_topic_for_deletion("t")
    deletions.wait(lambda d: d == ["t"])
    other.remove_topic("t")
    topics.wait(lambda t: t == {})
    deletions.wait(lambda d: d == [])
    states.wait(lambda s: s == {})
    other.close()
    brokers.wait(lambda b: b == {})


def test_a_cancelled_watch_gets_no_more_deliveries_and_callback_errors_do_not_stop_others(make_registry):
    registry = make_registry()
    cancelled, failing_calls, healthy = Recorder(), [], Recorder()
    subscription = registry.on_topics_changed(cancelled)

    def failing(_topics):
        failing_calls.append(1)
        raise RuntimeError("callback bug")

    registry.on_topics_changed(failing)
    registry.on_topics_changed(healthy)
    cancelled.wait(lambda t: t == {})
    healthy.wait(lambda t: t == {})
    subscription.cancel()
    subscription.cancel()
    count = len(cancelled.values)
    registry.create_topic(TopicAssignment("a", {0: (1,)}), {})
    registry.create_topic(TopicAssignment("b", {0: (1,)}), {})
    healthy.wait(lambda t: list(t) == ["a", "b"])
    assert len(failing_calls) >= 2
    assert len(cancelled.values) == count


def test_callbacks_run_on_one_registry_thread_and_may_call_the_registry(make_registry):
    registry = make_registry()
    threads, seen = set(), Recorder()

    def callback(topics):
        threads.add(threading.current_thread().name)
        seen(sorted(registry.topics()))  # re-entrant use from the callback

    registry.on_topics_changed(callback)
    registry.on_topic_deletions(lambda _d: threads.add(threading.current_thread().name))
    registry.create_topic(TopicAssignment("x", {0: (1,)}), {})
    seen.wait(lambda names: names == ["x"])
    assert threads == {"zk-registry-dispatch"}


# -- chroot and cluster id ---------------------------------------------------------------------------


def test_chroots_isolate_clusters_and_are_created_when_missing(zookeeper):
    base = zookeeper.connect_string
    suffix = str(time.monotonic_ns())
    with ZooKeeperRegistry(f"{base}/iso-{suffix}/a") as a, ZooKeeperRegistry(f"{base}/iso-{suffix}/b") as b:
        a.register_broker(BrokerInfo(1, "a", 1))
        a.create_topic(TopicAssignment("only-in-a", {0: (1,)}), {})
        b.register_broker(BrokerInfo(1, "b", 1))  # same id, different cluster: no conflict
        assert list(a.topics()) == ["only-in-a"] and b.topics() == {}
        assert a.live_brokers()[1].host == "a" and b.live_brokers()[1].host == "b"
        assert a.cluster_id != b.cluster_id
        root = KazooClient(hosts=base)
        root.start(timeout=10)
        try:
            assert sorted(root.get_children(f"/iso-{suffix}")) == ["a", "b"]
            assert root.exists(f"/iso-{suffix}/a/brokers/topics/only-in-a") is not None
            assert root.exists("/brokers/topics/only-in-a") is None
        finally:
            root.stop()
            root.close()


def test_cluster_id_is_created_once_and_shared(make_registry, raw):
    first = make_registry()
    second = make_registry()
    assert first.cluster_id == second.cluster_id
    assert len(first.cluster_id) == 22
    assert json.loads(raw.get("/cluster/id")[0]) == {"version": "1", "id": first.cluster_id}
    first.close()
    second.close()
    assert make_registry().cluster_id == first.cluster_id


def test_cluster_id_and_topics_survive_a_zookeeper_restart(tmp_path):
    with ZooKeeperServer(tmp_path, tick_time_ms=200, force_sync=False) as server:
        with ZooKeeperRegistry(server.connect_string + "/kafka") as registry:
            cluster_id = registry.cluster_id
            registry.create_topic(TopicAssignment("kept", {0: (1,)}), {})
    with ZooKeeperServer(tmp_path, tick_time_ms=200, force_sync=False) as server:
        with ZooKeeperRegistry(server.connect_string + "/kafka") as registry:
            assert registry.cluster_id == cluster_id
            assert list(registry.topics()) == ["kept"]


# -- consumer offsets and lifecycle ------------------------------------------------------------------


def test_consumer_offsets_live_in_the_0_8_tree(make_registry, raw):
    registry = make_registry()
    assert registry.fetch_consumer_offset("g", "t", 0) is None
    registry.commit_consumer_offset("g", "t", 0, 42)
    registry.commit_consumer_offset("g", "t", 0, 43)
    assert registry.fetch_consumer_offset("g", "t", 0) == 43
    assert raw.get("/consumers/g/offsets/t/0")[0] == b"43"
    with pytest.raises(ValueError, match="consumer group"):
        registry.commit_consumer_offset("a/b", "t", 0, 1)


def test_close_is_idempotent_releases_registrations_and_later_calls_fail_clearly(make_registry):
    registry = make_registry()
    registry.register_broker(BROKER)
    registry.try_become_controller(1)
    observer = make_registry()
    registry.close()
    registry.close()
    assert observer.live_brokers() == {} and observer.controller_id() is None
    with pytest.raises(RegistryUnavailableError, match="closed"):
        registry.topics()


def test_start_times_out_clearly_when_nothing_listens():
    registry = ZooKeeperRegistry("127.0.0.1:1", connection_timeout_ms=500)
    with pytest.raises(RegistryUnavailableError, match="could not connect to ZooKeeper at 127.0.0.1:1"):
        registry.start()
    registry.close()


def test_persistent_paths_hold_null_data_as_kafka_creates_them(raw):
    # Kafka's controller parses any non-null /latest_producer_id_block as a producer id block: empty data
    # failed every InitProducerId once Apache Kafka took over the cluster (tests/compat/test_migration.py)
    for path in ("/latest_producer_id_block", "/brokers", "/brokers/ids", "/cluster", "/config/changes"):
        assert raw.get(path)[0] is None, path


def test_an_empty_producer_id_block_left_by_an_older_kafkalog_is_set_back_to_null(make_registry, raw):
    raw.set("/latest_producer_id_block", b"")
    make_registry()
    assert raw.get("/latest_producer_id_block")[0] is None
    block = b'{"version":1,"broker":1,"block_start":"0","block_end":"999"}'
    raw.set("/latest_producer_id_block", block)  # Kafka's controller's block is kept
    make_registry()
    assert raw.get("/latest_producer_id_block")[0] == block
