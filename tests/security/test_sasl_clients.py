"""SaslClientSettings.from_config (Kafka's and librdkafka's keys), the factories, and client<->server round trips."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kafkalog.security.errors import SaslAuthenticationFailed, SecurityConfigError
from spark_kafkalog.security.sasl import (
    MECHANISMS,
    ClientCredentialsTokenProvider,
    SaslClientSettings,
    SaslServerCallbacks,
    ScramCredential,
    ScramMechanism,
    create_client,
    create_server,
    generic_failure_message,
)
from spark_kafkalog.security.sasl.oauthbearer import OAuthBearerServer, UnsecuredJwsValidator, unsecured_jws
from spark_kafkalog.security.sasl.scram import ScramClient as ScramClientImpl

PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="hunter2";'
SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="hunter2";'
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OIDC_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"


def sasl(**keys: Any) -> dict[str, Any]:
    """A SASL_SSL config; keyword names are the dotted keys with '_' for '.' (``oauth_cb`` stays as it is)."""
    return {
        "security.protocol": "SASL_SSL",
        **{k if k == "oauth_cb" else k.replace("_", "."): v for k, v in keys.items()},
    }


@pytest.mark.parametrize("protocol", [None, "PLAINTEXT", "SSL", "ssl"])
def test_no_settings_unless_the_protocol_is_sasl(protocol):
    config = {"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_JAAS}
    if protocol is not None:
        config["security.protocol"] = protocol
    assert SaslClientSettings.from_config(config) is None


@pytest.mark.parametrize(
    "config, expected",
    [
        (sasl(sasl_mechanism="PLAIN", sasl_jaas_config=PLAIN_JAAS), ("PLAIN", "alice", "hunter2", False)),
        (
            {"security.protocol": "sasl_plaintext", "sasl.mechanism": "plain", "sasl.jaas.config": PLAIN_JAAS},
            ("PLAIN", "alice", "hunter2", False),
        ),
        (
            sasl(sasl_mechanism="SCRAM-SHA-512", sasl_jaas_config=SCRAM_JAAS),
            ("SCRAM-SHA-512", "alice", "hunter2", False),
        ),
        # as in Kafka, either module carries a username/password for either mechanism
        (
            sasl(sasl_mechanism="SCRAM-SHA-256", sasl_jaas_config=PLAIN_JAAS),
            ("SCRAM-SHA-256", "alice", "hunter2", False),
        ),
        (
            sasl(sasl_mechanisms="SCRAM-SHA-256", sasl_username="bob", sasl_password="pw"),
            ("SCRAM-SHA-256", "bob", "pw", False),
        ),
        (
            sasl(sasl_mechanism="PLAIN", sasl_mechanisms="PLAIN", sasl_username="bob", sasl_password="pw"),
            ("PLAIN", "bob", "pw", False),
        ),
        # an explicit sasl.jaas.config wins over librdkafka's keys
        (
            sasl(sasl_mechanism="PLAIN", sasl_jaas_config=PLAIN_JAAS, sasl_username="bob", sasl_password="pw"),
            ("PLAIN", "alice", "hunter2", False),
        ),
        (
            sasl(
                sasl_mechanism="SCRAM-SHA-512",
                sasl_jaas_config='org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true serviceName="kafka" username="tok-1" password="hmac==";',
            ),
            ("SCRAM-SHA-512", "tok-1", "hmac==", True),
        ),
    ],
)
def test_username_password_settings(config, expected):
    settings = SaslClientSettings.from_config(config)
    assert settings is not None
    assert (settings.mechanism, settings.username, settings.password, settings.token_auth) == expected
    assert settings.max_scram_iterations == 16384


@pytest.mark.parametrize(
    "config, fragment",
    [
        (sasl(), "needs sasl.mechanism (Kafka's default, GSSAPI/Kerberos, is not supported)"),
        (sasl(sasl_jaas_config=PLAIN_JAAS), "needs sasl.mechanism"),
        (sasl(sasl_mechanism="GSSAPI"), "GSSAPI (Kerberos) is not supported"),
        (sasl(sasl_mechanism="SCRAM-SHA-1", sasl_username="a", sasl_password="b"), "'SCRAM-SHA-1' is not supported"),
        (sasl(sasl_mechanism="PLAIN", sasl_mechanisms="SCRAM-SHA-256"), "disagree"),
        (sasl(sasl_mechanism="PLAIN"), "needs a username and a password"),
        (sasl(sasl_mechanism="PLAIN", sasl_username="bob"), "sasl.username and sasl.password"),
        (
            sasl(
                sasl_mechanism="PLAIN",
                sasl_jaas_config='org.apache.kafka.common.security.plain.PlainLoginModule required username="a";',
                sasl_password="pw",
            ),
            "sasl.jaas.config (username=... password=...)",
        ),
        (
            sasl(
                sasl_mechanism="PLAIN", sasl_jaas_config=f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="a";'
            ),
            "cannot log in with PLAIN",
        ),
        (sasl(sasl_mechanism="OAUTHBEARER", sasl_jaas_config=PLAIN_JAAS), "cannot log in with OAUTHBEARER"),
        (
            sasl(
                sasl_mechanism="PLAIN",
                sasl_jaas_config='org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true username="t" password="h";',
            ),
            "needs a SCRAM mechanism",
        ),
        (
            sasl(
                sasl_mechanism="PLAIN",
                sasl_jaas_config='com.sun.security.auth.module.JndiLoginModule required password="hunter2";',
            ),
            "CVE-2023-25194",
        ),
        (
            sasl(sasl_mechanism="SCRAM-SHA-256", sasl_jaas_config=SCRAM_JAAS, sasl_scram_max_iterations="4095"),
            "below SCRAM's minimum",
        ),
        (
            sasl(sasl_mechanism="SCRAM-SHA-256", sasl_jaas_config=SCRAM_JAAS, sasl_scram_max_iterations="lots"),
            "must be an integer",
        ),
        (sasl(sasl_mechanism="OAUTHBEARER"), "needs a token source"),
        (sasl(sasl_mechanism="OAUTHBEARER", oauth_cb="not callable"), "oauth_cb must be a callable"),
        (
            sasl(sasl_mechanism="OAUTHBEARER", sasl_oauthbearer_method="oidc"),
            "needs sasl.oauthbearer.token.endpoint.url",
        ),
        (sasl(sasl_mechanism="OAUTHBEARER", sasl_oauthbearer_method="aws"), "'default' or 'oidc'"),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_login_callback_handler_class="com.evil.Handler",
                sasl_oauthbearer_token_endpoint_url="https://idp/token",
            ),
            "'com.evil.Handler' is refused",
        ),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_login_callback_handler_class=OIDC_HANDLER,
                sasl_oauthbearer_token_endpoint_url="https://idp/token",
            ),
            'JAAS clientId="..." clientSecret="..."',
        ),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_oauthbearer_method="oidc",
                sasl_oauthbearer_client_id="id",
                sasl_oauthbearer_client_secret="hunter2",
                sasl_oauthbearer_token_endpoint_url="file:///etc/passwd",
            ),
            "only http(s) URLs",
        ),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_oauthbearer_method="oidc",
                sasl_oauthbearer_client_id="id",
                sasl_oauthbearer_client_secret="hunter2",
                sasl_oauthbearer_token_endpoint_url="https://idp/token",
                sasl_oauthbearer_extensions="auth=x",
            ),
            "extension 'auth'",
        ),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_jaas_config=f'{OAUTH_MODULE} required unsecuredLoginStringClaim_iss="x";',
            ),
            "unsecuredLoginStringClaim_sub",
        ),
    ],
)
def test_refused_settings_say_why_without_secrets(config, fragment):
    with pytest.raises(SecurityConfigError) as e:
        SaslClientSettings.from_config(config)
    assert fragment in str(e.value)
    assert "hunter2" not in str(e.value)


def test_scram_max_iterations_setting():
    settings = SaslClientSettings.from_config(
        sasl(sasl_mechanism="SCRAM-SHA-256", sasl_jaas_config=SCRAM_JAAS, sasl_scram_max_iterations="8192")
    )
    assert settings is not None and settings.max_scram_iterations == 8192
    client = create_client(settings)
    client.initial_response()
    with pytest.raises(SaslAuthenticationFailed, match="cap 8192"):
        client.evaluate_challenge(b"r=" + client.initial_response().split(b"r=")[1] + b"x,s=c2FsdA==,i=8193")


def test_settings_validate_mechanism_and_hide_secrets():
    with pytest.raises(SecurityConfigError):
        SaslClientSettings("GSSAPI")
    settings = SaslClientSettings("PLAIN", username="alice", password="hunter2", token_provider=lambda: ("t", 0.0))
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings)


# -- OAUTHBEARER token sources ------------------------------------------------------------------------


def test_oauth_cb_takes_precedence_and_gets_the_config_string():
    seen = []

    def oauth_cb(config_string: str) -> tuple[str, float, str, dict[str, str]]:
        seen.append(config_string)
        return (
            unsecured_jws({"sub": "alice", "exp": 4_000_000_000}),
            4_000_000_000.0,
            "alice",
            {"logicalCluster": "lkc-1"},
        )

    settings = SaslClientSettings.from_config(
        sasl(
            sasl_mechanism="OAUTHBEARER",
            oauth_cb=oauth_cb,
            sasl_oauthbearer_config="anything=1",
            sasl_jaas_config=f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="bob";',
        )
    )
    assert settings is not None
    client = create_client(settings)
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    assert server.evaluate_response(client.initial_response()) == b""
    assert seen == ["anything=1"]
    assert server.principal == "User:alice" and client.credential_expiry_ms == 4_000_000_000_000
    assert isinstance(server, OAuthBearerServer) and server.extensions == {"logicalCluster": "lkc-1"}


def test_zero_argument_oauth_cb():
    settings = SaslClientSettings.from_config(
        sasl(sasl_mechanism="OAUTHBEARER", oauth_cb=lambda: (unsecured_jws({"sub": "z", "exp": 4e9}), 4e9))
    )
    assert settings is not None
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    server.evaluate_response(create_client(settings).initial_response())
    assert server.principal == "User:z"


@pytest.mark.parametrize(
    "config, extensions",
    [
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_oauthbearer_method="oidc",
                sasl_oauthbearer_client_id="cid",
                sasl_oauthbearer_client_secret="hunter2",
                sasl_oauthbearer_token_endpoint_url="https://idp/token",
                sasl_oauthbearer_scope="kafka",
                sasl_oauthbearer_extensions="logicalCluster=lkc-1,identityPoolId=pool-2",
            ),
            {"logicalCluster": "lkc-1", "identityPoolId": "pool-2"},
        ),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_login_callback_handler_class=OIDC_HANDLER,
                sasl_oauthbearer_token_endpoint_url="https://idp/token",
                sasl_jaas_config=f'{OAUTH_MODULE} required clientId="cid" clientSecret="hunter2" scope="kafka" extension_logicalCluster="lkc-1";',
            ),
            {"logicalCluster": "lkc-1"},
        ),
    ],
)
def test_oidc_settings_both_spellings(config, extensions):
    settings = SaslClientSettings.from_config(config)
    assert settings is not None
    provider = settings.token_provider
    assert isinstance(provider, ClientCredentialsTokenProvider)
    assert (provider.token_endpoint_url, provider.client_id, provider.client_secret, provider.scope) == (
        "https://idp/token",
        "cid",
        "hunter2",
        "kafka",
    )
    assert dict(settings.extensions) == extensions
    assert "hunter2" not in repr(settings) and "hunter2" not in repr(provider)


@pytest.mark.parametrize(
    "config, principal",
    [
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_jaas_config=f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="alice" unsecuredLoginLifetimeSeconds="120" unsecuredLoginExtension_traceId="t1";',
            ),
            "alice",
        ),
        (
            sasl(
                sasl_mechanism="OAUTHBEARER",
                sasl_oauthbearer_config="principal=carol lifeSeconds=120 scope=a,b extension_traceId=t1",
            ),
            "carol",
        ),
    ],
)
def test_unsecured_token_sources_round_trip(config, principal):
    settings = SaslClientSettings.from_config(config)
    assert settings is not None
    client = create_client(settings)
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    assert server.evaluate_response(client.initial_response()) == b""
    assert client.evaluate_challenge(b"") is None
    assert server.principal == f"User:{principal}"
    assert isinstance(server, OAuthBearerServer) and server.extensions == {"traceId": "t1"}
    assert client.credential_expiry_ms is not None and server.credential_expiry_ms is not None
    assert abs(server.credential_expiry_ms - client.credential_expiry_ms) <= 1


def test_librdkafka_unsecured_scope_reaches_the_token():
    settings = SaslClientSettings.from_config(
        sasl(sasl_mechanism="OAUTHBEARER", sasl_oauthbearer_config="principal=carol scope=read,write")
    )
    assert settings is not None and settings.token_provider is not None
    token, expiry_s = settings.token_provider()
    validated = UnsecuredJwsValidator(required_scope=("read", "write")).validate(token, int(expiry_s * 1000) - 1000)
    assert validated.principal == "carol"


# -- factories and round trips for every mechanism ------------------------------------------------------


def callbacks_for(password: str) -> SaslServerCallbacks:
    creds = {m.mechanism_name: ScramCredential.from_password(m, password) for m in ScramMechanism}
    return SaslServerCallbacks(
        plain_users={"alice": password},
        scram_credential=lambda mech, user: creds.get(mech) if user == "alice" else None,
    )


def run_exchange(client: Any, server: Any) -> None:
    token: bytes | None = client.initial_response()
    while token is not None:
        challenge = server.evaluate_response(token)
        token = client.evaluate_challenge(challenge)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_every_mechanism_round_trips_from_config(mechanism):
    if mechanism == "OAUTHBEARER":
        jaas = f'{OAUTH_MODULE} required unsecuredLoginStringClaim_sub="alice";'
    else:
        jaas = SCRAM_JAAS
    settings = SaslClientSettings.from_config(sasl(sasl_mechanism=mechanism, sasl_jaas_config=jaas))
    assert settings is not None
    client = create_client(settings)
    server = create_server(mechanism, callbacks_for("hunter2"))
    assert client.mechanism == server.mechanism == mechanism
    run_exchange(client, server)
    assert client.complete and server.complete and server.principal == "User:alice"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("user, password", [("alice", "wrong"), ("mallory", "hunter2")])
def test_wrong_password_and_unknown_user_get_the_same_generic_message(mechanism, user, password):
    client = create_client(SaslClientSettings(mechanism, username=user, password=password))
    server = create_server(mechanism, callbacks_for("hunter2"))
    with pytest.raises(SaslAuthenticationFailed) as e:
        run_exchange(client, server)
    assert str(e.value) == generic_failure_message(mechanism)
    assert "hunter2" not in e.value.detail and "wrong" not in e.value.detail


def test_oauthbearer_invalid_token_ends_with_the_generic_message():
    client = create_client(
        SaslClientSettings("OAUTHBEARER", token_provider=lambda: (unsecured_jws({"sub": "a", "exp": 1}), 1.0))
    )
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    with pytest.raises(SaslAuthenticationFailed) as e:
        run_exchange(client, server)
    assert str(e.value) == generic_failure_message("OAUTHBEARER")


@pytest.mark.parametrize("mechanism", ["GSSAPI", "SCRAM-SHA-1", "plain", ""])
def test_create_server_refuses_unknown_mechanisms(mechanism):
    with pytest.raises(SecurityConfigError, match="not supported"):
        create_server(mechanism, SaslServerCallbacks())


@pytest.mark.parametrize(
    "settings",
    [
        SaslClientSettings("PLAIN"),
        SaslClientSettings("SCRAM-SHA-256", username="a"),
        SaslClientSettings("OAUTHBEARER"),
    ],
)
def test_create_client_refuses_incomplete_settings(settings):
    with pytest.raises(SecurityConfigError, match="needs"):
        create_client(settings)


def test_server_callbacks_and_exchanges_never_show_secrets():
    callbacks = callbacks_for("hunter2")
    assert "hunter2" not in repr(callbacks)
    for mechanism in MECHANISMS:
        server = create_server(mechanism, callbacks)
        assert "hunter2" not in repr(server)
    client = create_client(SaslClientSettings("SCRAM-SHA-256", username="alice", password="hunter2"))
    assert "hunter2" not in repr(client)


# -- robustness: whatever arrives, a server answers bytes or fails with SaslAuthenticationFailed ------------

FUZZ = settings(max_examples=200, deadline=None)


def _messages() -> st.SearchStrategy[bytes]:
    """Random bytes, and mutations of real first messages (so the parsers get past their first checks)."""
    real = [
        b"\0alice\0hunter2",
        b"n,,n=alice,r=abc",
        b"n,a=alice,n=alice,r=abc,tokenauth=true",
        b"n,,\x01auth=Bearer " + unsecured_jws({"sub": "alice", "exp": 4e9}).encode() + b"\x01\x01",
        b"n,,\x01auth=Bearer " + ".".join(["e30"] * 2).encode() + b".\x01\x01",
    ]
    mutated = st.tuples(st.sampled_from(real), st.integers(0, 200), st.binary(max_size=8)).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + len(t[2]) :]
    )
    return st.one_of(st.binary(max_size=300), mutated)


@FUZZ
@given(mechanism=st.sampled_from(MECHANISMS), first=_messages(), second=_messages())
def test_servers_only_ever_fail_with_sasl_authentication_failed(mechanism, first, second):
    server = create_server(mechanism, callbacks_for("hunter2"))
    for message in (first, second):
        try:
            answer = server.evaluate_response(message)
        except SaslAuthenticationFailed as e:
            assert str(e) == generic_failure_message(mechanism)
            return
        assert isinstance(answer, bytes)


@FUZZ
@given(mechanism=st.sampled_from(MECHANISMS), challenge=_messages())
def test_clients_only_ever_fail_with_sasl_authentication_failed(mechanism, challenge):
    token = unsecured_jws({"sub": "alice", "exp": 4e9})
    settings_ = SaslClientSettings(
        mechanism, username="alice", password="hunter2", token_provider=lambda: (token, 4e9), max_scram_iterations=4096
    )
    client = create_client(settings_)
    client.initial_response()
    for message in (challenge, challenge):
        try:
            answer = client.evaluate_challenge(message)
        except SaslAuthenticationFailed as e:
            assert "hunter2" not in str(e)
            return
        assert answer is None or isinstance(answer, bytes)


@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 100_000 + b"]" * 100_000,  # deeper than json's recursion limit
        b'{"sub":"a","exp":Infinity}',
        b'{"sub":"a","exp":NaN}',
        b'{"sub":"a","exp":1e400}',
        b'{"sub":"a","exp":' + b"9" * 5000 + b"}",  # beyond int()'s digit limit
    ],
)
def test_hostile_token_payloads_are_invalid_tokens(payload):
    header = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=")
    token = header + b"." + base64.urlsafe_b64encode(payload).rstrip(b"=") + b"."
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    assert server.evaluate_response(b"n,,\x01auth=Bearer " + token + b"\x01\x01") == b'{"status":"invalid_token"}'


def test_a_validator_that_breaks_lets_nobody_in():
    class Broken:
        def validate(self, token: str, now_ms: int) -> Any:
            raise KeyError("bug")

    server = create_server("OAUTHBEARER", SaslServerCallbacks(oauth_validator=Broken()))
    with pytest.raises(SaslAuthenticationFailed) as e:
        server.evaluate_response(b"n,,\x01auth=Bearer a.b.\x01\x01")
    assert str(e.value) == generic_failure_message("OAUTHBEARER") and "KeyError" in e.value.detail


# -- an independent client: kafka-python 3's SASL mechanisms (a test dependency) against our servers ------


def _kafka_python_exchange(mechanism: Any, server: Any) -> None:
    """kafka-python's own loop: send auth_bytes(), feed the answer to receive(), until is_done()."""
    while not mechanism.is_done():
        mechanism.receive(server.evaluate_response(mechanism.auth_bytes()))


