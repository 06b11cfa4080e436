"""KIP-848 consumer groups through the wire (tests/broker/wire.py) on an in-process broker with a manual clock:
ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69), and what the classic group APIs answer for a consumer
group (ListGroups v5 types, DescribeGroups, OffsetCommit/OffsetFetch v9 member epochs, DeleteGroups), the empty
classic group upgraded on the first heartbeat, session expiry from the ticker, and the group rebuilt from
``__consumer_offsets`` when its partition is loaded again (coordinator failover)."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC
from broker.log.clock import ManualClock
from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

TOPIC = "cg-events"
SESSION_MS = 2_000


@pytest.fixture(scope="module")
def clock():
    return ManualClock()


@pytest.fixture(scope="module")
def broker(tmp_path_factory, clock):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:cg-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        clock=clock,
        group_min_session_timeout_ms=100,
        group_initial_rebalance_delay_ms=0,
        offsets_topic_num_partitions=2,
        group_consumer_session_timeout_ms=SESSION_MS,
        offsets_retention_check_interval_ms=24 * 3600 * 1000,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 4, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 4)), 10, f"leaders of {TOPIC}")
    gc = b.broker.group_coordinator
    b.call(lambda: gc.find_coordinator("any"))  # creates __consumer_offsets, as a client's FindCoordinator does
    wait_until(lambda: b.call(lambda: len(gc.loaded)) == 2, 10, "the offsets partitions to load")
    yield b
    b.stop()


@pytest.fixture()
def w(broker):
    with Wire(broker.bootstrap_servers) as wire:
        yield wire


def new_group() -> str:
    return f"cg-{uuid.uuid4().hex[:8]}"


def topic_id(broker) -> uuid.UUID:
    return broker.call(lambda: broker.broker.metadata.topics[TOPIC].topic_id)


def Req(api_key):
    return API_BY_KEY[api_key].Request


def heartbeat(w, group, member_id, epoch, *, topics=(TOPIC,), owned=None, version=1, regex=None, instance_id=None):
    R = Req(ApiKey.CONSUMER_GROUP_HEARTBEAT)
    first = epoch == 0
    return w.call(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        version,
        R(
            group_id=group,
            member_id=member_id,
            member_epoch=epoch,
            instance_id=instance_id,
            rebalance_timeout_ms=30_000 if first else -1,
            subscribed_topic_names=list(topics) if first and regex is None else None,
            subscribed_topic_regex=regex if first else None,
            topic_partitions=([] if first else None)
            if owned is None
            else [R.TopicPartitions(topic_id=t, partitions=sorted(ps)) for t, ps in owned.items()],
        ),
    )


def owned_of(resp) -> dict[uuid.UUID, set[int]]:
    return {tp.topic_id: set(tp.partitions) for tp in resp.assignment.topic_partitions}


def join(w, group, member_id=None):
    member_id = member_id or uuid.uuid4().hex[:22]
    resp = heartbeat(w, group, member_id, 0)
    assert resp.error_code == ErrorCode.NONE, resp
    return member_id, resp


def describe(w, *groups, version=1):
    return w.call(ApiKey.CONSUMER_GROUP_DESCRIBE, version, Req(ApiKey.CONSUMER_GROUP_DESCRIBE)(group_ids=list(groups)))


def test_a_member_joins_gets_every_partition_and_is_described(broker, w):
    group = new_group()
    member, resp = join(w, group)
    assert (resp.member_id, resp.member_epoch, resp.heartbeat_interval_ms) == (member, 1, 5000)
    assert owned_of(resp) == {topic_id(broker): {0, 1, 2, 3}}
    again = heartbeat(w, group, member, 1, owned=owned_of(resp))
    assert (again.error_code, again.member_epoch, again.assignment) == (ErrorCode.NONE, 1, None)
    (d,) = describe(w, group).groups
    assert (d.error_code, d.group_state, d.group_epoch, d.assignment_epoch, d.assignor_name) == (
        ErrorCode.NONE, "Stable", 1, 1, "uniform",
    )  # fmt: skip
    (m,) = d.members
    assert (m.member_id, m.member_epoch, m.client_id, m.subscribed_topic_names, m.member_type) == (
        member, 1, "wire-test", [TOPIC], 1,
    )  # fmt: skip
    assert m.client_host.startswith("/")
    assert [(t.topic_name, t.partitions) for t in m.assignment.topic_partitions] == [(TOPIC, [0, 1, 2, 3])]
    assert [(t.topic_name, t.partitions) for t in m.target_assignment.topic_partitions] == [(TOPIC, [0, 1, 2, 3])]
    (v0,) = describe(w, group, version=0).groups
    assert v0.members[0].member_type == -1  # not in v0


def test_a_second_member_takes_half_after_the_first_revokes(broker, w):
    group = new_group()
    a, ra = join(w, group)
    b, rb = join(w, group)
    assert (rb.member_epoch, owned_of(rb)) == (2, {})  # everything is still a's
    ra2 = heartbeat(w, group, a, 1, owned=owned_of(ra))
    kept = owned_of(ra2)[topic_id(broker)]
    assert len(kept) == 2 and ra2.member_epoch == 1  # revoking first, at its epoch
    ra3 = heartbeat(w, group, a, 1, owned={topic_id(broker): kept})
    assert ra3.member_epoch == 2
    rb2 = heartbeat(w, group, b, 2, owned={})
    assert owned_of(rb2)[topic_id(broker)] == {0, 1, 2, 3} - kept
    (d,) = describe(w, group).groups
    assert d.group_epoch == 2 and sorted(m.member_id for m in d.members) == sorted([a, b])


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (lambda w: "", ErrorCode.INVALID_GROUP_ID, None),
        (lambda w: new_group(), ErrorCode.GROUP_ID_NOT_FOUND, "not found"),
    ],
)
def test_describe_errors(broker, w, make, code, message):
    (d,) = describe(w, make(w)).groups
    assert d.error_code == code
    if message:
        assert message in d.error_message


def test_errors_of_a_heartbeat(broker, w):
    group = new_group()
    unknown = heartbeat(w, group, "m-x", 3)
    assert (unknown.error_code, unknown.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        f"Consumer group {group} not found.",
    )
    member, _ = join(w, group)
    assert heartbeat(w, group, member, 7).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert heartbeat(w, group, "someone-else", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert heartbeat(w, "", member, 0).error_code == ErrorCode.INVALID_GROUP_ID


def _protocols(topics=(TOPIC,)):
    from spark_kafkalog.client.consumer.consumer_protocol import Subscription, encode_subscription

    R = Req(ApiKey.JOIN_GROUP)
    return [R.JoinGroupRequestProtocol(name="range", metadata=encode_subscription(Subscription(tuple(topics))))]


def _classic_join(w, group, member_id="", version=5):
    R = Req(ApiKey.JOIN_GROUP)
    return w.call(
        ApiKey.JOIN_GROUP,
        version,
        R(group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id=member_id,
          protocol_type="consumer", protocols=_protocols()),
    )  # fmt: skip


def _classic_join_and_leave(w, group):
    """A classic member joins (MEMBER_ID_REQUIRED first, as v4+ clients) and stays; its member id."""
    first = _classic_join(w, group)
    joined = _classic_join(w, group, first.member_id)
    assert joined.error_code == ErrorCode.NONE
    return joined.member_id


def _sync(w, group, member_id, generation, assignments=()):
    R = Req(ApiKey.SYNC_GROUP)
    return w.call(
        ApiKey.SYNC_GROUP,
        5,
        R(group_id=group, generation_id=generation, member_id=member_id, protocol_type="consumer",
          protocol_name="range",
          assignments=[R.SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignments]),
    )  # fmt: skip


def _classic_heartbeat(w, group, member_id, generation):
    R = Req(ApiKey.HEARTBEAT)
    return w.call(ApiKey.HEARTBEAT, 4, R(group_id=group, generation_id=generation, member_id=member_id)).error_code


def test_an_empty_classic_group_becomes_a_consumer_group(broker, w):
    group = new_group()
    member = _classic_join_and_leave(w, group)
    (d,) = describe(w, group).groups
    assert (d.error_code, d.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group} is not a consumer group.")
    leave = Req(ApiKey.LEAVE_GROUP)(group_id=group, member_id=member)
    assert w.call(ApiKey.LEAVE_GROUP, 0, leave).error_code == ErrorCode.NONE
    gc = broker.broker.group_coordinator
    wait_until(lambda: broker.call(lambda: gc.groups[group].is_empty), 5, "empty")
    m, resp = join(w, group)
    assert resp.member_epoch == 1
    assert broker.call(lambda: (gc.group_type(group), group in gc.groups, group in gc.store.groups)) == (
        "consumer", False, False,
    )  # fmt: skip


def test_a_classic_group_with_members_is_upgraded_online(broker, w):
    """Kafka's online migration: a ConsumerGroupHeartbeat joining a classic group with members converts it; the
    classic member keeps JoinGroup/SyncGroup/Heartbeat/LeaveGroup and is answered from the consumer group."""
    from spark_kafkalog.client.consumer.consumer_protocol import Assignment, decode_assignment, encode_assignment
    from spark_kafkalog.client.types import TopicPartition

    group = new_group()
    classic = _classic_join_and_leave(w, group)
    everything = encode_assignment(Assignment(tuple(TopicPartition(TOPIC, p) for p in range(4))))
    assert _sync(w, group, classic, 1, [(classic, everything)]).error_code == ErrorCode.NONE
    new, resp = join(w, group)
    assert resp.error_code == ErrorCode.NONE
    (d,) = describe(w, group).groups
    assert {m.member_id: m.member_type for m in d.members} == {classic: 0, new: 1}
    assert d.group_epoch == 2
    # the classic member is told to rejoin, rejoins at its epoch, revokes what the newcomer gets
    assert _classic_heartbeat(w, group, classic, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = _classic_join(w, group, classic)
    assert (rejoined.error_code, rejoined.leader, rejoined.members) == (ErrorCode.NONE, "", [])
    synced = _sync(w, group, classic, rejoined.generation_id)
    assert synced.error_code == ErrorCode.NONE and synced.protocol_type == "consumer"
    kept = {tp.partition for tp in decode_assignment(synced.assignment).partitions}
    assert 0 < len(kept) <= 4
    # a classic member commits below v9 with its epoch as the generation; another is ILLEGAL_GENERATION
    assert _commit(w, group, classic, rejoined.generation_id, version=8) == ErrorCode.NONE
    assert _commit(w, group, classic, rejoined.generation_id + 5, version=8) == ErrorCode.ILLEGAL_GENERATION
    gc = broker.broker.group_coordinator
    assert broker.call(lambda: gc.group_type(group)) == "consumer"
    LR = Req(ApiKey.LEAVE_GROUP)
    left = w.call(ApiKey.LEAVE_GROUP, 3, LR(group_id=group, members=[LR.MemberIdentity(member_id=classic)]))
    assert [m.error_code for m in left.members] == [ErrorCode.NONE]
    assert [m.member_id for m in describe(w, group).groups[0].members] == [new]


def test_the_group_goes_back_to_classic_when_its_last_consumer_member_leaves(broker, w):
    """Kafka's downgrade (policy bidirectional): the consumer-protocol member leaves, the classic member remains, so
    the group becomes a classic group again (its records tombstoned, a GroupMetadata written) and rebalances."""
    from broker.coordinator.offset_store import iter_log_records
    from broker.coordinator.offsets_topic import GroupKey, decode_group_value, decode_key

    group = new_group()
    classic = _classic_join_and_leave(w, group)
    assert _sync(w, group, classic, 1).error_code == ErrorCode.NONE
    new, _ = join(w, group)
    assert heartbeat(w, group, new, -1).error_code == ErrorCode.NONE
    gc = broker.broker.group_coordinator
    assert broker.call(lambda: gc.group_type(group)) == "classic"
    assert describe(w, group).groups[0].error_message == f"Group {group} is not a consumer group."
    (dg,) = w.call(ApiKey.DESCRIBE_GROUPS, 5, Req(ApiKey.DESCRIBE_GROUPS)(groups=[group])).groups
    assert (dg.group_state, [m.member_id for m in dg.members]) == ("PreparingRebalance", [classic])
    rejoined = _classic_join(w, group, classic)
    assert (rejoined.error_code, rejoined.leader) == (ErrorCode.NONE, classic)
    part = broker.call(lambda: broker.broker.replica_manager.get_partition(OFFSETS_TOPIC, gc.partition_of(group)))
    values = [
        decode_group_value(v)
        for k, v in broker.call(lambda: list(iter_log_records(part.log)))
        if k is not None and k[:2] == b"\x00\x02" and decode_key(k) == GroupKey(group) and v is not None
    ]
    assert values and values[-1].protocol_type == "consumer" and [m.member_id for m in values[-1].members] == [classic]
    p = broker.call(lambda: gc.partition_of(group))

    async def reload():
        gc._unload(p)
        await gc._load(p, part)

    broker.call(reload)  # a coordinator loading the partition finds the classic group, not the consumer group
    assert broker.call(lambda: (gc.group_type(group), sorted(gc.groups[group].members))) == ("classic", [classic])


def test_a_classic_member_cannot_join_with_a_protocol_type_other_than_consumer(broker, w):
    group = new_group()
    join(w, group)
    R = Req(ApiKey.JOIN_GROUP)
    j = w.call(
        ApiKey.JOIN_GROUP,
        5,
        R(group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="x-1",
          protocol_type="connect", protocols=_protocols()),
    )  # fmt: skip
    assert j.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_list_groups_v5_types_and_describe_groups_of_a_consumer_group(broker, w):
    group = new_group()
    join(w, group)
    LR = Req(ApiKey.LIST_GROUPS)
    listed = {g.group_id: g for g in w.call(ApiKey.LIST_GROUPS, 5, LR(types_filter=["Consumer"])).groups}
    g = listed[group]
    assert (g.protocol_type, g.group_state, g.group_type) == ("consumer", "Stable", "consumer")
    classic_only = w.call(ApiKey.LIST_GROUPS, 5, LR(types_filter=["classic"])).groups
    assert group not in {x.group_id for x in classic_only}
    by_state = w.call(ApiKey.LIST_GROUPS, 4, LR(states_filter=["stable"])).groups
    assert group in {x.group_id for x in by_state}
    # Kafka 4.4 describes only classic groups with DescribeGroups: a consumer group is Dead there (v0-5)
    (dg,) = w.call(ApiKey.DESCRIBE_GROUPS, 5, Req(ApiKey.DESCRIBE_GROUPS)(groups=[group])).groups
    assert (dg.error_code, dg.group_state, dg.members) == (ErrorCode.NONE, "Dead", [])


def _commit(w, group, member, epoch, version=9, offset=5):
    R = Req(ApiKey.OFFSET_COMMIT)
    T = R.OffsetCommitRequestTopic
    P = T.OffsetCommitRequestPartition
    resp = w.call(
        ApiKey.OFFSET_COMMIT,
        version,
        R(group_id=group, generation_id_or_member_epoch=epoch, member_id=member,
          topics=[T(name=TOPIC, partitions=[P(partition_index=0, committed_offset=offset)])]),
    )  # fmt: skip
    return resp.topics[0].partitions[0].error_code


def _fetch(w, group, member, epoch):
    R = Req(ApiKey.OFFSET_FETCH)
    G = R.OffsetFetchRequestGroup
    resp = w.call(
        ApiKey.OFFSET_FETCH,
        9,
        R(groups=[G(group_id=group, member_id=member, member_epoch=epoch,
                    topics=[G.OffsetFetchRequestTopics(name=TOPIC, partition_indexes=[0])])]),
    )  # fmt: skip
    return resp.groups[0]


def test_offset_commit_and_fetch_v9_check_member_epochs(broker, w):
    group = new_group()
    member, _ = join(w, group)
    assert _commit(w, group, member, 1) == ErrorCode.NONE
    assert _commit(w, group, member, 0) == ErrorCode.STALE_MEMBER_EPOCH
    assert _commit(w, group, "nobody", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert _commit(w, group, member, 1, version=8) == ErrorCode.UNSUPPORTED_VERSION
    assert _commit(w, group, "", -1) == ErrorCode.UNKNOWN_MEMBER_ID  # admin commits only while empty
    fetched = _fetch(w, group, member, 1)
    assert fetched.error_code == ErrorCode.NONE and fetched.topics[0].partitions[0].committed_offset == 5
    assert _fetch(w, group, member, 0).error_code == ErrorCode.STALE_MEMBER_EPOCH
    assert _fetch(w, group, "nobody", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert _fetch(w, group, None, -1).error_code == ErrorCode.NONE  # admin tools


def test_delete_groups_needs_an_empty_consumer_group(broker, w):
    group = new_group()
    member, _ = join(w, group)
    assert _commit(w, group, member, 1) == ErrorCode.NONE
    DR = Req(ApiKey.DELETE_GROUPS)
    (r,) = w.call(ApiKey.DELETE_GROUPS, 2, DR(groups_names=[group])).results
    assert r.error_code == ErrorCode.NON_EMPTY_GROUP
    left = heartbeat(w, group, member, -1)
    assert (left.error_code, left.member_epoch) == (ErrorCode.NONE, -1)
    assert describe(w, group).groups[0].group_state == "Empty"
    (r,) = w.call(ApiKey.DELETE_GROUPS, 2, DR(groups_names=[group])).results
    assert r.error_code == ErrorCode.NONE
    assert describe(w, group).groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert _fetch(w, group, None, -1).topics[0].partitions[0].committed_offset == -1  # offsets gone too


def test_a_silent_member_is_fenced_when_its_session_expires(broker, w, clock):
    group = new_group()
    a, _ = join(w, group)
    b, _ = join(w, group)
    clock.advance(SESSION_MS // 2)
    heartbeat(w, group, a, 1, owned=None)
    clock.advance(SESSION_MS // 2 + 1)
    gc = broker.broker.group_coordinator

    def members():
        return broker.call(lambda: sorted(gc.consumer_groups[group].members))

    wait_until(lambda: members() == [a], 10, "b's session to expire")
    (d,) = describe(w, group).groups
    assert [m.member_id for m in d.members] == [a] and d.group_epoch == 3


def test_the_group_is_rebuilt_from_its_records_on_load(broker, w):
    group = new_group()
    a, ra = join(w, group)
    heartbeat(w, group, a, 1, owned=owned_of(ra))
    b, _ = join(w, group)
    before = describe(w, group).groups[0]
    gc = broker.broker.group_coordinator
    p = broker.call(lambda: gc.partition_of(group))

    async def reload():
        part = broker.broker.replica_manager.get_partition(OFFSETS_TOPIC, p)
        gc._unload(p)
        assert group not in gc.consumer_groups
        await gc._load(p, part)

    broker.call(reload)
    after = describe(w, group).groups[0]
    assert after == before


def test_a_classic_join_replaces_an_empty_consumer_group(broker, w):
    group = new_group()
    member, _ = join(w, group)
    assert heartbeat(w, group, member, -1).error_code == ErrorCode.NONE
    classic_member = _classic_join_and_leave(w, group)
    gc = broker.broker.group_coordinator
    assert broker.call(lambda: gc.group_type(group)) == "classic"
    assert classic_member in broker.call(lambda: list(gc.groups[group].members))
    assert describe(w, group).groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_the_group_records_are_kafkas_in_the_log(broker, w):
    """What the heartbeat wrote reads back with the codec: a member (5), the group epoch (3), the target
    assignment (7, 6) and the member's current assignment (8), in that order for a first join."""
    from broker.coordinator.consumer.record_codec import decode_record, is_consumer_group_key
    from broker.coordinator.offset_store import iter_log_records

    group = new_group()
    member, _ = join(w, group)
    gc = broker.broker.group_coordinator
    part = broker.call(lambda: broker.broker.replica_manager.get_partition(OFFSETS_TOPIC, gc.partition_of(group)))
    records = [
        decode_record(k, v)
        for k, v in broker.call(lambda: list(iter_log_records(part.log)))
        if is_consumer_group_key(k) and decode_record(k, v).group_id == group
    ]
    assert [r.record_type for r in records] == [5, 3, 7, 6, 8]
    assert records[0].key.member_id == member and records[0].value.subscribed_topic_names == (TOPIC,)
    assert records[1].value.epoch == 1 and records[4].value.member_epoch == 1


