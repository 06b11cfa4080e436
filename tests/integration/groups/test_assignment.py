"""Consumer groups with real clients (kafka-python, confluent-kafka, aiokafka, kcat) on a real 3-broker
cluster with a real ZooKeeper: partitions split disjointly over the members and moved on join, leave and
crash; committed offsets survive consumer, coordinator and whole-cluster restarts; static members come back
without a rebalance; the clients' group admin calls agree with ours.

The cluster runs with short group timings (no initial rebalance delay, sessions down to 1 s) so that
rebalances take a heartbeat or two; members use 6 s sessions and 500 ms heartbeats.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, GroupKey, decode_group_value, decode_key, partition_for
from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, NewTopic, Producer, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode
from tests.waiting import wait_until

from ...broker.wire import Wire

pytestmark = pytest.mark.integration

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


@pytest.fixture(scope="module")
def gcluster(zookeeper, tmp_path_factory):
    """Three broker processes with short group timings under a fresh chroot of the session ZooKeeper."""
    c = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("groups"),
        zookeeper_connect=f"{zookeeper.connect_string}/groups-{uuid.uuid4().hex[:8]}",
        broker_config=GROUP_CONFIG,
    )
    c.start()
    yield c
    c.stop()


@pytest.fixture()
def group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


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


# -- members running in threads ------------------------------------------------------------------
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


# -- kafka-python ---------------------------------------------------------------------------------
def _kafka_python_assignors():
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    return {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
    }


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky"])  # cooperative: confluent-kafka's below
def test_kafka_python_members_split_the_partitions_on_join_and_leave(gcluster, group, assignor):
    cls = _kafka_python_assignors()[assignor]
    topic = new_topic(gcluster)
    members = [KafkaPythonMember(gcluster, group, topic, cls) for _ in range(2)]
    try:
        wait_split(members)
        members.append(KafkaPythonMember(gcluster, group, topic, cls))
        wait_split(members)
        leaving = members.pop(0)
        t0 = time.monotonic()
        leaving.stop()  # a clean close sends LeaveGroup
        wait_split(members, timeout=MAX_POLL_MS / 1000)
        assert time.monotonic() - t0 < SESSION_MS / 1000, "a clean leave must not wait for the session timeout"
        if assignor == "range":
            assert sorted(map(sorted, (m.snapshot() for m in members))) == [[0, 1, 2], [3, 4, 5]]
    finally:
        stop_all(members)


# -- confluent-kafka ------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_confluent_members_split_the_partitions_on_join_and_leave(gcluster, group, strategy):
    topic = new_topic(gcluster)
    members = [ConfluentMember(gcluster, group, topic, strategy) for _ in range(2)]
    try:
        wait_split(members)
        members.append(ConfluentMember(gcluster, group, topic, strategy))
        wait_split(members)
        leaving = members.pop(0)
        t0 = time.monotonic()
        leaving.stop()
        wait_split(members, timeout=MAX_POLL_MS / 1000)
        assert time.monotonic() - t0 < SESSION_MS / 1000, "a clean leave must not wait for the session timeout"
    finally:
        stop_all(members)


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python"])
def test_added_partitions_are_assigned_after_the_leader_rejoins(gcluster, group, client):
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    topic = new_topic(gcluster)
    if client == "confluent-kafka":
        members = [ConfluentMember(gcluster, group, topic) for _ in range(2)]
    else:
        members = [
            KafkaPythonMember(gcluster, group, topic, RangePartitionAssignor, metadata_max_age_ms=1000)
            for _ in range(2)
        ]
    try:
        wait_split(members)
        with AdminClient(gcluster.bootstrap_servers) as admin:
            admin.create_partitions({topic: PARTITIONS + 2})
        owned = wait_split(members, timeout=15, partitions=PARTITIONS + 2)
        assert sorted(map(sorted, owned)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    finally:
        stop_all(members)


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


def test_a_killed_confluent_member_is_replaced_and_its_commits_are_not_read_again(gcluster, group):
    topic = new_topic(gcluster)
    survivors = [ConfluentMember(gcluster, group, topic) for _ in range(2)]
    victim = ProcessMember(gcluster, group, topic)
    try:
        wait_split([*survivors, victim])
        values = [b"v%04d" % i for i in range(600)]
        produce(gcluster, topic, values)
        wait_until(lambda: sum(victim.committed.values()) >= 28, 30, "the victim to commit some records")
        victim.kill()
        killed_at = time.monotonic()
        at_kill = committed(gcluster, group)  # the survivors cannot commit its partitions before its session ends
        wait_split(survivors, timeout=SESSION_MS / 1000 + MAX_POLL_MS / 1000 + 5)
        taken_over = time.monotonic() - killed_at
        assert taken_over >= SESSION_MS / 1000 - 1.5, (
            f"partitions moved after {taken_over:.1f}s, before the session ended"
        )
        wait_until(
            lambda: {v for m in survivors for _, _, v in m.records} | {v for _, _, v in victim.consumed} >= set(values),
            30,
            "every record to be consumed by the group",
        )
    finally:
        stop_all(survivors)
        if victim.proc.poll() is None:
            victim.kill()
    victims = victim.snapshot()
    assert len(victims) == 2
    by_survivors = [r for m in survivors for r in m.records]
    consumed = Counter(v for _, _, v in by_survivors) + Counter(v for _, _, v in victim.consumed)
    assert set(consumed) == set(values)
    twice = {v for v, n in consumed.items() if n > 1}
    # at least once: only what the victim consumed after its last commit may be read again, and exactly that is
    assert all(victim.committed.get(p, 0) <= at_kill.get(p, 0) for p in victims)  # equal unless killed mid-report
    victim_uncommitted = {v for p, o, v in victim.consumed if o >= at_kill.get(p, 0)}
    assert twice == victim_uncommitted
    assert max(consumed.values()) == 2
    for p in victims:  # the survivors resumed the victim's partitions exactly at its last commit
        first = min(o for q, o, _ in by_survivors if q == p)
        assert first == at_kill.get(p, 0), (p, first, at_kill)


def test_a_frozen_member_is_expired_and_rejoins_when_it_thaws(gcluster, group):
    """SIGSTOP keeps the member's connections open but silences its heartbeats: the coordinator expires its
    session and the others take its partitions; after SIGCONT it is told to rejoin and gets a share again."""
    topic = new_topic(gcluster)
    others = [ConfluentMember(gcluster, group, topic) for _ in range(2)]
    frozen = ProcessMember(gcluster, group, topic)
    try:
        wait_split([*others, frozen])
        os.kill(frozen.proc.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        wait_split(others, timeout=SESSION_MS / 1000 + 5)
        assert time.monotonic() - stopped_at >= SESSION_MS / 1000 - 1.5
        os.kill(frozen.proc.pid, signal.SIGCONT)
        wait_split([*others, frozen], timeout=SESSION_MS / 1000 + MAX_POLL_MS / 1000)
        values = [b"t%03d" % i for i in range(60)]
        produce(gcluster, topic, values)
        wait_until(
            lambda: (
                sorted([v for m in others for _, _, v in m.records] + [v for _, _, v in frozen.consumed])
                == sorted(values)
            ),
            20,
            "the three members to read every record once",
        )
    finally:
        if frozen.proc.poll() is None:
            os.kill(frozen.proc.pid, signal.SIGCONT)
            frozen.kill()
        stop_all(others)


def test_a_mixed_group_of_kafka_python_and_confluent_members_survives_churn(gcluster, group):
    """Members of both clients (one range protocol) join and leave in quick succession, some while a
    rebalance is in progress; once the churn stops the survivors split the partitions and read each new
    record exactly once."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    topic = new_topic(gcluster)

    def new_member(i: int) -> ThreadMember:
        if i % 2:
            return KafkaPythonMember(gcluster, group, topic, RangePartitionAssignor)
        return ConfluentMember(gcluster, group, topic)

    members = [new_member(i) for i in range(4)]
    try:
        wait_split(members)
        for step in range(6):  # add two, drop one, without waiting for the group to settle
            members += [new_member(step), new_member(step + 1)]
            time.sleep(0.2)
            members.pop(step % len(members)).stop()
            time.sleep(0.1 * (step % 3))
        while len(members) > PARTITIONS:
            members.pop(0).stop()
        wait_split(members, timeout=MAX_POLL_MS / 1000 + 10)
        values = [b"m%03d" % i for i in range(120)]
        produce(gcluster, topic, values)
        wait_until(
            lambda: len([v for m in members for _, _, v in m.records if v.startswith(b"m")]) >= len(values),
            20,
            "the survivors to read every new record",
        )
        time.sleep(0.5)
        new = [v for m in members for _, _, v in m.records if v.startswith(b"m")]
        assert sorted(new) == sorted(values)
    finally:
        stop_all(members)


