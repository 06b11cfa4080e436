"""Hypothesis strategies for hostile v0/v1 message sets (shared by the record and broker fuzz tests).

Random bytes almost never get past a CRC-32, so messages are drawn as field specs and encoded with a
correct CRC over fields that may lie: any offset (0 and 2^32, int64 extremes), magic 0-255, every codec
id with and without the timestamp-type bit and unused high bits, any timestamp, key and value lengths
that disagree with the bytes, message sizes off by a few bytes, wrappers whose inner offsets are
relative, absolute or anything, nested wrappers, and compressed payloads that are cut or flipped.
``message_sets()`` then sometimes mutates the encoded bytes (flips, truncation) on top.
"""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from spark_kafkalog.records import Compression, LegacyMessageSetBuilder, compress
from spark_kafkalog.records.crc import crc32

T0 = 1_700_000_000_000
INT64 = st.integers(-(2**63), 2**63 - 1)
OFFSETS = st.one_of(
    st.integers(0, 5),
    st.sampled_from([2**31 - 1, 2**31, 2**32, 2**63 - 1, -1, -(2**63)]),
    INT64,
)
TIMESTAMPS = st.one_of(st.sampled_from([-1, 0, T0, -2, 2**63 - 1, -(2**63)]), st.integers(-1, 2 * T0), INT64)
FIELDS = st.one_of(st.none(), st.binary(max_size=24))
LENGTH_LIES = st.one_of(
    st.none(),
    st.none(),
    st.none(),
    st.sampled_from([-2, -1, 0, 1, 7, 2**31 - 1, -(2**31)]),
    st.integers(-(2**31), 2**31 - 1),
)
MAGICS = st.sampled_from([0, 0, 0, 1, 1, 1, 2, 3, 255])
CODECS = st.sampled_from([0, 0, 0, 1, 2, 3, 1, 2, 3, 4, 5, 7])


def encode(spec: dict) -> bytes:
    """The log entry of a message spec (see ``message_specs``); inner messages are compressed here."""
    magic, attributes = spec["magic"], spec["attributes"]
    value = spec["value"]
    if spec["children"] is not None:
        inner = b"".join(encode(child) for child in spec["children"])
        codec = attributes & 0x07
        if 1 <= codec <= 3:
            value = compress(codec, inner, magic=1 if magic == 1 else 0)
        elif codec == 4:
            value = compress(codec, inner, magic=2)
        else:
            value = inner
        cut, flip = spec["payload_cut"], spec["payload_flip"]
        if value and flip is not None:
            buf = bytearray(value)
            buf[flip % len(buf)] ^= 0x5A
            value = bytes(buf)
        if cut is not None:
            value = value[: cut % (len(value) + 1)]
    head = struct.pack(">BB", magic & 0xFF, attributes & 0xFF)
    if magic == 1:
        head += struct.pack(">q", spec["timestamp"])
    parts = [head]
    for field, lie in ((spec["key"], spec["key_length"]), (value, spec["value_length"])):
        parts.append(struct.pack(">i", lie if lie is not None else (-1 if field is None else len(field))))
        if field:
            parts.append(field)
    body = b"".join(parts)
    crc = crc32(body) ^ (0 if spec["crc_ok"] else 0x10)
    return struct.pack(">qiI", spec["offset"], 4 + len(body) + spec["size_delta"], crc) + body


@st.composite
def message_specs(draw, depth: int = 0, sane: bool = False, magic: int | None = None, codec: int | None = None) -> dict:
    """One message (a wrapper with inner messages for some codecs), as a dict of possibly lying fields.

    ``sane`` messages tell the truth about everything but offsets and timestamps (magic ``magic``, one
    level of compression, lengths and CRCs right), so the converters' later stages are reached too.
    """
    if sane:
        magic = draw(st.sampled_from([0, 1])) if magic is None else magic
        if codec is None:
            # zstd (4) is never valid below magic 2: a sane zstd wrapper reaches UNSUPPORTED_COMPRESSION_TYPE
            codec = draw(st.sampled_from([0, 1, 2, 3, 4])) if depth == 0 else draw(st.sampled_from([0] * 9 + [1]))
        attributes = codec | draw(st.sampled_from([0] * 9 + [0x08])) | draw(st.sampled_from([0] * 4 + [0x40]))
    else:
        magic = draw(MAGICS)
        codec = draw(CODECS)
        attributes = codec | draw(st.sampled_from([0, 0, 0, 0x08])) | draw(st.sampled_from([0, 0, 0, 0x10, 0x80]))
    children = None
    if codec and depth < 2 and draw(st.integers(0, 9)) < 8:
        children = draw(st.lists(message_specs(depth + 1, sane, magic), min_size=1 if sane else 0, max_size=4))
        numbering = draw(st.sampled_from(["relative", "relative", "absolute", "drawn"]))
        base = draw(OFFSETS)
        for i, child in enumerate(children):
            if numbering == "relative":
                child["offset"] = i
            elif numbering == "absolute":
                child["offset"] = (base + i + 2**63) % 2**64 - 2**63
    rare = not sane and draw(st.integers(0, 9)) == 0  # a lie in the framing itself
    garbled = not sane and draw(st.integers(0, 3)) == 0  # a compressed payload cut or flipped
    return {
        "offset": draw(OFFSETS),
        "magic": magic,
        "attributes": attributes,
        "timestamp": draw(TIMESTAMPS),
        "key": draw(FIELDS),
        "value": draw(FIELDS),
        "key_length": draw(LENGTH_LIES) if rare else None,
        "value_length": draw(LENGTH_LIES) if rare else None,
        "size_delta": draw(st.sampled_from([-5, -1, 1, 3, -(2**20), 2**20])) if rare else 0,
        "crc_ok": not rare or draw(st.booleans()),
        "children": children,
        "payload_cut": draw(st.one_of(st.none(), st.integers(0, 1 << 16))) if garbled else None,
        "payload_flip": draw(st.one_of(st.none(), st.integers(0, 1 << 16))) if garbled else None,
    }


@st.composite
def message_sets(draw) -> bytes:
    """A v0/v1 message set: one to four messages (half the time sane ones of one magic), sometimes
    with bytes flipped or cut off."""
    if draw(st.booleans()):  # sane: one wrapper (rarely followed by more), or plain messages
        magic = draw(st.sampled_from([0, 1]))
        if draw(st.booleans()):
            specs = [draw(message_specs(0, True, magic, draw(st.sampled_from([1, 2, 3, 1, 2, 3, 4]))))]
            if draw(st.integers(0, 9)) == 0:
                specs += draw(st.lists(message_specs(0, True, magic), min_size=1, max_size=2))
        else:
            specs = draw(st.lists(message_specs(0, True, magic, 0), min_size=1, max_size=4))
    else:
        specs = draw(st.lists(message_specs(), min_size=1, max_size=4))
    data = bytearray(b"".join(encode(spec) for spec in specs))
    if draw(st.integers(0, 5)) == 0:
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if draw(st.integers(0, 5)) == 0:
        data = data[: len(data) - draw(st.integers(1, len(data)))]
    return bytes(data)


def valid_message_set(records, magic: int, codec: int) -> bytes:
    """A well-formed producer message set of ``records`` ([(timestamp, key, value)]), as old clients send it."""
    builder = LegacyMessageSetBuilder(magic, Compression(codec))
    for ts, key, value in records:
        builder.append(ts, key, value)
    return builder.build()
