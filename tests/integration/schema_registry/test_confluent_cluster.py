"""confluent-kafka 2.16's SchemaRegistryClient against the registries of a two-broker kafkalog cluster (broker
processes on the session's ZooKeeper): what one instance registers the other answers with the same id and
version, registrations racing on both instances get distinct ids every instance agrees on, and a client given
``cluster.schema_registry_url`` (the comma-joined list Confluent's clients fail over along) keeps working, reads
and writes, when the first broker is stopped."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def sr_cluster(zookeeper, tmp_path_factory) -> Iterator[EmbeddedCluster]:
    c = EmbeddedCluster(
        2,
        data_dir=tmp_path_factory.mktemp("sr-cluster"),
        zookeeper_connect=f"{zookeeper.connect_string}/sr-{uuid.uuid4().hex[:8]}",
        schema_registry=True,
    )
    c.start()
    yield c
    c.stop()


def urls(cluster: EmbeddedCluster) -> list[str]:
    value = cluster.schema_registry_url
    assert value, "EmbeddedCluster(schema_registry=True) reports no registry URL"
    return value.split(",")


def client(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url, "max.retries": 0})


def eventually(call: Callable[[], Any], what: str, timeout_s: float = 30.0) -> Any:
    """``call()`` until it stops raising SchemaRegistryError (another instance catching up), then its value."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return call()
        except (SchemaRegistryError, OSError) as e:
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout_s}s waiting for {what}: {e}") from e
            time.sleep(0.1)


def record(name: str, *fields: str) -> Schema:
    return Schema(
        json.dumps(
            {"type": "record", "name": name, "fields": [{"name": f, "type": "string", "default": ""} for f in fields]}
        ),
        "AVRO",
    )


def test_what_one_instance_registers_the_other_answers(sr_cluster) -> None:
    first, second = (client(u) for u in urls(sr_cluster))
    subject = f"orders-{uuid.uuid4().hex[:8]}-value"
    name = f"Order_{subject[7:15]}"
    id1 = first.register_schema(subject, record(name, "a"))
    got = eventually(lambda: second.get_schema(id1), f"schema {id1} on the second registry")
    assert got.schema_str is not None and json.loads(got.schema_str)["name"] == name
    latest = eventually(lambda: second.get_latest_version(subject), f"{subject} on the second registry")
    assert (latest.version, latest.schema_id) == (1, id1)

    id2 = second.register_schema(subject, record(name, "a", "b"))
    assert id2 != id1
    assert eventually(lambda: client(urls(sr_cluster)[0]).get_version(subject, 2).schema_id, "v2 on the first") == id2
    # the same schema registered again through the other instance: the same id, no new version
    assert first.register_schema(subject, record(name, "a", "b")) == id2
    assert first.get_versions(subject) == [1, 2]


def test_registrations_racing_on_both_instances_get_distinct_ids_both_agree_on(sr_cluster) -> None:
    instances = urls(sr_cluster)
    stem = uuid.uuid4().hex[:8]
    results: dict[str, int] = {}
    errors: list[BaseException] = []

    def register(i: int, n: int) -> None:
        try:
            c = client(instances[i])
            for k in range(n):
                subject = f"race-{stem}-{i}-{k}"
                results[subject] = c.register_schema(subject, record(f"R_{stem}_{i}_{k}", "x"))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=register, args=(i, 8)) for i in range(len(instances))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(results) == 8 * len(instances)
    assert len(set(results.values())) == len(results), f"two schemas got one id: {results}"
    for url in instances:
        c = client(url)
        for subject, schema_id in results.items():
            latest = eventually(partial(c.get_latest_version, subject), f"{subject} at {url}")
            assert (latest.version, latest.schema_id) == (1, schema_id), (url, subject)


def test_the_comma_joined_url_fails_over_when_the_first_broker_stops(sr_cluster) -> None:
    both = SchemaRegistryClient({"url": sr_cluster.schema_registry_url, "max.retries": 0})
    subject = f"failover-{uuid.uuid4().hex[:8]}"
    name = f"F_{subject[9:]}"
    id1 = both.register_schema(subject, record(name, "a"))
    eventually(lambda: client(urls(sr_cluster)[1]).get_schema(id1), "the schema on the second registry")
    with AdminClient(sr_cluster.bootstrap_servers) as admin:
        (partition,) = admin.describe_topics(["_schemas"])["_schemas"].partitions
    # schema.registry.topic.replication.factor (3) capped at the live brokers: both, both in sync
    assert sorted(partition.replicas) == sorted(sr_cluster.broker_ids), partition
    assert sorted(partition.isr) == sorted(sr_cluster.broker_ids), partition

    sr_cluster.stop_broker(sr_cluster.broker_ids[0])
    try:
        fresh = SchemaRegistryClient({"url": sr_cluster.schema_registry_url, "max.retries": 0})
        assert fresh.get_schema(id1).schema_str is not None
        assert fresh.get_versions(subject) == [1]
        # a write: the _schemas topic (replicated to both brokers) moves its leader to the live broker
        id2 = eventually(lambda: fresh.register_schema(subject, record(name, "a", "b")), "a write after fail-over")
        assert id2 != id1
        assert fresh.get_versions(subject) == [1, 2]
    finally:
        sr_cluster.start_broker(sr_cluster.broker_ids[0])
