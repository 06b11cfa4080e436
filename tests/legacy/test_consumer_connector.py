"""Kafka 0.8's ZooKeeper-coordinated ConsumerConnector against the session's real ZooKeeper (one chroot for
this module) and in-process brokers: the znodes of design section 5.6, the range split over three connectors
and its rebalances (join, session expiry, death, broker leaving), topic filters picking up new topics, and
offsets surviving restarts in every storage mode and across the seeds' migration steps (and back).
Records are produced with kafka-python."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

import pytest
from kafka import KafkaProducer
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from spark_kafkalog.client import TopicPartition
from spark_kafkalog.client.errors import ConfigError
from spark_kafkalog.legacy import (
    Blacklist,
    ConsumerConfig,
    ConsumerConnector,
    ConsumerTimeoutException,
    MessageAndMetadata,
    Whitelist,
)
from spark_kafkalog.legacy.consumer_connector import ConsumerRebalanceFailedException

from ..waiting import stays_true, wait_until

pytestmark = pytest.mark.integration

SETTINGS = {"group_initial_rebalance_delay_ms": 0, "offsets_topic_num_partitions": 1}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def chroot() -> str:
    return f"/legacy-connector-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def connect(zookeeper, chroot) -> str:
    return zookeeper.connect_string + chroot


@pytest.fixture(scope="module")
def brokers(connect, tmp_path_factory):
    started = [
        EmbeddedBroker(i, zookeeper_connect=connect, log_dir=tmp_path_factory.mktemp(f"b{i}"), **SETTINGS).start()
        for i in range(2)
    ]
    yield started
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def zk(connect, brokers):
    client = KazooClient(hosts=connect, timeout=10)
    client.start(10)
    yield client
    client.stop()
    client.close()


@pytest.fixture(scope="module")
def producer(brokers):
    p = KafkaProducer(bootstrap_servers=brokers[0].bootstrap_servers, acks=1, linger_ms=1)
    yield p
    p.close()


def create_topic(brokers, partitions: int, replication: int = 1, assignments=None, name: str | None = None) -> str:
    name = name or f"t-{uuid.uuid4().hex[:8]}"
    b = brokers[0]
    if assignments:
        b.call(lambda: b.broker.topic_admin.create_topic(name, assignments=assignments))
    else:
        b.call(lambda: b.broker.topic_admin.create_topic(name, partitions, replication))
    wait_until(
        lambda: all(s.call(lambda s=s: s.broker.topic_admin.has_leaders(name, partitions)) for s in brokers),
        20,
        f"leaders of {name}",
    )
    return name


def produce(producer, topic: str, partitions: int, per_partition: int, tag: str = "m") -> set[bytes]:
    sent = set()
    for p in range(partitions):
        for i in range(per_partition):
            value = f"{tag}-{p}-{i}".encode()
            producer.send(topic, key=b"k%d" % i, value=value, partition=p)
            sent.add(value)
    producer.flush(30)
    return sent


def connector(connect: str, group: str, name: str, **overrides) -> ConsumerConnector:
    props = {
        "zookeeper.connect": connect,
        "group.id": group,
        "consumer.id": name,
        "auto.offset.reset": "smallest",
        "auto.commit.enable": "false",
        "consumer.timeout.ms": 100,
        "fetch.wait.max.ms": 50,
        "rebalance.backoff.ms": 200,
        "rebalance.max.retries": 50,
        "zookeeper.session.timeout.ms": 2000,
    }
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return ConsumerConnector(props)


def read_round(streams, messages: list[MessageAndMetadata]) -> bool:
    """One message from each stream that has one within ``consumer.timeout.ms``; whether any came."""
    got = False
    for s in streams:
        try:
            messages.append(next(s))
            got = True
        except ConsumerTimeoutException:
            pass
    return got


def drain(streams, messages: list[MessageAndMetadata], want: int, limit_s: float = 20) -> list[MessageAndMetadata]:
    """Read every stream until ``want`` messages arrived in total."""

    def enough() -> bool:
        read_round(streams, messages)
        return len(messages) >= want

    wait_until(enough, limit_s, f"{want} messages")
    return messages


def no_more(streams, messages: list[MessageAndMetadata], idle_s: float = 0.5) -> None:
    """Nothing more arrives on ``streams`` for ``idle_s`` seconds."""
    stays_true(lambda: not read_round(streams, messages), idle_s, f"no message beyond the {len(messages)} read")


def owned_by(group_connectors) -> dict[str, list[int]]:
    return {c.consumer_id: sorted(tp.partition for tp in c.owned_partitions()) for c in group_connectors}


def expire_session(connect: str, c: ConsumerConnector) -> None:
    """Expire the connector's ZooKeeper session: a second client on the same session id closes it."""
    session_id, password = c._registry.zk.client_id
    other = KazooClient(hosts=connect, client_id=(session_id, password), timeout=10)
    other.start(10)
    other.stop()
    other.close()


