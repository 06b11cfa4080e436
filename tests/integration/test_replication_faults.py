"""Replication under faults (issue 13), broker processes or in-process brokers on the real ZooKeeper:

- rounds of SIGKILL of a partition leader while idempotent producers (kafka-python and confluent-kafka) send
  acks=all to RF 3 with ``min.insync.replicas=2``: every acknowledged record exactly once, in order, no offset
  gap below the high watermark, and byte-identical replica logs;
- an old leader that comes back behind, holding records no other replica has: it truncates them and copies
  the new leader's, and serves only those when it leads again;
- a leader whose ZooKeeper session expires is treated as dead: an ISR member takes over, acknowledged records
  survive, and the expired broker registers again and catches up as a follower.

Replica logs of broker processes are compared on disk (``PartitionLog`` over each broker's log dir) after the
cluster stopped cleanly: a consumer Fetch only reaches the leader.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from broker.cluster.zk_registry import ZooKeeperRegistry
from broker.embedded_cluster import EmbeddedCluster
from broker.log import LogConfig, PartitionLog
from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.protocol import ApiKey
from spark_kafkalog.records import iter_batches
from tests.waiting import stays_true, wait_until

from ..broker.cluster.test_zk_registry import expire_session
from ..broker.replication.cluster import Cluster
from ..broker.wire import Wire

pytestmark = pytest.mark.integration

SESSION_MS = 3000  # the session fixture's ZooKeeper (200 ms ticks) grants 400-4000 ms
FAST_REPLICATION = {
    "zookeeper.session.timeout.ms": SESSION_MS,
    "replica.lag.time.max.ms": 5000,
    "replica.fetch.wait.max.ms": 100,
    "replica.fetch.backoff.ms": 200,
    "auto.leader.rebalance.enable": False,
}


# -- producers ------------------------------------------------------------------------------------------


class SequencedProducer(threading.Thread):
    """Sends ``b"<name>-<seq>"`` to partition ``seq % partitions`` every ``interval_s`` from its own thread until
    ``finish``; ``acked`` holds (partition, offset, value) of every acknowledged record, ``failed`` the errors."""

    def __init__(self, name: str, bootstrap: str, topic: str, partitions: int, interval_s: float = 0.005) -> None:
        super().__init__(name=f"producer-{name}", daemon=True)
        self.label = name.encode()
        self.bootstrap = bootstrap
        self.topic = topic
        self.partitions = partitions
        self.interval_s = interval_s
        self.acked: list[tuple[int, int, bytes]] = []
        self.failed: list[tuple[bytes, object]] = []
        self.sent = 0
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def value(self, seq: int) -> bytes:
        return b"%s-%07d" % (self.label, seq)

    def run(self) -> None:
        try:
            self.open()
            while not self._halt.is_set():
                self.send(self.value(self.sent), self.sent % self.partitions)
                self.sent += 1
                time.sleep(self.interval_s)
            self.close()
        except BaseException as e:  # reported by finish()
            self.error = e

    def finish(self) -> None:
        self._halt.set()
        self.join(120)
        assert not self.is_alive(), f"{self.name} did not flush within 120 s"
        assert self.error is None, f"{self.name} failed: {self.error!r}"

    def open(self) -> None:
        raise NotImplementedError

    def send(self, value: bytes, partition: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class KafkaPythonProducer(SequencedProducer):
    def open(self) -> None:
        from kafka import KafkaProducer

        self.producer = KafkaProducer(
            bootstrap_servers=self.bootstrap,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            reconnect_backoff_max_ms=1000,
            delivery_timeout_ms=120_000,
        )

    def send(self, value: bytes, partition: int) -> None:
        future = self.producer.send(self.topic, value=value, partition=partition)
        future.add_callback(lambda md: self.acked.append((md.partition, md.offset, value)))
        future.add_errback(lambda e: self.failed.append((value, e)))

    def close(self) -> None:
        self.producer.flush(100)
        self.producer.close(10)


class ConfluentProducer(SequencedProducer):
    def open(self) -> None:
        from confluent_kafka import Producer

        self.producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "reconnect.backoff.max.ms": 1000,
                "message.timeout.ms": 120_000,
                "error_cb": lambda e: e.fatal() and self.failed.append((b"(fatal)", e)),
            }
        )

    def _delivered(self, err, msg) -> None:
        if err is None:
            self.acked.append((msg.partition(), msg.offset(), msg.value()))
        else:
            self.failed.append((msg.value(), err))

    def send(self, value: bytes, partition: int) -> None:
        self.producer.produce(self.topic, value=value, partition=partition, on_delivery=self._delivered)
        self.producer.poll(0)

    def close(self) -> None:
        assert self.producer.flush(100) == 0, "records still unanswered after 100 s"


def produce_values(bootstrap: str, topic: str, values: list[bytes], *, acks="all", partition: int = 0):
    """Send ``values`` one by one and return their offsets (each acknowledged before the next is sent)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=acks, enable_idempotence=acks == "all")
    try:
        return [producer.send(topic, value=v, partition=partition).get(30).offset for v in values]
    finally:
        producer.close(10)


