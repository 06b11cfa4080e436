"""decode_acquired: the records of a ShareFetch partition answer that the member acquired, with their delivery counts;
acquired offsets without a record are gaps; records of other members are skipped; a bad record is an error in its
place; corrupt data names the acquired offsets. Pure code over record batches built here."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spark_kafkalog.client.serialization import SerializationError
from spark_kafkalog.client.share.fetched import (
    AcquiredRange,
    CorruptAcquiredData,
    RecordError,
    acquired_ranges,
    decode_acquired,
)
from spark_kafkalog.client.types import ConsumerRecord, TopicPartition
from spark_kafkalog.records import build_control_batch
from spark_kafkalog.records.batch_builder import build_batch

TP = TopicPartition("t", 2)


def raw(data, topic, headers):
    return data


def batch(base, values, ts=1000):
    return bytes(build_batch([(ts + i, None, v, []) for i, v in enumerate(values)], base_offset=base))


def decode(records, ranges, **kw):
    return decode_acquired(records, TP, [AcquiredRange(*r) for r in ranges], raw, raw, **kw)


def offsets(out):
    return [(r.offset, r.delivery_count) for r in out]


def test_acquired_records_carry_their_delivery_count():
    data = batch(0, [b"a", b"b", b"c"]) + batch(3, [b"d", b"e"])
    out, gaps = decode(data, [(0, 1, 1), (2, 4, 3)])
    assert offsets(out) == [(0, 1), (1, 1), (2, 3), (3, 3), (4, 3)]
    assert gaps == []
    first = out[0]
    assert isinstance(first, ConsumerRecord)
    assert (first.topic, first.partition, first.value, first.timestamp, first.timestamp_type) == ("t", 2, b"a", 1000, 0)


def test_records_not_acquired_by_this_member_are_skipped():
    data = batch(0, [b"a", b"b", b"c", b"d", b"e"])
    out, gaps = decode(data, [(1, 1, 1), (3, 4, 2)])
    assert offsets(out) == [(1, 1), (3, 2), (4, 2)]
    assert gaps == []


def test_acquired_offsets_without_records_are_gaps():
    # offsets 2-3: compacted away; 5: a transaction marker; 7-8: past the last batch returned
    data = batch(0, [b"a", b"b"]) + batch(4, [b"e"])
    marker = build_control_batch(
        "commit", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=0, base_offset=5
    )
    data += marker + batch(6, [b"g"])
    out, gaps = decode(data, [(0, 8, 1)])
    assert [r.offset for r in out] == [0, 1, 4, 6]
    assert gaps == [2, 3, 5, 7, 8]


def test_nothing_acquired_decodes_nothing():
    assert decode(batch(0, [b"a"]), []) == ([], [])
    assert decode(None, [(0, 1, 1)]) == ([], [0, 1])


def test_a_record_that_does_not_deserialize_is_an_error_in_its_place():
    def value(data, topic, headers):
        if data == b"bad":
            raise SerializationError("not a number", topic=topic, field="value")
        return data.decode()

    out, gaps = decode_acquired(batch(0, [b"1", b"bad", b"3"]), TP, [AcquiredRange(0, 2, 2)], raw, value)
    assert [type(r).__name__ for r in out] == ["ConsumerRecord", "RecordError", "ConsumerRecord"]
    error = out[1]
    assert isinstance(error, RecordError) and error.offset == 1
    assert error.error.offset == 1 and "released" in str(error.error)
    assert gaps == []


def test_corrupt_data_names_the_acquired_offsets():
    data = bytearray(batch(0, [b"a", b"b"]))
    data[-1] ^= 0xFF  # breaks the CRC
    with pytest.raises(CorruptAcquiredData) as caught:
        decode(bytes(data), [(0, 1, 1)])
    assert caught.value.offsets == [0, 1]
    assert "t-2" in str(caught.value)


def test_acquired_ranges_are_sorted_and_empty_ones_dropped():
    wire = [
        SimpleNamespace(first_offset=5, last_offset=6, delivery_count=2),
        SimpleNamespace(first_offset=0, last_offset=1, delivery_count=1),
        SimpleNamespace(first_offset=9, last_offset=8, delivery_count=1),
    ]
    assert acquired_ranges(wire) == [AcquiredRange(0, 1, 1), AcquiredRange(5, 6, 2)]
