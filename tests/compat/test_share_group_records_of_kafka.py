"""kafkalog reads the share group records Apache Kafka 4.4 writes: two confluent-kafka ShareConsumers join a share
group on Kafka 4.4 (KRaft) over a 3-partition topic; the ``__consumer_offsets`` segment files Kafka wrote are read
back, every share group record (types 10-15) decodes with ``share.record_codec``, and replayed in log order into
a ``ShareGroup`` they rebuild the group Kafka's ShareGroupDescribe reports: epochs, members, their partitions, and
the topic's partitions initialized (record 15). One member then leaves and the replay follows."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.share.group import ShareGroup
from broker.coordinator.share.record_codec import decode_record, is_share_group_key
from spark_kafkalog.protocol import API_BY_KEY, ApiKey
from spark_kafkalog.records.splitter import iter_batches
from tests.broker.wire import Wire
from tests.share_scenarios import new_group, share_consumer
from tests.waiting import wait_until

pytestmark = pytest.mark.compat


def share_group_records(broker, group: str) -> list:
    """Every share group record of ``group`` in Kafka's ``__consumer_offsets`` segment files, in log order."""
    out = []
    for part in sorted(broker.log_dir.glob("__consumer_offsets-*")):
        for segment in sorted(part.glob("*.log")):
            for batch in iter_batches(segment.read_bytes()):
                if batch.is_control:
                    continue
                for rec in batch.records():
                    key = None if rec.key is None else bytes(rec.key)
                    if is_share_group_key(key):
                        assert key is not None
                        decoded = decode_record(key, None if rec.value is None else bytes(rec.value))
                        if decoded.group_id == group:
                            out.append(decoded)
    return out


def replayed(broker, group: str) -> ShareGroup:
    g = ShareGroup(group)
    for rec in share_group_records(broker, group):
        g.replay(rec)
    return g


def test_kafkas_share_group_records_decode_and_replay(kafka_share):
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = kafka_share.bootstrap_servers
    topic = f"sgr-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: a collected client cancels its futures
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    group = new_group("sgr")
    consumers = [share_consumer(bootstrap, group, topic) for _ in range(2)]
    try:

        def described():
            for c in consumers:
                c.poll(0.1)
            with Wire(bootstrap) as w:
                R = API_BY_KEY[ApiKey.SHARE_GROUP_DESCRIBE].Request
                body = R(group_ids=[group], include_authorized_operations=False)
                (d,) = w.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, body).groups
            assigned = [len(tp.partitions) for m in d.members for tp in m.assignment.topic_partitions]
            return d if len(d.members) == 2 and sum(assigned) == 3 else None

        d = wait_until(described, 60, "both members to share the topic's 3 partitions")
        g = wait_until(
            lambda: (x := replayed(kafka_share, group)).group_epoch == d.group_epoch and len(x.members) == 2 and x,
            30,
            "Kafka's records to reach the segment",
        )
        assert sorted(g.members) == sorted(m.member_id for m in d.members)
        by_member = {
            m.member_id: sorted(p for tp in m.assignment.topic_partitions for p in tp.partitions) for m in d.members
        }
        assert {m: sorted(p for ps in x.assigned_partitions.values() for p in ps) for m, x in g.members.items()} == (
            by_member
        )
        ((topic_id, (name, parts)),) = g.initialized.items()
        assert (name, sorted(parts)) == (topic, [0, 1, 2])
        assert all(set(x.assigned_partitions) == {topic_id} for x in g.members.values())
        assert g.subscribed_topic_names() == {topic} and g.assignment_epoch <= g.group_epoch
        leaving = consumers.pop()
        leaving.close()
        wait_until(lambda: len(replayed(kafka_share, group).members) == 1, 30, "the leave to be written")
    finally:
        for c in consumers:
            c.close()
