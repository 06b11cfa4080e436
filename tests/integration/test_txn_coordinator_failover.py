"""Transaction coordinator failover with broker processes (3 brokers, real ZooKeeper, ``__transaction_state``
with three replicas): a transactional producer (confluent-kafka, ours) in the middle of a transaction loses
its coordinator (SIGKILL or controlled stop); the new leader of the id's ``__transaction_state`` partition
loads the id and the producer's commit either succeeds or fails cleanly (fenced or aborted): read_committed
consumers see all of the transaction's records or none, never part. A transaction left in PrepareCommit by a
dead coordinator (its markers held up by an offline partition) is completed by the new one."""

from __future__ import annotations

import uuid

import confluent_kafka
import pytest

from broker.coordinator.transaction_log import TRANSACTION_STATE_TOPIC, transaction_partition_for
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, Producer
from spark_kafkalog.client.producer.transactions import ProducerFencedError, TransactionError
from spark_kafkalog.protocol import ApiKey, ErrorCode
from tests.waiting import stays_true, wait_until

from ..broker.wire import Wire

pytestmark = pytest.mark.integration

TXN_PARTITIONS = 3
PARTITIONS = 3
RECORDS = 30
CONFIG = {
    "transaction.state.log.num.partitions": TXN_PARTITIONS,
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.min.isr": 2,
    "offsets.topic.num.partitions": 3,
    "group.initial.rebalance.delay.ms": 0,
    "zookeeper.session.timeout.ms": 6000,
    "replica.lag.time.max.ms": 4000,
}


@pytest.fixture(scope="module")
def tcluster(zookeeper, tmp_path_factory):
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("txn-failover"),
        zookeeper_connect=f"{zookeeper.connect_string}/txn-failover-{uuid.uuid4().hex[:8]}",
        broker_config=CONFIG,
    )
    c.start()
    yield c
    c.stop()


def addr(cluster, brokers) -> str:
    return ",".join(f"127.0.0.1:{cluster.ports[b]}" for b in brokers)


def new_topic(cluster, partitions: int = PARTITIONS, assignment: dict[int, list[int]] | None = None) -> str:
    name = f"tf-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        if assignment is None:
            admin.create_topics([NewTopic(name, partitions, 3)])
        else:
            admin.create_topics([NewTopic(name, replica_assignment=assignment)])
    wait_until(lambda: all(leader >= 0 for leader in leaders(cluster, name)), 30, f"leaders of {name}")
    return name


def leaders(cluster, topic: str, brokers=None) -> list[int]:
    with AdminClient(addr(cluster, brokers or cluster.broker_ids)) as admin:
        d = admin.describe_topics([topic])[topic]
    return [p.leader for p in sorted(d.partitions, key=lambda p: p.partition)]


def full_isr(cluster, topic: str) -> bool:
    with AdminClient(cluster.bootstrap_servers) as admin:
        d = admin.describe_topics([topic])[topic]
    return all(len(p.isr) == len(cluster.broker_ids) for p in d.partitions)


def coordinator(cluster, tid: str, broker: int) -> int | None:
    """The node broker ``broker`` names as ``tid``'s transaction coordinator (FindCoordinator key type 1)."""
    try:
        with Wire(addr(cluster, [broker])) as w:
            r = w.call(ApiKey.FIND_COORDINATOR, 3, key=tid, key_type=1)
    except OSError:
        return None
    return r.node_id if r.error_code == ErrorCode.NONE else None


def txn_state(cluster, tid: str, broker: int) -> str | None:
    """DescribeTransactions at ``broker``: the state name, None when it does not coordinate ``tid`` now."""
    with Wire(addr(cluster, [broker])) as w:
        r = w.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, transactional_ids=[tid])
    (s,) = r.transaction_states
    return s.transaction_state if s.error_code == ErrorCode.NONE else None


def current_coordinator(cluster, tid: str, alive: list[int], not_: int | None = None) -> int:
    """Wait until every broker of ``alive`` names the same coordinator (not ``not_``), loaded there."""

    def agreed():
        named = {coordinator(cluster, tid, b) for b in alive}
        if len(named) != 1:
            return None
        (c,) = named
        return c if c is not None and c != not_ and c in alive else None

    return wait_until(agreed, 60, f"the brokers {alive} to agree on the coordinator of {tid}")


