"""The group coordinator in a real broker, spoken to at exact API versions (tests/broker/wire.py).

The module's broker runs on a ``ManualClock``: session expiry, rebalance timeouts and offset retention happen
when a test moves the clock and runs the coordinator's periodic work (``tick``, ``expire_offsets``) itself.
The background ticker reads the same clock, so it can only do the same work, never earlier; offsets are
checked for expiry once a day of that clock (``offsets.retention.check.interval.ms``), so only the tests'
``expire_offsets`` calls remove any.
"""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from broker.log.clock import ManualClock
from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import ApiKey, ErrorCode
from spark_kafkalog.protocol.apis import API_BY_KEY
from tests.broker.wire import Wire
from tests.waiting import wait_until

GROUP_SETTINGS = {
    "group_min_session_timeout_ms": 100,
    "group_initial_rebalance_delay_ms": 0,
    "offsets_topic_num_partitions": 4,
}
PROTOCOLS = [{"name": "range", "metadata": b"\x00\x01"}]


def _req(api_key, **fields):
    return API_BY_KEY[api_key].Request(**fields)


def _protocols():
    Req = API_BY_KEY[ApiKey.JOIN_GROUP].Request
    return [Req.JoinGroupRequestProtocol(name=p["name"], metadata=p["metadata"]) for p in PROTOCOLS]


def _join(w, group, member_id="", version=5, session_ms=10_000, rebalance_ms=10_000):
    return w.call(
        ApiKey.JOIN_GROUP,
        version,
        _req(
            ApiKey.JOIN_GROUP,
            group_id=group,
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=rebalance_ms,
            member_id=member_id,
            protocol_type="consumer",
            protocols=_protocols(),
        ),
    )


def _join_member(w, group, **kw):
    """JoinGroup v5 the way clients do: MEMBER_ID_REQUIRED first, then with the id."""
    first = _join(w, group, **kw)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id
    resp = _join(w, group, first.member_id, **kw)
    assert resp.error_code == ErrorCode.NONE
    return resp


def _sync(w, group, generation, member_id, assignments=(), version=3):
    Req = API_BY_KEY[ApiKey.SYNC_GROUP].Request
    return w.call(
        ApiKey.SYNC_GROUP,
        version,
        Req(
            group_id=group,
            generation_id=generation,
            member_id=member_id,
            assignments=[Req.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignments],
        ),
    )


def _commit(w, group, topic, offsets, *, generation=-1, member_id="", version=8):
    Req = API_BY_KEY[ApiKey.OFFSET_COMMIT].Request
    T, P = Req.OffsetCommitRequestTopic, Req.OffsetCommitRequestTopic.OffsetCommitRequestPartition
    resp = w.call(
        ApiKey.OFFSET_COMMIT,
        version,
        Req(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            topics=[
                T(
                    name=topic,
                    partitions=[
                        P(partition_index=p, committed_offset=o, committed_metadata="m") for p, o in offsets.items()
                    ],
                )
            ],
        ),
    )
    return {p.partition_index: p.error_code for t in resp.topics for p in t.partitions}


def _fetch(w, group, topic, partitions, version=7):
    Req = API_BY_KEY[ApiKey.OFFSET_FETCH].Request
    resp = w.call(
        ApiKey.OFFSET_FETCH,
        version,
        Req(group_id=group, topics=[Req.OffsetFetchRequestTopic(name=topic, partition_indexes=list(partitions))]),
    )
    return resp, {p.partition_index: (p.committed_offset, p.error_code) for t in resp.topics for p in t.partitions}


def _find(w, group, version=2):
    return w.call(ApiKey.FIND_COORDINATOR, version, _req(ApiKey.FIND_COORDINATOR, key=group, key_type=0))


def _create_topic(b, name, partitions):
    b.call(lambda: b.broker.topic_admin.create_topic(name, partitions, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(name, partitions)), 10, f"{name}'s leaders")