def test_unknown_and_missing_settings_are_named():
    with pytest.raises(ConfigError, match="'fetch.size'"):
        ConsumerConfig({"zookeeper.connect": "x", "group.id": "g", "fetch.size": 1})
    with pytest.raises(ConfigError, match="'group.id' is required"):
        ConsumerConfig({"zookeeper.connect": "x"})
    cfg = ConsumerConfig({"zookeeper.connect": "x", "group.id": "g", "offsets.storage": "kafka"})
    assert cfg.dual_commit_enabled is True  # 0.8.2's default with kafka storage
    assert ConsumerConfig({"zookeeper.connect": "x", "group.id": "g"}).dual_commit_enabled is False
    assert cfg.consumer_id_string().startswith("g_")


def test_znodes_follow_the_seeds_layout(connect, brokers, zk, producer):
    topic = create_topic(brokers, 2)
    sent = produce(producer, topic, 2, 5)
    group = f"g-{uuid.uuid4().hex[:6]}"
    c = connector(connect, group, "alpha")
    try:
        streams = c.create_message_streams({topic: 2})[topic]
        assert c.consumer_id == f"{group}_alpha"
        data, stat = zk.get(f"/consumers/{group}/ids/{group}_alpha")
        reg = json.loads(data)
        assert reg["version"] == 1 and reg["subscription"] == {topic: 2} and reg["pattern"] == "static"
        assert reg["timestamp"].isdigit() and abs(int(reg["timestamp"]) / 1000 - time.time()) < 60
        assert stat.ephemeralOwner != 0
        for p in range(2):
            owner, ostat = zk.get(f"/consumers/{group}/owners/{topic}/{p}")
            assert owner.decode() == f"{group}_alpha-{p}" and ostat.ephemeralOwner != 0
        # each partition goes to one stream: stream i reads partition i (thread alpha-i)
        got = []
        for i, stream in enumerate(streams):
            mine = drain([stream], [], want=5)
            assert {(m.topic, m.partition) for m in mine} == {(topic, i)}
            assert [m.offset for m in mine] == list(range(5))
            got += mine
        assert {m.message for m in got} == sent
        c.commit_offsets()
        for p in range(2):
            value, ostat = zk.get(f"/consumers/{group}/offsets/{topic}/{p}")
            assert value == b"5" and ostat.ephemeralOwner == 0
    finally:
        c.shutdown()
    assert zk.exists(f"/consumers/{group}/ids/{group}_alpha") is None
    assert zk.get_children(f"/consumers/{group}/owners/{topic}") == []
    with pytest.raises(StopIteration):
        next(streams[0])


