"""Frames sent by real clients (kafka-python, confluent-kafka/librdkafka) decode with our codec, and the
ApiVersions answers we encode steer them exactly as Kafka's would.

A tiny socket server records each request. It answers the client's first ApiVersions (v3/v4) with our
v0 error body (UNSUPPORTED_VERSION, ApiVersions 0-2), which real clients must treat as "retry lower";
it answers the retry with a small API table, and records the Metadata request that follows.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

from spark_kafkalog.protocol import (
    API_BY_KEY,
    ApiKey,
    ErrorCode,
    FrameDecoder,
    UnsupportedVersionError,
    decode_request,
    decode_request_header,
    encode_response,
)

AV = API_BY_KEY[ApiKey.API_VERSIONS]


class RecordingServer:
    """Accepts connections on 127.0.0.1:0 and records (api_key, version, request) for each frame."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.requests: list = []
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(10)
        try:
            while not self.done.is_set():
                conn, _ = self.sock.accept()
                threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        except OSError:
            pass

    def _handle(self, conn: socket.socket) -> None:
        dec = FrameDecoder()
        conn.settimeout(10)
        with conn:
            while not self.done.is_set():
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                for frame in dec.feed(data):
                    reply = self._answer(frame)
                    if reply is not None:
                        conn.sendall(reply)

    def _answer(self, frame) -> bytes | None:
        try:
            req = decode_request(frame)
        except UnsupportedVersionError:
            header, _ = decode_request_header(frame)
            self.requests.append((header.api_key, header.api_version, None))
            body = AV.Response(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[_api(18, 0, 2)])
            return encode_response(18, 0, header.correlation_id, body, framed=True)
        self.requests.append((req.header.api_key, req.header.api_version, req))
        if req.header.api_key == ApiKey.API_VERSIONS:
            if req.version >= 3:  # pretend we only know 0-2: the v0 error body
                body = AV.Response(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[_api(18, 0, 2)])
                return encode_response(18, 0, req.header.correlation_id, body, framed=True)
            body = AV.Response(api_keys=[_api(18, 0, 2), _api(3, 0, 8), _api(0, 0, 8), _api(1, 4, 11)])
            return encode_response(18, req.version, req.header.correlation_id, body, framed=True)
        if req.header.api_key == ApiKey.METADATA:
            self.done.set()
        return None

    def close(self) -> None:
        self.done.set()
        self.sock.close()


def _api(key: int, lo: int, hi: int):
    return AV.Response.ApiVersion(api_key=key, min_version=lo, max_version=hi)


@pytest.fixture
def server():
    s = RecordingServer()
    yield s
    s.close()


def _sequence(server: RecordingServer) -> list[tuple[int, int]]:
    return [(k, v) for k, v, _ in server.requests]


def _run_client(server: RecordingServer, code: str) -> None:
    """Run a client in a subprocess (no threads of it leak into other tests) until Metadata arrives."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code.format(port=server.port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert server.done.wait(30), f"no Metadata request; got {_sequence(server)}"
    finally:
        proc.kill()
        proc.wait()


def test_kafka_python_handshake_decodes_and_downgrades(server):
    _run_client(
        server,
        "from kafka import KafkaConsumer\n"
        "KafkaConsumer(bootstrap_servers='127.0.0.1:{port}', request_timeout_ms=20000).topics()",
    )
    seq = _sequence(server)
    assert seq[:2] == [(18, 4), (18, 2)], seq  # v4 first, then the max advertised in our v0 error body
    first = server.requests[0][2]
    assert first.body.client_software_name == "kafka-python" and first.header.client_id
    assert (3, 8) in seq  # Metadata at the highest version we advertised


def test_librdkafka_handshake_decodes_and_downgrades(server):
    _run_client(
        server,
        "from confluent_kafka.admin import AdminClient\n"
        "AdminClient({{'bootstrap.servers': '127.0.0.1:{port}'}}).list_topics(timeout=20)",
    )
    seq = _sequence(server)
    assert seq[:2] == [(18, 3), (18, 0)], seq  # librdkafka falls back to v0 when the error body is not flexible
    first = server.requests[0][2]
    assert first.body.client_software_name == "confluent-kafka-python"
    assert any(k == 3 and v == 8 for k, v in seq), seq
