"""Transactions v2 (KIP-890) between kafkalog and Apache Kafka 4.4: Kafka's Java producer (4.4 clients use v2
when ApiVersions finalizes ``transaction.version`` 2) against kafkalog, kafkalog's producer against a Kafka 4.4
broker, and the same refusal from both brokers for a transactional write to a partition the transaction does
not hold."""

from __future__ import annotations

import asyncio
import functools
import uuid
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records import RecordBatchBuilder
from tests.confluent_read import confluent_values
from tests.waiting import wait_until

from .conftest import new_topic
from .kafka_broker import KafkaBroker
from .peers import KAFKA_44
from .tools import compile_java, run_java

pytestmark = pytest.mark.compat
JAVA_DIR = Path(__file__).parent / "java"


@pytest.fixture(scope="module")
def kafka44(tmp_path_factory):
    broker = KafkaBroker(KAFKA_44, tmp_path_factory.mktemp("kafka44-tv2"))
    broker.start()
    yield broker
    broker.stop()


def test_kafkas_java_producer_uses_transactions_v2_on_kafkalog(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    classes = compile_java((JAVA_DIR / "ExactlyOnceDriver.java").read_text())
    n = 30
    txn = f"java-tv2-{uuid.uuid4().hex[:8]}"
    produced = run_java(classes, "ExactlyOnceDriver", "produce", bootstrap, topic, txn, str(n)).stdout
    assert sum(line.startswith("committed") for line in produced.splitlines()) == n
    values = confluent_values(bootstrap, topic, "read_committed", n, timeout_s=30)
    assert sorted(values) == sorted(b"committed-%d" % i for i in range(n))
    # a commit and an abort, each bumping the epoch (EndTxn v5) of a transaction the leaders added (Produce v12)
    meta = kafkalog.call(lambda: kafkalog.broker.txn_coordinator.txns[txn])
    assert (meta.client_transaction_version, meta.producer_epoch) == (2, 2)
    assert meta.state.display == "CompleteAbort"


def test_kafkalogs_producer_uses_transactions_v2_on_kafka_44(kafka44):
    bootstrap = kafka44.bootstrap_servers
    topic = f"tv2-{uuid.uuid4().hex[:8]}"
    group = f"tv2-g-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 2, 1)])
    tid = f"ours-tv2-{uuid.uuid4().hex[:8]}"
    with Producer(bootstrap, transactional_id=tid, linger_ms=1) as producer, AdminClient(bootstrap) as admin:
        producer.init_transactions(60)
        assert producer._transactions is not None and producer._transactions.transactions_v2
        epochs = [producer.transaction_identity[2]]
        for n in range(2):
            producer.begin_transaction()
            for i in range(10):
                producer.send(topic, b"c%d-%d" % (n, i), b"k%d" % i)
            producer.send_offsets_to_transaction({tp: 10 * (n + 1)}, group)
            producer.commit_transaction(60)
            epochs.append(producer.transaction_identity[2])
        producer.begin_transaction()
        producer.send(topic, b"aborted")
        producer.flush(30)
        producer.abort_transaction(60)
        epochs.append(producer.transaction_identity[2])
        groups = GroupAdmin(admin.client)
        wait_until(lambda: (groups.list_group_offsets(group).get(tp) or None) is not None, 30, "the offsets")
        assert groups.list_group_offsets(group)[tp].offset == 20
    assert epochs == [epochs[0] + k for k in range(4)]  # Kafka's EndTxn v5 bumped it every time
    expected = sorted(b"c%d-%d" % (n, i) for n in range(2) for i in range(10))
    assert sorted(confluent_values(bootstrap, topic, "read_committed", len(expected), timeout_s=30)) == expected


async def _write_unadded(bootstrap: str, topic: str, version: int) -> tuple[int, int]:
    """InitProducerId for a new transactional id, then a transactional Produce ``version`` to partition 0
    without AddPartitionsToTxn: (its error code, the partition's base offset answered)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    tid = f"unadded-{uuid.uuid4().hex[:8]}"
    conn = await AsyncKafkaConnection.open(host, int(port))
    try:
        FC = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request
        for _ in range(100):
            found = await conn.request(ApiKey.FIND_COORDINATOR, FC(key=tid, key_type=1), version=1)
            if found.error_code == 0:
                break
            await asyncio.sleep(0.1)
        coordinator = await AsyncKafkaConnection.open(found.host, found.port)
        try:
            IP = API_BY_KEY[ApiKey.INIT_PRODUCER_ID].Request
            for _ in range(100):
                init = await coordinator.request(
                    ApiKey.INIT_PRODUCER_ID,
                    IP(transactional_id=tid, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1),
                    version=4,
                )
                if init.error_code == 0:
                    break
                await asyncio.sleep(0.1)
        finally:
            await coordinator.close()
        b = RecordBatchBuilder(
            producer_id=init.producer_id, producer_epoch=init.producer_epoch, base_sequence=0, is_transactional=True
        )
        b.append(0, None, b"not-added")
        P = API_BY_KEY[ApiKey.PRODUCE].Request
        body = P(
            transactional_id=tid,
            acks=-1,
            timeout_ms=10000,
            topic_data=[
                P.TopicProduceData(
                    name=topic, partition_data=[P.TopicProduceData.PartitionProduceData(index=0, records=b.build())]
                )
            ],
        )
        resp = await conn.request(ApiKey.PRODUCE, body, version=version)
        part = resp.responses[0].partition_responses[0]
        return part.error_code, part.base_offset
    finally:
        await conn.close()


def test_a_write_to_a_partition_not_added_is_refused_alike_by_kafka_44_and_kafkalog(kafka44, kafkalog):
    answers: dict[str, list[tuple[int, int]]] = {}
    for name, broker in (("kafka-4.4", kafka44), ("kafkalog", kafkalog)):
        for version in (10, 11, 12):
            topic = f"unadded-{uuid.uuid4().hex[:8]}"
            with AdminClient(broker.bootstrap_servers) as admin:
                admin.create_topics([NewTopic(topic, 1, 1)])
            answers.setdefault(name, []).append(asyncio.run(_write_unadded(broker.bootstrap_servers, topic, version)))
    # v10: not added; v11 says so as TRANSACTION_ABORTABLE; v12 (transactions v2) adds the partition itself
    expected = [(ErrorCode.INVALID_TXN_STATE, -1), (ErrorCode.TRANSACTION_ABORTABLE, -1), (ErrorCode.NONE, 0)]
    assert answers == {"kafka-4.4": expected, "kafkalog": expected}


async def _end_txn_script(bootstrap: str, topic: str) -> list[tuple[str, int, int]]:
    """A script of EndTxn v5 cases on a fresh transactional id: (step, error code, epoch - the first epoch, or
    -1 when the answer carries none)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    tid = f"script-{uuid.uuid4().hex[:8]}"
    conn = await AsyncKafkaConnection.open(host, int(port))
    out: list[tuple[str, int, int]] = []
    try:
        FC = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request
        for _ in range(100):
            found = await conn.request(ApiKey.FIND_COORDINATOR, FC(key=tid, key_type=1), version=1)
            if found.error_code == 0:
                break
            await asyncio.sleep(0.1)
        IP = API_BY_KEY[ApiKey.INIT_PRODUCER_ID].Request
        for _ in range(100):
            init = await conn.request(
                ApiKey.INIT_PRODUCER_ID,
                IP(transactional_id=tid, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1),
                version=4,
            )
            if init.error_code == 0:
                break
            await asyncio.sleep(0.1)
        pid, base = init.producer_id, init.producer_epoch
        ET = API_BY_KEY[ApiKey.END_TXN].Request

        async def end(step: str, epoch: int, commit: bool) -> int:
            for _ in range(100):
                r = await conn.request(
                    ApiKey.END_TXN,
                    ET(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit),
                    version=5,
                )
                if r.error_code != ErrorCode.CONCURRENT_TRANSACTIONS:
                    break
                await asyncio.sleep(0.05)
            out.append((step, r.error_code, r.producer_epoch - base if r.producer_epoch >= 0 else -1))
            return r.producer_epoch

        async def produce(step: str, epoch: int) -> None:
            b = RecordBatchBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
            b.append(0, None, step.encode())
            P = API_BY_KEY[ApiKey.PRODUCE].Request
            Data = P.TopicProduceData
            body = P(
                transactional_id=tid,
                acks=-1,
                timeout_ms=10000,
                topic_data=[Data(name=topic, partition_data=[Data.PartitionProduceData(index=0, records=b.build())])],
            )
            for _ in range(100):
                r = (await conn.request(ApiKey.PRODUCE, body, version=12)).responses[0].partition_responses[0]
                if r.error_code != ErrorCode.NOT_ENOUGH_REPLICAS:
                    break
                await asyncio.sleep(0.05)
            out.append((step, r.error_code, -1))

        await end("commit with nothing sent", base, True)
        await end("abort with nothing sent", base, False)
        epoch = base + 1
        await produce("write", epoch)
        await end("commit", epoch, True)
        await end("the commit retried", epoch, True)
        await end("the commit retried as an abort", epoch, False)
        await end("an older epoch", epoch - 1, True)
        await produce("a late write of the ended transaction", epoch)
    finally:
        await conn.close()
    return out


def test_end_txn_v5_answers_as_kafka_44_does(kafka44, kafkalog):
    answers = {}
    for name, broker in (("kafka-4.4", kafka44), ("kafkalog", kafkalog)):
        topic = f"script-{uuid.uuid4().hex[:8]}"
        with AdminClient(broker.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, 1, 1)])
        answers[name] = asyncio.run(_end_txn_script(broker.bootstrap_servers, topic))
    named = {
        name: [(step, ErrorCode(code).name, epoch) for step, code, epoch in steps] for name, steps in answers.items()
    }
    assert named["kafkalog"] == named["kafka-4.4"], named


