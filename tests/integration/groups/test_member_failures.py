"""Members that crash, freeze or restart: a SIGKILLed member's partitions move after its session and only what
it consumed after its last commit is read again; a SIGSTOPped member is expired and rejoins when it thaws; a
restarted static member gets its partitions back without a rebalance.
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, GroupKey, decode_group_value, decode_key, partition_for
from spark_kafkalog.client import AdminClient
from tests.waiting import stays_true, wait_until

from .members import (
    HEARTBEAT_MS,
    MAX_POLL_MS,
    OFFSETS_PARTITIONS,
    SESSION_MS,
    ConfluentMember,
    ProcessMember,
    committed,
    new_topic,
    produce,
    stop_all,
    wait_split,
)

pytestmark = pytest.mark.integration


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
                if int.from_bytes(r.key[:2], "big") > 2:
                    continue  # a KIP-848 or share group's record (key types 3 and up) of another test's group
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
        stays_true(  # a rebalance would show by now
            lambda: (
                [m.snapshot() for m in members] == before
                and [members[0].assigned_calls, members[2].assigned_calls] == [calls[0], calls[2]]
            ),
            2 * HEARTBEAT_MS / 1000,
            "the members' partitions, without a rebalance",
        )
        assert [m.snapshot() for m in members] == before
        assert [members[0].assigned_calls, members[2].assigned_calls] == [calls[0], calls[2]]
        assert stored_generation(gcluster, group) == generation
        with AdminClient(gcluster.bootstrap_servers) as admin:
            described = admin.describe_groups([group])[group]
        assert described.state == "Stable"
        assert sorted(m.group_instance_id for m in described.members) == ["static-0", "static-1", "static-2"]
    finally:
        stop_all(members)