def _commit_partitions(w, group, member, epoch, partitions):
    R = Req(ApiKey.OFFSET_COMMIT)
    T = R.OffsetCommitRequestTopic
    P = T.OffsetCommitRequestPartition
    resp = w.call(
        ApiKey.OFFSET_COMMIT,
        9,
        R(group_id=group, generation_id_or_member_epoch=epoch, member_id=member,
          topics=[T(name=TOPIC, partitions=[P(partition_index=p, committed_offset=1) for p in partitions])]),
    )  # fmt: skip
    return {p.partition_index: p.error_code for p in resp.topics[0].partitions}


def test_a_commit_at_an_older_epoch_lands_for_partitions_held_since_then(broker, w):
    """Kafka 4.4 (KIP-1251): an epoch older than the member's is accepted for a partition the member still holds
    and got at that epoch or before; refused (STALE_MEMBER_EPOCH) for one it no longer holds; a newer epoch is
    refused for the whole request."""
    group = new_group()
    a, ra = join(w, group)
    join(w, group)
    revoking = heartbeat(w, group, a, 1, owned=owned_of(ra))
    kept = owned_of(revoking)[topic_id(broker)]
    assert heartbeat(w, group, a, 1, owned={topic_id(broker): kept}).member_epoch == 2
    gone = sorted({0, 1, 2, 3} - kept)
    codes = _commit_partitions(w, group, a, 1, sorted(kept) + gone)
    assert codes == {**dict.fromkeys(kept, ErrorCode.NONE), **dict.fromkeys(gone, ErrorCode.STALE_MEMBER_EPOCH)}
    assert set(_commit_partitions(w, group, a, 3, sorted(kept)).values()) == {ErrorCode.STALE_MEMBER_EPOCH}
    assert set(_commit_partitions(w, group, a, 2, sorted(kept)).values()) == {ErrorCode.NONE}


