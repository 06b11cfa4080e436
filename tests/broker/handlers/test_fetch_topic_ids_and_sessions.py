"""Fetch v13+ by topic id (KIP-516) and incremental fetch sessions (KIP-227), handler by handler call on built
services: ids resolved through the metadata cache, UNKNOWN_TOPIC_ID and INCONSISTENT_TOPIC_ID where Kafka
answers them, authorization after id resolution, session creation, incremental answers with only what
changed, forgotten partitions, session errors, v15 followers and v16 leader endpoints."""

from __future__ import annotations

import uuid

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment
from broker.handlers import fetch, produce
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ..requests import batch, produce_body
from .acl_services import Secured

E = ErrorCode
F = API_BY_KEY[ApiKey.FETCH].Request
Op, Rt = AclOperation, ResourceType


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def sec(tmp_path, registry):
    s = Secured(tmp_path, registry)
    s.topic("t", partitions=3)
    s.topic("secret")
    s.grant(Op.READ, Rt.TOPIC, "t")
    s.grant(Op.WRITE, Rt.TOPIC, "t")
    return s


def topic_id(sec, name):
    return sec.services.metadata.topics[name].topic_id


def append(sec, name, partition, values):
    body = produce_body(name, partition, batch(values))
    assert sec.send(produce, 9, body).responses[0].partition_responses[0].error_code == E.NONE


def request(topics, *, session_id=0, epoch=-1, forgotten=(), version=13, replica_id=-1):
    """A Fetch of ``topics`` ({name or id: {partition: offset}}), by id at v13+."""
    by_id = version >= 13
    body = F(
        replica_id=replica_id,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        session_id=session_id,
        session_epoch=epoch,
        topics=[
            F.FetchTopic(
                **({"topic_id": t} if by_id else {"topic": t}),
                partitions=[
                    F.FetchTopic.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20)
                    for p, o in parts.items()
                ],
            )
            for t, parts in topics.items()
        ],
        forgotten_topics_data=[
            F.ForgottenTopic(**({"topic_id": t} if by_id else {"topic": t}), partitions=list(ps)) for t, ps in forgotten
        ],
    )
    if version >= 15:
        body.replica_state = F.ReplicaState(replica_id=replica_id)
    return body


def answered(resp):
    """{(topic id, topic name, partition): (error, high watermark, bytes of records)}."""
    return {
        (t.topic_id, t.topic, p.partition_index): (p.error_code, p.high_watermark, len(p.records or b""))
        for t in resp.responses
        for p in t.partitions
    }


def test_fetch_by_topic_id_reads_the_topic_and_answers_with_its_id(sec):
    append(sec, "t", 0, [b"a", b"b"])
    tid = topic_id(sec, "t")
    resp = sec.send(fetch, 13, request({tid: {0: 0}}))
    assert resp.error_code == E.NONE and resp.session_id == 0
    [(key, (code, hw, size))] = answered(resp).items()
    assert key[0] == tid and key[2] == 0 and code == E.NONE and hw == 2 and size > 0


@pytest.mark.parametrize("granted", [True, False])
def test_unknown_topic_id_is_unknown_topic_id_whatever_the_acls(sec, granted):
    if granted:
        sec.grant(Op.READ, Rt.TOPIC, "*")
    stranger = uuid.uuid4()
    resp = sec.send(fetch, 13, request({stranger: {0: 0}}))
    assert answered(resp) == {(stranger, "", 0): (E.UNKNOWN_TOPIC_ID, -1, 0)}


def test_the_zero_topic_id_names_no_topic_even_when_a_topic_has_no_id(sec):
    legacy = TopicAssignment("no-id", {0: (0,)}, uuid.UUID(int=0))  # made by a tool that wrote no topic id
    sec.services.metadata.set_topic(legacy, {0: PartitionState(0, 0, (0,), 1)}, {})
    sec.grant(Op.READ, Rt.TOPIC, "no-id")
    resp = sec.send(fetch, 13, request({uuid.UUID(int=0): {0: 0}}))
    assert [code for code, _, _ in answered(resp).values()] == [E.UNKNOWN_TOPIC_ID]


def test_known_topic_id_without_read_is_topic_authorization_failed(sec):
    resp = sec.send(fetch, 13, request({topic_id(sec, "secret"): {0: 0}}))
    assert [code for code, _, _ in answered(resp).values()] == [E.TOPIC_AUTHORIZATION_FAILED]


def test_follower_without_cluster_action_gets_authorization_failed_even_for_unknown_ids(sec):
    body = request({uuid.uuid4(): {0: 0}, topic_id(sec, "t"): {0: 0}}, replica_id=1, version=15)
    codes = [code for code, _, _ in answered(sec.send(fetch, 15, body)).values()]
    assert codes == [E.TOPIC_AUTHORIZATION_FAILED, E.TOPIC_AUTHORIZATION_FAILED]


def test_v15_follower_is_known_by_replica_state(sec):
    """From v15 the follower's id travels in replica_state: broker 1 is no replica here, so it is refused as a
    follower would be (a consumer would read)."""
    sec.grant(Op.CLUSTER_ACTION, Rt.CLUSTER)
    follower = sec.send(fetch, 15, request({topic_id(sec, "t"): {0: 0}}, replica_id=1, version=15))
    consumer = sec.send(fetch, 15, request({topic_id(sec, "t"): {0: 0}}, version=15))
    assert [c for c, _, _ in answered(follower).values()] == [E.NOT_LEADER_OR_FOLLOWER]
    assert [c for c, _, _ in answered(consumer).values()] == [E.NONE]


