"""GroupAdmin builds and reads the shape of the version it negotiates (FindCoordinator single key up to v3,
batched from v4; OffsetFetch one group up to v7, ``groups`` from v8), and ``storage="zookeeper"`` needs v0:
a broker without it (Kafka 4.x ranges) is a clear error and nothing is sent. Scripted brokers stand in for
brokers with other version ranges than ours."""

from __future__ import annotations

import pytest

from spark_kafkalog.client import KafkaClient, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin, OffsetAndMetadata
from spark_kafkalog.client.errors import NoCommonVersionError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

from ..scripted_broker import ClusterView, ScriptedBroker, default_api_ranges

FAST = {"request_timeout_ms": 2000, "retry_backoff_ms": 10, "default_api_timeout_ms": 5000}
FIND = API_BY_KEY[ApiKey.FIND_COORDINATOR].Response
FETCH = API_BY_KEY[ApiKey.OFFSET_FETCH].Response
TP = TopicPartition("t", 0)


def find_coordinator(broker: ScriptedBroker):
    def handler(request, _conn):
        body = request.body
        if request.version >= 4:
            coordinators = [
                FIND.Coordinator(key=k, node_id=0, host=broker.host, port=broker.port, error_code=0, error_message=None)
                for k in body.coordinator_keys
            ]
            return FIND(throttle_time_ms=0, coordinators=coordinators)
        return FIND(throttle_time_ms=0, error_code=0, error_message=None, node_id=0, host=broker.host, port=broker.port)

    return handler


def offset_fetch(request, _conn):
    """Offset 40 + partition, leader epoch 2, metadata "m" for every requested partition."""

    def partitions(cls, indexes):
        return [
            cls(partition_index=p, committed_offset=40 + p, committed_leader_epoch=2, metadata="m", error_code=0)
            for p in indexes
        ]

    body = request.body
    if request.version >= 8:
        G = FETCH.OffsetFetchResponseGroup
        T = G.OffsetFetchResponseTopics
        groups = [
            G(
                group_id=g.group_id,
                topics=[
                    T(name=t.name, partitions=partitions(T.OffsetFetchResponsePartitions, t.partition_indexes))
                    for t in g.topics
                ],
                error_code=0,
            )
            for g in body.groups
        ]
        return FETCH(throttle_time_ms=0, groups=groups)
    T = FETCH.OffsetFetchResponseTopic
    topics = [
        T(name=t.name, partitions=partitions(T.OffsetFetchResponsePartition, t.partition_indexes)) for t in body.topics
    ]
    return FETCH(throttle_time_ms=0, topics=topics, error_code=0)


@pytest.fixture
def scripted():
    brokers = []

    def start(**ranges) -> ScriptedBroker:
        api_ranges = default_api_ranges()
        api_ranges.update({int(getattr(ApiKey, k.upper())): v for k, v in ranges.items()})
        broker = ScriptedBroker(0, api_ranges=api_ranges)
        ClusterView([broker], topics={"t": {0: 0}}).install()
        broker.handlers[ApiKey.FIND_COORDINATOR] = find_coordinator(broker)
        broker.handlers[ApiKey.OFFSET_FETCH] = offset_fetch
        brokers.append(broker)
        return broker

    yield start
    for b in brokers:
        b.stop()


@pytest.mark.parametrize(
    "find_range, fetch_range, find_version, fetch_version",
    [((0, 3), (0, 7), 3, 7), ((0, 6), (0, 9), 6, 9), ((0, 4), (0, 8), 4, 8), ((0, 2), (1, 5), 2, 5)],
)
def test_group_admin_speaks_the_negotiated_shape(scripted, find_range, fetch_range, find_version, fetch_version):
    broker = scripted(find_coordinator=find_range, offset_fetch=fetch_range)
    with KafkaClient(broker.address, **FAST) as client:
        admin = GroupAdmin(client)
        assert admin.coordinator("g1") == 0
        got = admin.list_group_offsets("g1", [TP, TopicPartition("t", 1)])
    epoch = 2 if fetch_version >= 5 else -1
    assert got == {TP: OffsetAndMetadata(40, "m", epoch), TopicPartition("t", 1): OffsetAndMetadata(41, "m", epoch)}
    (find,) = broker.requests(ApiKey.FIND_COORDINATOR)
    assert find.version == find_version
    if find_version >= 4:
        assert (find.body.coordinator_keys, find.body.key_type) == (["g1"], 0)
    else:
        assert find.body.key == "g1"
    (fetch,) = broker.requests(ApiKey.OFFSET_FETCH)
    assert fetch.version == fetch_version
    if fetch_version >= 8:
        (group,) = fetch.body.groups
        assert (group.group_id, group.member_id, group.member_epoch) == ("g1", None, -1)
        assert [(t.name, t.partition_indexes) for t in group.topics] == [("t", [0, 1])]
    else:
        assert fetch.body.group_id == "g1"
        assert [(t.name, t.partition_indexes) for t in fetch.body.topics] == [("t", [0, 1])]


def test_zookeeper_storage_sends_v0_to_any_broker_without_finding_a_coordinator(scripted):
    broker = scripted()
    with KafkaClient(broker.address, **FAST) as client:
        got = GroupAdmin(client).list_group_offsets("g2", [TP], storage="zookeeper")
    assert got == {TP: OffsetAndMetadata(40, "m", -1)}
    assert [r.version for r in broker.requests(ApiKey.OFFSET_FETCH)] == [0]
    assert broker.requests(ApiKey.FIND_COORDINATOR) == []


def test_zookeeper_storage_on_a_broker_without_v0_is_a_clear_error_and_sends_nothing(scripted):
    broker = scripted(offset_commit=(2, 9), offset_fetch=(1, 9))  # Kafka 4.0's ranges (KIP-896)
    with KafkaClient(broker.address, **FAST) as client:
        admin = GroupAdmin(client)
        with pytest.raises(NoCommonVersionError, match="ZooKeeper offset storage needs OffsetCommit v0"):
            admin.commit_offsets("g3", {TP: 5}, storage="zookeeper")
        with pytest.raises(NoCommonVersionError, match="ZooKeeper offset storage needs OffsetFetch v0"):
            admin.list_group_offsets("g3", [TP], storage="zookeeper")
        with pytest.raises(ValueError, match="offset storage must be one of kafka, zookeeper, not 'zk'"):
            admin.commit_offsets("g3", {TP: 5}, storage="zk")
    assert broker.requests(ApiKey.OFFSET_COMMIT) == broker.requests(ApiKey.OFFSET_FETCH) == []


def test_zookeeper_storage_reads_kafkas_missing_node_answer_as_no_commit(scripted):
    """Kafka 0.8.2-2.x answer a partition without a ZooKeeper node with -1 and UNKNOWN_TOPIC_OR_PARTITION."""
    broker = scripted()
    T = FETCH.OffsetFetchResponseTopic
    P = T.OffsetFetchResponsePartition
    broker.handlers[ApiKey.OFFSET_FETCH] = lambda request, _conn: FETCH(
        topics=[
            T(
                name="t",
                partitions=[
                    P(partition_index=0, committed_offset=-1, metadata="", error_code=3),
                    P(partition_index=1, committed_offset=9, metadata="", error_code=0),
                ],
            )
        ]
    )
    with KafkaClient(broker.address, **FAST) as client:
        got = GroupAdmin(client).list_group_offsets("g4", [TP, TopicPartition("t", 1)], storage="zookeeper")
    assert got == {TopicPartition("t", 1): OffsetAndMetadata(9, "", -1)}
