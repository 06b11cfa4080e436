"""Registries on every broker of an ``EmbeddedCluster(schema_registry=True)`` (broker processes on a real
ZooKeeper): one ``_schemas`` topic, so a schema registered through one broker is answered by the others, and
registrations racing on two instances get distinct ids that every instance agrees on."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from broker.embedded_cluster import EmbeddedCluster

CT = "application/vnd.schemaregistry.v1+json"


def call(url: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": CT})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def record(name: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": "f", "type": "int"}]})


@pytest.fixture(scope="module")
def registry_cluster(zookeeper, tmp_path_factory):
    cluster = EmbeddedCluster(
        2,
        data_dir=tmp_path_factory.mktemp("sr-cluster"),
        zookeeper_connect=f"{zookeeper.connect_string}/sr-{uuid.uuid4().hex[:8]}",
        schema_registry=True,
        fault_injection=False,
    )
    cluster.start()
    yield cluster
    cluster.stop()


def eventually(fn, what: str, timeout_s: float = 30.0):
    deadline = time.monotonic() + timeout_s
    while True:
        result = fn()
        if result:
            return result
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_every_broker_serves_a_registry_and_the_url_lists_them(registry_cluster):
    urls = registry_cluster.schema_registry_url.split(",")
    assert len(urls) == 2
    assert [u.rsplit(":", 1)[1] for u in urls] == [str(registry_cluster.schema_registry_ports[b]) for b in (1, 2)]
    for url in urls:
        assert call(f"{url}/schemas/types") == (200, ["AVRO", "JSON", "PROTOBUF"])


def test_a_schema_registered_on_one_broker_is_answered_by_the_other(registry_cluster):
    first, second = registry_cluster.schema_registry_url.split(",")
    subject = f"shared-{uuid.uuid4().hex[:8]}"
    status, registered = call(f"{first}/subjects/{subject}/versions", "POST", {"schema": record("Shared")})
    assert status == 200
    seen = eventually(
        lambda: (a := call(f"{second}/subjects/{subject}/versions/1"))[0] == 200 and a[1],
        "the second registry reading the registration",
    )
    assert seen["id"] == registered["id"]
    assert call(f"{second}/schemas/ids/{registered['id']}")[0] == 200


def test_registrations_racing_on_two_instances_get_distinct_ids_both_agree_on(registry_cluster):
    urls = registry_cluster.schema_registry_url.split(",")
    tag = uuid.uuid4().hex[:8]
    jobs = [(urls[i % 2], f"race-{tag}-{i}", record(f"Race{tag}N{i}")) for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda j: call(f"{j[0]}/subjects/{j[1]}/versions", "POST", {"schema": j[2]}), jobs))
    assert all(status == 200 for status, _ in answers), answers
    ids = [body["id"] for _, body in answers]
    assert len(set(ids)) == len(ids)
    for url in urls:
        for (_, subject, schema), schema_id in zip(jobs, ids, strict=True):
            got = eventually(
                lambda u=url, s=subject: (a := call(f"{u}/subjects/{s}/versions/latest"))[0] == 200 and a[1],
                f"{subject} on {url}",
            )
            assert (got["id"], json.loads(got["schema"])) == (schema_id, json.loads(schema))