def test_three_connectors_split_the_range_and_rebalance_on_join_and_session_expiry(connect, brokers, zk, producer):
    topic = create_topic(brokers, 6)
    sent = produce(producer, topic, 6, 10)
    group = f"g-{uuid.uuid4().hex[:6]}"
    cs: list[ConsumerConnector] = []
    streams = []
    try:
        for name in ("c1", "c2", "c3"):
            c = connector(connect, group, name)
            streams += c.create_message_streams({topic: 1})[topic]
            cs.append(c)
            if name == "c1":
                assert owned_by(cs) == {f"{group}_c1": [0, 1, 2, 3, 4, 5]}
            if name == "c2":
                wait_until(
                    lambda: owned_by(cs) == {f"{group}_c1": [0, 1, 2], f"{group}_c2": [3, 4, 5]}, 30, "the split in two"
                )
        expected = {f"{group}_c1": [0, 1], f"{group}_c2": [2, 3], f"{group}_c3": [4, 5]}
        wait_until(lambda: owned_by(cs) == expected, 30, "the split in three")
        for c in cs:
            for tp, thread in c.owned_partitions().items():
                assert zk.get(f"/consumers/{group}/owners/{topic}/{tp.partition}")[0].decode() == thread
        got = drain(streams, [], want=len(sent))
        assert Counter(m.message for m in got) == Counter(sent)  # no partition read by two connectors
        by_consumer = {
            c.consumer_id: {(m.partition) for m in got if m.partition in expected[c.consumer_id]} for c in cs
        }
        assert by_consumer == {k: set(v) for k, v in expected.items()}

        # c3's session expires: its znodes vanish, it registers again with a new session, all rebalance back
        c1, c2, c3 = cs
        ids_node = f"/consumers/{group}/ids/{c3.consumer_id}"
        old_session = zk.exists(ids_node).ephemeralOwner
        before = c1.rebalance_count
        expire_session(connect, c3)
        wait_until(
            lambda: (zk.exists(ids_node) or None) and zk.exists(ids_node).ephemeralOwner != old_session,
            30,
            "c3's registration under a new session",
        )
        wait_until(lambda: c1.rebalance_count > before and owned_by(cs) == expected, 30, "the split in three again")
        assert zk.get(f"/consumers/{group}/owners/{topic}/4")[0].decode() == f"{c3.consumer_id}-0"
    finally:
        for c in cs:
            c.shutdown()


KILLED_CONSUMER = """
import sys, time
from spark_kafkalog.legacy import ConsumerConnector
c = ConsumerConnector({"zookeeper.connect": sys.argv[1], "group.id": sys.argv[2], "consumer.id": "c3",
                       "auto.commit.enable": "false", "rebalance.backoff.ms": 200, "rebalance.max.retries": 50,
                       "zookeeper.session.timeout.ms": 2000})
c.create_message_streams({sys.argv[3]: 1})
print("ready", flush=True)
time.sleep(600)
"""


def test_a_killed_connector_is_rebalanced_away_when_its_session_expires(connect, brokers, zk):
    topic = create_topic(brokers, 6)
    group = f"g-{uuid.uuid4().hex[:6]}"
    cs = [connector(connect, group, name) for name in ("c1", "c2")]
    for c in cs:
        c.create_message_streams({topic: 1})
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_CONSUMER, connect, group, topic], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        wait_until(
            lambda: (
                owned_by(cs) == {f"{group}_c1": [0, 1], f"{group}_c2": [2, 3]}
                and zk.get_children(f"/consumers/{group}/owners/{topic}") == [str(p) for p in range(6)]
            ),
            30,
            "the split in three with a connector in another process",
        )
        assert zk.get(f"/consumers/{group}/owners/{topic}/5")[0] == f"{group}_c3-0".encode()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        wait_until(
            lambda: owned_by(cs) == {f"{group}_c1": [0, 1, 2], f"{group}_c2": [3, 4, 5]},
            30,
            "the survivors' split after c3's session expired",
        )
        assert sorted(zk.get_children(f"/consumers/{group}/ids")) == [f"{group}_c1", f"{group}_c2"]
    finally:
        proc.kill()
        proc.wait(10)
        for c in cs:
            c.shutdown()


