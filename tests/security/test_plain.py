"""SASL PLAIN (RFC 4616) as Kafka's PlainSaslServer checks it."""

from __future__ import annotations

import pytest

from spark_kafkalog.security.errors import SaslAuthenticationFailed
from spark_kafkalog.security.sasl import SaslClientSettings, SaslServerCallbacks, create_client, create_server
from spark_kafkalog.security.sasl.plain import PlainClient, PlainServer

USERS = {"alice": "alice-secret", "admin": "admin-secret", "ünï": "pässwörd"}
GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN"


@pytest.mark.parametrize(
    "message, principal",
    [
        (b"\0alice\0alice-secret", "User:alice"),
        (b"alice\0alice\0alice-secret", "User:alice"),
        ("\0ünï\0pässwörd".encode(), "User:ünï"),
    ],
)
def test_accepts_valid_messages(message, principal):
    server = PlainServer(USERS)
    assert server.evaluate_response(message) == b""
    assert server.complete and server.principal == principal
    assert server.credential_expiry_ms is None and server.token_authenticated is False


@pytest.mark.parametrize(
    "message, reason",
    [
        (b"\0alice\0wrong", "invalid username or password"),
        (b"\0mallory\0alice-secret", "invalid username or password"),
        (b"\0alice\0alice-secre", "invalid username or password"),
        (b"\0alice\0alice-secret\0", "expected 3"),
        (b"\0alice", "expected 3"),
        (b"alice-secret", "expected 3"),
        (b"", "expected 3"),
        (b"\0\0alice-secret", "empty username"),
        (b"\0alice\0", "empty password"),
        (b"admin\0alice\0alice-secret", "authorization id differs"),  # CVE-2017-12610
        (b"\0alice\0\xff\xfe", "not UTF-8"),
    ],
)
def test_every_failure_gives_the_peer_one_generic_message(message, reason):
    server = PlainServer(USERS)
    with pytest.raises(SaslAuthenticationFailed) as e:
        server.evaluate_response(message)
    assert str(e.value) == GENERIC
    assert reason in e.value.detail
    assert "secret" not in e.value.detail and "wrong" not in e.value.detail
    assert not server.complete
    with pytest.raises(RuntimeError):
        _ = server.principal


def test_a_second_message_after_success_fails():
    server = PlainServer(USERS)
    server.evaluate_response(b"\0alice\0alice-secret")
    with pytest.raises(SaslAuthenticationFailed):
        server.evaluate_response(b"\0alice\0alice-secret")


def test_client_server_round_trip_through_the_factories():
    settings = SaslClientSettings("PLAIN", username="alice", password="alice-secret")
    client = create_client(settings)
    server = create_server("PLAIN", SaslServerCallbacks(plain_users=USERS))
    challenge = server.evaluate_response(client.initial_response())
    assert client.evaluate_challenge(challenge) is None
    assert client.complete and server.principal == "User:alice"


def test_client_sends_no_authzid():
    assert PlainClient("alice", "pw").initial_response() == b"\0alice\0pw"


def test_password_never_in_repr():
    client = PlainClient("alice", "hunter2")
    server = PlainServer({"alice": "hunter2"})
    settings = SaslClientSettings("PLAIN", username="alice", password="hunter2")
    callbacks = SaslServerCallbacks(plain_users={"alice": "hunter2"})
    for obj in (client, server, settings, callbacks):
        assert "hunter2" not in repr(obj) and "hunter2" not in str(obj)
