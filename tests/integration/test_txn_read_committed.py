"""Third-party consumers against transactions written over the wire (in-process broker): kafka-python and
confluent-kafka with read_committed receive exactly the committed records, and the records after an open
transaction only once its COMMIT marker arrives; read_uncommitted consumers receive every data record."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import ErrorCode
from tests.waiting import stays_true, wait_until

from ..broker.conftest import start_brokers
from ..broker.requests import create, produce, unique
from ..broker.txn_wire import txn_batch, write_markers
from ..broker.wire import Wire

pytestmark = pytest.mark.integration

A, B, C = 9_000_001, 9_000_002, 9_000_003
COMMITTED_FIRST = [b"a0", b"a1"]
COMMITTED_LATER = [b"c0", b"a2"]
EVERY_RECORD = [b"a0", b"a1", b"b0", b"b1", b"c0", b"a2"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory)
    yield b
    b.stop()


@pytest.fixture()
def topic(broker):
    """A topic with A committed, B aborted, C open and A's second transaction (committed) after C's start."""
    name = unique("txn-rc")
    with Wire(broker.bootstrap_servers) as w:
        assert create(w, name).error_code == ErrorCode.NONE
        for pid, values, seq in [
            (A, [b"a0", b"a1"], 0),
            (B, [b"b0"], 0),
            (B, [b"b1"], 1),
            (C, [b"c0"], 0),
        ]:
            assert produce(w, name, txn_batch(pid, values, seq=seq), acks=-1).error_code == ErrorCode.NONE
        assert write_markers(w, (A, 0, True, 0, {name: [0]}), (B, 0, False, 0, {name: [0]})) == {
            (A, name, 0): 0,
            (B, name, 0): 0,
        }
        assert produce(w, name, txn_batch(A, [b"a2"], seq=2), acks=-1).error_code == ErrorCode.NONE
        assert write_markers(w, (A, 0, True, 0, {name: [0]})) == {(A, name, 0): 0}
    return name


def _commit_c(broker, name):
    with Wire(broker.bootstrap_servers) as w:
        assert write_markers(w, (C, 0, True, 0, {name: [0]})) == {(C, name, 0): 0}


def _collect(poll, expected: int, settle_s: float, deadline_s: float = 60.0) -> list[bytes]:
    """Values from ``poll()`` until ``expected`` arrived, then no more for ``settle_s``."""
    out: list[bytes] = []
    wait_until(lambda: out.extend(poll()) or len(out) >= expected, deadline_s, f"{expected} values")
    stays_true(lambda: out.extend(poll()) or len(out) <= expected, settle_s, f"no value beyond the {expected}")
    return out


def _kafka_python(broker, name, isolation):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=None,
        enable_auto_commit=False,
        isolation_level=isolation,
        fetch_max_wait_ms=100,
    )
    tp = TopicPartition(name, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)

    def poll():
        return [r.value for recs in consumer.poll(timeout_ms=200).values() for r in recs]

    return consumer, poll


def _confluent(broker, name, isolation):
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": unique("g"),
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "fetch.wait.max.ms": 100,
        }
    )
    consumer.assign([TopicPartition(name, 0, 0)])

    def poll():
        out = []
        for m in consumer.consume(num_messages=100, timeout=0.2):
            if m.error() is None:
                out.append(m.value())
        return out

    return consumer, poll


CLIENTS = {"kafka-python": _kafka_python, "confluent-kafka": _confluent}


@pytest.mark.parametrize("client", CLIENTS)
def test_read_committed_consumers_receive_exactly_the_committed_records(broker, topic, client):
    consumer, poll = CLIENTS[client](broker, topic, "read_committed")
    try:
        # not B's aborted records, not C's open one, not A's later one behind C's open transaction
        assert _collect(poll, len(COMMITTED_FIRST), settle_s=2.0) == COMMITTED_FIRST
        _commit_c(broker, topic)
        assert _collect(poll, len(COMMITTED_LATER), settle_s=1.0) == COMMITTED_LATER
    finally:
        consumer.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_read_uncommitted_consumers_receive_every_data_record(broker, topic, client):
    consumer, poll = CLIENTS[client](broker, topic, "read_uncommitted")
    try:
        assert _collect(poll, len(EVERY_RECORD), settle_s=1.0) == EVERY_RECORD
    finally:
        consumer.close()
