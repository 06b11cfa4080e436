"""Hypothesis round trips: every declared API, every version, requests and responses."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kafkalog.protocol import (
    API_BY_KEY,
    DATA_BY_NAME,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from spark_kafkalog.protocol.codec import decode_struct, encode_struct

from .cases import api_version_cases, case_id, data_version_cases
from .strategies import struct_strategy

ROUNDTRIP = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("case", api_version_cases(), ids=case_id)
@ROUNDTRIP
@given(data=st.data(), correlation_id=st.integers(-(1 << 31), (1 << 31) - 1), client_id=st.none() | st.text(max_size=8))
def test_request_round_trip_is_lossless(case, data, correlation_id, client_id):
    key, version = case
    api = API_BY_KEY[key]
    body = data.draw(struct_strategy(api.request, version, api.is_flexible(version)))
    frame = encode_request(key, version, correlation_id, body, client_id=client_id)
    req = decode_request(frame)
    assert (req.header.api_key, req.header.api_version) == (key, version)
    assert (req.header.correlation_id, req.header.client_id) == (correlation_id, client_id)
    assert req.body == body
    assert encode_request(key, version, correlation_id, req.body, client_id=client_id) == frame


@pytest.mark.parametrize("case", api_version_cases(), ids=case_id)
@ROUNDTRIP
@given(data=st.data(), correlation_id=st.integers(-(1 << 31), (1 << 31) - 1))
def test_response_round_trip_is_lossless(case, data, correlation_id):
    key, version = case
    api = API_BY_KEY[key]
    body = data.draw(struct_strategy(api.response, version, api.is_flexible(version)))
    frame = encode_response(key, version, correlation_id, body)
    got_id, decoded = decode_response(key, version, frame)
    assert got_id == correlation_id
    assert decoded == body
    assert encode_response(key, version, correlation_id, decoded) == frame


@pytest.mark.parametrize("case", data_version_cases(), ids=lambda c: f"{c[0]}-v{c[1]}")
@ROUNDTRIP
@given(data=st.data())
def test_data_payload_round_trip_is_lossless(case, data):
    name, version = case
    spec = DATA_BY_NAME[name]
    flexible = spec.flexible is not None and version in spec.flexible
    value = data.draw(struct_strategy(spec.struct, version, flexible))
    encoded = encode_struct(spec.struct, version, flexible, value).getvalue()
    assert decode_struct(spec.struct, version, flexible, encoded, where=name) == value


def test_a_send_buffer_travels_in_a_request_uncopied():
    from spark_kafkalog.protocol import SendBuffer, encode_request_chunks

    produce = API_BY_KEY[0].Request
    batches = [bytearray(b"first batch bytes"), bytearray(b"second")]

    def body(records):
        return produce(
            transactional_id=None,
            acks=-1,
            timeout_ms=30_000,
            topic_data=[
                produce.TopicProduceData(
                    name="t",
                    partition_data=[
                        produce.TopicProduceData.PartitionProduceData(index=i, records=records(b))
                        for i, b in enumerate(batches)
                    ],
                )
            ],
        )

    for version in (3, 9):  # int32-length records, then compact (flexible) records
        copied = encode_request(0, version, 5, body(bytes), client_id="c", framed=True)
        chunks = encode_request_chunks(0, version, 5, body(SendBuffer), client_id="c")
        assert b"".join(chunks) == copied
        # header and lengths, batch, lengths, batch, then the tag buffers of a flexible version
        assert [type(c) is memoryview for c in chunks] == [False, True, False, True] + [False] * (version >= 9)
        batches[1][0:1] = b"S"  # the chunk is the caller's memory, not a copy
        assert bytes(chunks[3]) == b"Second"
        batches[1][0:1] = b"s"
        assert encode_request_chunks(0, version, 5, body(bytes), client_id="c") == [copied]
