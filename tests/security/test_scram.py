"""SCRAM-SHA-256/512 (RFC 5802/7677) as Kafka speaks it: vectors, credentials, every failure path."""

from __future__ import annotations

import base64
import time

import pytest

from spark_kafkalog.security.errors import SaslAuthenticationFailed
from spark_kafkalog.security.sasl import SaslServerCallbacks, create_server
from spark_kafkalog.security.sasl.scram import (
    ScramClient,
    ScramCredential,
    ScramMechanism,
    ScramServer,
    escape_saslname,
    unescape_saslname,
)

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512

# RFC 7677 §3
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC_CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def generic(mechanism: ScramMechanism) -> str:
    return (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism "
        + mechanism.mechanism_name
    )


def store(users: dict[str, str], mechanism: ScramMechanism = SHA256, iterations: int = 4096):
    creds = {u: ScramCredential.from_password(mechanism, p, iterations) for u, p in users.items()}
    return lambda mech, user: creds.get(user) if mech == mechanism.mechanism_name else None


def rfc_server() -> ScramServer:
    credential = ScramCredential.from_password(SHA256, "pencil", 4096, RFC_SALT)
    return ScramServer(SHA256, lambda m, u: credential if u == "user" else None, nonce=RFC_SERVER_NONCE)


def test_rfc7677_exchange_byte_for_byte():
    client = ScramClient(SHA256, "user", "pencil", nonce=RFC_CLIENT_NONCE)
    server = rfc_server()
    assert client.initial_response() == RFC_CLIENT_FIRST
    assert server.evaluate_response(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert client.evaluate_challenge(RFC_SERVER_FIRST) == RFC_CLIENT_FINAL
    assert server.evaluate_response(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert client.evaluate_challenge(RFC_SERVER_FINAL) is None
    assert client.complete and server.complete
    assert server.principal == "User:user" and not server.token_authenticated


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
@pytest.mark.parametrize("username", ["alice", "a=b,c", "=2C", "ünï code", "x" * 300])
def test_round_trip(mechanism, username):
    server = create_server(
        mechanism.mechanism_name, SaslServerCallbacks(scram_credential=store({username: "pw 1"}, mechanism, 8192))
    )
    client = ScramClient(mechanism, username, "pw 1")
    final = client.evaluate_challenge(server.evaluate_response(client.initial_response()))
    assert final is not None
    assert client.evaluate_challenge(server.evaluate_response(final)) is None
    assert client.complete and server.complete and server.principal == f"User:{username}"


def test_client_escapes_the_username():
    client = ScramClient(SHA256, "a=b,c", "pw", nonce="abc")
    assert client.initial_response() == b"n,,n=a=3Db=2Cc,r=abc"


@pytest.mark.parametrize(
    "name, escaped", [("a=b,c", "a=3Db=2Cc"), ("=", "=3D"), (",", "=2C"), ("=2C", "=3D2C"), ("plain", "plain")]
)
def test_saslname_escaping_table(name, escaped):
    assert escape_saslname(name) == escaped
    assert unescape_saslname(escaped) == name


@pytest.mark.parametrize("bad", ["a=b", "a=2c", "a=", "a,b", "=3"])
def test_saslname_invalid_escapes(bad):
    with pytest.raises(ValueError):
        unescape_saslname(bad)


# -- credentials ---------------------------------------------------------------------------------


def test_credential_string_is_kafkas_format():
    credential = ScramCredential.from_password(SHA256, "pencil", 4096, RFC_SALT)
    text = credential.to_kafka_string()
    keys = [item.split("=", 1)[0] for item in text.split(",")]
    assert keys == ["salt", "stored_key", "server_key", "iterations"]
    assert text.startswith("salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=") and text.endswith(",iterations=4096")
    assert ScramCredential.from_kafka_string(text) == credential


def test_credential_written_by_kafka_authenticates():
    # computed independently: RFC 7677's StoredKey/ServerKey for "pencil" (H(ClientKey), HMAC(salted, "Server Key"))
    import hashlib
    import hmac

    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", RFC_SALT, 4096)
    stored = hashlib.sha256(hmac.new(salted, b"Client Key", "sha256").digest()).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    kafka_text = (
        f"salt={base64.b64encode(RFC_SALT).decode()},stored_key={base64.b64encode(stored).decode()},"
        f"server_key={base64.b64encode(server_key).decode()},iterations=4096"
    )
    credential = ScramCredential.from_kafka_string(kafka_text)
    server = ScramServer(SHA256, lambda m, u: credential, nonce=RFC_SERVER_NONCE)
    server.evaluate_response(RFC_CLIENT_FIRST)
    assert server.evaluate_response(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL


def test_from_salted_password_matches_from_password():
    salted = SHA512.salted_password("secret", b"salty", 8192)
    assert ScramCredential.from_salted_password(SHA512, salted, b"salty", 8192) == ScramCredential.from_password(
        SHA512, "secret", 8192, b"salty"
    )


def test_default_salt_is_a_fresh_base36_string():
    a, b = (ScramCredential.from_password(SHA256, "pw") for _ in range(2))
    assert a.salt != b.salt
    assert a.salt.decode("ascii").isalnum() and a.salt.lower() == a.salt
    assert a.iterations == 4096


@pytest.mark.parametrize(
    "text",
    [
        "salt=AA==,stored_key=AA==,server_key=AA==",
        "salt=AA==,stored_key=AA==,server_key=AA==,iterations=1,extra=1",
        "salt=AA==,stored_key=AA==,server_key=AA==,iterations=x",
        "salt=AA==,stored_key=AA==,server_key=AA==,iterations=0",
        "salt=!!,stored_key=AA==,server_key=AA==,iterations=4096",
        "salt=AA==,stored_key=AA==,server=AA==,iterations=4096",
        "",
    ],
)
def test_malformed_credential_strings(text):
    with pytest.raises(ValueError):
        ScramCredential.from_kafka_string(text)


def test_credential_repr_hides_keys():
    credential = ScramCredential.from_password(SHA256, "pw", 4096, b"salt")
    assert base64.b64encode(credential.stored_key).decode() not in repr(credential)
    assert repr(credential.stored_key) not in repr(credential) and repr(credential.server_key) not in repr(credential)


def test_from_password_refuses_too_few_iterations():
    with pytest.raises(ValueError, match="minimum 4096"):
        ScramCredential.from_password(SHA256, "pw", 4095)


@pytest.mark.parametrize(
    "mechanism, name, wire, digest", [(SHA256, "SCRAM-SHA-256", 1, 32), (SHA512, "SCRAM-SHA-512", 2, 64)]
)
def test_mechanism_table(mechanism, name, wire, digest):
    assert (mechanism.mechanism_name, mechanism.wire_type, mechanism.digest_size) == (name, wire, digest)
    assert ScramMechanism.from_name(name) is mechanism and ScramMechanism.from_wire_type(wire) is mechanism
    assert (mechanism.min_iterations, mechanism.max_iterations) == (4096, 16384)


# -- server failures: one generic message ------------------------------------------------------------


def _server_first(server: ScramServer, client: ScramClient) -> bytes:
    return server.evaluate_response(client.initial_response())


def _failure(server: ScramServer, message: bytes) -> SaslAuthenticationFailed:
    with pytest.raises(SaslAuthenticationFailed) as e:
        server.evaluate_response(message)
    assert str(e.value) == generic(SHA256)
    assert not server.complete
    return e.value


def test_wrong_password_and_unknown_user_fail_identically():
    lookup = store({"alice": "right"})
    outcomes = []
    for user, password in (("alice", "wrong"), ("mallory", "wrong")):
        server = ScramServer(SHA256, lookup)
        client = ScramClient(SHA256, user, password)
        server_first = _server_first(server, client)
        salt_b64 = server_first.decode().split(",")[1]
        final = client.evaluate_challenge(server_first)
        assert final is not None
        error = _failure(server, final)
        outcomes.append((str(error), server_first.decode().split(",")[2], len(salt_b64) > 2, error.detail))
    assert outcomes[0][:3] == outcomes[1][:3]
    assert "invalid proof" in outcomes[0][3] and "unknown user" in outcomes[1][3]


def test_unknown_users_salt_is_stable_across_attempts():
    salts = set()
    for _ in range(3):
        server = ScramServer(SHA256, store({}))
        salts.add(_server_first(server, ScramClient(SHA256, "ghost", "pw")).decode().split(",")[1])
    assert len(salts) == 1


def _final_with(client_final: bytes, **changes: str) -> bytes:
    parts = client_final.decode().split(",")
    for i, part in enumerate(parts):
        key = part[0]
        if key in changes:
            parts[i] = f"{key}={changes[key]}"
    return ",".join(parts).encode()


@pytest.mark.parametrize(
    "tamper, reason",
    [
        (lambda f: _final_with(f, r=RFC_CLIENT_NONCE + "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k1"), "nonce"),
        (lambda f: _final_with(f, r=RFC_CLIENT_NONCE), "nonce"),  # the client nonce alone
        (
            lambda f: _final_with(f, r="x" + RFC_CLIENT_NONCE + RFC_SERVER_NONCE),
            "nonce",
        ),  # CVE-2024-56128: only endswith
        (lambda f: _final_with(f, p=base64.b64encode(b"\0" * 32).decode()), "invalid proof"),
        (lambda f: _final_with(f, p=base64.b64encode(b"\0" * 31).decode()), "wrong length"),
        (lambda f: _final_with(f, p="not base64!"), "malformed"),
        (lambda f: _final_with(f, c=base64.b64encode(b"y,,").decode()), "channel binding"),
        (lambda f: f.replace(b",p=", b",q="), "no proof"),
        (lambda f: b"r=" + f, "malformed"),
        (lambda f: b"\xff", "UTF-8"),
    ],
)
def test_client_final_failures(tamper, reason):
    server = rfc_server()
    server.evaluate_response(RFC_CLIENT_FIRST)
    error = _failure(server, tamper(RFC_CLIENT_FINAL))
    assert reason in error.detail


@pytest.mark.parametrize(
    "message, reason",
    [
        (b"y,,n=user,r=abc", "gs2 header"),
        (b"p=tls-unique,,n=user,r=abc", "gs2 header"),
        (b"n,,r=abc,n=user", "malformed"),
        (b"n,,n=user", "malformed"),
        (b"n,,n=,r=abc", "empty username"),
        (b"n,,n=us=er,r=abc", "malformed"),
        (b"n,,n=user,r=", "bad nonce"),
        (b"n,a=admin,n=user,r=abc", "authorization id differs"),
        (b"n,x=admin,n=user,r=abc", "malformed"),
        (b"n,,m=ext,n=user,r=abc", "malformed"),
        (b"", "gs2 header"),
    ],
)
def test_client_first_failures(message, reason):
    error = _failure(rfc_server(), message)
    assert reason in error.detail


def _manual_final(server_first: bytes, client_first: bytes, password: str) -> bytes:
    """An RFC 5802 client-final computed here, for client-first messages ScramClient never sends."""
    gs2, bare = client_first.decode().split(",", 2)[:2], client_first.decode().split(",", 2)[2]
    nonce, salt, iterations = (item[2:] for item in server_first.decode().split(","))
    salted = SHA256.salted_password(password, base64.b64decode(salt), int(iterations))
    client_key = SHA256.hmac(salted, b"Client Key")
    without_proof = f"c={base64.b64encode((','.join(gs2) + ',').encode()).decode()},r={nonce}"
    auth_message = f"{bare},{server_first.decode()},{without_proof}".encode()
    proof = bytes(a ^ b for a, b in zip(client_key, SHA256.hmac(SHA256.hash(client_key), auth_message)))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


@pytest.mark.parametrize(
    "client_final_nonce, accepted",
    [
        ("{S}", True),  # RFC 5802: server-first's nonce (the client's followed by the server's)
        ("{c}{S}", True),  # librdkafka < 2.6.1 (Debian's kcat): its own nonce once more in front
        ("x{S}", False),  # any other prefix: CVE-2024-56128
        ("{c}{c}{S}", False),
        ("SNONCE", False),
        ("{S}{c}", False),
        ("{c}", False),
    ],
)
def test_client_final_nonce_continuity(client_final_nonce, accepted):
    server = ScramServer(SHA256, store({"alice": "pw"}), nonce="SNONCE")
    first = b"n,,n=alice,r=cnonce"
    server_first = server.evaluate_response(first)
    assert server_first.startswith(b"r=cnonceSNONCE,")
    nonce = client_final_nonce.format(c="cnonce", S="cnonceSNONCE")
    salt_part = server_first.decode().split(",", 1)[1]  # s=<salt>,i=<iterations>
    without_proof = f"c=biws,r={nonce}"  # the proof covers server-first as the server sent it
    salted = SHA256.salted_password("pw", base64.b64decode(salt_part.split(",")[0][2:]), int(salt_part.split("i=")[1]))
    client_key = SHA256.hmac(salted, b"Client Key")
    auth_message = f"n=alice,r=cnonce,{server_first.decode()},{without_proof}".encode()
    proof = bytes(a ^ b for a, b in zip(client_key, SHA256.hmac(SHA256.hash(client_key), auth_message)))
    final = f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
    if accepted:
        assert server.evaluate_response(final).startswith(b"v=") and server.principal == "User:alice"
    else:
        assert "nonce" in _failure(server, final).detail


def test_authzid_equal_to_the_user_is_accepted_and_binds_the_channel_binding():
    server = ScramServer(SHA256, store({"a,b": "pw"}))
    first = b"n,a=a=2Cb,n=a=2Cb,r=abc"
    final = _manual_final(server.evaluate_response(first), first, "pw")
    assert final.startswith(b"c=" + base64.b64encode(b"n,a=a=2Cb,"))
    assert server.evaluate_response(final).startswith(b"v=")
    assert server.principal == "User:a,b"


def test_unknown_extensions_are_ignored():
    server = ScramServer(SHA256, store({"alice": "pw"}))
    first = b"n,,n=alice,r=n0nce,foo=bar,tokenauthx=true"
    final = _manual_final(server.evaluate_response(first), first, "pw")
    assert server.evaluate_response(final).startswith(b"v=")
    assert server.principal == "User:alice" and not server.token_authenticated


def test_messages_after_completion_or_failure_fail():
    server = rfc_server()
    server.evaluate_response(RFC_CLIENT_FIRST)
    server.evaluate_response(RFC_CLIENT_FINAL)
    _failure(server, RFC_CLIENT_FINAL)
    failed = rfc_server()
    _failure(failed, b"garbage")
    _failure(failed, RFC_CLIENT_FIRST)


def test_each_exchange_gets_a_fresh_server_nonce():
    nonces = {
        _server_first(ScramServer(SHA256, store({"a": "pw"})), ScramClient(SHA256, "a", "pw", nonce="c")).split(b",")[0]
        for _ in range(5)
    }
    assert len(nonces) == 5 and all(n.startswith(b"r=c") and len(n) > 20 for n in nonces)


# -- delegation tokens (tokenauth=true) --------------------------------------------------------------


def test_token_login_uses_the_token_lookup_and_reports_the_owner():
    token_credential = ScramCredential.from_password(SHA512, "hmac-b64", 4096)
    callbacks = SaslServerCallbacks(
        scram_credential=store({"token-1": "not-this"}, SHA512),
        scram_token_credential=lambda m, t: (token_credential, "alice", 1_900_000_000_000) if t == "token-1" else None,
    )
    server = create_server("SCRAM-SHA-512", callbacks)
    client = ScramClient(SHA512, "token-1", "hmac-b64", token_auth=True)
    assert client.initial_response().endswith(b",tokenauth=true")
    final = client.evaluate_challenge(server.evaluate_response(client.initial_response()))
    assert final is not None
    client.evaluate_challenge(server.evaluate_response(final))
    assert client.complete and server.token_authenticated and server.principal == "User:alice"
    assert server.credential_expiry_ms == 1_900_000_000_000


def test_token_lookup_without_expiry_and_user_logins_have_no_credential_expiry():
    token_credential = ScramCredential.from_password(SHA256, "hmac", 4096)
    server = create_server(
        "SCRAM-SHA-256", SaslServerCallbacks(scram_token_credential=lambda m, t: (token_credential, "bob"))
    )
    client = ScramClient(SHA256, "tok", "hmac", token_auth=True)
    final = client.evaluate_challenge(server.evaluate_response(client.initial_response()))
    assert final is not None
    server.evaluate_response(final)
    assert server.principal == "User:bob" and server.credential_expiry_ms is None
    rfc = rfc_server()
    rfc.evaluate_response(RFC_CLIENT_FIRST)
    rfc.evaluate_response(RFC_CLIENT_FINAL)
    assert rfc.credential_expiry_ms is None


def test_stored_credential_below_4096_iterations_is_refused_like_a_bad_password():
    weak = ScramCredential.from_salted_password(SHA256, SHA256.salted_password("pw", b"s", 1000), b"s", 1000)
    server = ScramServer(SHA256, lambda m, u: weak)
    server_first = server.evaluate_response(b"n,,n=alice,r=abc")
    assert server_first.endswith(b",i=4096")  # the stand-in credential, not the weak one
    client = ScramClient(SHA256, "alice", "pw", nonce="abc")
    final = client.evaluate_challenge(server_first)
    assert final is not None
    error = _failure(server, final)
    assert "below the minimum 4096" in error.detail


@pytest.mark.parametrize("has_lookup", [False, True])
def test_token_login_without_a_known_token_fails_generically(has_lookup):
    callbacks = SaslServerCallbacks(
        scram_credential=store({"token-1": "hmac-b64"}),  # a user of that name must not be used instead
        scram_token_credential=(lambda m, t: None) if has_lookup else None,
    )
    server = create_server("SCRAM-SHA-256", callbacks)
    client = ScramClient(SHA256, "token-1", "hmac-b64", token_auth=True)
    final = client.evaluate_challenge(server.evaluate_response(client.initial_response()))
    assert final is not None
    with pytest.raises(SaslAuthenticationFailed) as e:
        server.evaluate_response(final)
    assert str(e.value) == generic(SHA256)
    assert ("delegation token" in e.value.detail) and not server.token_authenticated


# -- client checks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "server_first, reason",
    [
        ("r=cnonceSNONCE,s=c2FsdA==,i=4095", "below the minimum 4096"),
        ("r=cnonceSNONCE,s=c2FsdA==,i=10000000", "above this client's cap 16384"),
        ("r=cnonceSNONCE,s=c2FsdA==,i=99999999999999999999", "not a number"),
        ("r=cnonceSNONCE,s=c2FsdA==,i=-1", "not a number"),
        ("r=otherSNONCE,s=c2FsdA==,i=4096", "does not extend"),
        ("r=cnonce,s=c2FsdA==,i=4096", "does not extend"),
        ("r=cnonceSNONCE,i=4096", "malformed"),
        ("r=cnonceSNONCE,s=!!!,i=4096", "malformed"),
        ("e=other-error", "server error"),
    ],
)
def test_client_rejects_bad_server_first(server_first, reason):
    client = ScramClient(SHA256, "alice", "hunter2", nonce="cnonce")
    started = time.monotonic()
    with pytest.raises(SaslAuthenticationFailed, match=reason) as e:
        client.evaluate_challenge(server_first.encode())
    assert time.monotonic() - started < 0.5  # refused before any PBKDF2 run
    assert "hunter2" not in str(e.value)


def test_client_cap_is_configurable():
    client = ScramClient(SHA256, "alice", "pw", nonce="c", max_iterations=20000)
    assert client.evaluate_challenge(b"r=cS,s=c2FsdA==,i=20000") is not None
    strict = ScramClient(SHA256, "alice", "pw", nonce="c", max_iterations=4096)
    with pytest.raises(SaslAuthenticationFailed, match="cap 4096"):
        strict.evaluate_challenge(b"r=cS,s=c2FsdA==,i=4097")


@pytest.mark.parametrize(
    "server_final, reason",
    [
        (RFC_SERVER_FINAL.replace(b"6rri", b"6rrj"), "invalid server signature"),
        (b"v=" + base64.b64encode(b"\0" * 32), "invalid server signature"),
        (b"v=***", "malformed"),
        (b"x=abc", "malformed"),
        (b"e=invalid-proof", "server error"),
    ],
)
def test_client_rejects_a_wrong_server_final(server_final, reason):
    client = ScramClient(SHA256, "user", "pencil", nonce=RFC_CLIENT_NONCE)
    client.evaluate_challenge(RFC_SERVER_FIRST)
    with pytest.raises(SaslAuthenticationFailed, match=reason):
        client.evaluate_challenge(server_final)
    assert not client.complete


def test_no_secret_in_reprs_or_errors():
    client = ScramClient(SHA256, "alice", "hunter2")
    server = ScramServer(SHA256, store({"alice": "hunter2"}))
    assert "hunter2" not in repr(client) and "hunter2" not in repr(server)
    final = client.evaluate_challenge(server.evaluate_response(client.initial_response()))
    assert final is not None
    tampered = _final_with(final, p=base64.b64encode(b"\1" * 32).decode())
    with pytest.raises(SaslAuthenticationFailed) as e:
        server.evaluate_response(tampered)
    assert "hunter2" not in str(e.value) and "hunter2" not in e.value.detail
