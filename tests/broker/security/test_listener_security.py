"""``listener_securities``: each listener's protocol, TLS context and SASL callbacks, built from the broker config."""

import ssl

import pytest

from broker.config import BrokerConfig, ConfigError
from broker.security.listener_security import listener_securities
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="session")(_tls_material)

BASE = {"broker.id": "1", "zookeeper.connect": "localhost:2181"}
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)


def build(scram_credential=None, **props):
    return listener_securities(BrokerConfig.from_properties({**BASE, **props}), scram_credential=scram_credential)


def test_the_default_listener_is_plaintext_without_tls_or_sasl():
    (sec,) = build().values()
    assert (sec.name, sec.protocol, sec.ssl_context, sec.sasl_mechanisms) == ("PLAINTEXT", "PLAINTEXT", None, ())
    assert not sec.uses_tls and not sec.uses_sasl


def test_sasl_listener_takes_plain_users_from_its_jaas_and_the_scram_lookup_given():
    def lookup(mechanism, username):
        return (mechanism, username)

    secs = build(
        lookup,
        listeners="CLIENT://:0,INTERNAL://:0",
        **{
            "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "listener.name.client.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
            "listener.name.client.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.client.connections.max.reauth.ms": "60000",
            "connection.failed.authentication.delay.ms": "250",
            "sasl.server.max.receive.size": "4096",
            "connection.authentication.timeout.ms": "2500",
        },
    )
    client, internal = secs["CLIENT"], secs["INTERNAL"]
    assert client.protocol == "SASL_PLAINTEXT" and client.sasl_mechanisms == ("PLAIN", "SCRAM-SHA-512")
    assert dict(client.sasl_callbacks.plain_users) == {"admin": "admin-secret", "alice": "alice-secret"}
    assert client.sasl_callbacks.scram_credential("SCRAM-SHA-512", "bob") == ("SCRAM-SHA-512", "bob")
    assert client.max_reauth_ms == 60000 and internal.max_reauth_ms == 0
    assert client.failed_authentication_delay_ms == 250 and client.sasl_max_receive_size == 4096
    assert client.handshake_timeout_s == 2.5
    assert internal.protocol == "PLAINTEXT" and internal.sasl_mechanisms == ()
    assert "alice-secret" not in repr(client)


@pytest.mark.parametrize(
    "props,fragments",
    [
        (
            {"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN"},
            ["listener SASL_PLAINTEXT", "listener.name.sasl_plaintext.plain.sasl.jaas.config is not set"],
        ),
        (
            {
                "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
                    'com.sun.security.auth.module.JndiLoginModule required user.provider.url="ldap://x";'
                ),
            },
            ["listener SASL_PLAINTEXT", "listener.name.sasl_plaintext.plain.sasl.jaas.config"],
        ),
        (
            {
                "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
                "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="secret-x";',
            },
            ["listener SASL_PLAINTEXT", "SCRAM login module, not PLAIN"],
        ),
    ],
)
def test_sasl_problems_name_the_listener_and_key(props, fragments):
    with pytest.raises(ConfigError) as e:
        build(listeners="PLAINTEXT://:0,SASL_PLAINTEXT://:0", **props)
    for fragment in fragments:
        assert fragment in str(e.value)
    assert "secret-x" not in str(e.value)


def test_oauthbearer_without_a_jwks_uses_the_unsecured_validator_with_the_jaas_options():
    from spark_kafkalog.security.sasl.oauthbearer import UnsecuredJwsValidator

    jaas = (
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredValidatorPrincipalClaimName="email" unsecuredValidatorAllowableClockSkewMs="5000";'
    )
    sec = build(
        listeners="PLAINTEXT://:0,SASL_PLAINTEXT://:0",
        **{
            "sasl.enabled.mechanisms": "OAUTHBEARER",
            "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": jaas,
        },
    )["SASL_PLAINTEXT"]
    validator = sec.sasl_callbacks.oauth_validator
    assert isinstance(validator, UnsecuredJwsValidator)
    assert validator.principal_claim == "email" and validator.clock_skew_ms == 5000


def test_oauthbearer_with_a_jwks_file_validates_signed_tokens_only(tmp_path):
    from spark_kafkalog.security.sasl.jwks import JwksValidator

    jwks = tmp_path / "jwks.json"
    jwks.write_text('{"keys": []}')
    sec = build(
        listeners="PLAINTEXT://:0,SASL_PLAINTEXT://:0",
        **{
            "sasl.enabled.mechanisms": "OAUTHBEARER",
            "sasl.oauthbearer.jwks.endpoint.url": jwks.as_uri(),
            "sasl.oauthbearer.expected.issuer": "https://issuer.example",
        },
    )["SASL_PLAINTEXT"]
    assert isinstance(sec.sasl_callbacks.oauth_validator, JwksValidator)


def test_ssl_listeners_get_a_server_context_following_ssl_client_auth(tls_material):
    m = tls_material
    secs = build(
        listeners="PLAINTEXT://:0,SSL://:0,MTLS://:0",
        **{
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
            "ssl.keystore.location": str(m.broker_keystore_p12),
            "ssl.keystore.password": m.password,
            "ssl.key.password": m.password,
            "ssl.truststore.location": str(m.truststore_jks),
            "ssl.truststore.password": m.password,
            "listener.name.mtls.ssl.client.auth": "required",
            "listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=(.*?),.*$/$1/L,DEFAULT",
        },
    )
    assert isinstance(secs["SSL"].ssl_context, ssl.SSLContext)
    assert secs["SSL"].ssl_context.verify_mode == ssl.CERT_NONE
    assert secs["MTLS"].ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert secs["MTLS"].ssl_principal_mapping_rules == "RULE:^CN=(.*?),.*$/$1/L,DEFAULT"
    assert secs["PLAINTEXT"].ssl_context is None


def test_an_unreadable_keystore_names_the_listener_and_never_the_password(tmp_path):
    with pytest.raises(ConfigError) as e:
        build(
            listeners="PLAINTEXT://:0,SSL://:0",
            **{"ssl.keystore.location": str(tmp_path / "missing.p12"), "ssl.keystore.password": "pw-secret-9"},
        )
    assert "listener SSL (SSL)" in str(e.value) and "pw-secret-9" not in str(e.value)
