"""kafka-python's and confluent-kafka's group admin calls (list, describe, offsets, alter, delete) against a
group of kafka-python members agree with our AdminClient's answers.
"""

from __future__ import annotations

import pytest

from spark_kafkalog.client import AdminClient, TopicPartition
from tests.waiting import wait_until

from .members import KafkaPythonMember, committed, new_topic, produce, stop_all, wait_split

pytestmark = pytest.mark.integration


def test_kafka_python_and_confluent_admin_group_calls_agree_with_ours(gcluster, group):
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka import TopicPartition as CTP
    from confluent_kafka.admin import AdminClient as ConfluentAdmin
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KTP
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.structs import OffsetAndMetadata as KOM

    topic = new_topic(gcluster)
    produce(gcluster, topic, [b"ad%03d" % i for i in range(60)])
    members = [KafkaPythonMember(gcluster, group, topic, RangePartitionAssignor) for _ in range(2)]
    kadmin = KafkaAdminClient(bootstrap_servers=gcluster.bootstrap_servers)
    cadmin = ConfluentAdmin({"bootstrap.servers": gcluster.bootstrap_servers})
    try:
        owned = wait_split(members)
        wait_until(lambda: sum(committed(gcluster, group).values()) == 60, 20, "the members to commit everything")
        with AdminClient(gcluster.bootstrap_servers) as admin:
            ours = admin.describe_groups([group])[group]
            our_offsets = {tp.partition: om.offset for tp, om in admin.list_group_offsets(group).items()}
        assert ours.state == "Stable" and len(ours.members) == 2

        # kafka-python
        assert {"group_id": group, "protocol_type": "consumer"}.items() <= next(
            g for g in kadmin.list_groups() if g["group_id"] == group
        ).items()
        described = kadmin.describe_groups([group])[group]
        assert described["error"] is None and described["group_state"] == "Stable"
        assert described["protocol_type"] == "consumer" and described["protocol_data"] == "range"
        k_members = {
            m["member_id"]: {p for t in m["member_assignment"]["assigned_partitions"] for p in t["partitions"]}
            for m in described["members"]
        }
        o_members = {m.member_id: m for m in ours.members}
        assert set(k_members) == set(o_members)
        assert sorted(map(sorted, k_members.values())) == sorted(map(sorted, owned))
        k_offsets = kadmin.list_group_offsets({group: None})[group]
        assert {tp.partition: om.offset for tp, om in k_offsets.items()} == our_offsets == dict.fromkeys(range(6), 10)

        # confluent-kafka
        listed = cadmin.list_consumer_groups().result(30)
        c_listing = next(g for g in listed.valid if g.group_id == group)
        assert c_listing.state.name == "STABLE" and not c_listing.is_simple_consumer_group
        c_described = cadmin.describe_consumer_groups([group])[group].result(30)
        assert c_described.state.name == "STABLE" and c_described.partition_assignor == "range"
        assert c_described.coordinator.id == ours.coordinator
        c_members = {m.member_id: {tp.partition for tp in m.assignment.topic_partitions} for m in c_described.members}
        assert c_members == k_members
        c_offsets = cadmin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
        assert {tp.partition: tp.offset for tp in c_offsets.topic_partitions} == our_offsets

        # a group with members refuses deletion and outside commits
        assert dict(kadmin.delete_groups([group])) == {group: "NonEmptyGroupError"}
        from kafka.errors import UnknownMemberIdError

        refused = kadmin.alter_group_offsets(group, {KTP(topic, 0): KOM(1, "", -1)})
        assert refused == {KTP(topic, 0): UnknownMemberIdError}
    finally:
        stop_all(members)

    try:
        # altered offsets, by both clients, are what we read back
        kadmin.alter_group_offsets(group, {KTP(topic, 0): KOM(3, "from kafka-python", -1)})
        altered = cadmin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [CTP(topic, 1, 4), CTP(topic, 2, 5)])]
        )
        altered[group].result(30)
        with AdminClient(gcluster.bootstrap_servers) as admin:
            after = admin.list_group_offsets(group)
            assert {tp.partition: om.offset for tp, om in after.items()} == {0: 3, 1: 4, 2: 5, 3: 10, 4: 10, 5: 10}
            assert after[TopicPartition(topic, 0)].metadata == "from kafka-python"
            assert admin.describe_groups([group])[group].state == "Empty"
        c_offsets = cadmin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [CTP(topic, 0), CTP(topic, 1)])]
        )[group].result(30)
        assert [(tp.partition, tp.offset) for tp in c_offsets.topic_partitions] == [(0, 3), (1, 4)]

        # deletion: kafka-python deletes one group, confluent-kafka another; both are gone for us
        other = f"{group}-other"
        with AdminClient(gcluster.bootstrap_servers) as admin:
            admin.alter_group_offsets(other, {TopicPartition(topic, 0): 1})
        assert dict(kadmin.delete_groups([other])) == {other: "OK"}
        cadmin.delete_consumer_groups([group])[group].result(30)
        with AdminClient(gcluster.bootstrap_servers) as admin:
            remaining = {g.group_id for g in admin.list_groups()}
            assert group not in remaining and other not in remaining
            assert admin.list_group_offsets(group) == {}
    finally:
        kadmin.close()
