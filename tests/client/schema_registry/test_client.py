"""SchemaRegistryClient against a scripted HTTP registry: the requests it sends (paths, queries, headers,
bodies), the answers it reads, errors, fail-over and retries, keep-alive, caches, and secrets kept out of
reprs and messages."""

from __future__ import annotations

import base64
import json
import threading

import pytest

from spark_kafkalog.client.errors import ConfigError, KafkaClientError
from spark_kafkalog.client.schema_registry import (
    RegisteredSchema,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from tests.client.schema_registry.fake_registry import FakeRegistry, Request

AVRO_RECORD = '{"type":"record","name":"User","namespace":"example","fields":[{"name":"id","type":"long"}]}'


def answering(status, body):
    def answer(request: Request):
        return status, body

    return answer


def test_register_posts_the_schema_to_the_subjects_versions_and_returns_the_id():
    with FakeRegistry(answering(200, {"id": 7})) as fake, SchemaRegistryClient(fake.url) as client:
        assert client.register_schema("orders value/x", Schema(AVRO_RECORD)) == 7
    (request,) = fake.requests
    assert (request.method, request.path, request.query) == (
        "POST",
        "/subjects/orders%20value%2Fx/versions",
        {"normalize": "false"},
    )
    assert request.body == {"schema": AVRO_RECORD, "schemaType": "AVRO", "references": []}
    assert request.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    assert "application/vnd.schemaregistry.v1+json" in request.headers["accept"]


def test_a_registration_is_cached_per_subject_and_schema():
    with FakeRegistry(answering(200, {"id": 3})) as fake, SchemaRegistryClient(fake.url) as client:
        for _ in range(3):
            assert client.register_schema("s", Schema(AVRO_RECORD)) == 3
        client.register_schema("other", Schema(AVRO_RECORD))
    assert [r.path for r in fake.requests] == ["/subjects/s/versions", "/subjects/other/versions"]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"schema": '"string"'}, Schema('"string"', "AVRO")),
        ({"schema": 'syntax = "proto3";', "schemaType": "PROTOBUF"}, Schema('syntax = "proto3";', "PROTOBUF")),
        (
            {"schema": "{}", "schemaType": "JSON", "references": [{"name": "a.json", "subject": "a", "version": 2}]},
            Schema("{}", "JSON", [SchemaReference("a.json", "a", 2)]),
        ),
    ],
)
def test_get_schema_reads_the_answer_of_schemas_ids(answer, expected):
    with FakeRegistry(answering(200, answer)) as fake, SchemaRegistryClient(fake.url) as client:
        assert client.get_schema(12, fmt="serialized") == expected
        assert client.get_schema(12, fmt="serialized") == expected  # cached
    (request,) = fake.requests
    assert (request.path, request.query) == ("/schemas/ids/12", {"format": "serialized"})


def test_versions_latest_and_lookup_answer_registered_schemas():
    with FakeRegistry() as fake, SchemaRegistryClient({"url": fake.url}) as client:
        first = client.register_schema("t-value", Schema(AVRO_RECORD))
        second = client.register_schema("t-value", Schema('"string"'))
        assert client.get_version("t-value", 1) == RegisteredSchema(first, Schema(AVRO_RECORD), "t-value", 1)
        assert client.get_latest_version("t-value") == RegisteredSchema(second, Schema('"string"'), "t-value", 2)
        found = client.lookup_schema("t-value", Schema(AVRO_RECORD))
        assert (found.schema_id, found.version, found.subject) == (first, 1, "t-value")
        with pytest.raises(SchemaRegistryError) as missing:
            client.lookup_schema("t-value", Schema('"int"'))
    assert (missing.value.http_status, missing.value.error_code) == (404, 40403)
    assert "Schema not found" in str(missing.value) and not missing.value.retriable


@pytest.mark.parametrize(
    ("status", "body", "code", "retriable"),
    [
        (409, {"error_code": 409, "message": "Schema being registered is incompatible"}, 409, False),
        (422, {"error_code": 42201, "message": "Invalid schema"}, 42201, False),
        (404, {"error_code": 40401, "message": "Subject 'x' not found."}, 40401, False),
        (500, b"<html>boom</html>", -1, True),
    ],
)
def test_refusals_raise_schema_registry_errors_with_the_registrys_code(status, body, code, retriable):
    with FakeRegistry(answering(status, body)) as fake:
        client = SchemaRegistryClient({"url": fake.url, "max.retries": 0})
        with pytest.raises(SchemaRegistryError) as error:
            client.register_schema("x", Schema(AVRO_RECORD))
    assert isinstance(error.value, KafkaClientError)
    assert (error.value.http_status, error.value.error_code, error.value.retriable) == (status, code, retriable)
    assert str(status) in str(error.value)