def read_committed(cluster, brokers, topics: dict[str, int], sentinels: int) -> list[bytes]:
    """Every value a read_committed confluent-kafka consumer (assigned every partition of ``topics``, name ->
    partition count; no group) gets until it has seen ``sentinels`` records whose value starts with
    ``sentinel`` (written after the transaction ended)."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": addr(cluster, brokers),
            "group.id": f"rc-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    consumer.assign(
        [
            confluent_kafka.TopicPartition(t, p, confluent_kafka.OFFSET_BEGINNING)
            for t, n in topics.items()
            for p in range(n)
        ]
    )
    out: list[bytes] = []

    def read_to_the_sentinels() -> bool:
        m = consumer.poll(0.3)
        if m is not None and not m.error():
            out.append(m.value())
        return sum(v.startswith(b"sentinel") for v in out) >= sentinels

    try:
        wait_until(read_to_the_sentinels, 60, f"the {sentinels} sentinels")
    finally:
        consumer.close()
    assert sum(v.startswith(b"sentinel") for v in out) == sentinels, out
    return [v for v in out if not v.startswith(b"sentinel")]


def write_sentinels(cluster, brokers, topic: str, partitions: list[int]) -> None:
    with Producer(addr(cluster, brokers), acks="all") as p:
        for part in partitions:
            p.send(topic, b"sentinel-%d" % part, partition=part)
        p.flush(30)


class OurTxnProducer:
    def __init__(self, bootstrap: str, tid: str) -> None:
        self.p = Producer(bootstrap, transactional_id=tid, linger_ms=1)
        self.p.init_transactions(30)

    def begin_and_send(self, sends: list[tuple[str, int, bytes]]) -> None:
        self.p.begin_transaction()
        for topic, part, value in sends:
            self.p.send(topic, value, partition=part)
        self.p.flush(30)

    def commit(self) -> str:
        """'committed', 'aborted' (abortable error, then abort) or 'fenced'."""
        try:
            self.p.commit_transaction(90)
            return "committed"
        except ProducerFencedError:
            return "fenced"
        except TransactionError as e:
            if not e.abortable:
                raise
            self.p.abort_transaction(60)
            return "aborted"

    def close(self) -> None:
        self.p.close()


class ConfluentTxnProducer:
    def __init__(self, bootstrap: str, tid: str) -> None:
        self.p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 1})
        self.p.init_transactions(30)

    def begin_and_send(self, sends: list[tuple[str, int, bytes]]) -> None:
        self.p.begin_transaction()
        for topic, part, value in sends:
            self.p.produce(topic, value, partition=part)
        assert self.p.flush(30) == 0

    def commit(self) -> str:
        try:
            self.p.commit_transaction(90)
            return "committed"
        except confluent_kafka.KafkaException as e:
            err = e.args[0]
            if err.txn_requires_abort():
                self.p.abort_transaction(60)
                return "aborted"
            if err.fatal():
                return "fenced"
            raise

    def close(self) -> None:
        self.p.flush(5)


PRODUCERS = {"ours": OurTxnProducer, "confluent": ConfluentTxnProducer}


def live_brokers(cluster, broker: int) -> set[int]:
    with Wire(addr(cluster, [broker])) as w:
        return {b.node_id for b in w.call(ApiKey.METADATA, 1, topics=[]).brokers}


def preferred_leaders(cluster, topic: str) -> bool:
    with AdminClient(cluster.bootstrap_servers) as admin:
        d = admin.describe_topics([topic])[topic]
    return all(p.leader == p.replicas[0] for p in d.partitions)


def settle(cluster) -> None:
    """Every broker up, known live to every broker, ``__transaction_state`` fully replicated again and led by
    its preferred replicas (the controller moves leadership back to a returning broker once it is in sync;
    the next case must not start before that move, or its coordinator changes under it)."""
    for b in cluster.broker_ids:
        if b not in cluster.processes:
            cluster.start_broker(b)
    every = set(cluster.broker_ids)
    wait_until(lambda: all(live_brokers(cluster, b) == every for b in every), 60, "every broker seen live by all")
    wait_until(lambda: full_isr(cluster, TRANSACTION_STATE_TOPIC), 60, "__transaction_state back to 3 in sync")
    wait_until(lambda: preferred_leaders(cluster, TRANSACTION_STATE_TOPIC), 60, "preferred leaders back")


def bring_up_coordinator(cluster, tid: str) -> int:
    """FindCoordinator creates ``__transaction_state`` on first use; wait for three in-sync replicas."""
    c = current_coordinator(cluster, tid, list(cluster.broker_ids))
    wait_until(lambda: full_isr(cluster, TRANSACTION_STATE_TOPIC), 60, "__transaction_state fully in sync")
    return c


def failover_round(cluster, client: str, how: str) -> tuple[str, list[bytes]]:
    """One producer mid-transaction, its coordinator stopped or killed, then commit; returns the outcome and
    the transaction's values read_committed consumers got."""
    tid = f"tx-{client}-{how}-{uuid.uuid4().hex[:6]}"
    topic = new_topic(cluster)
    gone = bring_up_coordinator(cluster, tid)
    assert leaders(cluster, TRANSACTION_STATE_TOPIC)[transaction_partition_for(tid, TXN_PARTITIONS)] == gone
    producer = PRODUCERS[client](cluster.bootstrap_servers, tid)
    values = [b"%s-%03d" % (tid.encode(), i) for i in range(RECORDS)]
    try:
        producer.begin_and_send([(topic, i % PARTITIONS, v) for i, v in enumerate(values)])
        assert txn_state(cluster, tid, gone) == "Ongoing"
        if how == "stop":
            cluster.stop_broker(gone)
        else:
            cluster.kill_broker(gone)
        alive = [b for b in cluster.broker_ids if b != gone]
        new = current_coordinator(cluster, tid, alive, not_=gone)
        assert txn_state(cluster, tid, new) in ("Ongoing", "PrepareAbort", "CompleteAbort")  # loaded there
        outcome = producer.commit()
        if outcome == "fenced":  # a new producer of the id ends whatever the old one left open
            PRODUCERS[client](addr(cluster, alive), tid).close()
        want = "CompleteCommit" if outcome == "committed" else "CompleteAbort"
        wait_until(lambda: txn_state(cluster, tid, new) in (want, "Empty"), 60, f"{tid} to reach {want}")
        write_sentinels(cluster, alive, topic, list(range(PARTITIONS)))
        got = read_committed(cluster, alive, {topic: PARTITIONS}, PARTITIONS)
    finally:
        producer.close()
        settle(cluster)
    print(f"{tid}: {outcome}, read_committed got {len(got)} of {RECORDS}")
    assert sorted(got) in ([], values), f"{outcome}: read_committed saw {len(got)} of {RECORDS}"
    assert (sorted(got) == values) == (outcome == "committed"), (outcome, len(got))
    return outcome, got