def _transaction_log(bootstrap: str, tid: str, partitions: int) -> list[tuple[int, bytes]]:
    """(value version, value bytes) of ``tid``'s records in ``__transaction_state``, in log order."""
    import confluent_kafka

    from broker.coordinator.transaction_log import decode_txn_key, transaction_partition_for

    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"txn-log-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False}
    )
    p = transaction_partition_for(tid, partitions)
    consumer.assign([confluent_kafka.TopicPartition("__transaction_state", p, 0)])
    _, high = consumer.get_watermark_offsets(confluent_kafka.TopicPartition("__transaction_state", p), timeout=10)
    out = []
    try:
        position = 0
        while position < high:
            m = consumer.poll(1.0)
            if m is None or m.error():
                continue
            position = m.offset() + 1
            if m.value() is not None and decode_txn_key(m.key()) == tid:
                out.append((int.from_bytes(m.value()[:2], "big"), m.value()))
    finally:
        consumer.close()
    return out


def _complete_log(bootstrap: str, tid: str, partitions: int) -> list[tuple[int, bytes]] | None:
    records = _transaction_log(bootstrap, tid, partitions)
    return records if len(records) >= 4 else None


def test_transaction_state_records_read_alike_from_kafka_44_and_kafkalog(kafka44, kafkalog):
    from broker.coordinator.transaction_log import decode_txn_value

    seen = {}
    for name, broker, partitions in (("kafka-4.4", kafka44, 4), ("kafkalog", kafkalog, 50)):
        bootstrap = broker.bootstrap_servers
        topic = f"log-{uuid.uuid4().hex[:8]}"
        with AdminClient(bootstrap) as admin:
            admin.create_topics([NewTopic(topic, 1, 1)])
        tid = f"log-{uuid.uuid4().hex[:8]}"
        with Producer(bootstrap, transactional_id=tid, linger_ms=1) as producer:
            producer.init_transactions(60)
            pid, first = producer.transaction_identity[1:]
            producer.begin_transaction()
            producer.send(topic, b"v")
            producer.commit_transaction(60)
        records = wait_until(
            functools.partial(_complete_log, bootstrap, tid, partitions), 30, "the transaction's records"
        )
        rows = []
        for version, raw in records:
            v = decode_txn_value(raw)  # Kafka's records decode with kafkalog's declarations
            rows.append(
                (
                    version,
                    v.status,
                    v.producer_id == pid,
                    v.producer_epoch - first,
                    [len(ps) for ps in v.partitions.values()],  # the topic names differ
                    {-1: "none", pid: "this producer"}.get(v.previous_producer_id, "another"),
                    v.next_producer_id,
                    v.client_transaction_version,
                )
            )
        seen[name] = rows
    assert seen["kafkalog"] == seen["kafka-4.4"], seen
