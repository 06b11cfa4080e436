"""Cross-implementation: kafka-python 3.0.12 reads what we build, and we read what it builds."""

from __future__ import annotations

import random

import pytest

from spark_kafkalog.records import (
    Compression,
    LegacyMessageSetBuilder,
    RecordBatchBuilder,
    build_control_batch,
    iter_batch_records,
    iter_legacy_records,
    iter_records,
    validate_batch,
)

from .oracle import DefaultRecordBatch, kp_build_default, kp_build_legacy, kp_read_all

T0 = 1_700_000_000_000
V2_CODECS = list(Compression)
LEGACY_CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]


def v2_records(n=50, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        key = None if i % 4 == 0 else b"key-%d" % i
        value = None if i % 9 == 1 else rng.randbytes(8) + b"payload %d " % i * rng.randrange(0, 200)
        headers = [("trace", b"abc"), ("null", None), ("empty", b"")] if i % 2 else []
        out.append((T0 + rng.randrange(0, 1000), key, value, headers))
    return out


def legacy_records(n=30, seed=0):
    rng = random.Random(seed)
    return [
        (T0 + i, None if i % 4 == 0 else b"k%d" % i, None if i % 5 == 2 else b"msg %d " % i * rng.randrange(0, 60))
        for i in range(n)
    ]


@pytest.mark.parametrize("codec", V2_CODECS)
def test_kafka_python_reads_our_batches_and_accepts_their_crc(codec):
    records = v2_records()
    builder = RecordBatchBuilder(codec, base_offset=1000, producer_id=5, producer_epoch=1, base_sequence=0)
    for ts, key, value, headers in records:
        builder.append(ts, key, value, headers)
    batch = builder.build()
    second = RecordBatchBuilder(codec, base_offset=1000 + len(records))
    second.append(T0, b"last", b"one")
    assert kp_read_all(batch + second.build()) == [
        (1000 + i, ts, k, v, list(h)) for i, (ts, k, v, h) in enumerate(records)
    ] + [(1000 + len(records), T0, b"last", b"one", [])]
    kp_batch = DefaultRecordBatch(batch)
    assert (kp_batch.producer_id, kp_batch.producer_epoch, kp_batch.base_sequence) == (5, 1, 0)
    assert kp_batch.compression_type == codec


@pytest.mark.parametrize("codec", V2_CODECS)
def test_we_read_kafka_python_batches_and_their_crc_passes_our_validation(codec):
    records = v2_records(seed=3)
    batch = kp_build_default(records, codec, base_offset=77, producer_id=9, producer_epoch=2, base_sequence=10)
    header = validate_batch(batch)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (9, 2, 10)
    assert header.compression == codec
    assert [tuple(r) for r in iter_batch_records(batch)] == [
        (77 + i, ts, k, v, list(h)) for i, (ts, k, v, h) in enumerate(records)
    ]


def test_kafka_python_builds_the_same_record_bytes_as_we_do():
    records = v2_records(seed=4)
    ours = RecordBatchBuilder()
    for ts, key, value, headers in records:
        ours.append(ts, key, value, headers)
    theirs = kp_build_default(records)
    # only the partition leader epoch differs: kafka-python writes 0, Java and we write -1
    assert ours.build()[16:] == theirs[16:]


def test_kafka_python_skips_our_control_batch_and_sees_it_as_control():
    marker = build_control_batch("commit", producer_id=3, producer_epoch=0, coordinator_epoch=4, timestamp_ms=T0)
    batch = DefaultRecordBatch(marker)
    assert batch.is_control_batch and batch.is_transactional and batch.validate_crc()
    (record,) = list(batch)
    assert record.commit and not record.abort


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_kafka_python_reads_our_legacy_message_sets(magic, codec):
    records = legacy_records()
    builder = LegacyMessageSetBuilder(magic, codec, base_offset=500)
    for ts, key, value in records:
        builder.append(ts, key, value)
    read = kp_read_all(builder.build())
    expected_ts = [ts if magic else None for ts, _, _ in records]
    assert [(o, t, k, v) for o, t, k, v, _ in read] == [
        (500 + i, expected_ts[i], k, v) for i, (_, k, v) in enumerate(records)
    ]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_we_read_kafka_python_legacy_message_sets(magic, codec):
    records = legacy_records(seed=5)
    message_set = kp_build_legacy(records, magic, codec)
    assert [tuple(r) for r in iter_legacy_records(message_set)] == [
        (i, ts if magic else -1, k, v, []) for i, (ts, k, v) in enumerate(records)
    ]


def test_a_mixed_buffer_reads_the_same_in_both_implementations():
    parts = [
        kp_build_legacy(legacy_records(5), 0, Compression.GZIP),
        kp_build_legacy(legacy_records(5, seed=1), 1, Compression.SNAPPY),
        kp_build_default([(T0, b"k", b"v", [])], Compression.LZ4, base_offset=5),
    ]
    ours = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in iter_records(b"".join(parts))]
    theirs = [(o, -1 if t is None else t, k, v, h) for o, t, k, v, h in kp_read_all(b"".join(parts))]
    assert ours == theirs
