"""kafkalog's ShareConsumer against an in-process kafkalog broker: members of one share group split a partition
exactly once, RELEASE comes back with delivery count 2, REJECT never, close releases what a member holds, implicit
acknowledgement, commit_async's callback, deserializers, and leaving and rejoining (the scenarios in scenarios.py
run against Apache Kafka 4.4 too: tests/compat/test_share_consumer_client.py)."""

from __future__ import annotations

import pytest

from spark_kafkalog.client import AcknowledgeType, KafkaClientError, ShareConsumer, StringDeserializer, TopicPartition
from tests.broker.conftest import start_brokers
from tests.share_scenarios import share_group, topic_maker
from tests.waiting import wait_until

from . import scenarios


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    (broker,) = start_brokers(
        1,
        tmp_path_factory,
        offsets_topic_num_partitions=2,
        group_initial_rebalance_delay_ms=0,
        share_coordinator_state_topic_num_partitions=2,
        share_coordinator_state_topic_replication_factor=1,
        share_coordinator_state_topic_min_isr=1,
        group_share_min_record_lock_duration_ms=1000,
    )
    yield broker.bootstrap_servers
    broker.stop()


@pytest.fixture()
def new_topic(bootstrap):
    return topic_maker(bootstrap)


@pytest.mark.parametrize("members", [2, 3])
def test_members_split_one_partition_and_read_every_record_exactly_once(bootstrap, new_topic, members):
    scenarios.members_split_one_partition(bootstrap, new_topic, share_group, members=members)


def test_released_records_come_back_with_delivery_count_two(bootstrap, new_topic):
    scenarios.released_records_come_back(bootstrap, new_topic, share_group)


def test_rejected_records_never_come_back(bootstrap, new_topic):
    scenarios.rejected_records_never_come_back(bootstrap, new_topic, share_group)


def test_closing_releases_the_records_a_member_holds(bootstrap, new_topic):
    scenarios.close_releases_records(bootstrap, new_topic, share_group)


def test_implicit_mode_accepts_the_records_of_a_poll_at_the_next_poll(bootstrap, new_topic):
    scenarios.implicit_mode_accepts_on_the_next_poll(bootstrap, new_topic, share_group)


def test_commit_async_reports_to_its_callback_from_a_later_poll(bootstrap, new_topic):
    topic = new_topic(1)
    group = share_group(bootstrap)
    scenarios.produce(bootstrap, topic, [b"a", b"b"])
    reported = []
    with scenarios.consumer(bootstrap, group, topic) as c:
        got = scenarios.poll_until(c, 2)
        for r in got:
            c.acknowledge(r, AcknowledgeType.ACCEPT)
        c.commit_async(reported.append)
        assert reported == []  # not before a later call
        c.poll(0)
        assert reported == [{TopicPartition(topic, 0): None}]


def test_values_go_through_the_deserializer(bootstrap, new_topic):
    topic = new_topic(1)
    group = share_group(bootstrap)
    scenarios.produce(bootstrap, topic, ["héllo".encode()])
    with scenarios.consumer(bootstrap, group, topic, mode="implicit", value_deserializer=StringDeserializer()) as c:
        (record,) = scenarios.poll_until(c, 1)
        assert (record.value, record.delivery_count) == ("héllo", 1)


def test_a_poll_with_unacknowledged_records_is_refused_in_explicit_mode(bootstrap, new_topic):
    topic = new_topic(1)
    group = share_group(bootstrap)
    scenarios.produce(bootstrap, topic, [b"a", b"b"])
    with scenarios.consumer(bootstrap, group, topic) as c:
        got = scenarios.poll_until(c, 2)
        c.acknowledge(got[0])
        with pytest.raises(KafkaClientError, match=r"all records must be acknowledged.*@1"):
            c.poll(0)
        c.acknowledge(got[1], AcknowledgeType.ACCEPT)
        assert c.poll(100) == []


def test_a_member_leaves_and_rejoins_with_the_same_member_id(bootstrap, new_topic):
    topic = new_topic(1)
    group = share_group(bootstrap)
    with ShareConsumer(bootstrap, group) as c:
        member_id = c.member_id
        c.subscribe([topic])
        scenarios.produce(bootstrap, topic, [b"first"])
        assert [r.value for r in scenarios.poll_until(c, 1)] == [b"first"]
        c.unsubscribe()  # accepts "first" (implicit), closes the session, leaves
        assert c.subscription() == set()
        c.subscribe([topic])
        scenarios.produce(bootstrap, topic, [b"second"])
        got = wait_until(lambda: c.poll(200), 30, "a record after rejoining")
        assert [(r.value, r.delivery_count) for r in got] == [(b"second", 1)]
        assert c.member_id == member_id


def test_the_acknowledgement_commit_callback_gets_the_results_of_acknowledgements_sent_with_share_fetch(
    bootstrap, new_topic
):
    topic = new_topic(1)
    group = share_group(bootstrap)
    scenarios.produce(bootstrap, topic, [b"a"])
    reported = []
    with scenarios.consumer(bootstrap, group, topic, mode="implicit") as c:
        c.set_acknowledgement_commit_callback(reported.append)
        scenarios.poll_until(c, 1)
        wait_until(lambda: c.poll(100) == [] and reported, 10, "the piggy-backed acknowledgement's result")
        assert reported == [{TopicPartition(topic, 0): None}]