# -- reading ----------------------------------------------------------------------------------------------


def consume_partitions(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every record below each partition's high watermark, in log order, as (offset, value), read with
    kafka-python from the partition leaders."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        got: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}

        def caught_up() -> bool:
            if all(consumer.position(tp) >= ends[tp] for tp in tps):
                return True
            for tp, records in consumer.poll(timeout_ms=500).items():
                got[tp.partition].extend((r.offset, r.value) for r in records)
            return False

        wait_until(caught_up, 90, f"kafka-python to read up to {ends}")
        return got
    finally:
        consumer.close()


def replica_log(log_dir: Path, topic: str, partition: int) -> tuple[bytes, list[tuple[int, bytes]]]:
    """One replica as stored in ``log_dir`` (its broker stopped): every batch's bytes, and (offset, value) of
    every record."""
    directory = log_dir / f"{topic}-{partition}"
    assert directory.is_dir(), f"no replica of {topic}-{partition} in {log_dir}"
    plog = PartitionLog.open(directory, LogConfig(), recover=False)
    try:
        chunks, offset = [], plog.log_start_offset
        while offset < plog.log_end_offset:
            chunk = bytes(plog.read(offset, 1 << 30, max_offset=None, min_one_batch=True).records.read_bytes())
            chunks.append(chunk)
            offset = max(b.last_offset for b in iter_batches(chunk)) + 1
    finally:
        plog.close(flush=False)
    raw = b"".join(chunks)
    return raw, [(r.offset, r.value) for b in iter_batches(raw) for r in b.records()]


def assert_exactly_once_in_order(logs: dict[int, list[tuple[int, bytes]]], producers: list[SequencedProducer]):
    """Offsets 0..n-1 without a gap in every partition; no value twice; each producer's sequence numbers
    increase along every partition; every acknowledged record at the offset it was acknowledged with."""
    for p, records in logs.items():
        assert [o for o, _ in records] == list(range(len(records))), f"offset gap in partition {p}"
    counts = Counter(v for records in logs.values() for _, v in records)
    duplicates = [v for v, n in counts.items() if n > 1]
    assert not duplicates, f"{len(duplicates)} values stored more than once, e.g. {duplicates[:5]}"
    for prod in producers:
        prefix = prod.label + b"-"
        for p, records in logs.items():
            seqs = [int(v[len(prefix) :]) for _, v in records if v.startswith(prefix)]
            assert seqs == sorted(seqs), f"{prod.name}: records out of order in partition {p}"
        at = {(p, o): v for p, records in logs.items() for o, v in records}
        wrong = [(p, o, v, at.get((p, o))) for p, o, v in prod.acked if at.get((p, o)) != v]
        assert not wrong, f"{prod.name}: {len(wrong)} acknowledged records missing or elsewhere, e.g. {wrong[:5]}"


# -- cluster helpers ------------------------------------------------------------------------------------


@pytest.fixture()
def connect(zookeeper):
    return f"{zookeeper.connect_string}/faults-{uuid.uuid4().hex[:8]}"


@pytest.fixture()
def registry(connect):
    r = ZooKeeperRegistry(connect)
    r.start(10)
    yield r
    r.close()


def every_broker_sees(addresses: list[str]) -> bool:
    """Does every broker's Metadata answer list all of ``addresses``' brokers (CreateTopics counts live brokers
    in the metadata of the broker it reaches, which may still be missing one that just started)?"""
    for address in addresses:
        with Wire(address) as w:
            if len(w.call(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False).brokers) != len(addresses):
                return False
    return True


def create_replicated_topic(addresses: list[str], partitions: int, **config: str) -> str:
    """A topic with RF 3 and ``min.insync.replicas=2``, once every broker knows the others."""
    wait_until(lambda: every_broker_sees(addresses), 30, "every broker to see the others")
    bootstrap = ",".join(addresses)
    topic = f"faults-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, partitions, 3, {"min.insync.replicas": "2", **config})])
    return topic


def full_isr(registry, topic: str, partitions: int, brokers: list[int]) -> bool:
    """Does every partition have a leader and all of ``brokers`` in its ISR?"""
    for p in range(partitions):
        st = registry.partition_state(topic, p)
        if st is None or st.leader < 0 or sorted(st.isr) != sorted(brokers):
            return False
    return True


def acked_since(producers: list[SequencedProducer], counts: list[int], more: int) -> bool:
    """Has every producer had ``more`` records acknowledged since it had ``counts``?"""
    return all(len(prod.acked) >= k + more for prod, k in zip(producers, counts, strict=True))


# -- 1. SIGKILL rounds ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rounds", [pytest.param(2, id="2-rounds"), pytest.param(20, id="20-rounds", marks=pytest.mark.slow)]
)
def test_sigkill_rounds_of_the_leader_keep_every_acknowledged_record_once_in_order(rounds, connect, registry, tmp_path):
    partitions = 2
    cluster = EmbeddedCluster(3, data_dir=tmp_path, zookeeper_connect=connect, broker_config=FAST_REPLICATION).start()
    try:
        topic = create_replicated_topic(cluster.bootstrap_servers.split(","), partitions)
        wait_until(lambda: full_isr(registry, topic, partitions, cluster.broker_ids), 30, "full ISRs")
        producers = [
            KafkaPythonProducer("kafka-python", cluster.bootstrap_servers, topic, partitions),
            ConfluentProducer("confluent", cluster.bootstrap_servers, topic, partitions),
        ]
        for prod in producers:
            prod.start()
        wait_until(lambda: all(len(p.acked) >= 50 for p in producers), 60, "both producers under way")

        for n in range(rounds):
            p = n % partitions
            leader = registry.partition_state(topic, p).leader
            acked_before = [len(prod.acked) for prod in producers]
            cluster.kill_broker(leader)
            if n % 2:  # it comes back behind: the others elect a leader and take more records first
                wait_until(
                    lambda p=p, leader=leader: registry.partition_state(topic, p).leader not in (leader, -1),
                    SESSION_MS / 1000 * 5,
                    f"round {n}: a new leader of partition {p} after broker {leader} died",
                )
                wait_until(
                    lambda counts=acked_before: acked_since(producers, counts, 40),
                    60,
                    f"round {n}: records acknowledged without broker {leader}",
                )
            cluster.start_broker(leader)
            wait_until(
                lambda: full_isr(registry, topic, partitions, cluster.broker_ids),
                60,
                f"round {n}: broker {leader} back in every ISR",
            )
            for prod in producers:
                assert prod.is_alive(), f"round {n}: {prod.name} stopped: {prod.error!r}"
        wait_until(
            lambda: acked_since(producers, acked_before, 40),
            60,
            "records acknowledged after the last round",
        )
        for prod in producers:
            prod.finish()
            assert not prod.failed, f"{prod.name}: {len(prod.failed)} records failed, e.g. {prod.failed[:3]}"
            assert len(prod.acked) == prod.sent

        # one more acks=all record per partition: once answered, every ISR replica has the whole log
        wait_until(lambda: full_isr(registry, topic, partitions, cluster.broker_ids), 60, "full ISRs")
        for p in range(partitions):
            produce_values(cluster.bootstrap_servers, topic, [b"end-%d" % p], partition=p)
        logs = consume_partitions(cluster.bootstrap_servers, topic, partitions)
        assert_exactly_once_in_order(logs, producers)
        assert sum(len(v) for v in logs.values()) == sum(prod.sent for prod in producers) + partitions
    finally:
        cluster.stop()

    for p in range(partitions):
        replicas = {b: replica_log(cluster.broker_dir(b) / "logs", topic, p) for b in cluster.broker_ids}
        for b, (raw, records) in replicas.items():
            assert records == logs[p], f"broker {b}'s replica of partition {p} differs from what consumers read"
            assert raw == replicas[cluster.broker_ids[0]][0], f"broker {b}'s replica of partition {p} differs"


