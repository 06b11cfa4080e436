"""Transactions from confluent-kafka and kafka-python against one in-process broker: commit and abort read
by read_committed consumers (markers need the partition side, WriteTxnMarkers), zombie fencing, the
coordinator's timeout abort, the expiry of idle transactional ids, and offsets sent in a transaction visible
only after the commit.

The broker runs on a ``ManualClock``: a transaction times out and an id expires when a test moves the clock
(the coordinator's ticker, every 100 ms of real time, checks against that clock), never while the clients
are slow."""

from __future__ import annotations

import uuid

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from broker.log.clock import ManualClock
from tests.broker.conftest import start_brokers
from tests.waiting import wait_until

ABORT_CHECK_MS = 200
ID_EXPIRATION_MS = 3_600_000


@pytest.fixture(scope="module")
def clock():
    return ManualClock()


@pytest.fixture(scope="module")
def broker(tmp_path_factory, clock):
    (b,) = start_brokers(
        1,
        tmp_path_factory,
        clock=clock,
        transaction_state_log_num_partitions=3,
        offsets_topic_num_partitions=3,
        transaction_abort_timed_out_transaction_cleanup_interval_ms=ABORT_CHECK_MS,
        transactional_id_expiration_ms=ID_EXPIRATION_MS,
        group_initial_rebalance_delay_ms=0,  # the delay runs on the broker's clock, which only the tests move
    )
    yield b
    b.stop()


def _topic(broker, partitions=2) -> str:
    name = f"txn-{uuid.uuid4().hex[:8]}"
    a = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for f in a.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)
    return name


def _producer(broker, tid, **extra):
    conf = {"bootstrap.servers": broker.bootstrap_servers, "transactional.id": tid, **extra}
    p = confluent_kafka.Producer(conf)
    p.init_transactions(30)
    return p


END_MARK = b"end-"


def _read(broker, topic, isolation) -> list[bytes]:
    """The values a consumer at ``isolation`` gets from every partition of ``topic``, sorted: read up to an end
    mark produced (outside any transaction) to each partition first. read_committed hands a mark out only once
    every transaction before it is decided, so reaching the marks means nothing else is to come."""
    mark = END_MARK + uuid.uuid4().hex.encode()
    c = confluent_kafka.Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    partitions = list(c.list_topics(topic, 10).topics[topic].partitions)
    p = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
    for partition in partitions:
        p.produce(topic, value=mark, partition=partition)
    assert p.flush(30) == 0
    c.assign([confluent_kafka.TopicPartition(topic, i, confluent_kafka.OFFSET_BEGINNING) for i in partitions])
    out: list[bytes] = []
    marked: set[int] = set()

    def at_the_marks() -> bool:
        m = c.poll(0.2)
        if m is not None and not m.error():
            if m.value() == mark:
                marked.add(m.partition())
            elif not m.value().startswith(END_MARK):
                out.append(m.value())
        return len(marked) == len(partitions)

    try:
        wait_until(at_the_marks, 30, f"the end marks of {topic} at {isolation}")
    finally:
        c.close()
    return sorted(out)


def _state(broker, tid):
    tc = broker.broker.txn_coordinator
    return broker.call(lambda: tc.txns[tid].state.display if tid in tc.txns else None)


def test_confluent_commit_then_abort_read_committed_sees_only_the_commit(broker):
    topic = _topic(broker)
    tid = f"c-{uuid.uuid4().hex[:6]}"
    p = _producer(broker, tid)
    p.begin_transaction()
    for i in range(6):
        p.produce(topic, value=b"c%d" % i, partition=i % 2)
    p.commit_transaction(30)
    wait_until(lambda: _state(broker, tid) == "CompleteCommit", 20, "CompleteCommit")
    p.begin_transaction()
    for i in range(4):
        p.produce(topic, value=b"a%d" % i, partition=i % 2)
    p.flush(30)
    p.abort_transaction(30)
    wait_until(lambda: _state(broker, tid) == "CompleteAbort", 20, "CompleteAbort")
    assert _read(broker, topic, "read_committed") == sorted(b"c%d" % i for i in range(6))
    assert len(_read(broker, topic, "read_uncommitted")) == 10