@pytest.mark.parametrize(("client", "how"), [("ours", "kill"), ("confluent", "stop")])
def test_a_transaction_survives_the_loss_of_its_coordinator_all_or_nothing(tcluster, client, how):
    outcome, got = failover_round(tcluster, client, how)
    assert outcome in ("committed", "aborted", "fenced")


@pytest.mark.slow
@pytest.mark.parametrize("client", ["ours", "confluent"])
def test_transactions_survive_coordinator_losses_in_a_loop(tcluster, client):
    outcomes = [failover_round(tcluster, client, how)[0] for how in ["kill", "stop"] * 3]
    assert all(o in ("committed", "aborted", "fenced") for o in outcomes), outcomes


def test_a_transaction_left_in_prepare_commit_is_completed_by_the_new_coordinator(tcluster):
    """The markers of a committed transaction cannot reach a partition whose only replica (broker X) is
    stopped, so its coordinator C stays in PrepareCommit; C is killed; the new coordinator loads the
    PrepareCommit and, once X is back, writes every marker and CompleteCommit."""
    tid = f"tx-prepared-{uuid.uuid4().hex[:6]}"
    c = bring_up_coordinator(tcluster, tid)
    x = next(b for b in tcluster.broker_ids if b != c)
    y = next(b for b in tcluster.broker_ids if b not in (c, x))
    topic = new_topic(tcluster)
    stuck = new_topic(tcluster, assignment={0: [x]})
    values = [b"%s-%03d" % (tid.encode(), i) for i in range(RECORDS)]
    sends = [(topic, i % PARTITIONS, v) for i, v in enumerate(values)]
    sends += [(stuck, 0, b"stuck-%s" % tid.encode())]
    producer = OurTxnProducer(tcluster.bootstrap_servers, tid)
    try:
        producer.begin_and_send(sends)
        tcluster.stop_broker(x)
        wait_until(lambda: leaders(tcluster, stuck, [c, y]) == [-1], 30, f"{stuck} offline")
        assert producer.commit() == "committed"  # EndTxn answers once PrepareCommit is written
        stays_true(  # the marker to the offline partition is pending
            lambda: txn_state(tcluster, tid, c) == "PrepareCommit", 1, f"{tid} in PrepareCommit"
        )
        tcluster.kill_broker(c)
        assert current_coordinator(tcluster, tid, [y], not_=c) == y
        assert txn_state(tcluster, tid, y) == "PrepareCommit"  # loaded, completing
        tcluster.start_broker(x)
        wait_until(lambda: txn_state(tcluster, tid, y) == "CompleteCommit", 60, f"{tid} completed by broker {y}")
        write_sentinels(tcluster, [x, y], topic, list(range(PARTITIONS)))
        write_sentinels(tcluster, [x, y], stuck, [0])
        got = read_committed(tcluster, [x, y], {topic: PARTITIONS, stuck: 1}, PARTITIONS + 1)
    finally:
        producer.close()
        settle(tcluster)
    assert sorted(got) == sorted(values + [b"stuck-%s" % tid.encode()])
