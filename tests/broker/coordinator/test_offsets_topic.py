"""__consumer_offsets: Kafka's group -> partition mapping and record formats, as golden bytes."""

from __future__ import annotations

import pytest

from broker.coordinator.offsets_topic import (
    GroupKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetKey,
    OffsetsRecordError,
    decode_group_value,
    decode_key,
    decode_offset_value,
    encode_group_key,
    encode_group_value,
    encode_offset_key,
    encode_offset_value,
    java_string_hash,
    partition_for,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("hello", 99162322),
        ("Hello World", -862545276),
        ("polygenelubricants", -(2**31)),  # Java's famous Integer.MIN_VALUE hash
        ("\U0001f600", 0xD83D * 31 + 0xDE00),  # a surrogate pair hashes as two UTF-16 code units
    ],
)
def test_java_string_hash_matches_java(text, expected):
    assert java_string_hash(text) == expected


@pytest.mark.parametrize(
    ("group", "partitions", "expected"),
    [
        ("hello", 50, 99162322 % 50),
        ("Hello World", 50, 862545276 % 50),
        ("polygenelubricants", 50, 0),  # Utils.abs(Integer.MIN_VALUE) is 0
        ("", 7, 0),
    ],
)
def test_partition_for_is_kafkas_partition_for(group, partitions, expected):
    assert partition_for(group, partitions) == expected


def test_offset_commit_key_version_1_golden_bytes():
    data = encode_offset_key("g", "t", 3)
    assert data == bytes.fromhex("000100016700017400000003")
    assert decode_key(data) == OffsetKey("g", "t", 3)


def test_offset_commit_key_version_0_decodes():
    assert decode_key(bytes.fromhex("000000016700017400000001")) == OffsetKey("g", "t", 1)


def test_group_metadata_key_golden_bytes():
    data = encode_group_key("grp")
    assert data == bytes.fromhex("00020003") + b"grp"
    assert decode_key(data) == GroupKey("grp")


def test_unknown_key_version_is_refused():
    with pytest.raises(OffsetsRecordError, match="key version 3"):
        decode_key(bytes.fromhex("0003000167"))


OFFSET = "0000000000000005"
EPOCH = "00000002"
META = "00016d"
TS = "00000000000003e8"


@pytest.mark.parametrize(
    ("version", "hex_bytes"),
    [
        (0, "0000" + OFFSET + META + TS),
        (1, "0001" + OFFSET + META + TS + "00000000000007d0"),
        (2, "0002" + OFFSET + META + TS),
        (3, "0003" + OFFSET + EPOCH + META + TS),
        (4, "0004" + OFFSET + EPOCH + "026d" + TS + "00"),
    ],
)
def test_offset_commit_value_golden_bytes(version, hex_bytes):
    data = encode_offset_value(5, "m", 1000, leader_epoch=2, expire_timestamp=2000, version=version)
    assert data.hex() == hex_bytes
    value = decode_offset_value(data)
    assert (value.offset, value.metadata, value.commit_timestamp) == (5, "m", 1000)
    assert value.leader_epoch == (2 if version >= 3 else -1)
    assert value.expire_timestamp == (2000 if version == 1 else -1)


def test_offset_commit_value_version_is_chosen_as_kafka_does():
    assert encode_offset_value(1, "", 0)[:2] == b"\x00\x03"
    assert encode_offset_value(1, "", 0, expire_timestamp=5)[:2] == b"\x00\x01"


def _group_value():
    member = MemberMetadata(
        member_id="m",
        group_instance_id="i",
        client_id="c",
        client_host="/h",
        rebalance_timeout=300,
        session_timeout=100,
        subscription=b"\x01",
        assignment=b"\x02",
    )
    return GroupMetadataValue(
        protocol_type="consumer",
        generation=7,
        protocol="range",
        leader="m",
        current_state_timestamp=9,
        members=[member],
    )


def test_group_metadata_value_v3_golden_bytes():
    data = encode_group_value(_group_value())
    expected = (
        "0003"
        + "0008" + b"consumer".hex()
        + "00000007"
        + "0005" + b"range".hex()
        + "0001" + "6d"
        + "0000000000000009"
        + "00000001"  # one member
        + "0001" + "6d"  # member_id
        + "0001" + "69"  # group_instance_id
        + "0001" + "63"  # client_id
        + "0002" + b"/h".hex()  # client_host
        + "0000012c"  # rebalance_timeout 300
        + "00000064"  # session_timeout 100
        + "00000001" + "01"
        + "00000001" + "02"
    )  # fmt: skip
    assert data.hex() == expected
    assert decode_group_value(data) == _group_value()


def test_group_metadata_value_v0_has_no_rebalance_timeout_or_timestamp():
    data = encode_group_value(_group_value(), version=0)
    value = decode_group_value(data)
    assert value.current_state_timestamp == -1
    assert value.members[0].rebalance_timeout == -1
    assert value.members[0].group_instance_id is None
    assert len(data) == len(encode_group_value(_group_value(), version=1)) - 4


def test_group_metadata_value_v4_is_flexible():
    data = encode_group_value(_group_value(), version=4)
    assert data[:2] == b"\x00\x04"
    assert data[2] == len("consumer") + 1  # compact string length
    assert decode_group_value(data) == _group_value()


def test_truncated_value_is_an_offsets_record_error():
    with pytest.raises(OffsetsRecordError):
        decode_offset_value(encode_offset_value(1, "x", 2)[:-1])
