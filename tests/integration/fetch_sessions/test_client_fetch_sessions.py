"""Real consumers against kafkalog with fetch sessions and topic ids on: kafka-python (incremental sessions,
Fetch v12), confluent-kafka (librdkafka: Fetch v13+ by topic id) and aiokafka read every record exactly once
over many polls while records keep arriving and their assignment changes."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict

import pytest

from spark_kafkalog.client import AdminClient, NewTopic
from tests.waiting import wait_until

pytestmark = pytest.mark.integration

PARTITIONS = 6


def new_topic(broker, partitions=PARTITIONS) -> str:
    name = f"fs-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, {})])
    return name


def produce(broker, topic, rounds: dict[int, range]) -> None:
    """Values ``b"<partition>-<i>"`` for every i of each partition's range."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, acks=-1, linger_ms=2)
    for p, seqs in rounds.items():
        for i in seqs:
            producer.send(topic, value=b"%d-%d" % (p, i), partition=p)
    producer.flush(30)
    producer.close(10)


def expected(p: int, seqs: range) -> list[bytes]:
    return [b"%d-%d" % (p, i) for i in seqs]


def fetch_versions(broker) -> dict[int, float]:
    """Fetch requests answered so far, by version (the broker's request counter)."""
    out = {}
    for metric in broker.broker.metrics.registry.collect():
        for s in metric.samples:
            if s.name == "kafka_network_requestmetrics_requests_total" and s.labels.get("request") == "Fetch":
                out[int(s.labels["version"])] = s.value
    return out


def sessions(broker):
    return broker.call(lambda: [(s.id, s.epoch, s.size) for s in broker.broker.fetch_sessions])


def test_kafka_python_reads_everything_through_incremental_sessions_while_assignment_changes(fbroker):
    from kafka import KafkaConsumer, TopicPartition

    topic = new_topic(fbroker)
    produce(fbroker, topic, {p: range(0, 40) for p in range(PARTITIONS)})
    consumer = KafkaConsumer(
        bootstrap_servers=fbroker.bootstrap_servers, group_id=None, enable_auto_commit=False, fetch_max_wait_ms=50
    )
    got: dict[int, list[bytes]] = defaultdict(list)

    def poll_until(n: int, what: str) -> None:
        def enough() -> bool:
            for tp, recs in consumer.poll(timeout_ms=200, max_records=37).items():  # many small polls
                got[tp.partition].extend(r.value for r in recs)
            return sum(map(len, got.values())) >= n

        wait_until(enough, 60, what)

    try:
        first = [TopicPartition(topic, p) for p in (0, 1, 2)]
        consumer.assign(first)
        consumer.seek_to_beginning(*first)
        poll_until(120, "partitions 0-2")
        produce(fbroker, topic, {p: range(40, 60) for p in range(PARTITIONS)})
        poll_until(180, "partitions 0-2 after more records")
        # 0 and 1 are forgotten, 2 stays where it is, 3-5 are added from their start
        second = [TopicPartition(topic, p) for p in (2, 3, 4, 5)]
        consumer.assign(second)
        consumer.seek(second[0], 60)
        consumer.seek_to_beginning(*second[1:])
        produce(fbroker, topic, {p: range(60, 75) for p in range(PARTITIONS)})
        poll_until(180 + 15 + 3 * 75, "partitions 2-5")
        live = sessions(fbroker)
        consumer.poll(timeout_ms=300)  # anything more would be a duplicate
    finally:
        consumer.close()
    for p in (0, 1):
        assert got[p] == expected(p, range(60)), f"partition {p}"
    assert got[2] == expected(2, range(75))
    for p in (3, 4, 5):
        assert got[p] == expected(p, range(75)), f"partition {p}"
    # kafka-python kept a session on the broker and moved it on request by request (it leaves out, and so
    # forgets, partitions whose records it still buffers: the session's size varies)
    assert any(epoch >= 4 and 1 <= size <= 4 for _, epoch, size in live), live
    assert max(fetch_versions(fbroker)) >= 7


