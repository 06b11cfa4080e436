"""kafka-python, aiokafka, confluent-kafka and kcat against a kafkalog broker over TLS and SASL.

One in-process broker with five listeners: SASL_SSL (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN), SASL_PLAINTEXT
(the same mechanisms), SSL with client certificates requested, SSL with client certificates required (MTLS), and
PLAINTEXT as the inter-broker listener. The SCRAM users are created by confluent-kafka's own AdminClient
(AlterUserScramCredentials) logged in with PLAIN as the admin of the JAAS configuration: nothing in kafkalog's
client is on that path.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid

import pytest

from broker.server import EmbeddedBroker
from tests.security.certs import PASSWORD
from tests.security.certs import tls_material as _tls_material

from .third_party import Auth, aiokafka_round_trip, confluent_round_trip, kafka_python_round_trip, kcat_round_trip

pytestmark = pytest.mark.integration

tls_material = pytest.fixture(scope="module")(_tls_material)

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" user_bob="bob-secret";'
)
USERS = {"alice": "alice-secret", "carol": "carol-secret"}
CLIENTS = {
    "kafka-python": kafka_python_round_trip,
    "aiokafka": aiokafka_round_trip,
    "confluent-kafka": confluent_round_trip,
    "kcat": kcat_round_trip,
}


@pytest.fixture(scope="module")
def secured(tls_material, tmp_path_factory):
    m = tls_material
    listeners = "SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0,INTERNAL://127.0.0.1:0"
    config = {
        "listeners": listeners,
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,MTLS:SSL,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.location": str(m.broker_keystore_jks),
        "ssl.keystore.password": PASSWORD,
        "ssl.key.password": PASSWORD,
        "ssl.truststore.location": str(m.truststore_jks),
        "ssl.truststore.password": PASSWORD,
        "listener.name.ssl.ssl.client.auth": "requested",
        "listener.name.mtls.ssl.client.auth": "required",
        "auto.create.topics.enable": "true",
        "num.partitions": "1",
    }
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:auth-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("secured"), **config
    ).start()
    ports = broker.broker.bound_ports
    try:
        from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

        admin = AdminClient(
            {
                "bootstrap.servers": f"127.0.0.1:{ports['SASL_PLAINTEXT']}",
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "admin",
                "sasl.password": "admin-secret",
            }
        )
        upserts = [
            UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, 8192), password.encode())
            for user, password in USERS.items()
            for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
        ]
        for future in admin.alter_user_scram_credentials(upserts).values():
            future.result(30)
        cache = broker.broker.metadata_sync.scram_credentials
        deadline = time.monotonic() + 15
        while not all(cache.lookup(m, u) for u in USERS for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")):
            assert time.monotonic() < deadline, "the SCRAM users never reached the broker's credential cache"
            time.sleep(0.05)
        yield broker, ports, m
    finally:
        broker.stop()


def auth_for(
    secured, listener: str, mechanism: str | None = None, user: str | None = None, *, cert: bool = False
) -> Auth:
    _broker, ports, m = secured
    protocol = {"SASL_SSL": "SASL_SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SSL": "SSL", "MTLS": "SSL"}[listener]
    password = None if user is None else {"admin": "admin-secret", "bob": "bob-secret", **USERS}.get(user, "nope")
    return Auth(
        f"localhost:{ports[listener]}",
        protocol,
        mechanism,
        user,
        password,
        ca_file=str(m.ca_pem) if protocol.endswith("SSL") else None,
        cert_file=str(m.client_cert_pem) if cert else None,
        key_file=str(m.client_key_pem) if cert else None,
    )


def _topic(secured) -> str:
    from spark_kafkalog.client import AdminClient, NewTopic

    _broker, ports, _m = secured
    name = f"auth-{uuid.uuid4().hex[:8]}"
    with AdminClient(f"127.0.0.1:{ports['INTERNAL']}") as admin:
        admin.create_topics([NewTopic(name, 1, 1)])
    return name


CASES = [
    ("SASL_SSL", "SCRAM-SHA-512", "alice", False),
    ("SASL_PLAINTEXT", "PLAIN", "bob", False),
    ("SASL_PLAINTEXT", "SCRAM-SHA-256", "carol", False),
    ("SSL", None, None, False),
    ("SSL", None, None, True),
    ("MTLS", None, None, True),
]


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize(("listener", "mechanism", "user", "cert"), CASES)
def test_round_trip(secured, client, listener, mechanism, user, cert):
    """Every client produces and reads back 200 records through every kind of listener."""
    topic = _topic(secured)
    auth = auth_for(secured, listener, mechanism, user, cert=cert)
    got = CLIENTS[client](auth, topic, 200)
    assert len(got) == 200 and len(set(got)) == 200


def _confluent_login_error(auth: Auth) -> tuple[str, float]:
    """The first error librdkafka reports for ``auth`` and how long it took to come."""
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AdminClient

    errors: list = []
    started = time.monotonic()
    admin = AdminClient({**auth.librdkafka(), "error_cb": errors.append})
    deadline = started + 30
    while not errors and time.monotonic() < deadline:
        admin.poll(0.05)
    assert errors, f"no error reported for {auth}"
    assert errors[0].code() == KafkaError._AUTHENTICATION, errors[0]
    return errors[0].str(), time.monotonic() - started


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_password_and_unknown_user_fail_identically_and_quickly(secured, mechanism):
    """Same error text for a wrong password and an unknown user (no user enumeration), within seconds, no retry
    loop hiding it."""
    known = "bob" if mechanism == "PLAIN" else "alice"
    wrong = Auth(**{**auth_for(secured, "SASL_PLAINTEXT", mechanism, known).__dict__, "password": "wrong-password"})
    unknown = Auth(
        **{**auth_for(secured, "SASL_PLAINTEXT", mechanism, "nobody").__dict__, "password": "wrong-password"}
    )
    wrong_text, wrong_s = _confluent_login_error(wrong)
    unknown_text, unknown_s = _confluent_login_error(unknown)
    assert "Authentication failed" in wrong_text

    def broker_message(text: str) -> str:  # librdkafka's text: "<broker>: SASL authentication error: <msg> (after..."
        return re.search(r"SASL authentication error: (.*?) \(after", text).group(1)

    assert broker_message(wrong_text) == broker_message(unknown_text)
    assert broker_message(wrong_text) == (
        f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
    )
    assert max(wrong_s, unknown_s) < 10


def test_mtls_listener_refuses_a_client_without_certificate(secured):
    auth = auth_for(secured, "MTLS")
    with pytest.raises(RuntimeError):
        confluent_round_trip(auth, _topic(secured), 1)


def test_kcat_scram_user_added_with_kafkalog_configs_logs_in_without_restart(secured):
    """``kafkalog configs --alter --entity-type users`` (kafka-configs' spelling) adds a user who logs in at once."""
    _broker, ports, _m = secured
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "broker.cli",
            "configs",
            "--bootstrap-server",
            f"127.0.0.1:{ports['INTERNAL']}",
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "dave",
            "--add-config",
            "SCRAM-SHA-512=[iterations=8192,password=dave-secret]",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert "dave-secret" not in cli.stdout + cli.stderr
    auth = Auth(**{**auth_for(secured, "SASL_SSL", "SCRAM-SHA-512", "dave").__dict__, "password": "dave-secret"})
    deadline = time.monotonic() + 15
    topic = _topic(secured)
    while True:
        try:
            got = kcat_round_trip(auth, topic, 20)
            break
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    assert len(got) == 20
