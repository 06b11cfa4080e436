"""The `kafkalog` console commands (topics, produce, consume, groups, configs, offsets) with
``--bootstrap-server`` at Apache Kafka 3.9 (ZooKeeper mode) and 4.4 (KRaft)."""

from __future__ import annotations

import base64
import subprocess
import sys
import uuid

import pytest

from spark_kafkalog.client import AdminClient, Consumer, Producer, TopicPartition
from tests.waiting import wait_until

from .tools import run_tool

pytestmark = pytest.mark.compat

CLI = [sys.executable, "-m", "broker.cli"]


def ok(*args: str, stdin: str | None = None) -> str:
    r = subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=90)
    assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.returncode, r.stderr)
    return r.stdout


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def test_topics_create_list_describe_alter_delete(kafka):
    bs = ("--bootstrap-server", kafka.bootstrap_servers)
    name = f"cli-{uuid.uuid4().hex[:8]}"
    ok("topics", "--create", "--topic", name, "--partitions", "3", "--replication-factor", "1",
       "--config", "cleanup.policy=compact", "--config", "retention.ms=60000", *bs)  # fmt: skip
    r = subprocess.run(
        [*CLI, "topics", "--create", "--topic", name, "--partitions", "3", *bs], capture_output=True, text=True
    )
    assert r.returncode == 1 and "already exists" in r.stderr, r.stderr
    assert name in ok("topics", "--list", *bs).split()
    head, *partitions = ok("topics", "--describe", "--topic", name, *bs).splitlines()
    assert head.startswith(f"Topic: {name}\tTopicId: ")
    fields = dict(f.split(": ", 1) for f in head.split("\t"))
    assert (fields["PartitionCount"], fields["ReplicationFactor"]) == ("3", "1")
    # the Configs column lists what Kafka reports as not default, as Kafka's own kafka-topics does (Kafka 3.9
    # reports flush.messages as a static broker config, so it shows there too)
    theirs = run_tool("kafka-topics", *bs, "--describe", "--topic", name).stdout.splitlines()[0]
    assert dict(f.split(": ", 1) for f in theirs.split("\t"))["Configs"] == fields["Configs"]
    assert {"cleanup.policy=compact", "retention.ms=60000"} <= set(fields["Configs"].split(","))
    broker = str(kafka.broker_id)
    assert [p.split("\t") for p in partitions] == [
        ["", f"Topic: {name}", f"Partition: {p}", f"Leader: {broker}", f"Replicas: {broker}", f"Isr: {broker}"]
        for p in range(3)
    ]
    with AdminClient(kafka.bootstrap_servers) as admin:
        topic_id = admin.describe_topics([name])[name].topic_id
    assert fields["TopicId"] == topic_id
    # Kafka prints the same id in its Uuid form (URL-safe base64 of the 16 bytes)
    their_id = dict(f.split(": ", 1) for f in theirs.split("\t"))["TopicId"]
    assert base64.urlsafe_b64decode(their_id + "==") == uuid.UUID(topic_id).bytes
    out = ok("topics", "--alter", "--topic", name, "--partitions", "5", *bs)
    assert "now has 5 partitions" in out
    assert "PartitionCount: 5" in ok("topics", "--describe", "--topic", name, *bs)
    ok("topics", "--delete", "--topic", name, *bs)
    wait_until(lambda: name not in ok("topics", "--list", *bs).split(), 30, "the topic deleted")


