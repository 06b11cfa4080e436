"""KIP-932 share groups through the wire (tests/broker/wire.py) on an in-process broker with a manual clock:
ShareGroupHeartbeat (76) and ShareGroupDescribe (77): members joining share the partitions, leave, expire;
what ListGroups, DescribeGroups, DeleteGroups and the other protocols answer for a share group; ApiVersions'
``share.version``; and the group rebuilt from ``__consumer_offsets`` when its partition is loaded again."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC
from broker.log.clock import ManualClock
from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

TOPIC = "sg-events"
SESSION_MS = 45_000


@pytest.fixture(scope="module")
def clock():
    return ManualClock()


@pytest.fixture(scope="module")
def broker(tmp_path_factory, clock):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:sg-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        clock=clock,
        group_initial_rebalance_delay_ms=0,
        offsets_topic_num_partitions=2,
        offsets_retention_check_interval_ms=24 * 3600 * 1000,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 2, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 2)), 10, f"leaders of {TOPIC}")
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
    return f"sg-{uuid.uuid4().hex[:8]}"


def Req(api_key):
    return API_BY_KEY[api_key].Request


def heartbeat(w, group, member_id, epoch, topics=(TOPIC,)):
    R = Req(ApiKey.SHARE_GROUP_HEARTBEAT)
    names = list(topics) if topics is not None else None
    return w.call(
        ApiKey.SHARE_GROUP_HEARTBEAT,
        1,
        R(group_id=group, member_id=member_id, member_epoch=epoch, subscribed_topic_names=names),
    )


def join(w, group, topics=(TOPIC,)):
    member = uuid.uuid4().hex
    resp = heartbeat(w, group, member, 0, topics)
    assert resp.error_code == ErrorCode.NONE, resp
    return member, resp


def assigned(resp) -> list[int]:
    return sorted(p for t in resp.assignment.topic_partitions for p in t.partitions)


def describe(w, *groups):
    return w.call(
        ApiKey.SHARE_GROUP_DESCRIBE,
        1,
        Req(ApiKey.SHARE_GROUP_DESCRIBE)(group_ids=list(groups), include_authorized_operations=False),
    )


def test_members_share_the_partitions_and_a_third_shares_one_with_another(broker, w):
    group = new_group()
    a, ra = join(w, group)
    assert ra.member_epoch == 1 and assigned(ra) == [0, 1] and ra.heartbeat_interval_ms == 5000
    b, rb = join(w, group)
    assert rb.member_epoch == 2 and len(assigned(rb)) == 1
    ra2 = heartbeat(w, group, a, 1, None)  # a takes its new target at once: no revocation phase
    assert ra2.member_epoch == 2 and assigned(ra2) == sorted({0, 1} - set(assigned(rb)))
    c, rc = join(w, group)
    assert rc.member_epoch == 3 and len(assigned(rc)) == 1  # 3 members, 2 partitions: a partition is shared
    (d,) = describe(w, group).groups
    assert d.error_code == ErrorCode.NONE and d.group_state == "Stable" and d.assignor_name == "simple"
    assert d.group_epoch == 3 and d.assignment_epoch == 3
    assert sorted(m.member_id for m in d.members) == sorted([a, b, c])


def test_a_member_that_leaves_is_removed_and_the_group_becomes_empty(broker, w):
    group = new_group()
    a, _ = join(w, group)
    left = heartbeat(w, group, a, -1, None)
    assert left.error_code == ErrorCode.NONE and left.member_epoch == -1
    (d,) = describe(w, group).groups
    assert d.group_state == "Empty" and d.members == [] and d.group_epoch == 2


@pytest.mark.parametrize(
    ("member_id", "epoch", "topics", "code"),
    [
        ("", 0, (TOPIC,), ErrorCode.INVALID_REQUEST),
        ("m", 0, None, ErrorCode.INVALID_REQUEST),
        ("m", 0, (), ErrorCode.INVALID_REQUEST),
        ("m", -2, None, ErrorCode.INVALID_REQUEST),
        ("m", 3, None, ErrorCode.GROUP_ID_NOT_FOUND),
    ],
)
def test_malformed_or_unknown_heartbeats_are_refused(broker, w, member_id, epoch, topics, code):
    assert heartbeat(w, new_group(), member_id, epoch, topics).error_code == code


def test_epochs_other_than_the_current_or_previous_one_are_fenced(broker, w):
    group = new_group()
    a, _ = join(w, group)
    join(w, group)
    assert heartbeat(w, group, a, 5, None).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert heartbeat(w, group, "nobody", 1, None).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert heartbeat(w, group, a, 1, None).member_epoch == 2  # its own epoch: it moves to the new one
    assert heartbeat(w, group, a, 1, None).error_code == ErrorCode.NONE  # the previous epoch is accepted
    assert heartbeat(w, group, a, 0, None).error_code == ErrorCode.INVALID_REQUEST


def test_a_silent_member_is_removed_when_its_session_expires(broker, w, clock):
    group = new_group()
    a, _ = join(w, group)
    b, _ = join(w, group)
    clock.advance(SESSION_MS // 2)
    heartbeat(w, group, a, 1, None)
    clock.advance(SESSION_MS // 2 + 1)
    gc = broker.broker.group_coordinator
    wait_until(lambda: broker.call(lambda: sorted(gc.share_groups[group].members)) == [a], 10, "b to expire")


def test_list_describe_and_delete_groups_see_share_groups(broker, w):
    group = new_group()
    a, _ = join(w, group)
    LG = Req(ApiKey.LIST_GROUPS)
    listed = w.call(ApiKey.LIST_GROUPS, 5, LG(states_filter=[], types_filter=["share"])).groups
    mine = [g for g in listed if g.group_id == group]
    assert [(g.protocol_type, g.group_state, g.group_type) for g in mine] == [("share", "Stable", "share")]
    DG = Req(ApiKey.DESCRIBE_GROUPS)
    (dg,) = w.call(ApiKey.DESCRIBE_GROUPS, 6, DG(groups=[group], include_authorized_operations=False)).groups
    assert (
        dg.error_code == ErrorCode.GROUP_ID_NOT_FOUND and dg.error_message == f"Group {group} is not a classic group."
    )
    DR = Req(ApiKey.DELETE_GROUPS)
    (r,) = w.call(ApiKey.DELETE_GROUPS, 2, DR(groups_names=[group])).results
    assert r.error_code == ErrorCode.NON_EMPTY_GROUP
    heartbeat(w, group, a, -1, None)
    (r,) = w.call(ApiKey.DELETE_GROUPS, 2, DR(groups_names=[group])).results
    assert r.error_code == ErrorCode.NONE
    (d,) = describe(w, group).groups
    assert d.error_code == ErrorCode.GROUP_ID_NOT_FOUND and d.error_message == f"Group {group} not found."


def test_a_share_group_id_is_refused_by_the_consumer_protocol_and_the_other_way(broker, w):
    group = new_group()
    join(w, group)
    R = Req(ApiKey.CONSUMER_GROUP_HEARTBEAT)
    resp = w.call(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        1,
        R(group_id=group, member_id=uuid.uuid4().hex, member_epoch=0, rebalance_timeout_ms=30_000,
          subscribed_topic_names=[TOPIC], topic_partitions=[]),
    )  # fmt: skip
    assert resp.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    consumer = new_group()
    w.call(
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        1,
        R(group_id=consumer, member_id=uuid.uuid4().hex, member_epoch=0, rebalance_timeout_ms=30_000,
          subscribed_topic_names=[TOPIC], topic_partitions=[]),
    )  # fmt: skip
    refused = heartbeat(w, consumer, uuid.uuid4().hex, 0)
    assert refused.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert refused.error_message == f"Group {consumer} is not a share group."
    (d,) = describe(w, consumer).groups
    assert d.error_code == ErrorCode.GROUP_ID_NOT_FOUND and d.error_message == f"Group {consumer} is not a share group."


def test_api_versions_finalizes_share_version(broker, w):
    resp = w.call(
        ApiKey.API_VERSIONS, 4, Req(ApiKey.API_VERSIONS)(client_software_name="t", client_software_version="1")
    )
    assert {(f.name, f.max_version_level) for f in resp.finalized_features} >= {("share.version", 1)}
    assert {(k.api_key, k.min_version, k.max_version) for k in resp.api_keys} >= {(76, 1, 1), (77, 1, 1)}


def test_the_group_is_rebuilt_from_its_records_on_load(broker, w):
    group = new_group()
    a, _ = join(w, group)
    b, _ = join(w, group)
    heartbeat(w, group, a, 1, None)
    before = describe(w, group).groups[0]
    gc = broker.broker.group_coordinator
    p = broker.call(lambda: gc.partition_of(group))

    async def reload():
        part = broker.broker.replica_manager.get_partition(OFFSETS_TOPIC, p)
        gc._unload(p)
        assert group not in gc.share_groups
        await gc._load(p, part)

    broker.call(reload)
    after = describe(w, group).groups[0]
    assert after == before
    assert heartbeat(w, group, b, 2, None).member_epoch == 2


class FakePersister:
    """The share persister's initialize and delete, recorded; ``failing`` partitions answer an error."""

    def __init__(self, failing=()):
        self.initialized: list[tuple[str, uuid.UUID, int, int, int]] = []
        self.deleted: list[tuple[str, uuid.UUID, int]] = []
        self.failing = set(failing)

    async def initialize(self, group_id, topic_id, partition, state_epoch, start_offset):
        if partition in self.failing:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, "down"
        self.initialized.append((group_id, topic_id, partition, state_epoch, start_offset))
        return ErrorCode.NONE, None

    async def delete(self, group_id, topic_id, partition):
        self.deleted.append((group_id, topic_id, partition))
        return ErrorCode.NONE, None


