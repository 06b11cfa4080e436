"""Restarts under a group: when the coordinator's broker stops or is killed, another broker takes the group
over with every committed offset; commits survive a consumer restart and a restart of the whole cluster.
These tests disturb the package's shared cluster, so this module sorts last.
"""

from __future__ import annotations

from collections import Counter

import pytest

from broker.coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from spark_kafkalog.client import AdminClient, Producer
from spark_kafkalog.protocol import ApiKey, ErrorCode
from tests.waiting import stays_true, wait_until

from ...broker.wire import Wire
from .members import (
    HEARTBEAT_MS,
    OFFSETS_PARTITIONS,
    PARTITIONS,
    SESSION_MS,
    ConfluentMember,
    committed,
    new_topic,
    produce,
    stop_all,
    wait_split,
)

pytestmark = pytest.mark.integration


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
        # The group leader may assign from a broker's metadata that does not know a just-created topic yet; with
        # the default (5 minutes) kafka-python would see its partitions (and rebalance onto them) only then.
        metadata_max_age_ms=1000,
    )
    consumer.subscribe([topic])
    got: list[bytes] = []

    def poll() -> int:
        got.extend(r.value for records in consumer.poll(timeout_ms=100).values() for r in records)
        return len(got)

    try:
        wait_until(lambda: poll() >= count, 60, f"kafka-python to read {count} records")
        stays_true(lambda: poll() <= count, 1, f"no record beyond the {count}")
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
    expected = {"_WAIT_COORD", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "_TRANSPORT", "_TIMED_OUT"}
    if how == "kill":
        # A SIGKILLed coordinator is noticed when its ZooKeeper session (6 s here) expires, as long as the member's
        # session: when the member's own session runs out first it rejoins, and a commit made with the old
        # membership is refused by the new coordinator exactly as Kafka refuses it.
        expected |= {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "REBALANCE_IN_PROGRESS"}
    assert codes <= expected, codes


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
    # kafka-python's group leader assigns from its own metadata: a broker that does not know the topic yet makes
    # it assign nothing until its next metadata refresh and rejoin, which a loaded CI machine can push past 30 s
    wait_until(lambda: every_broker_knows(gcluster, topic), 30, f"every broker to know {topic}")
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