def test_produce_then_consume_with_keys_headers_partitions_and_offsets(kafka):
    bs = ("--bootstrap-server", kafka.bootstrap_servers)
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    ok("topics", "--create", "--topic", topic, "--partitions", "2", *bs)
    lines = "".join(f"h{i}:x{i}\tk{i % 4}\tvalue {i}\n" for i in range(20))
    ok("produce", *bs, "--topic", topic, "--property", "parse.headers=true", "--property", "parse.key=true",
       "--compression-codec", "zstd", "--acks", "all", stdin=lines)  # fmt: skip
    out = ok("consume", *bs, "--topic", topic, "--from-beginning", "--max-messages", "20", "--timeout-ms", "60000",
             "--format", "%k\\t%s\\t%p\\t%o\\t%h\\n")  # fmt: skip
    got = [line.split("\t") for line in out.splitlines()]
    assert sorted(int(v.split()[1]) for _, v, _, _, _ in got) == list(range(20))
    for key, value, _, _, headers in got:
        i = int(value.split()[1])
        assert (key, headers) == (f"k{i % 4}", f"h{i}=x{i}")
    # one key, one partition; each partition's offsets 0.. in send order
    assert all(len({p for k, _, p, _, _ in got if k == key}) == 1 for key in {g[0] for g in got})
    for p in ("0", "1"):
        mine = [(int(o), int(v.split()[1])) for _, v, part, o, _ in got if part == p]
        assert [o for o, _ in sorted(mine)] == list(range(len(mine)))
        assert [i for _, i in sorted(mine)] == sorted(i for _, i in mine)
    # read back by kafkalog's client too: the CLI's records as Kafka stored them
    with Consumer(kafka.bootstrap_servers, fetch_max_wait_ms=100) as consumer:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        consumer.seek_to_beginning([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        records: list = []
        wait_until(lambda: records.extend(consumer.poll(200)) or len(records) >= 20, 30, "20 records")
    assert {(r.key, r.value, tuple(r.headers)) for r in records} == {
        (b"k%d" % (i % 4), b"value %d" % i, ((f"h{i}", b"x%d" % i),)) for i in range(20)
    }
    out = ok("consume", *bs, "--topic", topic, "--partition", "1", "--offset", "1", "--max-messages", "2",
             "--property", "print.offset=true", "--property", "print.partition=true")  # fmt: skip
    assert [line.split("\t")[:2] for line in out.splitlines()] == [
        ["Partition:1", "Offset:1"],
        ["Partition:1", "Offset:2"],
    ]
    offsets = ok("offsets", *bs, "--topic", topic)
    per_partition = {p: len([g for g in got if g[2] == p]) for p in ("0", "1")}
    assert offsets == f"{topic}:0:{per_partition['0']}\n{topic}:1:{per_partition['1']}\n"


def test_groups_describe_and_reset_offsets(kafka):
    bootstrap = kafka.bootstrap_servers
    bs = ("--bootstrap-server", bootstrap)
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    ok("topics", "--create", "--topic", topic, "--partitions", "2", *bs)
    with Producer(bootstrap) as producer:  # 6 records in partition 0, 4 in partition 1
        for i in range(10):
            producer.send(topic, b"v%d" % i, partition=int(i >= 6))
    ends = {int(line.rsplit(":", 1)[0].rsplit(":", 1)[1]): int(line.rsplit(":", 1)[1])
            for line in ok("offsets", *bs, "--topic", topic).splitlines()}  # fmt: skip
    assert ends == {0: 6, 1: 4}
    group = f"cli-g-{uuid.uuid4().hex[:6]}"
    with Consumer(bootstrap, group_id=group, enable_auto_commit=False) as c:
        c.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        c.commit({TopicPartition(topic, 0): 1, TopicPartition(topic, 1): 1})
    assert group in ok("groups", "--list", *bs).split()
    described = rows(ok("groups", "--describe", "--group", group, *bs))
    assert described[0][:6] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    assert sorted(r[:6] for r in described[1:]) == [
        [group, topic, str(p), "1", str(ends[p]), str(ends[p] - 1)] for p in (0, 1)
    ]
    state = rows(ok("groups", "--describe", "--group", group, "--state", *bs))
    assert state[1][0] == group and state[1][-2:] == ["Empty", "0"]
    dry = ok("groups", "--reset-offsets", "--group", group, "--topic", f"{topic}:0", "--to-latest", "--dry-run", *bs)
    assert rows(dry) == [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [group, topic, "0", str(ends[0])]]
    with AdminClient(bootstrap) as admin:
        assert {tp.partition: o.offset for tp, o in admin.list_group_offsets(group).items()} == {0: 1, 1: 1}
    ok("groups", "--reset-offsets", "--group", group, "--all-topics", "--to-latest", "--execute", *bs)
    with AdminClient(bootstrap) as admin:
        assert {tp.partition: o.offset for tp, o in admin.list_group_offsets(group).items()} == ends
    ok("groups", "--reset-offsets", "--group", group, "--all-topics", "--shift-by", "-2", "--execute", *bs)
    described = rows(ok("groups", "--describe", "--group", group, *bs))
    assert sorted(r[2:6] for r in described[1:]) == [[str(p), str(ends[p] - 2), str(ends[p]), "2"] for p in (0, 1)]
    ok("groups", "--reset-offsets", "--group", group, "--all-topics", "--to-earliest", "--execute", *bs)
    with AdminClient(bootstrap) as admin:
        assert {tp.partition: o.offset for tp, o in admin.list_group_offsets(group).items()} == {0: 0, 1: 0}
    assert ok("groups", "--delete", "--group", group, *bs) == f"deleted group {group}\n"
    assert group not in ok("groups", "--list", *bs).split()


def test_configs_alter_describe_topic_and_describe_broker(kafka):
    bs = ("--bootstrap-server", kafka.bootstrap_servers)
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    ok("topics", "--create", "--topic", topic, *bs)
    entity = ("--entity-type", "topics", "--entity-name", topic, *bs)
    out = ok("configs", "--alter", *entity, "--add-config", "retention.ms=60000,max.message.bytes=2000")
    assert out == f"Completed updating config for topic {topic}.\n"
    described = ok("configs", "--describe", *entity)
    assert "  retention.ms=60000 sensitive=false" in described and "  max.message.bytes=2000 " in described
    with AdminClient(kafka.bootstrap_servers) as admin:
        configs = admin.describe_configs(topic)
    assert (configs["retention.ms"], configs["max.message.bytes"]) == ("60000", "2000")
    ok("configs", "--alter", *entity, "--delete-config", "max.message.bytes")
    described = ok("configs", "--describe", *entity)
    assert "max.message.bytes" not in described and "retention.ms=60000" in described
    every = ok("configs", "--describe", "--all", *entity)
    assert "  max.message.bytes=1048588 " in every and "  cleanup.policy=delete " in every
    broker = ok("configs", "--describe", "--all", "--broker", str(kafka.broker_id), *bs)
    assert f"  broker.id={kafka.broker_id} " in broker