def test_a_regex_is_re_resolved_when_a_topic_is_created(broker, w):
    """The group's regex is resolved against the topics (record 16); a topic created later that matches bumps the
    group epoch on the next heartbeat and its partitions are assigned."""
    group, prefix = new_group(), f"rx{uuid.uuid4().hex[:6]}"
    first = f"{prefix}-a"
    broker.call(lambda: broker.broker.topic_admin.create_topic(first, 1, 1))
    wait_until(lambda: broker.call(lambda: broker.broker.topic_admin.has_leaders(first, 1)), 10, "leaders")
    member = uuid.uuid4().hex[:22]
    resp = heartbeat(w, group, member, 0, regex=f"{prefix}-.*")
    assert resp.error_code == ErrorCode.NONE and resp.member_epoch == 1
    ids = broker.call(lambda: {n: t.topic_id for n, t in broker.broker.metadata.topics.items()})
    assert owned_of(resp) == {ids[first]: {0}}
    later = f"{prefix}-b"
    broker.call(lambda: broker.broker.topic_admin.create_topic(later, 2, 1))
    wait_until(lambda: broker.call(lambda: broker.broker.topic_admin.has_leaders(later, 2)), 10, "leaders")
    ids = broker.call(lambda: {n: t.topic_id for n, t in broker.broker.metadata.topics.items()})
    again = heartbeat(w, group, member, 1, owned=owned_of(resp))
    assert again.member_epoch == 2 and owned_of(again) == {ids[first]: {0}, ids[later]: {0, 1}}
    (d,) = describe(w, group).groups
    assert d.members[0].subscribed_topic_regex == f"{prefix}-.*" and d.group_epoch == 2


