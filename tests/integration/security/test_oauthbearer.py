"""OAUTHBEARER end to end: kafkalog's client and confluent-kafka (librdkafka) against a kafkalog broker with
Kafka's unsecured JWS validator (development) and with JWKS-validated RS256 tokens (a signed token works; one
signed by another key, one expired and an unsigned one are refused)."""

from __future__ import annotations

import base64
import json
import time
import uuid

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from broker.server import EmbeddedBroker
from spark_kafkalog.client.errors import KafkaAuthenticationError
from spark_kafkalog.security.sasl.oauthbearer import unsecured_jws

from .third_party import Auth, confluent_round_trip

pytestmark = pytest.mark.integration

OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _int_b64url(n: int) -> str:
    return _b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def signed_token(key: rsa.RSAPrivateKey, kid: str, sub: str, *, lifetime_s: float = 600, aud: str = "kafkalog") -> str:
    now = time.time()
    header = _b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode())
    claims = {"sub": sub, "iat": int(now), "exp": int(now + lifetime_s), "aud": aud, "iss": "https://issuer.test"}
    payload = _b64url(json.dumps(claims).encode())
    signature = key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{_b64url(signature)}"


@pytest.fixture(scope="module")
def oauth_broker(tmp_path_factory):
    d = tmp_path_factory.mktemp("oauth")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    jwk = {
        "kty": "RSA",
        "kid": "k1",
        "alg": "RS256",
        "use": "sig",
        "n": _int_b64url(numbers.n),
        "e": _int_b64url(numbers.e),
    }
    jwks = d / "jwks.json"
    jwks.write_text(json.dumps({"keys": [jwk]}))
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:oauth-{uuid.uuid4().hex[:8]}",
        log_dir=d / "logs",
        listeners="DEV://127.0.0.1:0,JWT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        **{
            "listener.security.protocol.map": "DEV:SASL_PLAINTEXT,JWT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "sasl.enabled.mechanisms": "OAUTHBEARER",
            "listener.name.jwt.sasl.oauthbearer.jwks.endpoint.url": str(jwks),
            "listener.name.jwt.sasl.oauthbearer.expected.audience": "kafkalog",
            "listener.name.jwt.sasl.oauthbearer.expected.issuer": "https://issuer.test",
            "auto.create.topics.enable": "true",
        },
    ).start()
    try:
        yield broker, broker.broker.bound_ports, key
    finally:
        broker.stop()


def _round_trip(bootstrap: str, settings: dict) -> list[bytes]:
    from spark_kafkalog.client import Consumer, Producer, TopicPartition

    topic = f"oauth-{uuid.uuid4().hex[:8]}"
    values = [b"o-%d" % i for i in range(50)]
    with Producer(bootstrap, acks="all", **settings) as producer:
        for v in values:
            producer.send(topic, v, partition=0)
        producer.flush(30)
    consumer = Consumer(bootstrap, **settings)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        got: list[bytes] = []
        for _ in range(30):
            got += [r.value for r in consumer.poll(1000)]
            if len(got) >= len(values):
                break
    finally:
        consumer.close()
    return got


def test_kafkalog_client_with_kafkas_unsecured_login_module(oauth_broker):
    _broker, ports, _key = oauth_broker
    settings = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": f'{OAUTH} required unsecuredLoginStringClaim_sub="alice";',
    }
    assert len(_round_trip(f"127.0.0.1:{ports['DEV']}", settings)) == 50


def test_librdkafka_unsecured_jwt(oauth_broker):
    """confluent-kafka's own unsecured JWT (``enable.sasl.oauthbearer.unsecure.jwt``) on the development listener."""
    _broker, ports, _key = oauth_broker
    auth = Auth(f"127.0.0.1:{ports['DEV']}", "SASL_PLAINTEXT")
    from confluent_kafka import Producer

    errors: list = []
    producer = Producer(
        {
            **auth.librdkafka(),
            "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "principal=alice",
            "error_cb": errors.append,
        }
    )
    delivered: list = []
    producer.produce(f"oauth-{uuid.uuid4().hex[:8]}", b"x", partition=0, on_delivery=lambda e, m: delivered.append(e))
    assert producer.flush(30) == 0 and delivered == [None], (delivered, errors)


def test_jwks_validated_tokens_from_a_token_callable(oauth_broker):
    _broker, ports, key = oauth_broker
    bootstrap = f"127.0.0.1:{ports['JWT']}"
    base = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"}

    def provider(token: str):
        return lambda *_args: (token, time.time() + 600)

    good = signed_token(key, "k1", "alice")
    assert len(_round_trip(bootstrap, {**base, "oauth_cb": provider(good)})) == 50

    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused = {
        "signed by another key": signed_token(other_key, "k1", "alice"),
        "expired": signed_token(key, "k1", "alice", lifetime_s=-3600),
        "for another audience": signed_token(key, "k1", "alice", aud="someone-else"),
        "unsigned": unsecured_jws({"sub": "alice", "iat": int(time.time()), "exp": int(time.time() + 600)}),
    }
    from spark_kafkalog.client import AdminClient

    for what, token in refused.items():
        started = time.monotonic()
        with pytest.raises(KafkaAuthenticationError) as failure:
            with AdminClient(bootstrap, retries=0, **base, oauth_cb=provider(token)) as admin:
                admin.list_topics()
        assert "OAUTHBEARER" in str(failure.value), what
        assert token not in str(failure.value), what
        assert time.monotonic() - started < 10, what

    # confluent-kafka with its oauth_cb (token, expiry) on the same listener
    got = confluent_round_trip(
        Auth(bootstrap, "SASL_PLAINTEXT", "OAUTHBEARER"),
        f"oauth-{uuid.uuid4().hex[:8]}",
        20,
        extra={"oauth_cb": lambda _config: (good, time.time() + 600)},
    )
    assert len(got) == 20
