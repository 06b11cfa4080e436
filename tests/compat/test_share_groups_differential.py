"""Share-group requests at the wire, the same sequence to Apache Kafka 4.4 and kafkalog, answers compared.

ShareFetch / ShareAcknowledge (session epochs, per-offset acknowledgement types, invalid types and ranges,
the delivery limit, acknowledging what is already acknowledged or archived, a member without a session) and
ShareGroupHeartbeat / ShareGroupDescribe (member id rules, fencing, leaving, a consumer group's id). Each
answer is condensed to its error codes and acquired ranges (delivery counts included).

Known, legitimate differences left out of the comparison: a joining member's epoch and first assignment
(Kafka answers the join with no partitions and assigns on a later heartbeat, once it initialized the share
partitions' state; kafkalog initializes them within the join and assigns at once), and the order of
ShareGroupDescribe's groups (compared per group id).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicCollection
from confluent_kafka.admin import AdminClient

from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from tests.share_scenarios import produce, share_group, topic_maker
from tests.waiting import wait_until

from ..broker.wire import Wire

pytestmark = pytest.mark.compat

FETCH = API_BY_KEY[ApiKey.SHARE_FETCH].Request
ACK = API_BY_KEY[ApiKey.SHARE_ACKNOWLEDGE].Request
FETCH_PARTITION = FETCH.FetchTopic.FetchPartition
ACK_PARTITION = ACK.AcknowledgeTopic.AcknowledgePartition
Acks = list[tuple[int, int, list[int]]]  # (first offset, last offset, acknowledge types)


def coordinator_address(bootstrap: str, group: str) -> str:
    """The group coordinator's address (FindCoordinator v6; retried while the offsets topic is being created)."""

    def find() -> Any:
        with Wire(bootstrap) as w:
            found = w.call(ApiKey.FIND_COORDINATOR, 6, key_type=0, coordinator_keys=[group]).coordinators[0]
        return found if found.error_code == 0 else None

    found = wait_until(find, 30, f"a coordinator for {group}")
    return f"{found.host}:{found.port}"