# -- 2. the old leader comes back behind, with records nobody else has ----------------------------------


def test_old_leader_back_behind_drops_its_unreplicated_records_and_serves_only_the_new_leaders(
    connect, registry, tmp_path
):
    cluster = EmbeddedCluster(
        3,
        data_dir=tmp_path,
        zookeeper_connect=connect,
        broker_config={**FAST_REPLICATION, "zookeeper.session.timeout.ms": 4000},
    ).start()
    try:
        topic = create_replicated_topic(cluster.bootstrap_servers.split(","), 1)
        wait_until(lambda: full_isr(registry, topic, 1, cluster.broker_ids), 30, "a full ISR")
        committed = [b"committed-%d" % i for i in range(30)]
        assert produce_values(cluster.bootstrap_servers, topic, committed) == list(range(30))
        old = registry.partition_state(topic, 0).leader
        followers = [b for b in cluster.broker_ids if b != old]

        # the followers freeze (no fetch in flight once replica.fetch.wait.max.ms has passed); the leader takes
        # acks=1 records only it ever has, then dies; the followers resume well within their sessions and
        # replica.lag.time.max.ms, so they stay in the ISR
        from kafka import KafkaProducer

        lonely = KafkaProducer(bootstrap_servers=f"127.0.0.1:{cluster.ports[old]}", acks=1, enable_idempotence=False)
        lonely.partitions_for(topic)
        for b in followers:
            os.kill(cluster.processes[b].pid, signal.SIGSTOP)
        try:
            stays_true(lambda: full_isr(registry, topic, 1, cluster.broker_ids), 0.5, "the frozen followers in the ISR")
            lost = [b"lost-%d" % i for i in range(5)]
            assert [lonely.send(topic, value=v, partition=0).get(10).offset for v in lost] == list(range(30, 35))
            cluster.kill_broker(old)
        finally:
            for b in followers:
                os.kill(cluster.processes[b].pid, signal.SIGCONT)
        lonely.close(0)

        wait_until(lambda: registry.partition_state(topic, 0).leader in followers, 30, "an ISR member elected")
        newer = [b"new-%d" % i for i in range(20)]
        assert produce_values(cluster.bootstrap_servers, topic, newer) == list(range(30, 50))

        cluster.start_broker(old)
        wait_until(lambda: full_isr(registry, topic, 1, cluster.broker_ids), 60, "the old leader back in the ISR")
        # leadership moves to the old leader: it serves exactly the new leader's log
        for b in followers:
            cluster.stop_broker(b)
        wait_until(lambda: registry.partition_state(topic, 0).leader == old, 30, "the old leader leading again")
        logs = consume_partitions(f"127.0.0.1:{cluster.ports[old]}", topic, 1)
        assert [v for _, v in logs[0]] == committed + newer
    finally:
        cluster.stop()

    replicas = {b: replica_log(cluster.broker_dir(b) / "logs", topic, 0) for b in cluster.broker_ids}
    assert all(raw == replicas[old][0] for raw, _ in replicas.values()), "replica logs differ"
    assert replicas[old][1] == list(enumerate(committed + newer))


