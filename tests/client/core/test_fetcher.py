"""Splitting fetched record data into FetchedBatches: ranges, partial batches, control and aborted
batches, legacy formats, CRC checks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spark_kafkalog.client.core.fetcher import fetch_request, fetch_request_for, partition_data, split_fetched
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, decode_request, encode_request
from spark_kafkalog.records import Compression, LegacyMessageSetBuilder, RecordBatchBuilder, build_control_batch

TP = TopicPartition("t", 3)


def batch(base: int, count: int, *, codec=Compression.NONE, pid=-1, txn=False, ts=1000) -> bytes:
    b = RecordBatchBuilder(
        codec, base_offset=base, producer_id=pid, producer_epoch=0 if pid >= 0 else -1, is_transactional=txn
    )
    for i in range(count):
        b.append(ts + i, None, b"v%d" % (base + i))
    return b.build()


def walk(records, position, end=None, **kw):
    kw.setdefault("log_start_offset", 0)
    kw.setdefault("high_watermark", 100)
    kw.setdefault("last_stable_offset", 100)
    return split_fetched(records, TP, position, end, **kw)


def offsets(result):
    return [(f.base_offset, f.last_offset) for f in result.batches]


def test_batches_overlapping_the_position_are_yielded_and_the_position_advances():
    data = batch(0, 5) + batch(5, 5, codec=Compression.GZIP) + batch(10, 5)
    result = walk(data, 7)
    assert offsets(result) == [(5, 9), (10, 14)]
    assert result.position == 15
    assert not result.reached_end
    fetched = result.batches[0]
    assert (fetched.topic_partition, fetched.high_watermark, fetched.log_start_offset) == (TP, 100, 0)
    assert [r.offset for r in fetched.batch.records()] == [5, 6, 7, 8, 9]


def test_the_walk_stops_at_the_first_batch_starting_at_or_after_end():
    data = batch(0, 5) + batch(5, 5) + batch(10, 5)
    result = walk(data, 0, end=10)
    assert offsets(result) == [(0, 4), (5, 9)]
    assert result.reached_end
    assert result.position == 10


def test_a_partial_trailing_batch_ends_the_walk_normally():
    whole = batch(0, 5)
    cut = batch(5, 5)[:30]
    result = walk(whole + cut, 0)
    assert offsets(result) == [(0, 4)]
    assert result.position == 5
    assert result.partial_entry_size is None


def test_only_a_partial_batch_reports_the_size_needed():
    full = batch(0, 50)
    result = walk(full[:40], 0)
    assert result.batches == [] and result.position == 0
    assert result.partial_entry_size == len(full)


def test_control_batches_are_consumed_but_not_yielded():
    marker = build_control_batch(
        "commit", producer_id=9, producer_epoch=0, coordinator_epoch=0, timestamp_ms=5, base_offset=3
    )
    data = batch(0, 3, pid=9, txn=True) + marker + batch(4, 2)
    result = walk(data, 0)
    assert offsets(result) == [(0, 2), (4, 5)]
    assert result.position == 6


def test_read_committed_skips_aborted_transactions_and_keeps_committed_ones():
    aborted_data = batch(0, 2, pid=7, txn=True)
    abort_marker = build_control_batch(
        "abort", producer_id=7, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1, base_offset=2
    )
    committed = batch(3, 2, pid=8, txn=True)
    commit_marker = build_control_batch(
        "commit", producer_id=8, producer_epoch=0, coordinator_epoch=0, timestamp_ms=1, base_offset=5
    )
    later_same_producer = batch(6, 2, pid=7, txn=True)  # a new transaction of producer 7, not aborted
    data = aborted_data + abort_marker + committed + commit_marker + later_same_producer
    aborted = [SimpleNamespace(producer_id=7, first_offset=0)]
    committed_view = walk(data, 0, read_committed=True, aborted=aborted)
    assert offsets(committed_view) == [(3, 4), (6, 7)]
    assert committed_view.position == 8
    uncommitted_view = walk(data, 0, read_committed=False, aborted=aborted)
    assert offsets(uncommitted_view) == [(0, 1), (3, 4), (6, 7)]


def test_legacy_message_sets_are_converted_to_v2_batches():
    plain = LegacyMessageSetBuilder(1, base_offset=0)
    for i in range(3):
        plain.append(100 + i, b"k", b"p%d" % i)
    wrapped = LegacyMessageSetBuilder(1, Compression.GZIP, base_offset=3)
    for i in range(3):
        wrapped.append(200 + i, None, b"c%d" % i)
    result = walk(plain.build() + wrapped.build(), 1)
    assert result.position == 6
    assert all(f.batch.magic == 2 for f in result.batches)
    records = [r for f in result.batches for r in f.batch.records()]
    assert [(r.offset, r.value) for r in records if r.offset >= 1] == [
        (1, b"p1"),
        (2, b"p2"),
        (3, b"c0"),
        (4, b"c1"),
        (5, b"c2"),
    ]


def test_a_corrupt_batch_raises_naming_the_partition():
    data = bytearray(batch(0, 3))
    data[-1] ^= 0xFF
    with pytest.raises(KafkaClientError, match=r"corrupt record data fetched from t-3 near offset 0: CRC-32C mismatch"):
        walk(bytes(data), 0)
    assert offsets(walk(bytes(data), 0, check_crcs=False)) == [(0, 2)]


def test_empty_or_null_records_yield_nothing():
    assert walk(None, 4).batches == [] and walk(b"", 4).position == 4


def test_fetch_request_round_trips_at_every_version():
    body = fetch_request(
        TP,
        42,
        partition_max_bytes=1000,
        max_bytes=5000,
        max_wait_ms=100,
        min_bytes=1,
        isolation_level=1,
        leader_epoch=3,
    )
    for version in range(0, 13):
        decoded = decode_request(encode_request(1, version, 1, body))
        p = decoded.body.topics[0].partitions[0]
        assert (decoded.body.topics[0].topic, p.partition, p.fetch_offset, p.partition_max_bytes) == ("t", 3, 42, 1000)


def test_partition_data_finds_the_partition_or_raises():
    R = API_BY_KEY[1].Response
    P = R.FetchableTopicResponse.PartitionData
    response = R(
        responses=[
            R.FetchableTopicResponse(topic="t", partitions=[P(partition_index=3, error_code=0, high_watermark=9)])
        ]
    )
    assert partition_data(response, TP).high_watermark == 9
    with pytest.raises(KafkaClientError, match="does not include t-4"):
        partition_data(response, TopicPartition("t", 4))


def test_a_follower_fetch_for_several_partitions_groups_them_by_topic():
    body = fetch_request_for(
        {TopicPartition("a", 0): (5, 2, 0), TopicPartition("b", 1): (9, 2, 3), TopicPartition("a", 2): (7, 2, 0)},
        partition_max_bytes=100,
        max_bytes=1000,
        max_wait_ms=500,
        min_bytes=1,
        replica_id=3,
    )
    decoded = decode_request(encode_request(1, 12, 1, body)).body
    assert decoded.replica_id == 3
    assert {
        t.topic: [(p.partition, p.fetch_offset, p.log_start_offset) for p in t.partitions] for t in decoded.topics
    } == {
        "a": [(0, 5, 0), (2, 7, 0)],
        "b": [(1, 9, 3)],
    }
