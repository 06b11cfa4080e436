"""TLS on the broker's listeners: the handshake on the event loop (timeout, failures, other connections unaffected),
requests over TLS, SASL_SSL, and the principal of an SSL listener."""

from __future__ import annotations

import socket
import ssl
import time

import pytest

from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import ApiKey
from spark_kafkalog.security.sasl import SaslServerCallbacks
from tests.security.certs import tls_material as _tls_material

from ..requests import batch, create, fetch, produce, unique, values_in
from ..wire import Wire
from .secure import (
    TlsWire,
    address_of,
    client_context,
    extra_server,
    fake_sasl_servers,
    login,
    recorded,
    server_context,
)

K = ApiKey
tls_material = pytest.fixture(scope="session")(_tls_material)


@pytest.fixture
def ssl_server(broker, tls_material):
    security = ListenerSecurity(
        name="x", protocol="SSL", ssl_context=server_context(tls_material), handshake_timeout_s=0.6
    )
    with extra_server(broker, security, record=True) as server:
        yield server


def test_api_versions_produce_and_fetch_over_tls(broker, ssl_server, tls_material):
    topic = unique()
    with TlsWire(address_of(ssl_server), client_context(tls_material)) as w:
        assert isinstance(w.sock, ssl.SSLSocket) and w.sock.version() in ("TLSv1.2", "TLSv1.3")
        keys = {
            k.api_key for k in w.call(K.API_VERSIONS, 3, client_software_name="t", client_software_version="1").api_keys
        }
        assert {K.PRODUCE, K.FETCH, K.SASL_HANDSHAKE, K.SASL_AUTHENTICATE} <= keys
        assert create(w, topic).error_code == 0
        values = [bytes([i]) * 3000 for i in range(50)]
        assert produce(w, topic, batch(values)).error_code == 0
        assert values_in(fetch(w, topic, 0).records) == values  # a file region through the chunked TLS path
        pipelined = [w.send(K.API_VERSIONS, 0) for _ in range(20)]  # many responses in one read
        assert [w.receive(K.API_VERSIONS, 0)[0] for _ in pipelined] == pipelined
    with Wire(broker.bootstrap_servers) as plain:
        assert values_in(fetch(plain, topic, 0).records) == values
    assert {(p, proto) for _, p, proto in recorded(ssl_server)} == {("User:ANONYMOUS", "SSL")}


def test_a_silent_client_is_closed_after_the_handshake_timeout_and_only_it(ssl_server, tls_material):
    address = address_of(ssl_server)
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as silent:
        started = time.monotonic()
        with TlsWire(address, client_context(tls_material)) as w:  # handshakes while the silent one waits
            assert w.call(K.API_VERSIONS, 0).error_code == 0
            assert silent.recv(1) == b""
            closed_after = time.monotonic() - started
            assert 0.5 <= closed_after < 3, closed_after
            assert w.call(K.API_VERSIONS, 0).error_code == 0  # the other connection is still served


def test_plaintext_bytes_on_an_ssl_port_fail_the_handshake(ssl_server):
    with Wire(address_of(ssl_server)) as w:
        w.send(K.API_VERSIONS, 0)
        w.sock.settimeout(5)
        try:
            data = w.sock.recv(4096)
        except ConnectionResetError:
            data = b""
        assert not data.startswith(b"\0\0"), "a Kafka response came back over plaintext"
        assert w.closed_by_peer(5)


def test_a_missing_client_certificate_fails_the_handshake_when_required(broker, tls_material):
    ctx = server_context(tls_material)
    ctx.verify_mode = ssl.CERT_REQUIRED
    security = ListenerSecurity(name="x", protocol="SSL", ssl_context=ctx)
    with extra_server(broker, security) as server:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with TlsWire(address_of(server), client_context(tls_material)) as w:
                w.call(K.API_VERSIONS, 0)
        with TlsWire(address_of(server), client_context(tls_material)) as w:  # the listener goes on serving
            pass


def test_sasl_ssl_login_then_requests(broker, tls_material, monkeypatch):
    fake_sasl_servers(monkeypatch)
    security = ListenerSecurity(
        name="x",
        protocol="SASL_SSL",
        ssl_context=server_context(tls_material),
        sasl_mechanisms=("PLAIN",),
        sasl_callbacks=SaslServerCallbacks(plain_users={"alice": "alice-secret"}),
    )
    topic = unique()
    with extra_server(broker, security, record=True) as server:
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            assert w.call(K.API_VERSIONS, 0).error_code == 0
            assert login(w).error_code == 0
            assert create(w, topic).error_code == 0
            assert produce(w, topic, batch([b"x" * 100_000])).error_code == 0
            assert values_in(fetch(w, topic, 0).records) == [b"x" * 100_000]
        seen = recorded(server)
    assert seen[0][1:] == ("User:ANONYMOUS", "SASL_SSL")
    assert {(p, proto) for _, p, proto in seen[1:]} == {("User:alice", "SASL_SSL")}


def test_server_stop_sends_queued_responses_encrypted(broker, tls_material):
    """Stopping half-closes the raw socket: a TLS connection is not downgraded (its last bytes stay TLS)."""
    security = ListenerSecurity(
        name="x", protocol="SSL", ssl_context=server_context(tls_material), handshake_timeout_s=0.6
    )
    with extra_server(broker, security) as server:
        w = TlsWire(address_of(server), client_context(tls_material))
        assert w.call(K.API_VERSIONS, 0).error_code == 0
    with w:
        assert w.closed_by_peer(5)
