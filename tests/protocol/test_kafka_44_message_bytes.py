"""The versions Kafka 4.4's clients send past ../shared's specs, in the bytes Kafka 4.4's own message classes
write: each body below serialized with ``MessageUtil.toByteBufferAccessor`` of .peers/kafka-4.4.0's kafka-clients
(computed once with a throwaway Java program; the same values set on both sides), encoded by our declarations and
decoded back."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.protocol.codec import decode_struct, encode_struct

T = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")  # Kafka's Uuid AQIDBAUGBwgJCgsMDQ4PEA
P = API_BY_KEY[ApiKey.PRODUCE]
F = API_BY_KEY[ApiKey.FETCH]
M = API_BY_KEY[ApiKey.METADATA]
OC = API_BY_KEY[ApiKey.OFFSET_COMMIT]
OF = API_BY_KEY[ApiKey.OFFSET_FETCH]
TX = API_BY_KEY[ApiKey.TXN_OFFSET_COMMIT]
DG = API_BY_KEY[ApiKey.DESCRIBE_GROUPS]
DEL = API_BY_KEY[ApiKey.DELETE_GROUPS]
DC = API_BY_KEY[ApiKey.DESCRIBE_CLUSTER]
DL = API_BY_KEY[ApiKey.DESCRIBE_LOG_DIRS]
LO = API_BY_KEY[ApiKey.LIST_OFFSETS]
IP = API_BY_KEY[ApiKey.INIT_PRODUCER_ID]
AV = API_BY_KEY[ApiKey.API_VERSIONS]
LT = API_BY_KEY[ApiKey.LIST_TRANSACTIONS]
AR = API_BY_KEY[ApiKey.ALTER_PARTITION_REASSIGNMENTS]

# (message, version) -> (our body, Kafka 4.4's bytes as hex)
CASES = {
    ("ApiVersionsRequest", 5): (
        lambda: AV.Request(client_software_name="t", client_software_version="1", cluster_id="c", node_id=3),
        "0274023102630000000300",
    ),
    ("ApiVersionsResponse", 5): (
        lambda: AV.Response(error_code=129, api_keys=[], throttle_time_ms=0),
        "0081010000000000",
    ),
    ("ProduceRequest", 13): (
        lambda: P.Request(
            transactional_id=None,
            acks=-1,
            timeout_ms=30000,
            topic_data=[
                P.Request.TopicProduceData(
                    topic_id=T, partition_data=[P.Request.TopicProduceData.PartitionProduceData(index=2, records=None)]
                )
            ],
        ),
        "00ffff00007530020102030405060708090a0b0c0d0e0f10020000000200000000",
    ),
    ("ProduceResponse", 13): (
        lambda: P.Response(
            responses=[
                P.Response.TopicProduceResponse(
                    topic_id=T,
                    partition_responses=[
                        P.Response.TopicProduceResponse.PartitionProduceResponse(
                            index=2, error_code=0, base_offset=7, log_start_offset=0
                        )
                    ],
                )
            ],
            throttle_time_ms=0,
        ),
        "020102030405060708090a0b0c0d0e0f10020000000200000000000000000007ffffffffffffffff0000000000000000010000000000000000",
    ),
    ("FetchRequest", 18): (
        lambda: F.Request(
            max_wait_ms=500,
            min_bytes=1,
            max_bytes=1000,
            session_id=0,
            session_epoch=-1,
            topics=[
                F.Request.FetchTopic(
                    topic_id=T,
                    partitions=[
                        F.Request.FetchTopic.FetchPartition(
                            partition=1, fetch_offset=3, partition_max_bytes=100, high_watermark=5
                        )
                    ],
                )
            ],
            forgotten_topics_data=[],
            rack_id="r",
        ),
        "000001f400000001000003e80000000000ffffffff020102030405060708090a0b0c0d0e0f100200000001ffffffff0000000000000003ffffffffffffffffffffffff0000006401010800000000000000050001027200",
    ),
    ("MetadataResponse", 13): (
        lambda: M.Response(throttle_time_ms=0, brokers=[], cluster_id="c", controller_id=0, topics=[], error_code=0),
        "000000000102630000000001000000",
    ),
    ("OffsetCommitRequest", 10): (
        lambda: OC.Request(
            group_id="g",
            generation_id_or_member_epoch=4,
            member_id="m",
            topics=[
                OC.Request.OffsetCommitRequestTopic(
                    topic_id=T,
                    partitions=[
                        OC.Request.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                            partition_index=1, committed_offset=9, committed_metadata="x"
                        )
                    ],
                )
            ],
        ),
        "026700000004026d00020102030405060708090a0b0c0d0e0f1002000000010000000000000009ffffffff0278000000",
    ),
    ("OffsetCommitResponse", 10): (
        lambda: OC.Response(
            throttle_time_ms=0,
            topics=[
                OC.Response.OffsetCommitResponseTopic(
                    topic_id=T,
                    partitions=[
                        OC.Response.OffsetCommitResponseTopic.OffsetCommitResponsePartition(
                            partition_index=1, error_code=100
                        )
                    ],
                )
            ],
        ),
        "00000000020102030405060708090a0b0c0d0e0f1002000000010064000000",
    ),
    ("OffsetFetchRequest", 10): (
        lambda: OF.Request(
            groups=[
                OF.Request.OffsetFetchRequestGroup(
                    group_id="g",
                    member_id="m",
                    member_epoch=3,
                    topics=[
                        OF.Request.OffsetFetchRequestGroup.OffsetFetchRequestTopics(
                            topic_id=T, partition_indexes=[0, 1]
                        )
                    ],
                )
            ],
            require_stable=True,
        ),
        "020267026d00000003020102030405060708090a0b0c0d0e0f1003000000000000000100000100",
    ),
    ("OffsetFetchResponse", 10): (
        lambda: OF.Response(
            throttle_time_ms=0,
            groups=[
                OF.Response.OffsetFetchResponseGroup(
                    group_id="g",
                    topics=[
                        OF.Response.OffsetFetchResponseGroup.OffsetFetchResponseTopics(
                            topic_id=T,
                            partitions=[
                                OF.Response.OffsetFetchResponseGroup.OffsetFetchResponseTopics.OffsetFetchResponsePartitions(
                                    partition_index=0, committed_offset=9, metadata="x", error_code=0
                                )
                            ],
                        )
                    ],
                    error_code=0,
                )
            ],
        ),
        "00000000020267020102030405060708090a0b0c0d0e0f1002000000000000000000000009ffffffff02780000000000000000",
    ),
    ("TxnOffsetCommitRequest", 6): (
        lambda: TX.Request(
            transactional_id="tx",
            group_id="g",
            producer_id=5,
            producer_epoch=1,
            generation_id=2,
            member_id="m",
            topics=[
                TX.Request.TxnOffsetCommitRequestTopic(
                    topic_id=T,
                    partitions=[
                        TX.Request.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                            partition_index=0, committed_offset=9, committed_metadata=None
                        )
                    ],
                )
            ],
        ),
        "03747802670000000000000005000100000002026d00020102030405060708090a0b0c0d0e0f1002000000000000000000000009ffffffff00000000",
    ),
    ("TxnOffsetCommitResponse", 6): (
        lambda: TX.Response(
            throttle_time_ms=0,
            topics=[
                TX.Response.TxnOffsetCommitResponseTopic(
                    topic_id=T,
                    partitions=[
                        TX.Response.TxnOffsetCommitResponseTopic.TxnOffsetCommitResponsePartition(
                            partition_index=0, error_code=69
                        )
                    ],
                )
            ],
        ),
        "00000000020102030405060708090a0b0c0d0e0f1002000000000045000000",
    ),
    ("DescribeGroupsResponse", 6): (
        lambda: DG.Response(
            throttle_time_ms=0,
            groups=[
                DG.Response.DescribedGroup(
                    error_code=69,
                    error_message="Group g not found.",
                    group_id="g",
                    group_state="Dead",
                    protocol_type="",
                    protocol_data="",
                )
            ],
        ),
        "000000000200451347726f75702067206e6f7420666f756e642e02670544656164010101800000000000",
    ),
    ("DeleteGroupsResponse", 3): (
        lambda: DEL.Response(
            throttle_time_ms=0,
            results=[DEL.Response.DeletableGroupResult(group_id="g", error_code=68, error_message="busy")],
        ),
        "00000000020267004405627573790000",
    ),
    ("DescribeClusterRequest", 2): (
        lambda: DC.Request(include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=True),
        "00010100",
    ),
    ("DescribeClusterResponse", 2): (
        lambda: DC.Response(
            throttle_time_ms=0,
            error_code=0,
            cluster_id="c",
            controller_id=0,
            brokers=[DC.Response.DescribeClusterBroker(broker_id=0, host="h", port=9092, is_fenced=False)],
        ),
        "000000000000000102630000000002000000000268000023840000008000000000",
    ),
    ("DescribeLogDirsResponse", 5): (
        lambda: DL.Response(
            throttle_time_ms=0,
            error_code=0,
            results=[
                DL.Response.DescribeLogDirsResult(
                    error_code=0, log_dir="/d", topics=[], total_bytes=10, usable_bytes=5, is_cordoned=True
                )
            ],
        ),
        "000000000000020000032f6401000000000000000a0000000000000005010000",
    ),
    ("ListOffsetsRequest", 11): (
        lambda: LO.Request(
            replica_id=-1,
            isolation_level=0,
            topics=[
                LO.Request.ListOffsetsTopic(
                    name="t",
                    partitions=[LO.Request.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-6)],
                )
            ],
            timeout_ms=100,
        ),
        "ffffffff000202740200000000fffffffffffffffffffffffa00000000006400",
    ),
    ("InitProducerIdRequest", 5): (
        lambda: IP.Request(transactional_id="tx", transaction_timeout_ms=60000),
        "0374780000ea60ffffffffffffffffffff00",
    ),
    ("ListTransactionsRequest", 2): (
        lambda: LT.Request(state_filters=[], producer_id_filters=[], transactional_id_pattern="tx-.*"),
        "0101ffffffffffffffff0674782d2e2a00",
    ),
    ("AlterPartitionReassignmentsRequest", 1): (
        lambda: AR.Request(
            allow_replication_factor_change=False,
            topics=[
                AR.Request.ReassignableTopic(
                    name="t",
                    partitions=[AR.Request.ReassignableTopic.ReassignablePartition(partition_index=0, replicas=[1, 2])],
                )
            ],
        ),
        "0000ea60000202740200000000030000000100000002000000",
    ),
    ("AlterPartitionReassignmentsResponse", 1): (
        lambda: AR.Response(
            throttle_time_ms=0, allow_replication_factor_change=False, error_code=0, error_message="", responses=[]
        ),
        "00000000000000010100",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"{c[0]}-v{c[1]}")
def test_our_bytes_are_kafka_44s_and_decode_back(case):
    name, version = case
    build, wire = CASES[case]
    api = next(a for a in API_BY_KEY.values() if name in (a.name + "Request", a.name + "Response"))
    struct = api.request if name.endswith("Request") else api.response
    body = build()
    flexible = api.is_flexible(version)
    assert bytes(encode_struct(struct, version, flexible, body).getvalue()).hex() == wire
    assert decode_struct(struct, version, flexible, bytes.fromhex(wire), where=name) == body
