"""Primitive encodings against known byte values from Kafka's protocol documentation."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_kafkalog.protocol import DecodeError, EncodeError
from spark_kafkalog.protocol.primitives import (
    Reader,
    Writer,
    decode_uvarint,
    encode_uvarint,
    encode_varint,
    encode_varlong,
    zigzag_encode,
)


@pytest.mark.parametrize(
    "value, encoded",
    [(0, "00"), (1, "01"), (127, "7f"), (128, "8001"), (300, "ac02"), (16384, "808001"), (2**32 - 1, "ffffffff0f")],
)
def test_unsigned_varint_matches_leb128(value, encoded):
    assert encode_uvarint(value).hex() == encoded
    assert decode_uvarint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@pytest.mark.parametrize(
    "value, zigzag", [(0, 0), (-1, 1), (1, 2), (-2, 3), (2**31 - 1, 2**32 - 2), (-(2**31), 2**32 - 1)]
)
def test_zigzag_maps_small_magnitudes_to_small_numbers(value, zigzag):
    assert zigzag_encode(value, 32) == zigzag
    assert Reader(encode_varint(value)).varint() == value


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trips_the_whole_int64_range(n):
    assert Reader(encode_varlong(n)).varlong() == n


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trips_the_whole_int32_range(n):
    assert Reader(encode_varint(n)).varint() == n


def test_varint_out_of_range_is_an_encode_error():
    with pytest.raises(EncodeError, match="int32 range"):
        encode_varint(2**31)


def test_overlong_varint_is_a_decode_error():
    with pytest.raises(DecodeError, match="longer than 5 bytes"):
        Reader(b"\xff" * 6 + b"\x01").uvarint()


def test_strings_use_int16_lengths_and_compact_strings_use_length_plus_one():
    w = Writer()
    w.string("héllo")
    w.nullable_string(None)
    w.compact_string("ab")
    w.compact_nullable_string(None)
    assert w.getvalue().hex() == "0006" + "68c3a96c6c6f" + "ffff" + "03" + "6162" + "00"
    r = Reader(w.getvalue())
    assert [r.string(), r.nullable_string(), r.compact_string(), r.compact_nullable_string()] == [
        "héllo",
        None,
        "ab",
        None,
    ]


def test_bytes_use_int32_lengths_and_null_is_minus_one():
    w = Writer()
    w.nullable_bytes(None)
    w.bytes(b"xy")
    w.compact_bytes(b"")
    assert w.getvalue().hex() == "ffffffff" + "00000002" + "7879" + "01"


def test_uuid_is_sixteen_raw_bytes_and_none_is_the_zero_uuid():
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    w = Writer()
    w.uuid(u)
    w.uuid(None)
    assert w.getvalue() == u.bytes + bytes(16)
    assert Reader(w.getvalue()).uuid() == u


@pytest.mark.parametrize(
    "data, reader, message",
    [
        (b"\x00\x05ab", "string", "string length 5 exceeds the 2 bytes left"),
        (b"\xff\xfe", "string", "negative string length -2"),
        (b"\xff\xff", "string", "negative string length -1"),
        (b"\x00\x02\xff\xfe", "string", "not valid UTF-8"),
        (b"\x00\x00\x00\x09abc", "bytes", "bytes length 9 exceeds the 3 bytes left"),
        (b"\x00", "compact_string", "null compact string"),
        (b"\x00\x01", "int32", "need 4 bytes, 2 left"),
    ],
)
def test_bad_lengths_name_the_problem(data, reader, message):
    with pytest.raises(DecodeError, match=message):
        getattr(Reader(data), reader)()


def test_decode_error_names_where_and_position():
    err = Reader(b"\x00", where="Produce v9 request").fail("boom")
    assert str(err) == "boom in Produce v9 request at byte 0"


def test_writer_keeps_opaque_regions_as_separate_parts():
    class Region:
        def __len__(self):
            return 10

    w = Writer()
    w.int16(1)
    w.records(Region())
    w.int8(2)
    parts = w.parts()
    assert parts[0] == b"\x00\x01\x00\x00\x00\x0a" and isinstance(parts[1], Region) and parts[2] == b"\x02"
    assert len(w) == 6 + 10 + 1
    with pytest.raises(EncodeError, match="parts"):
        w.getvalue()
