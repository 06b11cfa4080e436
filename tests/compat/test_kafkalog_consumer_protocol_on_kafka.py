"""kafkalog's Consumer with ``group_protocol="consumer"`` (KIP-848) against Apache Kafka 4.4 (KRaft, where the consumer
protocol is on by default; heartbeat interval 500 ms so that rebalances take a heartbeat or two): two members share a
topic's partitions and every record is read once, one closes and the other gets all of them, the commits are what
Kafka's kafka-consumer-groups tool shows; a regex subscription picks up a topic created later; a static member's
leave (epoch -2) keeps its assignment for its return. Against Kafka 3.9 (no ConsumerGroupHeartbeat) poll fails
naming ``group_protocol="classic"``.
"""

from __future__ import annotations

import time
import uuid

import pytest

from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from spark_kafkalog.client.consumer import UnsupportedGroupProtocolError
from tests.client.consumer.polling_member import PollingMember, is_split
from tests.waiting import wait_until

from .kafka_broker import KafkaBroker
from .peers import KAFKA_44
from .tools import run_tool

pytestmark = pytest.mark.compat

FAST_GROUPS = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "6000",
}


@pytest.fixture(scope="module")
def kafka44(tmp_path_factory):
    broker = KafkaBroker(KAFKA_44, tmp_path_factory.mktemp("kafka44-kip848"), extra=FAST_GROUPS)
    broker.start()
    yield broker
    broker.stop()


def make_topic(bootstrap: str, name: str, partitions: int) -> list[TopicPartition]:
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    return [TopicPartition(name, p) for p in range(partitions)]


def produce(bootstrap: str, topic: str, partitions: int, start: int, n: int) -> None:
    with Producer(bootstrap) as producer:
        for i in range(start, start + n):
            producer.send(topic, b"r%d" % i, partition=i % partitions)
        producer.flush(30)