def test_a_whitelist_picks_up_a_topic_created_later(connect, brokers, zk, producer):
    prefix = f"wl{uuid.uuid4().hex[:6]}"
    first = create_topic(brokers, 2, name=f"{prefix}-a")
    other = create_topic(brokers, 1, name=f"x{prefix}")
    sent = produce(producer, first, 2, 3, "a")
    produce(producer, other, 1, 3, "other")
    group = f"g-{uuid.uuid4().hex[:6]}"
    c = connector(connect, group, "w")
    try:
        streams = c.create_message_streams_by_filter(Whitelist(f"{prefix}-.*"), 2)
        reg = json.loads(zk.get(f"/consumers/{group}/ids/{group}_w")[0])
        assert reg["subscription"] == {f"{prefix}-.*": 2} and reg["pattern"] == "white_list"
        got = drain(streams, [], want=6)
        c.commit_offsets()  # auto commit is off: the rebalance for the new topic restarts from the commits
        second = create_topic(brokers, 2, name=f"{prefix}-b")
        wait_until(lambda: any(tp.topic == second for tp in c.owned_partitions()), 30, "the new topic's partitions")
        sent |= produce(producer, second, 2, 3, "b")
        drain(streams, got, want=12)
        no_more(streams, got)  # the other topic is not allowed
        assert Counter(m.message for m in got) == Counter(sent)
        assert {m.topic for m in got} == {first, second}
        # thread i of every allowed topic feeds stream i
        assert c.owned_partitions() == {TopicPartition(t, p): f"{group}_w-{p}" for t in (first, second) for p in (0, 1)}
        # a blacklist consumer allowing the same topics joins: threads v-0, w-0, w-1 split each topic's two partitions
        v = connector(connect, group, "v")
        try:
            v.create_message_streams_by_filter(Blacklist(f"(?!{prefix}-).*"), 1)
            reg = json.loads(zk.get(f"/consumers/{group}/ids/{group}_v")[0])
            assert reg["subscription"] == {f"(?!{prefix}-).*": 1} and reg["pattern"] == "black_list"
            wait_until(
                lambda: (
                    v.owned_partitions() == {TopicPartition(t, 0): f"{group}_v-0" for t in (first, second)}
                    and c.owned_partitions() == {TopicPartition(t, 1): f"{group}_w-0" for t in (first, second)}
                ),
                30,
                "the split between the blacklist and the whitelist consumer",
            )
        finally:
            v.shutdown()
    finally:
        c.shutdown()


def test_a_static_subscription_waits_for_its_topic(connect, brokers, producer):
    group = f"g-{uuid.uuid4().hex[:6]}"
    name = f"late-{uuid.uuid4().hex[:6]}"
    c = connector(connect, group, "s")
    try:
        streams = c.create_message_streams({name: 1})[name]
        assert c.owned_partitions() == {}
        with pytest.raises(ConsumerTimeoutException):
            next(streams[0])
        create_topic(brokers, 2, name=name)
        wait_until(lambda: len(c.owned_partitions()) == 2, 30, "the partitions of the topic created later")
        sent = produce(producer, name, 2, 3)
        assert {m.message for m in drain(streams, [], want=6)} == sent
    finally:
        c.shutdown()


def test_a_partition_still_owned_elsewhere_is_claimed_once_released(connect, brokers, zk):
    topic = create_topic(brokers, 1)
    group = f"g-{uuid.uuid4().hex[:6]}"
    # a consumer that registered no ids node (e.g. one that is still giving up its partitions) owns partition 0
    zk.create(f"/consumers/{group}/owners/{topic}/0", b"someone-0", ephemeral=True, makepath=True)
    x = connector(connect, group, "x", rebalance_max_retries=2, rebalance_backoff_ms=50)
    try:
        with pytest.raises(ConsumerRebalanceFailedException, match="rebalance.max.retries"):
            x.create_message_streams({topic: 1})
    finally:
        x.shutdown()
    assert zk.get_children(f"/consumers/{group}/ids") == []
    c = connector(connect, group, "y")
    try:
        threading.Timer(0.5, zk.delete, [f"/consumers/{group}/owners/{topic}/0"]).start()
        c.create_message_streams({topic: 1})  # retries every rebalance.backoff.ms until the owner let go
        assert zk.get(f"/consumers/{group}/owners/{topic}/0")[0] == f"{group}_y-0".encode()
        assert c.owned_partitions() == {TopicPartition(topic, 0): f"{group}_y-0"}
    finally:
        c.shutdown()


