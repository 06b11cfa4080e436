"""`kafkalog groups` with a share group (KIP-932) on an in-process broker: listed with its state, described in
Kafka 4.4 kafka-share-groups' views (offsets: GROUP TOPIC PARTITION START-OFFSET LAG; members; state)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from broker.share.state_batches import StateBatch
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.records.batch_builder import build_batch
from tests.broker.conftest import start_brokers
from tests.broker.wire import Wire
from tests.waiting import wait_until

CLI = [sys.executable, "-m", "broker.cli", "groups"]
TOPIC = "cli-share"
Heartbeat = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request
Produce = API_BY_KEY[ApiKey.PRODUCE].Request


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, offsets_topic_num_partitions=1)
    b.call(lambda: b.broker.topic_admin.create_topic(TOPIC, 2, 1))
    wait_until(lambda: b.call(lambda: b.broker.topic_admin.has_leaders(TOPIC, 2)), 10, f"leaders of {TOPIC}")
    gc = b.broker.group_coordinator
    b.call(lambda: gc.find_coordinator("any"))  # creates __consumer_offsets, as a client's FindCoordinator does
    wait_until(lambda: b.call(lambda: len(gc.loaded)) == 1, 10, "the offsets partition to load")
    yield b
    b.stop()


def join(w: Wire, group: str, member: str) -> None:
    epoch = 0

    def assigned() -> bool:
        nonlocal epoch
        body = Heartbeat(group_id=group, member_id=member, member_epoch=epoch, subscribed_topic_names=[TOPIC])
        resp = w.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, body)
        assert resp.error_code == ErrorCode.NONE, resp
        epoch = resp.member_epoch
        return resp.assignment is not None and bool(resp.assignment.topic_partitions)

    wait_until(assigned, 20, "the member's assignment")


def test_a_share_group_is_listed_and_described_as_kafka_share_groups_does(broker):
    group, member = f"cli-sg-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    bs = ["--bootstrap-server", broker.bootstrap_servers]
    with Wire(broker.bootstrap_servers) as w:
        join(w, group, member)
        topic_id = broker.call(lambda: broker.broker.metadata.topics[TOPIC].topic_id)
        records = build_batch([(int(time.time() * 1000), None, b"v%d" % i, ()) for i in range(8)])
        P = Produce.TopicProduceData
        w.call(
            ApiKey.PRODUCE,
            13,
            Produce(
                transactional_id=None,
                acks=1,
                timeout_ms=5000,
                topic_data=[P(topic_id=topic_id, partition_data=[P.PartitionProduceData(index=0, records=records)])],
            ),
        )
    persister = broker.broker.share_persister
    _, _, state = broker.call(lambda: persister.read_summary(group, topic_id, 0, -1))
    done = broker.call(lambda: persister.write(group, topic_id, 0, state.state_epoch, 0, 2, [StateBatch(2, 2, 2, 1)]))
    assert done[0] == ErrorCode.NONE

    listed = run("list", *bs, "--state")
    assert f"{group}  Stable" in listed.stdout, listed.stderr

    offsets = run("describe", *bs, "--group", group)
    assert offsets.returncode == 0, offsets.stderr
    lines = [line.split() for line in offsets.stdout.splitlines()]
    assert lines == [
        ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"],
        [group, TOPIC, "0", "2", "5"],  # offsets 2..7 from the start, 2 acknowledged
        [group, TOPIC, "1", "-", "-"],
    ]

    members = run("describe", *bs, "--group", group, "--members")
    assert [line.split() for line in members.stdout.splitlines()][1][-2:] == ["2", f"{TOPIC}:0,1"]
    assert members.stdout.split()[:6] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]

    state_view = run("describe", *bs, "--group", group, "--state", "--verbose")
    header, row = state_view.stdout.splitlines()
    assert header.split() == ["GROUP", "COORDINATOR", "(ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"]
    assert row.split()[0] == group and row.split()[3] == "Stable" and row.split()[-1] == "1"
