"""The compiled record walk (``_kernels.walk_records``) against its numpy reference, field for field."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafkalog.datasource import arrow_decode
from spark_kafkalog.datasource.arrow_decode import WALK_FIELDS, decode_batches, walk_records_numpy
from spark_kafkalog.records import BATCH_HEADER_SIZE, Compression, CorruptRecordError, RecordBatchBuilder

pytestmark = pytest.mark.skipif(
    arrow_decode._kernels is None, reason="spark_kafkalog._kernels is not built (no C compiler at install)"
)


def sections_of(batches: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Uncompressed batches back to back: (data, start of each record section, records_count of each)."""
    data = b"".join(batches)
    starts, counts, at = [], [], 0
    for raw in batches:
        starts.append(at + BATCH_HEADER_SIZE)
        counts.append(int.from_bytes(raw[57:61], "big"))
        at += len(raw)
    return data, np.array(starts, np.int64), np.array(counts, np.int64)


def outcome(walk, data, starts, counts):
    """The fields, or the kind of failure (a truncated field and any other corruption)."""
    buf = np.frombuffer(data, np.uint8)
    try:
        return walk(data, buf, starts, counts)
    except IndexError:
        return "truncated"
    except CorruptRecordError:
        return "corrupt"


records = st.lists(
    st.tuples(
        st.one_of(st.none(), st.binary(max_size=200)),
        st.one_of(st.none(), st.binary(max_size=9000)),
        st.lists(st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=4))), max_size=2),
        st.integers(min_value=-(2**62), max_value=2**62),
        st.integers(min_value=1, max_value=70_000),
    ),
    min_size=1,
    max_size=40,
)


def build(groups) -> list[bytes]:
    batches = []
    for group in groups:
        builder = RecordBatchBuilder(Compression.NONE, base_offset=1000)
        delta = -1
        for key, value, headers, ts, step in group:
            delta += step
            builder.append(ts, key, value, headers, offset_delta=delta)
        batches.append(builder.build())
    return batches


@settings(max_examples=150, deadline=None)
@given(st.lists(records, min_size=1, max_size=6))
def test_the_compiled_walk_returns_the_numpy_walks_fields(groups):
    data, starts, counts = sections_of(build(groups))
    want = walk_records_numpy(data, np.frombuffer(data, np.uint8), starts, counts)
    got = arrow_decode._walk_compiled(data, np.frombuffer(data, np.uint8), starts, counts)
    assert want.shape == (WALK_FIELDS, int(counts.sum()))
    assert want.dtype == got.dtype == np.int64
    assert got.tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.lists(records, min_size=1, max_size=3), st.randoms(use_true_random=False), st.integers(1, 6))
def test_on_damaged_data_both_walks_agree_or_both_fail(groups, rng, flips):
    data, starts, counts = sections_of(build(groups))
    damaged = bytearray(data)
    for _ in range(flips):
        at = rng.randrange(len(damaged))
        damaged[at] = rng.choice((0x00, 0x7F, 0x80, 0xFF, rng.randrange(256)))
    if rng.random() < 0.3:
        damaged = damaged[: rng.randrange(int(starts[0]), len(damaged))]
    damaged = bytes(damaged)
    want = outcome(walk_records_numpy, damaged, starts, counts)
    got = outcome(arrow_decode._walk_compiled, damaged, starts, counts)
    if isinstance(want, np.ndarray) and isinstance(got, np.ndarray):
        assert got.tobytes() == want.tobytes()
    else:  # the reference may wrap around int64 where the kernel reports the overflow: both must fail
        assert not isinstance(want, np.ndarray) and not isinstance(got, np.ndarray)


def test_a_varint_longer_than_ten_bytes_is_corrupt_in_both():
    builder = RecordBatchBuilder()
    builder.append(1, b"k", b"v")
    raw = bytearray(builder.build())
    data = bytes(raw[:BATCH_HEADER_SIZE]) + b"\x80" * 11 + b"\x00" * 16
    starts, counts = np.array([BATCH_HEADER_SIZE], np.int64), np.array([1], np.int64)
    assert outcome(walk_records_numpy, data, starts, counts) == "corrupt"
    assert outcome(arrow_decode._walk_compiled, data, starts, counts) == "corrupt"