@pytest.fixture()
def fake_persister(broker):
    gc = broker.broker.group_coordinator
    fake = FakePersister()
    broker.call(lambda: gc.use_share_persister(lambda: fake))
    yield fake
    broker.call(lambda: gc.use_share_persister(lambda: getattr(broker.broker.services, "share_persister", None)))


def test_partitions_are_initialized_through_the_persister_before_they_are_assigned(broker, w, fake_persister):
    group = new_group()
    tid = broker.call(lambda: broker.broker.metadata.topics[TOPIC].topic_id)
    fake_persister.failing = {1}
    a, ra = join(w, group)
    assert assigned(ra) == [0]  # partition 1's state could not be initialized: not assigned yet
    assert fake_persister.initialized == [(group, tid, 0, 1, -1)]
    fake_persister.failing = set()
    ra = heartbeat(w, group, a, 1, None)  # retried before the next heartbeat, then assigned
    assert (ra.member_epoch, assigned(ra)) == (2, [0, 1])
    assert fake_persister.initialized[1:] == [(group, tid, 1, 2, -1)]
    heartbeat(w, group, a, 2, None)
    assert len(fake_persister.initialized) == 2  # initialized once
    heartbeat(w, group, a, -1, None)
    DR = Req(ApiKey.DELETE_GROUPS)
    (r,) = w.call(ApiKey.DELETE_GROUPS, 2, DR(groups_names=[group])).results
    assert r.error_code == ErrorCode.NONE
    assert sorted(fake_persister.deleted) == [(group, tid, 0), (group, tid, 1)]