def test_retriable_statuses_are_sent_again_then_fail_over_to_the_next_url():
    statuses = iter([503, 503])
    with FakeRegistry(lambda r: (next(statuses), {"error_code": 50003, "message": "busy"})) as down:
        with FakeRegistry(answering(200, ["a", "b"])) as up:
            client = SchemaRegistryClient(
                {"url": f"{down.url},{up.url}", "max.retries": 1, "retries.wait.ms": 1, "retries.max.wait.ms": 2}
            )
            assert client.get_subjects() == ["a", "b"]
    assert len(down.requests) == 2 and len(up.requests) == 1


def test_an_unreachable_url_fails_over_and_none_answering_names_them_all():
    with FakeRegistry(answering(200, [1, 2])) as up:
        client = SchemaRegistryClient({"url": f"http://127.0.0.1:1,{up.url}", "max.retries": 0})
        assert client.get_versions("s") == [1, 2]
    client = SchemaRegistryClient({"url": "http://127.0.0.1:1,http://127.0.0.1:2", "max.retries": 0})
    with pytest.raises(SchemaRegistryError) as error:
        client.get_subjects()
    assert error.value.http_status == -1 and error.value.retriable
    assert "http://127.0.0.1:1" in str(error.value) and "http://127.0.0.1:2" in str(error.value)


def test_requests_of_one_thread_share_a_keep_alive_connection_and_threads_do_not_share():
    with FakeRegistry(answering(200, [])) as fake, SchemaRegistryClient(fake.url) as client:
        for _ in range(3):
            client.get_subjects()
        thread = threading.Thread(target=client.get_subjects)
        thread.start()
        thread.join()
    connections = [r.connection for r in fake.requests]
    assert len(set(connections[:3])) == 1 and connections[3] != connections[0]


@pytest.mark.parametrize(
    "conf",
    [
        {"basic.auth.user.info": "alice:s3cr:et"},
        {"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:s3cr:et"},
        {"basic.auth.credentials.source": "URL", "userinfo": "alice:s3cr%3Aet@"},
        {"userinfo": "alice:s3cr%3Aet@"},
    ],
)
def test_basic_auth_from_user_info_or_the_url_is_sent_and_never_shown(conf):
    conf = dict(conf)
    userinfo = conf.pop("userinfo", "")
    with FakeRegistry(answering(401, {"error_code": 401, "message": "Unauthorized"})) as fake:
        url = fake.url.replace("http://", f"http://{userinfo}")
        client = SchemaRegistryClient({"url": url, "max.retries": 0, **conf})
        with pytest.raises(SchemaRegistryError) as error:
            client.get_subjects()
    expected = "Basic " + base64.b64encode(b"alice:s3cr:et").decode()
    assert fake.requests[0].headers["authorization"] == expected
    for shown in (repr(client), str(error.value), repr(client._config)):
        assert "s3cr" not in shown and "alice" not in shown


@pytest.mark.parametrize(
    ("conf", "complaint"),
    [
        ({}, "'url' is required"),
        ({"url": "ftp://h:1"}, "invalid Schema Registry url"),
        ({"url": "http://h:1", "bogus.key": 1}, "bogus.key"),
        ({"url": "http://h:1", "basic.auth.credentials.source": "SASL_INHERIT"}, "SASL_INHERIT"),
        ({"url": "http://h:1", "basic.auth.credentials.source": "URL"}, "credentials in the url"),
        ({"url": "http://a:hunter2@h:1", "basic.auth.user.info": "c:hunter2"}, "carries credentials too"),
        ({"url": "http://h:1", "basic.auth.user.info": "nocolon"}, "user:password"),
        ({"url": "http://h:1", "timeout": "soon"}, "'timeout'"),
        ({"url": "https://h:1", "ssl.key.location": "/k.pem"}, "ssl.certificate.location is required"),
    ],
)
def test_bad_configuration_is_refused_naming_the_setting(conf, complaint):
    with pytest.raises(ConfigError) as error:
        SchemaRegistryClient(conf)
    assert complaint in str(error.value)
    assert "hunter2" not in str(error.value)


