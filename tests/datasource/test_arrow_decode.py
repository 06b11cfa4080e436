"""Vectorised decoding of fetched v2 batches into Arrow, checked against a brute-force per-record decode."""

from __future__ import annotations

import random
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafkalog.datasource.arrow_decode import (
    MAX_TIMESTAMP_MS,
    MIN_TIMESTAMP_MS,
    BatchDecoder,
    RecordTimestampError,
    decode_batches,
    kafka_schema,
)
from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    RecordBatchBuilder,
    build_control_batch,
    decode_batch_records,
    parse_batch_header,
)


def expected_rows(batches, topic, partition, start=0, end=None, include_headers=False):
    """The brute-force oracle: ``records.decode_batch_records`` per batch, one dict per record."""
    rows = []
    for raw in batches:
        header = parse_batch_header(raw)
        if header.is_control:
            continue
        for r in decode_batch_records(raw):
            if r.offset < start or (end is not None and r.offset >= end):
                continue
            row = {
                "key": r.key,
                "value": r.value,
                "topic": topic,
                "partition": partition,
                "offset": r.offset,
                "timestamp_us": r.timestamp * 1000,
                "timestampType": header.timestamp_type,
            }
            if include_headers:
                row["headers"] = [{"key": k, "value": v} for k, v in r.headers] or None
            rows.append(row)
    return rows


def actual_rows(batch: pa.RecordBatch):
    """Rows of the Arrow batch, with timestamps as raw microseconds (``to_pylist`` would build datetimes)."""
    columns = {name: batch.column(name) for name in batch.schema.names}
    micros = columns.pop("timestamp").cast(pa.int64()).to_pylist()
    rows = pa.RecordBatch.from_pydict({k: v for k, v in columns.items()}).to_pylist()
    for row, us in zip(rows, micros):
        row["timestamp_us"] = us
    return rows


def random_batches(rng: random.Random, codec: Compression, *, batches=12, max_records=40, gaps=True, controls=True):
    out = []
    offset = rng.randrange(0, 1000)
    for _i in range(batches):
        builder = RecordBatchBuilder(codec, base_offset=offset, timestamp_type=rng.choice((0, 0, 1)))
        delta = -1
        base_ts = rng.randrange(-1, 2_000_000_000_000) if rng.random() < 0.9 else -1
        for _ in range(rng.randint(1, max_records)):
            delta += rng.choice((1, 1, 1, 2, 50)) if gaps else 1  # compaction leaves offset gaps
            key = None if rng.random() < 0.25 else rng.randbytes(rng.choice((0, 1, 5, 60, 200)))
            value = None if rng.random() < 0.15 else rng.randbytes(rng.choice((0, 3, 100, 1000, 9000)))
            headers = [
                (
                    rng.choice(("a", "trace-id", "ключ", "")),
                    None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 40)),
                )
                for _ in range(rng.choice((0, 0, 1, 2, 5)))
            ]
            ts = base_ts + rng.randrange(-100_000, 10_000_000) if base_ts >= 0 else -1
            builder.append(ts, key, value, headers, offset_delta=delta)
        out.append(builder.build())
        offset += delta + 1 + (rng.choice((0, 0, 7)) if gaps else 0)
        if controls and rng.random() < 0.3:
            out.append(
                build_control_batch(
                    "commit", producer_id=7, producer_epoch=0, coordinator_epoch=1, timestamp_ms=5, base_offset=offset
                )
            )
            offset += 1
    return out


def test_schema_is_exactly_what_pyspark_expects_from_a_python_data_source():
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    spark_schema = StructType(
        [
            StructField("key", BinaryType()),
            StructField("value", BinaryType()),
            StructField("topic", StringType()),
            StructField("partition", IntegerType()),
            StructField("offset", LongType()),
            StructField("timestamp", TimestampType()),
            StructField("timestampType", IntegerType()),
        ]
    )
    assert kafka_schema(False).equals(to_arrow_schema(spark_schema, timezone="UTC"), check_metadata=True)
    headers = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    with_headers = StructType(spark_schema.fields + [StructField("headers", ArrayType(headers))])
    assert kafka_schema(True).equals(to_arrow_schema(with_headers, timezone="UTC"), check_metadata=True)


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
@pytest.mark.parametrize("include_headers", [False, True], ids=["plain", "headers"])
def test_every_codec_decodes_like_the_brute_force_reader(codec, include_headers):
    rng = random.Random(f"{codec}-{include_headers}")
    batches = random_batches(rng, codec)
    got = decode_batches(batches, "orders", 7, include_headers=include_headers)
    assert got.schema.equals(kafka_schema(include_headers))
    assert actual_rows(got) == expected_rows(batches, "orders", 7, include_headers=include_headers)


