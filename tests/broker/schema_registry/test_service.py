"""``SchemaRegistryService``: its listeners, TLS and authentication from the broker's config, and its requests
before, during and after the registry's start (a stub broker; the registry on an in-memory store)."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import urllib.error
import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest

from broker.config import BrokerConfig, ConfigError
from broker.schema_registry.service import (
    RegistryListener,
    SchemaRegistryService,
    authenticator_for,
    parse_listeners,
    registry_ssl_properties,
)
from broker.security.scram_credentials import ScramCredentialCache
from spark_kafkalog.security.sasl.scram import ScramCredential, ScramMechanism
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="module")(_tls_material)

BASE = {
    "broker.id": "0",
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "log.dirs": "/nonexistent",
    "zookeeper.connect": "memory:unused",
}
SASL = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "security.inter.broker.protocol": "SASL_PLAINTEXT",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_reader="reader-secret";',
}


def stub_broker(**props: str) -> Any:
    config = BrokerConfig.from_properties({**BASE, **props})
    return SimpleNamespace(config=config, broker_id=0, scram_credentials=ScramCredentialCache(), registry=None)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (("http://127.0.0.1:0",), [RegistryListener("http", "127.0.0.1", 0)]),
        (
            ("https://0.0.0.0:8081", "http://[::1]:8082/"),
            [
                RegistryListener("https", "0.0.0.0", 8081),
                RegistryListener("http", "::1", 8082),
            ],
        ),
        (("http://:8081",), [RegistryListener("http", "", 8081)]),
    ],
)
def test_listeners_parse_into_scheme_host_and_port(values, expected):
    assert parse_listeners(values) == expected


@pytest.mark.parametrize(
    "value", ["127.0.0.1:8081", "ftp://h:1", "http://h", "http://h:99999", "http://h:1/path", "http://h:x"]
)
def test_a_listener_that_is_not_an_http_url_is_a_config_error_naming_the_key(value):
    with pytest.raises(ConfigError, match="schema.registry.listeners"):
        parse_listeners((value,))


def test_schema_registry_ssl_keys_win_over_the_brokers_ssl_keys():
    props = {
        "ssl.keystore.location": "/broker.p12",
        "ssl.keystore.password": "b",
        "ssl.truststore.location": "/trust.p12",
        "schema.registry.ssl.keystore.location": "/registry.p12",
        "schema.registry.ssl.keystore.password": "r",
        "listener.name.x.ssl.keystore.location": "/listener.p12",
    }
    assert registry_ssl_properties(props) == {
        "ssl.keystore.location": "/registry.p12",
        "ssl.keystore.password": "r",
        "ssl.truststore.location": "/trust.p12",
    }


@pytest.mark.parametrize(
    ("props", "basic"),
    [
        ({}, False),
        (SASL, True),
        ({**SASL, "schema.registry.authentication.method": "NONE"}, False),
        ({"schema.registry.authentication.method": "BASIC"}, True),
    ],
)
def test_basic_auth_is_the_default_when_a_broker_listener_uses_sasl(props, basic):
    assert (authenticator_for(stub_broker(**props)) is not None) is basic


def test_basic_auth_accepts_the_plain_jaas_users_and_the_scram_users():
    broker = stub_broker(**SASL)
    credential = ScramCredential.from_password(ScramMechanism.from_name("SCRAM-SHA-256"), "alice-secret")
    broker.scram_credentials.update_user("alice", {"SCRAM-SHA-256": credential.to_kafka_string()})
    auth = authenticator_for(broker)
    assert auth is not None
    assert auth.authenticate(basic("reader", "reader-secret")) == "User:reader"
    assert auth.authenticate(basic("alice", "alice-secret")) == "User:alice"
    assert auth.authenticate(basic("alice", "reader-secret")) is None


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# -- live services ------------------------------------------------------------------------------------
class SlowRegistry:
    """A registry whose start waits for ``release`` (or fails with ``failure``); answers GET /schemas/types."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.release = asyncio.Event()
        self.failure = failure
        self.stopped = False

    async def start(self) -> None:
        await self.release.wait()
        if self.failure is not None:
            raise self.failure

    async def stop(self) -> None:
        self.stopped = True

    async def schema_types(self) -> list[str]:
        return ["AVRO"]


