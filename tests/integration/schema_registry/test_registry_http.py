"""kafkalog's registry over real HTTP on an EmbeddedBroker: curl-like urllib requests against
``schema.registry.listeners``, the schemas kept in the broker's ``_schemas`` topic (read back after a restart),
and an https listener with basic auth checked against a SCRAM user created through the admin API."""

from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient
from spark_kafkalog.client.admin.admin_scram import UserScramCredentialUpsertion
from tests.schema_registry_support import ADMIN, secured_broker
from tests.security.certs import tls_material as _tls_material

tls_material = pytest.fixture(scope="module")(_tls_material)

CT = "application/vnd.schemaregistry.v1+json"
RECORD_V1 = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})
RECORD_V2 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string", "default": ""}],
    }
)


def call(
    url: str,
    method: str = "GET",
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
) -> tuple[int, Any, dict[str, str]]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": CT, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            text = response.read()
            return response.status, json.loads(text) if text else None, dict(response.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), dict(e.headers)


def test_the_embedded_broker_serves_the_registry_at_schema_registry_url(registry_url, new_subject):
    subject = new_subject("orders-value")
    status, first, headers = call(f"{registry_url}/subjects/{subject}/versions", "POST", {"schema": RECORD_V1})
    assert status == 200 and headers["Content-Type"] == CT
    assert call(f"{registry_url}/subjects/{subject}/versions", "POST", {"schema": RECORD_V2})[1]["version"] == 2
    status, latest, _ = call(f"{registry_url}/subjects/{subject}/versions/latest")
    assert status == 200
    assert (latest["subject"], latest["version"], json.loads(latest["schema"])) == (subject, 2, json.loads(RECORD_V2))
    status, by_id, _ = call(f"{registry_url}/schemas/ids/{first['id']}")
    assert json.loads(by_id["schema"]) == json.loads(RECORD_V1)
    assert call(f"{registry_url}/subjects/{subject}/versions")[1] == [1, 2]
    assert subject in call(f"{registry_url}/subjects")[1]


def test_an_incompatible_schema_is_refused_with_409_over_http(registry_url, new_subject):
    subject = new_subject()
    call(f"{registry_url}/subjects/{subject}/versions", "POST", {"schema": RECORD_V1})
    changed = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]})
    status, body, _ = call(f"{registry_url}/subjects/{subject}/versions", "POST", {"schema": changed})
    assert (status, body["error_code"]) == (409, 409)
    status, verdict, _ = call(
        f"{registry_url}/compatibility/subjects/{subject}/versions/latest?verbose=true", "POST", {"schema": changed}
    )
    assert status == 200 and verdict["is_compatible"] is False and verdict["messages"]


def test_unknown_paths_and_bad_bodies_get_confluents_error_json(registry_url):
    assert call(f"{registry_url}/no/such/path")[:2] == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    assert call(f"{registry_url}/subjects/nope-{uuid.uuid4().hex}/versions")[1]["error_code"] == 40401
    request = urllib.request.Request(
        f"{registry_url}/subjects/x/versions", data=b"{oops", method="POST", headers={"Content-Type": CT}
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=30)
    assert info.value.code == 400 and json.loads(info.value.read())["error_code"] == 400


def test_the_schemas_live_in_the_topic_and_survive_a_broker_restart(tmp_path):
    connect = f"memory:sr-restart-{uuid.uuid4().hex[:8]}"
    props = {"zookeeper_connect": connect, "log_dir": tmp_path, "schema_registry_listeners": "http://127.0.0.1:0"}
    with EmbeddedBroker(0, **props) as broker:
        url = broker.schema_registry_url
        assert url is not None
        registered = call(f"{url}/subjects/kept/versions", "POST", {"schema": RECORD_V1})[1]
        call(f"{url}/config/kept", "PUT", {"compatibility": "FULL"})
    with EmbeddedBroker(0, **props) as broker:
        url = broker.wait_schema_registry()
        assert call(f"{url}/subjects/kept/versions/1")[1]["id"] == registered["id"]
        assert call(f"{url}/config/kept")[1] == {"compatibilityLevel": "FULL"}
        with AdminClient(broker.bootstrap_servers) as admin:
            assert "_schemas" in admin.list_topics(include_internal=True)


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_https_with_basic_auth_accepts_a_scram_user_created_through_the_admin_api(tmp_path, tls_material):
    broker = secured_broker("sr-tls", tmp_path, tls_material, "SCRAM-SHA-512")
    with broker:
        url = broker.wait_schema_registry().replace("127.0.0.1", "localhost")
        assert url.startswith("https://localhost:")
        with AdminClient(broker.bootstrap_servers, ADMIN) as admin:
            admin.alter_user_scram_credentials([UserScramCredentialUpsertion("alice", "SCRAM-SHA-512", "alice-pw")])
        context = ssl.create_default_context(cafile=str(tls_material.ca_pem))
        types = f"{url}/schemas/types"
        deadline = time.monotonic() + 20
        while call(types, headers=basic("alice", "alice-pw"), context=context)[0] == 401:  # the cache catching up
            assert time.monotonic() < deadline, "the SCRAM user never became valid for the registry"
            time.sleep(0.1)
        assert call(types, headers=basic("alice", "alice-pw"), context=context)[:2] == (
            200,
            ["AVRO", "JSON", "PROTOBUF"],
        )
        assert call(types, headers=basic("admin", "admin-secret"), context=context)[0] == 200  # PLAIN JAAS user
        status, body, headers = call(types, headers=basic("alice", "wrong"), context=context)
        assert (status, body) == (401, {"error_code": 401, "message": "Unauthorized"})
        assert headers["WWW-Authenticate"] == 'Basic realm="SchemaRegistry"'
        assert call(types, context=context)[0] == 401
        with pytest.raises(OSError):  # TLS only: plain http on that port gets no HTTP answer
            urllib.request.urlopen(url.replace("https://", "http://") + "/schemas/types", timeout=5)
