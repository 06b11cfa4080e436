"""SASL before authentication on a SASL_PLAINTEXT listener (Kafka's SaslServerAuthenticator rules, reference
security.md §3), and the SaslHandshake/SaslAuthenticate answers where no exchange is under way."""

from __future__ import annotations

import struct
import time

import pytest

from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import ApiKey, ErrorCode
from spark_kafkalog.security.sasl import SaslServerCallbacks

from ..requests import batch as record_batch
from ..requests import create, fetch, produce, unique, values_in
from ..wire import Wire
from .secure import (
    address_of,
    extra_server,
    fake_sasl_servers,
    login,
    plain_token,
    raw_token,
    recorded,
    sasl_authenticate,
    sasl_handshake,
)

K = ApiKey
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
DELAY_MS = 400


def _security(**kw) -> ListenerSecurity:
    settings = dict(
        name="x",
        protocol="SASL_PLAINTEXT",
        sasl_mechanisms=("PLAIN", "SCRAM-SHA-256"),
        sasl_callbacks=SaslServerCallbacks(plain_users=USERS),
        failed_authentication_delay_ms=DELAY_MS,
        handshake_timeout_s=10.0,
    )
    settings.update(kw)
    return ListenerSecurity(**settings)  # type: ignore[arg-type]


@pytest.fixture
def sasl_server(broker, monkeypatch):
    fake_sasl_servers(monkeypatch)
    with extra_server(broker, _security(), record=True) as server:
        yield server


def _wire(server) -> Wire:
    return Wire(address_of(server))


