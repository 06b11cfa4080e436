"""Basic authentication of the registry's REST listeners against the broker's SCRAM credentials and PLAIN users."""

from __future__ import annotations

import base64
import json
import logging

import pytest

from broker.schema_registry.auth import BasicAuthenticator, parse_basic_header
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism

SHA256 = ScramMechanism.from_name("SCRAM-SHA-256")
SHA512 = ScramMechanism.from_name("SCRAM-SHA-512")
CREDENTIALS = {
    ("SCRAM-SHA-256", "alice"): ScramCredential.from_password(SHA256, "alice-secret"),
    ("SCRAM-SHA-512", "bob"): ScramCredential.from_password(SHA512, "bob-secret", iterations=8192),
    ("SCRAM-SHA-256", "carol"): ScramCredential.from_password(SHA256, "carol-256"),
    ("SCRAM-SHA-512", "carol"): ScramCredential.from_password(SHA512, "carol-512"),
}


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def authenticator() -> BasicAuthenticator:
    return BasicAuthenticator({"admin": "admin-secret", "p:q": "x"}, lambda m, u: CREDENTIALS.get((m, u)))


@pytest.mark.parametrize(
    ("header", "principal"),
    [
        (basic("alice", "alice-secret"), "User:alice"),
        (basic("alice", "wrong"), None),
        (basic("bob", "bob-secret"), "User:bob"),
        (basic("bob", "bob-secret "), None),
        (basic("carol", "carol-256"), "User:carol"),
        (basic("carol", "carol-512"), "User:carol"),
        (basic("admin", "admin-secret"), "User:admin"),
        (basic("admin", "admin"), None),
        (basic("nobody", "x"), None),
        (basic("alice", "pass:with:colons"), None),
        (None, None),
        ("", None),
        ("Bearer abc", None),
        ("Basic !!!notbase64", None),
        ("Basic " + base64.b64encode(b"no-colon").decode(), None),
        ("basic " + base64.b64encode(b"admin:admin-secret").decode(), "User:admin"),
    ],
)
def test_credentials_are_checked_against_scram_and_plain_users(header, principal):
    assert authenticator().authenticate(header) == principal


def test_a_password_with_colons_is_split_at_the_first_colon():
    assert parse_basic_header(basic("u", "a:b:c")) == ("u", "a:b:c")


def test_a_remembered_success_is_forgotten_when_the_credential_changes():
    store = {("SCRAM-SHA-256", "dave"): ScramCredential.from_password(SHA256, "old")}
    auth = BasicAuthenticator({}, lambda m, u: store.get((m, u)))
    assert auth.authenticate(basic("dave", "old")) == "User:dave"
    store[("SCRAM-SHA-256", "dave")] = ScramCredential.from_password(SHA256, "new")
    assert auth.authenticate(basic("dave", "old")) is None
    assert auth.authenticate(basic("dave", "new")) == "User:dave"


def test_failures_are_logged_with_the_user_but_never_the_password(caplog):
    caplog.set_level(logging.DEBUG, logger="kafkalog.schema_registry.auth")
    authenticator().authenticate(basic("alice", "very-secret-guess"), peer="10.0.0.1:5000")
    text = caplog.text
    assert "alice" in text and "10.0.0.1:5000" in text
    assert "very-secret-guess" not in text
    assert "secret" not in repr(authenticator())


def test_the_challenge_is_a_401_naming_the_realm_with_confluents_body():
    response = BasicAuthenticator.challenge()
    assert response.status == 401
    assert ("WWW-Authenticate", 'Basic realm="SchemaRegistry"') in response.headers
    assert json.loads(response.body) == {"error_code": 401, "message": "Unauthorized"}