def _coordinated_by(b, group):
    """Wait until ``b`` answers FindCoordinator for ``group`` and has loaded its partition."""

    def coordinated():
        resp = _find(w, group)
        if resp.error_code != ErrorCode.NONE:
            return None
        return b.call(lambda: b.broker.group_coordinator.coordinator_error(group)) == ErrorCode.NONE and resp

    with Wire(b.bootstrap_servers) as w:
        return wait_until(coordinated, 15, f"a loaded coordinator for {group}")


def _tick(b) -> None:
    """The coordinator's periodic session and rebalance check, now (the ticker would run it within 100 ms)."""
    b.call(b.broker.group_coordinator.tick)


def _describe(w, group):
    return w.call(ApiKey.DESCRIBE_GROUPS, 0, _req(ApiKey.DESCRIBE_GROUPS, groups=[group])).groups[0]


@pytest.fixture(scope="module")
def registry_name():
    return f"memory:groups-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def clock():
    return ManualClock()


@pytest.fixture(scope="module")
def broker(tmp_path_factory, registry_name, clock):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=registry_name,
        log_dir=tmp_path_factory.mktemp("b0"),
        clock=clock,
        offsets_retention_minutes=1,
        offsets_retention_check_interval_ms=24 * 3600 * 1000,
        **GROUP_SETTINGS,
    )
    b.start()
    _create_topic(b, "events", 3)
    yield b
    b.stop()


def test_find_coordinator_creates_the_compacted_offsets_topic_and_names_its_leader(broker):
    resp = _coordinated_by(broker, "g-find")
    assert resp.node_id == 0 and resp.port == int(broker.bootstrap_servers.rsplit(":", 1)[1])
    topic = broker.broker.metadata.topics[OFFSETS_TOPIC]
    assert topic.num_partitions == 4
    # Kafka 3.9's offsets topic configs, so that Kafka taking over the cluster describes them alike
    # (tests/compat/test_migration.py)
    config = broker.broker.metadata.topics[OFFSETS_TOPIC].config
    assert {k: config.get(k) for k in ("cleanup.policy", "compression.type")} == {
        "cleanup.policy": "compact",
        "compression.type": "producer",
    }


def test_find_coordinator_for_a_transactional_id_names_its_partition_leader(broker):
    def found():
        with Wire(broker.bootstrap_servers) as w:
            return w.call(ApiKey.FIND_COORDINATOR, 1, _req(ApiKey.FIND_COORDINATOR, key="tx", key_type=1))

    resp = wait_until(lambda: (r := found()).error_code == ErrorCode.NONE and r, 20, "the transaction coordinator")
    assert resp.node_id == broker.broker.broker_id
    # Kafka 3.9's transaction topic configs
    config = broker.broker.metadata.topics["__transaction_state"].config
    keys = ("cleanup.policy", "compression.type", "unclean.leader.election.enable")
    assert {k: config.get(k) for k in keys} == {
        "cleanup.policy": "compact",
        "compression.type": "uncompressed",
        "unclean.leader.election.enable": "false",
    }