def test_compatibility_config_and_mode_calls():
    answers = {
        ("PUT", "/config/s"): {"compatibility": "FULL"},
        ("GET", "/config/s"): {"compatibilityLevel": "FULL"},
        ("GET", "/config"): {"compatibilityLevel": "BACKWARD"},
        ("POST", "/compatibility/subjects/s/versions/latest"): {"is_compatible": False, "messages": ["nope"]},
        ("PUT", "/mode"): {"mode": "READONLY"},
        ("GET", "/mode/s"): {"mode": "READWRITE"},
        ("DELETE", "/subjects/s"): [1, 2],
        ("DELETE", "/subjects/s/versions/2"): 2,
    }
    with FakeRegistry(lambda r: (200, answers[(r.method, r.path)])) as fake, SchemaRegistryClient(fake.url) as client:
        assert client.set_compatibility("s", "full") == "FULL"
        assert client.get_compatibility("s") == "FULL"
        assert client.get_compatibility() == "BACKWARD"
        assert client.test_compatibility("s", Schema(AVRO_RECORD)) is False
        assert client.compatibility_messages("s", Schema(AVRO_RECORD)) == (False, ["nope"])
        assert client.set_mode("READONLY") == "READONLY"
        assert client.get_mode("s") == "READWRITE"
        assert client.delete_subject("s", permanent=True) == [1, 2]
        assert client.delete_version("s", 2) == 2
    put = fake.requests[0]
    assert put.body == {"compatibility": "FULL"}
    assert fake.requests[3].query == {"normalize": "false", "verbose": "true"}
    assert fake.requests[7].query == {"permanent": "true"}
    assert fake.requests[5].query == {"force": "false"}


def test_deleting_a_subject_forgets_its_cached_latest_version():
    with FakeRegistry() as fake, SchemaRegistryClient(fake.url) as client:
        client.register_schema("s", Schema(AVRO_RECORD))
        client.get_latest_version("s")
        client.get_latest_version("s")
        fake.answer = lambda r: (200, [1]) if r.method == "DELETE" else fake.memory.answer(r)
        client.delete_subject("s")
        client.get_latest_version("s")
    latest = [r for r in fake.requests if r.path == "/subjects/s/versions/latest"]
    assert len(latest) == 2


def test_latest_versions_expire_after_the_configured_ttl():
    with FakeRegistry() as fake:
        client = SchemaRegistryClient({"url": fake.url, "cache.latest.ttl.sec": 0})
        client.register_schema("s", Schema(AVRO_RECORD))
        client.get_latest_version("s")
        client.get_latest_version("s")
    assert len([r for r in fake.requests if r.path.endswith("/latest")]) == 2


def test_schema_values_hash_and_compare_by_text_type_and_references():
    a = Schema("{}", "json", [{"name": "n", "subject": "s", "version": 1}])
    b = Schema("{}", "JSON", (SchemaReference("n", "s", 1),))
    assert a == b and hash(a) == hash(b) and a.schema_type == "JSON"
    assert json.loads(json.dumps(a.to_dict())) == {
        "schema": "{}",
        "schemaType": "JSON",
        "references": [{"name": "n", "subject": "s", "version": 1}],
    }
    assert Schema.from_dict({"schema": "x"}).schema_type == "AVRO"


def test_threads_share_one_client_each_on_its_own_connection():
    with FakeRegistry(answering(200, ["s"])) as fake, SchemaRegistryClient(fake.url) as client:
        results: list[list[str]] = []

        def work() -> None:
            for _ in range(20):
                results.append(client.get_subjects())

        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == [["s"]] * 120
    assert len({r.connection for r in fake.requests}) == 6


def test_a_keep_alive_connection_the_server_dropped_is_reopened_without_spending_a_retry():
    with FakeRegistry(answering(200, ["s"]), drop_idle=True) as fake:
        with SchemaRegistryClient({"url": fake.url, "max.retries": 0}) as client:
            assert [client.get_subjects() for _ in range(3)] == [["s"]] * 3
    assert len({r.connection for r in fake.requests}) == 3


def test_an_answer_slower_than_the_timeout_fails_naming_the_url():
    with FakeRegistry(answering(200, []), delay=1.0) as fake:
        with SchemaRegistryClient({"url": fake.url, "max.retries": 0, "timeout": 0.2}) as client:
            with pytest.raises(SchemaRegistryError) as error:
                client.get_subjects()
    assert error.value.http_status == -1 and fake.url in str(error.value) and "timed out" in str(error.value)


def test_schema_registry_errors_survive_pickling_as_spark_ships_them():
    import pickle

    error = pickle.loads(pickle.dumps(SchemaRegistryError(409, 409, "incompatible")))
    assert (error.http_status, error.error_code, error.message, error.retriable) == (409, 409, "incompatible", False)


def test_caches_drop_the_least_recently_used_entry_and_expired_ones():
    from spark_kafkalog.client.schema_registry.client import _Lru

    now = [0.0]
    cache: _Lru[str, int] = _Lru(2, ttl=10, clock=lambda: now[0])
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    now[0] = 10.0
    assert cache.get("a") is None and cache.get("c") is None


def test_cache_capacity_bounds_the_schemas_kept_by_id():
    with FakeRegistry(lambda r: (200, {"schema": f'"{r.path}"'})) as fake:
        with SchemaRegistryClient({"url": fake.url, "cache.capacity": 2}) as client:
            for schema_id in (1, 2, 3, 1):
                client.get_schema(schema_id)
    assert [r.path for r in fake.requests] == ["/schemas/ids/1", "/schemas/ids/2", "/schemas/ids/3", "/schemas/ids/1"]