def test_v16_answer_names_the_endpoint_of_the_leader_elsewhere(sec):
    sec.services.metadata.set_brokers(
        {0: BrokerInfo(0, "127.0.0.1", 9092), 1: BrokerInfo(1, "10.0.0.7", 9093, rack="r2")}
    )
    assignment = TopicAssignment("away", {0: (1,)})
    sec.registry.create_topic(assignment, {})
    sec.services.metadata.set_topic(assignment, {0: PartitionState(1, 4, (1,), 1)}, {})
    sec.grant(Op.READ, Rt.TOPIC, "away")
    resp = sec.send(fetch, 16, request({topic_id(sec, "away"): {0: 0}}, version=16))
    part = resp.responses[0].partitions[0]
    assert part.error_code == E.NOT_LEADER_OR_FOLLOWER
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (1, 4)
    assert [(n.node_id, n.host, n.port, n.rack) for n in resp.node_endpoints] == [(1, "10.0.0.7", 9093, "r2")]


@pytest.mark.parametrize("version", [12, 13, 17])
def test_session_answers_only_partitions_that_changed(sec, version):
    name = topic_id(sec, "t") if version >= 13 else "t"
    append(sec, "t", 0, [b"a"])
    full = sec.send(fetch, version, request({name: {0: 0, 1: 0, 2: 0}}, epoch=0, version=version))
    sid = full.session_id
    assert sid > 0 and len(answered(full)) == 3
    assert sec.services.fetch_sessions.figures() == (1, 3, 0)
    # partition 0's fetch offset moved on: only it is sent, and nothing changed
    resp = sec.send(fetch, version, request({name: {0: 1}}, session_id=sid, epoch=1, version=version))
    assert (resp.error_code, resp.session_id, answered(resp)) == (E.NONE, sid, {})
    append(sec, "t", 2, [b"x", b"y"])
    resp = sec.send(fetch, version, request({}, session_id=sid, epoch=2, version=version))
    [(key, (code, hw, size))] = answered(resp).items()
    assert key[2] == 2 and code == E.NONE and hw == 2 and size > 0


def test_session_forgets_partitions_and_closes_with_the_final_epoch(sec):
    tid = topic_id(sec, "t")
    sid = sec.send(fetch, 13, request({tid: {0: 0, 1: 0}}, epoch=0)).session_id
    resp = sec.send(fetch, 13, request({}, session_id=sid, epoch=1, forgotten=[(tid, [1])]))
    assert resp.error_code == E.NONE and sec.services.fetch_sessions.get(sid).size == 1
    append(sec, "t", 1, [b"gone"])
    assert answered(sec.send(fetch, 13, request({}, session_id=sid, epoch=2))) == {}  # 1 is no longer fetched
    closed = sec.send(fetch, 13, request({tid: {0: 0}}, session_id=sid, epoch=-1))
    assert closed.session_id == 0 and len(answered(closed)) == 1 and sec.services.fetch_sessions.get(sid) is None


@pytest.mark.parametrize(
    "session_id, epoch, version, error",
    [
        (424242, 1, 13, E.FETCH_SESSION_ID_NOT_FOUND),
        (None, 5, 13, E.INVALID_FETCH_SESSION_EPOCH),
        (None, 1, 12, E.FETCH_SESSION_TOPIC_ID_ERROR),  # created with ids (v13), continued by name
    ],
)
def test_session_errors_answer_the_whole_request(sec, session_id, epoch, version, error):
    tid = topic_id(sec, "t")
    sid = sec.send(fetch, 13, request({tid: {0: 0}}, epoch=0)).session_id
    body = request({}, session_id=session_id if session_id is not None else sid, epoch=epoch, version=version)
    resp = sec.send(fetch, version, body)
    assert (resp.error_code, resp.responses) == (error, [])


def test_session_of_a_topic_created_again_answers_inconsistent_topic_id(sec):
    """The session cached t under its old id; t is deleted and created again (a new id): the cached partition
    answers INCONSISTENT_TOPIC_ID, and a fresh fetch by the old id UNKNOWN_TOPIC_ID."""
    old = topic_id(sec, "t")
    sid = sec.send(fetch, 13, request({old: {0: 0}}, epoch=0)).session_id
    again = TopicAssignment("t", {p: (0,) for p in range(3)})
    assert again.topic_id != old
    sec.services.metadata.remove_topic("t")
    sec.services.metadata.set_topic(again, {p: PartitionState(0, 0, (0,), 1) for p in range(3)}, {})
    resp = sec.send(fetch, 13, request({}, session_id=sid, epoch=1))
    assert answered(resp) == {(old, "t", 0): (E.INCONSISTENT_TOPIC_ID, -1, 0)}
    fresh = sec.send(fetch, 13, request({old: {0: 0}}))
    assert answered(fresh) == {(old, "", 0): (E.UNKNOWN_TOPIC_ID, -1, 0)}


def test_full_fetch_without_cache_slots_answers_sessionless(tmp_path, registry):
    from broker.replication.fetch_session import FetchSessionCache

    sec = Secured(tmp_path, registry, fetch_sessions=FetchSessionCache(0, clock=lambda: 0))
    sec.topic("t")
    sec.grant(Op.READ, Rt.TOPIC, "t")
    resp = sec.send(fetch, 13, request({topic_id(sec, "t"): {0: 0}}, epoch=0))
    assert resp.session_id == 0 and len(answered(resp)) == 1