def kafka_offsets(brokers, group: str, topic: str, partitions: int) -> dict[int, int]:
    from spark_kafkalog.client import KafkaClient
    from spark_kafkalog.client.admin.group_admin import GroupAdmin

    with KafkaClient(brokers[0].bootstrap_servers) as client:
        found = GroupAdmin(client).list_group_offsets(group, [TopicPartition(topic, p) for p in range(partitions)])
    return {tp.partition: om.offset for tp, om in found.items()}


def zk_offsets(zk, group: str, topic: str) -> dict[int, int]:
    path = f"/consumers/{group}/offsets/{topic}"
    if not zk.exists(path):
        return {}
    return {int(p): int(zk.get(f"{path}/{p}")[0]) for p in zk.get_children(path)}


@pytest.mark.parametrize(
    ("storage", "dual", "in_zookeeper", "in_kafka"),
    [("zookeeper", "false", True, False), ("kafka", "false", False, True), ("kafka", "true", True, True)],
)
def test_offsets_survive_a_restart(connect, brokers, zk, producer, storage, dual, in_zookeeper, in_kafka):
    topic = create_topic(brokers, 2)
    sent = produce(producer, topic, 2, 10, "a")
    group = f"g-{uuid.uuid4().hex[:6]}"
    settings = {"offsets.storage": storage, "dual.commit.enabled": dual, "auto.commit.enable": "true"}
    c = connector(connect, group, "r1", **settings)
    got = drain(c.create_message_streams({topic: 1})[topic], [], want=7)
    c.shutdown()  # commits what was handed out
    per_partition = Counter(m.partition for m in got)
    expected = {p: per_partition.get(p, 0) for p in range(2)}  # an untouched partition commits its reset offset
    assert (zk_offsets(zk, group, topic) == expected) is in_zookeeper
    assert (kafka_offsets(brokers, group, topic, 2) == expected) is in_kafka
    sent |= produce(producer, topic, 2, 5, "b")
    c = connector(connect, group, "r2", **settings)
    try:
        streams = c.create_message_streams({topic: 1})[topic]
        drain(streams, got, want=len(sent))
        no_more(streams, got)
    finally:
        c.shutdown()
    assert Counter(m.message for m in got) == Counter(sent)


def test_migration_to_kafka_and_back_reads_everything_once(connect, brokers, zk, producer):
    topic = create_topic(brokers, 2)
    group = f"g-{uuid.uuid4().hex[:6]}"
    steps = [
        ("zookeeper", "false"),
        ("kafka", "true"),
        ("kafka", "false"),
        ("zookeeper", "true"),
        ("zookeeper", "false"),
    ]
    sent: set[bytes] = set()
    got: list[MessageAndMetadata] = []
    for i, (storage, dual) in enumerate(steps):
        sent |= produce(producer, topic, 2, 4, f"step{i}")
        # a rolling bounce of one consumer: the new config starts where the last one stopped
        c = connector(
            connect, group, f"m{i}", offsets_storage=storage, dual_commit_enabled=dual, auto_commit_enable="true"
        )
        try:
            streams = c.create_message_streams({topic: 1})[topic]
            drain(streams, got, want=len(sent))
            no_more(streams, got)
        finally:
            c.shutdown()
        assert Counter(m.message for m in got) == Counter(sent), f"after step {i}: {storage} dual={dual}"
    assert zk_offsets(zk, group, topic) == {0: 20, 1: 20}
    assert kafka_offsets(brokers, group, topic, 2) == {0: 16, 1: 16}  # kafka stopped at the last dual step


