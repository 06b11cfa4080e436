"""The connection's authenticator with the real mechanisms (``spark_kafkalog.security.sasl``: PLAIN, SCRAM-SHA-256
driven by its own client), and the principal of an SSL listener from the client certificate and mapping rules."""

from __future__ import annotations

import pytest

from broker.security.listener_security import ListenerSecurity
from spark_kafkalog.protocol import ApiKey, ErrorCode
from spark_kafkalog.security.sasl import SaslClientSettings, SaslServerCallbacks, create_client
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism
from tests.security.certs import CLIENT_DN
from tests.security.certs import tls_material as _tls_material

from ..wire import Wire
from .secure import (
    TlsWire,
    address_of,
    client_context,
    extra_server,
    recorded,
    sasl_authenticate,
    sasl_handshake,
    server_context,
)

K = ApiKey
tls_material = pytest.fixture(scope="session")(_tls_material)
SCRAM = ScramMechanism.from_name("SCRAM-SHA-256")
CREDENTIALS = {"alice": ScramCredential.from_password(SCRAM, "alice-secret")}


def _scram_credential(mechanism: str, username: str):
    return CREDENTIALS.get(username) if mechanism == "SCRAM-SHA-256" else None


@pytest.fixture
def sasl_server(broker):
    security = ListenerSecurity(
        name="x",
        protocol="SASL_PLAINTEXT",
        sasl_mechanisms=("PLAIN", "SCRAM-SHA-256"),
        sasl_callbacks=SaslServerCallbacks(plain_users={"bob": "bob-secret"}, scram_credential=_scram_credential),
        failed_authentication_delay_ms=20,
    )
    with extra_server(broker, security, record=True) as server:
        yield server


def _exchange(w: Wire, mechanism: str, username: str, password: str):
    """The client's tokens as SaslAuthenticate v2 requests until it has nothing more to send; the last response."""
    client = create_client(SaslClientSettings(mechanism=mechanism, username=username, password=password))
    assert sasl_handshake(w, mechanism).error_code == 0
    token: bytes | None = client.initial_response()
    resp = None
    while token is not None:
        resp = sasl_authenticate(w, token)
        if resp.error_code != 0:
            return resp
        token = client.evaluate_challenge(resp.auth_bytes)
    assert client.complete
    return resp


@pytest.mark.parametrize(
    "mechanism, user, password", [("PLAIN", "bob", "bob-secret"), ("SCRAM-SHA-256", "alice", "alice-secret")]
)
def test_real_mechanisms_authenticate(broker, sasl_server, mechanism, user, password):
    before = _successes(broker, mechanism)
    with Wire(address_of(sasl_server)) as w:
        assert _exchange(w, mechanism, user, password).error_code == 0
        assert w.call(K.METADATA, 9, topics=[], allow_auto_topic_creation=False).brokers
    assert (K.METADATA, f"User:{user}", "SASL_PLAINTEXT") in recorded(sasl_server)
    assert _successes(broker, mechanism) == before + 1


def _successes(broker, mechanism: str) -> float:
    metric = broker.broker.services.metrics.successful_authentications
    return sum(
        s.value
        for m in metric.collect()
        for s in m.samples
        if s.name.endswith("_total") and s.labels["mechanism"] == mechanism
    )


@pytest.mark.parametrize(
    "mechanism, user, password",
    [("PLAIN", "bob", "wrong"), ("SCRAM-SHA-256", "alice", "wrong"), ("SCRAM-SHA-256", "nobody", "x")],
)
def test_real_mechanisms_fail_with_the_generic_message(sasl_server, mechanism, user, password):
    with Wire(address_of(sasl_server)) as w:
        resp = _exchange(w, mechanism, user, password)
        assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert resp.error_message == (
            f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
        )
        assert w.closed_by_peer(5)


def test_an_enabled_mechanism_without_a_server_is_unsupported(broker):
    security = ListenerSecurity(name="x", protocol="SASL_PLAINTEXT", sasl_mechanisms=("GSSAPI",))
    with extra_server(broker, security) as server, Wire(address_of(server)) as w:
        resp = sasl_handshake(w, "GSSAPI")
        assert (resp.error_code, resp.mechanisms) == (ErrorCode.UNSUPPORTED_SASL_MECHANISM, ["GSSAPI"])
        assert w.closed_by_peer(5)


@pytest.mark.parametrize(
    "rules, principal",
    [
        ("DEFAULT", f"User:{CLIENT_DN}"),
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L,DEFAULT", "User:alice@eng"),
    ],
)
def test_ssl_listener_principal_from_the_client_certificate(broker, tls_material, rules, principal):
    security = ListenerSecurity(
        name="x", protocol="SSL", ssl_context=server_context(tls_material), ssl_principal_mapping_rules=rules
    )
    with extra_server(broker, security, record=True) as server:
        with TlsWire(address_of(server), client_context(tls_material, with_certificate=True)) as w:
            assert w.call(K.API_VERSIONS, 0).error_code == 0
        with TlsWire(address_of(server), client_context(tls_material)) as w:  # no certificate
            assert w.call(K.API_VERSIONS, 0).error_code == 0
        assert [p for _, p, _ in recorded(server)] == [principal, "User:ANONYMOUS"]


def test_no_matching_rule_closes_only_that_connection(broker, tls_material):
    security = ListenerSecurity(
        name="x",
        protocol="SSL",
        ssl_context=server_context(tls_material),
        ssl_principal_mapping_rules="RULE:^CN=nobody,.*$/nobody/",
    )
    with extra_server(broker, security) as server:
        with TlsWire(address_of(server), client_context(tls_material, with_certificate=True)) as w:
            assert w.closed_by_peer(5)
        with TlsWire(address_of(server), client_context(tls_material)) as w:
            assert w.call(K.API_VERSIONS, 0).error_code == 0