# -- 3. ZooKeeper session expiry of a leader ------------------------------------------------------------


class ZooKeeperCluster(Cluster):
    """``Cluster`` (in-process brokers 0..n-1) on a real ZooKeeper ``connect`` string instead of ``memory:``."""

    def __init__(self, n: int, tmp_path_factory, connect: str, **overrides) -> None:
        self.connect = connect
        super().__init__(n, tmp_path_factory, **overrides)

    def start(self, i: int) -> EmbeddedBroker:
        b = EmbeddedBroker(i, zookeeper_connect=self.connect, log_dir=self.dirs[i], **self.overrides).start()
        self.brokers[i] = b
        return b


def test_leader_session_expiry_is_its_death_then_it_rejoins_as_a_follower(
    zookeeper, connect, registry, tmp_path_factory
):
    c = ZooKeeperCluster(3, tmp_path_factory, connect, **{k.replace(".", "_"): v for k, v in FAST_REPLICATION.items()})
    try:
        addresses = [b.bootstrap_servers for b in c.brokers.values()]
        bootstrap = ",".join(addresses)
        topic = create_replicated_topic(addresses, 1)
        wait_until(lambda: full_isr(registry, topic, 1, [0, 1, 2]), 30, "a full ISR")
        producer = KafkaPythonProducer("kafka-python", bootstrap, topic, 1)
        producer.start()
        wait_until(lambda: len(producer.acked) >= 50, 30, "records acknowledged")

        before = registry.partition_state(topic, 0)
        old = before.leader
        old_session = c.brokers[old].broker.registry.session_id
        expire_session(c.brokers[old].broker.registry, zookeeper.connect_string)
        acked_at_expiry = len(producer.acked)

        after = wait_until(
            lambda: (lambda st: st if st.leader not in (old, -1) else None)(registry.partition_state(topic, 0)),
            20,
            "a new leader after the session expired",
        )
        assert after.leader in before.isr and after.leader_epoch > before.leader_epoch
        assert old not in after.isr
        new_session = wait_until(
            lambda: (lambda s: s if s not in (None, old_session) else None)(c.brokers[old].broker.registry.session_id),
            20,
            "a new session of the expired broker",
        )
        wait_until(lambda: old in registry.live_brokers(), 20, "the expired broker registered again")
        assert new_session != old_session
        wait_until(lambda: full_isr(registry, topic, 1, [0, 1, 2]), 30, "the expired broker back in the ISR")
        assert c.partition(old, topic).is_follower and c.partition(old, topic).leader_id == after.leader
        wait_until(lambda: len(producer.acked) >= acked_at_expiry + 50, 30, "records acknowledged by the new leader")
        producer.finish()
        assert not producer.failed, producer.failed[:3]

        leader = registry.partition_state(topic, 0).leader
        wait_until(lambda: c.offsets(old, topic) == c.offsets(leader, topic), 30, "the expired broker caught up")
        logs = consume_partitions(bootstrap, topic, 1)
        assert_exactly_once_in_order(logs, [producer])
        assert len(logs[0]) == producer.sent
        for b in c.brokers:
            assert c.log_bytes(b, topic) == c.log_bytes(leader, topic), f"broker {b}'s replica differs"
    finally:
        c.close()