def test_confluent_kafka_fetches_by_topic_id(fbroker):
    from confluent_kafka import Consumer, TopicPartition

    topic = new_topic(fbroker)
    produce(fbroker, topic, {p: range(0, 30) for p in range(PARTITIONS)})
    before = fetch_versions(fbroker)
    consumer = Consumer(
        {
            "bootstrap.servers": fbroker.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 50,
        }
    )
    got: dict[int, list[bytes]] = defaultdict(list)

    def read(n: int) -> bool:
        for m in consumer.consume(num_messages=50, timeout=0.2):
            assert m.error() is None, m.error()
            got[m.partition()].append(m.value())
        return sum(map(len, got.values())) >= n

    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
        wait_until(lambda: read(90), 60, "confluent-kafka to read partitions 0-2")
        consumer.incremental_assign([TopicPartition(topic, p, 10) for p in range(3, PARTITIONS)])
        produce(fbroker, topic, {p: range(30, 40) for p in range(PARTITIONS)})
        wait_until(lambda: read(90 + 30 + 3 * 30), 60, "confluent-kafka to read partitions 3-5")
        read(0)
    finally:
        consumer.close()
    for p in range(3):
        assert got[p] == expected(p, range(40)), f"partition {p}"
    for p in range(3, PARTITIONS):
        assert got[p] == expected(p, range(10, 40)), f"partition {p}"
    after = fetch_versions(fbroker)
    assert any(v >= 13 and after[v] > before.get(v, 0) for v in after), after  # by topic id


def test_aiokafka_reads_everything(fbroker):
    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition

    topic = new_topic(fbroker)
    produce(fbroker, topic, {p: range(0, 25) for p in range(PARTITIONS)})

    async def consume() -> dict[int, list[bytes]]:
        consumer = AIOKafkaConsumer(bootstrap_servers=fbroker.bootstrap_servers, enable_auto_commit=False)
        await consumer.start()
        got: dict[int, list[bytes]] = defaultdict(list)
        try:
            tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60
            while sum(map(len, got.values())) < PARTITIONS * 25 and loop.time() < deadline:
                batches = await consumer.getmany(timeout_ms=200, max_records=40)
                for tp, recs in batches.items():
                    got[tp.partition].extend(r.value for r in recs)
        finally:
            await consumer.stop()
        return got

    got = asyncio.run(consume())
    for p in range(PARTITIONS):
        assert got[p] == expected(p, range(25)), f"partition {p}"


def test_a_full_session_cache_leaves_later_consumers_sessionless_and_correct(tmp_path):
    """With one slot, the first kafka-python consumer holds the only session; a young session is safe from a
    consumer's eviction, so the second gets full answers (session id 0) every time, and both read everything."""
    from kafka import KafkaConsumer, TopicPartition

    from broker.server import EmbeddedBroker

    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:fetch-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path,
        max_incremental_fetch_session_cache_slots=1,
    ).start()
    try:
        topic = new_topic(broker, 2)
        produce(broker, topic, {p: range(0, 30) for p in range(2)})
        consumers = [
            KafkaConsumer(
                bootstrap_servers=broker.bootstrap_servers,
                group_id=None,
                enable_auto_commit=False,
                fetch_max_wait_ms=50,
            )
            for _ in range(2)
        ]
        got = [defaultdict(list), defaultdict(list)]
        try:
            for c in consumers:
                tps = [TopicPartition(topic, p) for p in range(2)]
                c.assign(tps)
                c.seek_to_beginning(*tps)

            def enough(n: int) -> bool:
                for c, g in zip(consumers, got):
                    for tp, recs in c.poll(timeout_ms=100, max_records=11).items():
                        g[tp.partition].extend(r.value for r in recs)
                return all(sum(map(len, g.values())) >= n for g in got)

            wait_until(lambda: enough(60), 60, "both consumers to read 60 records")
            produce(broker, topic, {p: range(30, 45) for p in range(2)})
            wait_until(lambda: enough(90), 60, "both consumers to read 90 records")
            live = sessions(broker)
        finally:
            for c in consumers:
                c.close()
        for g in got:
            for p in range(2):
                assert g[p] == expected(p, range(45)), f"partition {p}"
        assert len(live) == 1 and broker.broker.fetch_sessions.evictions == 0
    finally:
        broker.stop()
