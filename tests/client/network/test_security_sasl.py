"""The sans-IO connection's SASL: SaslHandshake v1/v0, SaslAuthenticate rounds, errors 33/34/58, KIP-368.

The broker side is canned frames; the mechanism is a scripted ``SaslClient`` (two rounds, like SCRAM), so
these tests pin the connection's sequencing, not a mechanism's arithmetic (``tests/security`` does that).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import pytest

from spark_kafkalog.client.errors import KafkaAuthenticationError, KafkaClientError, KafkaConnectionError
from spark_kafkalog.client.network.connection import ConnectionState, KafkaConnection
from spark_kafkalog.client.network.security import ClientSecurity
from spark_kafkalog.client.network.versions import CLIENT_VERSIONS
from spark_kafkalog.protocol import API_BY_KEY, FrameDecoder, decode_request, encode_response
from spark_kafkalog.security.errors import SaslAuthenticationFailed

AV = API_BY_KEY[18]
META = API_BY_KEY[3]
HANDSHAKE = API_BY_KEY[17]
AUTHENTICATE = API_BY_KEY[36]
PEER = "1 (h:9092)"
SECRET = "s3cret-password"


@dataclass(frozen=True)
class Settings:
    mechanism: str = "SCRAM-SHA-512"
    password: str = field(default=SECRET, repr=False)


class ScriptedClient:
    """Sends ``first``; answers each expected challenge with the next token; completes on the last."""

    def __init__(self, mechanism: str, script: list[tuple[bytes, bytes | None]], expiry_ms: int | None = None):
        self.mechanism = mechanism
        self._script = list(script)
        self._complete = False
        self._expiry = expiry_ms
        self.seen: list[bytes] = []

    def initial_response(self) -> bytes:
        return b"client-first"

    def evaluate_challenge(self, challenge: bytes) -> bytes | None:
        self.seen.append(challenge)
        expected, reply = self._script.pop(0)
        if challenge != expected:
            raise SaslAuthenticationFailed("server signature mismatch")
        if reply is None:
            self._complete = True
        return reply

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def credential_expiry_ms(self) -> int | None:
        return self._expiry


SCRAM_LIKE = [(b"server-first", b"client-final"), (b"server-final", None)]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def all_versions(overrides=None):
    ranges = {k: (v.lo, v.hi) for k, v in CLIENT_VERSIONS.items()}
    ranges.update(overrides or {})
    return ranges


def api_versions_body(ranges):
    K = AV.Response.ApiVersion
    return AV.Response(api_keys=[K(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in ranges.items()])


def sent(conn: KafkaConnection):
    return [decode_request(bytes(f)) for f in FrameDecoder().feed(conn.data_to_send())]


def answer(conn: KafkaConnection, req, body):
    return conn.receive_data(
        encode_response(req.header.api_key, req.version, req.header.correlation_id, body, framed=True)
    )


def open_connection(*, ranges=None, script=SCRAM_LIKE, clock=None, expiry_ms=None, wall_ms=10_000):
    clients: list[ScriptedClient] = []

    def factory(settings):
        client = ScriptedClient(settings.mechanism, script, expiry_ms)
        clients.append(client)
        return client

    conn = KafkaConnection(
        PEER,
        security=ClientSecurity("SASL_PLAINTEXT", sasl=Settings()),
        sasl_client_factory=factory,
        clock=clock or Clock(),
        wall_clock_ms=lambda: wall_ms,
        reauth_fraction=lambda: 0.9,
    )
    conn.start_handshake()
    (av,) = sent(conn)
    answer(conn, av, api_versions_body(ranges or all_versions()))
    return conn, clients


def authenticate_v1(conn: KafkaConnection, *, lifetime_ms: int = 0):
    """Drive the broker side of a successful SCRAM-like v1 exchange; returns the requests seen."""
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["PLAIN", "SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    answer(conn, a1, AUTHENTICATE.Response(auth_bytes=b"server-first"))
    (a2,) = sent(conn)
    answer(conn, a2, AUTHENTICATE.Response(auth_bytes=b"server-final", session_lifetime_ms=lifetime_ms))
    return hs, a1, a2


def test_v1_handshake_then_authenticate_rounds_and_ready_only_after_the_last():
    conn, clients = open_connection()
    assert conn.state is ConnectionState.HANDSHAKE
    (hs,) = sent(conn)
    assert (hs.header.api_key, hs.version, hs.body.mechanism) == (17, 1, "SCRAM-SHA-512")
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    assert (a1.header.api_key, a1.version, bytes(a1.body.auth_bytes)) == (36, 2, b"client-first")
    assert not conn.ready
    answer(conn, a1, AUTHENTICATE.Response(auth_bytes=b"server-first"))
    (a2,) = sent(conn)
    assert bytes(a2.body.auth_bytes) == b"client-final"
    assert not conn.ready
    answer(conn, a2, AUTHENTICATE.Response(auth_bytes=b"server-final"))
    assert conn.ready and conn.authenticated
    assert clients[0].seen == [b"server-first", b"server-final"]
    assert conn.reauth_at is None  # no SessionLifetimeMs: no re-authentication
    assert conn.in_flight == 0


def test_saslauthenticate_version_is_the_highest_the_broker_lists():
    conn, _ = open_connection(ranges=all_versions({36: (0, 1)}))
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    assert a1.version == 1


def test_v0_handshake_and_raw_tokens_when_the_broker_lists_no_saslauthenticate():
    ranges = all_versions({17: (0, 0)})
    del ranges[36]
    conn, _ = open_connection(ranges=ranges)
    (hs,) = sent(conn)
    assert (hs.header.api_key, hs.version) == (17, 0)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    raw = conn.data_to_send()
    assert bytes(raw) == struct.pack(">i", 12) + b"client-first"  # no Kafka header
    conn.receive_data(struct.pack(">i", 12) + b"server-first")
    assert bytes(conn.data_to_send()) == struct.pack(">i", 12) + b"client-final"
    assert not conn.ready
    conn.receive_data(struct.pack(">i", 12) + b"server-final")
    assert conn.ready
    # then ordinary requests with headers and correlation ids
    request = conn.send(3, META.Request(topics=[]))
    (meta,) = sent(conn)
    assert meta.header.correlation_id == request.correlation_id


def test_v0_broker_closing_during_the_exchange_is_an_authentication_failure():
    ranges = all_versions({17: (0, 0)})
    del ranges[36]
    conn, _ = open_connection(ranges=ranges)
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    conn.data_to_send()
    conn.close(KafkaConnectionError(f"connection to broker {PEER} lost (closed by the broker)", broker=PEER))
    error = conn.close_reason
    assert isinstance(error, KafkaAuthenticationError)
    assert error.retriable is False
    assert "SCRAM-SHA-512" in str(error) and PEER in str(error)


def test_unsupported_mechanism_lists_the_brokers_mechanisms():
    conn, _ = open_connection()
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(error_code=33, mechanisms=["PLAIN", "SCRAM-SHA-256"]))
    error = conn.close_reason
    assert isinstance(error, KafkaAuthenticationError)
    assert conn.closed
    assert error.retriable is False
    assert error.error_code == 33
    assert error.enabled_mechanisms == ("PLAIN", "SCRAM-SHA-256")
    assert "it enables PLAIN, SCRAM-SHA-256" in str(error)
    assert "SCRAM-SHA-512" in str(error)


def test_illegal_sasl_state_hints_at_a_listener_without_sasl():
    conn, _ = open_connection()
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(error_code=34, mechanisms=[]))
    assert isinstance(conn.close_reason, KafkaAuthenticationError)
    assert "ILLEGAL_SASL_STATE (34)" in str(conn.close_reason)
    assert "security.protocol" in str(conn.close_reason)


def test_a_broker_without_saslhandshake_fails_with_a_message_naming_security_protocol():
    ranges = all_versions()
    del ranges[17], ranges[36]
    conn, _ = open_connection(ranges=ranges)
    assert isinstance(conn.close_reason, KafkaAuthenticationError)
    assert "not a SASL listener" in str(conn.close_reason)


def test_error_58_is_a_non_retriable_error_naming_broker_mechanism_and_message():
    conn, _ = open_connection()
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    broker_message = (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
    )
    answer(conn, a1, AUTHENTICATE.Response(error_code=58, error_message=broker_message))
    error = conn.close_reason
    assert isinstance(error, KafkaAuthenticationError) and isinstance(error, KafkaClientError)
    assert not isinstance(error, KafkaConnectionError)  # the pool must not try the next server with it
    assert (error.error_code, error.retriable, error.broker, error.mechanism) == (58, False, PEER, "SCRAM-SHA-512")
    assert broker_message in str(error)
    assert PEER in str(error)
    assert SECRET not in str(error)
    assert conn.closed


def test_a_broker_answer_the_mechanism_rejects_fails_authentication():
    conn, _ = open_connection()
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    answer(conn, a1, AUTHENTICATE.Response(auth_bytes=b"server-first"))
    (a2,) = sent(conn)
    answer(conn, a2, AUTHENTICATE.Response(auth_bytes=b"forged-server-final"))
    assert isinstance(conn.close_reason, KafkaAuthenticationError)
    assert "server signature mismatch" in str(conn.close_reason)


def test_session_lifetime_schedules_reauthentication_at_the_drawn_fraction():
    clock = Clock()
    conn, _ = open_connection(clock=clock)
    authenticate_v1(conn, lifetime_ms=10_000)
    assert conn.session_lifetime_ms == 10_000
    assert conn.reauth_at == pytest.approx(clock.now + 9.0)  # 90 % (fraction injected)


def test_credential_expiry_caps_the_session_lifetime():
    clock = Clock()
    conn, _ = open_connection(clock=clock, expiry_ms=10_000 + 4_000, wall_ms=10_000)
    authenticate_v1(conn, lifetime_ms=60_000)
    assert conn.session_lifetime_ms == 4_000
    assert conn.reauth_at == pytest.approx(clock.now + 3.6)


def test_default_reauth_fraction_is_between_85_and_95_percent():
    conn = KafkaConnection(PEER)
    fractions = {conn._reauth_fraction() for _ in range(200)}
    assert min(fractions) >= 0.85 and max(fractions) <= 0.95
    assert len(fractions) > 1


def test_reauthentication_runs_in_order_and_holds_requests_sent_meanwhile():
    clock = Clock()
    conn, clients = open_connection(clock=clock)
    authenticate_v1(conn, lifetime_ms=10_000)
    before = conn.send(3, META.Request(topics=[]))  # in flight when re-authentication starts
    (meta_before,) = sent(conn)
    clock.now += 8.9
    assert conn.maybe_reauthenticate() is False  # 89 %: not yet
    clock.now += 0.2
    during = conn.send(3, META.Request(topics=[]))  # finds it due: SaslHandshake goes first, this waits
    assert conn.reauthenticating
    (hs,) = sent(conn)
    assert (hs.header.api_key, hs.body.mechanism) == (17, "SCRAM-SHA-512")
    assert conn.in_flight == 2  # `before` in flight, `during` held back
    # the response to the earlier request comes first, as the broker answers in order
    done = conn.receive_data(metadata_response(meta_before))
    assert done == [before]
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    assert bytes(a1.body.auth_bytes) == b"client-first"
    answer(conn, a1, AUTHENTICATE.Response(auth_bytes=b"server-first"))
    (a2,) = sent(conn)
    also_during = conn.send(3, META.Request(topics=[]))
    assert conn.data_to_send() == b""  # held: nothing may come between the SASL requests
    answer(conn, a2, AUTHENTICATE.Response(auth_bytes=b"server-final", session_lifetime_ms=10_000))
    assert not conn.reauthenticating and conn.ready
    released = sent(conn)
    assert [r.header.correlation_id for r in released] == [during.correlation_id, also_during.correlation_id]
    done = conn.receive_data(b"".join(metadata_response(r) for r in released))
    assert done == [during, also_during]
    assert len(clients) == 2  # a fresh SaslClient per exchange
    assert conn.reauthentications == 1
    assert conn.reauth_at == pytest.approx(clock.now + 9.0)


def test_failed_reauthentication_fails_the_held_requests():
    clock = Clock()
    conn, _ = open_connection(clock=clock)
    authenticate_v1(conn, lifetime_ms=1_000)
    clock.now += 1.0
    held = conn.send(3, META.Request(topics=[]))
    (hs,) = sent(conn)
    answer(conn, hs, HANDSHAKE.Response(mechanisms=["SCRAM-SHA-512"]))
    (a1,) = sent(conn)
    done = answer(conn, a1, AUTHENTICATE.Response(error_code=58, error_message="bad credentials"))
    assert done == [held]
    assert isinstance(held.error, KafkaAuthenticationError)
    assert conn.closed and conn.in_flight == 0


def test_plaintext_connections_never_send_sasl_requests():
    conn = KafkaConnection(PEER, security=ClientSecurity())
    conn.start_handshake()
    (av,) = sent(conn)
    answer(conn, av, api_versions_body(all_versions()))
    assert conn.ready and conn.data_to_send() == b""


def metadata_response(req) -> bytes:
    return encode_response(3, req.version, req.header.correlation_id, META.Response(brokers=[], topics=[]), framed=True)