# -- static membership ----------------------------------------------------------------------------
def stored_generation(cluster, group: str) -> int:
    """The generation of the group's last GroupMetadataValue in ``__consumer_offsets`` (read with kafka-python)."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP

    tp = KTP(OFFSETS_TOPIC, partition_for(group, OFFSETS_PARTITIONS))
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None, enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        generation = None
        while consumer.position(tp) < end:
            for r in consumer.poll(timeout_ms=500).get(tp, []):
                key = decode_key(r.key)
                if isinstance(key, GroupKey) and key.group == group and r.value is not None:
                    generation = decode_group_value(r.value).generation
        assert generation is not None, f"no group metadata of {group} in {tp}"
        return generation
    finally:
        consumer.close()


def test_a_restarted_static_member_gets_its_partitions_back_without_a_rebalance(gcluster, group):
    topic = new_topic(gcluster)
    members = [ConfluentMember(gcluster, group, topic, **{"group.instance.id": f"static-{i}"}) for i in range(3)]
    try:
        before = wait_split(members)
        generation = stored_generation(gcluster, group)
        calls = [m.assigned_calls for m in members]
        members[1].stop()  # a static member's close sends no LeaveGroup
        members[1] = ConfluentMember(gcluster, group, topic, **{"group.instance.id": "static-1"})
        wait_until(
            lambda: members[1].snapshot() == before[1], SESSION_MS / 1000 - 1, "the restarted member's partitions"
        )
        time.sleep(2 * HEARTBEAT_MS / 1000)  # a rebalance would show by now
        assert [m.snapshot() for m in members] == before
        assert [members[0].assigned_calls, members[2].assigned_calls] == [calls[0], calls[2]]
        assert stored_generation(gcluster, group) == generation
        with AdminClient(gcluster.bootstrap_servers) as admin:
            described = admin.describe_groups([group])[group]
        assert described.state == "Stable"
        assert sorted(m.group_instance_id for m in described.members) == ["static-0", "static-1", "static-2"]
    finally:
        stop_all(members)


# -- aiokafka ---------------------------------------------------------------------------------------
def test_aiokafka_members_split_the_partitions_consume_and_commit(gcluster, group):
    from aiokafka import AIOKafkaConsumer
    from aiokafka.structs import TopicPartition as ATP

    topic = new_topic(gcluster)
    values = [b"aio%03d" % i for i in range(120)]
    produce(gcluster, topic, values)

    async def run() -> tuple[list[set[int]], list[bytes], dict]:
        consumers = [
            AIOKafkaConsumer(
                topic,
                bootstrap_servers=gcluster.bootstrap_servers,
                group_id=group,
                auto_offset_reset="earliest",
                enable_auto_commit=False,
                session_timeout_ms=SESSION_MS,
                heartbeat_interval_ms=HEARTBEAT_MS,
                max_poll_interval_ms=MAX_POLL_MS,
            )
            for _ in range(2)
        ]
        for c in consumers:
            await c.start()
        got: list[bytes] = []
        try:
            deadline = time.monotonic() + 30
            owned = [set(), set()]
            while time.monotonic() < deadline and not (len(got) >= len(values) and is_split(owned)):
                for i, c in enumerate(consumers):
                    batch = await c.getmany(timeout_ms=100)
                    got += [r.value for records in batch.values() for r in records]
                    if batch:
                        await c.commit()
                    owned[i] = {tp.partition for tp in c.assignment()}
            for c in consumers:
                await c.commit()
            committed_by_aiokafka = {p: await consumers[0].committed(ATP(topic, p)) for p in range(PARTITIONS)}
        finally:
            for c in consumers:
                await c.stop()
        return owned, got, committed_by_aiokafka

    owned, got, committed_by_aiokafka = asyncio.run(run())
    assert_split(owned)
    assert sorted(got) == sorted(values)  # each record once within the group
    assert committed(gcluster, group) == committed_by_aiokafka == dict.fromkeys(range(PARTITIONS), 20)


# -- kcat -------------------------------------------------------------------------------------------
@pytest.mark.skipif(
    shutil.which("kcat") is None, reason="kcat is not installed (make install adds it when run as root)"
)
def test_kcat_balanced_consumer_reads_each_record_once_across_runs(gcluster, group):
    topic = new_topic(gcluster)
    values = [b"kc%03d" % i for i in range(60)]
    produce(gcluster, topic, values)

    def kcat(count: int) -> list[bytes]:
        out = subprocess.run(
            ["kcat", "-b", gcluster.bootstrap_servers, "-G", group, "-c", str(count), "-q", "-f", "%s\\n",
             "-X", "auto.offset.reset=earliest", "-X", f"session.timeout.ms={SESSION_MS}",
             "-X", f"heartbeat.interval.ms={HEARTBEAT_MS}", topic],
            capture_output=True, timeout=60,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr.decode(errors="replace")
        return out.stdout.split()

    first = kcat(40)
    assert len(first) == 40 and set(first) <= set(values)
    assert sum(committed(gcluster, group).values()) == 40  # committed on exit, exactly what it printed
    second = kcat(20)
    assert sorted(first + second) == sorted(values)


# -- group administration by other clients ----------------------------------------------------------
def test_kafka_python_and_confluent_admin_group_calls_agree_with_ours(gcluster, group):
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka import TopicPartition as CTP
    from confluent_kafka.admin import AdminClient as ConfluentAdmin
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTP
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.structs import OffsetAndMetadata as KOM

    topic = new_topic(gcluster)
    produce(gcluster, topic, [b"ad%03d" % i for i in range(60)])
    members = [KafkaPythonMember(gcluster, group, topic, RangePartitionAssignor) for _ in range(2)]
    kadmin = KafkaAdminClient(bootstrap_servers=gcluster.bootstrap_servers)
    cadmin = ConfluentAdmin({"bootstrap.servers": gcluster.bootstrap_servers})
    try:
        owned = wait_split(members)
        wait_until(lambda: sum(committed(gcluster, group).values()) == 60, 20, "the members to commit everything")
        with AdminClient(gcluster.bootstrap_servers) as admin:
            ours = admin.describe_groups([group])[group]
            our_offsets = {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()}
        assert ours.state == "Stable" and len(ours.members) == 2

        # kafka-python
        assert {"group_id": group, "protocol_type": "consumer"}.items() <= next(
            g for g in kadmin.list_groups() if g["group_id"] == group
        ).items()
        described = kadmin.describe_groups([group])[group]
        assert described["error"] is None and described["group_state"] == "Stable"
        assert described["protocol_type"] == "consumer" and described["protocol_data"] == "range"
        k_members = {
            m["member_id"]: {p for t in m["member_assignment"]["assigned_partitions"] for p in t["partitions"]}
            for m in described["members"]
        }
        o_members = {m.member_id: m for m in ours.members}
        assert set(k_members) == set(o_members)
        assert sorted(map(sorted, k_members.values())) == sorted(map(sorted, owned))
        k_offsets = kadmin.list_group_offsets({group: None})[group]
        assert {tp.partition: om.offset for tp, om in k_offsets.items()} == our_offsets == dict.fromkeys(range(6), 10)

        # confluent-kafka
        listed = cadmin.list_consumer_groups().result(30)
        c_listing = next(g for g in listed.valid if g.group_id == group)
        assert c_listing.state.name == "STABLE" and not c_listing.is_simple_consumer_group
        c_described = cadmin.describe_consumer_groups([group])[group].result(30)
        assert c_described.state.name == "STABLE" and c_described.partition_assignor == "range"
        assert c_described.coordinator.id == ours.coordinator
        c_members = {m.member_id: {tp.partition for tp in m.assignment.topic_partitions} for m in c_described.members}
        assert c_members == k_members
        c_offsets = cadmin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
        assert {tp.partition: tp.offset for tp in c_offsets.topic_partitions} == our_offsets

        # a group with members refuses deletion and outside commits
        assert dict(kadmin.delete_groups([group])) == {group: "NonEmptyGroupError"}
        from kafka.errors import UnknownMemberIdError

        refused = kadmin.alter_group_offsets(group, {KTP(topic, 0): KOM(1, "", -1)})
        assert refused == {KTP(topic, 0): UnknownMemberIdError}
    finally:
        stop_all(members)

    try:
        # altered offsets, by both clients, are what we read back
        kadmin.alter_group_offsets(group, {KTP(topic, 0): KOM(3, "from kafka-python", -1)})
        altered = cadmin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [CTP(topic, 1, 4), CTP(topic, 2, 5)])]
        )
        altered[group].result(30)
        with AdminClient(gcluster.bootstrap_servers) as admin:
            after = admin.list_group_offsets(group)
            assert {tp.partition: om.offset for tp, om in after.items()} == {0: 3, 1: 4, 2: 5, 3: 10, 4: 10, 5: 10}
            assert after[TopicPartition(topic, 0)].metadata == "from kafka-python"
            assert admin.describe_groups([group])[group].state == "Empty"
        c_offsets = cadmin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [CTP(topic, 0), CTP(topic, 1)])]
        )[group].result(30)
        assert [(tp.partition, tp.offset) for tp in c_offsets.topic_partitions] == [(0, 3), (1, 4)]

        # deletion: kafka-python deletes one group, confluent-kafka another; both are gone for us
        other = f"{group}-other"
        with AdminClient(gcluster.bootstrap_servers) as admin:
            admin.alter_group_offsets(other, {TopicPartition(topic, 0): 1})
        assert dict(kadmin.delete_groups([other])) == {other: "OK"}
        cadmin.delete_consumer_groups([group])[group].result(30)
        with AdminClient(gcluster.bootstrap_servers) as admin:
            remaining = {g.group_id for g in admin.list_groups()}
            assert group not in remaining and other not in remaining
            assert admin.list_group_offsets(group) == {}
    finally:
        kadmin.close()


# -- restarts: consumer, coordinator, whole cluster (last: they disturb the shared cluster) -----------
def kafka_python_read(cluster, group: str, topic: str, count: int) -> list[bytes]:
    """A new kafka-python member reads ``count`` records (and no more arrive within a second), commits, leaves."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=group,
        session_timeout_ms=SESSION_MS,
        heartbeat_interval_ms=HEARTBEAT_MS,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    try:
        deadline = time.monotonic() + 30
        quiet_until = None
        while time.monotonic() < deadline:
            got += [r.value for records in consumer.poll(timeout_ms=100).values() for r in records]
            if len(got) >= count:
                quiet_until = quiet_until or time.monotonic() + 1
                if time.monotonic() >= quiet_until:
                    break
        consumer.commit()
    finally:
        consumer.close()
    return got


