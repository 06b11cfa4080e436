"""Consumer groups with real clients (kafka-python, confluent-kafka, aiokafka, kcat) on a real 3-broker
cluster with a real ZooKeeper: partitions split disjointly over the members and moved on join and leave,
partitions added to a topic are assigned, a group of both clients survives churn, and each record is read
once within a group.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

import pytest

from spark_kafkalog.client import AdminClient
from tests.waiting import stays_true, wait_until, wait_until_async

from .members import (
    HEARTBEAT_MS,
    MAX_POLL_MS,
    PARTITIONS,
    SESSION_MS,
    ConfluentMember,
    KafkaPythonMember,
    ThreadMember,
    assert_split,
    committed,
    is_split,
    new_topic,
    produce,
    stop_all,
    wait_split,
)

pytestmark = pytest.mark.integration


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
        stays_true(
            lambda: len([v for m in members for _, _, v in m.records if v.startswith(b"m")]) <= len(values),
            0.5,
            "no new record read twice",
        )
        new = [v for m in members for _, _, v in m.records if v.startswith(b"m")]
        assert sorted(new) == sorted(values)
    finally:
        stop_all(members)


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
        owned: list[set[int]] = [set(), set()]
        try:

            async def read_all_split() -> bool:
                for i, c in enumerate(consumers):
                    batch = await c.getmany(timeout_ms=100)
                    got.extend(r.value for records in batch.values() for r in records)
                    if batch:
                        await c.commit()
                    owned[i] = {tp.partition for tp in c.assignment()}
                return len(got) >= len(values) and is_split(owned)

            await wait_until_async(read_all_split, 30, "the two aiokafka members to split and read every record")
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