def test_new_partitions_of_a_subscribed_topic_join_the_assignment(broker, w):
    topic = f"sg-grow-{uuid.uuid4().hex[:6]}"
    admin = broker.broker.topic_admin
    broker.call(lambda: admin.create_topic(topic, 1, 1))
    wait_until(lambda: broker.call(lambda: admin.has_leaders(topic, 1)), 10, f"leaders of {topic}")
    group = new_group()
    a, ra = join(w, group, (topic,))
    assert assigned(ra) == [0]
    broker.call(lambda: admin.create_partitions(topic, 3))
    wait_until(lambda: broker.call(lambda: admin.has_leaders(topic, 3)), 10, f"new partitions of {topic}")
    ra = heartbeat(w, group, a, 1, None)
    assert (ra.member_epoch, assigned(ra)) == (2, [0, 1, 2])


def test_a_groups_own_session_timeout_and_heartbeat_interval_override_the_brokers(broker, w, clock):
    @dataclass(frozen=True)
    class Settings:
        session_timeout_ms: int = 2_000
        heartbeat_interval_ms: int = 7_000

    class Configs:
        def share_config(self, group_id):
            return Settings()

    gc = broker.broker.group_coordinator
    broker.call(lambda: gc.use_group_configs(lambda: Configs()))
    try:
        group = new_group()
        a, ra = join(w, group)
        assert ra.heartbeat_interval_ms == 7_000
        join(w, group)
        clock.advance(1_000)
        heartbeat(w, group, a, 1, None)
        clock.advance(1_001)
        wait_until(lambda: broker.call(lambda: sorted(gc.share_groups[group].members)) == [a], 10, "b to expire")
    finally:
        broker.call(lambda: gc.use_group_configs(lambda: getattr(broker.broker.services, "group_configs", None)))