def test_a_second_producer_with_the_same_id_fences_the_first(broker):
    topic = _topic(broker, 1)
    tid = f"z-{uuid.uuid4().hex[:6]}"
    zombie = _producer(broker, tid)
    zombie.begin_transaction()
    zombie.produce(topic, value=b"zombie")
    zombie.flush(30)
    fresh = _producer(broker, tid)  # aborts the zombie's open transaction, bumps the epoch
    fresh.begin_transaction()
    fresh.produce(topic, value=b"fresh")
    fresh.commit_transaction(30)
    with pytest.raises(confluent_kafka.KafkaException) as e:
        zombie.produce(topic, value=b"late")
        zombie.commit_transaction(30)
    assert e.value.args[0].fatal() or e.value.args[0].code() in (
        confluent_kafka.KafkaError._FENCED,
        confluent_kafka.KafkaError.PRODUCER_FENCED,
        confluent_kafka.KafkaError.INVALID_PRODUCER_EPOCH,
    )
    assert _read(broker, topic, "read_committed") == [b"fresh"]


def test_a_transaction_open_past_its_timeout_is_aborted_and_its_producer_fenced(broker, clock):
    topic = _topic(broker, 1)
    tid = f"t-{uuid.uuid4().hex[:6]}"
    tc = broker.broker.txn_coordinator
    p = _producer(broker, tid, **{"transaction.timeout.ms": 10_000})
    p.begin_transaction()
    p.produce(topic, value=b"slow")
    p.flush(30)
    assert _state(broker, tid) == "Ongoing"
    clock.advance(10_000)
    assert broker.call(lambda: tc.abort_timed_out(tc.now())) == 0  # open for exactly its timeout: not yet
    assert _state(broker, tid) == "Ongoing"
    clock.advance(ABORT_CHECK_MS + 1)  # past the timeout, and the ticker's next check is due
    wait_until(lambda: _state(broker, tid) == "CompleteAbort", 20, "the ticker's timeout abort")
    with pytest.raises(confluent_kafka.KafkaException):
        p.commit_transaction(30)
    assert _read(broker, topic, "read_committed") == []


def test_a_transactional_id_idle_for_the_expiration_time_is_forgotten(broker, clock):
    tid = f"e-{uuid.uuid4().hex[:6]}"
    tc = broker.broker.txn_coordinator
    _producer(broker, tid)  # InitProducerId: the id is Empty, with a producer id
    first_pid = broker.call(lambda: tc.txns[tid].producer_id)
    clock.advance(ID_EXPIRATION_MS - 1)
    broker.call(lambda: tc.expire_ids(tc.now()))
    assert _state(broker, tid) == "Empty"
    clock.advance(1)
    broker.call(lambda: tc.expire_ids(tc.now()))
    assert _state(broker, tid) is None
    _producer(broker, tid)  # the id starts again: a new producer id at epoch 0
    assert broker.call(lambda: (tc.txns[tid].producer_id, tc.txns[tid].producer_epoch)) != (first_pid, 0)
    assert broker.call(lambda: tc.txns[tid].producer_epoch) == 0


def test_offsets_sent_in_a_transaction_are_visible_after_the_commit(broker):
    topic = _topic(broker, 1)
    tid = f"o-{uuid.uuid4().hex[:6]}"
    group = f"og-{uuid.uuid4().hex[:6]}"
    c = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group})
    p = _producer(broker, tid)
    p.begin_transaction()
    p.produce(topic, value=b"x")
    tp = confluent_kafka.TopicPartition(topic, 0, 42)
    meta = c.consumer_group_metadata()
    p.send_offsets_to_transaction([tp], meta, 30)
    gc = broker.broker.group_coordinator
    assert broker.call(lambda: gc.fetch_offsets(group, [(topic, 0)]))[(topic, 0)] is None
    assert broker.call(lambda: gc.unstable_offsets(group)) == {(topic, 0)}
    p.commit_transaction(30)

    def committed():
        c2 = broker.call(lambda: gc.fetch_offsets(group, [(topic, 0)]))[(topic, 0)]
        return c2 is not None and c2.offset == 42

    wait_until(committed, 20, "the transactional offset after the commit")
    assert broker.call(lambda: gc.unstable_offsets(group)) == set()
    c.close()


def test_kafka_python_commit_and_abort(broker):
    from kafka import KafkaProducer

    topic = _topic(broker, 1)
    tid = f"k-{uuid.uuid4().hex[:6]}"
    p = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, transactional_id=tid)
    p.init_transactions()
    p.begin_transaction()
    p.send(topic, b"kp-commit")
    p.commit_transaction()
    p.begin_transaction()
    p.send(topic, b"kp-abort")
    p.flush()
    p.abort_transaction()
    p.close()
    assert _read(broker, topic, "read_committed") == [b"kp-commit"]
