"""KIP-368 re-authentication on a SASL_PLAINTEXT listener with ``connections.max.reauth.ms`` = 1500: the session
lifetime in SaslAuthenticate v1+, a SaslHandshake on the live connection re-authenticating in request order, the
same-principal and same-mechanism rules, the one-second floor, and the close of an expired session."""

from __future__ import annotations

import time

import pytest

from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import ApiKey, ErrorCode
from spark_kafkalog.security.sasl import SaslServerCallbacks

from ..wire import Wire
from .secure import (
    address_of,
    extra_server,
    fake_sasl_servers,
    login,
    plain_token,
    recorded,
    sasl_authenticate,
    sasl_handshake,
)

K = ApiKey
MAX_REAUTH_MS = 1500


@pytest.fixture
def users() -> dict[str, str]:
    """The listener's PLAIN users (a test may add one while the server runs)."""
    return {"alice": "alice-secret", "bob": "bob-secret"}


@pytest.fixture
def reauth_server(broker, monkeypatch, users):
    fake_sasl_servers(monkeypatch)
    security = ListenerSecurity(
        name="x",
        protocol="SASL_PLAINTEXT",
        sasl_mechanisms=("PLAIN", "SCRAM-SHA-256"),
        sasl_callbacks=SaslServerCallbacks(plain_users=users),
        max_reauth_ms=MAX_REAUTH_MS,
        failed_authentication_delay_ms=50,
    )
    with extra_server(broker, security, record=True) as server:
        yield server


def _metadata(w: Wire):
    return w.call(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)


def test_session_lifetime_and_reauthentication_in_request_order(reauth_server):
    with Wire(address_of(reauth_server)) as w:
        assert login(w).session_lifetime_ms == MAX_REAUTH_MS
        first = w.send(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)
        handshake = w.send(K.SASL_HANDSHAKE, 1, mechanism="PLAIN")  # pipelined behind the Metadata
        assert w.receive(K.METADATA, 9)[0] == first
        cid, resp = w.receive(K.SASL_HANDSHAKE, 1)
        assert (cid, resp.error_code) == (handshake, 0)
        again = sasl_authenticate(w, plain_token("alice", "alice-secret"), version=1)
        assert (again.error_code, again.session_lifetime_ms) == (0, MAX_REAUTH_MS)
        assert _metadata(w).brokers
        # a second re-authentication within a second is not one: the handler answers ILLEGAL_SASL_STATE
        assert sasl_handshake(w, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE
        time.sleep(1.0)
        assert sasl_handshake(w, "PLAIN").error_code == 0  # a second later it is
        assert sasl_authenticate(w, plain_token("alice", "alice-secret")).error_code == 0
        time.sleep(1.0)  # 2 s after the first login, past its 1.5 s lifetime: the new session carries on
        assert _metadata(w).brokers
    principals = {p for key, p, _ in recorded(reauth_server) if key == K.METADATA}
    assert principals == {"User:alice"}


def test_reauthentication_cannot_change_the_principal(reauth_server):
    with Wire(address_of(reauth_server)) as w:
        assert login(w).error_code == 0
        assert sasl_handshake(w, "PLAIN").error_code == 0
        resp = sasl_authenticate(w, plain_token("bob", "bob-secret"))
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert resp.error_message == "Cannot change principals during re-authentication from User:alice: User:bob"
        assert w.closed_by_peer(5)


def test_reauthentication_cannot_change_the_mechanism(reauth_server):
    with Wire(address_of(reauth_server)) as w:
        assert login(w).error_code == 0
        resp = sasl_handshake(w, "SCRAM-SHA-256")  # enabled on the listener, but not the session's
        assert resp.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert w.closed_by_peer(5)


def test_an_expired_session_closes_on_the_next_request(reauth_server):
    with Wire(address_of(reauth_server)) as w:
        assert login(w).session_lifetime_ms == MAX_REAUTH_MS
        assert _metadata(w).brokers
        time.sleep(MAX_REAUTH_MS / 1000 + 0.2)
        w.send(K.METADATA, 9, topics=[], allow_auto_topic_creation=False)
        assert w.closed_by_peer(5)


def test_an_expired_session_may_still_reauthenticate(reauth_server):
    with Wire(address_of(reauth_server)) as w:
        assert login(w).error_code == 0
        time.sleep(MAX_REAUTH_MS / 1000 + 0.2)
        assert sasl_handshake(w, "PLAIN").error_code == 0
        assert sasl_authenticate(w, plain_token("alice", "alice-secret")).error_code == 0
        assert _metadata(w).brokers


def test_the_lifetime_is_capped_by_the_credential_expiry(reauth_server, users):
    users["carol"] = f"carol-secret;expires={int(time.time() * 1000) + 1000}"  # expires before max_reauth_ms
    with Wire(address_of(reauth_server)) as w:
        lifetime = login(w, "carol", "carol-secret").session_lifetime_ms
        assert 500 < lifetime <= 1000


def test_a_saslauthenticate_v0_client_cannot_reauthenticate(reauth_server):
    with Wire(address_of(reauth_server)) as w:
        assert login(w, version=0).error_code == 0
        assert sasl_handshake(w, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert _metadata(w).brokers
