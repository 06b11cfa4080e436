"""kafkalog reads the consumer group records Apache Kafka 4.4 writes: a confluent-kafka member with
``group.protocol=consumer`` (one subscribing by name, one by regex) joins a group on Kafka 4.4 (KRaft); the
``__consumer_offsets`` segment files Kafka wrote are read back, every consumer group record (types 3-8, 16) decodes
with ``record_codec``, and replayed in log order into a ``ConsumerGroup`` they rebuild the group Kafka reports:
its epoch, its member, the member's partitions and the regex's topics."""

from __future__ import annotations

import uuid

import pytest

from broker.coordinator.consumer.assignors import assignors_from_config
from broker.coordinator.consumer.group import ConsumerGroup
from broker.coordinator.consumer.record_codec import decode_record, is_consumer_group_key
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.records.splitter import iter_batches
from tests.waiting import wait_until

from .kafka_broker import KafkaBroker
from .peers import KAFKA_44

pytestmark = pytest.mark.compat

FAST_GROUPS = {
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}


@pytest.fixture(scope="module")
def kafka44(tmp_path_factory):
    broker = KafkaBroker(KAFKA_44, tmp_path_factory.mktemp("kafka44-cg-records"), extra=FAST_GROUPS)
    broker.start()
    yield broker
    broker.stop()


def consumer_group_records(broker: KafkaBroker, group: str) -> list:
    """Every consumer group record of ``group`` in Kafka's ``__consumer_offsets`` segment files, in log order."""
    out = []
    for part in sorted(broker.log_dir.glob("__consumer_offsets-*")):
        for segment in sorted(part.glob("*.log")):
            for batch in iter_batches(segment.read_bytes()):
                if batch.is_control:
                    continue
                for rec in batch.records():
                    key = None if rec.key is None else bytes(rec.key)
                    if is_consumer_group_key(key):
                        assert key is not None
                        decoded = decode_record(key, None if rec.value is None else bytes(rec.value))
                        if decoded.group_id == group:
                            out.append(decoded)
    return out


def test_kafkas_consumer_group_records_decode_and_replay(kafka44):
    from confluent_kafka import Consumer

    bootstrap = kafka44.bootstrap_servers
    prefix = f"cgr{uuid.uuid4().hex[:6]}"
    topic = f"{prefix}-a"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 3, 1)])
    by_name, by_regex = f"{prefix}-names", f"{prefix}-regex"
    consumers = []
    for group, subscription in ((by_name, topic), (by_regex, f"^{prefix}-.*")):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer"})
        c.subscribe([subscription])
        consumers.append(c)
    try:

        def assigned() -> bool:
            for c in consumers:
                c.poll(0.1)
            return all(len(c.assignment()) == 3 for c in consumers)

        wait_until(assigned, 60, "both members to be assigned the topic's 3 partitions")
        with AdminClient(bootstrap) as admin:
            topic_id = uuid.UUID(str(admin.describe_topics([topic])[topic].topic_id))

        def replayed(group: str) -> ConsumerGroup:
            g = ConsumerGroup(group, assignors=assignors_from_config(["uniform", "range"]), default_assignor="uniform")
            for rec in consumer_group_records(kafka44, group):
                g.replay(rec)
            return g

        def rebuilt(group: str) -> bool:
            g = replayed(group)
            members = list(g.members.values())
            return len(members) == 1 and members[0].assigned_partitions == {topic_id: frozenset({0, 1, 2})}

        for group in (by_name, by_regex):
            wait_until(lambda group=group: rebuilt(group), 30, f"Kafka's records of {group} to show its member")
        types = {rec.record_type for rec in consumer_group_records(kafka44, by_regex)}
        assert {3, 5, 6, 7, 8, 16} <= types
        regex_group = replayed(by_regex)
        (resolved,) = regex_group.resolved_regexes.values()
        assert resolved.topics == frozenset({topic})
        (member,) = replayed(by_name).members.values()
        assert member.subscribed_topic_names == (topic,) and member.member_epoch >= 1
    finally:
        for c in consumers:
            c.close()
