"""Committed metadata across clients, against one in-process broker: kafka-python (consumer and admin),
confluent-kafka (consumer and admin), aiokafka (consumer and admin) and kafkalog's own consumer and admin
each commit offset 10 with metadata, and every one of them reads it back exactly. confluent-kafka-python
treats metadata as a C string (see ``broker/handlers/_groups.py``): without the broker's help it read
metadata committed by any other client with stray bytes after it (``'m1\\x020&V'``) or a UnicodeDecodeError,
and its own commits read back as ``'m1\\x00'`` in the other clients."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import aiokafka
import aiokafka.admin
import confluent_kafka
import confluent_kafka.admin
import kafka
import kafka.admin
import pytest
from kafka.structs import OffsetAndMetadata as KafkaPythonOffset
from kafka.structs import TopicPartition as KafkaPythonPartition

from spark_kafkalog.client import AdminClient, Consumer, TopicPartition
from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from tests.broker.conftest import start_brokers
from tests.waiting import wait_until

TOPIC = "orders"
OFFSET = 10


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, offsets_topic_num_partitions=1, group_initial_rebalance_delay_ms=0)
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 1, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 1)), 10, "the topic's leader")
    yield b.bootstrap_servers
    b.stop()


# -- writers: commit offset 10 of orders-0 for the group with the metadata -----------------------------------


def _kafka_python(bootstrap: str, group: str, metadata: str | None) -> None:
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        c.commit({KafkaPythonPartition(TOPIC, 0): KafkaPythonOffset(OFFSET, metadata, -1)})
    finally:
        c.close()


def _kafka_python_admin(bootstrap: str, group: str, metadata: str | None) -> None:
    a = kafka.admin.KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        errors = a.alter_group_offsets(group, {KafkaPythonPartition(TOPIC, 0): KafkaPythonOffset(OFFSET, metadata, -1)})
        assert [e.errno for e in errors.values()] == [0]
    finally:
        a.close()


def _confluent(bootstrap: str, group: str, metadata: str | None) -> None:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        c.commit(offsets=[confluent_kafka.TopicPartition(TOPIC, 0, OFFSET, metadata=metadata)], asynchronous=False)
    finally:
        c.close()


def _confluent_admin(bootstrap: str, group: str, metadata: str | None) -> None:
    a = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    request = confluent_kafka.ConsumerGroupTopicPartitions(
        group, [confluent_kafka.TopicPartition(TOPIC, 0, OFFSET, metadata=metadata)]
    )
    for future in a.alter_consumer_group_offsets([request]).values():
        future.result(30)


def _aiokafka(bootstrap: str, group: str, metadata: str | None) -> None:
    async def commit() -> None:
        c = aiokafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        await c.start()
        try:
            tp = aiokafka.TopicPartition(TOPIC, 0)
            c.assign([tp])
            await c.commit({tp: aiokafka.structs.OffsetAndMetadata(OFFSET, metadata)})
        finally:
            await c.stop()

    asyncio.run(commit())


def _kafkalog(bootstrap: str, group: str, metadata: str | None) -> None:
    with Consumer(bootstrap, group_id=group, enable_auto_commit=False) as c:
        c.assign([TopicPartition(TOPIC, 0)])
        c.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(OFFSET, metadata)})


def _kafkalog_admin(bootstrap: str, group: str, metadata: str | None) -> None:
    with AdminClient(bootstrap) as a:
        a.alter_group_offsets(group, {TopicPartition(TOPIC, 0): OffsetAndMetadata(OFFSET, metadata)})


WRITERS: dict[str, Callable[[str, str, str | None], None]] = {
    "kafka-python": _kafka_python,
    "kafka-python admin": _kafka_python_admin,
    "confluent-kafka": _confluent,
    "confluent-kafka admin": _confluent_admin,
    "aiokafka": _aiokafka,
    "kafkalog": _kafkalog,
    "kafkalog admin": _kafkalog_admin,
}


# -- readers: (offset, metadata) committed for orders-0 -------------------------------------------------------


def _read_kafka_python(bootstrap: str, group: str) -> tuple[int, str]:
    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        got = c.committed(KafkaPythonPartition(TOPIC, 0), metadata=True)
        return got.offset, got.metadata
    finally:
        c.close()


def _read_kafka_python_admin(bootstrap: str, group: str) -> tuple[int, str]:
    a = kafka.admin.KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        got = a.list_group_offsets(group)[group][KafkaPythonPartition(TOPIC, 0)]
        return got.offset, got.metadata
    finally:
        a.close()


def _read_confluent(bootstrap: str, group: str) -> tuple[int, str]:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (got,) = c.committed([confluent_kafka.TopicPartition(TOPIC, 0)], timeout=30)
        return got.offset, got.metadata
    finally:
        c.close()


def _read_confluent_admin(bootstrap: str, group: str) -> tuple[int, str]:
    a = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    request = confluent_kafka.ConsumerGroupTopicPartitions(group, [confluent_kafka.TopicPartition(TOPIC, 0)])
    (future,) = a.list_consumer_group_offsets([request]).values()
    (got,) = future.result(30).topic_partitions
    return got.offset, got.metadata


def _read_aiokafka_admin(bootstrap: str, group: str) -> tuple[int, str]:
    async def read() -> tuple[int, str]:
        a = aiokafka.admin.AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await a.start()
        try:
            got = (await a.list_consumer_group_offsets(group))[aiokafka.TopicPartition(TOPIC, 0)]
            return got.offset, got.metadata
        finally:
            await a.close()

    return asyncio.run(read())


def _read_kafkalog(bootstrap: str, group: str) -> tuple[int, str]:
    with Consumer(bootstrap, group_id=group, enable_auto_commit=False) as c:
        got = c.committed([TopicPartition(TOPIC, 0)])[TopicPartition(TOPIC, 0)]
        assert got is not None
        return got.offset, got.metadata


def _read_kafkalog_admin(bootstrap: str, group: str) -> tuple[int, str]:
    with AdminClient(bootstrap) as a:
        got = a.list_group_offsets(group)[TopicPartition(TOPIC, 0)]
        return got.offset, got.metadata


READERS: dict[str, Callable[[str, str], tuple[int, str]]] = {
    "kafka-python": _read_kafka_python,
    "kafka-python admin": _read_kafka_python_admin,
    "confluent-kafka": _read_confluent,
    "confluent-kafka admin": _read_confluent_admin,
    "aiokafka admin": _read_aiokafka_admin,  # aiokafka's consumer.committed() returns the offset only
    "kafkalog": _read_kafkalog,
    "kafkalog admin": _read_kafkalog_admin,
}

METADATA = {"m1": "m1", "non-ASCII": "é✓ métadonnées 日本語", "empty": ""}
#: confluent-kafka and aiokafka refuse null metadata themselves (TypeError), before any request
NULL_WRITERS = ["kafka-python", "kafka-python admin", "kafkalog", "kafkalog admin"]
CASES = [(w, k) for w in WRITERS for k in METADATA] + [(w, "null") for w in NULL_WRITERS]


def _read_all(bootstrap: str, group: str) -> dict[str, tuple[int, str] | str]:
    out: dict[str, tuple[int, str] | str] = {}
    for name, read in READERS.items():
        try:
            out[name] = read(bootstrap, group)
        except UnicodeDecodeError as e:  # confluent-kafka decoding stray bytes after the metadata
            out[name] = f"UnicodeDecodeError: {e}"
    return out


@pytest.mark.parametrize("writer, kind", CASES, ids=[f"{w}-{k}" for w, k in CASES])
def test_every_client_reads_the_metadata_any_client_committed(bootstrap, writer, kind):
    metadata = METADATA.get(kind)
    group = f"md-{uuid.uuid4().hex[:8]}"
    WRITERS[writer](bootstrap, group, metadata)
    expected = (OFFSET, metadata or "")  # null is stored as empty, as Kafka does
    assert _read_all(bootstrap, group) == dict.fromkeys(READERS, expected)