@pytest.mark.parametrize("name", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_clients_authenticate_against_our_servers(name):
    from kafka.net.sasl.plain import SaslMechanismPlain
    from kafka.net.sasl.scram import SaslMechanismScram

    cls = SaslMechanismPlain if name == "PLAIN" else SaslMechanismScram
    config = {"sasl_mechanism": name, "sasl_plain_username": "alice", "sasl_plain_password": "hunter2"}
    server = create_server(name, callbacks_for("hunter2"))
    _kafka_python_exchange(cls(security_protocol="SASL_SSL", **config), server)
    assert server.complete and server.principal == "User:alice"

    wrong = create_server(name, callbacks_for("other"))
    with pytest.raises(SaslAuthenticationFailed, match=f"SASL mechanism {name}$"):
        _kafka_python_exchange(cls(security_protocol="SASL_SSL", **config), wrong)


def test_kafka_python_oauth_client_and_the_invalid_token_dance():
    from kafka.net.sasl.oauth import AbstractTokenProvider, SaslMechanismOAuth

    class Provider(AbstractTokenProvider):
        def __init__(self, token: str) -> None:
            self._token = token

        def token(self) -> str:
            return self._token

        def extensions(self) -> dict[str, str]:
            return {"traceId": "t1"}

    good = SaslMechanismOAuth(sasl_oauth_token_provider=Provider(unsecured_jws({"sub": "alice", "exp": 4e9})))
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    _kafka_python_exchange(good, server)
    assert server.principal == "User:alice" and isinstance(server, OAuthBearerServer)
    assert server.extensions == {"traceId": "t1"}

    expired = SaslMechanismOAuth(sasl_oauth_token_provider=Provider(unsecured_jws({"sub": "alice", "exp": 1})))
    server = create_server("OAUTHBEARER", SaslServerCallbacks())
    with pytest.raises(SaslAuthenticationFailed, match="SASL mechanism OAUTHBEARER$"):
        _kafka_python_exchange(expired, server)  # the JSON challenge, kafka-python's \x01, then the failure


def test_our_scram_client_against_kafka_pythons_message_layout():
    """kafka-python's client computes the same client-final as ours for the same nonces and salt."""
    from kafka.net.sasl.scram import ScramClient as KafkaPythonScram

    theirs = KafkaPythonScram("user", "pencil", "SCRAM-SHA-256")
    theirs.nonce = b"rOprNGfwEbeRWgbNEkqO"
    ours = ScramClientImpl(ScramMechanism.SCRAM_SHA_256, "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert theirs.first_message() == ours.initial_response()
    server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    theirs.process_server_first_message(server_first)
    assert ours.evaluate_challenge(server_first) == theirs.final_message()