def find_coordinator(cluster, group: str, broker_id: int):
    with Wire(f"127.0.0.1:{cluster.ports[broker_id]}") as w:
        return w.call(ApiKey.FIND_COORDINATOR, 3, key=group, key_type=0)


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_the_coordinator_goes_and_another_broker_takes_the_group_over_with_its_offsets(gcluster, group, how):
    """``__consumer_offsets`` has three replicas: when the coordinator's broker stops (controlled shutdown)
    or is SIGKILLed, the new leader of the group's partition coordinates it with every committed offset, and
    the member goes on committing there; the old broker returns as a follower."""
    topic = new_topic(gcluster, replication_factor=3)
    member = ConfluentMember(gcluster, group, topic)
    gone = None
    try:
        wait_split([member])
        produce(gcluster, topic, [b"c1-%03d" % i for i in range(60)])
        wait_until(lambda: committed(gcluster, group) == dict.fromkeys(range(PARTITIONS), 10), 20, "commits")
        coordinator = find_coordinator(gcluster, group, gcluster.broker_ids[0])
        assert coordinator.error_code == ErrorCode.NONE
        gone = coordinator.node_id
        group_partition = partition_for(group, OFFSETS_PARTITIONS)
        assert describe_leaders(gcluster, OFFSETS_TOPIC)[group_partition] == gone
        assert len(describe_isr(gcluster, OFFSETS_TOPIC)[group_partition]) == 3
        if how == "stop":
            gcluster.stop_broker(gone)
        else:
            gcluster.kill_broker(gone)
        others = [b for b in gcluster.broker_ids if b != gone]
        for b in others:
            found = wait_until(
                lambda b=b: (lambda r: r if r.error_code == ErrorCode.NONE and r.node_id != gone else None)(
                    find_coordinator(gcluster, group, b)
                ),
                30,
                f"broker {b} to name the new coordinator",
            )
            assert found.node_id in others
        survivors = ",".join(f"127.0.0.1:{gcluster.ports[b]}" for b in others)
        with AdminClient(survivors) as admin:  # every commit made before is there
            kept = {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()}
        assert all(kept.get(p, -1) >= 10 for p in range(PARTITIONS)), kept
        with Producer(survivors) as p:
            for i in range(12):
                p.send(topic, b"c2-%03d" % i, partition=i % PARTITIONS)
            p.flush()
        ends = end_offsets(gcluster, topic, survivors)
        with AdminClient(survivors) as admin:

            def commits_reach_the_ends():
                return {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()} == ends

            wait_until(commits_reach_the_ends, 40, f"the group to commit up to {ends} at the new coordinator")
        gcluster.start_broker(gone)
        gone = None
        produce(gcluster, topic, [b"c3-%03d" % i for i in range(60)])
        ends = end_offsets(gcluster, topic)
        wait_until(lambda: committed(gcluster, group) == ends, 30, f"the group to commit up to {ends}")
        with AdminClient(gcluster.bootstrap_servers) as admin:
            assert admin.describe_groups([group])[group].state == "Stable"
    finally:
        if gone is not None:
            gcluster.start_broker(gone)
        stop_all([member])
    values = [v for _, _, v in member.records]
    assert set(values) == {b"c1-%03d" % i for i in range(60)} | {b"c2-%03d" % i for i in range(12)} | {
        b"c3-%03d" % i for i in range(60)
    }
    assert all(n == 1 for v, n in Counter(values).items() if v.startswith(b"c1-")), "committed records read again"
    codes = {e.name() for e in member.commit_errors}
    assert codes <= {"_WAIT_COORD", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "_TRANSPORT", "_TIMED_OUT"}, codes


