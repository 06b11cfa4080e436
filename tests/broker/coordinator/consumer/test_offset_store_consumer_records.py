"""Loading consumer group records: the store keeps the last record of each key, in the order of those last writes,
beside the classic records of the same partition, and hands them to the coordinator once."""

from __future__ import annotations

from broker.coordinator.consumer.record_codec import encode_record
from broker.coordinator.consumer.records import (
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    CoordinatorRecord,
)
from broker.coordinator.offset_store import OffsetStore, coordinator_records_batch
from broker.coordinator.offsets_topic import encode_offset_key, encode_offset_value
from spark_kafkalog.records.splitter import iter_batches


def member(group: str, member_id: str, client: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        ConsumerGroupMemberMetadataKey(group, member_id), ConsumerGroupMemberMetadataValue(client, "/h")
    )


def epoch(group: str, e: int) -> CoordinatorRecord:
    return CoordinatorRecord(ConsumerGroupMetadataKey(group), ConsumerGroupMetadataValue(e))


def test_last_write_per_key_in_order_of_last_writes():
    store = OffsetStore(1)
    log = [member("g", "a", "c1"), epoch("g", 1), member("g", "b", "c2"), epoch("g", 2), member("g", "a", "c3")]
    log.append(CoordinatorRecord.tombstone(ConsumerGroupMemberMetadataKey("g", "b")))
    for rec in log:
        store.apply_record(*encode_record(rec))
    store.apply_record(encode_offset_key("g", "t", 0), encode_offset_value(5, "", 1))  # a classic commit beside
    assert store.groups_of_partition(0) == {"g"}
    taken = store.take_consumer_records(0)
    assert taken == {
        "g": [
            epoch("g", 2),
            member("g", "a", "c3"),
            CoordinatorRecord.tombstone(ConsumerGroupMemberMetadataKey("g", "b")),
        ]
    }
    assert store.take_consumer_records(0) == {}
    assert store.offsets["g"][("t", 0)].offset == 5


def test_a_malformed_consumer_record_is_skipped():
    store = OffsetStore(1)
    store.apply_record(bytes.fromhex("00030003677270"), b"\x00\x00\x00")  # a value cut short
    store.apply_record(*encode_record(epoch("h", 4)))
    assert store.take_consumer_records(0) == {"h": [epoch("h", 4)]}


def test_drop_group_forgets_its_consumer_records():
    store = OffsetStore(1)
    store.apply_record(*encode_record(epoch("g", 1)))
    store.drop_group("g")
    assert store.take_consumer_records(0) == {}


def test_the_batch_holds_the_records_in_order():
    recs = [member("g", "a", "c"), epoch("g", 1), CoordinatorRecord.tombstone(ConsumerGroupMetadataKey("g"))]
    (batch,) = list(iter_batches(bytes(coordinator_records_batch(recs, 1000))))
    got = [(r.key, r.value) for r in batch.records()]
    assert [(bytes(k), None if v is None else bytes(v)) for k, v in got] == [encode_record(r) for r in recs]
