"""Random and truncated bytes raise only DecodeError: never another exception, never a huge allocation."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafkalog.protocol import (
    API_BY_KEY,
    DecodeError,
    FrameDecoder,
    FrameTooLargeError,
    UnsupportedVersionError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from spark_kafkalog.protocol.primitives import INT16, INT32

from .cases import api_version_cases, case_id
from .strategies import sample, struct_strategy

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("case", api_version_cases(), ids=case_id)
@FUZZ
@given(payload=st.binary(max_size=200))
def test_random_request_bodies_raise_only_decode_error(case, payload):
    key, version = case
    frame = INT16.pack(key) + INT16.pack(version) + INT32.pack(1) + INT16.pack(-1)
    if API_BY_KEY[key].is_flexible(version):
        frame += b"\x00"
    try:
        decode_request(frame + payload)
    except DecodeError:
        pass


@pytest.mark.parametrize("case", api_version_cases(), ids=case_id)
@FUZZ
@given(payload=st.binary(max_size=200))
def test_random_response_bodies_raise_only_decode_error(case, payload):
    key, version = case
    try:
        decode_response(key, version, INT32.pack(1) + payload)
    except DecodeError:
        pass


@given(frame=st.binary(max_size=300))
@settings(max_examples=300, deadline=None)
def test_random_request_frames_raise_only_protocol_errors(frame):
    try:
        decode_request(frame)
    except (DecodeError, UnsupportedVersionError):
        pass


@pytest.mark.parametrize("case", api_version_cases(), ids=case_id)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_truncation_of_a_valid_message_raises_decode_error(case, data):
    key, version = case
    api = API_BY_KEY[key]
    flexible = api.is_flexible(version)
    req = encode_request(key, version, 5, data.draw(struct_strategy(api.request, version, flexible)))
    resp = encode_response(key, version, 5, data.draw(struct_strategy(api.response, version, flexible)))
    for cut in range(len(req)):
        with pytest.raises(DecodeError):
            decode_request(req[:cut])
    for cut in range(len(resp)):
        with pytest.raises(DecodeError):
            decode_response(key, version, resp[:cut])


@pytest.mark.parametrize("case", api_version_cases(), ids=case_id)
def test_claimed_lengths_never_drive_large_allocations(case):
    """Every int32 in a valid message replaced by a huge count or length: memory stays bounded."""
    key, version = case
    api = API_BY_KEY[key]
    base = encode_response(key, version, 5, sample(api.response, version))
    tracemalloc.start()
    try:
        for pos in range(4, len(base) - 3):
            for huge in (0x7FFFFFF0, 0x10000000):
                mutated = base[:pos] + INT32.pack(huge) + base[pos + 4 :]
                try:
                    decode_response(key, version, mutated)
                except DecodeError:
                    pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"decoding mutated {api.name} v{version} peaked at {peak} bytes"


def test_frame_decoder_splits_a_stream_at_any_chunk_boundary():
    frames = [b"a" * n for n in (0, 1, 5, 300)]
    stream = b"".join(INT32.pack(len(f)) + f for f in frames)
    for chunk in (1, 3, 7, len(stream)):
        dec = FrameDecoder(max_frame_size=1000)
        got = []
        for i in range(0, len(stream), chunk):
            got.extend(bytes(f) for f in dec.feed(stream[i : i + chunk]))
        assert got == frames and dec.buffered == 0


def test_frame_decoder_rejects_oversized_and_negative_sizes_before_buffering():
    with pytest.raises(FrameTooLargeError, match="exceeds the maximum of 1000"):
        FrameDecoder(max_frame_size=1000).feed(INT32.pack(1001))
    with pytest.raises(DecodeError, match="negative frame size"):
        FrameDecoder().feed(INT32.pack(-5))
