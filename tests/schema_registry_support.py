"""Brokers serving kafkalog's Schema Registry for the registry's tests (no pytest import; the test modules wrap
these in their own fixtures).

* ``registry_broker(name, log_dir)``: a started ``EmbeddedBroker`` (its own in-memory ZooKeeper registry) with
  the registry on ``http://127.0.0.1:<free port>``, stopped on exit; ``registry_url(broker)`` its URL.
* ``secured_broker(name, log_dir, tls, scram_mechanism)``: an unstarted broker with one ``SASL_PLAINTEXT``
  listener (PLAIN admin ``admin``/``admin-secret`` from ``ADMIN_JAAS``, and ``scram_mechanism`` for the users
  the admin API creates) and the registry on ``https://127.0.0.1:<free port>`` with ``tls``'s broker keystore
  (basic auth is on: the broker has SASL listeners).
* ``secured_registry(...)``: that broker started with one SCRAM user created, once the registry accepts the user
  (it learns of new users through ZooKeeper); yields ``(broker, url)``, the URL on ``localhost`` (the broker
  certificate's name).
* ``ADMIN`` and ``scram_client(user, password, mechanism)``: Kafka client settings for the admin and a SCRAM
  user; ``registry_conf(url, tls, **extra)``: registry client settings trusting ``tls``'s CA, no retries.
* ``confluent_consume(bootstrap, topic, value_deserializer, n, settings)``: the first ``n`` values of partition 0
  read with confluent-kafka's ``DeserializingConsumer`` (string keys).
"""

from __future__ import annotations

import base64
import contextlib
import ssl
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, DeserializingConsumer, TopicPartition
from confluent_kafka.serialization import StringDeserializer

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient
from spark_kafkalog.client.admin.admin_scram import UserScramCredentialUpsertion
from tests.security.certs import TlsMaterial

ADMIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret";'
)
ADMIN = {
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.username": "admin",
    "sasl.password": "admin-secret",
}


def scram_client(user: str, password: str, mechanism: str) -> dict[str, str]:
    """Kafka client settings for a SCRAM user over ``SASL_PLAINTEXT``."""
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }


def registry_conf(url: str, tls: TlsMaterial, **extra: Any) -> dict[str, Any]:
    """Registry client settings (ours and confluent-kafka's take the same keys) trusting ``tls``'s CA."""
    return {"url": url, "ssl.ca.location": str(tls.ca_pem), "max.retries": 0, **extra}


@contextlib.contextmanager
def registry_broker(name: str, log_dir: Path) -> Iterator[EmbeddedBroker]:
    """A started broker serving the registry over http; ``name`` prefixes its in-memory ZooKeeper's name."""
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:{name}-{uuid.uuid4().hex[:8]}",
        log_dir=log_dir,
        schema_registry_listeners="http://127.0.0.1:0",
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def registry_url(broker: EmbeddedBroker) -> str:
    """``http://127.0.0.1:<port>``: the registry's URL (no trailing slash)."""
    url = broker.schema_registry_url
    assert url, "the broker was started with schema_registry_listeners but names no registry URL"
    return url.rstrip("/")


def secured_broker(name: str, log_dir: Path, tls: TlsMaterial, scram_mechanism: str) -> EmbeddedBroker:
    """An unstarted SASL broker with the registry on https (see the module docstring)."""
    registry_tls: dict[str, Any] = {
        "schema.registry.ssl.keystore.location": str(tls.broker_keystore_p12),
        "schema.registry.ssl.keystore.password": tls.password,
        "schema.registry.ssl.key.password": tls.password,
    }
    return EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:{name}-{uuid.uuid4().hex[:8]}",
        log_dir=log_dir,
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        security_inter_broker_protocol="SASL_PLAINTEXT",
        sasl_enabled_mechanisms=f"PLAIN,{scram_mechanism}",
        sasl_mechanism_inter_broker_protocol="PLAIN",
        sasl_jaas_config=ADMIN_JAAS,
        schema_registry_listeners="https://127.0.0.1:0",
        **registry_tls,
    )


@contextlib.contextmanager
def secured_registry(
    name: str, log_dir: Path, tls: TlsMaterial, *, user: str, password: str, scram_mechanism: str
) -> Iterator[tuple[EmbeddedBroker, str]]:
    """``secured_broker`` started, SCRAM user ``user`` created and accepted by the registry (waits up to 20 s);
    yields ``(broker, url)`` with the URL on ``localhost``."""
    with secured_broker(name, log_dir, tls, scram_mechanism) as broker:
        url = broker.wait_schema_registry().replace("127.0.0.1", "localhost")
        with AdminClient(broker.bootstrap_servers, ADMIN) as admin:
            admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, scram_mechanism, password)])
        _wait_until_accepted(url, tls, user, password)
        yield broker, url


def _wait_until_accepted(url: str, tls: TlsMaterial, user: str, password: str, timeout_s: float = 20.0) -> None:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    request = urllib.request.Request(f"{url}/schemas/types", headers={"Authorization": "Basic " + token})
    context = ssl.create_default_context(cafile=str(tls.ca_pem))
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10, context=context):
                return
        except urllib.error.HTTPError as e:
            if e.code != 401 or time.monotonic() >= deadline:
                raise AssertionError(f"the registry did not accept SCRAM user {user!r}: HTTP {e.code}") from None
            time.sleep(0.1)


def confluent_consume(
    bootstrap: str, topic: str, value_deserializer: Any, n: int, settings: dict[str, str] | None = None
) -> list[Any]:
    """The first ``n`` values of ``topic``'s partition 0 (``value_deserializer`` None: the raw bytes), read by
    confluent-kafka's consumer with ``settings`` added (e.g. ``scram_client(...)``); fails after about 40 s with
    fewer."""
    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{uuid.uuid4().hex[:8]}",
            "key.deserializer": StringDeserializer(),
            "value.deserializer": value_deserializer,
            "enable.auto.commit": False,
        }
        | (settings or {})
    )
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got: list[Any] = []
        for _ in range(200):
            msg = consumer.poll(0.2)
            if msg is not None:
                assert msg.error() is None, msg.error()
                got.append(msg.value())
            if len(got) >= n:
                return got
        raise AssertionError(f"read {len(got)} of {n} records from {topic}")
    finally:
        consumer.close()
