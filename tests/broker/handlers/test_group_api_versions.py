"""Every version of every group API, sent raw (tests/broker/wire.py) to an in-process broker, answered in
that version's shape: FindCoordinator 0-6 (batched from v4), JoinGroup 0-9, SyncGroup 0-5, Heartbeat 0-4,
LeaveGroup 0-5, OffsetCommit 0-9, OffsetFetch 0-9 (several groups from v8), ListGroups 0-5,
DescribeGroups 0-5, DeleteGroups 0-2, OffsetDelete 0; v0 offsets in the registry's ZooKeeper tree."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

SETTINGS = {
    "group_min_session_timeout_ms": 100,
    "group_initial_rebalance_delay_ms": 0,
    "offsets_topic_num_partitions": 2,
}
TOPIC = "orders"
SERVED = {
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.JOIN_GROUP: (0, 9),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.OFFSET_COMMIT: (0, 10),
    ApiKey.OFFSET_FETCH: (0, 10),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 6),
    ApiKey.DELETE_GROUPS: (0, 3),
    ApiKey.OFFSET_DELETE: (0, 0),
}


def Req(api_key):
    return API_BY_KEY[api_key].Request


def new_group(prefix: str = "g") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:group-versions-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        **SETTINGS,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 3, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 3)), 10, f"leaders of {TOPIC}")
    yield b
    b.stop()


@pytest.fixture()
def wire(broker):
    with Wire(broker.bootstrap_servers) as w:
        yield w


def coordinated(broker, w, group: str) -> None:
    """Wait until the broker coordinates ``group`` (its ``__consumer_offsets`` partition is loaded)."""
    gc = broker.broker.group_coordinator

    def loaded() -> bool:
        resp = w.call(ApiKey.FIND_COORDINATOR, 1, Req(ApiKey.FIND_COORDINATOR)(key=group, key_type=0))
        return resp.error_code == ErrorCode.NONE and broker.call(lambda: gc.coordinator_error(group)) == 0

    wait_until(loaded, 15, f"a coordinator for {group}")


def join(w, group: str, version: int = 5, *, reason: str | None = None):
    """JoinGroup at ``version`` as clients do (v4+: MEMBER_ID_REQUIRED first, then with the id)."""
    R = Req(ApiKey.JOIN_GROUP)
    protocols = [R.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")]

    def send(member_id: str):
        body = R(
            group_id=group,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            member_id=member_id,
            protocol_type="consumer",
            protocols=protocols,
            reason=reason,
        )
        return w.call(ApiKey.JOIN_GROUP, version, body)

    resp = send("")
    if version >= 4:
        assert resp.error_code == ErrorCode.MEMBER_ID_REQUIRED and resp.member_id.startswith("wire-test-")
        resp = send(resp.member_id)
    assert resp.error_code == ErrorCode.NONE, resp
    return resp


def sync(w, group: str, generation: int, member_id: str, version: int = 3, assignment: bytes = b"plan"):
    R = Req(ApiKey.SYNC_GROUP)
    body = R(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        protocol_type="consumer",
        protocol_name="range",
        assignments=[R.SyncGroupRequestAssignment(member_id=member_id, assignment=assignment)],
    )
    return w.call(ApiKey.SYNC_GROUP, version, body)


def leave(w, group: str, member_id: str, version: int = 3):
    R = Req(ApiKey.LEAVE_GROUP)
    body = R(group_id=group, member_id=member_id, members=[R.MemberIdentity(member_id=member_id, reason="done")])
    return w.call(ApiKey.LEAVE_GROUP, version, body)


def commit(w, group: str, offsets: dict[int, int], version: int, *, generation=-1, member_id="", topic=TOPIC):
    R = Req(ApiKey.OFFSET_COMMIT)
    T = R.OffsetCommitRequestTopic
    parts = [
        T.OffsetCommitRequestPartition(
            partition_index=p, committed_offset=o, committed_leader_epoch=7, committed_metadata=f"m{o}"
        )
        for p, o in offsets.items()
    ]
    body = R(
        group_id=group,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        topics=[T(name=topic, partitions=parts)],
    )
    resp = w.call(ApiKey.OFFSET_COMMIT, version, body)
    return {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}


def fetch(w, group: str, partitions, version: int, topic=TOPIC):
    """OffsetFetch v0-7 for one group; {partition: (offset, leader epoch, metadata, error)} and the response."""
    R = Req(ApiKey.OFFSET_FETCH)
    topics = None if partitions is None else [R.OffsetFetchRequestTopic(name=topic, partition_indexes=list(partitions))]
    resp = w.call(ApiKey.OFFSET_FETCH, version, R(group_id=group, topics=topics))
    return resp, _partitions(resp.topics)


def _partitions(topics):
    return {
        (t.name, p.partition_index): (p.committed_offset, p.committed_leader_epoch, p.metadata, p.error_code)
        for t in topics
        for p in t.partitions
    }


def fetch_groups(w, groups: dict[str, list[int] | None], version: int, **group_fields):
    """OffsetFetch v8+ for several groups: {group: (group error, {(topic, partition): (...)})}, in answer order."""
    R = Req(ApiKey.OFFSET_FETCH)
    G = R.OffsetFetchRequestGroup
    body = R(
        groups=[
            G(
                group_id=g,
                topics=None if ps is None else [G.OffsetFetchRequestTopics(name=TOPIC, partition_indexes=ps)],
                **group_fields,
            )
            for g, ps in groups.items()
        ]
    )
    resp = w.call(ApiKey.OFFSET_FETCH, version, body)
    return [(g.group_id, g.error_code, _partitions(g.topics)) for g in resp.groups]


# -- ApiVersions ---------------------------------------------------------------------------------------


def test_api_versions_advertises_kafkas_full_group_api_ranges(wire):
    resp = wire.call(
        ApiKey.API_VERSIONS, 3, Req(ApiKey.API_VERSIONS)(client_software_name="t", client_software_version="1")
    )
    advertised = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert {key: advertised.get(key) for key in SERVED} == SERVED


# -- FindCoordinator -------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 4))
def test_find_coordinator_v0_to_v3_answers_one_key(broker, wire, version):
    group = new_group()
    coordinated(broker, wire, group)
    resp = wire.call(ApiKey.FIND_COORDINATOR, version, Req(ApiKey.FIND_COORDINATOR)(key=group, key_type=0))
    port = int(broker.bootstrap_servers.rsplit(":", 1)[1])
    assert (resp.error_code, resp.node_id, resp.host, resp.port) == (ErrorCode.NONE, 0, "127.0.0.1", port)
    assert resp.coordinators == []


@pytest.mark.parametrize("version", range(4, 7))
def test_find_coordinator_v4_plus_answers_every_key_of_a_batch_in_order(broker, wire, version):
    groups = [new_group(f"batch{i}") for i in range(3)]
    for g in groups:
        coordinated(broker, wire, g)
    resp = wire.call(
        ApiKey.FIND_COORDINATOR, version, Req(ApiKey.FIND_COORDINATOR)(key_type=0, coordinator_keys=groups)
    )
    port = int(broker.bootstrap_servers.rsplit(":", 1)[1])
    assert [(c.key, c.error_code, c.error_message, c.node_id, c.host, c.port) for c in resp.coordinators] == [
        (g, ErrorCode.NONE, None, 0, "127.0.0.1", port) for g in groups
    ]
    # v4+ has no top-level answer: those fields keep their defaults and are not on the wire
    assert (resp.error_code, resp.node_id, resp.host) == (0, 0, "")


@pytest.mark.parametrize(
    "key_type, keys, expected",
    [
        (2, ["share-a"], [ErrorCode.INVALID_REQUEST]),
        (0, ["", "fine-group"], [ErrorCode.INVALID_GROUP_ID, ErrorCode.NONE]),
    ],
)
def test_find_coordinator_v4_gives_each_key_its_own_error(wire, key_type, keys, expected):
    resp = wire.call(ApiKey.FIND_COORDINATOR, 4, Req(ApiKey.FIND_COORDINATOR)(key_type=key_type, coordinator_keys=keys))
    assert [(c.key, c.error_code) for c in resp.coordinators] == list(zip(keys, expected, strict=True))
    for c in resp.coordinators:
        assert (c.error_message is None) == (c.error_code == ErrorCode.NONE)
        if c.error_code != ErrorCode.NONE:
            assert (c.node_id, c.host, c.port) == (-1, "", -1)


def test_find_coordinator_v4_names_each_transactional_ids_coordinator_once_loaded(wire):
    """Key type 1 (transaction): COORDINATOR_NOT_AVAILABLE while ``__transaction_state`` is being created and
    loaded, then this broker for every id."""
    request = Req(ApiKey.FIND_COORDINATOR)(key_type=1, coordinator_keys=["tx-a", "tx-b"])

    def both_coordinated():
        resp = wire.call(ApiKey.FIND_COORDINATOR, 4, request)
        codes = [c.error_code for c in resp.coordinators]
        assert set(codes) <= {ErrorCode.NONE, ErrorCode.COORDINATOR_NOT_AVAILABLE}
        return resp if codes == [ErrorCode.NONE] * 2 else None

    resp = wait_until(both_coordinated, 30, "a coordinator for tx-a and tx-b")
    assert [(c.key, c.error_code, c.node_id) for c in resp.coordinators] == [
        ("tx-a", ErrorCode.NONE, 0),
        ("tx-b", ErrorCode.NONE, 0),
    ]


def test_find_coordinator_v4_with_no_keys_answers_no_coordinators(wire):
    resp = wire.call(ApiKey.FIND_COORDINATOR, 4, Req(ApiKey.FIND_COORDINATOR)(key_type=0, coordinator_keys=[]))
    assert resp.coordinators == []


# -- JoinGroup / SyncGroup / Heartbeat / LeaveGroup -----------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 10))
def test_join_group_every_version_completes_a_one_member_rebalance(broker, wire, version):
    group = new_group("join")
    coordinated(broker, wire, group)
    resp = join(wire, group, version, reason="first start" if version >= 8 else None)
    assert resp.generation_id == 1 and resp.leader == resp.member_id
    assert resp.protocol_name == "range"
    assert resp.protocol_type == ("consumer" if version >= 7 else None)
    assert resp.skip_assignment is False
    assert [(m.member_id, bytes(m.metadata)) for m in resp.members] == [(resp.member_id, b"\x00\x01")]
    assert leave(wire, group, resp.member_id, 3).error_code == ErrorCode.NONE


def test_join_group_v7_plus_error_answers_have_a_null_protocol_name(broker, wire):
    group = new_group("join-err")
    coordinated(broker, wire, group)
    R = Req(ApiKey.JOIN_GROUP)
    body = R(group_id=group, session_timeout_ms=1, member_id="", protocol_type="consumer", protocols=[])
    for version, name in ((6, ""), (7, None), (9, None)):
        resp = wire.call(ApiKey.JOIN_GROUP, version, body)
        assert resp.error_code == ErrorCode.INVALID_SESSION_TIMEOUT
        assert resp.protocol_name == name


def static_join(w, group: str, instance: str, version: int, member_id: str = ""):
    R = Req(ApiKey.JOIN_GROUP)
    body = R(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type="consumer",
        protocols=[R.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")],
    )
    return w.call(ApiKey.JOIN_GROUP, version, body)


@pytest.mark.parametrize("version", [8, 9])
def test_a_restarted_static_leader_of_a_stable_group_is_told_to_skip_the_assignment_from_v9(broker, wire, version):
    group = new_group("static")
    coordinated(broker, wire, group)
    first = static_join(wire, group, "instance-1", version)
    assert first.error_code == ErrorCode.NONE and first.leader == first.member_id
    assert first.skip_assignment is False  # a real rebalance: the leader assigns
    assert sync(wire, group, first.generation_id, first.member_id, 5).error_code == ErrorCode.NONE
    again = static_join(wire, group, "instance-1", version)  # restarted: no member id, same metadata
    assert again.error_code == ErrorCode.NONE and again.member_id != first.member_id
    assert again.generation_id == first.generation_id  # no rebalance
    assert again.skip_assignment is (version >= 9)
    if version >= 9:
        assert again.leader == again.member_id and [m.member_id for m in again.members] == [again.member_id]
    else:  # as Kafka: not told it leads (its old member id as leader, no members), so it does not assign
        assert again.leader == first.member_id and again.members == []
    synced = sync(wire, group, again.generation_id, again.member_id, 5, assignment=b"another plan")
    assert (synced.error_code, bytes(synced.assignment)) == (ErrorCode.NONE, b"plan")  # the one it had
    leave(wire, group, again.member_id)


@pytest.mark.parametrize("version", range(0, 6))
def test_sync_heartbeat_and_leave_every_version(broker, wire, version):
    group = new_group("sync")
    coordinated(broker, wire, group)
    joined = join(wire, group, 5)
    synced = sync(wire, group, joined.generation_id, joined.member_id, version)
    assert (synced.error_code, bytes(synced.assignment)) == (ErrorCode.NONE, b"plan")
    assert (synced.protocol_type, synced.protocol_name) == (("consumer", "range") if version >= 5 else (None, None))
    hb_version = min(version, 4)
    hb = wire.call(
        ApiKey.HEARTBEAT,
        hb_version,
        Req(ApiKey.HEARTBEAT)(group_id=group, generation_id=joined.generation_id, member_id=joined.member_id),
    )
    assert hb.error_code == ErrorCode.NONE
    left = leave(wire, group, joined.member_id, version)
    assert left.error_code == ErrorCode.NONE
    if version >= 3:
        assert [(m.member_id, m.error_code) for m in left.members] == [(joined.member_id, ErrorCode.NONE)]
    else:
        assert left.members == []
    stale = leave(wire, group, joined.member_id, version)
    if version >= 3:  # v3+ errors are per member
        assert (stale.error_code, [m.error_code for m in stale.members]) == (0, [ErrorCode.UNKNOWN_MEMBER_ID])
    else:
        assert stale.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_group_v5_refuses_another_protocol_name(broker, wire):
    group = new_group("sync5")
    coordinated(broker, wire, group)
    joined = join(wire, group, 5)
    R = Req(ApiKey.SYNC_GROUP)
    body = R(
        group_id=group,
        generation_id=joined.generation_id,
        member_id=joined.member_id,
        protocol_type="consumer",
        protocol_name="roundrobin",
        assignments=[],
    )
    assert wire.call(ApiKey.SYNC_GROUP, 5, body).error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


# -- OffsetCommit / OffsetFetch, one group per request -------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 10))
def test_offset_commit_then_fetch_at_the_same_version(broker, wire, version):
    group = new_group("commit")
    if version > 0:
        coordinated(broker, wire, group)
    assert commit(wire, group, {0: 11, 2: 13}, version) == {(TOPIC, 0): 0, (TOPIC, 2): 0}
    fetch_version = min(version, 7)
    if version >= 8:
        ((gid, code, got),) = fetch_groups(wire, {group: [0, 1, 2]}, version)
        assert (gid, code) == (group, ErrorCode.NONE)
    else:
        resp, got = fetch(wire, group, [0, 1, 2], fetch_version)
        if fetch_version >= 2:
            assert resp.error_code == ErrorCode.NONE
    # v0 keeps no metadata (ZooKeeper holds the offset only); epochs are on the wire from commit v6 / fetch v5
    epoch = 7 if version >= 6 else -1
    assert got == {
        (TOPIC, 0): (11, epoch, "" if version == 0 else "m11", 0),
        (TOPIC, 1): (-1, -1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if fetch_version == 0 else 0),
        (TOPIC, 2): (13, epoch, "" if version == 0 else "m13", 0),
    }


def test_offset_commit_v9_for_a_group_that_does_not_exist_is_group_id_not_found(broker, wire):
    group = new_group("ghost")
    coordinated(broker, wire, group)
    assert commit(wire, group, {0: 1}, 9, generation=3, member_id="m-1") == {(TOPIC, 0): ErrorCode.GROUP_ID_NOT_FOUND}
    # v8 and older answer as before v9 (Kafka: ILLEGAL_GENERATION) rather than GROUP_ID_NOT_FOUND
    assert commit(wire, group, {0: 1}, 8, generation=3, member_id="m-1")[(TOPIC, 0)] in {
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.UNKNOWN_MEMBER_ID,
    }
    # generation -1 (assign-mode consumers, admin tools) may commit at v9 too
    assert commit(wire, group, {0: 1}, 9) == {(TOPIC, 0): ErrorCode.NONE}


def test_offset_commit_v9_checks_a_classic_members_generation(broker, wire):
    group = new_group("classic9")
    coordinated(broker, wire, group)
    joined = join(wire, group, 9)
    assert sync(wire, group, joined.generation_id, joined.member_id, 5).error_code == ErrorCode.NONE
    ok = commit(wire, group, {1: 5}, 9, generation=joined.generation_id, member_id=joined.member_id)
    assert ok == {(TOPIC, 1): ErrorCode.NONE}
    stale = commit(wire, group, {1: 6}, 9, generation=joined.generation_id + 1, member_id=joined.member_id)
    assert stale == {(TOPIC, 1): ErrorCode.ILLEGAL_GENERATION}
    leave(wire, group, joined.member_id)


@pytest.mark.parametrize("version", range(2, 8))
def test_offset_fetch_v2_to_v7_null_topics_means_every_committed_partition(broker, wire, version):
    group = new_group("all")
    coordinated(broker, wire, group)
    commit(wire, group, {1: 4, 2: 9}, 8)
    resp, got = fetch(wire, group, None, version)
    assert {tp: v[0] for tp, v in got.items()} == {(TOPIC, 1): 4, (TOPIC, 2): 9}


# -- OffsetFetch v8+: several groups per request ---------------------------------------------------------------


@pytest.mark.parametrize("version", [8, 9])
def test_offset_fetch_v8_plus_answers_each_group_with_its_own_offsets(broker, wire, version):
    known, unknown = new_group("known"), new_group("unknown")
    coordinated(broker, wire, known)
    coordinated(broker, wire, unknown)
    assert commit(wire, known, {0: 21, 1: 22}, 8) == {(TOPIC, 0): 0, (TOPIC, 1): 0}
    answers = fetch_groups(wire, {known: [0, 1], unknown: [0, 1]}, version)
    assert answers == [
        (known, 0, {(TOPIC, 0): (21, 7, "m21", 0), (TOPIC, 1): (22, 7, "m22", 0)}),
        (unknown, 0, {(TOPIC, 0): (-1, -1, "", 0), (TOPIC, 1): (-1, -1, "", 0)}),
    ]
    # null topics: every partition the group committed (none for the unknown group)
    answers = fetch_groups(wire, {unknown: None, known: None}, version)
    assert answers == [(unknown, 0, {}), (known, 0, {(TOPIC, 0): (21, 7, "m21", 0), (TOPIC, 1): (22, 7, "m22", 0)})]


def test_offset_fetch_v8_reports_a_group_level_error_per_group(broker, wire):
    good = new_group("good")
    coordinated(broker, wire, good)
    commit(wire, good, {2: 3}, 8)
    answers = fetch_groups(wire, {"": [2], good: [2]}, 8)
    assert answers == [("", ErrorCode.INVALID_GROUP_ID, {}), (good, 0, {(TOPIC, 2): (3, 7, "m3", 0)})]


def test_offset_fetch_v9_member_fields_are_ignored_for_classic_groups(broker, wire):
    group = new_group("member9")
    coordinated(broker, wire, group)
    joined = join(wire, group, 9)
    sync(wire, group, joined.generation_id, joined.member_id, 5)
    commit(wire, group, {0: 8}, 9, generation=joined.generation_id, member_id=joined.member_id)
    expected = [(group, 0, {(TOPIC, 0): (8, 7, "m8", 0)})]
    # as Kafka's classic groups: the KIP-848 member id and epoch are neither required nor checked
    assert (
        fetch_groups(wire, {group: [0]}, 9, member_id=joined.member_id, member_epoch=joined.generation_id) == expected
    )
    assert fetch_groups(wire, {group: [0]}, 9, member_id="someone-else", member_epoch=42) == expected
    assert fetch_groups(wire, {group: [0]}, 9) == expected
    leave(wire, group, joined.member_id)


# -- v0: the ZooKeeper offset storage ----------------------------------------------------------------------------


def test_offset_commit_v0_writes_the_registrys_zookeeper_tree_not_the_coordinator(broker, wire):
    group = new_group("zk")
    assert commit(wire, group, {1: 42}, 0) == {(TOPIC, 1): 0}
    assert broker.broker.registry.fetch_consumer_offset(group, TOPIC, 1) == 42
    coordinated(broker, wire, group)
    assert fetch(wire, group, [1], 1)[1] == {(TOPIC, 1): (-1, -1, "", 0)}  # v1+ reads __consumer_offsets


def test_offset_fetch_v0_does_not_see_a_v1_commit_and_v1_does_not_see_v0(broker, wire):
    group = new_group("split")
    coordinated(broker, wire, group)
    assert commit(wire, group, {0: 100}, 1) == {(TOPIC, 0): 0}
    assert commit(wire, group, {0: 5}, 0) == {(TOPIC, 0): 0}
    assert fetch(wire, group, [0], 0)[1] == {(TOPIC, 0): (5, -1, "", 0)}
    assert fetch(wire, group, [0], 1)[1] == {(TOPIC, 0): (100, -1, "m100", 0)}
    assert fetch_groups(wire, {group: [0]}, 8) == [(group, 0, {(TOPIC, 0): (100, -1, "m100", 0)})]  # v1: no epoch


def test_offset_v0_errors_per_partition(broker, wire):
    group = new_group("zk-err")
    # partitions that do not exist
    assert commit(wire, group, {3: 1}, 0) == {(TOPIC, 3): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert commit(wire, group, {0: 1}, 0, topic="no-such-topic") == {
        ("no-such-topic", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    }
    assert fetch(wire, group, [0], 0, topic="no-such-topic")[1] == {
        ("no-such-topic", 0): (-1, -1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    }
    # a group id that cannot be one ZooKeeper path component
    assert commit(wire, "a/b", {0: 1}, 0) == {(TOPIC, 0): ErrorCode.INVALID_GROUP_ID}
    assert fetch(wire, "a/b", [0], 0)[1] == {(TOPIC, 0): (-1, -1, "", ErrorCode.INVALID_GROUP_ID)}
    # metadata beyond offset.metadata.max.bytes (4096 by default)
    R = Req(ApiKey.OFFSET_COMMIT)
    T = R.OffsetCommitRequestTopic
    body = R(
        group_id=group,
        topics=[
            T(
                name=TOPIC,
                partitions=[
                    T.OffsetCommitRequestPartition(partition_index=0, committed_offset=9, committed_metadata="x" * 4097)
                ],
            )
        ],
    )
    resp = wire.call(ApiKey.OFFSET_COMMIT, 0, body)
    assert resp.topics[0].partitions[0].error_code == ErrorCode.OFFSET_METADATA_TOO_LARGE
    assert broker.broker.registry.fetch_consumer_offset(group, TOPIC, 0) is None
    # nothing committed: -1, with UNKNOWN_TOPIC_OR_PARTITION as Kafka 0.8.2-2.x answer a missing node
    assert fetch(wire, group, [0], 0)[1] == {(TOPIC, 0): (-1, -1, "", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}


# -- ListGroups / DescribeGroups / DeleteGroups / OffsetDelete ---------------------------------------------------


@pytest.mark.parametrize("version", range(0, 6))
def test_list_groups_every_version(broker, wire, version):
    group = new_group("listed")
    coordinated(broker, wire, group)
    commit(wire, group, {0: 1}, 8)
    R = Req(ApiKey.LIST_GROUPS)
    resp = wire.call(ApiKey.LIST_GROUPS, version, R(states_filter=[], types_filter=[]))
    listed = {g.group_id: g for g in resp.groups}
    assert resp.error_code == ErrorCode.NONE and group in listed
    assert listed[group].group_state == ("Empty" if version >= 4 else "")
    assert listed[group].group_type == ("classic" if version >= 5 else "")
    if version >= 4:
        filtered = wire.call(ApiKey.LIST_GROUPS, version, R(states_filter=["stable"], types_filter=[]))
        assert group not in {g.group_id for g in filtered.groups}
    if version >= 5:
        filtered = wire.call(ApiKey.LIST_GROUPS, version, R(states_filter=[], types_filter=["consumer"]))
        assert filtered.groups == []
        filtered = wire.call(ApiKey.LIST_GROUPS, version, R(states_filter=[], types_filter=["Classic"]))
        assert group in {g.group_id for g in filtered.groups}


@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_every_version(broker, wire, version):
    group = new_group("described")
    coordinated(broker, wire, group)
    joined = join(wire, group, 5)
    sync(wire, group, joined.generation_id, joined.member_id)
    R = Req(ApiKey.DESCRIBE_GROUPS)
    resp = wire.call(
        ApiKey.DESCRIBE_GROUPS, version, R(groups=[group, "never-seen"], include_authorized_operations=True)
    )
    described, unknown = resp.groups
    assert (described.error_code, described.group_state, described.protocol_type, described.protocol_data) == (
        0,
        "Stable",
        "consumer",
        "range",
    )
    assert [(m.member_id, bytes(m.member_assignment)) for m in described.members] == [(joined.member_id, b"plan")]
    assert (unknown.group_id, unknown.error_code, unknown.group_state) == ("never-seen", 0, "Dead")
    leave(wire, group, joined.member_id)


@pytest.mark.parametrize("version", range(0, 3))
def test_delete_groups_every_version(broker, wire, version):
    group = new_group("deleted")
    coordinated(broker, wire, group)
    commit(wire, group, {0: 1}, 8)
    R = Req(ApiKey.DELETE_GROUPS)
    resp = wire.call(ApiKey.DELETE_GROUPS, version, R(groups_names=[group, group]))
    assert [(r.group_id, r.error_code) for r in resp.results] == [
        (group, ErrorCode.NONE),
        (group, ErrorCode.GROUP_ID_NOT_FOUND),
    ]


def test_offset_delete_v0(broker, wire):
    group = new_group("offset-delete")
    coordinated(broker, wire, group)
    commit(wire, group, {0: 1, 1: 2}, 8)
    R = Req(ApiKey.OFFSET_DELETE)
    T = R.OffsetDeleteRequestTopic
    body = R(group_id=group, topics=[T(name=TOPIC, partitions=[T.OffsetDeleteRequestPartition(partition_index=0)])])
    resp = wire.call(ApiKey.OFFSET_DELETE, 0, body)
    assert resp.error_code == ErrorCode.NONE
    assert [(p.partition_index, p.error_code) for t in resp.topics for p in t.partitions] == [(0, 0)]
    assert {tp: v[0] for tp, v in fetch(wire, group, [0, 1], 7)[1].items()} == {(TOPIC, 0): -1, (TOPIC, 1): 2}
