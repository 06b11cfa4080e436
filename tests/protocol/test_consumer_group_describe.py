"""ConsumerGroupDescribe (69) in the bytes Kafka 4.4's own message classes write (ConsumerGroupDescribeResponseData
serialized with MessageUtil at v0 and v1, computed once with jshell against .peers/kafka-4.4.0's jars). v1 adds
member_type (KIP-1099), past the JSON specs in ../shared; Assignment is one struct under two fields."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.protocol import API_BY_KEY
from spark_kafkalog.protocol.codec import decode_struct, encode_struct

T = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")
API = API_BY_KEY[69]

WIRE = {
    0: (
        "0000000002000000046772700c5265636f6e63696c696e67000000030000000308756e69666f726d02036d3100027200"
        "0000030263032f680204666f6f00020102030405060708090a0b0c0d0e0f1004666f6f03000000000000000100000201"
        "02030405060708090a0b0c0d0e0f1004666f6f0200000001000000800000000000"
    ),
    1: (
        "0000000002000000046772700c5265636f6e63696c696e67000000030000000308756e69666f726d02036d3100027200"
        "0000030263032f680204666f6f00020102030405060708090a0b0c0d0e0f1004666f6f03000000000000000100000201"
        "02030405060708090a0b0c0d0e0f1004666f6f020000000100000100800000000000"
    ),
}


def response(version: int):
    r = API.Response
    g, m = r.DescribedGroup, r.DescribedGroup.Member
    a, tp = m.Assignment, m.Assignment.TopicPartitions
    member = m(
        member_id="m1",
        rack_id="r",
        member_epoch=3,
        client_id="c",
        client_host="/h",
        subscribed_topic_names=["foo"],
        assignment=a(topic_partitions=[tp(topic_id=T, topic_name="foo", partitions=[0, 1])]),
        target_assignment=a(topic_partitions=[tp(topic_id=T, topic_name="foo", partitions=[1])]),
        member_type=1 if version >= 1 else -1,
    )
    group = g(
        group_id="grp", group_state="Reconciling", group_epoch=3, assignment_epoch=3, assignor_name="uniform",
        members=[member],
    )  # fmt: skip
    return r(throttle_time_ms=0, groups=[group])


@pytest.mark.parametrize("version", [0, 1])
def test_response_is_kafkas_bytes(version):
    body = encode_struct(API.response, version, True, response(version)).getvalue()
    assert bytes(body).hex() == WIRE[version]
    assert decode_struct(API.response, version, True, bytes.fromhex(WIRE[version]), where="test") == response(version)


def test_request_is_kafkas_bytes():
    req = API.Request(group_ids=["grp", "g2"], include_authorized_operations=True)
    assert bytes(encode_struct(API.request, 1, True, req).getvalue()).hex() == "03046772700367320100"