def test_a_broker_leaving_rebalances_and_consumption_goes_on(connect, brokers, zk, producer, tmp_path):
    extra = EmbeddedBroker(2, zookeeper_connect=connect, log_dir=tmp_path / "b2", **SETTINGS).start()
    stopped = False
    try:
        b0 = brokers[0]
        wait_until(lambda: b0.call(lambda: 2 in b0.broker.topic_admin.metadata.brokers), 30, "broker 0 seeing broker 2")
        topic = create_topic([*brokers, extra], 2, 2, assignments={0: [2, 0], 1: [2, 1]})
        sent = produce(producer, topic, 2, 5, "before")
        group = f"g-{uuid.uuid4().hex[:6]}"
        c = connector(connect, group, "b", auto_commit_enable="true")
        try:
            streams = c.create_message_streams({topic: 1})[topic]
            got = drain(streams, [], want=10)
            before = c.rebalance_count
            extra.stop()
            stopped = True
            wait_until(lambda: c.rebalance_count > before, 30, "a rebalance after broker 2 left")
            sent |= produce(producer, topic, 2, 5, "after")
            drain(streams, got, want=20, limit_s=60)
            no_more(streams, got)
            assert Counter(m.message for m in got) == Counter(sent)
        finally:
            c.shutdown()
    finally:
        if not stopped:
            extra.stop()


@pytest.mark.parametrize(("api_version", "compression"), [((0, 9), None), ((0, 10), "gzip"), ((0, 10), None)])
def test_old_message_formats_are_consumed(connect, brokers, api_version, compression):
    """kafka-python as a 0.9 client writes v0 message sets (magic 0), as a 0.10 client v1 (magic 1)."""
    topic = create_topic(brokers, 1)
    old = KafkaProducer(
        bootstrap_servers=brokers[0].bootstrap_servers, api_version=api_version, compression_type=compression
    )
    try:
        for i in range(6):
            old.send(topic, key=b"k%d" % i, value=b"old-%d" % i)
        old.flush(30)
    finally:
        old.close()
    c = connector(connect, f"g-{uuid.uuid4().hex[:6]}", "old")
    try:
        got = drain(c.create_message_streams({topic: 1})[topic], [], want=6)
    finally:
        c.shutdown()
    assert [(m.key, m.message, m.offset) for m in got] == [(b"k%d" % i, b"old-%d" % i, i) for i in range(6)]


def test_consumers_joining_and_leaving_under_load_read_every_message_once(connect, brokers, producer):
    """With auto commit, a rebalance commits what was handed out before the partition moves: no loss, no repeat."""
    topic = create_topic(brokers, 4)
    group = f"g-{uuid.uuid4().hex[:6]}"
    got: list[MessageAndMetadata] = []
    stop = threading.Event()
    readers: list[threading.Thread] = []

    def read(stream):
        while not stop.is_set():
            try:
                got.append(next(stream))
            except ConsumerTimeoutException:
                continue
            except StopIteration:
                return

    def start(name: str) -> ConsumerConnector:
        c = connector(connect, group, name, auto_commit_enable="true", auto_commit_interval_ms=200)
        for stream in c.create_message_streams({topic: 2})[topic]:
            readers.append(threading.Thread(target=read, args=(stream,), daemon=True))
            readers[-1].start()
        return c

    sent: set[bytes] = set()
    cs = [start("a")]
    try:
        for round_ in range(6):
            sent |= produce(producer, topic, 4, 10, f"r{round_}")
            if round_ == 1:
                cs.append(start("b"))
            if round_ == 2:
                cs.append(start("c"))
            if round_ == 4:
                cs.pop(0).shutdown()  # "a" leaves
            time.sleep(0.2)
        wait_until(lambda: len(got) >= len(sent), 60, f"{len(sent)} messages")
        stays_true(lambda: len(got) <= len(sent), 0.5, f"no more than the {len(sent)} messages")
    finally:
        for c in cs:
            c.shutdown()
        stop.set()
        for t in readers:
            t.join(10)
    assert Counter(m.message for m in got) == Counter(sent)
