"""Group members of real clients for the tests in this package: kafka-python and confluent-kafka members
polling in threads, a confluent-kafka member in its own process (killable, freezable), the group timings the
members announce, and helpers to create, fill and read topics and committed offsets.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid

from spark_kafkalog.client import AdminClient, NewTopic, Producer
from tests.waiting import wait_until

SESSION_MS = 6000
HEARTBEAT_MS = 500
MAX_POLL_MS = 10000  # the rebalance timeout the members announce
OFFSETS_PARTITIONS = 50
PARTITIONS = 6
GROUP_CONFIG = {
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 1000,
    "offsets.topic.num.partitions": OFFSETS_PARTITIONS,
}


def new_topic(cluster, partitions: int = PARTITIONS, replication_factor: int = 1) -> str:
    name = f"gt-{uuid.uuid4().hex[:8]}"
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, partitions, replication_factor)])
    return name


def produce(cluster, topic: str, values: list[bytes], partitions: int = PARTITIONS) -> None:
    """``values[i]`` goes to partition ``i % partitions``, so each partition's order is known."""
    with Producer(cluster.bootstrap_servers) as p:
        for i, v in enumerate(values):
            p.send(topic, v, partition=i % partitions)
        p.flush()


def committed(cluster, group: str) -> dict[int, int]:
    with AdminClient(cluster.bootstrap_servers) as admin:
        return {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()}


def assert_split(owned: list[set[int]], partitions: int = PARTITIONS) -> None:
    """Every member owns a non-empty share; the shares are disjoint and cover every partition."""
    assert all(owned), owned
    assert sum(len(s) for s in owned) == partitions and set().union(*owned) == set(range(partitions)), owned


def is_split(owned: list[set[int]], partitions: int = PARTITIONS) -> bool:
    return all(owned) and sum(len(s) for s in owned) == partitions and set().union(*owned) == set(range(partitions))


class ThreadMember:
    """One group member polling in its own thread; ``owned`` is its current assignment (partition numbers),
    ``records`` every (partition, offset, value) it consumed, ``assigned_calls`` how often it was assigned."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.owned: set[int] = set()
        self.records: list[tuple[int, int, bytes]] = []
        self.assigned_calls = 0
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.loop()
        except BaseException as e:  # reported by stop()
            self.errors.append(e)

    def loop(self) -> None:
        raise NotImplementedError

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the member did not close"
        assert not self.errors, self.errors

    def snapshot(self) -> set[int]:
        with self._lock:
            return set(self.owned)


class KafkaPythonMember(ThreadMember):
    def __init__(self, cluster, group: str, topic: str, assignor, **config) -> None:
        self.config = dict(
            bootstrap_servers=cluster.bootstrap_servers,
            group_id=group,
            partition_assignment_strategy=(assignor,),
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=MAX_POLL_MS,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            fetch_max_wait_ms=100,
        )
        self.config.update(config)
        super().__init__(topic)

    def loop(self) -> None:
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(**self.config)
        consumer.subscribe([self.topic])
        try:
            while not self._stop.is_set():
                # 1 s, longer than a rebalance here: kafka-python 3.0.12 drops a JoinGroup/SyncGroup result that
                # arrives after poll() gave up waiting if, by the next poll(), its leader's own metadata snapshot
                # says no rejoin is needed; that member then never heartbeats again (seen when the leader first
                # assigned a topic whose metadata it did not have yet, then rejoined for it)
                batch = consumer.poll(timeout_ms=1000)
                with self._lock:
                    for tp, records in batch.items():
                        self.records += [(tp.partition, r.offset, r.value) for r in records]
                    owned = {tp.partition for tp in consumer.assignment()}
                    if owned != self.owned:
                        self.assigned_calls += 1
                    self.owned = owned
                if batch:
                    consumer.commit()
        finally:
            consumer.close()


class ConfluentMember(ThreadMember):
    def __init__(self, cluster, group: str, topic: str, strategy: str = "range", **config) -> None:
        self.config = {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "partition.assignment.strategy": strategy,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": HEARTBEAT_MS,
            "max.poll.interval.ms": MAX_POLL_MS,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            "topic.metadata.refresh.interval.ms": 1000,
        }
        self.config.update(config)
        self.commit_errors: list = []
        super().__init__(topic)

    def loop(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        consumer = Consumer(self.config)

        def on_assign(c, tps):
            with self._lock:
                self.assigned_calls += 1

        consumer.subscribe([self.topic], on_assign=on_assign)
        try:
            while not self._stop.is_set():
                msg = consumer.poll(0.1)
                with self._lock:
                    self.owned = {tp.partition for tp in consumer.assignment()}
                    if msg is not None and msg.error() is None:
                        self.records.append((msg.partition(), msg.offset(), msg.value()))
                if msg is not None and msg.error() is None:
                    try:
                        consumer.commit(message=msg, asynchronous=False)
                    except KafkaException as e:  # kept: the coordinator test expects some while it is down
                        self.commit_errors.append(e.args[0])
        finally:
            consumer.close()


def wait_split(members: list[ThreadMember], timeout: float = 30, partitions: int = PARTITIONS) -> list[set[int]]:
    def check():
        for m in members:
            assert not m.errors, m.errors
        owned = [m.snapshot() for m in members]
        return owned if is_split(owned, partitions) else None

    owned = wait_until(check, timeout, f"{len(members)} members to split {partitions} partitions")
    assert_split(owned, partitions)
    return owned


def stop_all(members: list[ThreadMember]) -> None:
    for m in members:
        m._stop.set()
    for m in members:
        m.stop()


MEMBER_PROCESS = r"""
import sys, time
from confluent_kafka import Consumer
bootstrap, group, topic, session_ms, heartbeat_ms = sys.argv[1:6]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "partition.assignment.strategy": "range",
              "session.timeout.ms": int(session_ms), "heartbeat.interval.ms": int(heartbeat_ms),
              "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 100})
c.subscribe([topic], on_assign=lambda _c, tps: print("assigned", *sorted(tp.partition for tp in tps), flush=True))
pending = []
while True:
    msg = c.poll(0.1)
    if msg is None or msg.error() is not None:
        continue
    print("consumed", msg.partition(), msg.offset(), msg.value().decode(), flush=True)
    pending.append(msg)
    time.sleep(0.01)
    if len(pending) == 7:
        c.commit(asynchronous=False)
        for m in pending:
            print("committed", m.partition(), m.offset(), flush=True)
        pending = []
"""


class ProcessMember:
    """A confluent-kafka member in its own process (killable by PID); it commits after every 7 records and
    reports on stdout what it was assigned, consumed and committed."""

    def __init__(self, cluster, group: str, topic: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", MEMBER_PROCESS, cluster.bootstrap_servers, group, topic, str(SESSION_MS),
             str(HEARTBEAT_MS)],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self.owned: set[int] = set()
        self.consumed: list[tuple[int, int, bytes]] = []
        self.committed: dict[int, int] = {}
        """partition -> offset of the next record (as committed)."""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            kind, *rest = line.split()
            if kind == "assigned":
                self.owned = {int(p) for p in rest}
            elif kind == "consumed":
                self.consumed.append((int(rest[0]), int(rest[1]), rest[2].encode()))
            elif kind == "committed":
                p, o = int(rest[0]), int(rest[1])
                self.committed[p] = max(self.committed.get(p, 0), o + 1)

    def snapshot(self) -> set[int]:
        return set(self.owned)

    errors: tuple = ()  # as ThreadMember's, for wait_split: its failures show as a missing assignment

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._reader.join(5)
