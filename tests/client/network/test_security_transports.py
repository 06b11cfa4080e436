"""TLS in the blocking and asyncio transports against a scripted broker behind TLS: SNI, host name checks,
untrusted certificates as non-retriable errors naming the broker, pipelined reads draining OpenSSL's buffer,
and gathered writes over an SSLSocket."""

from __future__ import annotations

import asyncio
import select
import ssl
import time

import pytest

from spark_kafkalog.client.errors import KafkaConnectionError, KafkaSslError
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.client.network.security import ClientSecurity
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.protocol import API_BY_KEY, encode_response
from tests.security.certs import TlsMaterial, build_tls_material

from ..scripted_broker import NO_RESPONSE, Raw, ScriptedBroker

META = API_BY_KEY[3]


class TlsScriptedBroker(ScriptedBroker):
    """A ``ScriptedBroker`` whose connections start with a TLS handshake; records SNI names and failures."""

    def __init__(self, context: ssl.SSLContext, **kwargs) -> None:
        self.server_names: list[str | None] = []
        self.handshake_errors: list[BaseException] = []
        context.sni_callback = lambda sslobj, name, ctx: self.server_names.append(name)
        self.context = context
        super().__init__(1, **kwargs)

    def _serve(self, conn, number):
        try:
            tls_conn = self.context.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.handshake_errors.append(e)
            conn.close()
            return
        super()._serve(tls_conn, number)


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


def server_context(chain, key) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, key)
    return context


@pytest.fixture
def broker(tls):
    b = TlsScriptedBroker(server_context(tls.broker_chain_pem, tls.broker_key_pem))
    b.handlers[3] = lambda request, _: META.Response(brokers=[], cluster_id="c" * 6000, controller_id=1, topics=[])
    yield b
    b.stop()


@pytest.fixture
def wrong_host_broker(tls):
    b = TlsScriptedBroker(server_context(tls.wrong_host_chain_pem, tls.wrong_host_key_pem))
    b.handlers[3] = lambda request, _: META.Response(brokers=[], cluster_id="wrong", controller_id=1, topics=[])
    yield b
    b.stop()


def security(tls: TlsMaterial, **extra: str) -> ClientSecurity:
    return ClientSecurity.from_config({"security.protocol": "SSL", "ssl.ca.location": str(tls.ca_pem), **extra})


def test_requests_over_tls_with_sni_set_to_the_broker_host(broker, tls):
    conn = SocketConnection.open("localhost", broker.port, node_id=1, security=security(tls), request_timeout=5)
    try:
        response = conn.request(3, META.Request(topics=None), timeout=5)
        assert response.cluster_id == "c" * 6000
        assert broker.server_names == ["localhost"]
    finally:
        conn.close()


def test_a_certificate_for_another_host_is_a_non_retriable_error_naming_the_broker(wrong_host_broker, tls):
    started = time.monotonic()
    with pytest.raises(KafkaSslError) as caught:
        SocketConnection.open("localhost", wrong_host_broker.port, node_id=1, security=security(tls))
    error = caught.value
    assert time.monotonic() - started < 5
    assert error.retriable is False
    assert not isinstance(error, KafkaConnectionError)
    assert f"localhost:{wrong_host_broker.port}" in str(error)
    assert "certificate verify failed" in str(error) and "localhost" in str(error)


def test_without_host_name_checks_the_certificate_chain_is_still_verified_and_sni_still_sent(wrong_host_broker, tls):
    relaxed = security(tls, **{"ssl.endpoint.identification.algorithm": ""})
    conn = SocketConnection.open("localhost", wrong_host_broker.port, node_id=1, security=relaxed, request_timeout=5)
    try:
        assert conn.request(3, META.Request(topics=None), timeout=5).cluster_id == "wrong"
        assert wrong_host_broker.server_names == ["localhost"]
    finally:
        conn.close()
    untrusted = ClientSecurity.from_config({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""})
    with pytest.raises(KafkaSslError, match="certificate verify failed"):
        SocketConnection.open("localhost", wrong_host_broker.port, node_id=1, security=untrusted)


def test_pipelined_responses_polled_with_select_all_arrive_over_tls(broker, tls):
    """Bytes OpenSSL already decrypted never make the socket readable: ``poll`` must read them too.

    The broker answers four requests at a time in one write (4 x 6 KB: TLS records of 16 KB + 8 KB), so reading
    the third frame's end pulls the second record into OpenSSL, the fourth frame with it."""
    pending: list[bytes] = []

    def batched(request, _):
        body = META.Response(brokers=[], cluster_id="c" * 6000, controller_id=1, topics=[])
        pending.append(encode_response(3, request.version, request.header.correlation_id, body, framed=True))
        if len(pending) < 4:
            return NO_RESPONSE
        data = b"".join(pending)
        pending.clear()
        return Raw(data)

    broker.handlers[3] = batched
    conn = SocketConnection.open("localhost", broker.port, node_id=1, security=security(tls), request_timeout=5)
    try:
        sent = [conn.send(3, META.Request(topics=None)) for _ in range(40)]
        requests = [r for r in sent if r is not None]
        assert len(requests) == 40
        deadline = time.monotonic() + 20
        while not all(r.done for r in requests):
            assert time.monotonic() < deadline, f"{sum(not r.done for r in requests)} responses never arrived"
            readable, _, _ = select.select([conn], [], [], 2.0)
            assert readable, "select timed out with responses outstanding (OpenSSL's buffer was not drained)"
            conn.poll()
        assert all(r.error is None and r.response.cluster_id == "c" * 6000 for r in requests)
    finally:
        conn.close()


class _RecordingSocket:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def sendall(self, data) -> None:
        self.writes.append(bytes(data))


def test_gathered_writes_over_tls_join_small_buffers_and_send_large_ones_alone():
    conn = SocketConnection.__new__(SocketConnection)
    conn._sock = _RecordingSocket()  # type: ignore[assignment]
    conn.bytes_sent = 0
    small = [b"a" * 100, bytearray(b"b" * 200), memoryview(b"c" * 300)]
    large = b"L" * (300 * 1024)
    chunks = [*small, large, b"d" * 10]
    conn._send_tls(chunks)
    writes = conn._sock.writes  # type: ignore[attr-defined]
    assert b"".join(writes) == b"".join(bytes(c) for c in chunks)
    assert writes == [b"a" * 100 + b"b" * 200 + b"c" * 300, large, b"d" * 10]
    assert conn.bytes_sent == sum(len(bytes(c)) for c in chunks)


def test_asyncio_transport_over_tls(broker, wrong_host_broker, tls):
    async def main() -> None:
        conn = await AsyncKafkaConnection.open("localhost", broker.port, node_id=1, security=security(tls))
        try:
            results = await asyncio.gather(*(conn.request(3, META.Request(topics=None), timeout=5) for _ in range(5)))
            assert all(r.cluster_id == "c" * 6000 for r in results)
        finally:
            await conn.close()
        with pytest.raises(KafkaSslError) as caught:
            await AsyncKafkaConnection.open("localhost", wrong_host_broker.port, node_id=1, security=security(tls))
        assert f"localhost:{wrong_host_broker.port}" in str(caught.value)

    asyncio.run(main())
    assert "localhost" in broker.server_names
