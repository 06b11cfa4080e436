"""Committed offsets without the group protocol (a consumer with manual assignment and a group.id), group
administration through AdminClient, kafka-python's admin and the `kafkalog groups` CLI, on a real cluster."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from spark_kafkalog.client import AdminClient, Consumer, Producer, TopicPartition
from tests.waiting import wait_until

from .conftest import new_topic

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "broker.cli"]


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> None:
    with Producer(bootstrap) as p:
        for i, v in enumerate(values):
            p.send(topic, v, partition=i % partitions)
        p.flush()


def consume_all(consumer: Consumer, expected: int) -> list[bytes]:
    out: list[bytes] = []
    wait_until(
        lambda: out.extend(r.value for r in consumer.poll(timeout_ms=200)) or len(out) >= expected,
        10,
        f"{expected} records",
    )
    return out


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)


@pytest.fixture()
def group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


def test_a_consumer_with_a_group_id_commits_and_the_next_one_continues_from_there(cluster, group):
    topic = new_topic(cluster, 3)
    tps = [TopicPartition(topic, p) for p in range(3)]
    produce(cluster.bootstrap_servers, topic, [b"a%d" % i for i in range(30)], 3)
    with Consumer(cluster.bootstrap_servers, group_id=group, auto_offset_reset="earliest") as c:
        c.assign(tps)
        assert sorted(consume_all(c, 30)) == sorted(b"a%d" % i for i in range(30))
        c.commit()
        assert {tp: om.offset for tp, om in c.committed(tps).items()} == dict.fromkeys(tps, 10)
    produce(cluster.bootstrap_servers, topic, [b"b%d" % i for i in range(9)], 3)
    with Consumer(cluster.bootstrap_servers, group_id=group, auto_offset_reset="earliest") as c:
        c.assign(tps)
        assert sorted(consume_all(c, 9)) == sorted(b"b%d" % i for i in range(9))  # nothing read twice
    # the previous consumer auto-committed on close
    with AdminClient(cluster.bootstrap_servers) as admin:
        assert {tp: om.offset for tp, om in admin.list_group_offsets(group).items()} == dict.fromkeys(tps, 13)


def test_admin_lists_describes_resets_and_deletes_a_group(cluster, group):
    topic = new_topic(cluster, 2)
    tps = [TopicPartition(topic, p) for p in range(2)]
    produce(cluster.bootstrap_servers, topic, [b"x"] * 10, 2)
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.alter_group_offsets(group, {tps[0]: 2, tps[1]: 5})
        assert group in [g.group_id for g in admin.list_groups()]
        description = admin.describe_groups([group])[group]
        assert description.state == "Empty" and description.members == ()
        lag = {row.topic_partition: (row.committed, row.log_end_offset, row.lag) for row in admin.group_lag(group)}
        assert lag == {tps[0]: (2, 5, 3), tps[1]: (5, 5, 0)}
        admin.delete_group_offsets(group, [tps[1]])
        assert set(admin.list_group_offsets(group)) == {tps[0]}
        admin.delete_groups([group])
        assert group not in [g.group_id for g in admin.list_groups()]


def test_kafka_python_admin_sees_the_group_and_its_offsets(cluster, group):
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTP

    topic = new_topic(cluster, 1)
    produce(cluster.bootstrap_servers, topic, [b"x"] * 4, 1)
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): 3})
    kadmin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        listed = kadmin.list_groups()
        assert group in [entry["group_id"] for entry in listed]
        offsets = kadmin.list_group_offsets({group: None})[group]
        assert offsets[KTP(topic, 0)].offset == 3
    finally:
        kadmin.close()


def test_the_groups_cli_describes_and_resets_offsets(cluster, group):
    topic = new_topic(cluster, 2)
    produce(cluster.bootstrap_servers, topic, [b"x"] * 8, 2)
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): 1, TopicPartition(topic, 1): 4})
    bs = cluster.bootstrap_servers
    described = cli("groups", "describe", "--bootstrap-server", bs, "--group", group)
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert lines[0].split() == [
        "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"
    ]  # fmt: skip
    assert [line.split()[:6] for line in lines[1:]] == [
        [group, topic, "0", "1", "4", "3"],
        [group, topic, "1", "4", "4", "0"],
    ]
    dry = cli("groups", "reset-offsets", "--bootstrap-server", bs, "--group", group, "--topic", topic, "--to-earliest")
    assert dry.returncode == 0 and "dry run" in dry.stdout
    with AdminClient(bs) as admin:
        assert admin.list_group_offsets(group)[TopicPartition(topic, 0)].offset == 1  # unchanged
    shifted = cli(
        "groups", "reset-offsets", "--bootstrap-server", bs, "--group", group, "--topic", f"{topic}:1",
        "--shift-by", "-2", "--execute",
    )  # fmt: skip
    assert shifted.returncode == 0, shifted.stderr
    with AdminClient(bs) as admin:
        offsets = admin.list_group_offsets(group)
    assert (offsets[TopicPartition(topic, 0)].offset, offsets[TopicPartition(topic, 1)].offset) == (1, 2)
    listed = cli("groups", "list", "--bootstrap-server", bs)
    assert group in listed.stdout.split()
    deleted = cli("groups", "delete", "--bootstrap-server", bs, "--group", group)
    assert deleted.returncode == 0 and group not in cli("groups", "list", "--bootstrap-server", bs).stdout.split()


def test_consume_as_a_group_member_commits_and_continues_where_it_stopped(cluster, group):
    topic = new_topic(cluster, 2)
    bs = cluster.bootstrap_servers
    produce(bs, topic, [b"a%d" % i for i in range(10)], 2)
    first = cli(
        "consume", "--bootstrap-server", bs, "--topic", topic, "--group", group, "--from-beginning",
        "--max-messages", "10", "--timeout-ms", "60000",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert sorted(first.stdout.splitlines()) == sorted(f"a{i}" for i in range(10))  # values only, as Kafka's
    assert "Processed a total of 10 messages" in first.stderr
    produce(bs, topic, [b"b%d" % i for i in range(4)], 2)
    second = cli("consume", "--bootstrap-server", bs, "--topic", topic, "--group", group, "--max-messages", "3")
    values = second.stdout.splitlines()
    assert second.returncode == 0 and len(values) == 3 and all(v.startswith("b") for v in values)
    third = cli("consume", "--bootstrap-server", bs, "--topic", topic, "--group", group, "--timeout-ms", "3000")
    rest = third.stdout.splitlines()
    assert sorted(values + rest) == ["b0", "b1", "b2", "b3"]  # nothing read twice, nothing skipped
    with AdminClient(bs) as admin:
        assert [row.lag for row in admin.group_lag(group)] == [0, 0]
    bad = cli("consume", "--bootstrap-server", bs, "--topic", topic, "--group", group, "--partition", "0")
    assert bad.returncode == 2 and "cannot be combined" in bad.stderr
