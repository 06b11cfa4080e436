"""Splitting buffers of mixed v0/v1/v2 entries: views, partial trailing entries, bad sizes."""

from __future__ import annotations

import struct

import pytest

from spark_kafkalog.records import (
    Compression,
    CorruptRecordError,
    LegacyMessageSetBuilder,
    RecordBatchBuilder,
    build_control_batch,
    iter_batches,
    iter_records,
)

T0 = 1_700_000_000_000


def v2(base_offset, n, codec=Compression.NONE):
    builder = RecordBatchBuilder(codec, base_offset=base_offset)
    for i in range(n):
        builder.append(T0 + i, b"k%d" % i, b"v%d" % (base_offset + i), [("h", b"x")])
    return builder.build()


def legacy(magic, base_offset, n, codec=Compression.NONE):
    builder = LegacyMessageSetBuilder(magic, codec, base_offset=base_offset)
    for i in range(n):
        builder.append(T0 + i, b"k%d" % i, b"v%d" % (base_offset + i))
    return builder.build()


def mixed() -> bytes:
    return b"".join(
        [
            legacy(0, 0, 2),  # two plain v0 messages
            legacy(0, 2, 3, Compression.GZIP),  # one v0 wrapper
            legacy(1, 5, 3, Compression.LZ4),  # one v1 wrapper
            legacy(1, 8, 1),
            v2(9, 4, Compression.SNAPPY),
            v2(13, 2),
        ]
    )


def test_entries_of_every_magic_are_split_in_order_with_their_offsets():
    views = list(iter_batches(mixed()))
    assert [(v.magic, v.base_offset, v.last_offset) for v in views] == [
        (0, 0, 0),
        (0, 1, 1),
        (0, 2, 4),
        (1, 5, 7),
        (1, 8, 8),
        (2, 9, 12),
        (2, 13, 14),
    ]
    assert sum(v.size for v in views) == len(mixed())
    assert [v.position for v in views] == [0] + [sum(v.size for v in views[:i]) for i in range(1, len(views))]


def test_views_share_the_buffer_and_validate_each_entry():
    buf = bytearray(mixed())
    for view in iter_batches(buf):
        assert view.data.obj is buf
        view.validate()
        assert view.next_offset == view.last_offset + 1


def test_iter_records_decodes_every_record_of_every_magic_in_order():
    records = list(iter_records(mixed()))
    assert [r.offset for r in records] == list(range(15))
    assert [r.value for r in records] == [b"v%d" % o for o in range(15)]
    assert [r.timestamp for r in records[:5]] == [-1] * 5
    assert records[-1].headers == [("h", b"x")]


def test_every_cut_of_the_buffer_ends_iteration_normally_after_the_complete_entries():
    data = mixed()
    ends = []
    for view in iter_batches(data):
        ends.append(view.position + view.size)
    for cut in range(len(data) + 1):
        complete = [e for e in ends if e <= cut]
        assert [v.position + v.size for v in iter_batches(data[:cut])] == complete
        assert len(list(iter_records(data[:cut]))) >= 0


def test_control_batches_are_skipped_unless_asked_for():
    marker = build_control_batch(
        "commit", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp_ms=T0, base_offset=2
    )
    data = v2(0, 2) + marker + v2(3, 1)
    assert [r.offset for r in iter_records(data)] == [0, 1, 3]
    assert [r.offset for r in iter_records(data, include_control=True)] == [0, 1, 2, 3]
    assert [v.is_control for v in iter_batches(data)] == [False, True, False]


def test_iter_records_checks_v2_crcs_unless_told_not_to():
    data = bytearray(v2(0, 3))
    data[-1] ^= 0x01  # last byte of the last header value
    with pytest.raises(CorruptRecordError, match="CRC-32C"):
        list(iter_records(data))
    assert len(list(iter_records(data, check_crc=False))) == 3


@pytest.mark.parametrize("length", [-1, -(2**31), 0, 13])
def test_a_negative_or_tiny_entry_length_is_corrupt(length):
    data = bytearray(v2(0, 1))
    struct.pack_into(">i", data, 8, length)
    with pytest.raises(CorruptRecordError, match="length"):
        list(iter_batches(data))


def test_a_length_below_the_minimum_for_the_magic_is_corrupt():
    data = bytearray(v2(0, 1))
    struct.pack_into(">i", data, 8, 30)  # fine for v0/v1, too small for a v2 header
    with pytest.raises(CorruptRecordError, match="magic 2"):
        list(iter_batches(data))


def test_an_unknown_magic_is_corrupt():
    data = bytearray(v2(0, 1))
    data[16] = 3
    with pytest.raises(CorruptRecordError, match="unknown magic 3"):
        list(iter_batches(data))


def test_an_entry_over_the_size_limit_is_corrupt():
    data = v2(0, 50)
    with pytest.raises(CorruptRecordError, match="exceeds"):
        list(iter_batches(data, max_entry_size=100))


def test_a_huge_claimed_length_with_few_bytes_is_a_partial_entry():
    data = bytearray(v2(0, 1))
    struct.pack_into(">i", data, 8, 2**31 - 1)
    assert list(iter_batches(data)) == []


def test_the_base_offset_of_a_compressed_legacy_wrapper_is_found_by_decompressing_it():
    (view,) = iter_batches(legacy(1, 40, 5, Compression.GZIP))
    assert view.last_offset == 44
    assert view._base_offset is None
    assert view.base_offset == 40
    assert "base_offset=40" in repr(view)


def test_header_is_available_for_v2_entries_only():
    v2_view, legacy_view = iter_batches(v2(7, 2) + legacy(1, 9, 1))
    assert v2_view.header().base_offset == 7
    with pytest.raises(CorruptRecordError):
        legacy_view.header()
    assert [r.offset for r in legacy_view.records()] == [9]
