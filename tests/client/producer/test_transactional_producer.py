"""The project's transactional producer against one in-process broker (transaction coordinator and partition
side): commit and abort read by confluent-kafka and our own read_committed consumers, send_batch inside a
transaction, offsets sent in a transaction, zombie fencing by a second producer, an abortable error
followed by abort and a new transaction, and the state errors of misuse."""

from __future__ import annotations

import uuid

import pytest

from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.producer.transactions import ProducerFencedError, TransactionError
from tests.broker.conftest import start_brokers
from tests.confluent_read import confluent_values
from tests.waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(
        1,
        tmp_path_factory,
        transaction_state_log_num_partitions=3,
        offsets_topic_num_partitions=3,
        group_initial_rebalance_delay_ms=0,
    )
    yield b
    b.stop()


def _topic(broker, partitions=2) -> str:
    name = f"ktxn-{uuid.uuid4().hex[:8]}"
    with AdminClient(broker.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def _producer(broker, tid: str, **extra) -> Producer:
    producer = Producer(broker.bootstrap_servers, transactional_id=tid, linger_ms=1, **extra)
    producer.init_transactions(30)
    return producer


def _read(broker, topic: str, isolation: str, expect: int, idle_s: float = 2.0) -> list[bytes]:
    return sorted(confluent_values(broker.bootstrap_servers, topic, isolation, expect, idle_s=idle_s, timeout_s=30))


def test_committed_records_are_read_and_aborted_ones_are_not(broker):
    topic = _topic(broker)
    with _producer(broker, f"t-{uuid.uuid4().hex[:6]}") as producer:
        producer.begin_transaction()
        for i in range(20):
            producer.send(topic, b"commit-%02d" % i, b"k%d" % i)
        producer.commit_transaction(30)
        producer.begin_transaction()
        futures = [producer.send(topic, b"abort-%02d" % i, b"k%d" % i) for i in range(10)]
        producer.flush(30)
        assert all(f.exception(0) is None for f in futures)  # written to the log, then aborted
        producer.abort_transaction(30)
        producer.begin_transaction()
        producer.send_batch(topic, [b"batch-%02d" % i for i in range(15)]).result(30)
        producer.commit_transaction(30)
    committed = sorted([b"commit-%02d" % i for i in range(20)] + [b"batch-%02d" % i for i in range(15)])
    assert _read(broker, topic, "read_committed", len(committed)) == committed
    everything = _read(broker, topic, "read_uncommitted", 45)
    assert len(everything) == 45 and {v for v in everything if v.startswith(b"abort")} == {
        b"abort-%02d" % i for i in range(10)
    }


def test_an_open_transaction_holds_read_committed_readers_at_its_first_offset(broker):
    topic = _topic(broker, partitions=1)
    with _producer(broker, f"t-{uuid.uuid4().hex[:6]}") as producer:
        producer.begin_transaction()
        producer.send(topic, b"first")
        producer.flush(30)
        assert _read(broker, topic, "read_committed", 0, idle_s=1.5) == []
        assert _read(broker, topic, "read_uncommitted", 1, idle_s=0.5) == [b"first"]
        producer.commit_transaction(30)
    assert _read(broker, topic, "read_committed", 1) == [b"first"]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_a_drained_consumer_is_positioned_past_the_trailing_markers_and_aborted_records(broker, isolation):
    # As Java's consumer: a partition read to its end has position == the end offset (high watermark, or the
    # last stable offset), though the last batches are an aborted transaction and its marker, never returned.
    topic = _topic(broker, partitions=1)
    tp = TopicPartition(topic, 0)
    with _producer(broker, f"t-{uuid.uuid4().hex[:6]}") as producer:
        producer.begin_transaction()
        producer.send(topic, b"kept")
        producer.commit_transaction(30)
        producer.begin_transaction()
        producer.send(topic, b"dropped")
        producer.flush(30)
        producer.abort_transaction(30)
    with Consumer(broker.bootstrap_servers, isolation_level=isolation, fetch_max_wait_ms=50) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        values = []
        wait_until(lambda: values.extend(r.value for r in consumer.poll(100)) or consumer.position(tp) == 4, 10)
        consumer.seek(tp, 0)  # a seek forgets where the last fetch ended
        assert consumer.position(tp) == 0
    # offsets: kept 0, its commit marker 1, dropped 2, its abort marker 3
    assert values == ([b"kept"] if isolation == "read_committed" else [b"kept", b"dropped"])


def test_offsets_sent_in_a_transaction_become_the_groups_on_commit_only(broker):
    topic = _topic(broker, partitions=1)
    group = f"g-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    with _producer(broker, f"t-{uuid.uuid4().hex[:6]}") as producer, AdminClient(broker.bootstrap_servers) as admin:
        groups = GroupAdmin(admin.client)
        producer.begin_transaction()
        producer.send(topic, b"x")
        producer.send_offsets_to_transaction({tp: 7}, group)
        producer.abort_transaction(30)
        assert groups.list_group_offsets(group).get(tp) is None
        producer.begin_transaction()
        producer.send(topic, b"y")
        producer.send_offsets_to_transaction({tp: 42}, group)
        producer.commit_transaction(30)
        wait_until(lambda: groups.list_group_offsets(group).get(tp) is not None, 10, "the transaction's offset")
        assert groups.list_group_offsets(group)[tp].offset == 42


def test_a_second_producer_with_the_same_id_fences_the_first(broker):
    topic = _topic(broker)
    tid = f"t-{uuid.uuid4().hex[:6]}"
    zombie = _producer(broker, tid)
    try:
        zombie.begin_transaction()
        zombie.send(topic, b"zombie")
        zombie.flush(30)
        with _producer(broker, tid) as successor:  # aborts the zombie's open transaction
            successor.begin_transaction()
            successor.send(topic, b"successor")
            successor.commit_transaction(30)
        with pytest.raises(ProducerFencedError, match="another producer with the same transactional.id"):
            zombie.commit_transaction(30)
        with pytest.raises(ProducerFencedError):
            zombie.begin_transaction()
    finally:
        zombie.close()
    assert _read(broker, topic, "read_committed", 1) == [b"successor"]


def test_misuse_names_the_state(broker):
    topic = _topic(broker)
    plain = Producer(broker.bootstrap_servers)
    try:
        with pytest.raises(TransactionError, match="no transactional.id"):
            plain.begin_transaction()
    finally:
        plain.close()
    producer = Producer(broker.bootstrap_servers, transactional_id=f"t-{uuid.uuid4().hex[:6]}")
    try:
        with pytest.raises(TransactionError, match="cannot begin_transaction in state 'uninitialized'"):
            producer.begin_transaction()
        producer.init_transactions(30)
        with pytest.raises(TransactionError, match="cannot send in state 'ready'"):
            producer.send(topic, b"outside")
        with pytest.raises(TransactionError, match="cannot commit_transaction in state 'ready'"):
            producer.commit_transaction(5)
        producer.begin_transaction()
        with pytest.raises(TransactionError, match="cannot begin_transaction in state 'in transaction'"):
            producer.begin_transaction()
        producer.abort_transaction(30)  # nothing was added: no EndTxn needed
        producer.begin_transaction()
        producer.send(topic, b"fine")
        producer.commit_transaction(30)
    finally:
        producer.close()


def test_the_transactions_tool_lists_and_describes_them(broker, capsys):
    from broker.cli import main

    topic = _topic(broker, partitions=1)
    tid = f"tool-{uuid.uuid4().hex[:6]}"
    with _producer(broker, tid) as producer:
        producer.begin_transaction()
        producer.send(topic, b"x")
        producer.flush(30)
        capsys.readouterr()
        assert main(["transactions", "list", "--bootstrap-server", broker.bootstrap_servers, "--state", "Ongoing"]) == 0
        listed = capsys.readouterr().out.splitlines()
        assert listed[0].split() == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
        assert [line.split()[0::3] for line in listed[1:] if line.startswith(tid)] == [[tid, "Ongoing"]]
        args = ["transactions", "describe", "--bootstrap-server", broker.bootstrap_servers, "--transactional-id", tid]
        assert main(args) == 0
        header, row = capsys.readouterr().out.splitlines()
        described = dict(zip(header.split(), row.split()))
        assert described["TransactionState"] == "Ongoing" and described["TopicPartitions"] == f"{topic}-0"
        producer.commit_transaction(30)
    assert main(args) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert dict(zip(header.split(), row.split()))["TransactionState"] == "CompleteCommit"
    assert main(["transactions", "describe", "--bootstrap-server", broker.bootstrap_servers]) == 2
    assert "needs --transactional-id" in capsys.readouterr().err