def test_a_deleted_topics_share_state_is_deleted_and_its_partitions_leave_the_assignment(broker, w, fake_persister):
    topic = f"sg-gone-{uuid.uuid4().hex[:6]}"
    admin = broker.broker.topic_admin
    broker.call(lambda: admin.create_topic(topic, 2, 1))
    wait_until(lambda: broker.call(lambda: admin.has_leaders(topic, 2)), 10, f"leaders of {topic}")
    tid = broker.call(lambda: broker.broker.metadata.topics[topic].topic_id)
    group = new_group()
    a, ra = join(w, group, (TOPIC, topic))
    assert len(assigned(ra)) == 4
    broker.call(lambda: admin.delete_topic(topic))
    wait_until(lambda: broker.call(lambda: topic not in broker.broker.metadata.topics), 10, f"{topic} to go")
    ra = heartbeat(w, group, a, 1, None)
    assert (ra.member_epoch, assigned(ra)) == (2, [0, 1])
    assert sorted(fake_persister.deleted) == [(group, tid, 0), (group, tid, 1)]
    gc = broker.broker.group_coordinator
    assert tid not in broker.call(lambda: dict(gc.share_groups[group].initialized))


def test_a_broker_with_group_share_enable_false_neither_offers_nor_serves_share_groups(tmp_path_factory):
    from tests.broker.conftest import start_brokers

    (b,) = start_brokers(1, tmp_path_factory, group_share_enable=False)
    try:
        with Wire(b.bootstrap_servers) as wire:
            R = Req(ApiKey.API_VERSIONS)
            resp = wire.call(ApiKey.API_VERSIONS, 4, R(client_software_name="t", client_software_version="1"))
            assert not {76, 77} & {k.api_key for k in resp.api_keys}
            assert "share.version" not in {f.name for f in resp.finalized_features}
            assert heartbeat(wire, new_group(), "m", 0).error_code == ErrorCode.UNSUPPORTED_VERSION
    finally:
        b.stop()


def test_the_group_size_limit_comes_from_group_share_max_size(tmp_path_factory):
    from tests.broker.conftest import start_brokers

    (b,) = start_brokers(1, tmp_path_factory, group_share_max_size=1)
    try:
        gc = b.broker.group_coordinator
        b.call(lambda: gc.find_coordinator("any"))
        wait_until(lambda: b.call(lambda: len(gc.loaded)) > 0, 10, "the offsets partitions to load")
        b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 1, 1))
        with Wire(b.bootstrap_servers) as wire:
            group = new_group()
            wait_until(lambda: heartbeat(wire, group, "m1", 0).error_code == ErrorCode.NONE, 10, "m1 to join")
            refused = heartbeat(wire, group, "m2", 0)
            assert refused.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
            assert refused.error_message == "The share group has reached its maximum capacity of 1 members."
    finally:
        b.stop()


def test_offset_commit_fetch_and_delete_refuse_a_share_group_as_kafka(broker, w):
    group = new_group()
    join(w, group)
    R = Req(ApiKey.OFFSET_COMMIT)
    T, P = R.OffsetCommitRequestTopic, R.OffsetCommitRequestTopic.OffsetCommitRequestPartition
    body = R(group_id=group, generation_id_or_member_epoch=-1, member_id="",
             topics=[T(name=TOPIC, partitions=[P(partition_index=0, committed_offset=1)])])  # fmt: skip
    assert w.call(ApiKey.OFFSET_COMMIT, 9, body).topics[0].partitions[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    F = Req(ApiKey.OFFSET_FETCH)
    G = F.OffsetFetchRequestGroup
    fetched = w.call(
        ApiKey.OFFSET_FETCH, 9, F(groups=[G(group_id=group, member_id=None, member_epoch=-1, topics=None)])
    )
    assert fetched.groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    D = Req(ApiKey.OFFSET_DELETE)
    DT = D.OffsetDeleteRequestTopic
    body = D(group_id=group, topics=[DT(name=TOPIC, partitions=[DT.OffsetDeleteRequestPartition(partition_index=0)])])
    assert w.call(ApiKey.OFFSET_DELETE, 0, body).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert heartbeat(w, group, uuid.uuid4().hex, 0).error_code == ErrorCode.NONE  # still a share group
