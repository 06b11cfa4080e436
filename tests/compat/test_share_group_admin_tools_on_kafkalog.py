"""Apache Kafka 4.4's tools against kafkalog's share-group admin surface (KIP-932): ``kafka-configs --entity-type
groups`` sets, describes and is refused group configs with Kafka's messages; ``kafka-share-groups`` lists and
describes a share group (offsets, members, state), resets its start offsets (AlterShareGroupOffsets), deletes
them (DeleteShareGroupOffsets) and deletes the group."""

from __future__ import annotations

import uuid

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.broker.wire import Wire
from tests.waiting import wait_until

from .tools import run_tool

pytestmark = pytest.mark.compat

SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
TOPIC = "tools-share"
Heartbeat = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = EmbeddedBroker(
        0,
        zookeeper_connect=f"memory:tools-share-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("kafkalog"),
        offsets_topic_num_partitions=1,
        share_coordinator_state_topic_num_partitions=1,
    ).start()
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 2, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 2)), 10, f"leaders of {TOPIC}")
    gc = b.broker.group_coordinator
    b.call(lambda: gc.find_coordinator("any"))  # creates __consumer_offsets, as a client's FindCoordinator does
    wait_until(lambda: b.call(lambda: len(gc.loaded)) == 1, 10, "the offsets partition to load")
    yield b
    b.stop()


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


def test_kafka_configs_manages_group_configs(broker):
    configs = ("kafka-configs", "--bootstrap-server", broker.bootstrap_servers, "--entity-type", "groups")
    named = (*configs, "--entity-name", "tools-group")
    altered = run_tool(*named, "--alter", "--add-config", "share.auto.offset.reset=earliest")
    assert altered.stdout.strip() == "Completed updating config for group tools-group."
    assert run_tool(*named, "--describe").stdout.splitlines() == [
        "Dynamic configs for group tools-group are:",
        "  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset="
        "earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}",
    ]
    every = run_tool(*named, "--describe", "--all").stdout
    assert "  share.record.lock.duration.ms=30000 sensitive=false" in every
    refused = run_tool(*named, "--alter", "--add-config", "share.delivery.count.limit=1", check=False)
    assert refused.returncode != 0
    assert "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2" in refused.stderr
    assert broker.broker.registry.group_config("tools-group") == {"share.auto.offset.reset": "earliest"}


def test_kafka_share_groups_describes_resets_and_deletes_offsets(broker):
    group, member = f"tools-sg-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    tool = (SHARE_GROUPS, "--bootstrap-server", broker.bootstrap_servers)
    with Wire(broker.bootstrap_servers) as w:
        body = Heartbeat(group_id=group, member_id=member, member_epoch=0, subscribed_topic_names=[TOPIC])
        joined = w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)
        assert joined.error_code == ErrorCode.NONE and joined.assignment is not None

        assert group in run_tool(*tool, "--list").stdout.split()
        assert table(run_tool(*tool, "--describe", "--group", group).stdout) == [
            ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"],
            [group, TOPIC, "0", "-", "-"],
            [group, TOPIC, "1", "-", "-"],
        ]
        members = table(run_tool(*tool, "--describe", "--group", group, "--members").stdout)
        assert members[0] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]
        assert (members[1][1], members[1][-2:]) == (member, ["2", f"{TOPIC}:0,1"])
        state = table(run_tool(*tool, "--describe", "--group", group, "--state").stdout)
        assert state[1][0] == group and state[1][-2:] == ["Stable", "1"]

        refused = run_tool(*tool, "--reset-offsets", "--group", group, "--topic", TOPIC, "--to-earliest", "--execute",
                           check=False)  # fmt: skip
        assert "not empty" in refused.stdout + refused.stderr
        leave = Heartbeat(group_id=group, member_id=member, member_epoch=-1)
        assert w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, leave).error_code == ErrorCode.NONE

    reset = run_tool(*tool, "--reset-offsets", "--group", group, "--topic", TOPIC, "--to-earliest", "--execute")
    assert sorted(table(reset.stdout)[1:]) == [[group, TOPIC, "0", "0"], [group, TOPIC, "1", "0"]]
    assert table(run_tool(*tool, "--describe", "--group", group).stdout)[1:] == [
        [group, TOPIC, "0", "0", "0"],
        [group, TOPIC, "1", "0", "0"],
    ]
    deleted = run_tool(*tool, "--delete-offsets", "--group", group, "--topic", TOPIC)
    assert table(deleted.stdout) == [["TOPIC", "STATUS"], [TOPIC, "Successful"]]
    assert table(run_tool(*tool, "--describe", "--group", group).stdout)[1:] == [
        [group, TOPIC, "0", "-", "-"],
        [group, TOPIC, "1", "-", "-"],
    ]
    deleted_group = run_tool(*tool, "--delete", "--group", group)
    assert deleted_group.stdout.strip() == f"Deletion of requested share groups ('{group}') was successful."
    assert group not in run_tool(*tool, "--list").stdout.split()
