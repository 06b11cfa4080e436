"""The project's Consumer as a consumer-group member (subscribe) against in-process brokers: partitions shared
among members, rebalance callbacks, commits with generations, leaving, static membership, patterns,
pause/resume, and a group shared with kafka-python's consumer."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

import pytest

from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.consumer.group_membership import CommitFailedError
from tests.broker.conftest import start_brokers
from tests.waiting import stays_true, wait_until

SESSION_MS = 3000
HEARTBEAT_MS = 300


@pytest.fixture(scope="module")
def brokers(tmp_path_factory):
    bs = start_brokers(
        2,
        tmp_path_factory,
        group_initial_rebalance_delay_ms=0,
        group_min_session_timeout_ms=500,
        offsets_topic_num_partitions=4,
    )
    yield bs
    for b in bs:
        b.stop()


@pytest.fixture()
def bootstrap(brokers) -> str:
    return brokers[0].bootstrap_servers


def new_topic(bootstrap: str, partitions: int, prefix: str = "gc") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return name


def produce(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> None:
    with Producer(bootstrap) as p:
        for i, v in enumerate(values):
            p.send(topic, v, partition=i % partitions)
        p.flush()


def group_consumer(bootstrap: str, group: str, **extra) -> Consumer:
    settings = {
        "group_id": group,
        "auto_offset_reset": "earliest",
        "session_timeout_ms": SESSION_MS,
        "heartbeat_interval_ms": HEARTBEAT_MS,
        "metadata_max_age_ms": 500,
    }
    settings.update(extra)
    return Consumer(bootstrap, **settings)


def subscribed(bootstrap: str, group: str, topic: str, listener=None, **extra) -> Consumer:
    consumer = group_consumer(bootstrap, group, **extra)
    consumer.subscribe([topic], listener=listener)
    return consumer


class Listener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[TopicPartition]]] = []

    def on_partitions_revoked(self, partitions):
        self.calls.append(("revoked", sorted(partitions)))

    def on_partitions_assigned(self, partitions):
        self.calls.append(("assigned", sorted(partitions)))

    def on_partitions_lost(self, partitions):
        self.calls.append(("lost", sorted(partitions)))


class Poller:
    """Polls one consumer on its own thread (JoinGroup waits for the other members), keeping what it read."""

    def __init__(self, consumer: Consumer, *, commit_each_poll: bool = False) -> None:
        self.consumer = consumer
        self.values: list[bytes] = []
        self.commit_each_poll = commit_each_poll
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                records = self.consumer.poll(timeout_ms=100)
                self.values += [r.value for r in records]
                if records and self.commit_each_poll:
                    try:
                        self.consumer.commit()
                    except CommitFailedError:
                        pass  # rebalanced meanwhile; the next poll rejoins
        except BaseException as e:  # reported by the test
            self.error = e

    @property
    def assignment(self) -> set[TopicPartition]:
        return set(self.consumer.assignment())

    def stop(self, close: bool = True) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), "the polling thread did not stop"
        if close:
            self.consumer.close()
        if self.error is not None:
            raise self.error


def _split(pollers: list[Poller], tps: set[TopicPartition]) -> bool:
    shares = [p.assignment for p in pollers]
    return all(shares) and set().union(*shares) == tps and sum(len(s) for s in shares) == len(tps)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
def test_members_share_the_partitions_and_read_each_record_once(bootstrap, strategy):
    topic, group = new_topic(bootstrap, 6), f"g-{uuid.uuid4().hex[:8]}"
    tps = {TopicPartition(topic, p) for p in range(6)}
    produce(bootstrap, topic, [b"v%d" % i for i in range(60)], 6)
    a = Poller(subscribed(bootstrap, group, topic, partition_assignment_strategy=strategy), commit_each_poll=True)
    b = None
    try:
        wait_until(lambda: a.assignment == tps, what="the first member to own every partition")
        b = Poller(subscribed(bootstrap, group, topic, partition_assignment_strategy=strategy), commit_each_poll=True)
        wait_until(lambda: _split([a, b], tps), timeout_s=20, what="two members to split the partitions")
        produce(bootstrap, topic, [b"w%d" % i for i in range(60)], 6)
        wait_until(lambda: len(a.values) + len(b.values) >= 120, timeout_s=20, what="every record")
        stays_true(lambda: len(a.values) + len(b.values) <= 180, 0.5, "at most 60 records read twice")
        read = Counter(a.values + b.values)
        expected = {b"v%d" % i for i in range(60)} | {b"w%d" % i for i in range(60)}
        assert set(read) == expected
        # at least once: a record is read twice only if the rebalance took its partition before the commit
        assert sum(read.values()) - len(expected) <= 60
        assert all(v.startswith(b"v") for v, n in read.items() if n > 1)
    finally:
        a.stop()
        if b is not None:
            b.stop()


@pytest.mark.parametrize(("strategy", "eager"), [("range", True), ("cooperative-sticky", False)])
def test_eager_callbacks_revoke_everything_cooperative_ones_only_what_moves(bootstrap, strategy, eager):
    topic = new_topic(bootstrap, 4)
    tps = {TopicPartition(topic, p) for p in range(4)}
    group = f"g-{uuid.uuid4().hex[:8]}"
    la, lb = Listener(), Listener()
    ca = group_consumer(bootstrap, group, partition_assignment_strategy=strategy)
    ca.subscribe([topic], listener=la)
    a = Poller(ca)
    wait_until(lambda: a.assignment == tps, what="the first member to own every partition")
    cb = group_consumer(bootstrap, group, partition_assignment_strategy=strategy)
    cb.subscribe([topic], listener=lb)
    b = Poller(cb)
    try:
        wait_until(lambda: _split([a, b], tps), timeout_s=20, what="two members to split the partitions")
        stays_true(lambda: _split([a, b], tps), 0.5, "the two members' split")
        kept = a.assignment
        assert la.calls[0] == ("assigned", sorted(tps))
        revoked = [p for kind, ps in la.calls if kind == "revoked" for p in ps]
        if eager:
            assert revoked == sorted(tps)  # everything, before rejoining
        else:
            assert set(revoked) == tps - kept  # only what moved to the new member
            assert not set(revoked) & kept
        assert {kind for kind, _ in lb.calls} == {"assigned"}  # cooperative: an empty share first, then its own
        assert {p for _, ps in lb.calls for p in ps} == b.assignment
    finally:
        b.stop()
        a.stop()
    assert ("revoked", sorted(kept)) in la.calls[-1:], "close revokes what the member owns"


def test_a_member_that_closes_leaves_at_once_and_the_other_takes_over(bootstrap):
    topic, group = new_topic(bootstrap, 4), f"g-{uuid.uuid4().hex[:8]}"
    tps = {TopicPartition(topic, p) for p in range(4)}
    a = Poller(group_consumer(bootstrap, group))
    a.consumer.subscribe([topic])
    b = Poller(group_consumer(bootstrap, group))
    b.consumer.subscribe([topic])
    try:
        wait_until(lambda: _split([a, b], tps), timeout_s=20, what="two members to split the partitions")
        started = time.monotonic()
        b.stop()
        wait_until(lambda: a.assignment == tps, timeout_s=20, what="the remaining member to own every partition")
        assert time.monotonic() - started < SESSION_MS / 1000, "LeaveGroup, not the session timeout, rebalanced"
    finally:
        a.stop()


def test_commit_as_member_and_commit_failed_after_the_poll_interval_expired(bootstrap):
    topic, group = new_topic(bootstrap, 2), f"g-{uuid.uuid4().hex[:8]}"
    tps = [TopicPartition(topic, p) for p in range(2)]
    produce(bootstrap, topic, [b"x%d" % i for i in range(10)], 2)
    listener = Listener()
    c = group_consumer(bootstrap, group, enable_auto_commit=False, max_poll_interval_ms=1500)
    try:
        c.subscribe([topic], listener=listener)
        got: list = []
        wait_until(lambda: got.extend(c.poll(timeout_ms=200)) or len(got) >= 10, what="the records")
        c.commit()
        assert {tp: om.offset for tp, om in c.committed(tps).items()} == dict.fromkeys(tps, 5)
        with AdminClient(bootstrap) as admin:
            (member,) = admin.describe_groups([group])[group].members
            assert member.member_id
            # no poll for longer than max.poll.interval.ms: the heartbeat thread leaves the group
            wait_until(lambda: not admin.describe_groups([group])[group].members, 10, "the member to leave the group")
        with pytest.raises(CommitFailedError, match="rebalanc"):
            c.commit({tps[0]: 1})
        assert {tp: om.offset for tp, om in c.committed(tps).items()} == dict.fromkeys(tps, 5)
        wait_until(lambda: c.poll(timeout_ms=200) is not None and set(c.assignment()) == set(tps), what="rejoin")
        assert ("lost", sorted(tps)) in listener.calls  # the partitions were lost, not revoked
        c.commit({tps[0]: 3})
        assert c.committed([tps[0]])[tps[0]].offset == 3
    finally:
        c.close()


def test_static_member_keeps_its_partitions_across_a_restart(bootstrap):
    topic, group = new_topic(bootstrap, 4), f"g-{uuid.uuid4().hex[:8]}"
    tps = {TopicPartition(topic, p) for p in range(4)}
    listener = Listener()
    a = Poller(group_consumer(bootstrap, group, group_instance_id="a"))
    a.consumer.subscribe([topic], listener=listener)
    b = Poller(group_consumer(bootstrap, group, group_instance_id="b"))
    b.consumer.subscribe([topic])
    try:
        wait_until(lambda: _split([a, b], tps), timeout_s=20, what="two members to split the partitions")
        stays_true(lambda: _split([a, b], tps), 0.5, "the two members' split")
        owned_by_b, calls_before = b.assignment, list(listener.calls)
        b.stop()  # a static member sends no LeaveGroup: the coordinator keeps it until its session expires
        with AdminClient(bootstrap) as admin:
            description = admin.describe_groups([group])[group]
        assert {m.group_instance_id for m in description.members} == {"a", "b"}
        b = Poller(group_consumer(bootstrap, group, group_instance_id="b"))
        b.consumer.subscribe([topic])
        wait_until(lambda: b.assignment == owned_by_b, timeout_s=10, what="b to get its partitions back")
        stays_true(
            lambda: a.assignment == tps - owned_by_b and listener.calls == calls_before,
            HEARTBEAT_MS * 3 / 1000,
            "a's partitions, without a rebalance",
        )
        assert a.assignment == tps - owned_by_b
        assert listener.calls == calls_before, "the other member saw no rebalance"
    finally:
        a.stop()
        b.stop()


def test_a_pattern_subscription_picks_up_a_topic_created_later(bootstrap):
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    first = new_topic(bootstrap, 2, prefix)
    new_topic(bootstrap, 1, "other")
    c = group_consumer(bootstrap, f"g-{uuid.uuid4().hex[:8]}")
    c.subscribe(pattern=f"{prefix}-.*")
    p = Poller(c)
    try:
        wait_until(lambda: p.assignment == {TopicPartition(first, 0), TopicPartition(first, 1)}, what="first")
        second = new_topic(bootstrap, 1, prefix)
        produce(bootstrap, second, [b"late"], 1)
        wait_until(lambda: TopicPartition(second, 0) in p.assignment, timeout_s=20, what="the new topic")
        wait_until(lambda: b"late" in p.values, what="its record")
        assert c.subscription() == {first, second}
    finally:
        p.stop()


def test_pause_stops_fetching_a_partition_without_leaving_the_group(bootstrap):
    topic, group = new_topic(bootstrap, 2), f"g-{uuid.uuid4().hex[:8]}"
    produce(bootstrap, topic, [b"p%d" % i for i in range(10)], 2)
    c = group_consumer(bootstrap, group)
    try:
        c.subscribe(topic)
        wait_until(lambda: c.poll(timeout_ms=100) is not None and len(c.assignment()) == 2, what="assignment")
        paused = TopicPartition(topic, 0)
        c.seek_to_beginning()
        c.pause([paused])
        assert c.paused() == {paused}
        got = []
        for _ in range(10):
            got += c.poll(timeout_ms=100)
        assert {r.partition for r in got} == {1} and len(got) == 5
        c.resume([paused])
        wait_until(lambda: got.extend(c.poll(timeout_ms=100)) or len(got) >= 10, what="the paused records")
        assert sorted(r.value for r in got) == sorted(b"p%d" % i for i in range(10))
    finally:
        c.close()


def test_subscribe_and_assign_are_mutually_exclusive_and_subscribe_needs_a_group(bootstrap):
    topic = new_topic(bootstrap, 1)
    with Consumer(bootstrap) as c, pytest.raises(Exception, match="group.id"):
        c.subscribe([topic])
    with group_consumer(bootstrap, f"g-{uuid.uuid4().hex[:8]}") as c:
        c.subscribe([topic])
        with pytest.raises(Exception, match="mutually exclusive"):
            c.assign([TopicPartition(topic, 0)])
        c.unsubscribe()
        c.assign([TopicPartition(topic, 0)])
        with pytest.raises(Exception, match="mutually exclusive"):
            c.subscribe([topic])


def test_a_group_shared_with_kafka_python(bootstrap):
    kafka = pytest.importorskip("kafka")
    topic, group = new_topic(bootstrap, 4), f"g-{uuid.uuid4().hex[:8]}"
    tps = {TopicPartition(topic, p) for p in range(4)}
    ours = Poller(group_consumer(bootstrap, group, partition_assignment_strategy="range"))
    ours.consumer.subscribe([topic])
    theirs = kafka.KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        session_timeout_ms=SESSION_MS,
        heartbeat_interval_ms=HEARTBEAT_MS,
        auto_offset_reset="earliest",
    )
    stop = threading.Event()
    their_share: set = set()

    def run():
        while not stop.is_set():
            theirs.poll(timeout_ms=100)
            their_share.clear()
            their_share.update(TopicPartition(tp.topic, tp.partition) for tp in theirs.assignment())

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        wait_until(
            lambda: (
                their_share
                and ours.assignment
                and (their_share | ours.assignment) == tps
                and not their_share & ours.assignment
            ),
            timeout_s=30,
            what="our consumer and kafka-python's to split the partitions",
        )
    finally:
        stop.set()
        t.join(timeout=10)
        theirs.close()
        ours.stop()


def test_offsets_storage_migration_from_zookeeper_to_kafka_and_back(bootstrap):
    """The seeds' steps: zookeeper storage -> (offsets.storage=kafka, dual.commit.enabled=true) ->
    (dual.commit.enabled=false); and the roll-back with offsets.storage=zookeeper. No record is read twice."""
    topic, group = new_topic(bootstrap, 1), f"g-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    produce(bootstrap, topic, [b"m%d" % i for i in range(40)], 1)
    seen: list[bytes] = []

    def consume_ten(**storage) -> None:
        with Consumer(bootstrap, group_id=group, auto_offset_reset="earliest", **storage) as c:
            c.assign([tp])
            got: list = []
            while len(got) < 10:
                got += c.poll(timeout_ms=200, max_records=10 - len(got))
            seen.extend(r.value for r in got)
            c.commit()

    with AdminClient(bootstrap) as admin:
        zk = lambda: admin._groups.list_group_offsets(group, [tp], storage="zookeeper").get(tp)  # noqa: E731
        kafka = lambda: admin.list_group_offsets(group, [tp]).get(tp)  # noqa: E731
        consume_ten(offsets_storage="zookeeper")
        assert (zk().offset, kafka()) == (10, None)  # only in ZooKeeper
        consume_ten(offsets_storage="kafka", dual_commit_enabled=True)  # starts from ZooKeeper's (the larger)
        assert (zk().offset, kafka().offset) == (20, 20)
        consume_ten(offsets_storage="kafka")
        assert (zk().offset, kafka().offset) == (20, 30)
        # roll-back: dual commit, then ZooKeeper only
        consume_ten(offsets_storage="zookeeper", dual_commit_enabled=True)
        assert (zk().offset, kafka().offset) == (40, 40)
    assert seen == [b"m%d" % i for i in range(40)]


def test_kafka_python_and_confluent_with_a_group_id_and_manual_assignment_fetch_and_commit(bootstrap):
    """The issue's first symptom: kafka-python with a group_id did not even fetch with assign()."""
    kafka = pytest.importorskip("kafka")
    confluent = pytest.importorskip("confluent_kafka")
    topic, group = new_topic(bootstrap, 2), f"g-{uuid.uuid4().hex[:8]}"
    produce(bootstrap, topic, [b"k%d" % i for i in range(10)], 2)
    kp = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest")
    try:
        kp.assign([kafka.TopicPartition(topic, 0), kafka.TopicPartition(topic, 1)])
        got: list = []

        def kafka_python_read_ten() -> bool:
            for records in kp.poll(timeout_ms=200).values():
                got.extend(r.value for r in records)
            return len(got) >= 10

        wait_until(kafka_python_read_ten, 20, "kafka-python to read the 10 records")
        assert sorted(got) == sorted(b"k%d" % i for i in range(10))
        kp.commit()
    finally:
        kp.close()
    with AdminClient(bootstrap) as admin:
        assert {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()} == {0: 5, 1: 5}
    produce(bootstrap, topic, [b"m%d" % i for i in range(4)], 2)
    cc = confluent.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        cc.assign([confluent.TopicPartition(topic, 0), confluent.TopicPartition(topic, 1)])  # from the committed
        got = []

        def confluent_read_four() -> bool:
            msg = cc.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
            return len(got) >= 4

        wait_until(confluent_read_four, 20, "confluent-kafka to read the 4 new records")
        assert sorted(got) == [b"m0", b"m1", b"m2", b"m3"]
        cc.commit(asynchronous=False)
    finally:
        cc.close()
    with AdminClient(bootstrap) as admin:
        assert {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()} == {0: 7, 1: 7}
