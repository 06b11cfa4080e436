"""``__share_group_state`` records against the bytes Kafka 4.4's ``ShareCoordinatorRecordSerde`` writes (captured
with tests/compat/java/ShareStateRecordsDriver.java, which tests/compat/test_share_state_records_of_kafka.py
re-runs), and the coordinator key's partition against Kafka's ``Utils.abs(key.hashCode()) % 50``."""

from __future__ import annotations

import uuid

import pytest

from broker.share.record_codec import ShareStateRecordError, decode_record, encode_record
from broker.share.records import (
    InvalidCoordinatorKey,
    ShareRecordType,
    ShareSnapshotValue,
    ShareStateKey,
    ShareStateRecord,
    ShareUpdateValue,
    coordinator_key,
    parse_coordinator_key,
    share_state_partition_for,
)
from broker.share.state_batches import StateBatch

TOPIC_ID = uuid.UUID("12345678-9abc-4def-8123-456789abcdef")
GROUP, PARTITION = "my-group", 4
SNAPSHOT_KEY = ShareStateKey(ShareRecordType.SHARE_SNAPSHOT, GROUP, TOPIC_ID, PARTITION)
UPDATE_KEY = ShareStateKey(ShareRecordType.SHARE_UPDATE, GROUP, TOPIC_ID, PARTITION)
KEY_HEX = "00086d792d67726f7570123456789abc4def8123456789abcdef00000004"

# (name, record, key hex, value hex or None): the driver's output for the same records
GOLDEN = [
    (
        "snapshot",
        ShareStateRecord(
            SNAPSHOT_KEY,
            ShareSnapshotValue(
                snapshot_epoch=3,
                state_epoch=2,
                leader_epoch=7,
                start_offset=100,
                create_timestamp=1700000000000,
                write_timestamp=1700000000123,
                state_batches=(StateBatch(100, 104, 2, 1), StateBatch(105, 105, 4, 5)),
            ),
        ),
        "0000" + KEY_HEX,
        "000000000003000000020000000700000000000000640000018bcfe568000000018bcfe5687b030000000000000064000000000000"
        "006802000100000000000000006900000000000000690400050000",
    ),
    (
        "snapshot_dcc",
        ShareStateRecord(
            SNAPSHOT_KEY,
            ShareSnapshotValue(
                snapshot_epoch=0,
                state_epoch=0,
                leader_epoch=-1,
                start_offset=-1,
                create_timestamp=5,
                write_timestamp=6,
                delivery_complete_count=9,
            ),
        ),
        "0000" + KEY_HEX,
        "00000000000000000000ffffffffffffffffffffffff000000000000000500000000000000060101000400000009",
    ),
    (
        "update",
        ShareStateRecord(
            UPDATE_KEY,
            ShareUpdateValue(
                snapshot_epoch=3, leader_epoch=8, start_offset=-1, state_batches=(StateBatch(106, 110, 0, 2),)
            ),
        ),
        "0001" + KEY_HEX,
        "00000000000300000008ffffffffffffffff02000000000000006a000000000000006e0000020000",
    ),
    (
        "update_dcc",
        ShareStateRecord(
            UPDATE_KEY, ShareUpdateValue(snapshot_epoch=1, leader_epoch=-1, start_offset=12, delivery_complete_count=4)
        ),
        "0001" + KEY_HEX,
        "000000000001ffffffff000000000000000c0101000400000004",
    ),
    ("tombstone", ShareStateRecord(SNAPSHOT_KEY, None), "0000" + KEY_HEX, None),
]


@pytest.mark.parametrize(("name", "record", "key_hex", "value_hex"), GOLDEN, ids=[g[0] for g in GOLDEN])
def test_records_encode_to_kafkas_bytes_and_decode_back(name, record, key_hex, value_hex):
    key, value = encode_record(record)
    assert key.hex() == key_hex
    assert (None if value is None else value.hex()) == value_hex
    assert decode_record(bytes.fromhex(key_hex), None if value_hex is None else bytes.fromhex(value_hex)) == record


# Kafka's coordinator keys and their partitions of 50 (the driver's "partition" lines)
PARTITIONS = [
    ("my-group", 0, 39),
    ("my-group", 1, 38),
    ("my-group", 2, 37),
    ("g", 0, 16),
    ("g", 2, 14),
    ("share-group-1", 1, 33),
    ("\u00e9t\u00e9", 2, 35),
]


@pytest.mark.parametrize(("group", "partition", "expected"), PARTITIONS)
def test_the_coordinator_key_and_its_partition_are_kafkas(group, partition, expected):
    key = coordinator_key(group, TOPIC_ID, partition)
    assert key == f"{group}:EjRWeJq8Te-BI0VniavN7w:{partition}"
    assert share_state_partition_for(key, 50) == expected
    assert parse_coordinator_key(key) == (group, TOPIC_ID, partition)


@pytest.mark.parametrize(
    "key",
    [
        "",
        "group",
        "group:EjRWeJq8Te-BI0VniavN7w",
        ":EjRWeJq8Te-BI0VniavN7w:0",
        "g:not-an-id:0",
        "g:EjRWeJq8Te-BI0VniavN7w:-1",
        "g:EjRWeJq8Te-BI0VniavN7w:x",
    ],
)
def test_a_malformed_coordinator_key_is_refused_by_name(key):
    with pytest.raises(InvalidCoordinatorKey, match="share coordinator key"):
        parse_coordinator_key(key)


def test_a_group_id_with_colons_keeps_them():
    assert parse_coordinator_key(f"a:b:{'EjRWeJq8Te-BI0VniavN7w'}:3") == ("a:b", TOPIC_ID, 3)


@pytest.mark.parametrize(
    ("key_hex", "value_hex", "fault"),
    [
        ("0002" + KEY_HEX, None, "not a share state record type"),
        ("00", None, "not a share state record type"),
        ("0000" + KEY_HEX[:-2], None, "malformed ShareSnapshotKey"),
        ("0000" + KEY_HEX, "0001", "version 1"),
        ("0001" + KEY_HEX, "000000000001ffffffff00", "malformed ShareUpdateValue"),
        ("0001" + KEY_HEX, "000000000001ffffffff000000000000000c0100ff", "trailing bytes"),
    ],
)
def test_malformed_records_raise_naming_the_fault(key_hex, value_hex, fault):
    with pytest.raises(ShareStateRecordError, match=fault):
        decode_record(bytes.fromhex(key_hex), None if value_hex is None else bytes.fromhex(value_hex))


def test_a_value_under_the_other_records_key_is_refused():
    with pytest.raises(ShareStateRecordError, match="ShareUpdateValue under a SHARE_SNAPSHOT key"):
        encode_record(ShareStateRecord(SNAPSHOT_KEY, ShareUpdateValue(0, 0, 0)))
