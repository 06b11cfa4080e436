"""Confluent's wire format: our framing against confluent-kafka's own reader and writer of it."""

from __future__ import annotations

import io

import pytest
from confluent_kafka.schema_registry.common.serde import SchemaId

from spark_kafkalog.schemas.wire_format import (
    WireFormatError,
    decode_message_indexes,
    encode_message_indexes,
    frame,
    unframe,
)

INDEXES = [[0], [1], [0, 0], [2, 5, 1], [63], [64], [300, 0, 7]]


@pytest.mark.parametrize("indexes", INDEXES)
def test_protobuf_framing_is_byte_for_byte_confluents(indexes):
    theirs = SchemaId("PROTOBUF", 7, message_indexes=indexes).id_to_bytes()
    ours = frame(7, b"", indexes)
    assert ours == theirs  # [0] as the single byte 0 in both
    for data in (ours, theirs):
        parsed = SchemaId("PROTOBUF")
        rest = parsed.from_bytes(io.BytesIO(data + b"payload"))
        assert (parsed.id, parsed.message_indexes, rest.read()) == (7, indexes, b"payload")
        schema_id, got, payload = unframe(data + b"payload", protobuf=True)
        assert (schema_id, list(got), bytes(payload)) == (7, indexes, b"payload")


@pytest.mark.parametrize("schema_id", [0, 1, 255, 65536, 2**31 - 1])
def test_avro_and_json_framing_is_confluents(schema_id):
    theirs = SchemaId("AVRO", schema_id).id_to_bytes()
    assert frame(schema_id, b"xyz") == theirs + b"xyz"
    got_id, indexes, payload = unframe(theirs + b"xyz")
    assert (got_id, indexes, bytes(payload)) == (schema_id, (), b"xyz")


@pytest.mark.parametrize(
    ("data", "protobuf", "message"),
    [
        (b"", False, "too short"),
        (b"\x00\x00\x00\x01", False, "too short"),
        (b"\x07\x00\x00\x00\x01x", False, "unknown magic byte 7"),
        (b"\x01" + bytes(16), False, "magic byte 1"),
        (b"\x00\x00\x00\x00\x01", True, "truncated"),
        (b"\x00\x00\x00\x00\x01\x04\x02", True, "truncated"),  # two indexes announced, one present
        (b"\x00\x00\x00\x00\x01\x03", True, "index count"),  # zig-zag -2
        (b"\x00\x00\x00\x00\x01\x02\x01", True, "negative"),
        (b"\x00\x00\x00\x00\x01" + b"\xff" * 11, True, "too long"),
    ],
)
def test_bytes_not_in_the_wire_format_are_refused_naming_why(data, protobuf, message):
    with pytest.raises(WireFormatError, match=message):
        unframe(data, protobuf=protobuf)


def test_frame_refuses_what_cannot_be_written():
    with pytest.raises(WireFormatError, match="out of range"):
        frame(2**31, b"")
    with pytest.raises(WireFormatError, match="negative"):
        encode_message_indexes([1, -1])


def test_a_zero_count_means_the_first_message():
    assert decode_message_indexes(b"\x00rest") == ((0,), 1)