def test_offsets_of_subscribed_topics_stay_and_cannot_be_deleted(broker, w):
    """OffsetDelete answers GROUP_SUBSCRIBED_TO_TOPIC for a topic the consumer group subscribes to; offset expiry
    (KIP-211, as Kafka for consumer groups) keeps a subscribed topic's offsets past the retention and removes the
    others'."""
    other = f"other-{uuid.uuid4().hex[:6]}"
    broker.call(lambda: broker.broker.topic_admin.create_topic(other, 1, 1))
    wait_until(lambda: broker.call(lambda: broker.broker.topic_admin.has_leaders(other, 1)), 10, "leaders")
    group = new_group()
    member, _ = join(w, group)
    assert _commit(w, group, member, 1) == ErrorCode.NONE
    R = Req(ApiKey.OFFSET_COMMIT)
    T, P = R.OffsetCommitRequestTopic, R.OffsetCommitRequestTopic.OffsetCommitRequestPartition
    resp = w.call(
        ApiKey.OFFSET_COMMIT,
        9,
        R(group_id=group, generation_id_or_member_epoch=1, member_id=member,
          topics=[T(name=other, partitions=[P(partition_index=0, committed_offset=3)])]),
    )  # fmt: skip
    assert resp.topics[0].partitions[0].error_code == ErrorCode.NONE
    D = Req(ApiKey.OFFSET_DELETE)
    DT, DP = D.OffsetDeleteRequestTopic, D.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition
    deleted = w.call(
        ApiKey.OFFSET_DELETE, 0, D(group_id=group, topics=[DT(name=TOPIC, partitions=[DP(partition_index=0)])])
    )
    assert deleted.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
    gc = broker.broker.group_coordinator
    week_later = broker.call(lambda: gc.now()) + 8 * 24 * 3600 * 1000
    broker.call(lambda: gc.expire_offsets(week_later))
    assert broker.call(lambda: sorted(gc.store.offsets[group])) == [(TOPIC, 0)]