def topic_id_and_leader(bootstrap: str, topic: str) -> tuple[uuid.UUID, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_topics(TopicCollection([topic])).values()
    described = future.result(30)
    high, low = described.topic_id.get_most_significant_bits(), described.topic_id.get_least_significant_bits()
    leader = described.partitions[0].leader
    return uuid.UUID(int=((high % (1 << 64)) << 64) | (low % (1 << 64))), f"{leader.host}:{leader.port}"


RETRIABLE = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def join(bootstrap: str, group: str, topic: str, member: str) -> None:
    """Heartbeat as ``member`` until it is assigned a partition of ``topic`` (as a client does: a coordinator
    still loading is asked again; Kafka assigns once the share state is initialized, on a later heartbeat)."""
    epoch = 0

    def assigned() -> bool:
        nonlocal epoch
        with Wire(coordinator_address(bootstrap, group)) as w:
            answer = w.call(
                ApiKey.SHARE_GROUP_HEARTBEAT,
                1,
                group_id=group,
                member_id=member,
                member_epoch=epoch,
                subscribed_topic_names=[topic] if epoch == 0 else None,
            )
        if answer.error_code in RETRIABLE:
            return False
        assert answer.error_code == 0, answer
        epoch = answer.member_epoch
        return answer.assignment is not None and bool(answer.assignment.topic_partitions)

    wait_until(assigned, 30, f"{member} to be assigned {topic}")


def fetch_and_acknowledge_answers(bootstrap: str) -> list[tuple[str, Any]]:
    group = share_group(bootstrap, lock_ms=2000, delivery_limit=2)
    topic = topic_maker(bootstrap)(1)
    produce(bootstrap, topic, [b"p%d" % i for i in range(5)])
    topic_id, leader = topic_id_and_leader(bootstrap, topic)
    member = str(uuid.uuid4())
    join(bootstrap, group, topic, member)
    out: list[tuple[str, Any]] = []

    with Wire(leader) as w:

        def fetch(epoch: int, acks: Acks | None = None) -> tuple[int, list[Any]]:
            batches = [
                FETCH_PARTITION.AcknowledgementBatch(first_offset=a, last_offset=z, acknowledge_types=t)
                for a, z, t in acks or []
            ]
            answer = w.call(
                ApiKey.SHARE_FETCH,
                1,
                group_id=group,
                member_id=member,
                share_session_epoch=epoch,
                max_wait_ms=300,
                min_bytes=1,
                max_records=10,
                batch_size=10,
                topics=[
                    FETCH.FetchTopic(
                        topic_id=topic_id,
                        partitions=[FETCH_PARTITION(partition_index=0, acknowledgement_batches=batches)],
                    )
                ],
                forgotten_topics_data=[],
            )
            partitions = [
                (
                    p.error_code,
                    p.acknowledge_error_code,
                    [(r.first_offset, r.last_offset, r.delivery_count) for r in p.acquired_records],
                )
                for t in answer.responses
                for p in t.partitions
            ]
            return answer.error_code, partitions

        def acknowledge(epoch: int, acks: Acks, member_id: str = member) -> tuple[int, list[int]]:
            batches = [
                ACK_PARTITION.AcknowledgementBatch(first_offset=a, last_offset=z, acknowledge_types=t)
                for a, z, t in acks
            ]
            answer = w.call(
                ApiKey.SHARE_ACKNOWLEDGE,
                1,
                group_id=group,
                member_id=member_id,
                share_session_epoch=epoch,
                topics=[
                    ACK.AcknowledgeTopic(
                        topic_id=topic_id,
                        partitions=[ACK_PARTITION(partition_index=0, acknowledgement_batches=batches)],
                    )
                ],
            )
            return answer.error_code, [p.error_code for t in answer.responses for p in t.partitions]

        steps: list[tuple[str, Callable[[], Any]]] = [
            ("fetch at epoch 1 without a session", lambda: fetch(1)),
            ("fetch opening the session", lambda: fetch(0)),
            ("fetch at a wrong epoch", lambda: fetch(5)),
            ("accept 0, release 1, reject 2 (a type per offset)", lambda: acknowledge(1, [(0, 2, [1, 2, 3])])),
            ("accept 0 again", lambda: acknowledge(2, [(0, 0, [1])])),
            ("an unknown acknowledge type", lambda: acknowledge(3, [(3, 3, [7])])),
            ("offsets beyond the end", lambda: acknowledge(4, [(10, 12, [1])])),
            ("first offset after last offset", lambda: acknowledge(5, [(4, 3, [1])])),
            ("fetch: 1 again, delivery count 2", lambda: fetch(6)),
            ("release 1 at the limit, accept 3-4", lambda: fetch(7, [(1, 1, [2]), (3, 4, [1])])),
            ("accept the archived 1", lambda: fetch(8, [(1, 1, [1])])),
            ("acknowledge by a member without a session", lambda: acknowledge(1, [(3, 3, [1])], str(uuid.uuid4()))),
            ("close the session", lambda: fetch(-1)),
            ("close it again", lambda: fetch(-1)),
        ]
        for label, step in steps:
            out.append((label, step()))
    return out


def heartbeat_answers(bootstrap: str) -> list[tuple[str, Any]]:
    group = share_group(bootstrap)
    topic = topic_maker(bootstrap)(2)
    out: list[tuple[str, Any]] = []
    join(bootstrap, group, topic, str(uuid.uuid4()))  # the coordinator is loaded: no retriable errors below
    with Wire(coordinator_address(bootstrap, group)) as w:

        def heartbeat(member: str, epoch: int = 0, topics: list[str] | None = None) -> tuple[int, int | None]:
            answer = w.call(
                ApiKey.SHARE_GROUP_HEARTBEAT,
                1,
                group_id=group,
                member_id=member,
                member_epoch=epoch,
                subscribed_topic_names=topics,
            )
            # a joining member's epoch depends on the coordinator's steps (module docstring)
            return answer.error_code, None if epoch == 0 and answer.error_code == 0 else answer.member_epoch

        member = str(uuid.uuid4())
        out.append(("an empty member id", heartbeat("", topics=[topic])))
        out.append(("join", heartbeat(member, topics=[topic])))
        out.append(("join without subscribed topics", heartbeat(str(uuid.uuid4()))))
        out.append(("an unknown member at epoch 5", heartbeat(str(uuid.uuid4()), 5)))
        out.append(("a member at a wrong epoch", heartbeat(member, 9)))
        out.append(("leave", heartbeat(member, -1)))
        out.append(("leave again", heartbeat(member, -1)))
        out.append(
            ("subscribe to a missing topic", heartbeat(str(uuid.uuid4()), topics=[f"missing-{uuid.uuid4().hex[:6]}"]))
        )
        missing = f"missing-{uuid.uuid4().hex[:6]}"
        described = w.call(
            ApiKey.SHARE_GROUP_DESCRIBE, 1, group_ids=[group, missing], include_authorized_operations=False
        )
        by_id = {g.group_id: (g.error_code, g.group_state, len(g.members), g.assignor_name) for g in described.groups}
        out.append(("describe", (by_id[group], by_id[missing])))

    consumer_group = f"cg-{uuid.uuid4().hex[:6]}"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": consumer_group, "group.protocol": "consumer"})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while not consumer.assignment():
            assert time.monotonic() < deadline, "the consumer group member got no assignment"
            consumer.poll(0.2)
        with Wire(coordinator_address(bootstrap, consumer_group)) as w:
            answer = w.call(
                ApiKey.SHARE_GROUP_HEARTBEAT,
                1,
                group_id=consumer_group,
                member_id=str(uuid.uuid4()),
                member_epoch=0,
                subscribed_topic_names=[topic],
            )
        out.append(("a share heartbeat to a consumer group", answer.error_code))
    finally:
        consumer.close()
    return out


@pytest.mark.parametrize("script", [fetch_and_acknowledge_answers, heartbeat_answers], ids=["fetch-ack", "heartbeat"])
def test_share_group_answers_of_kafkalog_equal_kafka_44s(kafka_share, kafkalog_share, script):
    expected = script(kafka_share.bootstrap_servers)
    got = script(kafkalog_share.bootstrap_servers)
    differences = [f"{label}: kafkalog {g!r} != kafka {e!r}" for (label, e), (_, g) in zip(expected, got) if e != g]
    assert not differences, "\n".join(differences)
    assert [label for label, _ in got] == [label for label, _ in expected]