def test_the_walk_refuses_buffers_of_the_wrong_shape():
    data = b"\x00" * 100
    with pytest.raises(ValueError, match="11 x sum"):
        arrow_decode._kernels.walk_records(
            data, np.array([0], np.int64), np.array([2], np.int64), np.empty(3, np.int64)
        )
    with pytest.raises(ValueError, match="int64"):
        arrow_decode._kernels.walk_records(data, b"abc", np.array([2], np.int64), np.empty(22, np.int64))


@pytest.mark.parametrize("include_headers", [False, True])
@pytest.mark.parametrize("codec", list(Compression))
def test_decoding_compiled_gives_the_same_arrow_batch_as_numpy(codec, include_headers, monkeypatch):
    rng = random.Random(11)
    batches = []
    for b in range(5):
        builder = RecordBatchBuilder(codec, base_offset=b * 100)
        for i in range(rng.randint(1, 60)):
            key = None if rng.random() < 0.2 else rng.randbytes(rng.choice((0, 8, 300)))
            value = None if rng.random() < 0.1 else rng.randbytes(rng.choice((0, 100, 1024, 20_000)))
            builder.append(1_700_000_000_000 + i, key, value, [("h", b"x")] * rng.choice((0, 1)), offset_delta=i)
        batches.append(builder.build())
    compiled = decode_batches(batches, "t", 0, 7, 430, include_headers=include_headers)
    monkeypatch.setattr(arrow_decode, "walk_records", walk_records_numpy)
    monkeypatch.setattr(arrow_decode, "_kernels", None)
    reference = decode_batches(batches, "t", 0, 7, 430, include_headers=include_headers)
    assert compiled.equals(reference)
    assert compiled.num_rows > 0


segments = st.lists(
    st.tuples(st.binary(max_size=300), st.lists(st.tuples(st.integers(0, 400), st.integers(-1, 300)), max_size=20)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(segments)
def test_the_compiled_gather_copies_what_arrows_take_copies(sections):
    """One buffer per section (the compiled gather only) and the same sections joined (both)."""
    buffers, begins, lengths, counts, shifted = [], [], [], [], []
    at = 0
    for data, cuts in sections:
        cuts = [(min(b, len(data)), min(n, len(data) - min(b, len(data)))) for b, n in cuts]
        buffers.append(data)
        counts.append(len(cuts))
        begins += [b for b, _ in cuts]
        shifted += [at + b for b, _ in cuts]
        lengths += [n for _, n in cuts]
        at += len(data)
    begin, length = np.array(begins, np.int64), np.array(lengths, np.int64)
    joined = b"".join(buffers)
    want = arrow_decode._binary_array_take(joined, np.array(shifted, np.int64), length)
    separate = arrow_decode._binary_array(buffers, begin, length, counts=np.array(counts, np.int64))
    together = arrow_decode._binary_array(joined, np.array(shifted, np.int64), length)
    assert separate.equals(want) and together.equals(want)
    assert separate.to_pylist() == [None if n < 0 else joined[b : b + n] for b, n in zip(shifted, lengths)]


def test_the_compiled_gather_refuses_segments_outside_their_buffer():
    with pytest.raises(CorruptRecordError, match="outside its buffer"):
        arrow_decode._binary_array(
            [b"abc", b"de"], np.array([0, 1], np.int64), np.array([3, 2], np.int64), counts=np.array([1, 1], np.int64)
        )


@pytest.mark.parametrize("include_headers", [False, True])
def test_a_new_response_cuts_the_arrow_batch_only_where_decoding_across_it_would_cost(include_headers):
    from spark_kafkalog.datasource.arrow_decode import BatchDecoder

    def response(codec, base_offset):
        builder = RecordBatchBuilder(codec, base_offset=base_offset)
        builder.append(1, b"k", b"v")
        return memoryview(bytearray(builder.build()))

    plain = BatchDecoder("t", 0, include_headers=include_headers)
    plain.add(response(Compression.NONE, 0))
    assert not plain.wants_build_before(plain._sections[0][3])  # the same response: decoded in place
    assert plain.wants_build_before(response(Compression.NONE, 1))  # would pin the first response's buffer

    packed = BatchDecoder("t", 0, include_headers=include_headers)
    packed.add(response(Compression.LZ4, 0))
    # decompressed batches pin nothing: compiled, they are decoded with the next response's batches
    assert packed.wants_build_before(response(Compression.LZ4, 1)) == include_headers
    packed.add(response(Compression.LZ4, 1))
    assert packed.build().column("offset").to_pylist() == [0, 1]
