"""FrameDecoder.take_partial_frame: a large frame is handed over with the bytes received so far."""

import struct

from spark_kafkalog.protocol import FrameDecoder


def test_take_partial_frame_then_continue_with_the_next_frame():
    payload = bytes(range(256)) * 400  # 102,400 bytes
    d = FrameDecoder()
    assert d.feed(struct.pack(">i", len(payload)) + payload[:1000]) == []
    assert d.take_partial_frame(200_000) is None  # smaller than the threshold: keep buffering
    head, size = d.take_partial_frame(65536)
    assert (size, bytes(head)) == (len(payload), payload[:1000])
    assert d.feed(struct.pack(">i", 3) + b"abc") == [bytearray(b"abc")]  # the decoder moved on


def test_take_partial_frame_none_when_complete_or_unknown():
    d = FrameDecoder()
    assert d.take_partial_frame(0) is None
    d.feed(b"\x00\x00")
    assert d.take_partial_frame(0) is None  # size not known yet


def test_take_partial_frame_allocates_nothing_for_an_announced_size():
    d = FrameDecoder()
    d.feed(struct.pack(">i", 100 * 1024 * 1024))  # a size prefix alone
    head, size = d.take_partial_frame(65536)
    assert size == 100 * 1024 * 1024 and len(head) == 0