def test_records_outside_the_range_are_filtered_even_inside_a_batch():
    rng = random.Random(5)
    batches = random_batches(rng, Compression.LZ4, batches=6)
    rows = expected_rows(batches, "t", 0)
    start, end = rows[7]["offset"], rows[-5]["offset"]
    got = decode_batches(batches, "t", 0, start, end, include_headers=True)
    assert actual_rows(got) == expected_rows(batches, "t", 0, start, end, include_headers=True)
    assert decode_batches(batches, "t", 0, rows[-1]["offset"] + 1) is None


def test_headers_are_null_not_empty_for_records_without_them():
    b = RecordBatchBuilder()
    b.append(1, b"k", b"v")
    b.append(2, b"k", b"v", [("h", b"1"), ("h", None)])
    batch = decode_batches([b.build()], "t", 0, include_headers=True)
    assert batch.column("headers").to_pylist() == [None, [{"key": "h", "value": b"1"}, {"key": "h", "value": None}]]
    assert batch.column("headers").null_count == 1


def test_log_append_time_batches_use_the_batch_max_timestamp_and_type_1():
    b = RecordBatchBuilder(timestamp_type=1)
    b.append(1_000, None, b"a")
    b.append(5_000, None, b"b")
    batch = decode_batches([b.build()], "t", 0)
    assert batch.column("timestamp").cast(pa.int64()).to_pylist() == [5_000_000, 5_000_000]
    assert batch.column("timestampType").to_pylist() == [1, 1]


def test_a_record_without_timestamp_becomes_one_millisecond_before_the_epoch_as_in_spark():
    b = RecordBatchBuilder()
    b.append(-1, None, b"old")
    batch = decode_batches([b.build()], "t", 0)
    assert batch.column("timestamp").cast(pa.int64()).to_pylist() == [-1000]


def test_long_varints_keys_and_offset_deltas():
    b = RecordBatchBuilder(Compression.ZSTD, base_offset=2**40)
    b.append(0, b"k" * 70_000, b"v" * 3, offset_delta=0)  # 3-byte key length
    b.append(2**41, None, b"x", offset_delta=2**30)  # 9-byte timestamp delta
    raw = b.build()
    assert actual_rows(decode_batches([raw], "t", 1)) == expected_rows([raw], "t", 1)


@pytest.mark.parametrize("batches, per_batch", [(200, 5), (1, 3000), (3, 700)])
def test_record_boundaries_are_found_the_same_for_many_small_or_few_large_batches(batches, per_batch):
    out = []
    for i in range(batches):
        b = RecordBatchBuilder(base_offset=i * per_batch)
        for j in range(per_batch):
            b.append(1_700_000_000_000 + j, b"key-%d" % j, b"v" * (j % 300))
        out.append(b.build())
    assert actual_rows(decode_batches(out, "t", 0)) == expected_rows(out, "t", 0)


def test_decoder_accumulates_and_resets_between_builds():
    rng = random.Random(9)
    batches = random_batches(rng, Compression.SNAPPY, controls=False)
    decoder = BatchDecoder("t", 2, include_headers=True)
    rows = []
    for i, raw in enumerate(batches):
        decoder.add(memoryview(raw))
        if i % 5 == 4:
            rows += actual_rows(decoder.build())
            assert decoder.records == 0 and decoder.size == 0
    rows += actual_rows(decoder.build())
    assert rows == expected_rows(batches, "t", 2, include_headers=True)
    assert decoder.build() is None


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.ZSTD], ids=lambda c: c.name)
def test_batches_viewed_in_one_fetch_buffer_decode_in_place_like_separate_ones(codec):
    from spark_kafkalog.records import iter_batches

    rng = random.Random(11)
    batches = random_batches(rng, codec, batches=30)
    response = bytearray(b"".join(batches))  # a fetch response's record data, as the client sees it
    decoder = BatchDecoder("t", 4, include_headers=True)
    views = [view.data for view in iter_batches(memoryview(response))]
    assert all(decoder.shares_buffer(v) for v in views)
    for v in views:
        decoder.add(v)
    assert actual_rows(decoder.build()) == expected_rows(batches, "t", 4, include_headers=True)
    decoder.add(views[0])
    assert decoder.shares_buffer(views[1]) == (codec == Compression.NONE)
    assert not decoder.shares_buffer(bytes(views[1]))


def test_pending_batches_keep_their_fetch_buffer_exported_until_build():
    """The client reuses a response buffer once nothing exports it (FramePool.lend): a decoder that
    still has to decode batches of it must hold a view, not just the bytearray."""
    from spark_kafkalog.records import iter_batches

    batches = random_batches(random.Random(5), Compression.NONE, batches=4)
    response = bytearray(b"".join(batches))
    decoder = BatchDecoder("t", 0)
    for view in iter_batches(memoryview(response)):
        decoder.add(view.data)
    del view
    with pytest.raises(BufferError):
        response.append(0)  # still exported: the pool would not hand it out
    assert decoder.build().num_rows == sum(1 for _ in expected_rows(batches, "t", 0, include_headers=False))
    response.append(0)  # nothing refers to it after the build


