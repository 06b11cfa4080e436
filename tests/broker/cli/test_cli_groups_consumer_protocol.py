"""``kafkalog groups`` on a KIP-848 consumer group: Kafka 4.x kafka-consumer-groups' columns with the member and
group epochs and the current and target assignments, beside ``--list --state`` and the offsets view. The group
is formed on an in-process broker by a raw ConsumerGroupHeartbeat (tests/broker/wire.py); the CLI runs as a
process, as a user runs it."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

from .test_cli_tools import ok

TOPIC = "cli-cg"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:cli-cg-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("b0"),
        offsets_topic_num_partitions=1,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 3, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 3)), 10, f"leaders of {TOPIC}")
    gc = b.broker.group_coordinator
    b.call(lambda: gc.find_coordinator("any"))
    wait_until(lambda: b.call(lambda: len(gc.loaded)) == 1, 10, "the offsets partition to load")
    yield b
    b.stop()


def test_describe_shows_a_consumer_group_with_its_epochs(broker):
    group, member = f"cg-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:22]
    R = API_BY_KEY[ApiKey.CONSUMER_GROUP_HEARTBEAT].Request
    with Wire(broker.bootstrap_servers) as w:
        resp = w.call(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            1,
            R(group_id=group, member_id=member, member_epoch=0, rebalance_timeout_ms=30000,
              subscribed_topic_names=[TOPIC], topic_partitions=[]),
        )  # fmt: skip
    assert resp.error_code == ErrorCode.NONE
    bs = ("--bootstrap-server", broker.bootstrap_servers)
    members = [
        line.split()
        for line in ok("groups", "--describe", "--group", group, "--members", "--verbose", *bs).splitlines()
    ]
    assert members[0] == [
        "GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
        "CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT",
    ]  # fmt: skip
    assert members[1] == [
        group,
        member,
        "-",
        members[1][3],
        "wire-test",
        "3",
        "1",
        f"{TOPIC}:0,1,2",
        "1",
        f"{TOPIC}:0,1,2",
    ]
    plain = [line.split() for line in ok("groups", "--describe", "--group", group, "--members", *bs).splitlines()]
    assert plain[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"] and plain[1][4] == "3"
    state = [
        line.split() for line in ok("groups", "--describe", "--group", group, "--state", "--verbose", *bs).splitlines()
    ]
    assert state[0] == [
        "GROUP",
        "COORDINATOR",
        "(ID)",
        "ASSIGNMENT-STRATEGY",
        "STATE",
        "GROUP-EPOCH",
        "TARGET-ASSIGNMENT-EPOCH",
        "#MEMBERS",
    ]
    assert state[1][0] == group and state[1][-5:] == ["uniform", "Stable", "1", "1", "1"]
    listed = [line.split() for line in ok("groups", "--list", "--state", *bs).splitlines()]
    assert [group, "Stable"] in listed
    offsets = [line.split() for line in ok("groups", "--describe", "--group", group, *bs).splitlines()]
    assert offsets[0][:3] == ["GROUP", "TOPIC", "PARTITION"]
    assert sorted((r[2], r[6]) for r in offsets[1:]) == [("0", member), ("1", member), ("2", member)]