def describe_isr(cluster, topic: str) -> list[list[int]]:
    """The ISR of each partition of ``topic``, in partition order."""
    with AdminClient(cluster.bootstrap_servers) as admin:
        return [
            list(p.isr) for p in sorted(admin.describe_topics([topic])[topic].partitions, key=lambda d: d.partition)
        ]


def describe_leaders(cluster, topic: str) -> list[int]:
    """The leader of each partition of ``topic``, in partition order."""
    with AdminClient(cluster.bootstrap_servers) as admin:
        d = admin.describe_topics([topic])[topic]
    return [p.leader for p in sorted(d.partitions, key=lambda p: p.partition)]


def end_offsets(cluster, topic: str, bootstrap_servers: str | None = None) -> dict[int, int]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP

    consumer = KafkaConsumer(bootstrap_servers=bootstrap_servers or cluster.bootstrap_servers, group_id=None)
    try:
        ends = consumer.end_offsets([KTP(topic, p) for p in range(PARTITIONS)])
    finally:
        consumer.close()
    return {tp.partition: o for tp, o in ends.items()}


def every_broker_knows(cluster, topic: str) -> bool:
    """Whether each broker, asked alone, answers ``topic``'s metadata with a leader for every partition."""
    from spark_kafkalog.client import KafkaClient, KafkaClientError

    for port in cluster.ports.values():
        try:
            with KafkaClient(f"127.0.0.1:{port}", request_timeout_ms=5000) as client:
                info = client.topic_info(topic, refresh=True, timeout_ms=5000)
        except KafkaClientError:
            return False
        if len(info.partitions) != PARTITIONS or any(p.leader < 0 for p in info.partitions.values()):
            return False
    return True


