"""Columnar batch encoding (records.columnar): byte for byte what RecordBatchBuilder writes row by row, the C
kernel equal to the pure-Python reference, Kafka's murmur2 partitions, size-bounded batch splitting."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafkalog.records import Compression, RecordBatch, RecordBatchBuilder, columnar, default_partition
from spark_kafkalog.records.batch import validate_batch
from spark_kafkalog.records.columnar import (
    BinaryColumn,
    build_batch,
    encode_batch,
    encode_batches,
    encode_headers,
    encode_records_reference,
    group_rows,
    key_partitions,
    key_partitions_reference,
    record_sizes,
    split_rows,
)

needs_kernels = pytest.mark.skipif(
    not columnar.HAVE_KERNELS, reason="spark_kafkalog._kernels was not built (no C compiler at install)"
)

blobs = st.one_of(st.none(), st.binary(max_size=300))
headers = st.one_of(
    st.none(),
    st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=20))), max_size=3),
)
rows = st.lists(st.tuples(blobs, blobs, headers, st.integers(min_value=0, max_value=1 << 45)), min_size=1, max_size=40)


def built_row_by_row(records, compression=Compression.NONE) -> bytes:
    builder = RecordBatchBuilder(compression)
    for key, value, hdrs, ts in records:
        builder.append(ts, key, value, hdrs or ())
    return builder.build()


@settings(max_examples=150, deadline=None)
@given(rows, st.booleans())
def test_encode_batches_writes_the_bytes_of_the_row_by_row_builder(records, arrow_input):
    keys, values, hdrs, ts = (list(c) for c in zip(*records))
    if arrow_input:
        keys, values = pa.array(keys, type=pa.binary()), pa.array(values, type=pa.large_binary())
    [(batch, count)] = encode_batches(values, keys, timestamps=ts, headers=hdrs)
    assert count == len(records)
    assert bytes(batch) == built_row_by_row(records)


@pytest.mark.parametrize("codec", list(Compression))
def test_every_codec_decodes_to_the_same_records(codec):
    records = [(b"k%d" % i, b"v" * (i % 50) if i % 7 else None, [("h", b"%d" % i)], 1_000 + i) for i in range(500)]
    [(batch, _)] = encode_batches(
        [r[1] for r in records],
        [r[0] for r in records],
        timestamps=[r[3] for r in records],
        headers=[r[2] for r in records],
        compression=codec,
    )
    decoded = list(RecordBatch(bytes(batch)).records())
    assert [(r.key, r.value, list(r.headers), r.timestamp) for r in decoded] == [(k, v, h, t) for k, v, h, t in records]
    if codec == Compression.NONE:
        assert bytes(batch) == built_row_by_row(records)


@needs_kernels
@settings(max_examples=150, deadline=None)
@given(rows, st.randoms(use_true_random=False))
def test_kernel_encodes_records_exactly_as_the_reference(records, rnd):
    keys, values, hdrs, ts = (list(c) for c in zip(*records))
    key_col, value_col, header_col = BinaryColumn.of(keys), BinaryColumn.of(values), encode_headers(hdrs)
    order = list(range(len(records)))
    rnd.shuffle(order)
    picked = np.array(order[: rnd.randint(1, len(order))], dtype=np.int64)
    deltas = np.array(ts, dtype=np.int64)[picked] - ts[int(picked[0])]
    headroom = rnd.choice((0, 61))
    for k, h, d in ((key_col, header_col, deltas), (None, None, None)):
        encoded = columnar.encode_records(picked, d, value_col, k, h, headroom)
        assert encoded == encode_records_reference(picked, d, value_col, k, h, headroom)
        assert encoded[:headroom] == bytes(headroom)


@settings(max_examples=60, deadline=None)
@given(rows)
def test_an_uncompressed_batch_built_in_place_is_the_batch_built_around_its_records(records):
    keys, values, hdrs, ts = (list(c) for c in zip(*records))
    key_col, value_col, header_col = BinaryColumn.of(keys), BinaryColumn.of(values), encode_headers(hdrs)
    picked = np.arange(len(records), dtype=np.int64)
    stamps = np.array(ts, dtype=np.int64)
    deltas = stamps - stamps[0]
    records_section = columnar.encode_records(picked, deltas if deltas.any() else None, value_col, key_col, header_col)
    expected = build_batch(records_section, len(records), int(stamps[0]), int(stamps.max()))
    in_place = encode_batch(picked, stamps, value_col, key_col, header_col)
    assert in_place == expected
    validate_batch(in_place)  # size, magic and CRC-32C, as the broker checks them
    unsigned = encode_batch(picked, stamps, value_col, key_col, header_col, crc=False)
    assert unsigned[:17] == expected[:17] and unsigned[17:21] == bytes(4) and unsigned[21:] == expected[21:]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=40)), max_size=60), st.integers(1, 1000))
def test_key_partitions_are_kafkas_default_partitions(keys, num_partitions):
    column = BinaryColumn.of(keys)
    expected = [default_partition(k, num_partitions) if k is not None else None for k in keys]
    for got in (key_partitions(column, num_partitions), key_partitions_reference(column, num_partitions)):
        assert [int(p) for p, k in zip(got, keys) if k is not None] == [
            e for e, k in zip(expected, keys) if k is not None
        ]


def test_key_partitions_match_javas_murmur2_on_known_keys():
    # Java: Utils.toPositive(Utils.murmur2("key-1".getBytes())) % 3 etc. (via records.murmur2, checked there)
    keys = [b"", b"a", b"key-1", b"\xff\xfe\xfd", b"0123456789abcdef"]
    got = key_partitions(BinaryColumn.of(keys), 7).tolist()
    assert got == [default_partition(k, 7) for k in keys]


def test_sliced_and_string_arrays_are_read_from_their_offset():
    array = pa.array(["zero", None, "two", "three"]).slice(1, 3)
    column = BinaryColumn.of(array)
    assert [column.value(i) for i in range(3)] == [None, b"two", b"three"]
    assert column.lengths().tolist() == [-1, 3, 5]


def test_group_rows_keeps_row_order_inside_each_partition():
    parts = np.array([2, 0, 2, 1, 0, 2], dtype=np.int32)
    assert [(p, r.tolist()) for p, r in group_rows(parts, 4)] == [(0, [1, 4]), (1, [3]), (2, [0, 2, 5])]


def test_split_rows_bounds_each_batch_and_keeps_a_large_record_alone():
    values = BinaryColumn.of([b"x" * 100] * 10 + [b"y" * 5000] + [b"z"] * 3)
    sizes = record_sizes(values, None, None)
    runs = split_rows(np.arange(14, dtype=np.int64), sizes, 61 + 3 * 136)
    assert np.concatenate(runs).tolist() == list(range(14))
    assert [len(r) for r in runs] == [3, 3, 3, 1, 1, 3]
    for run in runs:
        assert len(run) == 1 or sizes[run].sum() <= 3 * 136


def test_null_header_key_names_its_row():
    with pytest.raises(ValueError, match="row 1"):
        encode_headers([[("a", b"1")], [{"key": None, "value": b"x"}]])
