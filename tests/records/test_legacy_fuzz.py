"""Hostile v0/v1 message sets at the conversion level: only the documented exceptions escape.

Message sets come from ``legacy_strategies`` (lying fields under correct CRCs, then byte mutations).
The producer conversion (``legacy_to_producer_batch``) may raise only ``CorruptRecordError`` (with its
subclasses ``InvalidRecordError`` and ``InvalidTimestampError``) or ``UnsupportedCompressionError``, and
what it returns is one valid v2 batch; the lenient readers of fetched data raise only ``DecodeError``s
(``UnsupportedCompressionError`` too when down-converting). The default run is small; the ``slow``
variant runs 20 times as many examples.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from spark_kafkalog.protocol.exceptions import DecodeError
from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    UnsupportedCompressionError,
    batch_to_legacy,
    compress,
    decode_legacy_entry,
    iter_batch_records,
    iter_legacy_records,
    iter_records,
    legacy_to_batches,
    legacy_to_producer_batch,
    validate_batch,
)
from spark_kafkalog.records.legacy import encode_message

from .legacy_strategies import message_sets, valid_message_set

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ_SLOW = settings(max_examples=6000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


pytestmark = pytest.mark.usefixtures("address_space_limit")


def check_producer_conversion(buf: bytes) -> None:
    try:
        batch = legacy_to_producer_batch(buf)
    except (CorruptRecordError, UnsupportedCompressionError):
        return
    header = validate_batch(batch)
    records = list(iter_batch_records(batch))
    assert header.base_offset == 0 and header.timestamp_type == 0
    assert header.records_count == header.last_offset_delta + 1 == len(records)
    assert [r.offset for r in records] == list(range(len(records)))
    assert all(r.timestamp >= -1 for r in records)  # the v2 reader wraps timestamps to int64, as Java


def check_lenient_readers(buf: bytes) -> None:
    readers = [
        lambda: list(iter_legacy_records(buf)),
        lambda: decode_legacy_entry(buf),
        lambda: list(iter_records(buf)),
        lambda: batch_to_legacy(buf, 0),
        lambda: batch_to_legacy(buf, 1),
    ]
    for read in readers:
        try:
            read()
        except (DecodeError, UnsupportedCompressionError):
            pass
    try:
        batches = legacy_to_batches(buf)
    except DecodeError:
        return
    converted = [r for batch in batches for r in iter_batch_records(batch)]
    for batch in batches:
        validate_batch(batch)
    original = list(iter_legacy_records(buf))
    assert [(r.key, r.value) for r in converted] == [(r.key, r.value) for r in original]
    offsets = [r.offset for r in original]
    if all(a < b for a, b in zip(offsets, offsets[1:])):
        assert [r.offset for r in converted] == offsets


def check(buf: bytes) -> None:
    check_producer_conversion(buf)
    check_lenient_readers(buf)


def _plain(offsets, magic=1):
    return b"".join(encode_message(o, magic, 0, 1, None, b"v") for o in offsets)


# Found before: offsets 0 and 2^32 (issue 10), and a magic 0 wrapper whose absolute inner offsets span
# more than int64 when down-converted to relative ones.
CRASHERS = [
    _plain([0, 2**32]),
    encode_message(5, 0, 1, 0, None, compress(Compression.GZIP, _plain([-(2**63), 2**63 - 1], magic=0), magic=0)),
]


@FUZZ
@given(message_sets())
@example(CRASHERS[0])
@example(CRASHERS[1])
def test_hostile_message_sets_raise_only_documented_errors(buf):
    check(buf)


@pytest.mark.slow
@FUZZ_SLOW
@given(message_sets())
def test_hostile_message_sets_raise_only_documented_errors_long_run(buf):
    check(buf)


RECORDS = st.lists(
    st.tuples(
        st.integers(-1, 2**62),
        st.one_of(st.none(), st.binary(max_size=40)),
        st.one_of(st.none(), st.binary(max_size=200)),
    ),
    min_size=1,
    max_size=20,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RECORDS, st.sampled_from([0, 1]), st.sampled_from([c for c in Compression if c != Compression.ZSTD]))
def test_any_well_formed_producer_message_set_becomes_one_batch_with_its_records(records, magic, codec):
    batch = legacy_to_producer_batch(valid_message_set(records, magic, codec))
    header = validate_batch(batch)
    assert header.compression == codec
    assert [(r.offset, r.timestamp, r.key, r.value) for r in iter_batch_records(batch)] == [
        (i, ts if magic else -1, key, value) for i, (ts, key, value) in enumerate(records)
    ]


def test_the_strategy_reaches_the_valid_path_and_every_rule():
    """The fuzz is only as good as its inputs: most rules of the producer conversion must be hit."""
    outcomes: dict[str, int] = {}

    @settings(
        max_examples=300, derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(message_sets())
    def sample(buf):
        try:
            legacy_to_producer_batch(buf)
            name = "ok"
        except (CorruptRecordError, UnsupportedCompressionError) as e:
            name = type(e).__name__
        outcomes[name] = outcomes.get(name, 0) + 1

    sample()
    assert {
        "ok",
        "CorruptRecordError",
        "InvalidRecordError",
        "InvalidTimestampError",
        "UnsupportedCompressionError",
    } <= set(outcomes), outcomes
