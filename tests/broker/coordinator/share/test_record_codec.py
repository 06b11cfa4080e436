"""The share group coordinator records (types 10-15) in Kafka 4.4's bytes.

The vectors are what Kafka 4.4.0's generated classes write (``MessageUtil.toCoordinatorTypePrefixedByteBuffer``
for keys, ``toVersionPrefixedByteBuffer`` at version 0 for values, over
``org.apache.kafka.coordinator.group.generated.ShareGroup*``), computed once with jshell against
.peers/kafka-4.4.0's jars; the uuid is 0102030405060708090a0b0c0d0e0f10.
"""

import uuid

import pytest

from broker.coordinator.offsets_topic import OffsetsRecordError, encode_group_key, encode_offset_key
from broker.coordinator.share import record_codec
from broker.coordinator.share import records as r

T = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")

KEYS = [
    (r.ShareGroupMemberMetadataKey("grp", "m1"), "000a000367727000026d31"),
    (r.ShareGroupMetadataKey("grp"), "000b0003677270"),
    (r.ShareGroupTargetAssignmentMetadataKey("grp"), "000c0003677270"),
    (r.ShareGroupTargetAssignmentMemberKey("grp", "m1"), "000d000367727000026d31"),
    (r.ShareGroupCurrentMemberAssignmentKey("grp", "m1"), "000e000367727000026d31"),
    (r.ShareGroupStatePartitionMetadataKey("grp"), "000f0003677270"),
]

VALUES = [
    (10, r.ShareGroupMemberMetadataValue("c", "/h", None, ("foo", "bar")), "0000000263032f680304666f6f0462617200"),
    (10, r.ShareGroupMemberMetadataValue("c", "/h", "r1", ()), "00000372310263032f680100"),
    (11, r.ShareGroupMetadataValue(7, 0x1122334455667788), "000000000007112233445566778800"),
    (12, r.ShareGroupTargetAssignmentMetadataValue(7), "00000000000700"),
    (12, r.ShareGroupTargetAssignmentMetadataValue(7, 1234567), "000000000007010008000000000012d687"),
    (
        13,
        r.ShareGroupTargetAssignmentMemberValue((r.TopicPartitions(T, (0, 2)),)),
        "0000020102030405060708090a0b0c0d0e0f100300000000000000020000",
    ),
    (
        14,
        r.ShareGroupCurrentMemberAssignmentValue(7, 6, 0, (r.TopicPartitions(T, (1,)),)),
        "0000000000070000000600020102030405060708090a0b0c0d0e0f1002000000010000",
    ),
    (
        15,
        r.ShareGroupStatePartitionMetadataValue(
            (r.TopicPartitionsInfo(T, "foo", (3,)),),
            (r.TopicPartitionsInfo(T, "foo", (0, 1)),),
            (r.TopicInfo(T, "bar"),),
        ),
        "0000020102030405060708090a0b0c0d0e0f1004666f6f020000000300020102030405060708090a0b0c0d0e0f1004666f6f0300"
        "0000000000000100020102030405060708090a0b0c0d0e0f10046261720000",
    ),
]


@pytest.mark.parametrize(("key", "wire"), KEYS)
def test_keys_are_kafkas_bytes_and_read_back(key, wire):
    assert record_codec.encode_key(key).hex() == wire
    assert record_codec.decode_key(bytes.fromhex(wire)) == key
    assert record_codec.is_share_group_key(bytes.fromhex(wire))


@pytest.mark.parametrize(("record_type", "value", "wire"), VALUES)
def test_values_are_kafkas_bytes_and_read_back(record_type, value, wire):
    assert record_codec.encode_value(record_type, value).hex() == wire
    assert record_codec.decode_value(record_type, bytes.fromhex(wire)) == value


def test_a_tombstone_round_trips_as_a_null_value():
    rec = r.ShareGroupRecord.tombstone(r.ShareGroupMetadataKey("grp"))
    key, value = record_codec.encode_record(rec)
    assert value is None and record_codec.decode_record(key, value) == rec


def test_other_keys_are_not_share_group_keys():
    assert not record_codec.is_share_group_key(encode_group_key("g"))
    assert not record_codec.is_share_group_key(encode_offset_key("g", "t", 0))
    assert not record_codec.is_share_group_key(bytes.fromhex("00030003677270"))  # a consumer group's epoch
    assert not record_codec.is_share_group_key(b"\x00")


@pytest.mark.parametrize(
    ("record_type", "wire"),
    [
        (11, "0000000000071122"),  # truncated
        (11, "0001000000071122334455667788"),  # value version 1
        (12, "0000000000070000"),  # a trailing byte
    ],
)
def test_malformed_values_raise_offsets_record_error(record_type, wire):
    with pytest.raises(OffsetsRecordError):
        record_codec.decode_value(record_type, bytes.fromhex(wire))


def test_a_value_must_pair_with_its_key():
    with pytest.raises(TypeError):
        r.ShareGroupRecord(r.ShareGroupMetadataKey("g"), r.ShareGroupTargetAssignmentMetadataValue(1))