def http(url: str, *, headers: dict[str, str] | None = None, context: ssl.SSLContext | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def run_service(broker: Any, registry: Any, scenario, *, listeners=None):
    async def main():
        service = SchemaRegistryService(broker, listeners=listeners, registry_factory=lambda: registry)
        await service.start()
        try:
            return await scenario(service)
        finally:
            await service.stop()

    return asyncio.run(main())


def in_thread(fn, *args, **kwargs):
    return asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args, **kwargs))


def test_requests_wait_for_the_registry_to_start_then_are_answered():
    registry = SlowRegistry()

    async def scenario(service):
        (url,) = service.urls
        pending = in_thread(http, url + "/schemas/types")
        await asyncio.sleep(0.3)
        assert not pending.done() and not service.ready
        registry.release.set()
        return await pending, service.ready

    answer, ready = run_service(stub_broker(), registry, scenario, listeners=["http://127.0.0.1:0"])
    assert answer == (200, ["AVRO"])
    assert ready
    assert registry.stopped


def test_a_registry_that_failed_to_start_answers_50001_naming_the_cause():
    registry = SlowRegistry(RuntimeError("the _schemas topic could not be created"))
    registry.release.set()

    async def scenario(service):
        with pytest.raises(RuntimeError, match="could not be created"):
            await service.wait_ready(5)
        return await in_thread(http, service.urls[0] + "/schemas/types")

    status, body = run_service(stub_broker(), registry, scenario, listeners=["http://127.0.0.1:0"])
    assert status == 500
    assert body["error_code"] == 50001
    assert "could not be created" in body["message"]


def test_requests_still_waiting_when_the_init_timeout_passes_answer_50002():
    broker = stub_broker(**{"schema.registry.init.timeout.ms": "300"})

    async def scenario(service):
        return await in_thread(http, service.urls[0] + "/schemas/types")

    status, body = run_service(broker, SlowRegistry(), scenario, listeners=["http://127.0.0.1:0"])
    assert (status, body["error_code"]) == (500, 50002)


def test_basic_auth_refuses_missing_or_wrong_credentials_with_401_before_the_registry():
    registry = SlowRegistry()
    registry.release.set()
    broker = stub_broker(**SASL, **{"schema.registry.listeners": "http://127.0.0.1:0"})

    async def scenario(service):
        url = service.urls[0] + "/schemas/types"
        return [
            await in_thread(http, url),
            await in_thread(http, url, headers={"Authorization": basic("admin", "nope")}),
            await in_thread(http, url, headers={"Authorization": basic("admin", "admin-secret")}),
        ]

    answers = run_service(broker, registry, scenario)
    assert answers == [
        (401, {"error_code": 401, "message": "Unauthorized"}),
        (401, {"error_code": 401, "message": "Unauthorized"}),
        (200, ["AVRO"]),
    ]


def test_https_listeners_use_schema_registry_ssl_keys(tls_material):
    registry = SlowRegistry()
    registry.release.set()
    broker = stub_broker(
        **{
            "schema.registry.listeners": "https://127.0.0.1:0,http://127.0.0.1:0",
            "schema.registry.ssl.keystore.location": str(tls_material.broker_keystore_p12),
            "schema.registry.ssl.keystore.password": tls_material.password,
            "schema.registry.ssl.key.password": tls_material.password,
        }
    )
    client = ssl.create_default_context(cafile=str(tls_material.ca_pem))

    async def scenario(service):
        secure, plain = service.urls
        assert secure.startswith("https://127.0.0.1:") and plain.startswith("http://127.0.0.1:")
        https_url = secure.replace("127.0.0.1", "localhost") + "/schemas/types"
        return await in_thread(http, https_url, context=client), await in_thread(http, plain + "/schemas/types")

    assert run_service(broker, registry, scenario) == ((200, ["AVRO"]), (200, ["AVRO"]))


def test_an_https_listener_without_key_material_is_a_config_error():
    broker = stub_broker(**{"schema.registry.listeners": "https://127.0.0.1:0"})

    async def build():
        SchemaRegistryService(broker)

    with pytest.raises(ConfigError, match=r"schema.registry.ssl.\* or ssl.\*"):
        asyncio.run(build())