def test_api_versions_then_plain_login_then_requests_carry_the_principal(broker, sasl_server):
    topic = unique()
    with Wire(broker.bootstrap_servers) as plain:
        assert create(plain, topic).error_code == 0
    with _wire(sasl_server) as w:
        versions = w.call(K.API_VERSIONS, 3, client_software_name="t", client_software_version="1")
        ranges = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
        assert ranges[K.SASL_HANDSHAKE] == (0, 1) and ranges[K.SASL_AUTHENTICATE] == (0, 2)
        handshake = sasl_handshake(w, "PLAIN")
        assert (handshake.error_code, handshake.mechanisms) == (0, ["PLAIN", "SCRAM-SHA-256"])
        done = sasl_authenticate(w, plain_token("alice", "alice-secret"))
        assert (done.error_code, done.error_message, done.session_lifetime_ms) == (0, None, 0)
        assert produce(w, topic, record_batch([b"a", b"b"])).error_code == 0
        assert values_in(fetch(w, topic, 0).records) == [b"a", b"b"]
        again = sasl_authenticate(w, plain_token("alice", "alice-secret"))
        assert again.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert again.error_message == "SaslAuthenticate request received after successful authentication"
        assert sasl_handshake(w, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE  # no reauth session
    seen = recorded(sasl_server)
    assert seen[0] == (K.API_VERSIONS, "User:ANONYMOUS", "SASL_PLAINTEXT")
    after = [principal for key, principal, _ in seen[1:]]
    assert after and set(after) == {"User:alice"}, seen


@pytest.mark.parametrize(
    "what, send",
    [
        ("Metadata before authentication", lambda w: w.send(K.METADATA, 9, topics=None)),
        (
            "a second ApiVersions",
            lambda w: (w.call(K.API_VERSIONS, 0), w.send(K.API_VERSIONS, 0)),
        ),
        ("Metadata after ApiVersions", lambda w: (w.call(K.API_VERSIONS, 0), w.send(K.METADATA, 9, topics=None))),
    ],
)
def test_requests_out_of_the_exchange_close_without_a_response(sasl_server, what, send):
    with _wire(sasl_server) as w:
        send(w)
        w.sock.settimeout(5)
        assert w.sock.recv(1) == b"", f"{what}: the broker answered instead of closing"


def test_a_pre_auth_frame_over_the_sasl_limit_closes_at_once(sasl_server):
    with _wire(sasl_server) as w:
        started = time.monotonic()
        w.send_raw(struct.pack(">i", 600 * 1024) + b"\0" * 1024)  # announces 600 KiB: refused from the prefix
        assert w.closed_by_peer(5)
        assert time.monotonic() - started < DELAY_MS / 1000, "an oversize frame is refused without the auth delay"


def test_a_frame_of_the_sasl_limit_is_still_read(sasl_server):
    """512 KiB exactly is allowed (the limit is inclusive): read whole, then, being junk, it fails the exchange
    (closed after the failed-authentication delay, unlike an oversize frame refused from its prefix)."""
    with _wire(sasl_server) as w:
        w.send_raw(struct.pack(">i", 512 * 1024) + b"\0" * (512 * 1024))
        sent = time.monotonic()
        assert w.closed_by_peer(5)
        assert time.monotonic() - sent >= DELAY_MS / 1000 - 0.05


def test_unsupported_mechanism_gets_33_with_the_enabled_list_then_close(sasl_server):
    with _wire(sasl_server) as w:
        resp = sasl_handshake(w, "GSSAPI")
        assert (resp.error_code, resp.mechanisms) == (ErrorCode.UNSUPPORTED_SASL_MECHANISM, ["PLAIN", "SCRAM-SHA-256"])
        assert w.closed_by_peer(5)


def test_bad_credentials_get_58_with_the_generic_message_and_close_after_the_delay(broker, sasl_server, caplog):
    caplog.set_level("WARNING", logger="kafkalog.network.auth")
    failed_before = _failed(broker)
    with _wire(sasl_server) as w:
        assert sasl_handshake(w, "PLAIN").error_code == 0
        resp = sasl_authenticate(w, plain_token("alice", "wrong-password"))
        answered = time.monotonic()
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert resp.error_message == (
            "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN"
        )
        assert w.closed_by_peer(5)
        waited = time.monotonic() - answered
    assert waited >= DELAY_MS / 1000 - 0.05, f"closed {waited:.3f} s after the answer"
    lines = [r.getMessage() for r in caplog.records if "failed authentication" in r.getMessage()]
    assert len(lines) == 1 and "PLAIN" in lines[0] and "listener" in lines[0]
    assert "wrong-password" not in lines[0]
    assert _failed(broker) == failed_before + 1


def _failed(broker) -> float:
    metrics = broker.broker.services.metrics
    return sum(
        s.value for m in metrics.failed_authentications.collect() for s in m.samples if s.name.endswith("_total")
    )


def test_other_requests_during_a_v1_exchange_get_34_then_close(sasl_server):
    with _wire(sasl_server) as w:
        assert sasl_handshake(w, "PLAIN").error_code == 0
        resp = w.call(K.FIND_COORDINATOR, 1, key="g", key_type=0)
        assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert w.closed_by_peer(5)


def test_handshake_v0_then_raw_tokens(sasl_server):
    with _wire(sasl_server) as w:
        assert sasl_handshake(w, "PLAIN", version=0).error_code == 0
        assert raw_token(w, plain_token("bob", "bob-secret")) == b""  # PLAIN's empty challenge, size-prefixed
        meta = w.call(K.METADATA, 9, topics=None, allow_auto_topic_creation=False)
        assert meta.brokers
    assert (K.METADATA, "User:bob", "SASL_PLAINTEXT") in recorded(sasl_server)
    with _wire(sasl_server) as w:
        assert sasl_handshake(w, "PLAIN", version=0).error_code == 0
        token = plain_token("bob", "nope")
        w.send_raw(struct.pack(">i", len(token)) + token)
        assert w.closed_by_peer(5)  # a failed raw exchange gets no answer


def test_exchange_bounded_by_the_handshake_timeout(broker, monkeypatch):
    fake_sasl_servers(monkeypatch)
    with extra_server(broker, _security(handshake_timeout_s=0.5)) as server, _wire(server) as w:
        w.call(K.API_VERSIONS, 0)
        started = time.monotonic()
        assert w.closed_by_peer(5)
        assert 0.4 <= time.monotonic() - started < 3


def test_plaintext_listener_answers_34_to_sasl_requests(broker):
    with Wire(broker.bootstrap_servers) as w:
        handshake = sasl_handshake(w, "PLAIN")
        assert (handshake.error_code, handshake.mechanisms) == (ErrorCode.ILLEGAL_SASL_STATE, [])
        auth = sasl_authenticate(w, plain_token("alice", "alice-secret"), version=1)
        assert auth.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert w.call(K.API_VERSIONS, 0).error_code == 0  # the connection stays open


def test_login_helper_reports_success(sasl_server):
    with _wire(sasl_server) as w:
        assert login(w).error_code == 0
