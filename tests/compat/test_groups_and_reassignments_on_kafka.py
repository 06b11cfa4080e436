"""kafkalog's Consumer with static membership (group.instance.id) and the roundrobin and sticky assignors, and
kafkalog's AdminClient reassigning partitions, against Apache Kafka 3.9 (ZooKeeper mode) and 4.4 (KRaft); the
reassignment answers compared with a kafkalog broker's."""

from __future__ import annotations

import threading
import uuid

import pytest

from spark_kafkalog.client import AdminClient, CommitFailedError, Consumer, Producer, TopicPartition
from spark_kafkalog.client.admin.admin import AdminOperationError
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import stays_true, wait_until

from .conftest import new_topic

pytestmark = pytest.mark.compat


def produce(bootstrap: str, topic: str, n: int, partitions: int) -> None:
    with Producer(bootstrap, linger_ms=5) as producer:
        for i in range(n):
            producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % partitions)
        producer.flush(60)


def group_config(group: str, **extra) -> dict:
    defaults = dict(session_timeout_ms=10000, heartbeat_interval_ms=500, fetch_max_wait_ms=100)
    return {**defaults, "group_id": group, "auto_offset_reset": "earliest", "enable_auto_commit": False, **extra}


def test_static_member_restarts_into_its_partitions_without_leaving_the_group(kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 3)
    produce(bootstrap, topic, 30, 3)
    group, instance = f"static-{uuid.uuid4().hex[:8]}", f"instance-{uuid.uuid4().hex[:6]}"
    config = group_config(group, group_instance_id=instance, session_timeout_ms=30000)
    first: list = []
    consumer = Consumer(bootstrap, **config)
    try:
        consumer.subscribe([topic])
        wait_until(lambda: first.extend(consumer.poll(200)) or len(first) >= 30, 60, "30 records")
        consumer.commit()
        assignment = set(consumer.assignment())
        with AdminClient(bootstrap) as admin:
            (member,) = admin.describe_groups([group])[group].members
        assert member.group_instance_id == instance
    finally:
        consumer.close()  # a static member sends no LeaveGroup: it stays in the group until its session ends
    with AdminClient(bootstrap) as admin:
        description = admin.describe_groups([group])[group]
        assert (description.state, [m.group_instance_id for m in description.members]) == ("Stable", [instance])
        assert [m.member_id for m in description.members] == [member.member_id]
    produce(bootstrap, topic, 6, 3)
    second: list = []
    with Consumer(bootstrap, **config) as again:
        again.subscribe([topic])
        wait_until(lambda: second.extend(again.poll(200)) or len(second) >= 6, 60, "the 6 new records")
        assert set(again.assignment()) == assignment == {TopicPartition(topic, p) for p in range(3)}
        with AdminClient(bootstrap) as admin:
            description = admin.describe_groups([group])[group]
        # the same instance took its own place: one member, a new member id, no other member, still Stable
        (replaced,) = description.members
        assert (description.state, replaced.group_instance_id) == ("Stable", instance)
        assert replaced.member_id != member.member_id
    assert sorted(r.value for r in first) == sorted(b"v%d" % i for i in range(30))
    assert sorted(r.value for r in second) == sorted(b"v%d" % i for i in range(6))  # resumed at the commits


def run_two_members(bootstrap: str, topic: str, partitions: int, n: int, assignor: str):
    """Two members of one new group with ``assignor``; returns (settled assignments, records seen, description)."""
    group = f"g-{assignor}-{uuid.uuid4().hex[:8]}"
    consumers = [Consumer(bootstrap, **group_config(group, partition_assignment_strategy=assignor)) for _ in range(2)]
    seen: list[list] = [[], []]
    stop = threading.Event()

    def run(i: int) -> None:
        # each member polls and closes in its own thread, so neither holds the other's JoinGroup
        try:
            consumers[i].subscribe([topic])
            while not stop.is_set():
                seen[i].extend(consumers[i].poll(200))
                if seen[i]:
                    try:
                        consumers[i].commit()
                    except CommitFailedError:  # a rebalance began: the next poll rejoins
                        pass
        finally:
            consumers[i].close()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(2)]
    try:
        for t in threads:
            t.start()
        wait_until(lambda: sum(map(len, seen)) >= n, 60, "every record")
        assignments = wait_until(
            lambda: (a := [set(c.assignment()) for c in consumers])[0] and a[1] and not a[0] & a[1] and a, 30
        )
        with AdminClient(bootstrap) as admin:
            description = wait_until(
                lambda: (d := admin.describe_groups([group])[group]).state == "Stable" and len(d.members) == 2 and d,
                30,
                "a stable group of two",
            )
            wait_until(lambda: sum(o.offset for o in admin.list_group_offsets(group).values()) == n, 30, "commits")
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    return assignments, [r.value for part in seen for r in part], description