def test_a_group_joins_syncs_heartbeats_commits_fetches_and_leaves(broker):
    g = "g-life"
    _coordinated_by(broker, g)
    with Wire(broker.bootstrap_servers) as w:
        joined = _join_member(w, g)
        assert joined.leader == joined.member_id and joined.generation_id == 1
        assert [m.metadata for m in joined.members] == [b"\x00\x01"]
        synced = _sync(w, g, 1, joined.member_id, [(joined.member_id, b"assignment")])
        assert (synced.error_code, synced.assignment) == (ErrorCode.NONE, b"assignment")
        hb = w.call(
            ApiKey.HEARTBEAT, 3, _req(ApiKey.HEARTBEAT, group_id=g, generation_id=1, member_id=joined.member_id)
        )
        assert hb.error_code == ErrorCode.NONE
        hb = w.call(
            ApiKey.HEARTBEAT, 3, _req(ApiKey.HEARTBEAT, group_id=g, generation_id=0, member_id=joined.member_id)
        )
        assert hb.error_code == ErrorCode.ILLEGAL_GENERATION
        assert _commit(w, g, "events", {0: 5, 1: 7}) == {0: ErrorCode.UNKNOWN_MEMBER_ID, 1: ErrorCode.UNKNOWN_MEMBER_ID}
        codes = _commit(w, g, "events", {0: 5, 1: 7, 9: 1}, generation=1, member_id=joined.member_id)
        assert codes == {0: ErrorCode.NONE, 1: ErrorCode.NONE, 9: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        _, got = _fetch(w, g, "events", [0, 1, 2])
        assert got == {0: (5, 0), 1: (7, 0), 2: (-1, 0)}
        _, got_v1 = _fetch(w, g, "events", [1], version=1)
        assert got_v1 == {1: (7, 0)}
        listed = w.call(ApiKey.LIST_GROUPS, 4, _req(ApiKey.LIST_GROUPS, states_filter=["stable"]))
        assert (g, "Stable") in {(x.group_id, x.group_state) for x in listed.groups}
        described = w.call(ApiKey.DESCRIBE_GROUPS, 5, _req(ApiKey.DESCRIBE_GROUPS, groups=[g, "g-unknown"]))
        mine, unknown = described.groups
        assert (mine.group_state, mine.protocol_data, len(mine.members)) == ("Stable", "range", 1)
        assert mine.members[0].member_assignment == b"assignment" and mine.members[0].client_id == "wire-test"
        assert (unknown.error_code, unknown.group_state) == (ErrorCode.NONE, "Dead")
        deleted = w.call(ApiKey.DELETE_GROUPS, 2, _req(ApiKey.DELETE_GROUPS, groups_names=[g]))
        assert deleted.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
        Leave = API_BY_KEY[ApiKey.LEAVE_GROUP].Request
        left = w.call(
            ApiKey.LEAVE_GROUP, 3, Leave(group_id=g, members=[Leave.MemberIdentity(member_id=joined.member_id)])
        )
        assert left.error_code == ErrorCode.NONE and left.members[0].error_code == ErrorCode.NONE
        deleted = w.call(ApiKey.DELETE_GROUPS, 2, _req(ApiKey.DELETE_GROUPS, groups_names=[g, "g-never"]))
        assert [r.error_code for r in deleted.results] == [ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND]
        _, got = _fetch(w, g, "events", [0])
        assert got == {0: (-1, 0)}


def test_join_waits_until_every_member_rejoined(broker):
    g = "g-rebalance"
    _coordinated_by(broker, g)
    with Wire(broker.bootstrap_servers) as a, Wire(broker.bootstrap_servers) as b:
        first = _join_member(a, g)
        _sync(a, g, 1, first.member_id, [(first.member_id, b"all")])
        pending = _join(b, g)
        b.send(ApiKey.JOIN_GROUP, 5, _req(
            ApiKey.JOIN_GROUP, group_id=g, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
            member_id=pending.member_id, protocol_type="consumer", protocols=_protocols(),
        ))  # fmt: skip
        hb = a.call(ApiKey.HEARTBEAT, 3, _req(ApiKey.HEARTBEAT, group_id=g, generation_id=1, member_id=first.member_id))
        assert hb.error_code == ErrorCode.REBALANCE_IN_PROGRESS
        rejoined = _join(a, g, first.member_id)  # completes the rebalance for both
        _, second = b.receive(ApiKey.JOIN_GROUP, 5)
        assert rejoined.generation_id == second.generation_id == 2
        assert rejoined.leader == first.member_id and len(rejoined.members) == 2 and second.members == []


def test_a_client_that_disconnects_while_joining_does_not_hold_the_rebalance(broker):
    g = "g-disconnect"
    _coordinated_by(broker, g)
    with Wire(broker.bootstrap_servers) as a:
        first = _join_member(a, g)
        _sync(a, g, 1, first.member_id, [(first.member_id, b"x")])
        with Wire(broker.bootstrap_servers) as gone:
            pending = _join(gone, g)
            gone.send(ApiKey.JOIN_GROUP, 5, _req(
                ApiKey.JOIN_GROUP, group_id=g, session_timeout_ms=10_000, rebalance_timeout_ms=60_000,
                member_id=pending.member_id, protocol_type="consumer", protocols=_protocols(),
            ))  # fmt: skip
            wait_until(lambda: len(_describe(a, g).members) == 2, 5, "the second member's JoinGroup to arrive")
        wait_until(lambda: len(_describe(a, g).members) == 1, 5, "the disconnected member to leave the group")
        # the broker's clock does not move: a rebalance still waiting for the gone member would never complete
        rejoined = _join(a, g, first.member_id)
        assert rejoined.error_code == ErrorCode.NONE and len(rejoined.members) == 1


def _heartbeat(w, group, generation, member_id):
    return w.call(
        ApiKey.HEARTBEAT, 0, _req(ApiKey.HEARTBEAT, group_id=group, generation_id=generation, member_id=member_id)
    )


def test_a_heartbeat_keeps_the_session_and_its_absence_for_the_session_timeout_removes_the_member(broker, clock):
    g = "g-expiry"
    _coordinated_by(broker, g)
    with Wire(broker.bootstrap_servers) as w:
        joined = _join_member(w, g, session_ms=10_000)
        _sync(w, g, 1, joined.member_id, [(joined.member_id, b"x")])
        clock.advance(9_999)
        _tick(broker)
        assert _heartbeat(w, g, 1, joined.member_id).error_code == ErrorCode.NONE  # the session starts again
        clock.advance(9_999)
        _tick(broker)
        assert _describe(w, g).group_state == "Stable"
        clock.advance(1)
        _tick(broker)
        assert _describe(w, g).group_state == "Empty"
        assert _heartbeat(w, g, 1, joined.member_id).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_does_not_rejoin_within_the_rebalance_timeout_is_removed_by_the_rebalance(broker, clock):
    g = "g-rebalance-timeout"
    _coordinated_by(broker, g)
    with Wire(broker.bootstrap_servers) as a, Wire(broker.bootstrap_servers) as b:
        first = _join_member(a, g, session_ms=30_000, rebalance_ms=5_000)
        _sync(a, g, 1, first.member_id, [(first.member_id, b"all")])
        pending = _join(b, g, session_ms=30_000, rebalance_ms=5_000)
        b.send(ApiKey.JOIN_GROUP, 5, _req(
            ApiKey.JOIN_GROUP, group_id=g, session_timeout_ms=30_000, rebalance_timeout_ms=5_000,
            member_id=pending.member_id, protocol_type="consumer", protocols=_protocols(),
        ))  # fmt: skip
        wait_until(lambda: _describe(a, g).group_state == "PreparingRebalance", 5, "the rebalance to start")
        clock.advance(4_999)
        _tick(broker)
        assert _describe(a, g).group_state == "PreparingRebalance"  # the first member may still rejoin
        clock.advance(1)
        _tick(broker)
        _, second = b.receive(ApiKey.JOIN_GROUP, 5)
        assert (second.error_code, second.generation_id) == (ErrorCode.NONE, 2)
        assert second.leader == pending.member_id and [m.member_id for m in second.members] == [pending.member_id]
        assert _heartbeat(a, g, 1, first.member_id).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_offset_commit_and_fetch_v0_use_zookeeper_paths(broker):
    with Wire(broker.bootstrap_servers) as w:
        assert _commit(w, "g-zk", "events", {2: 42}, version=0) == {2: ErrorCode.NONE}
        _, got = _fetch(w, "g-zk", "events", [2, 1], version=0)
        assert got == {2: (42, 0), 1: (-1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}  # no node, as Kafka 0.8.2
        _, from_topic = _fetch(w, "g-zk", "events", [2], version=1)
    assert from_topic == {2: (-1, 0)}  # v1+ reads __consumer_offsets, not ZooKeeper
    store = broker.broker.registry
    assert store.fetch_consumer_offset("g-zk", "events", 2) == 42


def _expire_offsets(b) -> int:
    """The coordinator's offset expiry at the clock's now; how many offsets it removed."""
    gc = b.broker.group_coordinator
    return b.call(lambda: gc.expire_offsets(gc.now()))


def test_offsets_of_a_group_that_only_commits_expire_the_retention_after_the_commit(broker, clock):
    g = "g-retention"
    _coordinated_by(broker, g)
    retention = broker.config["offsets.retention.minutes"] * 60_000
    with Wire(broker.bootstrap_servers) as w:
        assert _commit(w, g, "events", {0: 3}) == {0: ErrorCode.NONE}
        clock.advance(retention - 1)
        _expire_offsets(broker)
        assert _fetch(w, g, "events", [0])[1] == {0: (3, 0)}
        clock.advance(1)
        assert _expire_offsets(broker) >= 1  # with those of other tests' groups, as old
        assert _fetch(w, g, "events", [0])[1] == {0: (-1, 0)}


def test_an_emptied_group_keeps_offsets_it_committed_long_ago_until_it_has_been_empty_for_the_retention(broker, clock):
    g = "g-kip211"
    _coordinated_by(broker, g)
    gc = broker.broker.group_coordinator
    retention = broker.config["offsets.retention.minutes"] * 60_000
    with Wire(broker.bootstrap_servers) as w:
        joined = _join_member(w, g, session_ms=3 * retention)  # alive until it leaves
        _sync(w, g, 1, joined.member_id, [(joined.member_id, b"")])
        assert _commit(w, g, "events", {1: 4}, generation=1, member_id=joined.member_id) == {1: ErrorCode.NONE}
        clock.advance(2 * retention)  # the member does not commit partition 1 again for two retention periods
        _expire_offsets(broker)
        assert _fetch(w, g, "events", [1])[1] == {1: (4, 0)}  # a member's subscription is unreadable: kept
        Leave = API_BY_KEY[ApiKey.LEAVE_GROUP].Request
        w.call(ApiKey.LEAVE_GROUP, 3, Leave(group_id=g, members=[Leave.MemberIdentity(member_id=joined.member_id)]))
        assert broker.call(lambda: gc.describe_group(g).state.value) == "Empty"
        clock.advance(retention - 1)
        assert _expire_offsets(broker) == 0
        assert _fetch(w, g, "events", [1])[1] == {1: (4, 0)}
        clock.advance(1)
        assert _expire_offsets(broker) == 1
        assert _fetch(w, g, "events", [1])[1] == {1: (-1, 0)}


def test_a_restarted_coordinator_loads_offsets_and_group_metadata_from_the_log(tmp_path, registry_name):
    name = f"memory:restart-{uuid.uuid4().hex[:8]}"
    g = "g-restart"
    b = EmbeddedBroker(0, zookeeper_connect=name, log_dir=tmp_path, **GROUP_SETTINGS).start()
    try:
        _create_topic(b, "events", 3)
        _coordinated_by(b, g)
        with Wire(b.bootstrap_servers) as w:
            joined = _join_member(w, g)
            _sync(w, g, 1, joined.member_id, [(joined.member_id, b"mine")])
            _commit(w, g, "events", {0: 1}, generation=1, member_id=joined.member_id)
            _commit(w, g, "events", {0: 11, 1: 12}, generation=1, member_id=joined.member_id)
            _commit(w, "g-deleted", "events", {0: 99})
            w.call(ApiKey.DELETE_GROUPS, 2, _req(ApiKey.DELETE_GROUPS, groups_names=["g-deleted"]))
    finally:
        b.stop()
    b = EmbeddedBroker(0, zookeeper_connect=name, log_dir=tmp_path, **GROUP_SETTINGS).start()
    try:
        _coordinated_by(b, g)
        _coordinated_by(b, "g-deleted")
        with Wire(b.bootstrap_servers) as w:
            _, got = _fetch(w, g, "events", [0, 1])
            assert got == {0: (11, 0), 1: (12, 0)}  # the last commit wins over the older one in the log
            _, gone = _fetch(w, "g-deleted", "events", [0])
            assert gone == {0: (-1, 0)}  # the tombstone deletes it
            d = w.call(ApiKey.DESCRIBE_GROUPS, 5, _req(ApiKey.DESCRIBE_GROUPS, groups=[g])).groups[0]
            assert (d.group_state, [m.member_id for m in d.members]) == ("Stable", [joined.member_id])
            hb = w.call(
                ApiKey.HEARTBEAT, 3, _req(ApiKey.HEARTBEAT, group_id=g, generation_id=1, member_id=joined.member_id)
            )
            assert hb.error_code == ErrorCode.NONE  # the member survives the coordinator restart
    finally:
        b.stop()


def _join_static(w, group, instance, member_id=""):
    Req = API_BY_KEY[ApiKey.JOIN_GROUP].Request
    return w.call(
        ApiKey.JOIN_GROUP,
        5,
        Req(
            group_id=group,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type="consumer",
            protocols=_protocols(),
        ),
    )


def _heartbeat_static(w, group, generation, member_id, instance):
    Req = API_BY_KEY[ApiKey.HEARTBEAT].Request
    return w.call(
        ApiKey.HEARTBEAT,
        3,
        Req(group_id=group, generation_id=generation, member_id=member_id, group_instance_id=instance),
    )


def test_a_static_member_restarted_without_a_rebalance_survives_a_coordinator_restart(tmp_path):
    name = f"memory:static-{uuid.uuid4().hex[:8]}"
    g = "g-static"
    b = EmbeddedBroker(0, zookeeper_connect=name, log_dir=tmp_path, **GROUP_SETTINGS).start()
    try:
        _coordinated_by(b, g)
        with Wire(b.bootstrap_servers) as w:
            first = _join_static(w, g, "i-1")
            assert first.error_code == ErrorCode.NONE and first.generation_id == 1
            _sync(w, g, 1, first.member_id, [(first.member_id, b"mine")])
            restarted = _join_static(w, g, "i-1")  # the same instance, restarted: a new member id, no rebalance
            assert restarted.error_code == ErrorCode.NONE and restarted.generation_id == 1
            assert restarted.member_id != first.member_id
            assert _sync(w, g, 1, restarted.member_id).assignment == b"mine"
    finally:
        b.stop()
    b = EmbeddedBroker(0, zookeeper_connect=name, log_dir=tmp_path, **GROUP_SETTINGS).start()
    try:
        _coordinated_by(b, g)
        with Wire(b.bootstrap_servers) as w:
            hb = _heartbeat_static(w, g, 1, restarted.member_id, "i-1")
            assert hb.error_code == ErrorCode.NONE  # not FENCED_INSTANCE_ID: the new member id was stored
            fenced = _heartbeat_static(w, g, 1, first.member_id, "i-1")
            assert fenced.error_code == ErrorCode.FENCED_INSTANCE_ID
    finally:
        b.stop()


def test_only_the_leader_of_the_groups_partition_coordinates_it(tmp_path_factory):
    name = f"memory:two-{uuid.uuid4().hex[:8]}"
    brokers = [
        EmbeddedBroker(i, zookeeper_connect=name, log_dir=tmp_path_factory.mktemp(f"c{i}"), **GROUP_SETTINGS).start()
        for i in range(2)
    ]
    try:
        g = "g-two"
        with Wire(brokers[0].bootstrap_servers) as w:
            resp = wait_until(
                lambda: (r := _find(w, g)).error_code == ErrorCode.NONE and r, 15, f"a coordinator of {g}"
            )
        leader = brokers[0].broker.metadata.topics[OFFSETS_TOPIC].leader(partition_for(g, 4))
        assert resp.node_id == leader
        _coordinated_by(brokers[leader], g)
        other = brokers[1 - leader]
        with Wire(other.bootstrap_servers) as w:
            assert _join(w, g).error_code == ErrorCode.NOT_COORDINATOR
            fetched, _ = _fetch(w, g, "x", [0])
            assert fetched.error_code == ErrorCode.NOT_COORDINATOR
    finally:
        for b in brokers:
            b.stop()
