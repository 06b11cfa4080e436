"""Hostile input: random bytes, truncations and mutations of valid entries raise only DecodeError.

Every reader runs under an address-space limit (current size + 1 GiB), so an allocation driven by a
claimed size, rather than by the bytes present, fails the test instead of passing unnoticed.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafkalog.protocol.exceptions import DecodeError
from spark_kafkalog.records import (
    Compression,
    LegacyMessageSetBuilder,
    RecordBatch,
    RecordBatchBuilder,
    UnsupportedCompressionError,
    batch_to_legacy,
    build_control_batch,
    compress,
    decode_legacy_entry,
    decompress,
    iter_batch_records,
    iter_batches,
    iter_legacy_records,
    iter_records,
    legacy_to_batches,
    parse_batch_header,
    validate_batch,
)

T0 = 1_700_000_000_000
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _v2(codec):
    builder = RecordBatchBuilder(codec, base_offset=3)
    for i in range(6):
        builder.append(
            T0 + i * 300,
            None if i == 2 else b"k%d" % i,
            b"value-%d " % i * (i * 40),
            [(f"h{i}", None if i % 2 else b"x")] * (i % 3),
        )
    return builder.build()


def _legacy(magic, codec):
    builder = LegacyMessageSetBuilder(magic, codec, base_offset=9)
    for i in range(5):
        builder.append(T0 + i, b"k%d" % i, b"value-%d " % i * (i * 30))
    return builder.build()


CORPUS = (
    [_v2(codec) for codec in Compression]
    + [_legacy(magic, codec) for magic in (0, 1) for codec in range(4)]
    + [build_control_batch("commit", producer_id=1, producer_epoch=0, coordinator_epoch=2, timestamp_ms=T0)]
)


pytestmark = pytest.mark.usefixtures("address_space_limit")


def _drain(result):
    if result is not None and not isinstance(result, (bytes, list, tuple)) and hasattr(result, "__iter__"):
        for _ in result:
            pass


def readers_of(buf: bytes):
    """Every entry point that decodes untrusted bytes."""
    yield lambda: parse_batch_header(buf)
    yield lambda: validate_batch(buf)
    yield lambda: iter_batch_records(buf)
    yield lambda: RecordBatch(buf).records()
    yield lambda: iter_legacy_records(buf)
    yield lambda: decode_legacy_entry(buf)
    yield lambda: iter_records(buf)
    yield lambda: iter_records(buf, check_crc=False, include_control=True)
    yield lambda: [(v.base_offset, v.records(), v.validate()) for v in iter_batches(buf)]
    yield lambda: legacy_to_batches(buf)
    yield lambda: batch_to_legacy(buf, 1)
    yield lambda: batch_to_legacy(buf, 0)
    for codec in range(8):
        for magic in (0, 2):
            yield lambda codec=codec, magic=magic: decompress(codec, buf, magic=magic)


def assert_only_decode_errors(buf: bytes) -> None:
    for read in readers_of(buf):
        try:
            _drain(read())
        except (DecodeError, UnsupportedCompressionError):
            pass


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_raise_only_decode_errors(buf):
    assert_only_decode_errors(buf)


@FUZZ
@given(st.sampled_from(CORPUS), st.data())
def test_truncated_entries_raise_only_decode_errors(entry, data):
    cut = data.draw(st.integers(0, len(entry)))
    assert_only_decode_errors(entry[:cut])


@FUZZ
@given(st.sampled_from(CORPUS), st.data())
def test_mutated_entries_raise_only_decode_errors(entry, data):
    buf = bytearray(entry)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    assert_only_decode_errors(bytes(buf))


@FUZZ
@given(st.sampled_from([c for c in Compression if c]), st.binary(max_size=2000), st.data())
def test_mutated_compressed_payloads_raise_only_decode_errors(codec, payload, data):
    magic = 2 if codec is Compression.ZSTD else data.draw(st.sampled_from([0, 1, 2]))
    packed = bytearray(compress(codec, payload, magic=magic))
    for _ in range(data.draw(st.integers(0, 3))):
        pos = data.draw(st.integers(0, len(packed) - 1))
        packed[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(packed)))
    try:
        out = decompress(codec, bytes(packed[:cut]) if cut < len(packed) else bytes(packed), magic=magic)
    except DecodeError:
        return
    assert isinstance(out, bytes)


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(-(2**40), 2**40),
            st.one_of(st.none(), st.binary(max_size=300)),
            st.one_of(st.none(), st.binary(max_size=300)),
            st.lists(st.tuples(st.text(max_size=20), st.one_of(st.none(), st.binary(max_size=50))), max_size=3),
        ),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(list(Compression)),
)
def test_any_records_round_trip_through_a_batch(records, codec):
    builder = RecordBatchBuilder(codec)
    for ts, key, value, headers in records:
        builder.append(T0 + ts, key, value, headers)
    batch = builder.build()
    validate_batch(batch)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in iter_batch_records(batch)] == [
        (i, T0 + ts, k, v, list(h)) for i, (ts, k, v, h) in enumerate(records)
    ]
