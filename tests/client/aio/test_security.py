"""``AsyncKafkaClient`` and ``AIOAdminClient`` take the blocking client's security settings: SASL_SSL (TLS with
the truststore, SASL PLAIN) against a secured in-process broker, and a wrong password fails at once with
``KafkaAuthenticationError`` (not retried until the deadline)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AIOAdminClient, AsyncKafkaClient, NewTopic, OffsetSpec, TopicPartition
from spark_kafkalog.client.errors import KafkaAuthenticationError
from tests.security.certs import PASSWORD, TlsMaterial, build_tls_material

pytestmark = pytest.mark.integration

USER, USER_PASSWORD = "alice", "alice-secret"
PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    f'username="admin" password="admin-secret" user_{USER}="{USER_PASSWORD}";'
)


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> TlsMaterial:
    return build_tls_material(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def port(tls, tmp_path_factory):
    config: dict[str, Any] = {
        "listeners": "SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,INTERNAL:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.location": str(tls.broker_keystore_p12),
        "ssl.keystore.password": PASSWORD,
        "ssl.keystore.type": "PKCS12",
        "num.partitions": "1",
    }
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:aio-sec-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b"), **config
    ).start()
    assert broker.broker is not None
    try:
        yield broker.broker.bound_ports["SASL_SSL"]
    finally:
        broker.stop()


def sasl_ssl(port: int, tls: TlsMaterial, password: str = USER_PASSWORD) -> dict[str, str]:
    return {
        "bootstrap.servers": f"localhost:{port}",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{USER}" password="{password}";'
        ),
        "ssl.truststore.location": str(tls.truststore_p12),
        "ssl.truststore.password": PASSWORD,
    }


def test_admin_and_client_over_sasl_ssl(port, tls):
    topic = f"aio-sec-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)

    async def scenario() -> None:
        async with AIOAdminClient(sasl_ssl(port, tls)) as admin:
            await admin.create_topics([NewTopic(topic, 1, 1)])
        async with AsyncKafkaClient(config=sasl_ssl(port, tls)) as client:
            assert await client.list_offsets({tp: OffsetSpec.LATEST}) == {tp: 0}
            conn = await client.connection(0)
            assert conn._writer.get_extra_info("ssl_object") is not None  # TLS to the broker, not only bootstrap

    asyncio.run(scenario())


def test_a_wrong_password_fails_at_once(port, tls):
    async def scenario() -> None:
        async with AsyncKafkaClient(sasl_ssl(port, tls, password="wrong"), default_api_timeout_ms=60_000):
            pass

    started = time.monotonic()
    with pytest.raises(KafkaAuthenticationError) as e:
        asyncio.run(scenario())
    assert time.monotonic() - started < 15
    assert "wrong" not in str(e.value)  # the password is never in an error
