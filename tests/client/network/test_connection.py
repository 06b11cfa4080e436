"""The sans-IO connection: handshake and version negotiation, correlation, in-flight queue, framing."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.errors import KafkaConnectionError, NoCommonVersionError
from spark_kafkalog.client.network.connection import ConnectionState, KafkaConnection
from spark_kafkalog.client.network.versions import CLIENT_VERSIONS, ApiVersionTable
from spark_kafkalog.protocol import (
    API_BY_KEY,
    ApiKey,
    FrameDecoder,
    decode_request,
    encode_response,
)

AV = API_BY_KEY[18]
META = API_BY_KEY[3]


def api_versions_body(ranges: dict[int, tuple[int, int]], error: int = 0):
    K = AV.Response.ApiVersion
    return AV.Response(
        error_code=error, api_keys=[K(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in ranges.items()]
    )


def sent_requests(conn: KafkaConnection):
    decoder = FrameDecoder()
    return [decode_request(bytes(f)) for f in decoder.feed(conn.data_to_send())]


def ready_connection(ranges=None) -> KafkaConnection:
    conn = KafkaConnection("1 (h:9092)")
    conn.start_handshake()
    (req,) = sent_requests(conn)
    ranges = ranges or {k: (v.lo, v.hi) for k, v in CLIENT_VERSIONS.items()}
    conn.receive_data(
        encode_response(18, req.version, req.header.correlation_id, api_versions_body(ranges), framed=True)
    )
    assert conn.ready
    return conn


def metadata_response(correlation_id: int, version: int, framed=True) -> bytes:
    return encode_response(3, version, correlation_id, META.Response(brokers=[], topics=[]), framed=framed)


def test_handshake_sends_the_newest_api_versions_with_client_software_and_becomes_ready():
    conn = KafkaConnection("1 (h:9092)", client_id="etl")
    conn.start_handshake()
    (req,) = sent_requests(conn)
    assert (req.header.api_key, req.version, req.header.client_id) == (
        18,
        5,
        "etl",
    )  # v5 as Kafka 4.4's client (KIP-1242: no cluster id given)
    assert req.body.client_software_name == "spark-kafkalog"
    assert conn.state is ConnectionState.HANDSHAKE
    done = conn.receive_data(
        encode_response(18, 4, req.header.correlation_id, api_versions_body({3: (0, 12)}), framed=True)
    )
    assert done == []
    assert conn.ready
    assert conn.versions.pick(3) == 12


def test_handshake_retries_at_the_advertised_api_versions_maximum_after_unsupported_version():
    conn = KafkaConnection("1 (h:9092)")
    conn.start_handshake()
    (first,) = sent_requests(conn)
    # an old broker answers an unknown ApiVersions version with a v0 body and error 35 (its range 0-2)
    error_body = api_versions_body({18: (0, 2), 3: (0, 8)}, error=35)
    conn.receive_data(encode_response(18, 0, first.header.correlation_id, error_body, framed=True))
    (retry,) = sent_requests(conn)
    assert retry.version == 2
    assert not conn.ready
    conn.receive_data(
        encode_response(18, 2, retry.header.correlation_id, api_versions_body({18: (0, 2), 3: (0, 8)}), framed=True)
    )
    assert conn.ready
    assert conn.versions.pick(3) == 8


def test_handshake_falls_back_to_v0_when_the_error_body_lists_no_api_versions_range():
    conn = KafkaConnection("x")
    conn.start_handshake()
    (first,) = sent_requests(conn)
    conn.receive_data(encode_response(18, 0, first.header.correlation_id, api_versions_body({}, error=35), framed=True))
    (retry,) = sent_requests(conn)
    assert retry.version == 0


def test_handshake_error_other_than_unsupported_version_closes_with_the_code():
    conn = KafkaConnection("1 (h:9092)")
    conn.start_handshake()
    (first,) = sent_requests(conn)
    conn.receive_data(encode_response(18, 4, first.header.correlation_id, api_versions_body({}, error=42), framed=True))
    assert conn.closed
    assert "INVALID_REQUEST" in str(conn.close_reason)
    assert "1 (h:9092)" in str(conn.close_reason)


def test_requests_use_the_highest_version_both_sides_support():
    conn = ready_connection({3: (1, 7), 1: (4, 99)})
    request = conn.send(3, META.Request(topics=None))
    assert request.version == 7
    (sent,) = sent_requests(conn)
    assert sent.version == 7
    fetch_version = conn.versions.pick(1)
    assert fetch_version == CLIENT_VERSIONS[1].hi  # capped by what our declarations cover


def test_a_version_the_broker_does_not_advertise_is_never_sent():
    conn = ready_connection({0: (0, 2), 3: (0, 12)})
    with pytest.raises(NoCommonVersionError, match=r"supports Produce v0-2; .* needs v3\+"):
        conn.send(0, API_BY_KEY[0].Request(acks=1, timeout_ms=1, topic_data=[]), min_version=3)
    with pytest.raises(NoCommonVersionError, match="ListOffsets not at all"):
        conn.send(2, API_BY_KEY[2].Request(replica_id=-1, topics=[]))
    assert conn.data_to_send() == b""
    assert conn.in_flight == 0


def test_responses_complete_pipelined_requests_in_order_with_increasing_correlation_ids():
    conn = ready_connection()
    reqs = [conn.send(3, META.Request(topics=None)) for _ in range(3)]
    ids = [r.correlation_id for r in reqs]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert conn.in_flight == 3
    data = b"".join(metadata_response(r.correlation_id, r.version) for r in reqs)
    done = []
    for i in range(len(data)):  # byte by byte: partial frames are buffered
        done += conn.receive_data(data[i : i + 1])
    assert done == reqs
    assert all(r.done and r.error is None and r.response.topics == [] for r in reqs)
    assert conn.in_flight == 0


def test_correlation_ids_wrap_to_zero_after_int32_max():
    conn = ready_connection()
    conn._next_correlation_id = 2**31 - 1
    a = conn.send(3, META.Request(topics=None))
    b = conn.send(3, META.Request(topics=None))
    assert (a.correlation_id, b.correlation_id) == (2**31 - 1, 0)


def test_a_mismatched_correlation_id_closes_the_connection_and_fails_every_request():
    conn = ready_connection()
    a = conn.send(3, META.Request(topics=None))
    b = conn.send(3, META.Request(topics=None))
    done = conn.receive_data(metadata_response(b.correlation_id, b.version))
    assert conn.closed
    assert done == [a, b]
    assert all(isinstance(r.error, KafkaConnectionError) for r in done)
    assert "correlation id" in str(a.error)


def test_a_response_without_a_request_in_flight_closes_the_connection():
    conn = ready_connection()
    conn.receive_data(metadata_response(99, 12))
    assert conn.closed
    assert "no request in flight" in str(conn.close_reason)


def test_a_frame_over_the_maximum_size_closes_the_connection_before_buffering_it():
    conn = KafkaConnection("x", max_frame_size=1000)
    conn.start_handshake()
    conn.data_to_send()
    done = conn.receive_data((5000).to_bytes(4, "big") + b"\x00" * 10)
    assert done == []  # the handshake itself is not reported as a user request
    assert conn.closed
    assert "5000 bytes" in str(conn.close_reason)


def test_an_undecodable_response_fails_its_request_and_closes():
    conn = ready_connection()
    a = conn.send(3, META.Request(topics=None))
    payload = a.correlation_id.to_bytes(4, "big") + b"\x00\x01"  # truncated body
    done = conn.receive_data(len(payload).to_bytes(4, "big") + payload)
    assert done == [a]
    assert conn.closed
    assert "cannot decode the Metadata" in str(a.error)


def test_requests_without_response_are_not_in_flight():
    conn = ready_connection()
    P = API_BY_KEY[0]
    assert conn.send(0, P.Request(acks=0, timeout_ms=1, topic_data=[]), expect_response=False) is None
    assert conn.in_flight == 0
    (sent,) = sent_requests(conn)
    assert sent.body.acks == 0


def test_sending_before_the_handshake_completes_is_refused():
    conn = KafkaConnection("x")
    with pytest.raises(KafkaConnectionError, match="is new"):
        conn.send(3, META.Request(topics=None))


def test_close_fails_in_flight_requests_with_the_reason():
    conn = ready_connection()
    a = conn.send(3, META.Request(topics=None))
    reason = KafkaConnectionError("gone")
    assert conn.close(reason) == [a]
    assert a.error is reason
    with pytest.raises(KafkaConnectionError):
        a.result()


def test_version_table_intersects_ranges_and_reports_support():
    table = ApiVersionTable({3: (0, 20), 1: (4, 6), 999: (0, 1)}, peer="p")
    assert table.pick(3) == CLIENT_VERSIONS[3].hi
    assert table.pick(1, 4, 5) == 5
    assert table.supports(1, min_version=6) and not table.supports(1, min_version=7)
    assert 999 not in table.usable
    with pytest.raises(NoCommonVersionError, match=r"\(why not\)"):
        table.pick(int(ApiKey.FETCH), 7, why="why not")