def test_roundrobin_deals_partitions_in_turn(kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 6)
    produce(bootstrap, topic, 120, 6)
    assignments, values, description = run_two_members(bootstrap, topic, 6, 120, "roundrobin")
    assert description.protocol == "roundrobin"
    # dealt in turn over partitions 0..5: one member holds the even partitions, the other the odd ones
    parities = sorted(sorted(tp.partition for tp in a) for a in assignments)
    assert parities == [[0, 2, 4], [1, 3, 5]]
    assert set(values) == {b"v%d" % i for i in range(120)}


def test_sticky_balances_and_keeps_partitions_when_a_member_joins(kafka):
    bootstrap = kafka.bootstrap_servers
    topic = new_topic(bootstrap, 5)
    produce(bootstrap, topic, 100, 5)
    assignments, values, description = run_two_members(bootstrap, topic, 5, 100, "sticky")
    assert description.protocol == "sticky"
    assert sorted(len(a) for a in assignments) == [2, 3]
    assert assignments[0] | assignments[1] == {TopicPartition(topic, p) for p in range(5)}
    assert set(values) == {b"v%d" % i for i in range(100)}

    # stickiness: a lone member owns everything; a second joins and the first keeps what it keeps
    group = f"sticky-{uuid.uuid4().hex[:8]}"
    config = group_config(group, partition_assignment_strategy="sticky")
    first = Consumer(bootstrap, **config)
    second = Consumer(bootstrap, **config)
    stop = threading.Event()
    polling = threading.Thread(target=lambda: [first.poll(100) for _ in iter(stop.is_set, True)], daemon=True)
    try:
        first.subscribe([topic])
        wait_until(lambda: first.poll(100) is not None and len(first.assignment()) == 5, 60, "5 partitions")
        polling.start()
        second.subscribe([topic])
        wait_until(lambda: second.poll(100) is not None and len(second.assignment()) >= 2, 60, "the second member")
        stop.set()
        polling.join(30)
        wait_until(lambda: first.poll(100) is not None and len(first.assignment()) == 3, 30, "the first keeps 3")
        assert set(first.assignment()).isdisjoint(second.assignment())
        stays_true(lambda: len(first.assignment()) == 3 and len(second.assignment()) == 2, 1.0, "a 3-2 split")
    finally:
        stop.set()
        threading.Thread(target=first.close, daemon=True).start()
        second.close()


def reassignment_answers(bootstrap: str) -> dict[str, object]:
    """The same AlterPartitionReassignments / ListPartitionReassignments sequence; each step's outcome."""
    topic = new_topic(bootstrap, 3, prefix="reassign")
    tp = [TopicPartition(topic, p) for p in range(3)]
    out: dict[str, object] = {}

    def outcome(call) -> object:
        try:
            result = call()
        except AdminOperationError as e:
            return sorted((t.partition, ErrorCode(err.error_code).name) for t, err in e.errors.items())
        except KafkaClientError as e:
            return ErrorCode(e.error_code).name
        return "ok" if result is None else result

    with AdminClient(bootstrap) as admin:
        (broker_id,) = admin.describe_cluster()["brokers"]
        out["same replicas"] = outcome(
            lambda: admin.alter_partition_reassignments({tp[0]: [broker_id], tp[1]: [broker_id]})
        )
        out["listed after"] = wait_until(lambda: admin.list_partition_reassignments() == {} and "none", 30)
        out["replicas unchanged"] = [p.replicas for p in admin.describe_topics([topic])[topic].partitions]
        out["unknown broker"] = outcome(lambda: admin.alter_partition_reassignments({tp[2]: [broker_id + 100]}))
        out["empty replica list"] = outcome(lambda: admin.alter_partition_reassignments({tp[2]: []}))
        out["cancel none ongoing"] = outcome(lambda: admin.alter_partition_reassignments({tp[1]: None}))
        out["unknown partition"] = outcome(
            lambda: admin.alter_partition_reassignments({TopicPartition(topic, 9): [broker_id]})
        )
        out["list one partition"] = outcome(lambda: admin.list_partition_reassignments([tp[0]]))
    out["replicas unchanged"] = [tuple(r) == (broker_id,) for r in out["replicas unchanged"]]
    return out


def test_reassignments_answer_as_kafka_does(kafka, kafkalog):
    theirs = reassignment_answers(kafka.bootstrap_servers)
    ours = reassignment_answers(kafkalog.bootstrap_servers)
    assert theirs["same replicas"] == "ok" and theirs["listed after"] == "none"
    assert theirs["replicas unchanged"] == [True] * 3
    assert ours == theirs