def test_commits_survive_a_consumer_restart_and_a_whole_cluster_restart(gcluster, group):
    topic = new_topic(gcluster)
    first = [b"r1-%03d" % i for i in range(60)]
    produce(gcluster, topic, first)
    assert sorted(kafka_python_read(gcluster, group, topic, 60)) == sorted(first)
    second = [b"r2-%03d" % i for i in range(12)]
    produce(gcluster, topic, second)
    assert sorted(kafka_python_read(gcluster, group, topic, 12)) == sorted(second)  # a new consumer continues
    before = committed(gcluster, group)
    assert before == dict.fromkeys(range(PARTITIONS), 12)

    for b in gcluster.broker_ids:  # the whole cluster, cleanly, then back on the same data dirs
        gcluster.stop_broker(b)
    for b in gcluster.broker_ids:
        gcluster.start_broker(b)
    assert wait_until(lambda: committed(gcluster, group) == before, 30, "the offsets after the restart")
    # a kafka-python group leader assigns nothing for a topic its metadata lacks (and does not look again for
    # metadata.max.age.ms): start it once every restarted broker serves the topic with its leaders
    wait_until(lambda: every_broker_knows(gcluster, topic), 30, f"every broker to serve {topic}'s leaders")
    third = [b"r3-%03d" % i for i in range(12)]
    produce(gcluster, topic, third)
    assert sorted(kafka_python_read(gcluster, group, topic, 12)) == sorted(third)
