"""The per-record producer's drain-time encoding and key placement: ``build_batch`` writes the bytes
``RecordBatchBuilder`` writes for the same appends, the compiled kernels (``encode_record_tuples``,
``key_partition``) equal their pure-Python references, and a producer's batches hold exactly what was
sent, in order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafkalog.records import (
    Compression,
    RecordBatchBuilder,
    batch_builder,
    decode_batch_records,
    default_partition,
)
from spark_kafkalog.records.batch_builder import build_batch, encode_record_tuples

try:
    from spark_kafkalog import _kernels
except ImportError:
    _kernels = None

needs_kernels = pytest.mark.skipif(
    _kernels is None or not hasattr(_kernels, "encode_record_tuples"),
    reason="spark_kafkalog._kernels not built with producer.c (no compiler at install time): "
    "the pure-Python path is what runs, and the other tests cover it",
)

fields = st.one_of(
    st.none(),
    st.binary(max_size=80),
    st.sampled_from([b"x" * 8191, b"y" * 8192, b"z" * 70000]),
)
headers = st.one_of(
    st.just(()),
    st.lists(st.tuples(st.text(max_size=6), st.one_of(st.none(), st.binary(max_size=10))), max_size=3),
)
timestamp_offsets = st.one_of(
    st.integers(-10, 10),
    st.integers(-(2**20), 2**20),
    st.sampled_from([8191, 8192, -8193, 2**40, -(2**40)]),
)


@st.composite
def record_lists(draw):
    base = draw(st.integers(0, 2**45))
    return [
        (base + draw(timestamp_offsets), draw(fields), draw(fields), draw(headers))
        for _ in range(draw(st.integers(1, 12)))
    ]


def builder_bytes(records, codec, **kwargs) -> bytes:
    builder = RecordBatchBuilder(codec, **kwargs)
    for timestamp, key, value, record_headers in records:
        builder.append(timestamp, key, value, record_headers)
    return builder.build()


@settings(max_examples=150, deadline=None)
@given(records=record_lists(), codec=st.sampled_from(list(Compression)))
def test_build_batch_writes_the_bytes_the_record_builder_writes(records, codec):
    stamped = {"producer_id": 7, "producer_epoch": 2, "base_sequence": 40}
    assert build_batch(records, codec, **stamped) == builder_bytes(records, codec, **stamped)


@settings(max_examples=150, deadline=None)
@given(records=record_lists())
def test_the_python_encoder_matches_the_record_builder(records):
    section, max_timestamp = batch_builder._encode_record_tuples_py(records, records[0][0])
    assert build_batch(records)[61:] == section == builder_bytes(records, Compression.NONE)[61:]
    assert max_timestamp == max(r[0] for r in records)


@needs_kernels
@settings(max_examples=300, deadline=None)
@given(records=record_lists())
def test_the_compiled_encoder_matches_the_python_encoder(records):
    base = records[0][0]
    compiled = _kernels.encode_record_tuples(records, base, 61)
    assert compiled == batch_builder._encode_record_tuples_py(records, base, 61)
    assert compiled[0][:61] == bytes(61) and compiled[1] == max(r[0] for r in records)


@needs_kernels
def test_the_compiled_encoder_leaves_unusual_records_to_the_python_path():
    odd = [
        [(1, bytearray(b"k"), b"v", ())],
        [(1, b"k", memoryview(b"v"), ())],
        [(2**63, b"k", b"v", ())],
        [(1, b"k", b"v", [("h", bytearray(b"x"))])],
        [(1, b"k", b"v", [["h", b"x"]])],
        [(1, b"k", b"v")],
    ]
    for records in odd:
        assert _kernels.encode_record_tuples(records, 1) is None
    assert _kernels.encode_record_tuples((), 1) is None  # a tuple, not a list
    for records in odd[:4]:
        assert encode_record_tuples(records, 1) == batch_builder._encode_record_tuples_py(records, 1)


@needs_kernels
@settings(max_examples=300, deadline=None)
@given(key=st.binary(max_size=40), partitions=st.integers(1, 5000))
def test_the_compiled_key_partition_is_kafkas_murmur2_partition(key, partitions):
    assert _kernels.key_partition(key, partitions) == default_partition(key, partitions)
    assert _kernels.key_partition(bytearray(key), partitions) == default_partition(key, partitions)


@needs_kernels
def test_the_compiled_key_partition_rejects_what_the_reference_rejects():
    with pytest.raises(ValueError):
        _kernels.key_partition(b"k", 0)
    with pytest.raises(TypeError):
        _kernels.key_partition("text", 3)


def test_a_batch_holds_the_records_in_send_order_with_their_timestamps():
    records = [(1000 + (i * 7) % 5, b"k%d" % i if i % 3 else None, b"v" * i, ()) for i in range(300)]
    decoded = decode_batch_records(build_batch(records, Compression.LZ4))
    assert [(r.offset, r.timestamp, r.key, r.value) for r in decoded] == [
        (i, ts, k, v) for i, (ts, k, v, _) in enumerate(records)
    ]
