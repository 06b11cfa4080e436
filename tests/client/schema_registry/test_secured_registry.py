"""SchemaRegistryClient and the Avro serializers against kafkalog's registry with security on: https
(``ssl.ca.location``), HTTP basic auth against the broker's SCRAM users (``basic.auth.user.info`` or the URL's
user info), a certificate the client does not trust refused, wrong credentials answered 401, and records
produced and consumed over SASL/SCRAM."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.schema_registry import (
    AvroDeserializer,
    AvroSerializer,
    Schema,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from tests.schema_registry_support import ADMIN, registry_conf, scram_client, secured_registry
from tests.security.certs import TlsMaterial
from tests.security.certs import tls_material as _tls_material

pytestmark = pytest.mark.integration

tls_material = pytest.fixture(scope="module")(_tls_material)

CAROL = scram_client("carol", "carol-pw", "SCRAM-SHA-256")
EVENT = '{"type":"record","name":"Event","namespace":"client.secured","fields":[{"name":"n","type":"int"}]}'


@pytest.fixture(scope="module")
def secured(tmp_path_factory, tls_material: TlsMaterial) -> Iterator[tuple[EmbeddedBroker, str]]:
    """A SASL broker with the registry on https and basic auth, SCRAM user carol created; its URL on localhost."""
    log_dir = tmp_path_factory.mktemp("client-sr-secured")
    with secured_registry(
        "client-sr-sec", log_dir, tls_material, user="carol", password="carol-pw", scram_mechanism="SCRAM-SHA-256"
    ) as (broker, url):
        yield broker, url


@pytest.mark.parametrize("credentials", ["user_info", "url"])
def test_https_with_basic_auth_registers_and_reads_back(secured, tls_material, credentials):
    _, url = secured
    if credentials == "url":
        settings = registry_conf(url.replace("https://", "https://carol:carol-pw@"), tls_material)
    else:
        settings = registry_conf(url, tls_material, **{"basic.auth.user.info": "carol:carol-pw"})
    subject = f"secured-{uuid.uuid4().hex[:8]}"
    with SchemaRegistryClient(settings) as client:
        schema_id = client.register_schema(subject, Schema(EVENT))
        assert client.get_schema(schema_id).schema_str == client.get_latest_version(subject).schema.schema_str
        assert "carol-pw" not in repr(client)


@pytest.mark.parametrize("user_info", ["carol:wrong", "nobody:carol-pw", None])
def test_wrong_or_missing_credentials_are_answered_401(secured, tls_material, user_info):
    _, url = secured
    extra = {} if user_info is None else {"basic.auth.user.info": user_info}
    with SchemaRegistryClient(registry_conf(url, tls_material, **extra)) as client:
        with pytest.raises(SchemaRegistryError) as error:
            client.get_subjects()
    assert (error.value.http_status, error.value.error_code) == (401, 401)
    assert user_info is None or user_info.split(":")[1] not in str(error.value)


def test_a_registry_certificate_the_client_does_not_trust_is_refused_unless_verification_is_off(secured, tls_material):
    _, url = secured
    untrusting = {"url": url, "max.retries": 0, "basic.auth.user.info": "carol:carol-pw"}
    with SchemaRegistryClient(untrusting) as client:
        with pytest.raises(SchemaRegistryError) as error:
            client.get_subjects()
    assert error.value.http_status == -1 and "CERTIFICATE_VERIFY_FAILED" in str(error.value)
    with SchemaRegistryClient({**untrusting, "ssl.ca.location": False}) as client:
        assert isinstance(client.get_subjects(), list)


def test_avro_records_over_sasl_scram_with_the_secured_registry(secured, tls_material):
    broker, url = secured
    topic = f"secured-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers, ADMIN) as admin:
        admin.create_topics([NewTopic(topic, 1, 1)])
    with SchemaRegistryClient(
        registry_conf(url, tls_material, **{"basic.auth.user.info": "carol:carol-pw"})
    ) as registry:
        with Producer(broker.bootstrap_servers, CAROL, value_serializer=AvroSerializer(registry, EVENT)) as producer:
            producer.send(topic, {"n": 5}).result(30)
        with Consumer(
            broker.bootstrap_servers, CAROL, auto_offset_reset="earliest", value_deserializer=AvroDeserializer(registry)
        ) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            records: list[Any] = []
            for _ in range(40):
                records.extend(consumer.poll(500))
                if records:
                    break
    assert [r.value for r in records] == [{"n": 5}]