def test_a_records_count_larger_than_the_data_is_corrupt():
    b = RecordBatchBuilder()
    for i in range(3):
        b.append(i, None, b"v%d" % i)
    raw = bytearray(b.build())
    struct.pack_into(">i", raw, 57, 4)  # records_count 3 -> 4 (CRCs are the fetcher's business)
    with pytest.raises(CorruptRecordError):
        decode_batches([bytes(raw)], "t", 0)


def test_truncated_batches_and_bad_lengths_are_corrupt():
    b = RecordBatchBuilder()
    b.append(1, b"key", b"value")
    raw = b.build()
    with pytest.raises(CorruptRecordError, match="truncated"):
        decode_batches([raw[:-3]], "t", 0)
    broken = bytearray(raw)
    broken[61] = 0x05  # record length varint: -3
    with pytest.raises(CorruptRecordError):
        decode_batches([bytes(broken)], "t", 0)


def test_a_header_key_that_is_not_utf8_is_corrupt():
    b = RecordBatchBuilder()
    b.append(1, None, b"v", [("ab", b"x")])
    raw = bytearray(b.build())
    at = raw.index(b"ab")
    raw[at] = 0xFF
    with pytest.raises(CorruptRecordError, match="not valid UTF-8"):
        decode_batches([bytes(raw)], "t", 0, include_headers=True)


records_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.binary(max_size=300)),
        st.one_of(st.none(), st.binary(max_size=300)),
        st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5))), max_size=3),
        st.integers(min_value=-1, max_value=2**42),
        st.integers(min_value=1, max_value=3),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(records_strategy, min_size=1, max_size=5), st.sampled_from(list(Compression)), st.integers(0, 40))
def test_any_records_decode_like_the_brute_force_reader(groups, codec, start):
    batches, offset = [], 0
    for records in groups:
        b = RecordBatchBuilder(codec, base_offset=offset)
        delta = -1
        for key, value, headers, ts, step in records:
            delta += step
            b.append(ts, key, value, headers, offset_delta=delta)
        batches.append(b.build())
        offset += delta + 1
    got = decode_batches(batches, "t", 0, start, include_headers=True)
    want = expected_rows(batches, "t", 0, start, include_headers=True)
    assert (actual_rows(got) if got is not None else []) == want


# -- timestamps Spark cannot represent -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("timestamp_type", "bad_ms"),
    [(0, -3_139_000_000_000_000), (0, MAX_TIMESTAMP_MS + 1), (1, MIN_TIMESTAMP_MS - 1), (0, 2**62)],
)
def test_a_timestamp_outside_sparks_range_fails_naming_topic_partition_offset_and_value(timestamp_type, bad_ms):
    builder = RecordBatchBuilder(Compression.NONE, base_offset=40, timestamp_type=timestamp_type)
    builder.append(0, b"k", b"ok", [], offset_delta=0)
    builder.append(bad_ms if timestamp_type == 0 else 0, b"k", b"bad", [], offset_delta=1)
    data = builder.build()
    if timestamp_type == 1:  # LogAppendTime: every record carries the batch's max_timestamp (set by the broker)
        data = bytearray(data)
        struct.pack_into(">q", data, 35, bad_ms)
        data = bytes(data)
    with pytest.raises(RecordTimestampError) as excinfo:
        decode_batches([data], "clicks", 3)
    message = str(excinfo.value)
    offset = 40 if timestamp_type == 1 else 41  # LogAppendTime: the batch's first record already has it
    for fragment in (
        f"Record at offset {offset} of topic clicks partition 3 has timestamp {bad_ms} ",
        "outside Spark's timestamp range 0001-01-01T00:00:00Z",
        f'{{"clicks":{{"3":{offset + 1}}}}}',
    ):
        assert fragment in message


def test_the_edges_of_sparks_timestamp_range_and_no_timestamp_decode():
    builder = RecordBatchBuilder(Compression.NONE, base_offset=0, timestamp_type=0)
    for delta, ms in enumerate((MIN_TIMESTAMP_MS, -1, MAX_TIMESTAMP_MS)):
        builder.append(ms, None, b"v", [], offset_delta=delta)
    batch = decode_batches([builder.build()], "t", 0)
    micros = batch.column("timestamp").cast(pa.int64()).to_pylist()
    assert micros == [MIN_TIMESTAMP_MS * 1000, -1000, MAX_TIMESTAMP_MS * 1000]
