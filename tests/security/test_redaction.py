"""Secret config keys, config redaction and JAAS masking."""

from __future__ import annotations

import pytest

from spark_kafkalog.security.redaction import HIDDEN, is_secret_key, redact, redact_jaas


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("ssl.keystore.password", True),
        ("ssl.truststore.password", True),
        ("ssl.key.password", True),
        ("listener.name.client.ssl.key.password", True),
        ("kafka.ssl.keystore.password", True),
        ("sasl.jaas.config", True),
        ("listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", True),
        ("kafka.sasl.jaas.config", True),
        ("ssl.keystore.key", True),
        ("ssl.keystore.certificate.chain", True),
        ("ssl.truststore.certificates", True),
        ("ssl.key.pem", True),
        ("sasl.password", True),
        ("sasl_plain_password", True),
        ("SASL.PASSWORD", True),
        ("sasl.oauthbearer.client.secret", True),
        ("sasl.oauthbearer.assertion.private.key.passphrase", True),
        ("sasl.oauthbearer.assertion.private.key", True),
        ("client_secret", True),
        ("delegation.token", True),
        ("aws.credentials", True),
        ("ssl.key.location", False),
        ("ssl.keystore.location", False),
        ("ssl.certificate.pem", False),
        ("sasl.username", False),
        ("sasl.mechanism", False),
        ("sasl.oauthbearer.token.endpoint.url", False),
        ("spark.kafka.clusters.c.sasl.token.mechanism", False),
        ("security.protocol", False),
        ("bootstrap.servers", False),
        ("ssl.keystore.type", False),
    ],
)
def test_is_secret_key_table(key, secret):
    assert is_secret_key(key) is secret


def test_redact_hides_secret_values_only():
    config = {
        "bootstrap.servers": "b:9093",
        "sasl.password": "p@ss-1",
        "sasl.jaas.config": 'PlainLoginModule required username="u" password="p@ss-2";',
        "ssl.key.password": None,
        "ssl.truststore.location": "/t.jks",
    }
    redacted = redact(config)
    assert redacted == {
        "bootstrap.servers": "b:9093",
        "sasl.password": HIDDEN,
        "sasl.jaas.config": HIDDEN,
        "ssl.key.password": None,
        "ssl.truststore.location": "/t.jks",
    }
    assert config["sasl.password"] == "p@ss-1"  # a copy
    assert "p@ss" not in repr(redacted)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="al1ce";',
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="[hidden]";',
        ),
        (
            "org.apache.kafka.common.security.scram.ScramLoginModule required username='bob' password='b\\'ob';",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username='bob' password=\"[hidden]\";",
        ),
        (
            'ScramLoginModule required tokenauth=true username="tok-id" password="hmac+b64==";',
            'ScramLoginModule required tokenauth=true username="tok-id" password="[hidden]";',
        ),
        (
            'OAuthBearerLoginModule required clientId="app" clientSecret="s\\"ecret" scope="x";',
            'OAuthBearerLoginModule required clientId="app" clientSecret="[hidden]" scope="x";',
        ),
        (
            'PlainLoginModule required username="admin" password = bare-pw user_admin="a" user_alice="b";',
            'PlainLoginModule required username="admin" password = "[hidden]" user_admin="[hidden]" '
            'user_alice="[hidden]";',
        ),
        ('PlainLoginModule required password="unterminated', 'PlainLoginModule required password="[hidden]"'),
        ("no options here;", "no options here;"),
    ],
)
def test_redact_jaas_table(line, expected):
    assert redact_jaas(line) == expected


def test_redact_jaas_never_leaks_the_secret():
    for secret in ("al1ce", "b\\'ob", "hmac+b64==", "bare-pw"):
        line = f'PlainLoginModule required username="u" password="{secret}" user_u="{secret}";'
        assert secret not in redact_jaas(line)
