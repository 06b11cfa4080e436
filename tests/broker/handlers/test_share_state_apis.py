"""The share-state APIs (InitializeShareGroupState 83, ReadShareGroupState 84, WriteShareGroupState 85,
DeleteShareGroupState 86, ReadShareGroupStateSummary 87) and FindCoordinator key type 2 over the wire of an
in-process broker, and their ClusterAction authorization on built services with an enabled authorizer."""

from __future__ import annotations

import uuid

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import (
    delete_share_group_state,
    find_coordinator,
    initialize_share_group_state,
    read_share_group_state,
    read_share_group_state_summary,
    write_share_group_state,
)
from broker.share.records import coordinator_key
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.waiting import wait_until

from ..conftest import start_brokers
from ..wire import Wire
from .acl_services import Op, Rt, Secured

E = ErrorCode
INIT = API_BY_KEY[ApiKey.INITIALIZE_SHARE_GROUP_STATE].Request
READ = API_BY_KEY[ApiKey.READ_SHARE_GROUP_STATE].Request
WRITE = API_BY_KEY[ApiKey.WRITE_SHARE_GROUP_STATE].Request
DELETE = API_BY_KEY[ApiKey.DELETE_SHARE_GROUP_STATE].Request
SUMMARY = API_BY_KEY[ApiKey.READ_SHARE_GROUP_STATE_SUMMARY].Request
FC = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A broker with a two-partition topic; (broker, topic id)."""
    (b,) = start_brokers(1, tmp_path_factory, share_coordinator_state_topic_num_partitions=2)
    name = f"share-{uuid.uuid4().hex[:8]}"
    with AdminClient(b.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, 2, 1)])
    wait_until(lambda: name in b.broker.metadata.topics, 10)
    yield b, b.broker.metadata.topics[name].topic_id
    b.stop()


def init_body(group, tid, *partitions, state_epoch=0, start_offset=-1):
    D = INIT.InitializeStateData
    parts = [D.PartitionData(partition=p, state_epoch=state_epoch, start_offset=start_offset) for p in partitions]
    return INIT(group_id=group, topics=[D(topic_id=tid, partitions=parts)])


def write_body(group, tid, p, state_epoch, leader_epoch, start_offset, batches, dcc=-1):
    P = WRITE.WriteStateData.PartitionData
    part = P(
        partition=p,
        state_epoch=state_epoch,
        leader_epoch=leader_epoch,
        start_offset=start_offset,
        delivery_complete_count=dcc,
        state_batches=[
            P.StateBatch(first_offset=f, last_offset=last, delivery_state=s, delivery_count=c)
            for f, last, s, c in batches
        ],
    )
    return WRITE(group_id=group, topics=[WRITE.WriteStateData(topic_id=tid, partitions=[part])])


def read_body(group, tid, p, leader_epoch):
    D = READ.ReadStateData
    return READ(
        group_id=group, topics=[D(topic_id=tid, partitions=[D.PartitionData(partition=p, leader_epoch=leader_epoch)])]
    )


def summary_body(group, tid, p, leader_epoch=-1):
    D = SUMMARY.ReadStateSummaryData
    return SUMMARY(
        group_id=group, topics=[D(topic_id=tid, partitions=[D.PartitionData(partition=p, leader_epoch=leader_epoch)])]
    )


def delete_body(group, tid, *partitions):
    D = DELETE.DeleteStateData
    return DELETE(
        group_id=group, topics=[D(topic_id=tid, partitions=[D.PartitionData(partition=p) for p in partitions])]
    )


def find(w: Wire, key: str, version: int = 6):
    return w.call(ApiKey.FIND_COORDINATOR, version, FC(key_type=2, coordinator_keys=[key])).coordinators[0]


def codes(resp) -> list[int]:
    return [p.error_code for t in resp.results for p in t.partitions]


def test_find_coordinator_key_type_2_names_the_leader_of_the_keys_state_partition(served):
    b, tid = served
    key = coordinator_key("fc-group", tid, 1)
    with Wire(b.bootstrap_servers) as w:
        wait_until(lambda: find(w, key).error_code == E.NONE, 15, "the share coordinator to be found")
        c = find(w, key)
        assert (c.key, c.node_id, f"{c.host}:{c.port}") == (key, 0, b.bootstrap_servers)
        for bad in (
            "fc-group",
            f"fc-group:{tid}:1",
            f":{coordinator_key('g', tid, 0)[2:]}",
            "g:EjRWeJq8Te-BI0VniavN7w:-3",
        ):
            c = find(w, bad)
            assert (c.error_code, c.node_id) == (E.INVALID_REQUEST, -1), bad
            assert "share coordinator key" in c.error_message
        # key type 2 came with v6
        old = w.call(ApiKey.FIND_COORDINATOR, 5, FC(key_type=2, coordinator_keys=[key])).coordinators[0]
        assert old.error_code == E.INVALID_REQUEST and "v6" in old.error_message


def test_initialize_write_read_summary_and_delete_over_the_wire(served):
    b, tid = served
    group = f"g-{uuid.uuid4().hex[:6]}"
    with Wire(b.bootstrap_servers) as w:
        wait_until(lambda: find(w, coordinator_key(group, tid, 0)).error_code == E.NONE, 15)
        wait_until(lambda: find(w, coordinator_key(group, tid, 1)).error_code == E.NONE, 15)
        assert codes(w.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, init_body(group, tid, 0, 1, state_epoch=2))) == [
            0,
            0,
        ]

        read = w.call(ApiKey.READ_SHARE_GROUP_STATE, 0, read_body(group, tid, 0, 3)).results[0].partitions[0]
        assert (read.error_code, read.state_epoch, read.start_offset, read.state_batches) == (0, 2, -1, [])

        resp = w.call(
            ApiKey.WRITE_SHARE_GROUP_STATE, 1, write_body(group, tid, 0, 2, 3, 5, [(5, 9, 2, 1), (10, 12, 0, 2)], 5)
        )
        assert codes(resp) == [0]
        read = w.call(ApiKey.READ_SHARE_GROUP_STATE, 0, read_body(group, tid, 0, 3)).results[0].partitions[0]
        assert read.start_offset == 5
        assert [(s.first_offset, s.last_offset, s.delivery_state, s.delivery_count) for s in read.state_batches] == [
            (5, 9, 2, 1),
            (10, 12, 0, 2),
        ]

        summary = w.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 1, summary_body(group, tid, 0)).results[0].partitions[0]
        assert (summary.error_code, summary.state_epoch, summary.leader_epoch, summary.start_offset) == (0, 2, 3, 5)
        assert summary.delivery_complete_count == 5
        v0 = w.call(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, summary_body(group, tid, 1)).results[0].partitions[0]
        assert (v0.error_code, v0.state_epoch, v0.start_offset) == (0, 2, -1)

        # fencing and refusals, each with its message
        old_leader = w.call(ApiKey.WRITE_SHARE_GROUP_STATE, 0, write_body(group, tid, 0, 2, 2, 5, []))
        old_state = w.call(ApiKey.WRITE_SHARE_GROUP_STATE, 0, write_body(group, tid, 0, 1, 3, 5, []))
        assert codes(old_leader) == [E.FENCED_LEADER_EPOCH] and codes(old_state) == [E.FENCED_STATE_EPOCH]
        unknown = w.call(ApiKey.READ_SHARE_GROUP_STATE, 0, read_body("other-group", tid, 0, 0)).results[0].partitions[0]
        assert (unknown.error_code, unknown.error_message) == (
            E.INVALID_REQUEST,
            "Read operation on uninitialized share partition not allowed.",
        )
        empty = w.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, init_body("", tid, 0, 1))
        assert codes(empty) == [E.INVALID_REQUEST] * 2
        assert empty.results[0].partitions[0].error_message == "Group id must be non-empty."

        assert codes(w.call(ApiKey.DELETE_SHARE_GROUP_STATE, 0, delete_body(group, tid, 0, 1))) == [0, 0]
        after = w.call(ApiKey.READ_SHARE_GROUP_STATE, 0, read_body(group, tid, 0, 3))
        assert codes(after) == [E.INVALID_REQUEST]


def test_a_key_coordinated_elsewhere_is_not_coordinator(served):
    b, tid = served
    coordinator = b.broker.share_coordinator
    group = f"g-{uuid.uuid4().hex[:6]}"
    p = coordinator.partition_of(group, tid, 0)
    with Wire(b.bootstrap_servers) as w:
        wait_until(lambda: find(w, coordinator_key(group, tid, 0)).error_code == E.NONE, 15)
        loaded = b.call(lambda: coordinator.topic.loaded.pop(p))  # as if another broker led the partition
        try:
            resp = w.call(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, init_body(group, tid, 0))
            assert codes(resp) == [E.NOT_COORDINATOR]
        finally:
            b.call(lambda: coordinator.topic.loaded.__setitem__(p, loaded))


@pytest.fixture
def sec(tmp_path):
    view = MemoryRegistryStore().view()
    view.start()
    s = Secured(tmp_path, view)
    s.topic("t")
    yield s
    view.close()


@pytest.mark.parametrize(
    ("module", "body", "version"),
    [
        (initialize_share_group_state, lambda t: init_body("g", t, 0), 0),
        (read_share_group_state, lambda t: read_body("g", t, 0, 0), 0),
        (write_share_group_state, lambda t: write_body("g", t, 0, 0, 0, 0, []), 1),
        (delete_share_group_state, lambda t: delete_body("g", t, 0), 0),
        (read_share_group_state_summary, lambda t: summary_body("g", t, 0), 1),
    ],
)
def test_the_share_state_apis_need_cluster_action(sec, module, body, version):
    tid = sec.services.metadata.topics["t"].topic_id
    sec.grant(Op.ALL, Rt.TOPIC, "t")
    sec.grant(Op.ALL, Rt.GROUP, "g")
    resp = sec.send(module, version, body(tid))
    assert codes(resp) == [E.CLUSTER_AUTHORIZATION_FAILED]
    sec.grant(Op.CLUSTER_ACTION, Rt.CLUSTER)
    # allowed now: this unstarted broker coordinates nothing
    assert codes(sec.send(module, version, body(tid))) != [E.CLUSTER_AUTHORIZATION_FAILED]


def test_find_coordinator_key_type_2_needs_cluster_action(sec):
    key = coordinator_key("g", sec.services.metadata.topics["t"].topic_id, 0)
    resp = sec.send(find_coordinator, 6, FC(key_type=2, coordinator_keys=[key]))
    assert resp.coordinators[0].error_code == E.CLUSTER_AUTHORIZATION_FAILED