def test_two_members_share_the_partitions_and_the_survivor_gets_all_with_commits_kafka_shows(kafka44):
    bootstrap = kafka44.bootstrap_servers
    topic, group = f"kip848-{uuid.uuid4().hex[:8]}", f"kl-{uuid.uuid4().hex[:8]}"
    tps = set(make_topic(bootstrap, topic, 4))
    produce(bootstrap, topic, 4, 0, 40)
    a = PollingMember(bootstrap, group, (topic,), auto_commit_interval_ms=200)
    b = PollingMember(bootstrap, group, (topic,), auto_commit_interval_ms=200)
    members = [a, b]
    try:
        wait_until(lambda: is_split(members, tps), 30, "both members owning a share of the 4 partitions")
        wait_until(lambda: len(a.read()) + len(b.read()) >= 40, 30, "the 40 records read")
        assert a.epoch > 0 and b.epoch > 0 and a.member_id != b.member_id
        b.stop()
        members.remove(b)
        assert b.events[-1][0] == "revoked" and set(b.events[-1][1]) == b.snapshot()  # revoked on close
        wait_until(lambda: a.snapshot() == tps, 30, "the remaining member owning every partition")
        produce(bootstrap, topic, 4, 40, 20)
        wait_until(lambda: len(a.read()) + len(b.read()) >= 60, 30, "the 20 later records read")
        values = sorted(int(v[1:]) for *_, v in a.read() + b.read())
        assert values == list(range(60))  # each record once: revocation committed before reassignment
        with AdminClient(bootstrap) as admin:
            wait_until(
                lambda: {tp: o.offset for tp, o in admin.list_group_offsets(group).items()} == dict.fromkeys(tps, 15),
                15,
                "the auto commits of every partition at offset 15",
            )
        described = run_tool("kafka-consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
        rows = [line.split() for line in described.stdout.splitlines() if topic in line]
        assert sorted((int(r[2]), int(r[3]), r[6]) for r in rows) == [(p, 15, a.member_id) for p in range(4)], (
            described.stdout
        )
    finally:
        for m in members:
            m.stop()


def test_a_regex_subscription_picks_up_a_topic_created_later(kafka44):
    bootstrap = kafka44.bootstrap_servers
    prefix = f"rx{uuid.uuid4().hex[:6]}"
    first = set(make_topic(bootstrap, f"{prefix}-a", 2))
    make_topic(bootstrap, f"other{prefix}", 1)  # does not match the whole name
    member = PollingMember(bootstrap, f"kl-{uuid.uuid4().hex[:8]}", pattern=f"{prefix}-.*")
    try:
        wait_until(lambda: member.snapshot() == first, 30, "the matching topic's partitions assigned")
        later = set(make_topic(bootstrap, f"{prefix}-b", 2))
        wait_until(lambda: member.snapshot() == first | later, 45, "the topic created later assigned too")
        produce(bootstrap, f"{prefix}-b", 2, 0, 4)
        wait_until(lambda: len(member.read()) == 4, 20, "the later topic's records read")
        assert {t for t, *_ in member.read()} == {f"{prefix}-b"}
        assert member.subscribed == {f"{prefix}-a", f"{prefix}-b"}  # the pattern's topics, as assigned
    finally:
        member.stop()


def test_a_static_member_leaves_with_epoch_minus_2_and_gets_its_partitions_back(kafka44):
    bootstrap = kafka44.bootstrap_servers
    topic, group = f"kip848-{uuid.uuid4().hex[:8]}", f"kl-{uuid.uuid4().hex[:8]}"
    tps = set(make_topic(bootstrap, topic, 4))
    a = PollingMember(bootstrap, group, (topic,), group_instance_id="static-a")
    b = PollingMember(bootstrap, group, (topic,), group_instance_id="static-b")
    try:
        wait_until(lambda: is_split([a, b], tps), 30, "both static members owning a share")
        share = a.snapshot()
        a.stop()
        a = PollingMember(bootstrap, group, (topic,), group_instance_id="static-a")
        wait_until(lambda: a.snapshot() == share, 20, "the static member's own share back")
        assert b.snapshot() == tps - share
        assert not [e for e in b.events if e[0] == "assigned" and e[1]][1:]  # b never got a's share meanwhile
    finally:
        a.stop()
        b.stop()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_assigned(self, partitions):
        self.events.append(("assigned", set(partitions)))

    def on_partitions_revoked(self, partitions):
        self.events.append(("revoked", set(partitions)))

    def on_partitions_lost(self, partitions):
        self.events.append(("lost", set(partitions)))


def test_a_member_whose_session_timed_out_reports_its_partitions_lost_and_rejoins_with_epoch_0(kafka44):
    bootstrap = kafka44.bootstrap_servers
    topic = f"kip848-{uuid.uuid4().hex[:8]}"
    tps = set(make_topic(bootstrap, topic, 2))
    listener = Recorder()
    with Consumer(bootstrap, group_id=f"kl-{uuid.uuid4().hex[:8]}", group_protocol="consumer") as consumer:
        consumer.subscribe([topic], listener=listener)
        wait_until(lambda: consumer.poll(100) is not None and set(consumer.assignment()) == tps, 30, "the assignment")
        first = consumer.group_metadata()
        member = consumer._coordinator.member
        send_heartbeat = member.heartbeat_request
        member.heartbeat_request = lambda now: None  # silent past the 6 s session timeout
        try:
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                consumer.poll(100)
        finally:
            member.heartbeat_request = send_heartbeat
        wait_until(
            lambda: consumer.poll(100) is not None and ("lost", tps) in listener.events and consumer.assignment(),
            30,
            "the partitions lost, then assigned again",
        )
        again = consumer.group_metadata()
        assert listener.events[-2:] == [("lost", tps), ("assigned", tps)]
        assert again.member_id == first.member_id and 0 < again.generation_id
        assert set(consumer.assignment()) == tps


def test_describe_consumer_groups_shows_a_consumer_group_and_a_classic_group(kafka44):
    bootstrap = kafka44.bootstrap_servers
    topic = f"kip848-{uuid.uuid4().hex[:8]}"
    tps = set(make_topic(bootstrap, topic, 2))
    new_group, old_group = f"kl-{uuid.uuid4().hex[:8]}", f"kl-{uuid.uuid4().hex[:8]}"
    member = PollingMember(bootstrap, new_group, (topic,), client_id="kip848-member", group_remote_assignor="range")
    classic = PollingMember(bootstrap, old_group, (topic,), group_protocol="classic", client_id="classic-member")
    try:
        wait_until(lambda: member.snapshot() == tps and classic.snapshot() == tps, 30, "both groups assigned")
        with AdminClient(bootstrap) as admin:
            found = admin.describe_consumer_groups([new_group, old_group, "no-such-group"])
        new, old, none = found[new_group], found[old_group], found["no-such-group"]
        assert (new.type, new.state, new.assignor) == ("consumer", "Stable", "range")
        assert new.group_epoch >= 1 and new.assignment_epoch == new.group_epoch
        (m,) = new.members
        assert (m.member_id, m.member_epoch, m.client_id) == (member.member_id, member.epoch, "kip848-member")
        assert (m.member_type, m.subscribed_topic_names, m.subscribed_topic_regex) == ("consumer", (topic,), None)
        assert set(m.assignment) == set(m.target_assignment) == tps
        assert (old.type, old.state, old.assignor) == ("classic", "Stable", "range")
        (c,) = old.members
        assert (c.client_id, set(c.assignment), c.member_type) == ("classic-member", tps, "classic")
        assert (none.type, none.state, none.members) == ("classic", "Dead", ())
    finally:
        member.stop()
        classic.stop()


@pytest.mark.parametrize("kafka", ["kafka-3.9"], indirect=True)
def test_a_broker_without_the_consumer_protocol_fails_poll_naming_the_classic_protocol(kafka):
    topic = f"kip848-{uuid.uuid4().hex[:8]}"
    make_topic(kafka.bootstrap_servers, topic, 1)
    with Consumer(kafka.bootstrap_servers, group_id=f"kl-{uuid.uuid4().hex[:8]}", group_protocol="consumer") as c:
        c.subscribe([topic])
        with pytest.raises(UnsupportedGroupProtocolError, match='use group_protocol="classic"'):
            for _ in range(100):
                c.poll(100)
