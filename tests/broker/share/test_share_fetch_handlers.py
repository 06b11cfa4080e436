"""ShareFetch (78) and ShareAcknowledge (79) through the wire on an in-process broker whose share persister is a
``MemoryPersister``: sessions, acquisition, acknowledgement, redelivery, lock expiry, the delivery limit, errors."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from broker.config import BrokerConfig
from broker.handlers import share_acknowledge as share_acknowledge_handler
from broker.handlers import share_fetch as share_fetch_handler
from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch_builder import build_batch
from spark_kafkalog.records.splitter import iter_records
from tests.broker.conftest import start_brokers
from tests.broker.services_builder import build_services, request_context
from tests.broker.wire import Wire
from tests.waiting import wait_until

from .memory_persister import MemoryPersister

LOCK_MS = 1000
ACCEPT, RELEASE, REJECT, RENEW = 1, 2, 3, 4
F = API_BY_KEY[ApiKey.SHARE_FETCH].Request
A = API_BY_KEY[ApiKey.SHARE_ACKNOWLEDGE].Request
P = API_BY_KEY[ApiKey.PRODUCE].Request
IAC = API_BY_KEY[ApiKey.INCREMENTAL_ALTER_CONFIGS].Request


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:sf-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        group_share_record_lock_duration_ms=LOCK_MS,
        group_share_delivery_count_limit=2,
        group_share_max_share_sessions=3,
    ).start()
    persister = MemoryPersister()
    assert b.broker is not None and b.broker.share_partitions is not None
    b.broker.share_partitions.persister_of = lambda: persister
    yield b
    b.stop()


@pytest.fixture()
def w(broker):
    with Wire(broker.bootstrap_servers) as wire:
        yield wire


def new_topic(broker, partitions=1) -> tuple[str, uuid.UUID]:
    name = f"sf-{uuid.uuid4().hex[:8]}"
    broker.call(lambda: broker.broker.topic_admin.create_topic(name, partitions, 1))
    wait_until(lambda: broker.call(lambda: broker.broker.topic_admin.has_leaders(name, partitions)), 10, "leaders")
    return name, broker.call(lambda: broker.broker.metadata.topics[name].topic_id)


def produce(w, topic_id, values, partition=0):
    records = build_batch([(int(time.time() * 1000), None, v, ()) for v in values])
    body = P(
        transactional_id=None,
        acks=1,
        timeout_ms=5000,
        topic_data=[
            P.TopicProduceData(
                topic_id=topic_id,
                partition_data=[P.TopicProduceData.PartitionProduceData(index=partition, records=records)],
            )
        ],
    )
    resp = w.call(ApiKey.PRODUCE, 13, body)
    assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE


def acks(ranges):
    return [
        F.FetchTopic.FetchPartition.AcknowledgementBatch(first_offset=a, last_offset=b, acknowledge_types=t)
        for a, b, t in ranges
    ]


def share_fetch(
    w, group, member, epoch, topic_id, *, ack=(), max_wait_ms=0, max_records=100, version=2, parts=(0,), **kw
):
    topics = [
        F.FetchTopic(
            topic_id=topic_id,
            partitions=[
                F.FetchTopic.FetchPartition(
                    partition_index=p, acknowledgement_batches=acks(ack) if p == parts[0] else []
                )
                for p in parts
            ],
        )
    ]
    body = F(
        group_id=group,
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=max_records,
        batch_size=max_records,
        topics=topics,
        forgotten_topics_data=[],
        **kw,
    )
    return w.call(ApiKey.SHARE_FETCH, version, body)


def share_ack(w, group, member, epoch, topic_id, ranges, *, version=2, partition=0, **kw):
    body = A(
        group_id=group,
        member_id=member,
        share_session_epoch=epoch,
        topics=[
            A.AcknowledgeTopic(
                topic_id=topic_id,
                partitions=[
                    A.AcknowledgeTopic.AcknowledgePartition(
                        partition_index=partition,
                        acknowledgement_batches=[
                            A.AcknowledgeTopic.AcknowledgePartition.AcknowledgementBatch(
                                first_offset=a, last_offset=b, acknowledge_types=t
                            )
                            for a, b, t in ranges
                        ],
                    )
                ],
            )
        ],
        **kw,
    )
    return w.call(ApiKey.SHARE_ACKNOWLEDGE, version, body)


def part0(resp):
    assert resp.error_code == ErrorCode.NONE, resp
    return resp.responses[0].partitions[0]


def acquired(resp):
    if not resp.responses:
        return []
    return [(a.first_offset, a.last_offset, a.delivery_count) for a in part0(resp).acquired_records]


def values(resp):
    return [r.value for r in iter_records(part0(resp).records)]


def start(w, group, member, tid):
    """Open the session (loads the share partition at latest) and return the next epoch."""
    resp = share_fetch(w, group, member, 0, tid)
    assert part0(resp).error_code == ErrorCode.NONE and acquired(resp) == []
    assert resp.acquisition_lock_timeout_ms == LOCK_MS
    return 1


def test_open_fetch_accept_and_nothing_comes_again(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g1", "m1", tid)
    produce(w, tid, [b"a", b"b", b"c"])
    resp = share_fetch(w, "g1", "m1", epoch, tid)
    assert acquired(resp) == [(0, 2, 1)] and values(resp) == [b"a", b"b", b"c"]
    resp = share_fetch(w, "g1", "m1", epoch + 1, tid, ack=[(0, 2, [ACCEPT])])
    assert part0(resp).acknowledge_error_code == ErrorCode.NONE and acquired(resp) == []


def test_release_redelivers_with_delivery_count_two_to_another_member(broker, w):
    topic, tid = new_topic(broker)
    e1 = start(w, "g2", "m1", tid)
    with Wire(broker.bootstrap_servers) as w2:
        e2 = start(w2, "g2", "m2", tid)
        produce(w, tid, [b"x", b"y"])
        assert acquired(share_fetch(w, "g2", "m1", e1, tid)) == [(0, 1, 1)]
        assert acquired(share_fetch(w2, "g2", "m2", e2, tid)) == []  # held by m1
        resp = share_ack(w, "g2", "m1", e1 + 1, tid, [(0, 1, [RELEASE])])
        assert part0(resp).error_code == ErrorCode.NONE
        resp = share_fetch(w2, "g2", "m2", e2 + 1, tid)
        assert acquired(resp) == [(0, 1, 2)] and values(resp) == [b"x", b"y"]
        resp = share_ack(w, "g2", "m1", e1 + 2, tid, [(0, 1, [ACCEPT])])
        assert part0(resp).error_code == ErrorCode.INVALID_RECORD_STATE


def test_lock_expiry_makes_records_available_again(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g3", "m1", tid)
    produce(w, tid, [b"late"])
    assert acquired(share_fetch(w, "g3", "m1", epoch, tid)) == [(0, 0, 1)]
    # a long poll is woken by the lock expiry (1 s) and gets the record again
    resp = share_fetch(w, "g3", "m1", epoch + 1, tid, max_wait_ms=5000)
    assert acquired(resp) == [(0, 0, 2)]


def test_delivery_limit_archives_the_record(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g4", "m1", tid)
    produce(w, tid, [b"poison"])
    assert acquired(share_fetch(w, "g4", "m1", epoch, tid)) == [(0, 0, 1)]
    resp = share_fetch(w, "g4", "m1", epoch + 1, tid, ack=[(0, 0, [RELEASE])])
    assert acquired(resp) == [(0, 0, 2)]
    resp = share_fetch(w, "g4", "m1", epoch + 2, tid, ack=[(0, 0, [RELEASE])])  # limit 2: archived
    assert part0(resp).acknowledge_error_code == ErrorCode.NONE and acquired(resp) == []
    produce(w, tid, [b"next"])
    assert acquired(share_fetch(w, "g4", "m1", epoch + 3, tid)) == [(1, 1, 1)]


def test_closing_the_session_releases_the_members_records(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g5", "m1", tid)
    produce(w, tid, [b"r"])
    assert acquired(share_fetch(w, "g5", "m1", epoch, tid)) == [(0, 0, 1)]
    resp = share_fetch(w, "g5", "m1", -1, tid, parts=(0,))
    assert resp.error_code == ErrorCode.NONE
    resp = share_fetch(w, "g5", "m1", epoch + 1, tid)
    assert resp.error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    resp = share_fetch(w, "g5", "m2", 0, tid)  # the released record, delivered again
    assert acquired(resp) == [(0, 0, 2)]


def test_a_closed_connection_releases_its_sessions_records(broker, w):
    topic, tid = new_topic(broker)
    with Wire(broker.bootstrap_servers) as gone:
        epoch = start(gone, "g6", "m1", tid)
        produce(w, tid, [b"d"])
        assert acquired(share_fetch(gone, "g6", "m1", epoch, tid)) == [(0, 0, 1)]
    mgr = broker.broker.share_partitions
    wait_until(lambda: broker.call(lambda: mgr.sessions.get("g6", "m1")) is None, 5, "the session to go")
    assert acquired(share_fetch(w, "g6", "m2", 0, tid)) == [(0, 0, 2)]


@pytest.mark.parametrize(
    "epoch,ack,error",
    [
        (0, [(0, 0, [ACCEPT])], ErrorCode.INVALID_REQUEST),
        (5, [], ErrorCode.SHARE_SESSION_NOT_FOUND),
        (-1, [], ErrorCode.SHARE_SESSION_NOT_FOUND),
    ],
)
def test_session_errors_answer_the_whole_request(broker, w, epoch, ack, error):
    topic, tid = new_topic(broker)
    resp = share_fetch(w, "g7", f"m-{uuid.uuid4().hex[:6]}", epoch, tid, ack=ack)
    assert resp.error_code == error and resp.responses == []


def test_wrong_epoch_and_acknowledge_at_epoch_zero(broker, w):
    topic, tid = new_topic(broker)
    start(w, "g8", "m1", tid)
    assert share_fetch(w, "g8", "m1", 3, tid).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert share_ack(w, "g8", "m1", 0, tid, []).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert share_ack(w, "g8", "m9", 1, tid, []).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


def test_full_session_cache_answers_share_session_limit_reached(broker):
    topic, tid = new_topic(broker)
    mgr = broker.broker.share_partitions
    with Wire(broker.bootstrap_servers) as w:
        free = broker.call(lambda: mgr.sessions.max_sessions - len(mgr.sessions))
        for i in range(free):
            assert share_fetch(w, "g9", f"m{i}", 0, tid).error_code == ErrorCode.NONE
        assert share_fetch(w, "g9", "one-more", 0, tid).error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
    wait_until(lambda: broker.call(lambda: len(mgr.sessions)) == 0, 5, "the sessions of the closed connection")


@pytest.mark.parametrize(
    "ranges,why",
    [
        ([(3, 1, [ACCEPT])], "not a range"),
        ([(0, 2, [ACCEPT, ACCEPT])], "types"),
        ([(0, 0, [9])], "type"),
        ([(0, 0, [RENEW])], "type"),  # renew needs is_renew_ack
        ([(2, 3, [ACCEPT]), (0, 1, [ACCEPT])], "overlaps"),
    ],
)
def test_malformed_acknowledgements_are_invalid_request_for_their_partition(broker, w, ranges, why):
    topic, tid = new_topic(broker)
    epoch = start(w, "g10", "m1", tid)
    resp = share_ack(w, "g10", "m1", epoch, tid, ranges)
    assert part0(resp).error_code == ErrorCode.INVALID_REQUEST
    assert why in part0(resp).error_message


def test_renew_acknowledgement_keeps_the_records_past_their_lock(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g11", "m1", tid)
    produce(w, tid, [b"slow"])
    assert acquired(share_fetch(w, "g11", "m1", epoch, tid)) == [(0, 0, 1)]
    resp = share_fetch(w, "g11", "m1", epoch + 1, tid, ack=[(0, 0, [RENEW])], is_renew_ack=True, max_wait_ms=5000)
    assert part0(resp).acknowledge_error_code == ErrorCode.NONE and acquired(resp) == []  # answered at once
    resp = share_ack(w, "g11", "m1", epoch + 2, tid, [(0, 0, [ACCEPT])])
    assert part0(resp).error_code == ErrorCode.NONE and resp.acquisition_lock_timeout_ms == LOCK_MS


def test_record_limit_mode_acquires_exactly_max_records(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g12", "m1", tid)
    produce(w, tid, [b"%d" % i for i in range(10)])
    resp = share_fetch(w, "g12", "m1", epoch, tid, max_records=4, share_acquire_mode=1)
    assert acquired(resp) == [(0, 3, 1)]
    resp = share_fetch(w, "g12", "m1", epoch + 1, tid, max_records=4)
    assert acquired(resp) == [(4, 9, 1)]  # batch-optimized: the rest of the batch


def test_unknown_topic_id_and_not_leader(broker, w):
    resp = share_fetch(w, "g13", "m1", 0, uuid.uuid4())
    assert part0(resp).error_code == ErrorCode.UNKNOWN_TOPIC_ID
    topic, tid = new_topic(broker)
    resp = share_fetch(w, "g13", "m2", 0, tid, parts=(5,))
    assert part0(resp).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_long_poll_wakes_on_new_data(broker, w):
    topic, tid = new_topic(broker)
    epoch = start(w, "g14", "m1", tid)
    with Wire(broker.bootstrap_servers) as producer:
        cid = w.send(
            ApiKey.SHARE_FETCH,
            2,
            F(
                group_id="g14",
                member_id="m1",
                share_session_epoch=epoch,
                max_wait_ms=10_000,
                min_bytes=1,
                max_bytes=1 << 20,
                max_records=10,
                batch_size=10,
                topics=[],
                forgotten_topics_data=[],
            ),
        )
        began = time.monotonic()
        produce(producer, tid, [b"woke"])
        got, resp = w.receive(ApiKey.SHARE_FETCH, 2)
    assert got == cid and acquired(resp) == [(0, 0, 1)] and time.monotonic() - began < 5


def test_a_partition_led_elsewhere_answers_not_leader_with_the_leader_and_its_endpoint(tmp_path_factory):
    first, second = start_brokers(2, tmp_path_factory)
    try:
        b0 = first.broker
        assert b0 is not None and b0.topic_admin is not None
        admin = b0.topic_admin
        name = f"sf-{uuid.uuid4().hex[:8]}"
        first.call(lambda: admin.create_topic(name, 2, 1))
        wait_until(lambda: first.call(lambda: admin.has_leaders(name, 2)), 10, "leaders")
        states = first.call(lambda: b0.metadata.topics[name].states)
        tid = first.call(lambda: b0.metadata.topics[name].topic_id)
        elsewhere = next(p for p, st in states.items() if st.leader == 1)
        with Wire(first.bootstrap_servers) as w:
            resp = share_fetch(w, "g15", "m1", 0, tid, parts=(elsewhere,))
            ack = share_ack(w, "g15", "m1", 1, tid, [(0, 0, [ACCEPT])], partition=elsewhere)
        p = part0(resp)
        assert p.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert p.current_leader.leader_id == 1
        host, port = second.bootstrap_servers.rsplit(":", 1)
        assert [(n.node_id, n.port) for n in resp.node_endpoints] == [(1, int(port))]
        assert part0(ack).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and ack.node_endpoints[0].node_id == 1
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize("api", [ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE])
def test_share_apis_answer_unsupported_version_while_share_groups_are_off(tmp_path, api):
    config = BrokerConfig.from_properties(
        {"broker.id": "0", "log.dirs": str(tmp_path), "zookeeper.connect": "memory:x", "group.share.enable": "false"}
    )
    services = build_services(tmp_path, config=config)
    body = API_BY_KEY[api].Request(group_id="g", member_id="m", share_session_epoch=0)
    module = share_fetch_handler if api == ApiKey.SHARE_FETCH else share_acknowledge_handler
    resp = asyncio.run(module.handle(request_context(services, api, 2), body))
    assert resp.error_code == ErrorCode.UNSUPPORTED_VERSION


def test_partitions_take_turns_when_max_records_is_reached_early(broker, w):
    topic, tid = new_topic(broker, partitions=2)
    resp = share_fetch(w, "g16", "m1", 0, tid, parts=(0, 1))
    assert resp.error_code == ErrorCode.NONE
    for p in (0, 1):
        produce(w, tid, [b"p%d" % p], partition=p)
    firsts = []
    for epoch in (1, 2):
        resp = share_fetch(w, "g16", "m1", epoch, tid, parts=(0, 1), max_records=1, share_acquire_mode=1)
        served = [p.partition_index for t in resp.responses for p in t.partitions if p.acquired_records]
        firsts.append(served)
    assert sorted(p for served in firsts for p in served) == [0, 1]


def test_an_unknown_acquire_mode_is_invalid_request(broker, w):
    topic, tid = new_topic(broker)
    resp = share_fetch(w, "g17", "m1", 0, tid, share_acquire_mode=7)
    assert resp.error_code == ErrorCode.INVALID_REQUEST and "share_acquire_mode" in resp.error_message


def test_records_produced_before_an_earliest_reset_is_set_are_fetched_right_after_the_alter(tmp_path):
    """IncrementalAlterConfigs share.auto.offset.reset=earliest, then at once a share fetch on the same broker
    acquires the records produced before. The broker's group config cache stops following ZooKeeper here, so the
    alter itself must have put the value in its cache (read-your-writes)."""
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:sf-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path,
        group_share_record_lock_duration_ms=LOCK_MS,
    ).start()
    try:
        assert b.broker is not None and b.broker.share_partitions is not None
        persister = MemoryPersister()
        b.broker.share_partitions.persister_of = lambda: persister
        cache = b.broker.group_configs
        assert cache is not None
        b.call(cache.stop)
        topic, tid = new_topic(b)
        with Wire(b.bootstrap_servers) as w:
            produce(w, tid, [b"a", b"b", b"c"])
            R = IAC.AlterConfigsResource
            body = IAC(
                resources=[
                    R(
                        resource_type=32,
                        resource_name="g-early",
                        configs=[
                            R.AlterableConfig(name="share.auto.offset.reset", config_operation=0, value="earliest")
                        ],
                    )
                ],
                validate_only=False,
            )
            [result] = w.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).responses
            assert result.error_code == ErrorCode.NONE
            assert b.call(lambda: cache.share_config("g-early").auto_offset_reset) == "earliest"
            resp = share_fetch(w, "g-early", "m1", 0, tid)
        assert acquired(resp) == [(0, 2, 1)] and values(resp) == [b"a", b"b", b"c"]
    finally:
        b.stop()
