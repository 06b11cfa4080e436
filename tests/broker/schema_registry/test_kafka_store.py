"""``KafkaSchemaStore`` against an in-process broker: the topic it creates, read-your-writes, several
registry instances on one topic agreeing and racing for ids, and a restart rebuilding from the log."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from broker.schema_registry.registry import SchemaRegistry
from broker.schema_registry.store import KafkaSchemaStore, StoreError
from spark_kafkalog.client import AdminClient
from tests.broker.conftest import start_brokers
from tests.broker.schema_registry.fake_schemas import parse_fields


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    yield b
    b.stop()


def fields(*names):
    return json.dumps(list(names))


def registry(broker, topic, **kwargs):
    store = KafkaSchemaStore(broker.bootstrap_servers, {"client.id": "registry-test"}, topic=topic, timeout_s=20)
    return SchemaRegistry(store, parser=kwargs.pop("parser", parse_fields), **kwargs)


def test_the_first_write_creates_a_compacted_single_partition_topic_capped_at_the_live_brokers(broker):
    topic = f"_schemas_{uuid.uuid4().hex[:6]}"
    admin = AdminClient(broker.bootstrap_servers)

    async def go():
        r = registry(broker, topic)
        await r.start()
        try:
            assert r.ready
            assert await r.subjects() == []
            assert topic not in admin.list_topics()  # made by the first write, when a cluster's brokers are up
            await r.register("s", None, fields("a"), [])
            return await r.versions("s")
        finally:
            await r.stop()

    try:
        assert asyncio.run(go()) == [1]
        description = admin.describe_topics([topic])[topic]
        assert len(description.partitions) == 1
        assert len(description.partitions[0].replicas) == 1  # replication factor 3 capped at 1 broker
        assert admin.describe_configs(topic, keys=["cleanup.policy"])["cleanup.policy"] == "compact"
    finally:
        admin.close()


def test_a_registry_started_before_the_topic_exists_reads_it_once_another_creates_it(broker, monkeypatch):
    topic = f"_schemas_{uuid.uuid4().hex[:6]}"
    monkeypatch.setattr(KafkaSchemaStore, "WATCH_INTERVAL_S", 0.1)

    async def go():
        waiting, writer = registry(broker, topic), registry(broker, topic)
        await waiting.start()
        await writer.start()
        try:
            registered = await writer.register("s", None, fields("a"), [])
            for _ in range(100):  # the watch task opens the topic, then tails it
                if await waiting.subjects() == ["s"]:
                    break
                await asyncio.sleep(0.05)
            return registered.id, await waiting.subjects(), (await waiting.get_version("s", "latest")).id
        finally:
            await waiting.stop()
            await writer.stop()

    assert asyncio.run(go()) == (1, ["s"], 1)


def test_writes_are_read_back_and_a_restart_replays_the_log(broker):
    topic = f"_schemas_{uuid.uuid4().hex[:6]}"

    async def first():
        r = registry(broker, topic)
        await r.start()
        try:
            a = await r.register("s", None, fields("a"), [])
            b = await r.register("s", None, fields("a", "b="), [])
            await r.set_config("s", {"compatibility": "FULL"})
            await r.set_mode("t", "READONLY")
            await r.delete_version("s", 1)
            return a.id, b.id
        finally:
            await r.stop()

    async def second():
        r = registry(broker, topic)
        await r.start()
        try:
            return (
                await r.versions("s", deleted=True),
                await r.versions("s"),
                (await r.get_version("s", 2)).id,
                await r.get_config("s"),
                await r.get_mode("t"),
                (await r.register("u", None, fields("z"), [])).id,
            )
        finally:
            await r.stop()

    assert asyncio.run(first()) == (1, 2)
    assert asyncio.run(second()) == ([1, 2], [2], 2, {"compatibilityLevel": "FULL"}, "READONLY", 3)


def test_two_instances_on_one_topic_agree_and_race_for_ids(broker):
    topic = f"_schemas_{uuid.uuid4().hex[:6]}"

    async def go():
        a, b = registry(broker, topic), registry(broker, topic)
        await a.start()
        await b.start()
        try:
            # Both register different schemas at once, each proposing the next id: the log decides.
            results = await asyncio.gather(
                *(a.register(f"a{i}", None, fields(f"a{i}"), []) for i in range(5)),
                *(b.register(f"b{i}", None, fields(f"b{i}"), []) for i in range(5)),
            )
            ids = [r.id for r in results]
            assert sorted(ids) == list(range(1, 11)), ids
            await a._sync()
            await b._sync()
            seen_a = [(s.subject, s.version, s.id) for s in await a.schemas()]
            seen_b = [(s.subject, s.version, s.id) for s in await b.schemas()]
            assert seen_a == seen_b
            assert len(seen_a) == 10
            # the records lost in races are ignored alike by both replays
            assert a.state.ignored == b.state.ignored
            # the same schema through the other instance gets the same id
            again = await b.register("x", None, fields("a0"), [])
            assert again.id == (await a.get_version("a0", 1)).id
        finally:
            await a.stop()
            await b.stop()

        fresh = registry(broker, topic)
        await fresh.start()
        try:
            return [(s.subject, s.version, s.id) for s in await fresh.schemas()], seen_a
        finally:
            await fresh.stop()

    replayed, seen = asyncio.run(go())
    assert [row for row in replayed if row[0] != "x"] == seen


def test_real_avro_through_the_topic(broker):
    from spark_kafkalog.schemas import parse_schema

    topic = f"_schemas_{uuid.uuid4().hex[:6]}"
    v1 = '{"type":"record","name":"User","fields":[{"name":"a","type":"int"}]}'

    async def go():
        r = registry(broker, topic, parser=parse_schema)
        await r.start()
        try:
            got = await r.register("users-value", None, v1, [])
            return got.id, (await r.schema_by_id(got.id)).schema.canonical
        finally:
            await r.stop()

    schema_id, canonical = asyncio.run(go())
    assert schema_id == 1
    assert json.loads(canonical)["name"] == "User"


def test_an_existing_topic_with_several_partitions_is_refused(broker):
    from spark_kafkalog.client.types import NewTopic

    topic = f"_schemas_{uuid.uuid4().hex[:6]}"
    admin = AdminClient(broker.bootstrap_servers)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)])
    finally:
        admin.close()

    async def go():
        r = registry(broker, topic)
        with pytest.raises(StoreError, match="has 2 partitions"):
            await r.start()
        assert not r.ready

    asyncio.run(go())


def test_an_unreachable_cluster_fails_start_with_a_store_error_naming_it():
    async def go():
        store = KafkaSchemaStore("127.0.0.1:1", {"request.timeout.ms": 500}, timeout_s=2)
        with pytest.raises(StoreError, match="127.0.0.1:1|_schemas"):
            await store.start()

    asyncio.run(go())
