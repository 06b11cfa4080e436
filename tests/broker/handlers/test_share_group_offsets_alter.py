"""AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92) on an in-process broker with the real share
coordinator, persister and share fetch path: only an empty share group is changed; an altered start offset is where
the next share fetch starts (the leader that held the old state is fenced and reloads); a deleted topic's start
offset is chosen again by share.auto.offset.reset."""

from __future__ import annotations

import time
import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch_builder import build_batch
from tests.broker.wire import Wire
from tests.waiting import wait_until

TOPIC = "sa-events"
Heartbeat = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request
Alter = API_BY_KEY[ApiKey.ALTER_SHARE_GROUP_OFFSETS].Request
Delete = API_BY_KEY[ApiKey.DELETE_SHARE_GROUP_OFFSETS].Request
Describe = API_BY_KEY[ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS].Request
Fetch = API_BY_KEY[ApiKey.SHARE_FETCH].Request
Produce = API_BY_KEY[ApiKey.PRODUCE].Request


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:sa-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        offsets_topic_num_partitions=1,
        share_coordinator_state_topic_num_partitions=1,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 1, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 1)), 10, f"leaders of {TOPIC}")
    gc = b.broker.group_coordinator
    b.call(lambda: gc.find_coordinator("any"))  # creates __consumer_offsets, as a client's FindCoordinator does
    wait_until(lambda: b.call(lambda: len(gc.loaded)) == 1, 10, "the offsets partition to load")
    yield b
    b.stop()


@pytest.fixture()
def w(broker):
    with Wire(broker.bootstrap_servers) as wire:
        yield wire


def heartbeat(w, group, member, epoch):
    body = Heartbeat(group_id=group, member_id=member, member_epoch=epoch, subscribed_topic_names=[TOPIC])
    resp = w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)
    assert resp.error_code == ErrorCode.NONE, resp
    return resp


def join(w, group) -> tuple[str, int]:
    member, epoch = uuid.uuid4().hex, 0

    def assigned() -> bool:
        nonlocal epoch
        resp = heartbeat(w, group, member, epoch)
        epoch = resp.member_epoch
        return resp.assignment is not None and bool(resp.assignment.topic_partitions)

    wait_until(assigned, 20, "the member's assignment")
    return member, epoch


def produce(w, topic_id, n):
    records = build_batch([(int(time.time() * 1000), None, b"v%d" % i, ()) for i in range(n)])
    P = Produce.TopicProduceData
    body = Produce(
        transactional_id=None,
        acks=1,
        timeout_ms=5000,
        topic_data=[P(topic_id=topic_id, partition_data=[P.PartitionProduceData(index=0, records=records)])],
    )
    assert w.call(ApiKey.PRODUCE, 13, body).responses[0].partition_responses[0].error_code == ErrorCode.NONE


def first_acquired(w, group, member, topic_id) -> int | None:
    """Open a share session, acquire, close it (releasing): the first offset acquired, None when nothing was."""
    F = Fetch.FetchTopic
    body = Fetch(
        group_id=group, member_id=member, share_session_epoch=0, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
        max_records=100, batch_size=100, forgotten_topics_data=[],
        topics=[F(topic_id=topic_id, partitions=[F.FetchPartition(partition_index=0, acknowledgement_batches=[])])],
    )  # fmt: skip
    resp = w.call(ApiKey.SHARE_FETCH, 2, body)
    close = Fetch(
        group_id=group, member_id=member, share_session_epoch=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
        max_records=100, batch_size=100, topics=[], forgotten_topics_data=[],
    )  # fmt: skip
    w.call(ApiKey.SHARE_FETCH, 2, close)
    parts = [p for t in resp.responses for p in t.partitions if p.acquired_records]
    return parts[0].acquired_records[0].first_offset if parts else None


def alter(w, group, offset, topic=TOPIC, partition=0):
    T = Alter.AlterShareGroupOffsetsRequestTopic
    body = Alter(
        group_id=group,
        topics=[T(topic_name=topic, partitions=[T.AlterShareGroupOffsetsRequestPartition(partition_index=partition, start_offset=offset)])],
    )  # fmt: skip
    return w.call(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, body)


def described(w, group) -> tuple[int, int]:
    """(start offset, lag) of partition 0."""
    body = Describe(groups=[Describe.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)])
    [g] = w.call(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, body).groups
    p = g.topics[0].partitions[0]
    return p.start_offset, p.lag


def start_offset(w, group) -> int:
    return described(w, group)[0]


def test_altering_an_empty_groups_start_offset_moves_where_share_fetch_starts(broker, w):
    group = f"sa-{uuid.uuid4().hex[:8]}"
    topic_id = broker.call(lambda: broker.broker.metadata.topics[TOPIC].topic_id)
    produce(w, topic_id, 5)
    member, _ = join(w, group)
    assert first_acquired(w, group, member, topic_id) is None  # loaded at latest (5): nothing yet
    produce(w, topic_id, 5)
    assert first_acquired(w, group, member, topic_id) == 5
    assert described(w, group) == (5, 5)  # the loaded share partition: 5-9 released, none finished
    refused = alter(w, group, 2)
    assert (refused.error_code, refused.error_message) == (ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    heartbeat(w, group, member, -1)  # leaves: the group is empty

    done = alter(w, group, 2)
    assert done.error_code == ErrorCode.NONE
    [t] = done.responses
    assert (t.topic_name, t.topic_id, [(p.partition_index, p.error_code) for p in t.partitions]) == (
        TOPIC,
        topic_id,
        [(0, ErrorCode.NONE)],
    )
    assert start_offset(w, group) == 2
    member, _ = join(w, group)
    # the leader still holds the old state: its first write is fenced, then it reloads from offset 2
    wait_until(lambda: first_acquired(w, group, member, topic_id) == 2, 20, "a share fetch from the altered offset")


def test_alter_refusals(broker, w):
    group = f"sa-{uuid.uuid4().hex[:8]}"
    member, _ = join(w, group)
    heartbeat(w, group, member, -1)
    assert alter(w, group, -3).responses[0].partitions[0].error_code == ErrorCode.INVALID_REQUEST
    assert alter(w, group, 0, partition=9).responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert (
        alter(w, group, 0, topic="nope").responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )
    missing = alter(w, "no-such-share-group", 0)
    assert (missing.error_code, missing.responses) == (ErrorCode.GROUP_ID_NOT_FOUND, [])


def test_deleting_a_topics_offsets_lets_share_auto_offset_reset_choose_again(broker, w):
    group = f"sa-{uuid.uuid4().hex[:8]}"
    member, _ = join(w, group)
    heartbeat(w, group, member, -1)
    assert alter(w, group, 1).error_code == ErrorCode.NONE
    assert start_offset(w, group) == 1
    body = Delete(
        group_id=group, topics=[Delete.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in (TOPIC, "nope")]
    )
    resp = w.call(ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, body)
    assert resp.error_code == ErrorCode.NONE
    assert [(t.topic_name, t.error_code) for t in resp.responses] == [
        (TOPIC, ErrorCode.NONE),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert start_offset(w, group) == -1
