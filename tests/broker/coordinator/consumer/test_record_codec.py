"""The consumer group coordinator records in Kafka 4.4's bytes.

The vectors are what Kafka 4.4.0's own generated classes write (``MessageUtil.toVersionPrefixedByteBuffer`` over
``org.apache.kafka.coordinator.group.generated.*``, the way ``GroupCoordinatorRecordSerde`` frames keys and values),
computed once with jshell against .peers/kafka-4.4.0's jars; the uuid is 0102030405060708090a0b0c0d0e0f10.
"""

import uuid

import pytest

from broker.coordinator.consumer import record_codec
from broker.coordinator.consumer.records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupRegularExpressionKey,
    ConsumerGroupRegularExpressionValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    CoordinatorRecord,
    MemberState,
    PartitionMetadata,
    TopicMetadata,
    TopicPartition,
    TopicPartitions,
)
from broker.coordinator.offsets_topic import OffsetsRecordError

T = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")

KEYS = [
    (ConsumerGroupMetadataKey("grp"), "00030003677270"),
    (ConsumerGroupPartitionMetadataKey("grp"), "00040003677270"),
    (ConsumerGroupMemberMetadataKey("grp", "m1"), "0005000367727000026d31"),
    (ConsumerGroupTargetAssignmentMetadataKey("grp"), "00060003677270"),
    (ConsumerGroupTargetAssignmentMemberKey("grp", "m1"), "0007000367727000026d31"),
    (ConsumerGroupCurrentMemberAssignmentKey("grp", "m1"), "0008000367727000026d31"),
    (ConsumerGroupRegularExpressionKey("grp", "fo.*"), "001000036772700004666f2e2a"),
]

VALUES = [
    (3, ConsumerGroupMetadataValue(epoch=7), "00000000000700"),
    (3, ConsumerGroupMetadataValue(epoch=7, metadata_hash=0x1122334455667788), "0000000000070100081122334455667788"),
    (
        4,
        ConsumerGroupPartitionMetadataValue(topics=(TopicMetadata(T, "foo", 2, (PartitionMetadata(0, ("r1",)),)),)),
        "0000020102030405060708090a0b0c0d0e0f1004666f6f00000002020000000002037231000000",
    ),
    (
        5,
        ConsumerGroupMemberMetadataValue(
            rack_id="rack",
            client_id="cli",
            client_host="/127.0.0.1",
            subscribed_topic_names=("foo", "bar"),
            rebalance_timeout_ms=300000,
            server_assignor="uniform",
        ),
        # a consumer-protocol member: Kafka writes the null classic metadata (tag 0, varint 0)
        "000000057261636b04636c690b2f3132372e302e302e310304666f6f0462617200000493e008756e69666f726d01000100",
    ),
    (
        5,
        ConsumerGroupMemberMetadataValue(
            instance_id="i1",
            client_id="cli",
            client_host="/h",
            subscribed_topic_regex="fo.*",
            classic_member_metadata=ClassicMemberMetadata(45000, (ClassicProtocol("range", b"\x01\x02"),)),
        ),
        "00000369310004636c69032f680105666f2e2affffffff00010011010000afc8020672616e67650301020000",
    ),
    (6, ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=5), "00000000000500"),
    (
        6,
        ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=5, assignment_timestamp=1700000000000),
        "0000000000050100080000018bcfe56800",
    ),
    (
        7,
        ConsumerGroupTargetAssignmentMemberValue(topic_partitions=(TopicPartition(T, (0, 2)),)),
        "0000020102030405060708090a0b0c0d0e0f100300000000000000020000",
    ),
    (
        8,
        ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=5,
            previous_member_epoch=4,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned_partitions=(TopicPartitions(T, (1,)),),
            partitions_pending_revocation=(TopicPartitions(T, (0,), assignment_epochs=(3,)),),
        ),
        "0000000000050000000401020102030405060708090a0b0c0d0e0f10020000000100"
        "020102030405060708090a0b0c0d0e0f100200000000010005020000000300",
    ),
    (
        16,
        ConsumerGroupRegularExpressionValue(topics=("foo",), version=42, timestamp=1700000000000),
        "00000204666f6f000000000000002a0000018bcfe5680000",
    ),
]


@pytest.mark.parametrize(("key", "wire"), KEYS, ids=lambda x: type(x).__name__ if not isinstance(x, str) else "")
def test_keys_are_kafkas_bytes(key, wire):
    assert record_codec.encode_key(key).hex() == wire
    assert record_codec.decode_key(bytes.fromhex(wire)) == key
    assert record_codec.is_consumer_group_key(bytes.fromhex(wire))


@pytest.mark.parametrize(("record_type", "value", "wire"), VALUES)
def test_values_are_kafkas_bytes(record_type, value, wire):
    assert record_codec.encode_value(record_type, value).hex() == wire
    assert record_codec.decode_value(record_type, bytes.fromhex(wire)) == value


def test_a_record_round_trips_and_a_tombstone_has_no_value():
    rec = CoordinatorRecord(ConsumerGroupMetadataKey("grp"), ConsumerGroupMetadataValue(epoch=3))
    key, value = record_codec.encode_record(rec)
    assert record_codec.decode_record(key, value) == rec
    tomb = CoordinatorRecord.tombstone(ConsumerGroupMemberMetadataKey("grp", "m1"))
    key, value = record_codec.encode_record(tomb)
    assert value is None
    assert record_codec.decode_record(key, None) == tomb


def test_absent_or_empty_classic_member_metadata_reads_as_null():
    """Kafka's default of the tagged struct is an empty struct: its builder leaves it out (the first vector, what
    Kafka's classes write when it is not set) or an empty one could be written; both mean no classic protocol."""
    absent = "000000057261636b04636c690b2f3132372e302e302e310304666f6f0462617200000493e008756e69666f726d00"
    assert record_codec.decode_value(5, bytes.fromhex(absent)).classic_member_metadata is None
    empty = absent[:-2] + "0100" + "07" + "01" + "00000000" + "01" + "00"
    assert record_codec.decode_value(5, bytes.fromhex(empty)).classic_member_metadata is None


def test_an_unknown_tag_is_skipped():
    # ConsumerGroupMetadataValue with tag 0 (metadata_hash) and an unknown tag 5 of 2 bytes
    wire = bytes.fromhex("00000000000702" + "00081122334455667788" + "05020a0b")
    assert record_codec.decode_value(3, wire) == ConsumerGroupMetadataValue(7, 0x1122334455667788)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        (bytes.fromhex("0001"), None, "not a consumer group record type"),
        (bytes.fromhex("00030003677270ff"), None, "trailing"),
        (bytes.fromhex("000300036772"), None, "malformed"),
        (bytes.fromhex("00030003677270"), bytes.fromhex("0001000000070000"), "version 1"),
        (bytes.fromhex("00030003677270"), bytes.fromhex("000000000007"), "malformed"),
    ],
)
def test_malformed_records_name_the_problem(key, value, problem):
    with pytest.raises(OffsetsRecordError, match=problem):
        record_codec.decode_record(key, value)


def test_classic_keys_are_not_ours():
    from broker.coordinator.offsets_topic import encode_group_key, encode_offset_key

    assert not record_codec.is_consumer_group_key(encode_group_key("g"))
    assert not record_codec.is_consumer_group_key(encode_offset_key("g", "t", 0))
    assert not record_codec.is_consumer_group_key(b"\x00")
