"""``SaslAuthenticator`` as a pure state machine (no sockets): each frame's outcome by state, as a table, and the
session arithmetic of KIP-368 with an injected clock."""

from __future__ import annotations

import struct

import pytest

from broker.network.sasl_authenticator import SaslAuthenticator, SaslState
from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, decode_response, encode_request
from spark_kafkalog.security.sasl import SaslServerCallbacks

from .secure import fake_sasl_servers, plain_token

K = ApiKey
SECURITY = ListenerSecurity(
    name="CLIENT",
    protocol="SASL_PLAINTEXT",
    sasl_mechanisms=("PLAIN",),
    sasl_callbacks=SaslServerCallbacks(plain_users={"alice": "pw"}),
    max_reauth_ms=1500,
)


def req(api_key: int, version: int, **fields) -> bytes:
    return bytes(encode_request(api_key, version, 42, API_BY_KEY[api_key].Request(**fields), client_id="unit"))


def answer(key: int, version: int, reply: bytes | None):
    assert reply is not None
    (size,) = struct.unpack_from(">i", reply)
    assert size == len(reply) - 4
    return decode_response(key, version, reply[4:])[1]


HANDSHAKE = req(K.SASL_HANDSHAKE, 1, mechanism="PLAIN")
HANDSHAKE_V0 = req(K.SASL_HANDSHAKE, 0, mechanism="PLAIN")
VERSIONS = req(K.API_VERSIONS, 0)
METADATA = req(K.METADATA, 9, topics=None)
GOOD = req(K.SASL_AUTHENTICATE, 2, auth_bytes=plain_token("alice", "pw"))
BAD = req(K.SASL_AUTHENTICATE, 2, auth_bytes=plain_token("alice", "nope"))


@pytest.mark.parametrize(
    "frames, state, dispatch, closes",
    [
        ([VERSIONS], SaslState.HANDSHAKE, True, False),
        ([METADATA], SaslState.FAILED, False, True),
        ([VERSIONS, VERSIONS], SaslState.FAILED, False, True),
        ([VERSIONS, METADATA], SaslState.FAILED, False, True),
        ([HANDSHAKE], SaslState.AUTHENTICATE, False, False),
        ([HANDSHAKE_V0], SaslState.AUTHENTICATE_RAW, False, False),
        ([VERSIONS, HANDSHAKE, GOOD], SaslState.COMPLETE, False, False),
        ([HANDSHAKE, BAD], SaslState.FAILED, False, True),
        ([HANDSHAKE, METADATA], SaslState.FAILED, False, True),
        ([HANDSHAKE_V0, struct.pack(">i", 3) + b"\0a\0"], SaslState.FAILED, False, True),
        ([HANDSHAKE_V0, plain_token("alice", "pw")], SaslState.COMPLETE, False, False),
        ([b"\0\0garbage"], SaslState.FAILED, False, True),
    ],
)
def test_outcome_of_the_last_frame(monkeypatch, frames, state, dispatch, closes):
    fake_sasl_servers(monkeypatch)
    auth = SaslAuthenticator(SECURITY, "peer:1")
    for frame in frames[:-1]:
        assert auth.on_frame(frame).close is None
    step = auth.on_frame(frames[-1])
    assert (auth.state, step.dispatch, step.close is not None) == (state, dispatch, closes)
    assert step.delayed  # every close decided here waits for the failed-authentication delay


def test_replies_carry_the_errors_kafka_sends(monkeypatch):
    fake_sasl_servers(monkeypatch)
    unsupported = SaslAuthenticator(SECURITY, "peer:1").on_frame(req(K.SASL_HANDSHAKE, 1, mechanism="GSSAPI"))
    resp = answer(K.SASL_HANDSHAKE, 1, unsupported.reply)
    assert (resp.error_code, resp.mechanisms, unsupported.close is not None) == (33, ["PLAIN"], True)
    auth = SaslAuthenticator(SECURITY, "peer:1")
    auth.on_frame(HANDSHAKE)
    illegal = auth.on_frame(req(K.FIND_COORDINATOR, 1, key="g", key_type=0))
    assert answer(K.FIND_COORDINATOR, 1, illegal.reply).error_code == ErrorCode.ILLEGAL_SASL_STATE
    auth = SaslAuthenticator(SECURITY, "peer:1")
    auth.on_frame(HANDSHAKE)
    failed = answer(K.SASL_AUTHENTICATE, 2, auth.on_frame(BAD).reply)
    assert failed.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED and "mechanism PLAIN" in failed.error_message


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _request(frame: bytes):
    from spark_kafkalog.protocol import decode_request

    return decode_request(frame)


def test_session_expiry_and_reauthentication_floor(monkeypatch):
    fake_sasl_servers(monkeypatch)
    clock = Clock()
    results: list[tuple[str, bool]] = []
    auth = SaslAuthenticator(
        SECURITY, "peer:1", monotonic=clock, wall_ms=lambda: 0, on_result=lambda m, ok: results.append((m, ok))
    )
    auth.on_frame(HANDSHAKE)
    done = answer(K.SASL_AUTHENTICATE, 2, auth.on_frame(GOOD).reply)
    assert (done.session_lifetime_ms, auth.principal, auth.session_expiry) == (1500, "User:alice", 101.5)
    assert auth.on_request(_request(METADATA)) is None
    clock.now = 101.6
    expired = auth.on_request(_request(METADATA))
    assert expired is not None and expired.close and not expired.delayed  # closed at once, no response
    step = auth.on_request(_request(HANDSHAKE))  # an expired session may still re-authenticate
    assert step is not None and answer(K.SASL_HANDSHAKE, 1, step.reply).error_code == 0 and auth.intercepts
    assert answer(K.SASL_AUTHENTICATE, 2, auth.on_frame(GOOD).reply).error_code == 0
    assert auth.session_expiry == pytest.approx(103.1)
    clock.now = 102.0  # 0.4 s after the re-authentication began: not another one yet
    assert auth.on_request(_request(HANDSHAKE)) is None
    assert results == [("PLAIN", True), ("PLAIN", True)]
